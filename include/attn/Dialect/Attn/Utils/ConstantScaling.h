//===- ConstantScaling.h - constant splats and scalings --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Matchers shared by the attn.attention canonicalizer (which folds scalings
// of q and k into `scale`) and --attn-raise (which collects the scale of an
// unfused attention graph): compile-time splat constants and elementwise
// multiplications/divisions of a tensor by one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_CONSTANTSCALING_H
#define ATTN_DIALECT_ATTN_UTILS_CONSTANTSCALING_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir {
namespace attn {

/// Returns the value of every element of `v` if they are all the same
/// compile-time constant: a splat constant (arith or tosa), a linalg.fill of
/// a constant scalar, a scalar constant, or a broadcast/reshape of one.
std::optional<Attribute> getSplatValue(Value v);

/// getSplatValue for floats.
std::optional<double> getSplatFloat(Value v);

/// `unscaled * factor`, elementwise.
struct ScaledValue {
  Value unscaled;
  double factor;
};

/// Recognizes `v` as a multiplication or division of another tensor of the
/// same type by a constant splat (arith, linalg named or generic, tosa.mul).
std::optional<ScaledValue> matchConstantScaling(Value v);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_UTILS_CONSTANTSCALING_H
