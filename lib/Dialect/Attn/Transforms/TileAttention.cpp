//===- TileAttention.cpp - tiling and online softmax ----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The fused CPU lowering: attn.attention is tiled over [B..., Hq, Lq-blocks]
// through its TilingInterface, then each tile becomes the FlashAttention
// online-softmax loop over key blocks, on vectors: those of the keys-major
// kernel below run along the tile's rows; tiles of few rows take the
// row-major kernel (CPU/RowMajorKernel.cpp). Vector names below: R query
// rows, C keys per block, D = Dqk, E = Dv.
//
//===----------------------------------------------------------------------===//

#include "CPU/KeyRange.h"
#include "CPU/RowMajorKernel.h"
#include "CPU/ScoreTerms.h"
#include "CPU/TileEmitter.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<AttentionOp>>
mlir::attn::tileAttentionOverRows(RewriterBase &rewriter, AttentionOp op,
                                  int64_t qTile) {
  if (!op.hasPureTensorSemantics())
    return rewriter.notifyMatchFailure(op, "only tiles ops on tensors");
  // A tile no larger than Lq keeps the tile shapes static when Lq < qTile.
  int64_t lq = op.getQuerySeqLen();
  if (!ShapedType::isDynamic(lq) && lq > 0)
    qTile = std::min(qTile, lq);
  SmallVector<OpFoldResult> tileSizes(op.getRank() - 2,
                                      rewriter.getIndexAttr(1));
  tileSizes.push_back(rewriter.getIndexAttr(qTile));
  scf::SCFTilingOptions options;
  options.setTileSizes(tileSizes);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  SmallVector<AttentionOp> tiles;
  for (Operation *t : tiled->tiledOps)
    if (auto tile = dyn_cast<AttentionOp>(t))
      tiles.push_back(tile);
  return tiles;
}

/// Replaces a boolean mask by the equivalent additive one (0 where visible,
/// -inf where hidden), in f16, computed once for the whole op (2 bytes per
/// mask element; masks are usually broadcast and small). LLVM stores a memref
/// of i1 one byte per element but loads a vector<N x i1> as packed bits, so the
/// vectorized tile code cannot read a boolean mask directly.
static void convertBoolMaskToAdditive(RewriterBase &rewriter, AttentionOp op) {
  Value mask = op.getMask();
  if (!mask || !cast<ShapedType>(mask.getType()).getElementType().isInteger(1))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(mask.getType());
  Type f16 = rewriter.getF16Type();
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, mask), f16);
  AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
  Value additive =
      linalg::GenericOp::create(
          rewriter, loc, empty.getType(), ValueRange{mask}, ValueRange{empty},
          SmallVector<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(type.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value zero = arith::ConstantOp::create(b, l, b.getF16FloatAttr(0));
            Value negInf = arith::ConstantOp::create(
                b, l,
                b.getF16FloatAttr(-std::numeric_limits<float>::infinity()));
            linalg::YieldOp::create(
                b, l,
                arith::SelectOp::create(b, l, args[0], zero, negInf)
                    .getResult());
          })
          .getResult(0);
  rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().assign(additive); });
}

//===----------------------------------------------------------------------===//
// Online softmax on one tile
//===----------------------------------------------------------------------===//

namespace {
/// Emits the online-softmax loop of one tile. The scores of a key block are
/// kept keys-major, sT[C, R], and the accumulator transposed, oT[E, R]: the
/// row-wise softmax reductions are then elementwise across vectors of R
/// rows, and both products are register-blocked sums of outer products
/// whose vectors are always R rows wide (b = kBlock keys or columns):
///   sT[c0 : c0 + b, :] += k[c0 : c0 + b, d] x qT[d, :]   (over d)
///   oT[e0 : e0 + b, :] += v[j, e0 : e0 + b] x pT[j, :]   (over the keys j)
/// Each b x R block stays in registers across its loop, and its K or V
/// elements are broadcasts of single loads. No large vector is ever
/// unrolled, which keeps LLVM's work small.
class OnlineSoftmaxEmitter : cpu::TileEmitter {
public:
  OnlineSoftmaxEmitter(AttentionOp op, int64_t rows, int64_t kvTile)
      : TileEmitter(op), R(rows), C(kvTile), D(op.getQKHeadDim()),
        E(op.getVHeadDim()), kBlock(std::clamp<int64_t>(128 / rows, 1, 8)) {}

