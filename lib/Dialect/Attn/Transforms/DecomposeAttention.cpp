//===- DecomposeAttention.cpp - attention to unfused linalg ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The unfused reference lowering. Loop dims are named as in the op docs:
// b... (batch), h (query head), i (query row), j (key), d (qk feature),
// e (v feature). Every step is a linalg.generic in f32.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
using utils::IteratorType;

/// State shared by the steps of one decomposition.
class Decomposer {
public:
  Decomposer(RewriterBase &b, AttentionOp op, Value q, Value k, Value v,
             Value mask, Value bias)
      : b(b), loc(op.getLoc()), op(op), q(q), k(k), v(v), mask(mask),
        bias(bias), ctx(op.getContext()), rank(op.getRank()),
        f32(Float32Type::get(ctx)) {}

  /// Emits the computation; returns the result tensor (of init's type).
  Value run(Value init);

private:
  OpFoldResult dim(Value val, int64_t d) {
    return tensor::getMixedSize(b, loc, val, d);
  }
  Value constF32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value filled(ArrayRef<OpFoldResult> sizes, double value) {
    Value empty = tensor::EmptyOp::create(b, loc, sizes, f32);
    return linalg::FillOp::create(b, loc, constF32(value), empty).getResult(0);
  }
  Value toF32(OpBuilder &nb, Value x) {
    if (x.getType() == f32)
      return x;
    return arith::ExtFOp::create(nb, loc, f32, x);
  }
  AffineMap map(unsigned numDims, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(numDims, 0, exprs, ctx);
  }
  /// Batch dims followed by the expressions in `tail`, over `numDims` loops.
  SmallVector<AffineExpr> batchThen(ArrayRef<AffineExpr> tail) {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank - 3; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx));
    llvm::append_range(exprs, tail);
    return exprs;
  }
  /// The kv head read by query head `h`. (With Hq / Hkv known only at run
  /// time, k and v come with their heads repeated: see repeatHeads.)
  AffineExpr kvHead(AffineExpr h) {
    int64_t g = op.getHeadGroupSize();
    return ShapedType::isDynamic(g) || g == 1 ? h : h.floorDiv(g);
  }
  /// Map from the [b..., h, i, j] loops to a broadcast operand (mask, bias):
  /// a size-1 dim reads index 0.
  AffineMap broadcastMap(Value operand) {
    auto ty = cast<ShapedType>(operand.getType());
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(ty.getDimSize(d) == 1 ? getAffineConstantExpr(0, ctx)
                                            : getAffineDimExpr(d, ctx));
    return map(rank, exprs);
  }
  SmallVector<IteratorType> iterators(int64_t parallel, int64_t reduction) {
    SmallVector<IteratorType> its(parallel, IteratorType::parallel);
    its.append(reduction, IteratorType::reduction);
    return its;
  }

  Value computeScores();
  Value applyScaleBiasMasks(Value scores);
  Value rowReduce(Value x, double init, bool isMax);
  Value softmax(Value s);
  Value multiplyByValues(Value p);

  RewriterBase &b;
  Location loc;
  AttentionOp op;
  Value q, k, v, mask, bias;
  MLIRContext *ctx;
  int64_t rank;
  Type f32;
};
} // namespace

/// S[b..., h, i, j] = sum_d q[b..., h, i, d] * k[b..., h/g, j, d], in f32.
Value Decomposer::computeScores() {
  unsigned n = rank + 1; // b..., h, i, j, d
  AffineExpr h = getAffineDimExpr(rank - 3, ctx),
             i = getAffineDimExpr(rank - 2, ctx),
             j = getAffineDimExpr(rank - 1, ctx),
             d = getAffineDimExpr(rank, ctx);
  SmallVector<OpFoldResult> sizes;
  for (int64_t x = 0; x < rank - 1; ++x)
    sizes.push_back(dim(q, x));
  sizes.push_back(dim(k, rank - 2));
  Value acc = filled(sizes, 0.0);
  SmallVector<AffineMap> maps = {map(n, batchThen({h, i, d})),
                                 map(n, batchThen({kvHead(h), j, d})),
                                 map(n, batchThen({h, i, j}))};
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{q, k}, ValueRange{acc}, maps,
             iterators(rank, 1),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value prod = arith::MulFOp::create(nb, l, toF32(nb, args[0]),
                                                  toF32(nb, args[1]));
               Value sum = arith::AddFOp::create(nb, l, args[2], prod);
               linalg::YieldOp::create(nb, l, sum);
             })
      .getResult(0);
}

