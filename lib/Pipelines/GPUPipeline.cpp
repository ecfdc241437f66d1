//===- GPUPipeline.cpp - --attn-gpu-pipeline ------------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "PipelineInputCheck.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;

/// Canonicalization (which folds scalings into `scale`) and bufferization
/// with contiguous (identity-layout) memrefs at function boundaries, which
/// the kernel's 16-byte cp.async copies need.
static void buildFrontEnd(OpPassManager &pm) {
  pm.addPass(attn::createPipelineInputCheckPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
}

/// --attn-pack-gqa for the kernel's query tiles, where asked for. The
/// default tiles have 128 rows, split-KV's 64; for decoding either packs.
template <typename Derived>
static void addPackGQA(OpPassManager &pm,
                       const attn::AttnGPUTileOptions<Derived> &options) {
  if (!options.packGQA)
    return;
  attn::AttnPackGQAOptions pack;
  pack.blockRows =
      options.blockQ ? options.blockQ : (options.splitKV == 1 ? 128 : 64);
  pm.addPass(attn::createAttnPackGQA(pack));
}

/// Makes NVPTX code generation use 32-bit pointers for shared memory. The
/// kernel's shared-memory addresses are then 32-bit registers instead of
/// 64-bit pairs: measured with ptxas -v (sm_90), this removes the spills of
/// the 128x64 D=128 kernel at 255 registers. LLVM has no per-module switch
/// for it; the option is read when the target machine computes the data
/// layout, at serialization. Nothing happens if NVPTX is not linked in.
static void enableNVPTXShortPointers() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("nvptx-short-ptr");
  if (it == options.end())
    return;
  static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
}

/// The --attn-to-gpu options that both GPU pipelines pass on from theirs.
template <typename Derived>
static attn::AttnToGPUOptions
kernelOptions(const attn::AttnGPUTileOptions<Derived> &options) {
  attn::AttnToGPUOptions toGPU;
  toGPU.blockQ = options.blockQ;
  toGPU.blockKV = options.blockKV;
  toGPU.wgmma = options.wgmma;
  toGPU.tma = options.tma;
  toGPU.warpSpecialize = options.warpSpecialize;
  toGPU.intraWarpgroupOverlap = options.intraWarpgroupOverlap;
  toGPU.pingpong = options.pingpong;
  toGPU.rescaleThreshold = options.rescaleThreshold;
  toGPU.tf32 = options.tf32;
  toGPU.splitKV = options.splitKV;
  toGPU.smCount = options.smCount;
  return toGPU;
}

void mlir::attn::buildAttnGPUPipeline(OpPassManager &pm,
                                      const AttnGPUPipelineOptions &options) {
  buildFrontEnd(pm);
  addPackGQA(pm, options);
  AttnToGPUOptions toGPU = kernelOptions(options);
  toGPU.chip = options.chip;
  pm.addPass(createAttnToGPU(toGPU));
  // With TMA, NVGPU ops become NVVM before outlining (as in MLIR's own NVVM
  // pipeline): a tensor map captured by the launch then becomes an !llvm.ptr
  // kernel argument (an !nvgpu.tensormap.descriptor one is not legalized
  // later). Not without: memrefs that nvgpu.ldmatrix or cp.async read would
  // become descriptor structs passed by value, which costs registers.
  bool tma = options.tma || options.warpSpecialize;
  if (tma)
    pm.addPass(createConvertNVGPUToNVVMPass());
  // Outline before CSE: CSE would merge constants of the kernel body with
  // the host's, which then become kernel parameters.
  pm.addPass(createGpuKernelOutliningPass());
  // Kernels that trade registers between warpgroups (setmaxnreg) need ptxas
  // to know their register count at entry.
  pm.addNestedPass<gpu::GPUModuleOp>(attn::createAttnGPULaunchBounds());
  // Outlining copied the kernels' mbarrier globals (from nvgpu.mbarrier.create)
  // into their GPU modules; the host's are dead.
  if (tma)
    pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Before the NVVM pipeline's expand-strided-metadata (see there).
  pm.addPass(attn::createAttnLowerDynamicExpandShape());

  if (options.shortPointers)
    enableNVPTXShortPointers();
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  nvvm.cmdOptions = options.ptxasOptions;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::attn::buildAttnGPUEmulationPipeline(
    OpPassManager &pm, const AttnGPUEmulationPipelineOptions &options) {
  buildFrontEnd(pm);
  addPackGQA(pm, options);
  AttnToGPUOptions toGPU = kernelOptions(options);
  toGPU.emulate = true;
  toGPU.emulationFault = options.emulationFault;
  pm.addPass(createAttnToGPU(toGPU));
  // No attn op is left: the CPU pipeline only lowers the emulation to LLVM.
  AttnCPUPipelineOptions cpu;
  cpu.fold = false;
  buildAttnCPUPipeline(pm, cpu);
}