  /// Emits the loops before `op` and returns the result tensor.
  Value emit(OpBuilder &b);

private:
  /// Carried across key blocks: running row max [R], row sum [R], the
  /// accumulator tile oT [E, R], and the scratch tile holding p^T [C, R].
  struct State {
    Value rowMax, rowSum, accT, pScratch;
  };

  /// The index `v` as i32 in every lane of a vector of `shape`.
  Value splatI32(OpBuilder &b, ArrayRef<int64_t> shape, Value v) {
    Type i32 = b.getI32Type();
    return vector::BroadcastOp::create(
        b, loc, vec(b, shape, i32), arith::IndexCastOp::create(b, loc, i32, v));
  }
  /// [R] -> [C, R]: the same row values for every key.
  Value broadcastKeys(OpBuilder &b, Value v) {
    Type elt = cast<VectorType>(v.getType()).getElementType();
    return vector::BroadcastOp::create(b, loc, vec(b, {C, R}, elt), v);
  }
  /// An in-bounds read of a `shape` vector from the f32 scratch `tile`.
  Value readScratch(OpBuilder &b, Value tile, ValueRange idx,
                    ArrayRef<int64_t> shape) {
    return vector::TransferReadOp::create(
        b, loc, vec(b, shape), tile, idx, padding(b, tile),
        SmallVector<bool>(shape.size(), true));
  }

  /// The [C, R] block (keys-major) of a mask or bias at key j0,
  /// broadcasting its size-1 dims.
  Value readScoreOperandT(OpBuilder &b, Value source, Value j0, bool inBounds) {
    auto type = cast<ShapedType>(source.getType());
    bool rowBroadcast = type.getDimSize(rank - 2) == 1;
    bool colBroadcast = type.getDimSize(rank - 1) == 1;
    AffineExpr zero = b.getAffineConstantExpr(0);
    AffineMap map = pick(b, {colBroadcast ? zero : featureDim(b),
                             rowBroadcast ? zero : seqDim(b)});
    Type elt = type.getElementType();
    // One element for every score (both dims broadcast): a scalar extract
    // and a splat. The all-broadcast transfer_read would become a 0-d
    // transfer that the CPU pipeline leaves unlowered when the operand is a
    // function argument (a memref with dynamic strides after bufferization).
    if (rowBroadcast && colBroadcast && isa<RankedTensorType>(type)) {
      Value scalar = tensor::ExtractOp::create(b, loc, source,
                                               indices(b, Value(), Value()));
      return vector::BroadcastOp::create(b, loc, vec(b, {C, R}, elt), scalar);
    }
    if (!rowBroadcast && !colBroadcast && R % 16 == 0 && C % 16 == 0)
      return readTransposedBlocks(b, source, j0, inBounds);
    return vector::TransferReadOp::create(
        b, loc, vec(b, {C, R}, elt), source,
        indices(b, Value(), colBroadcast ? Value() : j0), padding(b, source),
        map,
        ArrayRef<bool>{colBroadcast || inBounds, rowBroadcast || rowsInBounds});
  }

  /// The f32 [C, R] block at key j0 of a full [Lq, Lk] mask or bias, read
  /// along its rows, 16 x 16 at a time, and transposed by shuffles. The
  /// transposed read itself would load its C x R elements one at a time.
  Value readTransposedBlocks(OpBuilder &b, Value source, Value j0,
                             bool inBounds) {
    Value block = splat(b, vec(b, {C, R}), 0.0);
    for (int64_t r0 = 0; r0 < R; r0 += 16) {
      for (int64_t c0 = 0; c0 < C; c0 += 16) {
        Value rows = toF32(
            b,
            vector::TransferReadOp::create(
                b, loc, vec(b, {16, 16}, getElementTypeOrSelf(source)), source,
                indices(b, cst(b, r0),
                        arith::AddIOp::create(b, loc, j0, cst(b, c0))),
                padding(b, source), pick(b, {seqDim(b), featureDim(b)}),
                ArrayRef<bool>{rowsInBounds, inBounds}));
        // Row by row: a chain of vector.insert into a 16 x 16 vector would
        // be canonicalized into one from_elements of 256 scalars.
        SmallVector<Value> columns = transpose16x16(b, rows);
        for (int64_t i = 0; i < 16; ++i)
          block = vector::InsertStridedSliceOp::create(
              b, loc, columns[i], block, ArrayRef<int64_t>{c0 + i, r0},
              ArrayRef<int64_t>{1});
      }
    }
    return block;
  }

