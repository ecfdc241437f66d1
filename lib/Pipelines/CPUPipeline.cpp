//===- CPUPipeline.cpp - --attn-cpu-pipeline ------------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "PipelineInputCheck.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Decomposes linalg's aggregate ops (linalg.softmax) into generics, so that
/// unfused graphs written with them lower too (e.g. to compare a graph
/// before and after --attn-raise).
struct DecomposeAggregatesPass
    : PassWrapper<DecomposeAggregatesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DecomposeAggregatesPass)
  StringRef getArgument() const override {
    return "attn-cpu-decompose-aggregates";
  }
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
      if (failed(results) || results->size() != op->getNumResults())
        continue;
      rewriter.replaceOp(op, *results);
    }
  }
};
} // namespace

void mlir::attn::buildAttnCPUPipeline(OpPassManager &pm,
                                      const AttnCPUPipelineOptions &options) {
  pm.addPass(attn::createPipelineInputCheckPass());
  if (options.fold)
    pm.addPass(createCanonicalizerPass());
  if (options.fused && options.packGQA) {
    AttnPackGQAOptions pack;
    pack.blockRows = options.qTile;
    pack.rowMajorRows = options.rowMajorRows;
    pack.dynamicRowCases.assign(options.dynamicRowCases.begin(),
                                options.dynamicRowCases.end());
    pm.addPass(createAttnPackGQA(pack));
  }
  if (options.fused) {
    AttnTileOptions tile;
    tile.qTile = options.qTile;
    tile.kvTile = options.kvTile;
    tile.rowMajorRows = options.rowMajorRows;
    tile.dynamicRowCases.assign(options.dynamicRowCases.begin(),
                                options.dynamicRowCases.end());
    pm.addPass(createAttnTile(tile));
  }
  // Ops the fused path leaves (memrefs, dynamic head dims) and the unfused
  // configuration.
  pm.addPass(createAttnDecompose());
  pm.addNestedPass<func::FuncOp>(std::make_unique<DecomposeAggregatesPass>());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  if (options.approximateExp2)
    pm.addPass(createAttnApproximateExp2());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Contiguous arguments: with fully dynamic strides no vector of a K or V
  // row can be a single load.
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  bufferization::buildBufferDeallocationPipeline(pm);
  // A returned view whose ownership is known only at run time (an scf.if
  // that yields the packed op's view of a buffer or the buffer itself) is
  // cloned where not owned: bufferization.clone becomes an alloc and copy.
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.threads) {
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
    attn::AttnOmpScheduleOptions schedule;
    schedule.kind = options.schedule;
    pm.addPass(attn::createAttnOmpSchedule(schedule));
  } else {
    pm.addPass(createForallToForLoopPass());
  }
  // n-D transfers become 1-D transfers, fully unrolled: the loop form would
  // put a stack temporary (memref.alloca) inside the tile and key loops,
  // growing the stack every iteration. The emitter keeps its n-D transfers
  // small (rows x head dim) for this.
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addPass(createConvertVectorToSCFPass(transfers));
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMultiReductionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSCFToControlFlowPass());
  // (Views that split a dim into several dynamic ones, from pack-gqa with
  // head counts known at run time, which expand-strided-metadata cannot
  // lower.)
  pm.addPass(attn::createAttnLowerDynamicExpandShape());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 extf/truncf become integer ops: no soft-float runtime needed.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.threads)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Without AVX-512 BF16, LLVM would convert every bf16 value it moves.
  pm.addPass(attn::createAttnLLVMBF16AsI16());
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnCPUPipelineOptions>(
      "attn-cpu-pipeline",
      "Lower a module with attn ops on tensors to the LLVM dialect for "
      "execution on the CPU",
      buildAttnCPUPipeline);
  PassPipelineRegistration<AttnGPUPipelineOptions>(
      "attn-gpu-pipeline",
      "Lower a module with attn ops to host LLVM dialect and a gpu.binary "
      "of fused tensor-core attention kernels",
      buildAttnGPUPipeline);
  PassPipelineRegistration<AttnGPUEmulationPipelineOptions>(
      "attn-gpu-emulation-pipeline",
      "Lower a module with attn ops to LLVM for the CPU, with each attention "
      "run by an emulation of the GPU kernel's threads (for testing the "
      "kernel without a GPU)",
      buildAttnGPUEmulationPipeline);
}
