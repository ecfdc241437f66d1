//===- ScoreTerms.h - a CPU tile's bias and mask terms ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_SCORETERMS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_SCORETERMS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
namespace cpu {

/// log2(e): the kernels compute exp(x) as exp2(x * log2(e)).
constexpr double kLog2E = 1.4426950408889634;

/// Base-2 scores `s` (f32 vector) plus op's bias and additive mask, each
/// times log2(e): `read(operand)` gives an operand's f32 values for the
/// elements of `s`, in its layout.
Value addScoreTerms(OpBuilder &b, Location loc, AttentionOp op, Value s,
                    function_ref<Value(Value)> read);

} // namespace cpu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_SCORETERMS_H