  /// The rows of the transpose of a 16 x 16 f32 block, in four rounds of
  /// 16 two-input shuffles: round s swaps the off-diagonal s x s sub-blocks
  /// of each 2s x 2s block (s = 8, 4, 2, 1). Each shuffle is one AVX-512
  /// instruction (vshuff64x2, vshuff32x4, vunpcklpd, vpermt2ps).
  SmallVector<Value> transpose16x16(OpBuilder &b, Value block) {
    SmallVector<Value> rows;
    for (int64_t i = 0; i < 16; ++i)
      rows.push_back(vector::ExtractOp::create(b, loc, block, i));
    for (int64_t s = 8; s >= 1; s /= 2) {
      SmallVector<int64_t> upper, lower;
      for (int64_t k = 0; k < 16; ++k) {
        // Operand 0's lanes are 0..15, operand 1's 16..31.
        upper.push_back((k & s) ? 16 + k - s : k);
        lower.push_back((k & s) ? 16 + k : k + s);
      }
      for (int64_t i = 0; i < 16; ++i) {
        if (i & s)
          continue;
        Value a = rows[i], c = rows[i + s];
        rows[i] = vector::ShuffleOp::create(b, loc, a, c, upper);
        rows[i + s] = vector::ShuffleOp::create(b, loc, a, c, lower);
      }
    }
    return rows;
  }

  Value scoresT(OpBuilder &b, Value j0, bool masked);
  State step(OpBuilder &b, Value j0, const State &state, bool masked);
  /// Threads `init` through `body(builder, value, e0, n)` for each block of
  /// n <= kBlock columns e0 .. e0 + n - 1 of the E output columns: a loop
  /// over the whole blocks, then the rest.
  Value forEachColumnBlock(
      OpBuilder &b, Value init,
      function_ref<Value(OpBuilder &, Value, Value, int64_t)> body);
  void emitLoop(OpBuilder &b, Value lb, Value ub, State &state, bool masked);

  int64_t R, C, D, E;
  /// Keys (of sT) and output columns (of oT) per register block: 128 f32
  /// accumulators (8 AVX-512 registers) whatever the rows, 1 to 8 vectors.
  int64_t kBlock;
  bool rowsInBounds = false;
  Value qT;        // scratch [D, R] f32: q^T * scale * log2(e)
  Value lq, lk;    // index
  Value rowLimits; // causal: row i's last visible key (i32 [R])
};
} // namespace

/// sT = k.q^T (+ (bias + mask)^T * log2(e)), -inf where hidden: [C, R].
Value OnlineSoftmaxEmitter::scoresT(OpBuilder &b, Value j0, bool masked) {
  Value key = op.getKey();
  Type kElt = cast<ShapedType>(key.getType()).getElementType();
  Value s = splat(b, vec(b, {C, R}), 0.0);
  Value lastKey =
      masked ? arith::SubIOp::create(b, loc, lk, cst(b, 1)) : Value();
  for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
    int64_t n = std::min(kBlock, C - c0);
    Value first = arith::AddIOp::create(b, loc, j0, cst(b, c0));
    // The block's K rows, read a column at a time as n scalar loads: a
    // strided transfer_read is lowered to a loop that inserts one lane at a
    // time, which only LLVM's optimizer unrolls (1.6x to 2.5x slower without
    // it). Past the end of the keys (masked blocks only; j0 < Lk there) the
    // last key is read instead: its scores are -inf below.
    SmallVector<Value> keyRows;
    for (int64_t c = 0; c < n; ++c) {
      Value row =
          c == 0 ? first
                 : arith::AddIOp::create(b, loc, first, cst(b, c)).getResult();
      if (masked)
        row = arith::MinSIOp::create(b, loc, row, lastKey);
      keyRows.push_back(row);
    }
    auto products = scf::ForOp::create(
        b, loc, cst(b, 0), cst(b, D), cst(b, 1),
        ValueRange{splat(b, vec(b, {n, R}), 0.0)},
        [&](OpBuilder &nb, Location, Value d, ValueRange args) {
          SmallVector<Value> elements;
          for (Value row : keyRows)
            elements.push_back(
                tensor::ExtractOp::create(nb, loc, key, indices(nb, row, d)));
          Value k = vector::FromElementsOp::create(nb, loc, vec(nb, {n}, kElt),
                                                   elements);
          k = toF32(nb, k);
          Value q = readScratch(nb, qT, ValueRange{d, cst(nb, 0)}, {R});
          Value sum = vector::OuterProductOp::create(nb, loc, vec(nb, {n, R}),
                                                     k, q, args[0]);
          scf::YieldOp::create(nb, loc, sum);
        });
    s = vector::InsertStridedSliceOp::create(b, loc, products.getResult(0), s,
                                             ArrayRef<int64_t>{c0, 0},
                                             ArrayRef<int64_t>{1, 1});
  }

  s = cpu::addScoreTerms(b, loc, op, s, [&](Value operand) {
    return toF32(b, readScoreOperandT(b, operand, j0, !masked));
  });
  if (!masked)
    return s;

  // Keys past the end, and causally hidden keys, become -inf.
  Type i32 = b.getI32Type();
  Value keyColumnIdx = vector::ShapeCastOp::create(b, loc, vec(b, {C, 1}, i32),
                                                   cpu::iotaI32(b, loc, C, j0));
  Value keys =
      vector::BroadcastOp::create(b, loc, vec(b, {C, R}, i32), keyColumnIdx);
  Value end = splatI32(b, {C, R}, lk);
  Value visible =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, keys, end);
  if (rowLimits) {
    Value causal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         keys, broadcastKeys(b, rowLimits));
    visible = arith::AndIOp::create(b, loc, visible, causal);
  }
  Value negInf =
      splat(b, vec(b, {C, R}), -std::numeric_limits<double>::infinity());
  return arith::SelectOp::create(b, loc, visible, s, negInf);
}