/// s = scale * S + bias (+ float mask); hidden positions (false in a bool
/// mask, or causally hidden) become -inf.
Value Decomposer::applyScaleBiasMasks(Value scores) {
  SmallVector<Value> inputs = {scores};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(broadcastMap(bias));
  }
  if (mask) {
    inputs.push_back(mask);
    maps.push_back(broadcastMap(mask));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));

  // Causal: key j is visible to row i iff j <= pos(i) + diagonal, where
  // pos(i) = i (+ the offset of rows, modulo the period, with a period).
  // Without a period the offset joins the diagonal.
  Value rowOffset, diagonal;
  Value period = op.getCausalPeriod();
  if (std::optional<CausalAlignment> causal = op.getCausal()) {
    if (period)
      rowOffset = op.getCausalOffset();
    if (*causal == CausalAlignment::TopLeft) {
      diagonal = !period && op.getCausalOffset()
                     ? op.getCausalOffset()
                     : arith::ConstantIndexOp::create(b, loc, 0).getResult();
    } else {
      Value lk = getValueOrCreateConstantIndexOp(b, loc, dim(k, rank - 2));
      Value queries =
          period ? period
                 : getValueOrCreateConstantIndexOp(b, loc, dim(q, rank - 2));
      diagonal = arith::SubIOp::create(b, loc, lk, queries);
    }
  }

  SmallVector<OpFoldResult> sizes;
  for (int64_t x = 0; x < rank; ++x)
    sizes.push_back(dim(scores, x));
  Value out = tensor::EmptyOp::create(b, loc, sizes, f32);
  double scale = op.getScaleValue();
  bool boolMask =
      mask && cast<ShapedType>(mask.getType()).getElementType().isInteger(1);
  return linalg::GenericOp::create(
             b, loc, out.getType(), inputs, ValueRange{out}, maps,
             iterators(rank, 0),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value negInf = arith::ConstantOp::create(
                   nb, l,
                   nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
               Value s = arith::MulFOp::create(
                   nb, l, args[0],
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(scale)));
               unsigned next = 1;
               if (bias)
                 s = arith::AddFOp::create(nb, l, s, toF32(nb, args[next++]));
               if (mask) {
                 Value m = args[next++];
                 s = boolMask ? arith::SelectOp::create(nb, l, m, s, negInf)
                                    .getResult()
                              : arith::AddFOp::create(nb, l, s, toF32(nb, m))
                                    .getResult();
               }
               if (diagonal) {
                 Value i = linalg::IndexOp::create(nb, l, rank - 2);
                 Value j = linalg::IndexOp::create(nb, l, rank - 1);
                 Value pos = i;
                 if (rowOffset)
                   pos = arith::AddIOp::create(nb, l, pos, rowOffset);
                 if (period)
                   pos = arith::RemUIOp::create(nb, l, pos, period);
                 Value limit = arith::AddIOp::create(nb, l, pos, diagonal);
                 Value visible = arith::CmpIOp::create(
                     nb, l, arith::CmpIPredicate::sle, j, limit);
                 s = arith::SelectOp::create(nb, l, visible, s, negInf);
               }
               linalg::YieldOp::create(nb, l, s);
             })
      .getResult(0);
}

/// Reduces [b..., h, i, j] along j with max or sum.
Value Decomposer::rowReduce(Value x, double init, bool isMax) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank - 1; ++d)
    sizes.push_back(dim(x, d));
  Value acc = filled(sizes, init);
  SmallVector<AffineExpr> rowExprs;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 map(rank, rowExprs)};
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{x}, ValueRange{acc}, maps,
             iterators(rank - 1, 1),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value r =
                   isMax ? arith::MaximumFOp::create(nb, l, args[0], args[1])
                               .getResult()
                         : arith::AddFOp::create(nb, l, args[0], args[1])
                               .getResult();
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// p = softmax(s) along j, max-subtracted. A row whose max is -inf has no
/// visible key: its exponentials are taken against 0 (so they are 0, not
/// exp(-inf - -inf) = NaN) and its probabilities are 0.
Value Decomposer::softmax(Value s) {
  Value rowMax = rowReduce(s, -std::numeric_limits<float>::infinity(),
                           /*isMax=*/true);
  SmallVector<AffineExpr> rowExprs;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap row = map(rank, rowExprs);
  Value expOut =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, s), f32);
  Value e =
      linalg::GenericOp::create(
          b, loc, expOut.getType(), ValueRange{s, rowMax}, ValueRange{expOut},
          SmallVector<AffineMap>{identity, row, identity}, iterators(rank, 0),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value negInf = arith::ConstantOp::create(
                nb, l,
                nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
            Value zero =
                arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0));
            Value empty = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OEQ, args[1], negInf);
            Value m = arith::SelectOp::create(nb, l, empty, zero, args[1]);
            Value x = arith::SubFOp::create(nb, l, args[0], m);
            linalg::YieldOp::create(nb, l,
                                    math::ExpOp::create(nb, l, x).getResult());
          })
          .getResult(0);
  Value rowSum = rowReduce(e, 0.0, /*isMax=*/false);
  Value pOut =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, s), f32);
  return linalg::GenericOp::create(
             b, loc, pOut.getType(), ValueRange{e, rowSum}, ValueRange{pOut},
             SmallVector<AffineMap>{identity, row, identity},
             iterators(rank, 0),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value zero =
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0));
               Value positive = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OGT, args[1], zero);
               Value p = arith::DivFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(
                   nb, l,
                   arith::SelectOp::create(nb, l, positive, p, zero)
                       .getResult());
             })
      .getResult(0);
}

