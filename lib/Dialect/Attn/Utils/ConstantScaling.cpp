//===- ConstantScaling.cpp - matchers for constant splats and scalings ----===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/ConstantScaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

std::optional<Attribute> mlir::attn::getSplatValue(Value v) {
  // Layout ops do not change a splat; they are how frontends spell a
  // broadcast scalar.
  for (int depth = 0; depth < 8; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tosa::ReshapeOp,
            linalg::BroadcastOp, linalg::TransposeOp, tosa::TransposeOp,
            tosa::TileOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    break;
  }
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

std::optional<double> mlir::attn::getSplatFloat(Value v) {
  std::optional<Attribute> attr = getSplatValue(v);
  if (!attr)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(*attr))
    return f.getValueAsDouble();
  return std::nullopt;
}

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

std::optional<ScaledValue> mlir::attn::matchConstantScaling(Value v) {
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
