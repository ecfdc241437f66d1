//===- KeyRange.h - the keys a CPU tile's rows see --------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the CPU kernels of --attn-tile: under causal masking, the last
// key each query row of a tile sees, and the range of key blocks the tile
// visits (blocks past the last visible key are skipped; blocks before the
// first row's last visible key need no element-wise mask).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_KEYRANGE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_KEYRANGE_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
namespace cpu {

struct KeyRange {
  /// Causal masking: row i (of the tile) sees key j iff j <= rowLimits[i]
  /// (i32 vector of `rows` lanes). Null without causal masking.
  Value rowLimits;
  /// No row sees a key from `end` on (index).
  Value end;
  /// Every row sees every key before `fullEnd`, a multiple of the block
  /// size (index): those blocks need no element-wise mask.
  Value fullEnd;
};

/// The key range of tile `op` (one batch and head; its `rows` query rows
/// are `lq` rows of the op, with `lk` keys), visited in blocks of `kvTile`.
KeyRange computeKeyRange(OpBuilder &b, AttentionOp op, int64_t rows,
                         int64_t kvTile, Value lq, Value lk);

/// [n] as i32 lanes start, start + 1, ... (`start`: index).
Value iotaI32(OpBuilder &b, Location loc, int64_t n, Value start);

} // namespace cpu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_KEYRANGE_H
