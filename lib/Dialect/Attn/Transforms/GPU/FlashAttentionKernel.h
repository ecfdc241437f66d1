//===- FlashAttentionKernel.h - the per-block attention program -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONKERNEL_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONKERNEL_H

#include "FlashKernelConfig.h"
#include "SimtTarget.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

namespace mlir {
namespace attn {
namespace gpu_kernel {

/// The value of a hidden score (a base-2 logit): finite, so that no
/// (-inf) - (-inf) arises; a row whose maximum stays at it saw no key.
constexpr double kHiddenLogit = -1.0e30;
/// The base-2 logit that a score with a finite additive term is kept at or
/// above (-2^98): the lowest f32 bias (HF's finfo.min padding) hides
/// nothing in the op's semantics, but times log2(e) it would reach
/// kHiddenLogit.
constexpr double kLowestVisibleLogit = -0x1p98;

/// The memref operands of one attention, as the kernel reads them.
struct FlashKernelOperands {
  Value query, key, value, mask, bias, out;
  /// The op's causal offset (index), or null: a diagonal shift for
  /// `causal = top_left`, a row shift with a causal period.
  Value causalOffset;
  /// The op's causal period (index; row i is query (i + offset) mod P), or
  /// null.
  Value causalPeriod;
  /// The TMA path on the GPU: the tensor maps (!nvgpu.tensormap.descriptor)
  /// of query, key and value, encoded on the host. Null in the emulation,
  /// which reads the memrefs themselves.
  Value queryMap, keyMap, valueMap;
  /// With tmaStore: the output's tensor map.
  Value outMap;
  /// Split-KV: the number of splits (uniform index), and where each split
  /// writes its unnormalized O, [splits * Z * Hq, Lq, Dv] f32, and its row
  /// maxima (base 2) and sums, [splits * Z * Hq, Lq, 2] f32, at
  /// (split * Z + z) * Hq + head with z the linearized batch index. Null:
  /// the kernel writes `out` itself.
  Value numSplits, partialOut, partialStats;
};

/// The box of one TMA load into a wgmma operand panel: `rows` rows of 64
/// elements (128 bytes) of a rank-`rank` tensor, 1 in the other dims.
SmallVector<int64_t> tmaPanelBox(int64_t rank, int64_t rows);

/// Emits the program of one block (grid: x = query block, y = query head,
/// z = linearized batch index; split-KV: x = split * query blocks + query
/// block) through `target`.
void emitFlashAttentionBlock(SimtTarget &target, const FlashKernelConfig &cfg,
                             const FlashKernelOperands &operands);

} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONKERNEL_H
