//===- FlashKernelConfig.cpp - the shape of one attention kernel ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelConfig.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

/// How far (in base-2 logits) a row's maximum may rise above the running
/// maximum before the kernel moves it and rescales O (see softmax): scores
/// exponentiated against a stale maximum are at most 2^8, as precise in
/// f16, bf16 and f32 as values <= 1. The largest threshold allowed.
static constexpr double kMaxRescaleThreshold = 8.0;
/// Registers that the Q, S and O fragments may take before Q is reloaded
/// from shared memory at every step instead of kept in registers.
static constexpr int64_t kQInRegisterBudget = 192;

/// Streaming multiprocessors of the usual part of each chip: the A100's
/// 108, the H100 SXM's and H200's 132 (also the guess for other chips;
/// sm-count says it exactly).
static int64_t smCountOfChip(StringRef chip) {
  return chip == "sm_80" ? 108 : 132;
}

int64_t mlir::attn::gpu_kernel::maxSharedBytesPerBlock(StringRef chip) {
  // The opt-in limits of the CUDA programming guide, by compute capability.
  unsigned cc = 0;
  if (chip.consume_front("sm_") && !chip.consumeInteger(10, cc)) {
    switch (cc) {
    case 80:
    case 87:
      return 163 * 1024;
    case 86:
    case 89:
    case 120:
    case 121:
      return 99 * 1024;
    default:
      break;
    }
  }
  return 227 * 1024;
}