/// O[b..., h, i, e] = sum_j p[b..., h, i, j] * v[b..., h/g, j, e], in f32.
Value Decomposer::multiplyByValues(Value p) {
  unsigned n = rank + 1; // b..., h, i, e, j
  AffineExpr h = getAffineDimExpr(rank - 3, ctx),
             i = getAffineDimExpr(rank - 2, ctx),
             e = getAffineDimExpr(rank - 1, ctx),
             j = getAffineDimExpr(rank, ctx);
  SmallVector<OpFoldResult> sizes;
  for (int64_t x = 0; x < rank - 1; ++x)
    sizes.push_back(dim(q, x));
  sizes.push_back(dim(v, rank - 1));
  Value acc = filled(sizes, 0.0);
  SmallVector<AffineMap> maps = {map(n, batchThen({h, i, j})),
                                 map(n, batchThen({kvHead(h), j, e})),
                                 map(n, batchThen({h, i, e}))};
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{p, v}, ValueRange{acc}, maps,
             iterators(rank, 1),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value prod =
                   arith::MulFOp::create(nb, l, args[0], toF32(nb, args[1]));
               Value sum = arith::AddFOp::create(nb, l, args[2], prod);
               linalg::YieldOp::create(nb, l, sum);
             })
      .getResult(0);
}

Value Decomposer::run(Value init) {
  Value p = softmax(applyScaleBiasMasks(computeScores()));
  Value out = multiplyByValues(p);
  // Convert to the result type, writing the destination.
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Type resultElt = cast<ShapedType>(init.getType()).getElementType();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{out}, ValueRange{init},
             SmallVector<AffineMap>{identity, identity}, iterators(rank, 0),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value r = args[0];
               if (resultElt != f32)
                 r = arith::TruncFOp::create(nb, l, resultElt, r);
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// `src` (k or v of `op`, on tensors) with its heads repeated to the query
/// heads: head h is src's head h / (Hq / Hkv). For a group size known only
/// at run time, which the contractions' affine maps cannot divide by: a
/// gather, materialized (this is the unfused path).
static Value repeatHeads(OpBuilder &b, Location loc, AttentionOp op,
                         Value src) {
  auto type = cast<RankedTensorType>(src.getType());
  int64_t rank = type.getRank(), headDim = op.getHeadDim();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(
        tensor::getMixedSize(b, loc, d == headDim ? op.getQuery() : src, d));
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  Value group = op.createHeadGroupSize(b, loc);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{}, ValueRange{empty},
             SmallVector<AffineMap>{id},
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange) {
               SmallVector<Value> idx;
               for (int64_t d = 0; d < rank; ++d)
                 idx.push_back(linalg::IndexOp::create(nb, l, d));
               idx[headDim] =
                   arith::DivUIOp::create(nb, l, idx[headDim], group);
               linalg::YieldOp::create(
                   nb, l,
                   tensor::ExtractOp::create(nb, l, src, idx).getResult());
             })
      .getResult(0);
}

LogicalResult mlir::attn::decomposeAttention(RewriterBase &rewriter,
                                             AttentionOp op) {
  // On memrefs: decompose the same op on tensor views of the buffers, whose
  // result is then written to the init buffer.
  if (!op.hasPureTensorSemantics()) {
    FailureOr<AttentionOp> onTensors = convertAttentionToTensors(rewriter, op);
    if (failed(onTensors))
      return op.emitOpError("cannot be decomposed: mixes tensors and memrefs");
    op = *onTensors;
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value k = op.getKey(), v = op.getValue();
  if (ShapedType::isDynamic(op.getHeadGroupSize())) {
    k = repeatHeads(rewriter, op.getLoc(), op, k);
    v = repeatHeads(rewriter, op.getLoc(), op, v);
  }
  Value result =
      Decomposer(rewriter, op, op.getQuery(), k, v, op.getMask(), op.getBias())
          .run(op.getInit());
  rewriter.replaceOp(op, result);
  return success();
}

namespace {
struct AttnDecomposePass : attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      if (failed(decomposeAttention(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace
