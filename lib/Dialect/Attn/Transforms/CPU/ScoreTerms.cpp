//===- ScoreTerms.cpp - a CPU tile's bias and mask terms ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "ScoreTerms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

Value cpu::addScoreTerms(OpBuilder &b, Location loc, AttentionOp op, Value s,
                         function_ref<Value(Value)> read) {
  auto type = cast<VectorType>(s.getType());
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  };
  Value log2e = splat(kLog2E);
  // Boolean masks were made additive (f16 0 and -inf) before the kernels run.
  for (Value operand : {op.getBias(), op.getMask()}) {
    if (!operand)
      continue;
    Value term = read(operand);
    Value scaled = arith::MulFOp::create(b, loc, term, log2e);
    // A finite f32 or bf16 term below -FLT_MAX / log2(e) (HF's finfo.min
    // padding masks) overflows to -inf here, which would hide a key that
    // base e keeps: clamp it to the lowest float. A -inf term stays -inf.
    if (!getElementTypeOrSelf(operand.getType()).isF16()) {
      Value negInf = splat(-std::numeric_limits<double>::infinity());
      Value hidden = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           term, negInf);
      Value clamped = arith::MaximumFOp::create(
          b, loc, scaled, splat(-std::numeric_limits<float>::max()));
      scaled = arith::SelectOp::create(b, loc, hidden, scaled, clamped);
    }
    s = arith::AddFOp::create(b, loc, s, scaled);
  }
  return s;
}
