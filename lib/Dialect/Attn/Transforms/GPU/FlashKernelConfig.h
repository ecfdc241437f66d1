//===- FlashKernelConfig.h - the shape of one attention kernel --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Which kernel an attention op gets: its tiles, its kind (mma.sync, wgmma,
// TMA, warp specialized) and the shared memory and registers these take,
// chosen from the op and what the user asks for, before anything is
// emitted.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHKERNELCONFIG_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHKERNELCONFIG_H

#include "SimtTarget.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <string>

namespace mlir {
namespace attn {
namespace gpu_kernel {

/// The most splits of split-KV (a grid block per split and query block).
constexpr int64_t kMaxSplitKV = 128;

/// The compile-time shape of one kernel variant.
struct FlashKernelConfig {
  /// Query rows per block: each of the 4 warps owns blockQ / 4 consecutive
  /// rows, as blockQ / 64 m16 row tiles of mma.sync.
  int64_t blockQ = 64;
  /// Keys per step of the K/V loop.
  int64_t blockKV = 64;
  int64_t headDimQK = 0, headDimV = 0;
  /// Hq / Hkv, or ShapedType::kDynamic where the head counts are known only
  /// at run time.
  int64_t groupSize = 1;
  /// Keep the block's Q fragments in registers for the whole loop (else they
  /// are reloaded from shared memory each step, to save registers).
  bool qInRegisters = true;
  /// f16 or bf16 (mma.sync m16n8k16), or f32 (the slower TF32 path:
  /// mma.sync m16n8k8 on operands rounded to tf32, fragments loaded with
  /// plain shared-memory loads, P moved into the A layout with shuffles).
  Type elemType;
  /// On the TF32 path: each f32 operand x is split into hi = tf32(x) and
  /// lo = tf32(x - hi), and a product takes three mma (lo hi + hi lo +
  /// hi hi; 3xTF32), so that q, k, v and P keep about 21 mantissa bits
  /// instead of TF32's 10. False: one mma on tf32(x) (faster, f16's
  /// accuracy).
  bool splitTF32 = true;
  double scale = 1.0;
  std::optional<CausalAlignment> causal;

  /// The Hopper path (sm_90a): both products on wgmma m64nNk16, each
  /// row tile a 64-row slab of the warpgroup (warp w owns rows 16 w ..
  /// 16 w + 15 of each slab), Q, K and V read by wgmma from shared memory
  /// in the 128-byte-swizzled layout, P from registers.
  bool wgmma = false;
  /// On the wgmma path: Q, K and V tiles arrive by TMA (one thread issues
  /// cp.async.bulk.tensor per 64-column panel from host-encoded tensor
  /// maps), completion tracked by mbarriers, instead of cp.async by every
  /// thread.
  bool tma = false;
  /// With tma: O is written by TMA stores from shared memory (where its
  /// panels fit in Q's and K's space).
  bool tmaStore = false;
  /// With tma: warp specialization, as in FlashAttention-3. A producer
  /// warpgroup, one thread of which issues every TMA load into two stages
  /// of K and two of V buffers (each with a full and an empty mbarrier),
  /// and blockQ / 64 consumer warpgroups that each compute one 64-row slab
  /// and release each buffer as soon as their wgmma have read it. The
  /// producer gives its registers to the consumers (setmaxnreg).
  bool warpSpecialized = false;
  /// Warp specialized: FlashAttention-3's intra-warpgroup overlap, the
  /// softmax of each K/V block run while the tensor cores compute the
  /// previous block's P V.
  bool intraWarpgroupOverlap = false;
  /// Warp specialized: the consumer warpgroups take turns issuing their
  /// wgmma (FlashAttention-3's pingpong), so that one's softmax runs while
  /// another's products do.
  bool pingpong = false;
  /// Lazy rescaling: a warp moves its running row maxima (and rescales O)
  /// only when a row's maximum rises more than this (base 2); negative:
  /// at every step, as FlashAttention-2.
  double rescaleThreshold = 8.0;
  /// Split-KV (flash-decoding): 1 never splits, 0 picks the number of
  /// splits at run time (emitSplitCount, SplitKV.h), N > 1 always uses N. Each
  /// split's kernel block runs a contiguous share of its query block's K/V
  /// steps and writes unnormalized partials that a second kernel merges.
  int64_t splitKV = 1;
  /// The GPU's streaming multiprocessors, for splitKV = 0, and the blocks
  /// of this kernel that one holds at once (1 or 2: a wave of the split
  /// count's rule is smCount * blocksPerSM blocks).
  int64_t smCount = 132;
  int64_t blocksPerSM = 2;

