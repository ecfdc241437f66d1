//===- ApproximateExp2.cpp - f32 exp2 as a vectorizable polynomial --------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// 2^x = 2^f * 2^n, n = round(x), f = x - n in [-0.5, 0.5]. 2^f = e^(f ln 2)
// by its Taylor polynomial of degree 7: the first omitted term is at most
// (ln2 / 2)^8 / 8! * 2^0.5 < 1e-8 relative, below f32's half ulp (6e-8).
// 2^n is two exact powers of two, 2^(n >> 1) * 2^(n - (n >> 1)), each with
// a biased exponent inside [63, 191], so that n = -127 and n = 128 need no
// special exponent encodings.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEEXP2
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Exp2Approximation : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    auto vectorType = dyn_cast<VectorType>(type);
    if (vectorType && vectorType.isScalable())
      return rewriter.notifyMatchFailure(op, "scalable vector");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Type intType = vectorType ? Type(vectorType.clone(i32)) : i32;
    auto f = [&](double v) -> Value {
      Attribute attr = rewriter.getF32FloatAttr(v);
      if (vectorType)
        attr = DenseElementsAttr::get(vectorType, attr);
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(attr));
    };
    auto i = [&](int32_t v) -> Value {
      Attribute attr = rewriter.getI32IntegerAttr(v);
      if (vectorType)
        attr = DenseElementsAttr::get(cast<ShapedType>(intType), attr);
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(attr));
    };
    auto cmp = [&](arith::CmpFPredicate pred, Value a, Value b) {
      return arith::CmpFOp::create(rewriter, loc, pred, a, b);
    };
    auto select = [&](Value c, Value a, Value b) -> Value {
      return arith::SelectOp::create(rewriter, loc, c, a, b);
    };
    // Ordered compares are false for NaN, so these clamps keep it.
    Value x = op.getOperand();
    Value lo = f(-127.0), hi = f(128.0);
    Value below = cmp(arith::CmpFPredicate::OLT, x, lo);
    Value xc = select(below, lo, x);
    xc = select(cmp(arith::CmpFPredicate::OGT, xc, hi), hi, xc);
    Value n = math::FloorOp::create(
        rewriter, loc, arith::AddFOp::create(rewriter, loc, xc, f(0.5)));
    // A NaN n would make the integer conversion poison; -127 keeps it
    // defined (the result is NaN through f).
    n = select(cmp(arith::CmpFPredicate::OGE, n, lo), n, lo);
    Value r = arith::SubFOp::create(rewriter, loc, xc, n);
    // Horner on the coefficients ln2^k / k!, k = 7 .. 0.
    double coefficient[8];
    coefficient[0] = 1.0;
    for (int k = 1; k < 8; ++k)
      coefficient[k] = coefficient[k - 1] * M_LN2 / k;
    Value p = f(coefficient[7]);
    for (int k = 6; k >= 0; --k)
      p = math::FmaOp::create(rewriter, loc, p, r, f(coefficient[k]));
    // 2^n = 2^n1 * 2^n2 with n1 = floor(n / 2), n2 = n - n1, both in
    // [-64, 64]: 2^m is the f32 with biased exponent m + 127.
    Value ni = arith::FPToSIOp::create(rewriter, loc, intType, n);
    Value n1 = arith::ShRSIOp::create(rewriter, loc, ni, i(1));
    Value n2 = arith::SubIOp::create(rewriter, loc, ni, n1);
    auto pow2 = [&](Value m) -> Value {
      Value bits = arith::ShLIOp::create(
          rewriter, loc, arith::AddIOp::create(rewriter, loc, m, i(127)),
          i(23));
      return arith::BitcastOp::create(rewriter, loc, type, bits);
    };
    Value result = arith::MulFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, p, pow2(n1)),
        pow2(n2));
    // Below 2^-127 the result is flushed to exactly 0 (masked scores).
    result = select(below, f(0.0), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AttnApproximateExp2Pass
    : attn::impl::AttnApproximateExp2Base<AttnApproximateExp2Pass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateApproximateExp2Patterns(patterns);
    // Only the exp2 ops change: no folding of the rest of the IR.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::attn::populateApproximateExp2Patterns(RewritePatternSet &patterns) {
  patterns.add<Exp2Approximation>(patterns.getContext());
}
