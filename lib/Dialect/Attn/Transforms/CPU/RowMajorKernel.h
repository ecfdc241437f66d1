//===- RowMajorKernel.h - online softmax for tiles of few rows --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_ROWMAJORKERNEL_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_ROWMAJORKERNEL_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
namespace cpu {

/// Emits at `b`'s insertion point the result of `op`, a tile with one batch
/// and head, a static number of query rows, static Dqk and Dv and no
/// boolean mask, as the online-softmax loop over blocks of `kvTile` keys
/// whose vectors run along the head dims (see RowMajorKernel.cpp): the
/// kernel for tiles of few rows.
Value emitRowMajorKernel(OpBuilder &b, AttentionOp op, int64_t kvTile);

} // namespace cpu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_ROWMAJORKERNEL_H