FailureOr<FlashKernelConfig> mlir::attn::gpu_kernel::getFlashKernelConfig(
    AttentionOp op, const FlashKernelRequest &request, std::string &why) {
  FlashKernelConfig cfg;
  Type elem = op.getQueryType().getElementType();
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32()) {
    why = "the GPU kernel takes f16, bf16 or f32 query/key/value";
    return failure();
  }
  if (op.getKeyType().getElementType() != elem ||
      op.getValueType().getElementType() != elem) {
    why = "query, key and value must have one element type";
    return failure();
  }
  for (Value v : {op.getQuery(), op.getKey(), op.getValue(), op.getInit()}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type) {
      why = "the GPU kernel is built on memrefs: bufferize first";
      return failure();
    }
    // cp.async copies 16-byte chunks of contiguous rows.
    if (!type.getLayout().isIdentity()) {
      why = "query, key, value and init must have the identity layout "
            "(contiguous rows for cp.async)";
      return failure();
    }
  }
  for (Value v : {op.getMask(), op.getBias()}) {
    if (!v)
      continue;
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type) {
      why = "the GPU kernel is built on memrefs: bufferize first";
      return failure();
    }
    // The kernel computes their addresses from strides.
    if (!type.isStrided()) {
      why = "mask and bias must have a strided layout";
      return failure();
    }
  }
  // (Head counts may be dynamic: the kernel reads them from the operands.)
  int64_t d = op.getQKHeadDim(), dv = op.getVHeadDim();
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv)) {
    why = "the head dims must be static";
    return failure();
  }
  if (d % 16 != 0 || dv % 16 != 0 || d > 256 || dv > 256) {
    why = "the head dims must be multiples of 16 up to 256 (mma.sync k=16), "
          "got Dqk=" +
          std::to_string(d) + " and Dv=" + std::to_string(dv);
    return failure();
  }
  if (request.wgmma) {
    // wgmma is an sm_90a feature (not in sm_90, nor in later chips).
    if (!request.chip.empty() && request.chip != "sm_90a") {
      why = "the wgmma kernel needs chip=sm_90a, got " + request.chip;
      return failure();
    }
    if (elem.isF32()) {
      why = "the wgmma kernel takes f16 or bf16 (f32 has the TF32 mma.sync "
            "kernel)";
      return failure();
    }
    // Operand tiles are panels of 64 columns (the 128-byte swizzle).
    if (d % 64 != 0 || dv % 64 != 0) {
      why = "the wgmma kernel needs head dims that are multiples of 64, got "
            "Dqk=" +
            std::to_string(d) + " and Dv=" + std::to_string(dv);
      return failure();
    }
    cfg.wgmma = true;
  }
  if (!(request.rescaleThreshold <= kMaxRescaleThreshold)) {
    why = "rescale-threshold must be at most 8 (the exponentiated scores "
          "of a stale maximum reach 2^threshold), got " +
          llvm::formatv("{0}", request.rescaleThreshold).str();
    return failure();
  }
  cfg.rescaleThreshold = request.rescaleThreshold;
  if (request.splitKV < 0 || request.splitKV > kMaxSplitKV) {
    why = "split-kv must be 0 (chosen at run time), 1 (no split) or a "
          "number of splits up to " +
          std::to_string(kMaxSplitKV) + ", got " +
          std::to_string(request.splitKV);
    return failure();
  }
  if (request.smCount < 0) {
    why = "sm-count must be positive (0: from the chip), got " +
          std::to_string(request.smCount);
    return failure();
  }
  cfg.splitKV = request.splitKV;
  cfg.smCount = request.smCount ? request.smCount : smCountOfChip(request.chip);
  if (request.warpSpecialize && !request.wgmma) {
    why = "warp specialization (warp-specialize=1) is part of the wgmma "
          "kernel: add wgmma=1";
    return failure();
  }
  // The warp-specialized kernel's producer loads by TMA.
  if (request.tma || request.warpSpecialize) {
    if (!request.wgmma) {
      why = "TMA loads (tma=1) are part of the wgmma kernel: add wgmma=1";
      return failure();
    }
    // cp.async.bulk.tensor addresses at most 5 dimensions.
    if (op.getQueryType().getRank() > 5 || op.getKeyType().getRank() > 5 ||
        op.getValueType().getRank() > 5) {
      why = "TMA tensor maps have at most 5 dimensions: query, key and value "
            "may have at most 2 batch dimensions";
      return failure();
    }
    cfg.tma = true;
    cfg.warpSpecialized = request.warpSpecialize;
    cfg.intraWarpgroupOverlap =
        request.warpSpecialize && request.intraWarpgroupOverlap;
    cfg.pingpong = request.warpSpecialize && request.pingpong;
  }
  cfg.headDimQK = d;
  cfg.headDimV = dv;
  cfg.groupSize = op.getHeadGroupSize();
  cfg.elemType = elem;
  cfg.splitTF32 = !request.tf32;
  cfg.scale = op.getScaleValue();
  cfg.causal = op.getCausal();
  // Default tiles. As in FlashAttention-2 on sm_90, 128 query rows (two m16
  // row tiles per warp, so each K/V fragment feeds two mma) with 64-key
  // blocks, where that fits in 255 registers without spills (measured with
  // ptxas -v, sm_90, test/GPU/ptxas-resources.test): up to D = 64, and up
  // to D = 128 without causal masking; causal D = 128 takes 32-key blocks.
  // Per-element mask/bias reads and D > 128 (whose O accumulators alone
  // take Dv / 2 registers per row tile) keep one row tile; f32 (TF32) tiles
  // take twice the shared memory: 64 rows, 32 or 16 keys.
  int64_t widest = std::max(d, dv);
  // The wgmma kernel (measured on sm_90a) fits the same tiles, and 64-key
  // blocks above D = 128, as it has no Q, K or V fragments in registers.
  if (cfg.isTF32()) {
    cfg.blockQ = 64;
    cfg.blockKV = widest > 128 ? 16 : 32;
  } else if (widest > 128 || op.getMask() || op.getBias() ||
             request.splitPartials) {
    cfg.blockQ = 64;
    cfg.blockKV = widest > 128 && !cfg.wgmma ? 32 : 64;
    // Split partials up to D = 64: 128 keys per step (at 64 keys ptxas
    // spills 4 bytes on sm_80 at 128 registers; 168 here).
    if (request.splitPartials && widest <= 64 && !op.getMask() && !op.getBias())
      cfg.blockKV = 128;
  } else {
    cfg.blockQ = 128;
    cfg.blockKV = widest > 64 && cfg.causal ? 32 : 64;
  }
  if (cfg.warpSpecialized) {
    // FlashAttention-3's tiles on sm_90: a 64-row slab per consumer
    // warpgroup, three of them up to D = 64 (160 registers each), else two
    // (240 each); 128 keys per step (176 at D = 128 without causal
    // masking), 64 above D = 128 (where the O accumulators take 128
    // registers) and with per-element mask/bias reads, which spill at 128
    // keys (D = 128) and at 160 registers (D = 64; ptxas -v, sm_90a).
    bool scoreOperands = op.getMask() || op.getBias();
    cfg.blockQ = widest <= 64 && !scoreOperands ? 192 : 128;
    // Split partials: one slab, as the other kernels' partials take 64
    // rows (split-KV is for grids with few query blocks, as in decoding).
    if (request.splitPartials && !request.pingpong)
      cfg.blockQ = 64;
    if (widest > 128 || scoreOperands)
      cfg.blockKV = 64;
    else
      cfg.blockKV = widest > 64 && !cfg.causal ? 176 : 128;
  }
  if (request.blockQ) {
    if (cfg.warpSpecialized ? request.blockQ < 64 || request.blockQ % 64 != 0 ||
                                  request.blockQ > 192
                            : request.blockQ != 64 && request.blockQ != 128) {
      why = cfg.warpSpecialized
                ? "block-q must be 64, 128 or 192 (one 64-row slab per "
                  "consumer warpgroup), got "
                : "block-q must be 64 or 128 (4 warps of one or two m16 "
                  "row tiles), got ";
      why += std::to_string(request.blockQ);
      return failure();
    }
    cfg.blockQ = request.blockQ;
  }
  if (request.blockKV) {
    // A P.V k step takes 16 keys (8 on the TF32 path). A warp-specialized
    // consumer's S is one wgmma of N = block-kv, at most 256 (as is a TMA
    // box's row count).
    int64_t step = cfg.isTF32() ? 8 : 16;
    int64_t most = cfg.warpSpecialized ? 256 : 128;
    if (request.blockKV <= 0 || request.blockKV % step != 0 ||
        request.blockKV > most) {
      why = "block-kv must be a multiple of " + std::to_string(step) +
            " up to " + std::to_string(most) + ", got " +
            std::to_string(request.blockKV);
      return failure();
    }
    cfg.blockKV = request.blockKV;
  }
  // Chips with less shared memory (sm_86/89: 99 KB) get smaller default
  // tiles: fewer keys per step first, then fewer rows.
  int64_t maxShared = maxSharedBytesPerBlock(request.chip);
  int64_t minKeys = cfg.isTF32() ? 8 : 16;
  maxShared -= cfg.staticSharedBytes();
  while (cfg.sharedBytes() > maxShared && !request.blockKV &&
         cfg.blockKV / 2 >= minKeys)
    cfg.blockKV /= 2;
  // (Not below the two consumer warpgroups that pingpong takes turns
  // between: better the shared-memory error than the pingpong one.)
  int64_t minRows = cfg.pingpong ? 128 : 64;
  while (cfg.sharedBytes() > maxShared && !request.blockQ &&
         cfg.blockQ > minRows)
    cfg.blockQ -= 64;
  // Q's fragments stay in registers when Q, S and O fragments together take
  // at most 192 of the 255 registers (measured with ptxas -v, sm_90:
  // test/GPU/ptxas-resources.test); else they are reloaded each step.
  int64_t r = cfg.rowTiles();
  cfg.qInRegisters =
      !cfg.isTF32() && !cfg.wgmma &&
      r * (d / 4 + cfg.blockKV / 2 + dv / 2) <= kQInRegisterBudget;
  // TMA stores of O (which has V's element type): its panels go where Q
  // and K were, which only a Dv much larger than Dqk could overflow.
  cfg.tmaStore = cfg.tma && !request.splitPartials &&
                 cfg.blockQ * dv * cfg.elemBytes() <=
                     cfg.sharedQBytes() + cfg.sharedKBytes();
  if (cfg.pingpong && cfg.consumerGroups() < 2) {
    why = "pingpong needs two or three consumer warpgroups (block-q 128 or "
          "192), got block-q=" +
          std::to_string(cfg.blockQ);
    return failure();
  }
  if (cfg.sharedBytes() > maxShared) {
    why = "the tiles need " + std::to_string(cfg.sharedBytes()) +
          " bytes of shared memory, more than a block's " +
          std::to_string(maxShared) +
          (request.chip.empty() ? "" : " on " + request.chip) +
          "; use smaller block-q/block-kv";
    return failure();
  }
  // Resident blocks, at most the 2 that FlashAttention-2's split rule
  // counts on: a multiprocessor has 1 KB of shared memory more than a
  // block may take, and each block also takes 1 KB for the system; its 64K
  // registers are 8K per warp at the 255 per thread that ptxas may use.
  int64_t smPerSM = maxSharedBytesPerBlock(request.chip) + 1024;
  int64_t bySmem =
      smPerSM / (cfg.sharedBytes() + cfg.staticSharedBytes() + 1024);
  int64_t byRegisters = 65536 / (cfg.threadsPerBlock() / kWarpSize * 8192);
  cfg.blocksPerSM = std::clamp<int64_t>(std::min(bySmem, byRegisters), 1, 2);
  return cfg;
}
