//===- TestSplitCount.cpp - test pass for the split-KV count rule ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Gives the host code that chooses the split-KV count a function of its own,
// so that a test can run it on the CPU over many grids and compare it with
// an independent model of FlashAttention-2's rule. In --attn-to-gpu the
// count depends on sequence lengths known only at run time; nothing else
// observes it.
//
//===----------------------------------------------------------------------===//

#include "GPU/SplitKV.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kWaveAttr = "attn.test.wave_blocks";
constexpr llvm::StringLiteral kMaxSplitsAttr = "attn.test.max_splits";

/// Each function declaration `(blocks: index, kvBlocks: index) -> index`
/// with integer attributes `attn.test.wave_blocks` and
/// `attn.test.max_splits` gets the split-count host code as its body.
struct TestSplitCountPass
    : PassWrapper<TestSplitCountPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestSplitCountPass)

  StringRef getArgument() const final { return "attn-test-split-count"; }
  StringRef getDescription() const final {
    return "Test only: define the split-KV count rule as a function";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(kWaveAttr) && !func->hasAttr(kMaxSplitsAttr))
        continue;
      if (failed(define(func)))
        return signalPassFailure();
    }
  }

  LogicalResult define(func::FuncOp func) {
    auto wave = func->getAttrOfType<IntegerAttr>(kWaveAttr);
    auto maxSplits = func->getAttrOfType<IntegerAttr>(kMaxSplitsAttr);
    if (!wave || !maxSplits)
      return func.emitError() << "needs integer attributes '" << kWaveAttr
                              << "' and '" << kMaxSplitsAttr << "'";
    if (wave.getInt() < 1 || maxSplits.getInt() < 1)
      return func.emitError() << "'" << kWaveAttr << "' and '" << kMaxSplitsAttr
                              << "' must be positive";
    if (!func.isDeclaration())
      return func.emitError() << "must be a declaration: the pass defines it";
    Builder types(func.getContext());
    Type index = types.getIndexType();
    if (func.getFunctionType() !=
        types.getFunctionType({index, index}, {index}))
      return func.emitError()
             << "must have the type (index, index) -> index (grid blocks, "
                "K/V steps) -> splits";

    Block *body = func.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(body);
    Value splits = attn::gpu_kernel::emitSplitCount(
        b, func.getLoc(), body->getArgument(0), body->getArgument(1),
        wave.getInt(), maxSplits.getInt());
    func::ReturnOp::create(b, func.getLoc(), splits);
    return success();
  }
};
} // namespace

namespace mlir {
namespace attn {
namespace test {
void registerTestSplitCountPass() { PassRegistration<TestSplitCountPass>(); }
} // namespace test
} // namespace attn
} // namespace mlir