/// One key block of the online softmax.
OnlineSoftmaxEmitter::State OnlineSoftmaxEmitter::step(OpBuilder &b, Value j0,
                                                       const State &state,
                                                       bool masked) {
  double inf = std::numeric_limits<double>::infinity();
  Value s = scoresT(b, j0, masked);
  Value blockMax = vector::MultiDimReductionOp::create(
      b, loc, s, splat(b, vec(b, {R}), -inf), ArrayRef<bool>{true, false},
      vector::CombiningKind::MAXIMUMF);
  Value newMax = arith::MaximumFOp::create(b, loc, state.rowMax, blockMax);
  // A row with no visible key so far has max -inf: subtract 0 instead, so
  // exp2(-inf - 0) = 0 rather than exp2(-inf - -inf) = NaN.
  Value zeroR = splat(b, vec(b, {R}), 0.0);
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                      splat(b, vec(b, {R}), -inf));
  Value safeMax = arith::SelectOp::create(b, loc, empty, zeroR, newMax);
  Value p = math::Exp2Op::create(
      b, loc, arith::SubFOp::create(b, loc, s, broadcastKeys(b, safeMax)));
  Value alpha = math::Exp2Op::create(
      b, loc, arith::SubFOp::create(b, loc, state.rowMax, safeMax));
  Value blockSum = vector::MultiDimReductionOp::create(
      b, loc, p, zeroR, ArrayRef<bool>{true, false},
      vector::CombiningKind::ADD);
  Value rowSum = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, state.rowSum, alpha), blockSum);

  // oT = oT * alpha + sum_j v[j0 + j, :] x p[j, :], over the keys of the
  // block that exist (their p is 0 past the end anyway), a block of
  // columns at a time.
  Value zero = cst(b, 0);
  Value pScratch = vector::TransferWriteOp::create(b, loc, p, state.pScratch,
                                                   ValueRange{zero, zero},
                                                   ArrayRef<bool>{true, true})
                       .getResult();
  Value keysHere = cst(b, C);
  if (masked)
    keysHere = arith::MinSIOp::create(b, loc, keysHere,
                                      arith::SubIOp::create(b, loc, lk, j0));
  Value value = op.getValue();
  Type vElt = cast<ShapedType>(value.getType()).getElementType();
  auto update = [&](OpBuilder &nb, Value accT, Value e0, int64_t n) {
    Value o = readScratch(nb, accT, ValueRange{e0, zero}, {n, R});
    o = arith::MulFOp::create(
        nb, loc, o,
        vector::BroadcastOp::create(nb, loc, vec(nb, {n, R}), alpha));
    auto products = scf::ForOp::create(
        nb, loc, zero, keysHere, cst(nb, 1), ValueRange{o},
        [&](OpBuilder &lb, Location, Value j, ValueRange args) {
          Value pj = readScratch(lb, pScratch, ValueRange{j, cst(lb, 0)}, {R});
          Value key = arith::AddIOp::create(lb, loc, j0, j);
          Value vj = toF32(lb, vector::TransferReadOp::create(
                                   lb, loc, vec(lb, {n}, vElt), value,
                                   indices(lb, key, e0), padding(lb, value),
                                   ArrayRef<bool>{true}));
          Value sum = vector::OuterProductOp::create(lb, loc, vec(lb, {n, R}),
                                                     vj, pj, args[0]);
          scf::YieldOp::create(lb, loc, sum);
        });
    return vector::TransferWriteOp::create(nb, loc, products.getResult(0), accT,
                                           ValueRange{e0, zero},
                                           ArrayRef<bool>{true, true})
        .getResult();
  };
  Value accT = forEachColumnBlock(b, state.accT, update);
  return State{newMax, rowSum, accT, pScratch};
}

