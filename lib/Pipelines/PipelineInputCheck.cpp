//===- PipelineInputCheck.cpp - what the attn pipelines cannot lower ------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "PipelineInputCheck.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
struct PipelineInputCheckPass
    : PassWrapper<PipelineInputCheckPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PipelineInputCheckPass)
  StringRef getArgument() const override { return "attn-pipeline-input-check"; }
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      // Dead ops (constants left behind by --attn-raise) fold away.
      if (op->getName().getDialectNamespace() != "tosa" ||
          isOpTriviallyDead(op))
        return WalkResult::advance();
      op->emitOpError("is not lowered by the attn pipelines: raise the "
                      "attention pattern first (--attn-raise), and lower the "
                      "rest of the TOSA graph to linalg "
                      "(--tosa-to-linalg-pipeline)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::attn::createPipelineInputCheckPass() {
  return std::make_unique<PipelineInputCheckPass>();
}
