//===- LowerDynamicExpandShape.cpp - expand_shape with dynamic groups -----===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERDYNAMICEXPANDSHAPE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// Whether a reassociation group of `op` has more than one dynamic result
/// dim, which upstream's expand-strided-metadata cannot lower.
static bool hasGroupWithDynamicDims(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices()) {
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(shape[d]);
        }) > 1)
      return true;
  }
  return false;
}

/// x * y, folded where both are constant.
static OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                             OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// The op as a reinterpret_cast of its source's buffer: the source's
/// offset, the output shape, and each group's strides from its source
/// dim's stride outwards.
static void lowerToReinterpretCast(RewriterBase &rewriter,
                                   memref::ExpandShapeOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto source =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
  SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(sizes.size());
  SmallVector<OpFoldResult> sourceStrides = source.getConstifiedMixedStrides();
  for (auto [srcDim, group] : llvm::enumerate(op.getReassociationIndices())) {
    OpFoldResult stride = sourceStrides[srcDim];
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = stride;
      if (d != group.front())
        stride = multiply(rewriter, loc, stride, sizes[d]);
    }
  }
  rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, op.getResultType(), source.getBaseBuffer(),
      source.getConstifiedMixedOffset(), sizes, strides);
}

namespace {
struct AttnLowerDynamicExpandShapePass
    : attn::impl::AttnLowerDynamicExpandShapeBase<
          AttnLowerDynamicExpandShapePass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation()->walk([&](memref::ExpandShapeOp op) {
      if (hasGroupWithDynamicDims(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops)
      lowerToReinterpretCast(rewriter, op);
  }
};
} // namespace