Value OnlineSoftmaxEmitter::forEachColumnBlock(
    OpBuilder &b, Value init,
    function_ref<Value(OpBuilder &, Value, Value, int64_t)> body) {
  int64_t whole = E / kBlock * kBlock;
  if (whole > 0)
    init =
        scf::ForOp::create(
            b, loc, cst(b, 0), cst(b, whole), cst(b, kBlock), ValueRange{init},
            [&](OpBuilder &nb, Location, Value e0, ValueRange args) {
              scf::YieldOp::create(nb, loc, body(nb, args[0], e0, kBlock));
            })
            .getResult(0);
  if (whole < E)
    init = body(b, init, cst(b, whole), E - whole);
  return init;
}

void OnlineSoftmaxEmitter::emitLoop(OpBuilder &b, Value lb, Value ub,
                                    State &state, bool masked) {
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, cst(b, C),
      ValueRange{state.rowMax, state.rowSum, state.accT, state.pScratch},
      [&](OpBuilder &nb, Location, Value j0, ValueRange args) {
        State next =
            step(nb, j0, State{args[0], args[1], args[2], args[3]}, masked);
        scf::YieldOp::create(
            nb, loc,
            ValueRange{next.rowMax, next.rowSum, next.accT, next.pScratch});
      });
  state = State{loop.getResult(0), loop.getResult(1), loop.getResult(2),
                loop.getResult(3)};
}

Value OnlineSoftmaxEmitter::emit(OpBuilder &b) {
  int64_t seq = rank - 2;
  auto dimOf = [&](Value v, int64_t d) -> Value {
    return getValueOrCreateConstantIndexOp(b, loc,
                                           tensor::getMixedSize(b, loc, v, d));
  };
  lq = dimOf(op.getQuery(), seq);
  lk = dimOf(op.getKey(), seq);
  rowsInBounds = op.getQuerySeqLen() == R;
  Value zero = cst(b, 0);

  // q^T once per tile, a column of q per step (a single [D, R] transposed
  // read would unroll into D * R scalar loads), with scale and log2(e)
  // folded into one multiply.
  Value query = op.getQuery();
  Type qElt = op.getQueryType().getElementType();
  Value qScale = splat(b, vec(b, {R}), op.getScaleValue() * cpu::kLog2E);
  auto transpose = scf::ForOp::create(
      b, loc, zero, cst(b, D), cst(b, 1),
      ValueRange{
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{D, R}, f32(b))},
      [&](OpBuilder &nb, Location, Value d, ValueRange args) {
        Value column = vector::TransferReadOp::create(
            nb, loc, vec(nb, {R}, qElt), query, indices(nb, Value(), d),
            padding(nb, query), pick(nb, {seqDim(nb)}),
            ArrayRef<bool>{rowsInBounds});
        column = arith::MulFOp::create(nb, loc, toF32(nb, column), qScale);
        Value row = vector::TransferWriteOp::create(nb, loc, column, args[0],
                                                    ValueRange{d, cst(nb, 0)},
                                                    ArrayRef<bool>{true})
                        .getResult();
        scf::YieldOp::create(nb, loc, row);
      });
  qT = transpose.getResult(0);

  cpu::KeyRange range = cpu::computeKeyRange(b, op, R, C, lq, lk);
  rowLimits = range.rowLimits;

  double inf = std::numeric_limits<double>::infinity();
  Value accT = forEachColumnBlock(
      b, tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{E, R}, f32(b)),
      [&](OpBuilder &nb, Value accT, Value e0, int64_t n) {
        return vector::TransferWriteOp::create(
                   nb, loc, splat(nb, vec(nb, {n, R}), 0.0), accT,
                   ValueRange{e0, zero}, ArrayRef<bool>{true, true})
            .getResult();
      });
  State state{splat(b, vec(b, {R}), -inf), splat(b, vec(b, {R}), 0.0), accT,
              tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{C, R}, f32(b))};
  emitLoop(b, zero, range.fullEnd, state, /*masked=*/false);
  emitLoop(b, range.fullEnd, range.end, state, /*masked=*/true);

  // out = acc / l once per row; rows that saw no key (l == 0) are 0.
  Value zeroR = splat(b, vec(b, {R}), 0.0);
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         state.rowSum, zeroR);
  Value inverse = arith::SelectOp::create(
      b, loc, positive,
      arith::DivFOp::create(b, loc, splat(b, vec(b, {R}), 1.0), state.rowSum),
      zeroR);
  // A block of columns at a time: oT[e0 : e0 + n, :] * inverse, transposed
  // to rows.
  Type elt = op.getInitType().getElementType();
  return forEachColumnBlock(
      b, op.getInit(), [&](OpBuilder &nb, Value init, Value e0, int64_t n) {
        Value o = readScratch(nb, state.accT, ValueRange{e0, zero}, {n, R});
        o = arith::MulFOp::create(
            nb, loc, o,
            vector::BroadcastOp::create(nb, loc, vec(nb, {n, R}), inverse));
        Value out =
            vector::TransposeOp::create(nb, loc, o, ArrayRef<int64_t>{1, 0});
        if (!elt.isF32())
          out = arith::TruncFOp::create(nb, loc, vec(nb, {R, n}, elt), out);
        return vector::TransferWriteOp::create(
                   nb, loc, out, init, indices(nb, Value(), e0),
                   ArrayRef<bool>{rowsInBounds, true})
            .getResult();
      });
}

