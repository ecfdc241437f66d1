//===- GPULaunchBounds.cpp - one block per SM for setmaxnreg kernels ------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNGPULAUNCHBOUNDS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnGPULaunchBoundsPass
    : public attn::impl::AttnGPULaunchBoundsBase<AttnGPULaunchBoundsPass> {
  void runOnOperation() override {
    StringRef name = NVVM::NVVMDialect::getMinctasmAttrName();
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel() || func->hasAttr(name))
        return;
      WalkResult found = func.walk(
          [](NVVM::SetMaxRegisterOp) { return WalkResult::interrupt(); });
      if (found.wasInterrupted())
        func->setAttr(name, Builder(func).getI32IntegerAttr(1));
    });
  }
};
} // namespace
