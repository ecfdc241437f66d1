//===- GPUPipeline.cpp - --attn-gpu-pipeline ------------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// Canonicalization (which folds scalings into `scale`) and bufferization
/// with contiguous (identity-layout) memrefs at function boundaries, which
/// the kernel's 16-byte cp.async copies need.
static void buildFrontEnd(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
}

void mlir::attn::buildAttnGPUPipeline(OpPassManager &pm,
                                      const AttnGPUPipelineOptions &options) {
  buildFrontEnd(pm);
  pm.addPass(createAttnToGPU());
  // Outline before CSE: CSE would merge constants of the kernel body with
  // the host's, which then become kernel parameters.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  nvvm.cmdOptions = options.ptxasOptions;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::attn::buildAttnGPUEmulationPipeline(OpPassManager &pm) {
  buildFrontEnd(pm);
  AttnToGPUOptions toGPU;
  toGPU.emulate = true;
  pm.addPass(createAttnToGPU(toGPU));
  // No attn op is left: the CPU pipeline only lowers the emulation to LLVM.
  AttnCPUPipelineOptions cpu;
  cpu.fold = false;
  buildAttnCPUPipeline(pm, cpu);
}
