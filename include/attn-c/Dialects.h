/*===-- attn-c/Dialects.h - C API for the attn dialect ------------*- C -*-===*\
|*                                                                            *|
|* Part of the attn-mlir project.                                             *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The attn dialect in MLIR's C API style: its dialect handle, and a builder  *|
|* and accessors for attn.attention.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_DIALECTS_H
#define ATTN_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__attn__(): the attn dialect alone. Use
/// mlirAttnRegisterAllDialects (attn-c/RegisterEverything.h) to also get its
/// interface models and what the attn passes need.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Attn, attn);

/// The alignment of the causal mask of attn.attention (see the op's docs).
typedef enum MlirAttnCausal {
  /// No causal masking.
  MlirAttnCausalNone = 0,
  /// Key j is visible to query i iff j <= i.
  MlirAttnCausalTopLeft = 1,
  /// Key j is visible to query i iff j <= i + Lk - Lq.
  MlirAttnCausalBottomRight = 2,
} MlirAttnCausal;

/// Creates an attn.attention at `location`, detached (insert it with
/// mlirBlockAppendOwnedOperation or mlirBlockInsertOwnedOperation*). `mask`
/// and `bias` are optional: pass a null value ({NULL}). On tensors the op
/// has one result of `init`'s type; on memrefs it writes `init` and has
/// none. The op is verified: if the operands are invalid, the verifier's
/// error goes to the context's diagnostic handlers and a null operation is
/// returned.
MLIR_CAPI_EXPORTED MlirOperation
mlirAttnAttentionOpCreate(MlirLocation location, MlirValue query, MlirValue key,
                          MlirValue value, MlirValue mask, MlirValue bias,
                          MlirValue init, float scale, MlirAttnCausal causal);

/// Returns true if `op` is an attn.attention.
MLIR_CAPI_EXPORTED bool mlirOperationIsAAttnAttentionOp(MlirOperation op);

/// Returns the scale of an attn.attention.
MLIR_CAPI_EXPORTED float mlirAttnAttentionOpGetScale(MlirOperation op);

/// Returns the causal alignment of an attn.attention.
MLIR_CAPI_EXPORTED MlirAttnCausal
mlirAttnAttentionOpGetCausal(MlirOperation op);

/// The optional operands of an attn.attention, or a null value where the op
/// has none: its mask and bias, its causal offset (an index: key j is
/// visible to query i iff j <= i + offset; what tiling the rows produces)
/// and its causal period (an index: the rows are groups of that many
/// queries, as after packing grouped-query heads; see the op's docs).
MLIR_CAPI_EXPORTED MlirValue mlirAttnAttentionOpGetMask(MlirOperation op);
MLIR_CAPI_EXPORTED MlirValue mlirAttnAttentionOpGetBias(MlirOperation op);
MLIR_CAPI_EXPORTED MlirValue
mlirAttnAttentionOpGetCausalOffset(MlirOperation op);
MLIR_CAPI_EXPORTED MlirValue
mlirAttnAttentionOpGetCausalPeriod(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif // ATTN_C_DIALECTS_H
