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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

/// Name of the discardable attribute recording the factors folded into
/// `scale` from scalings of q and k ({q = f32, k = f32}).
static constexpr StringLiteral kFoldedScaleAttrName = "attn.folded_scale";

/// Returns the splat value of `v` if every element of `v` is the same
/// compile-time constant: a splat constant (arith or tosa), or a linalg.fill
/// of a constant scalar, or a scalar constant.
static std::optional<Attribute> getSplatValue(Value v) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr))) {
    if (auto splat = dyn_cast<SplatElementsAttr>(attr))
      return splat.getSplatValue<Attribute>();
    if (isa<FloatAttr, IntegerAttr>(attr))
      return attr;
    return std::nullopt;
  }
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    if (matchPattern(fill.getInputs()[0], m_Constant(&attr)) &&
        isa<FloatAttr, IntegerAttr>(attr))
      return attr;
  return std::nullopt;
}

static std::optional<double> getSplatFloat(Value v) {
  std::optional<Attribute> attr = getSplatValue(v);
  if (!attr)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(*attr))
    return f.getValueAsDouble();
  return std::nullopt;
}

namespace {
/// `x * c` (factor c) or `x / c` (factor 1/c) with c a constant splat and the
/// result of x's type.
struct ScaledValue {
  Value unscaled;
  double factor;
};
} // namespace

static std::optional<ScaledValue> makeScaled(Value x, Value c, bool divide) {
  std::optional<double> f = getSplatFloat(c);
  if (!f || (divide && *f == 0.0))
    return std::nullopt;
  return ScaledValue{x, divide ? 1.0 / *f : *f};
}

/// Matches a binary elementwise multiplication or division given its operands.
static std::optional<ScaledValue> matchBinary(Value lhs, Value rhs,
                                              bool divide) {
  if (auto r = makeScaled(lhs, rhs, divide))
    return r;
  if (!divide)
    return makeScaled(rhs, lhs, /*divide=*/false);
  return std::nullopt;
}

/// linalg.generic computing out[idx] = x[idx] * c (or / c), all parallel,
/// with c a splat input, a constant captured from above, or a constant in
/// the body.
static std::optional<ScaledValue> matchScalingGeneric(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2 && body.getOperations().size() != 3)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *def = yield.getOperand(0).getDefiningOp();
  if (!def || !isa<arith::MulFOp, arith::DivFOp>(def) ||
      def->getBlock() != &body)
    return std::nullopt;
  bool divide = isa<arith::DivFOp>(def);

  // Resolves a body value to (input operand index or -1, constant value).
  auto classify = [&](Value v) -> std::pair<int64_t, std::optional<double>> {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body ||
          arg.getArgNumber() >= static_cast<unsigned>(op.getNumDpsInputs()))
        return {-1, std::nullopt};
      Value input = op.getDpsInputOperand(arg.getArgNumber())->get();
      if (isa<ShapedType>(input.getType()))
        if (std::optional<double> f = getSplatFloat(input))
          return {arg.getArgNumber(), f};
      return {arg.getArgNumber(), std::nullopt};
    }
    FloatAttr f;
    if (matchPattern(v, m_Constant(&f)))
      return {-1, f.getValueAsDouble()};
    return {-1, std::nullopt};
  };

  auto tryOrder = [&](Value xv, Value cv) -> std::optional<ScaledValue> {
    auto [xIdx, xConst] = classify(xv);
    auto [cIdx, c] = classify(cv);
    if (xIdx < 0 || !c || (divide && *c == 0.0))
      return std::nullopt;
    OpOperand *xOperand = op.getDpsInputOperand(xIdx);
    Value x = xOperand->get();
    OpOperand *out = op.getDpsInitOperand(0);
    if (x.getType() != op.getResult(0).getType() ||
        !op.getMatchingIndexingMap(xOperand).isIdentity() ||
        !op.getMatchingIndexingMap(out).isIdentity())
      return std::nullopt;
    return ScaledValue{x, divide ? 1.0 / *c : *c};
  };
  if (auto r = tryOrder(def->getOperand(0), def->getOperand(1)))
    return r;
  if (!divide)
    return tryOrder(def->getOperand(1), def->getOperand(0));
  return std::nullopt;
}

/// Recognizes `v` as a constant scaling of another tensor of the same type.
static std::optional<ScaledValue> matchConstantScaling(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  std::optional<ScaledValue> result =
      llvm::TypeSwitch<Operation *, std::optional<ScaledValue>>(def)
          .Case([](arith::MulFOp op) {
            return matchBinary(op.getLhs(), op.getRhs(), /*divide=*/false);
          })
          .Case([](arith::DivFOp op) {
            return matchBinary(op.getLhs(), op.getRhs(), /*divide=*/true);
          })
          .Case([](linalg::MulOp op) -> std::optional<ScaledValue> {
            if (op.getNumDpsInputs() != 2)
              return std::nullopt;
            return matchBinary(op.getInputs()[0], op.getInputs()[1],
                               /*divide=*/false);
          })
          .Case([](linalg::DivOp op) -> std::optional<ScaledValue> {
            if (op.getNumDpsInputs() != 2)
              return std::nullopt;
            return matchBinary(op.getInputs()[0], op.getInputs()[1],
                               /*divide=*/true);
          })
          .Case([](linalg::GenericOp op) { return matchScalingGeneric(op); })
          .Case([](tosa::MulOp op) -> std::optional<ScaledValue> {
            // Float tosa.mul has a zero shift; the constant may be a
            // broadcast splat of lower extent, which getSplatFloat accepts.
            return matchBinary(op.getInput1(), op.getInput2(),
                               /*divide=*/false);
          })
          .Default([](Operation *) { return std::nullopt; });
  // Only a scaling that keeps x's type (no broadcast of x, no conversion).
  if (!result || result->unscaled.getType() != v.getType())
    return std::nullopt;
  return result;
}

/// Rebuilds `op` with new operands and scale, keeping its other attributes.
static AttentionOp rebuild(PatternRewriter &rewriter, AttentionOp op,
                           Value query, Value key, Value mask, Value bias,
                           double scale) {
  auto newOp = AttentionOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), query, key, op.getValue(),
      mask, bias, op.getInit(), op.getCausalOffset(),
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

    AttentionOp newOp = rebuild(
        rewriter, op, q ? q->unscaled : op.getQuery(),
        k ? k->unscaled : op.getKey(), op.getMask(), op.getBias(), scale);
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
            dropMask ? Value() : op.getMask(), dropBias ? Value() : op.getBias(),
            op.getScaleValue());
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
} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldInputScaling, DropTrivialMaskAndBias, DropZeroCausalOffset>(
      context);
}