/// The keys-major kernel of tile `op`, which has at most `maxRows` rows.
static Value emitKeysMajorKernel(OpBuilder &b, AttentionOp op, int64_t maxRows,
                                 int64_t kvTile) {
  int64_t lq = op.getQuerySeqLen();
  int64_t rows = ShapedType::isDynamic(lq) ? maxRows : lq;
  // Vectors of a power-of-two number of rows: LLVM builds vectors of other
  // lengths (48 f32) element by element in the inner loops, 10x slower. The
  // extra rows read q as 0 and are not written.
  return OnlineSoftmaxEmitter(op, llvm::PowerOf2Ceil(rows), kvTile).emit(b);
}

/// The row-major kernel of `count` rows on rows [row0, row0 + count) of tile
/// `op`, written into those rows of `out` (the tile's output so far).
static Value emitRowMajorKernelOnRows(RewriterBase &rewriter, AttentionOp op,
                                      Value out, Value row0, int64_t count,
                                      int64_t kvTile) {
  Location loc = op.getLoc();
  int64_t rank = op.getRank();
  IRMapping mapping;
  mapping.map(op.getInit(), out);
  auto withOut = cast<AttentionOp>(rewriter.clone(*op, mapping));
  // The op's own tiling: it slices the mask and bias rows where they do not
  // broadcast, and moves the causal diagonal by row0.
  SmallVector<OpFoldResult> offsets(rank - 2, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes(rank - 2, rewriter.getIndexAttr(1));
  offsets.push_back(row0);
  sizes.push_back(rewriter.getIndexAttr(count));
  FailureOr<TilingResult> tiled =
      withOut.getTiledImplementation(rewriter, offsets, sizes);
  // A tile's batch and head dims are 1 and its row slice has static sizes.
  assert(succeeded(tiled) && "a row slice of a tile is always a tile");
  auto slice = cast<AttentionOp>(tiled->tiledOps.front());
  Value result = cpu::emitRowMajorKernel(rewriter, slice, kvTile);
  SmallVector<OpFoldResult> outOffsets, outSizes;
  if (failed(withOut.getResultTilePosition(rewriter, 0, offsets, sizes,
                                           outOffsets, outSizes)))
    llvm_unreachable("attn.attention places every result tile");
  rewriter.eraseOp(slice);
  rewriter.eraseOp(withOut);
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  return tensor::InsertSliceOp::create(rewriter, loc, result, out, outOffsets,
                                       outSizes, strides);
}

/// `cases` largest first.
static SmallVector<int64_t> largestFirst(ArrayRef<int64_t> cases) {
  SmallVector<int64_t> sorted(cases);
  llvm::sort(sorted, std::greater<int64_t>());
  return sorted;
}

Value mlir::attn::emitIsGreedySumOfRowCases(OpBuilder &b, Location loc,
                                            Value rows,
                                            ArrayRef<int64_t> cases) {
  assert(!cases.empty() && "no row cases");
  if (rowCasesCoverEveryCount(cases))
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  Value rest = rows;
  for (int64_t count : largestFirst(cases))
    rest = arith::RemUIOp::create(
        b, loc, rest, arith::ConstantIndexOp::create(b, loc, count));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest,
                               arith::ConstantIndexOp::create(b, loc, 0));
}

