//===- ScoreTerms.cpp - a CPU tile's bias and mask terms ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "ScoreTerms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

Value cpu::addScoreTerms(OpBuilder &b, Location loc, AttentionOp op, Value s,
                         function_ref<Value(Value)> read) {
  auto type = cast<VectorType>(s.getType());
  Value log2e = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(kLog2E)));
  // Boolean masks were made additive before the kernels run.
  for (Value operand : {op.getBias(), op.getMask()})
    if (operand)
      s = arith::AddFOp::create(
          b, loc, s, arith::MulFOp::create(b, loc, read(operand), log2e));
  return s;
}
