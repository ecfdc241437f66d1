//===- Dialects.cpp - C API for the attn dialect --------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Dialects.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::attn;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Attn, attn, AttnDialect)

MlirOperation mlirAttnAttentionOpCreate(MlirLocation location, MlirValue query,
                                        MlirValue key, MlirValue value,
                                        MlirValue mask, MlirValue bias,
                                        MlirValue init, float scale,
                                        MlirAttnCausal causal) {
  Location loc = unwrap(location);
  std::optional<CausalAlignment> alignment;
  if (causal == MlirAttnCausalTopLeft)
    alignment = CausalAlignment::TopLeft;
  else if (causal == MlirAttnCausalBottomRight)
    alignment = CausalAlignment::BottomRight;

  // The dialect is registered but not necessarily loaded yet. The op is
  // detached: the caller inserts it.
  loc.getContext()->getOrLoadDialect<AttnDialect>();
  OpBuilder builder(loc.getContext());
  auto op = AttentionOp::create(builder, loc, unwrap(query), unwrap(key),
                                unwrap(value), unwrap(mask), unwrap(bias),
                                unwrap(init), scale, alignment);
  if (failed(verify(op))) {
    op->erase();
    return MlirOperation{nullptr};
  }
  return wrap(op.getOperation());
}

bool mlirOperationIsAAttnAttentionOp(MlirOperation op) {
  return isa<AttentionOp>(unwrap(op));
}

float mlirAttnAttentionOpGetScale(MlirOperation op) {
  return cast<AttentionOp>(unwrap(op)).getScaleValue();
}

MlirAttnCausal mlirAttnAttentionOpGetCausal(MlirOperation op) {
  std::optional<CausalAlignment> causal =
      cast<AttentionOp>(unwrap(op)).getCausal();
  if (!causal)
    return MlirAttnCausalNone;
  return *causal == CausalAlignment::TopLeft ? MlirAttnCausalTopLeft
                                             : MlirAttnCausalBottomRight;
}

MlirValue mlirAttnAttentionOpGetMask(MlirOperation op) {
  return wrap(cast<AttentionOp>(unwrap(op)).getMask());
}

MlirValue mlirAttnAttentionOpGetBias(MlirOperation op) {
  return wrap(cast<AttentionOp>(unwrap(op)).getBias());
}

MlirValue mlirAttnAttentionOpGetCausalOffset(MlirOperation op) {
  return wrap(cast<AttentionOp>(unwrap(op)).getCausalOffset());
}

MlirValue mlirAttnAttentionOpGetCausalPeriod(MlirOperation op) {
  return wrap(cast<AttentionOp>(unwrap(op)).getCausalPeriod());
}