Value mlir::attn::emitHasRowMajorKernels(OpBuilder &b, Location loc, Value rows,
                                         ArrayRef<int64_t> cases,
                                         int64_t maxRows) {
  if (cases.empty())
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  assert(llvm::all_of(cases, [&](int64_t n) { return n <= maxRows; }) &&
         "a case past the row limit");
  Value few =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rows,
                            arith::ConstantIndexOp::create(b, loc, maxRows));
  if (rowCasesCoverEveryCount(cases))
    return few;
  return arith::AndIOp::create(b, loc, few,
                               emitIsGreedySumOfRowCases(b, loc, rows, cases));
}

/// Tile `op`, whose rows are known only at run time: where their count is
/// at most `caseRows` and a sum of `rowCases` (not empty) taken greedily,
/// largest first (any such count, with a case of 1 row), the row-major
/// kernel of each case on consecutive slices of the rows; for any other
/// count, the keys-major kernel for up to `maxRows` rows. A count that is a
/// case takes its one kernel; 7 rows with the default cases take those of
/// 4, 2 and 1 rows, and 24 rows that of 8 rows three times: each reads K
/// and V again, but with few rows, the row-major kernel is still the
/// faster (docs/performance.md). With `onlyRowCases`, the count is always
/// one of `rowCases`.
static Value emitRowCountCases(RewriterBase &rewriter, AttentionOp op,
                               ArrayRef<int64_t> rowCases, int64_t caseRows,
                               int64_t maxRows, int64_t kvTile,
                               bool onlyRowCases) {
  Location loc = op.getLoc();
  Value rows =
      tensor::DimOp::create(rewriter, loc, op.getQuery(), op.getRank() - 2);
  auto emitSlices = [&]() {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value out = op.getInit(), row0 = zero, rest = rows;
    for (int64_t count : largestFirst(rowCases)) {
      // rest / count slices of `count` rows, then rest % count are left.
      Value size = arith::ConstantIndexOp::create(rewriter, loc, count);
      Value slices = arith::DivUIOp::create(rewriter, loc, rest, size);
      auto loop = scf::ForOp::create(
          rewriter, loc, zero, slices, one, ValueRange{out},
          [&](OpBuilder &, Location, Value i, ValueRange args) {
            Value first = arith::AddIOp::create(
                rewriter, loc, row0,
                arith::MulIOp::create(rewriter, loc, i, size));
            scf::YieldOp::create(rewriter, loc,
                                 emitRowMajorKernelOnRows(rewriter, op, args[0],
                                                          first, count,
                                                          kvTile));
          });
      out = loop.getResult(0);
      Value done = arith::MulIOp::create(rewriter, loc, slices, size);
      row0 = arith::AddIOp::create(rewriter, loc, row0, done);
      rest = arith::SubIOp::create(rewriter, loc, rest, done);
    }
    return out;
  };
  // With a case of 1 row and cases up to the tile's rows, or where the count
  // is always a case, every count has them: no keys-major kernel.
  if (onlyRowCases ||
      (rowCasesCoverEveryCount(rowCases) && caseRows >= maxRows))
    return emitSlices();
  auto branch = scf::IfOp::create(
      rewriter, loc, op.getInitType(),
      emitHasRowMajorKernels(rewriter, loc, rows, rowCases, caseRows),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(branch.thenBlock());
  scf::YieldOp::create(rewriter, loc, emitSlices());
  rewriter.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(rewriter, loc,
                       emitKeysMajorKernel(rewriter, op, maxRows, kvTile));
  return branch.getResult(0);
}

SmallVector<int64_t>
mlir::attn::getRowMajorRowCases(ArrayRef<int64_t> dynamicRowCases,
                                int64_t rowMajorRows, int64_t maxRows) {
  SmallVector<int64_t> cases;
  for (int64_t count : dynamicRowCases)
    if (count > 0 && count <= std::min(rowMajorRows, maxRows) &&
        !llvm::is_contained(cases, count))
      cases.push_back(count);
  return cases;
}

LogicalResult mlir::attn::lowerAttentionTileToOnlineSoftmax(
    RewriterBase &rewriter, AttentionOp op, int64_t maxRows, int64_t kvTile,
    int64_t rowMajorRows, ArrayRef<int64_t> rowCases, bool onlyRowCases) {
  if (!op.hasPureTensorSemantics())
    return rewriter.notifyMatchFailure(op, "not on tensors");
  int64_t rank = op.getRank();
  for (ShapedType type : {op.getQueryType(), op.getKeyType(), op.getValueType(),
                          op.getInitType()})
    for (int64_t d = 0; d < rank - 2; ++d)
      if (type.getDimSize(d) != 1)
        return rewriter.notifyMatchFailure(
            op, "not a tile: batch and head dims must be 1");
  if (ShapedType::isDynamic(op.getQKHeadDim()) ||
      ShapedType::isDynamic(op.getVHeadDim()))
    return rewriter.notifyMatchFailure(op, "head dims must be static");
  if (Value mask = op.getMask())
    if (cast<ShapedType>(mask.getType()).getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(
          op, "boolean masks must be made additive first (vector loads of "
              "i1 do not match the byte-per-element memref layout)");
  int64_t lq = op.getQuerySeqLen();
  if (!ShapedType::isDynamic(lq) && lq > maxRows)
    return rewriter.notifyMatchFailure(op, "more query rows than the tile");
  int64_t rows = ShapedType::isDynamic(lq) ? maxRows : lq;
  if (rows == 0 || kvTile <= 0)
    return rewriter.notifyMatchFailure(op, "empty tile");
  bool rowMajor = op.getQKHeadDim() > 0 && op.getVHeadDim() > 0;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  // The run-time row counts that get a row-major kernel of their own.
  SmallVector<int64_t> cases;
  if (ShapedType::isDynamic(lq) && rowMajor)
    cases = getRowMajorRowCases(rowCases, rowMajorRows, maxRows);
  Value result;
  if (!ShapedType::isDynamic(lq) && lq <= rowMajorRows && rowMajor)
    result = cpu::emitRowMajorKernel(rewriter, op, kvTile);
  else if (!cases.empty())
    result = emitRowCountCases(
        rewriter, op, cases, std::min(rowMajorRows, maxRows), maxRows, kvTile,
        onlyRowCases && llvm::all_of(rowCases, [&](int64_t count) {
          return llvm::is_contained(cases, count);
        }));
  else
    result = emitKeysMajorKernel(rewriter, op, maxRows, kvTile);
  rewriter.replaceOp(op, result);
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct AttnTilePass : attn::impl::AttnTileBase<AttnTilePass> {
  using Base::Base;

  void runOnOperation() override {
    if (qTile <= 0 || kvTile <= 0 || rowMajorRows < 0 ||
        llvm::any_of(dynamicRowCases, [](int64_t n) { return n <= 0; })) {
      getOperation()->emitError("attn-tile: q-tile, kv-tile and the "
                                "dynamic-row-cases must be > 0, and "
                                "row-major-rows >= 0");
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      // Dynamic head dims are left for the decomposition.
      if (!ShapedType::isDynamic(op.getQKHeadDim()) &&
          !ShapedType::isDynamic(op.getVHeadDim()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      // On memrefs: the same op on tensor views of the buffers.
      if (!op.hasPureTensorSemantics()) {
        FailureOr<AttentionOp> onTensors =
            convertAttentionToTensors(rewriter, op);
        if (failed(onTensors))
          continue;
        op = *onTensors;
      }
      if (onlineSoftmax)
        convertBoolMaskToAdditive(rewriter, op);
      // The row counts of tiles whose rows are known only at run time: with
      // a static Lq, only a full tile's and the last tile's remainder, each
      // then a kernel of its own, as if static.
      SmallVector<int64_t> rowCases(dynamicRowCases.begin(),
                                    dynamicRowCases.end());
      int64_t lq = op.getQuerySeqLen();
      bool staticLq = !ShapedType::isDynamic(lq);
      if (staticLq) {
        rowCases.clear();
        if (lq > qTile && lq % qTile != 0)
          rowCases.assign({qTile, lq % qTile});
      }
      FailureOr<SmallVector<AttentionOp>> tiles =
          tileAttentionOverRows(rewriter, op, qTile);
      if (failed(tiles)) {
        op.emitError("attn-tile: failed to tile");
        return signalPassFailure();
      }
      if (!onlineSoftmax)
        continue;
      for (AttentionOp tile : *tiles)
        if (failed(lowerAttentionTileToOnlineSoftmax(
                rewriter, tile, qTile, kvTile, rowMajorRows, rowCases,
                /*onlyRowCases=*/staticLq))) {
          tile.emitError("attn-tile: failed to lower a tile to the "
                         "online-softmax loop");
          return signalPassFailure();
        }
    }
  }
};
} // namespace
