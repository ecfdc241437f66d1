//===- AttentionCanonicalization.cpp - attn.attention canonicalization ----===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Canonical form of attn.attention: the whole scaling lives in the `scale`
// attribute (so nothing is scaled twice and check-scale sees the effective
// value), and mask/bias operands that cannot change the result are dropped.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/ConstantScaling.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

/// Name of the discardable attribute recording the factors folded into
/// `scale` from scalings of q and k ({q = f32, k = f32}).
static constexpr StringLiteral kFoldedScaleAttrName = "attn.folded_scale";

/// Rebuilds `op` with new operands and scale, keeping its other attributes.
static AttentionOp rebuild(PatternRewriter &rewriter, AttentionOp op,
                           Value query, Value key, Value mask, Value bias,
                           double scale) {
  auto newOp = AttentionOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), query, key, op.getValue(),
      mask, bias, op.getInit(), op.getCausalOffset(), op.getCausalPeriod(),
      rewriter.getF32FloatAttr(scale), op.getCausalAttr());
  for (NamedAttribute attr : op->getDiscardableAttrs())
    newOp->setAttr(attr.getName(), attr.getValue());
  rewriter.replaceOp(op, newOp->getResults());
  return newOp;
}

namespace {
/// attention(q * c, k, ...) {scale = s} -> attention(q, k, ...) {scale = s*c},
/// likewise for division and for k.
struct FoldInputScaling : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "only folds on tensors");
    std::optional<ScaledValue> q = matchConstantScaling(op.getQuery());
    std::optional<ScaledValue> k = matchConstantScaling(op.getKey());
    if (!q && !k)
      return rewriter.notifyMatchFailure(op, "q and k are not scaled");

    double scale = op.getScaleValue();
    NamedAttrList folded;
    if (auto prev = op->getAttrOfType<DictionaryAttr>(kFoldedScaleAttrName))
      folded.append(prev.getValue());
    auto record = [&](StringRef name, double factor) {
      double total = factor;
      if (auto prev = dyn_cast_or_null<FloatAttr>(folded.get(name)))
        total *= prev.getValueAsDouble();
      folded.set(name, rewriter.getF32FloatAttr(total));
    };
    if (q) {
      scale *= q->factor;
      record("q", q->factor);
    }
    if (k) {
      scale *= k->factor;
      record("k", k->factor);
    }
    if (!std::isfinite(static_cast<float>(scale)))
      return rewriter.notifyMatchFailure(op, "folded scale is not finite");

    AttentionOp newOp = rebuild(rewriter, op, q ? q->unscaled : op.getQuery(),
                                k ? k->unscaled : op.getKey(), op.getMask(),
                                op.getBias(), scale);
    newOp->setAttr(kFoldedScaleAttrName,
                   folded.getDictionary(rewriter.getContext()));
    return success();
  }
};

/// Drops an all-true boolean mask, an all-zero additive mask and an all-zero
/// bias: none of them changes the result.
struct DropTrivialMaskAndBias : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    auto isTrivial = [](Value v) {
      if (!v)
        return false;
      std::optional<Attribute> splat = getSplatValue(v);
      if (!splat)
        return false;
      if (auto i = dyn_cast<IntegerAttr>(*splat))
        return i.getType().isInteger(1) && i.getValue().isOne();
      if (auto f = dyn_cast<FloatAttr>(*splat))
        return f.getValue().isZero();
      return false;
    };
    bool dropMask = isTrivial(op.getMask());
    bool dropBias = isTrivial(op.getBias());
    if (!dropMask && !dropBias)
      return rewriter.notifyMatchFailure(op, "no trivial mask or bias");
    rebuild(rewriter, op, op.getQuery(), op.getKey(),
            dropMask ? Value() : op.getMask(),
            dropBias ? Value() : op.getBias(), op.getScaleValue());
    return success();
  }
};

/// A causal offset of 0 is plain top_left alignment.
struct DropZeroCausalOffset : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getCausalOffset() || !matchPattern(op.getCausalOffset(), m_Zero()))
      return rewriter.notifyMatchFailure(op, "no zero causal offset");
    rewriter.modifyOpInPlace(op, [&] { op.getCausalOffsetMutable().clear(); });
    return success();
  }
};

/// A constant causal period that every row's query index stays below,
/// without an offset, numbers the rows as they are: with top_left
/// alignment any period of at least Lq, with bottom_right (which places the
/// diagonal for P queries) only Lq itself.
struct DropTrivialCausalPeriod : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    APInt period;
    int64_t lq = op.getQuerySeqLen();
    if (!op.getCausalPeriod() || op.getCausalOffset() ||
        ShapedType::isDynamic(lq) ||
        !matchPattern(op.getCausalPeriod(), m_ConstantInt(&period)))
      return rewriter.notifyMatchFailure(op, "no constant period to drop");
    bool trivial = *op.getCausal() == CausalAlignment::TopLeft
                       ? lq <= period.getSExtValue()
                       : lq == period.getSExtValue();
    if (!trivial)
      return rewriter.notifyMatchFailure(op, "the period groups the rows");
    rewriter.modifyOpInPlace(op, [&] { op.getCausalPeriodMutable().clear(); });
    return success();
  }
};
} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldInputScaling, DropTrivialMaskAndBias, DropZeroCausalOffset,
              DropTrivialCausalPeriod>(context);
}
