//===- SplitKV.h - split-KV attention: split count and merge -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Split-KV (flash-decoding): when the grid of query blocks is too small to
// fill the GPU (few heads, short Lq: decoding), each query block's K/V
// steps are split over several grid blocks. Each writes its rows'
// unnormalized O and their maxima m (base 2) and sums l; a second kernel
// merges the splits of each row: with M = max m_s,
//   out = sum_s 2^(m_s - M) O_s / sum_s 2^(m_s - M) l_s.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SPLITKV_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SPLITKV_H

#include "SimtTarget.h"

namespace mlir {
namespace attn {
namespace gpu_kernel {

/// Host code: the number of splits (index) for a grid of `blocks` query
/// blocks (all heads and batches) whose rows have `kvBlocks` K/V steps, on a
/// GPU that runs `waveBlocks` blocks of the kernel at once (its
/// multiprocessors times the blocks each holds). 1 where the grid fills
/// 80% of a wave; else the fewest splits, at most `maxSplits` and
/// `kvBlocks`, whose wave efficiency is within 85% of the best. Only split
/// counts that change the steps per split are candidates, for the best as
/// well (FlashAttention-2's rule for its split-KV kernel).
Value emitSplitCount(OpBuilder &b, Location loc, Value blocks, Value kvBlocks,
                     int64_t waveBlocks, int64_t maxSplits);

/// The memrefs of the merge.
struct SplitKVMergeOperands {
  /// Uniform index.
  Value numSplits;
  /// [splits * Z * Hq, Lq, Dv] and [splits * Z * Hq, Lq, 2] f32 (see
  /// FlashKernelOperands).
  Value partialOut, partialStats;
  /// [B..., Hq, Lq, Dv].
  Value out;
};

/// Threads per block of the merge kernel; each merges one pair of columns.
constexpr int64_t kMergeThreads = 128;

/// The row of the partial buffers that split `split` of query head `head`
/// and linearized batch index `batch` writes: (split * batches + batch) *
/// heads + head (uniform indices).
Value splitKVPartialRow(OpBuilder &b, Location loc, Value split, Value batch,
                        Value head, Value batches, Value heads);

/// The merge's grid x for `out` (ceil(Lq * Dv / 2 / kMergeThreads)); y and z
/// are the attention kernel's (heads, batch).
Value splitKVMergeBlocks(OpBuilder &b, Location loc, Value out);

/// Emits the merge's per-block program through `target`: each thread one
/// pair of adjacent output columns of one row (rows with no visible key in
/// any split write 0).
void emitSplitKVMergeBlock(SimtTarget &target,
                           const SplitKVMergeOperands &operands);

} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SPLITKV_H
