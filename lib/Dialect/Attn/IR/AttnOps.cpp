//===- AttnOps.cpp - attn dialect operations --------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdint>

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Builders and helpers
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value, Value mask, Value bias,
                        Value init, float scale,
                        std::optional<CausalAlignment> causal,
                        Value causalOffset, Value causalPeriod) {
  SmallVector<Type> resultTypes;
  if (isa<RankedTensorType>(init.getType()))
    resultTypes.push_back(init.getType());
  CausalAlignmentAttr causalAttr;
  if (causal)
    causalAttr = CausalAlignmentAttr::get(builder.getContext(), *causal);
  build(builder, state, resultTypes, query, key, value, mask, bias, init,
        causalOffset, causalPeriod, builder.getF32FloatAttr(scale), causalAttr);
}

int64_t AttentionOp::getHeadGroupSize() {
  int64_t hq = getNumQueryHeads(), hkv = getNumKVHeads();
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv) || hkv == 0)
    return ShapedType::kDynamic;
  return hq / hkv;
}

Value AttentionOp::createHeadGroupSize(OpBuilder &b, Location loc) {
  int64_t group = getHeadGroupSize();
  if (!ShapedType::isDynamic(group))
    return arith::ConstantIndexOp::create(b, loc, group);
  auto count = [&](Value x) {
    return getValueOrCreateConstantIndexOp(
        b, loc, linalg::createFoldedDimOp(b, loc, x, getHeadDim()));
  };
  return arith::DivUIOp::create(b, loc, count(getQuery()), count(getKey()));
}

SmallVector<int64_t> AttentionOp::getScoreShape() {
  SmallVector<int64_t> shape(getQueryType().getShape());
  shape.back() = getKVSeqLen();
  return shape;
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

namespace {
/// Which logical dimension a position of an operand stands for, for messages.
enum class DimRole {
  QueryHeads,
  KVHeads,
  QuerySeq,
  KVSeq,
  QKFeature,
  VFeature
};

std::string dimName(int64_t rank, int64_t dim, DimRole role) {
  if (dim < rank - 3)
    return ("B" + Twine(dim)).str();
  switch (role) {
  case DimRole::QueryHeads:
    return "Hq";
  case DimRole::KVHeads:
    return "Hkv";
  case DimRole::QuerySeq:
    return "Lq";
  case DimRole::KVSeq:
    return "Lk";
  case DimRole::QKFeature:
    return "Dqk";
  case DimRole::VFeature:
    return "Dv";
  }
  llvm_unreachable("unknown dim role");
}

bool isSupportedElementType(Type t) {
  return t.isF32() || t.isF16() || t.isBF16();
}

/// Verifies that `operand` (a mask or bias) broadcasts to the score shape.
LogicalResult verifyBroadcastOperand(AttentionOp op, StringRef name,
                                     ShapedType type, bool allowBool) {
  SmallVector<int64_t> score = op.getScoreShape();
  int64_t rank = op.getRank();
  if (type.getRank() != rank)
    return op.emitOpError() << name << " has rank " << type.getRank()
                            << " but must have the rank of q (" << rank
                            << ") and broadcast to [B..., Hq, Lq, Lk]";
  Type elt = type.getElementType();
  if (!(isa<FloatType>(elt) && isSupportedElementType(elt)) &&
      !(allowBool && elt.isInteger(1)))
    return op.emitOpError()
           << name << " element type must be " << (allowBool ? "i1, " : "")
           << "f32, f16 or bf16, got " << elt;
  static const DimRole roles[] = {DimRole::QueryHeads, DimRole::QuerySeq,
                                  DimRole::KVSeq};
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size) || size == 1 ||
        ShapedType::isDynamic(score[d]) || size == score[d])
      continue;
    DimRole role = d < rank - 3 ? DimRole::QueryHeads : roles[d - (rank - 3)];
    return op.emitOpError()
           << name << " dim " << d << " (" << dimName(rank, d, role) << ") is "
           << size << " but must be 1 or " << score[d];
  }
  return success();
}
} // namespace

