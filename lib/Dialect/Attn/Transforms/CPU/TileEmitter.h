//===- TileEmitter.h - what both CPU kernels build with ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_TILEEMITTER_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_TILEEMITTER_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
namespace cpu {

/// The base of the CPU kernels' emitters: tile `op` (one batch and head)
/// and the small builders both use for its vectors, indices and reads.
class TileEmitter {
protected:
  explicit TileEmitter(AttentionOp op)
      : op(op), loc(op.getLoc()), rank(op.getRank()) {}

  Type f32(OpBuilder &b) { return b.getF32Type(); }
  VectorType vec(OpBuilder &b, ArrayRef<int64_t> shape, Type elt = {}) {
    return VectorType::get(shape, elt ? elt : f32(b));
  }
  /// A constant vector of `type` (a float element type), all `value`.
  Value splat(OpBuilder &b, VectorType type, double value) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type,
                               b.getFloatAttr(type.getElementType(), value)));
  }
  Value cst(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value toF32(OpBuilder &b, Value v) {
    auto type = cast<VectorType>(v.getType());
    if (type.getElementType().isF32())
      return v;
    return arith::ExtFOp::create(b, loc, vec(b, type.getShape()), v);
  }
  /// Indices [0, ..., 0, row, col] into an operand of the op's rank (a null
  /// row or col: 0).
  SmallVector<Value> indices(OpBuilder &b, Value row, Value col) {
    Value zero = cst(b, 0);
    SmallVector<Value> idx(rank - 2, zero);
    idx.push_back(row ? row : zero);
    idx.push_back(col ? col : zero);
    return idx;
  }
  /// The 0 of `source`'s element type, for transfer_read padding.
  Value padding(OpBuilder &b, Value source) {
    Type elt = cast<ShapedType>(source.getType()).getElementType();
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  }
  /// A permutation map from the op's operand dims to `exprs`.
  AffineMap pick(OpBuilder &b, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(rank, 0, exprs, b.getContext());
  }
  AffineExpr seqDim(OpBuilder &b) { return b.getAffineDimExpr(rank - 2); }
  AffineExpr featureDim(OpBuilder &b) { return b.getAffineDimExpr(rank - 1); }

  AttentionOp op;
  Location loc;
  int64_t rank;
};

} // namespace cpu
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPU_TILEEMITTER_H