  bool isTF32() const { return elemType.isF32(); }
  /// m16 row tiles per warp (64-row slabs per warpgroup on the wgmma path).
  /// Two halve the shared-memory fragment loads per mma (each K/V fragment
  /// feeds both) and the K/V traffic per query row. Warp specialized, each
  /// consumer warpgroup has one slab.
  int64_t rowTiles() const { return warpSpecialized ? 1 : blockQ / 64; }
  int64_t rowsPerWarp() const { return blockQ / 4; }
  /// The warpgroups that compute (all but the producer).
  int64_t consumerGroups() const { return warpSpecialized ? blockQ / 64 : 1; }
  /// The threads that run the softmax and the matmuls.
  int64_t computeThreads() const {
    return consumerGroups() * kThreadsPerWarpGroup;
  }
  int64_t threadsPerBlock() const {
    return computeThreads() + (warpSpecialized ? kThreadsPerWarpGroup : 0);
  }
  /// setmaxnreg budgets of the warp-specialized kernel (multiples of 8 that
  /// together fit the SM's 64K registers; FlashAttention-3's values): the
  /// producer only issues TMA loads. 0: no setmaxnreg (one consumer
  /// warpgroup has 255 registers at launch already).
  int64_t producerRegisters() const {
    return consumerGroups() == 3 ? 32 : consumerGroups() == 2 ? 24 : 0;
  }
  int64_t consumerRegisters() const {
    return consumerGroups() == 3 ? 160 : consumerGroups() == 2 ? 240 : 0;
  }
  int64_t elemBytes() const { return isTF32() ? 4 : 2; }
  /// Shared-memory row padding, in elements, so that the rows a warp reads
  /// at once start in different banks: 16 bytes for ldmatrix's 8 rows of
  /// 16 bytes; for the TF32 path 4 words for Q and K (row stride = 4 mod 32
  /// banks: lanes (g, t) read bank 4g + t) and 8 words for V (lanes read
  /// V[t][g]: bank 8t + g).
  /// The wgmma path has no padding: its tiles are panels of 64 columns
  /// (128-byte rows) whose 16-byte chunks are swizzled instead.
  int64_t padQK() const { return wgmma ? 0 : isTF32() ? 4 : 8; }
  int64_t padV() const { return wgmma ? 0 : 8; }
  int64_t sharedQBytes() const {
    return blockQ * (headDimQK + padQK()) * elemBytes();
  }
  int64_t sharedKBytes() const {
    return 2 * blockKV * (headDimQK + padQK()) * elemBytes();
  }
  int64_t sharedVBytes() const {
    return 2 * blockKV * (headDimV + padV()) * elemBytes();
  }
  /// Where the two K buffers and the two V buffers start (Q is at 0).
  int64_t sharedKOffset() const { return sharedQBytes(); }
  int64_t sharedVOffset() const { return sharedKOffset() + sharedKBytes(); }
  /// The alignment of the start of the tiles (the swizzle's 1024-byte
  /// repeat on the wgmma path); the block gets that much more, so that the
  /// kernel can align its start.
  int64_t sharedAlign() const { return wgmma ? 1024 : 0; }
  int64_t sharedBytes() const {
    return sharedQBytes() + sharedKBytes() + sharedVBytes() + sharedAlign();
  }
  /// mbarriers of the TMA path, 8 bytes each, in static shared memory next
  /// to the dynamic bytes above: one per K/V buffer; warp specialized, a
  /// full and an empty one per K buffer and per V buffer.
  int64_t numBarriers() const { return warpSpecialized ? 8 : tma ? 2 : 0; }
  int64_t staticSharedBytes() const { return 8 * numBarriers(); }
};

/// What the user asks for: tile sizes (0 picks the default for the op),
/// the kernel, and the GPU it is for.
struct FlashKernelRequest {
  int64_t blockQ = 0, blockKV = 0;
  /// The Hopper (wgmma) kernel instead of the mma.sync one.
  bool wgmma = false;
  /// TMA loads on the wgmma kernel.
  bool tma = false;
  /// The warp-specialized wgmma kernel (implies tma).
  bool warpSpecialize = false;
  /// With it: the intra-warpgroup overlap, and the consumers' pingpong.
  bool intraWarpgroupOverlap = true;
  bool pingpong = false;
  /// See FlashKernelConfig::rescaleThreshold (at most 8).
  double rescaleThreshold = 8.0;
  /// See FlashKernelConfig::splitKV (0 to 128) and smCount (0: from chip).
  int64_t splitKV = 1;
  int64_t smCount = 0;
  /// The target chip ("sm_80", "sm_90a", ...), or empty if not known.
  std::string chip;
  /// f32 products on plain TF32 operands (FlashKernelConfig::splitTF32
  /// false) instead of 3xTF32.
  bool tf32 = false;
  /// The config of split-KV's kernel, which writes partials: its default
  /// tiles have 64 rows (one m16 row tile per warp, as decoding has few
  /// rows, and the registers that the split's bookkeeping takes; warp
  /// specialized, one consumer warpgroup's slab), and O is stored by the
  /// threads.
  bool splitPartials = false;
};

/// The most dynamic shared memory a block may use on `chip` (sm_90's 227 KB
/// if the chip is empty or not known).
int64_t maxSharedBytesPerBlock(StringRef chip);

/// The kernel variant for `op`, or failure with the reason in `why` when the
/// GPU lowering does not handle it (or the requested tiles are invalid).
FailureOr<FlashKernelConfig>
getFlashKernelConfig(AttentionOp op, const FlashKernelRequest &request,
                     std::string &why);

} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHKERNELCONFIG_H