LogicalResult AttentionOp::verify() {
  ShapedType qTy = getQueryType(), kTy = getKeyType(), vTy = getValueType(),
             oTy = getInitType();
  bool onTensors = isa<RankedTensorType>(qTy);
  auto sameKind = [&](Type t) { return isa<RankedTensorType>(t) == onTensors; };
  if (!sameKind(kTy) || !sameKind(vTy) || !sameKind(oTy) ||
      (getMask() && !sameKind(getMask().getType())) ||
      (getBias() && !sameKind(getBias().getType())))
    return emitOpError("operands must be all ranked tensors or all memrefs");

  if (onTensors) {
    if (getNumResults() != 1)
      return emitOpError("on tensors must have exactly one result, got ")
             << getNumResults();
    if (getResult(0).getType() != oTy)
      return emitOpError("result type ")
             << getResult(0).getType() << " must match init type " << oTy;
  } else if (getNumResults() != 0) {
    return emitOpError("on memrefs must not have results, got ")
           << getNumResults();
  }

  int64_t rank = qTy.getRank();
  if (rank < 3)
    return emitOpError("q must have rank >= 3 ([B..., Hq, Lq, Dqk]), got rank ")
           << rank;
  for (auto [name, ty] :
       {std::pair<StringRef, ShapedType>{"k", kTy}, {"v", vTy}, {"init", oTy}})
    if (ty.getRank() != rank)
      return emitOpError() << name << " has rank " << ty.getRank()
                           << " but q has rank " << rank;

  Type elt = qTy.getElementType();
  if (!isSupportedElementType(elt))
    return emitOpError("q element type must be f32, f16 or bf16, got ") << elt;
  if (kTy.getElementType() != elt || vTy.getElementType() != elt)
    return emitOpError() << "q, k and v must have the same element type, got "
                         << elt << ", " << kTy.getElementType() << " and "
                         << vTy.getElementType();
  if (oTy.getElementType() != elt)
    return emitOpError() << "init element type " << oTy.getElementType()
                         << " must be v's element type " << elt;

  // Compares dim `da` of `a` with dim `db` of `b` where both are static.
  auto checkEq = [&](StringRef aName, ShapedType a, int64_t da, DimRole role,
                     StringRef bName, ShapedType b,
                     int64_t db) -> LogicalResult {
    int64_t sa = a.getDimSize(da), sb = b.getDimSize(db);
    if (ShapedType::isDynamic(sa) || ShapedType::isDynamic(sb) || sa == sb)
      return success();
    return emitOpError() << aName << " dim " << da << " ("
                         << dimName(rank, da, role) << ") is " << sa << " but "
                         << bName << " dim " << db << " is " << sb;
  };

  int64_t hDim = rank - 3, lDim = rank - 2, dDim = rank - 1;
  for (int64_t b = 0; b < hDim; ++b)
    if (failed(checkEq("k", kTy, b, DimRole::QueryHeads, "q", qTy, b)) ||
        failed(checkEq("v", vTy, b, DimRole::QueryHeads, "q", qTy, b)) ||
        failed(checkEq("init", oTy, b, DimRole::QueryHeads, "q", qTy, b)))
      return failure();
  if (failed(checkEq("v", vTy, hDim, DimRole::KVHeads, "k", kTy, hDim)) ||
      failed(checkEq("k", kTy, lDim, DimRole::KVSeq, "v", vTy, lDim)) ||
      failed(checkEq("k", kTy, dDim, DimRole::QKFeature, "q", qTy, dDim)) ||
      failed(checkEq("init", oTy, hDim, DimRole::QueryHeads, "q", qTy, hDim)) ||
      failed(checkEq("init", oTy, lDim, DimRole::QuerySeq, "q", qTy, lDim)) ||
      failed(checkEq("init", oTy, dDim, DimRole::VFeature, "v", vTy, dDim)))
    return failure();

  int64_t hq = qTy.getDimSize(hDim), hkv = kTy.getDimSize(hDim);
  if (!ShapedType::isDynamic(hkv) && hkv == 0)
    return emitOpError("k dim ") << hDim << " (Hkv) must not be 0";
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && hq % hkv)
    return emitOpError() << "q dim " << hDim << " (Hq) is " << hq
                         << ", not a multiple of k dim " << hDim << " (Hkv) "
                         << hkv;

  if (getMask() && failed(verifyBroadcastOperand(
                       *this, "mask", cast<ShapedType>(getMask().getType()),
                       /*allowBool=*/true)))
    return failure();
  if (getBias() && failed(verifyBroadcastOperand(
                       *this, "bias", cast<ShapedType>(getBias().getType()),
                       /*allowBool=*/false)))
    return failure();

  if (getCausalPeriod() && !getCausal())
    return emitOpError("causal_period requires causal");
  // The lowerings compare row and key indices in 32 bits.
  APInt period;
  if (getCausalPeriod() &&
      matchPattern(getCausalPeriod(), m_ConstantInt(&period)) &&
      (period.getSExtValue() <= 0 || period.getSExtValue() > INT32_MAX))
    return emitOpError("causal_period must be positive and below 2^31, got ")
           << period.getSExtValue();
  APInt offset;
  if (getCausalOffset() && getCausalPeriod() &&
      matchPattern(getCausalOffset(), m_ConstantInt(&offset)) &&
      offset.isNegative())
    return emitOpError("causal_offset must not be negative with a "
                       "causal_period, got ")
           << offset.getSExtValue();
  if (getCausalOffset() && getCausal() != CausalAlignment::TopLeft &&
      !getCausalPeriod())
    return emitOpError(
        "causal_offset requires causal = top_left or a causal_period");

  float scale = getScaleValue();
  if (!std::isfinite(scale))
    return emitOpError("scale must be finite, got ")
           << (std::isnan(scale) ? "NaN"
               : scale > 0       ? "+inf"
                                 : "-inf");
  return success();
}

//===----------------------------------------------------------------------===//
// Memory effects
//===----------------------------------------------------------------------===//

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors the op is pure; on memrefs it reads its inputs and writes init
  // (every element is overwritten, init is never read).
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue; // tensors and the causal offset

    if (&operand == &getInitMutable())
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}
