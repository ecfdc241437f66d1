//===- RowMajorKernel.cpp - online softmax for tiles of few rows ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The keys-major kernel runs its vectors along a tile's query rows, so a
// tile of one row (decoding) uses one lane of each. This kernel runs them
// along the head dims instead, 16 f32 lanes, and takes the rows one by one:
//
//   scores: for 16 keys at once, a [16 keys, 16 lanes] block of partial sums
//     of q[d] k[j, d] over the head dim in chunks of 16, which a tree of
//     shuffles then sums into one lane per key;
//   softmax: on each row's [C] scores, with horizontal max and sum;
//   output: a block of output columns of a group of at most 16 rows stays
//     in registers over the block's keys; each V row is loaded once per
//     group, and each p[i, j] is one broadcast load.
//
// The tile's K and V blocks come from memory once; the rows re-read them
// from the L1 cache.
//
//===----------------------------------------------------------------------===//

#include "RowMajorKernel.h"
#include "KeyRange.h"
#include "ScoreTerms.h"
#include "TileEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// f32 lanes per vector (one AVX-512 register).
constexpr int64_t kLanes = 16;
/// f32 values per register block of the output (8 AVX-512 registers).
constexpr int64_t kOutputBlock = 128;
/// Most rows whose output blocks stay in registers at once. A tile with
/// more rows (packed GQA rows) takes them in equal groups, each re-reading
/// the block's V rows from L1: 32 rows' accumulators and V would spill the
/// 32 AVX-512 registers.
constexpr int64_t kMaxGroupRows = 16;

/// The rows per group when a tile's `rows` rows are split into the fewest
/// groups of at most kMaxGroupRows, as equal as possible.
static int64_t getGroupRows(int64_t rows) {
  return llvm::divideCeil(rows, llvm::divideCeil(rows, kMaxGroupRows));
}

/// Emits the online-softmax loop of one tile, R rows (names as in
/// TileAttention.cpp: C keys per block, D = Dqk, E = Dv).
class RowMajorEmitter : cpu::TileEmitter {
public:
  RowMajorEmitter(AttentionOp op, int64_t kvTile)
      : TileEmitter(op), R(op.getQuerySeqLen()), C(kvTile),
        D(op.getQKHeadDim()), E(op.getVHeadDim()), groupRows(getGroupRows(R)),
        columns(std::clamp<int64_t>(kOutputBlock / groupRows / kLanes, 1, 8) *
                kLanes) {}

  Value emit(OpBuilder &b);

private:
  /// Carried across key blocks: each row's running max and sum (f32), the
  /// accumulator [R, E'] and the scratch [R, C'] of the block's scores and
  /// then its p (E', C': padded to whole vectors).
  struct State {
    SmallVector<Value> rowMax, rowSum;
    Value acc, scratch;
  };

  Value scalar(OpBuilder &b, double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value broadcast(OpBuilder &b, Value x, int64_t n) {
    return vector::BroadcastOp::create(b, loc, vec(b, {n}), x);
  }
  /// A [n] vector of a row of operand `source`, from column `col` on, as
  /// f32.
  Value readRow(OpBuilder &b, Value source, Value row, Value col, int64_t n,
                bool inBounds) {
    Type elt = cast<ShapedType>(source.getType()).getElementType();
    return toF32(b, vector::TransferReadOp::create(
                        b, loc, vec(b, {n}, elt), source, indices(b, row, col),
                        padding(b, source), pick(b, {featureDim(b)}),
                        ArrayRef<bool>{inBounds}));
  }
  /// An in-bounds [n] read of the f32 scratch `tile` at (row, col).
  Value readScratch(OpBuilder &b, Value tile, Value row, Value col, int64_t n) {
    return vector::TransferReadOp::create(b, loc, vec(b, {n}), tile,
                                          ValueRange{row, col}, scalar(b, 0.0),
                                          ArrayRef<bool>{true});
  }
  /// An in-bounds write of `v` [n] to the f32 scratch `tile` at (row, col),
  /// as a [1, n] vector. One-shot bufferization matches a transfer_write's
  /// vector dims to the tensor's from the front, so it took a rank-1 write
  /// at (0, 0) for an overwrite of the whole tile that reads nothing: where
  /// CSE had merged two ops' scratch, the second then read rows the first
  /// had overwritten in place.
  Value writeScratch(OpBuilder &b, Value v, Value tile, Value row, Value col) {
    auto type = cast<VectorType>(v.getType());
    Value row2d = vector::ShapeCastOp::create(
        b, loc, vec(b, {1, type.getDimSize(0)}, type.getElementType()), v);
    return vector::TransferWriteOp::create(b, loc, row2d, tile,
                                           ValueRange{row, col},
                                           ArrayRef<bool>{true, true})
        .getResult();
  }
  /// Threads `init` through scf.for lb .. ub step `step`.
  Value loop(OpBuilder &b, Value lb, Value ub, int64_t step, Value init,
             function_ref<Value(OpBuilder &, Value, Value)> body) {
    return scf::ForOp::create(
               b, loc, lb, ub, cst(b, step), ValueRange{init},
               [&](OpBuilder &nb, Location, Value i, ValueRange args) {
                 scf::YieldOp::create(nb, loc, body(nb, i, args[0]));
               })
        .getResult(0);
  }
  /// Threads `init` through body(builder, value, col, n, inBounds) for the
  /// blocks of n <= `block` columns (n a multiple of kLanes) that cover
  /// `size` columns: a loop over the whole blocks, then the rest, whose
  /// columns past `size` are out of bounds.
  Value forEachBlock(
      OpBuilder &b, int64_t size, int64_t block, Value init,
      function_ref<Value(OpBuilder &, Value, Value, int64_t, bool)> body) {
    int64_t whole = size / block * block;
    if (whole > 0)
      init = loop(b, cst(b, 0), cst(b, whole), block, init,
                  [&](OpBuilder &nb, Value col, Value v) {
                    return body(nb, v, col, block, true);
                  });
    if (whole < size)
      init = body(b, init, cst(b, whole), llvm::alignTo(size - whole, kLanes),
                  false);
    return init;
  }

  Value sumLanesPerKey(OpBuilder &b, Value partials);
  Value horizontalMax(OpBuilder &b, Value v);
  Value scores(OpBuilder &b, Value j0, bool masked, Value scratch);
  Value maskedScores(OpBuilder &b, int64_t row, Value s, Value j0, bool masked);
  State step(OpBuilder &b, Value j0, const State &state, bool masked);
  void emitLoop(OpBuilder &b, Value lb, Value ub, State &state, bool masked);

  int64_t R, C, D, E;
  /// Rows per group of the output's register blocks (at most 16).
  int64_t groupRows;
  /// Output columns per register block: 128 f32 for a group's rows.
  int64_t columns;
  Value q;         // scratch [R, D'] f32: q * scale * log2(e), 0-padded
  Value lk;        // index
  Value rowLimits; // causal: row i's last visible key (i32 [R])
};
} // namespace

/// [16 keys, 16 lanes] -> [16 keys]: each key's lanes summed. Each level
/// adds the lower and upper halves of the lane groups of two vectors, which
/// halves the lanes per key and doubles the keys per vector (keys in order).
Value RowMajorEmitter::sumLanesPerKey(OpBuilder &b, Value partials) {
  SmallVector<Value> level;
  for (int64_t k = 0; k < kLanes; ++k)
    level.push_back(vector::ExtractOp::create(b, loc, partials, k));
  for (int64_t group = kLanes; group > 1; group /= 2) {
    SmallVector<int64_t> lower, upper;
    for (int64_t from : {int64_t(0), kLanes}) // x's lanes, then y's
      for (int64_t g = 0; g < kLanes; g += group)
        for (int64_t l = 0; l < group / 2; ++l) {
          lower.push_back(from + g + l);
          upper.push_back(from + g + group / 2 + l);
        }
    SmallVector<Value> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      Value x = level[i], y = level[i + 1];
      next.push_back(arith::AddFOp::create(
          b, loc, vector::ShuffleOp::create(b, loc, x, y, lower),
          vector::ShuffleOp::create(b, loc, x, y, upper)));
    }
    level = std::move(next);
  }
  return level.front();
}

/// max over the lanes of `v` (NaN if any is): halves, then lanes.
Value RowMajorEmitter::horizontalMax(OpBuilder &b, Value v) {
  int64_t n = cast<VectorType>(v.getType()).getDimSize(0);
  int64_t padded = llvm::PowerOf2Ceil(n);
  if (padded != n)
    v = vector::InsertStridedSliceOp::create(
        b, loc, v,
        splat(b, vec(b, {padded}), -std::numeric_limits<double>::infinity()),
        ArrayRef<int64_t>{0}, ArrayRef<int64_t>{1});
  for (; padded > 1; padded /= 2) {
    auto half = [&](int64_t offset) {
      return vector::ExtractStridedSliceOp::create(
          b, loc, v, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{padded / 2},
          ArrayRef<int64_t>{1});
    };
    v = arith::MaximumFOp::create(b, loc, half(0), half(padded / 2));
  }
  return vector::ExtractOp::create(b, loc, v, 0);
}

/// The block's scores s[i, j] = q[i, :] . k[j0 + j, :] (base 2, scaled),
/// written to scratch[i, 0 : C'].
Value RowMajorEmitter::scores(OpBuilder &b, Value j0, bool masked,
                              Value scratch) {
  Value key = op.getKey();
  Type kElt = cast<ShapedType>(key.getType()).getElementType();
  // Key rows past the block (C not a multiple of 16) or past the keys
  // (masked blocks) read as 0.
  bool keysInBounds = !masked && C % kLanes == 0;
  int64_t wholeD = D / kLanes * kLanes;
  auto accumulate = [&](OpBuilder &nb, Value first, Value row, Value d0,
                        bool inBounds, Value acc) -> Value {
    Value k = toF32(nb, vector::TransferReadOp::create(
                            nb, loc, vec(nb, {kLanes, kLanes}, kElt), key,
                            indices(nb, first, d0), padding(nb, key),
                            pick(nb, {seqDim(nb), featureDim(nb)}),
                            ArrayRef<bool>{keysInBounds, inBounds}));
    Value qd = vector::BroadcastOp::create(nb, loc, vec(nb, {kLanes, kLanes}),
                                           readScratch(nb, q, row, d0, kLanes));
    return vector::FMAOp::create(nb, loc, k, qd, acc);
  };
  return loop(
      b, cst(b, 0), cst(b, R), 1, scratch,
      [&](OpBuilder &rb, Value row, Value scratch) {
        return loop(
            rb, cst(rb, 0), cst(rb, C), kLanes, scratch,
            [&](OpBuilder &gb, Value g0, Value scratch) {
              Value first = add(gb, j0, g0);
              Value acc = splat(gb, vec(gb, {kLanes, kLanes}), 0.0);
              if (wholeD > 0)
                acc = loop(gb, cst(gb, 0), cst(gb, wholeD), kLanes, acc,
                           [&](OpBuilder &db, Value d0, Value acc) {
                             return accumulate(db, first, row, d0, true, acc);
                           });
              if (wholeD < D)
                acc = accumulate(gb, first, row, cst(gb, wholeD), false, acc);
              return writeScratch(gb, sumLanesPerKey(gb, acc), scratch, row,
                                  g0);
            });
      });
}

/// Row `row`'s scores `s` [C] plus bias and mask (times log2(e)), -inf
/// where a key is past the end or causally hidden (masked blocks).
Value RowMajorEmitter::maskedScores(OpBuilder &b, int64_t row, Value s,
                                    Value j0, bool masked) {
  s = cpu::addScoreTerms(b, loc, op, s, [&](Value operand) -> Value {
    auto type = cast<ShapedType>(operand.getType());
    Value r = cst(b, type.getDimSize(rank - 2) == 1 ? 0 : row);
    if (type.getDimSize(rank - 1) != 1)
      return readRow(b, operand, r, j0, C, !masked);
    // One value for the whole row: a scalar and a splat (an all-broadcast
    // transfer_read would be a 0-d transfer).
    Value v =
        tensor::ExtractOp::create(b, loc, operand, indices(b, r, cst(b, 0)));
    if (!v.getType().isF32())
      v = arith::ExtFOp::create(b, loc, f32(b), v);
    return broadcast(b, v, C);
  });
  if (!masked)
    return s;
  Type i32 = b.getI32Type();
  Value keys = cpu::iotaI32(b, loc, C, j0);
  auto splatI32 = [&](Value v) -> Value {
    return vector::BroadcastOp::create(b, loc, vec(b, {C}, i32), v);
  };
  Value visible = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt, keys,
      splatI32(arith::IndexCastOp::create(b, loc, i32, lk)));
  if (rowLimits) {
    Value limit = vector::ExtractOp::create(b, loc, rowLimits, row);
    visible = arith::AndIOp::create(
        b, loc, visible,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, keys,
                              splatI32(limit)));
  }
  return arith::SelectOp::create(
      b, loc, visible, s,
      splat(b, vec(b, {C}), -std::numeric_limits<double>::infinity()));
}

/// One key block of the online softmax.
RowMajorEmitter::State RowMajorEmitter::step(OpBuilder &b, Value j0,
                                             const State &state, bool masked) {
  double inf = std::numeric_limits<double>::infinity();
  Value zero = cst(b, 0);
  Value scratch = scores(b, j0, masked, state.scratch);
  State next{{}, {}, state.acc, Value()};
  SmallVector<Value> alpha;
  for (int64_t i = 0; i < R; ++i) {
    Value row = cst(b, i);
    Value s =
        maskedScores(b, i, readScratch(b, scratch, row, zero, C), j0, masked);
    Value newMax =
        arith::MaximumFOp::create(b, loc, state.rowMax[i], horizontalMax(b, s));
    // A row with no visible key so far has max -inf: subtract 0 instead, so
    // exp2(-inf - 0) = 0 rather than exp2(-inf - -inf) = NaN.
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        newMax, scalar(b, -inf));
    Value safeMax =
        arith::SelectOp::create(b, loc, empty, scalar(b, 0.0), newMax);
    Value p = math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, s, broadcast(b, safeMax, C)));
    alpha.push_back(math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, state.rowMax[i], safeMax)));
    Value blockSum = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, p, arith::FastMathFlags::reassoc);
    next.rowMax.push_back(newMax);
    next.rowSum.push_back(arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, state.rowSum[i], alpha.back()),
        blockSum));
    scratch = writeScratch(b, p, scratch, row, zero);
  }
  next.scratch = scratch;

  // acc[i, :] = acc[i, :] * alpha[i] + sum_j p[i, j] v[j0 + j, :], over the
  // keys of the block that exist, a block of columns of a group of rows at
  // a time.
  Value keysHere = cst(b, C);
  if (masked)
    keysHere = arith::MinSIOp::create(b, loc, keysHere,
                                      arith::SubIOp::create(b, loc, lk, j0));
  Value value = op.getValue();
  next.acc = state.acc;
  for (int64_t first = 0; first < R; first += groupRows) {
    int64_t last = std::min(first + groupRows, R);
    next.acc = forEachBlock(
        b, E, columns, next.acc,
        [&](OpBuilder &nb, Value acc, Value e0, int64_t n, bool inBounds) {
          SmallVector<Value> o;
          for (int64_t i = first; i < last; ++i)
            o.push_back(arith::MulFOp::create(
                nb, loc, readScratch(nb, acc, cst(nb, i), e0, n),
                broadcast(nb, alpha[i], n)));
          auto products = scf::ForOp::create(
              nb, loc, zero, keysHere, cst(nb, 1), o,
              [&](OpBuilder &lb, Location, Value j, ValueRange args) {
                Value v = readRow(lb, value, add(lb, j0, j), e0, n, inBounds);
                SmallVector<Value> sums;
                for (int64_t i = first; i < last; ++i) {
                  Value pij = tensor::ExtractOp::create(
                      lb, loc, scratch, ValueRange{cst(lb, i), j});
                  sums.push_back(vector::FMAOp::create(
                      lb, loc, broadcast(lb, pij, n), v, args[i - first]));
                }
                scf::YieldOp::create(lb, loc, sums);
              });
          for (int64_t i = first; i < last; ++i)
            acc = writeScratch(nb, products.getResult(i - first), acc,
                               cst(nb, i), e0);
          return acc;
        });
  }
  return next;
}

void RowMajorEmitter::emitLoop(OpBuilder &b, Value lb, Value ub, State &state,
                               bool masked) {
  SmallVector<Value> init(state.rowMax);
  llvm::append_range(init, state.rowSum);
  init.push_back(state.acc);
  init.push_back(state.scratch);
  auto unpack = [&](ValueRange values) {
    return State{SmallVector<Value>(values.take_front(R)),
                 SmallVector<Value>(values.slice(R, R)), values[2 * R],
                 values[2 * R + 1]};
  };
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, cst(b, C), init,
      [&](OpBuilder &nb, Location, Value j0, ValueRange args) {
        State next = step(nb, j0, unpack(args), masked);
        SmallVector<Value> results(next.rowMax);
        llvm::append_range(results, next.rowSum);
        results.push_back(next.acc);
        results.push_back(next.scratch);
        scf::YieldOp::create(nb, loc, results);
      });
  state = unpack(loop.getResults());
}

Value RowMajorEmitter::emit(OpBuilder &b) {
  int64_t seq = rank - 2;
  Value lq = cst(b, R);
  lk = getValueOrCreateConstantIndexOp(
      b, loc, tensor::getMixedSize(b, loc, op.getKey(), seq));
  Value zero = cst(b, 0);
  int64_t paddedD = llvm::alignTo(D, kLanes);
  int64_t paddedE = llvm::alignTo(E, kLanes);
  int64_t paddedC = llvm::alignTo(C, kLanes);

  // q with scale and log2(e) folded into one multiply; 0 past D.
  Value scale = splat(b, vec(b, {kLanes}), op.getScaleValue() * cpu::kLog2E);
  q = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R, paddedD}, f32(b));
  for (int64_t i = 0; i < R; ++i)
    q = loop(b, zero, cst(b, paddedD), kLanes, q,
             [&](OpBuilder &nb, Value d0, Value q) {
               Value x = readRow(nb, op.getQuery(), cst(nb, i), d0, kLanes,
                                 D % kLanes == 0);
               return writeScratch(nb, arith::MulFOp::create(nb, loc, x, scale),
                                   q, cst(nb, i), d0);
             });

  cpu::KeyRange range = cpu::computeKeyRange(b, op, R, C, lq, lk);
  rowLimits = range.rowLimits;

  Value acc =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R, paddedE}, f32(b));
  for (int64_t i = 0; i < R; ++i)
    acc =
        writeScratch(b, splat(b, vec(b, {paddedE}), 0.0), acc, cst(b, i), zero);
  double inf = std::numeric_limits<double>::infinity();
  State state{
      SmallVector<Value>(R, scalar(b, -inf)),
      SmallVector<Value>(R, scalar(b, 0.0)), acc,
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R, paddedC}, f32(b))};
  emitLoop(b, zero, range.fullEnd, state, /*masked=*/false);
  emitLoop(b, range.fullEnd, range.end, state, /*masked=*/true);

  // out = acc / l once per row; rows that saw no key (l == 0) are 0.
  SmallVector<Value> inverse;
  for (int64_t i = 0; i < R; ++i) {
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           state.rowSum[i], scalar(b, 0.0));
    inverse.push_back(arith::SelectOp::create(
        b, loc, positive,
        arith::DivFOp::create(b, loc, scalar(b, 1.0), state.rowSum[i]),
        scalar(b, 0.0)));
  }
  Type elt = op.getInitType().getElementType();
  return forEachBlock(
      b, E, columns, op.getInit(),
      [&](OpBuilder &nb, Value init, Value e0, int64_t n, bool inBounds) {
        for (int64_t i = 0; i < R; ++i) {
          Value out = arith::MulFOp::create(
              nb, loc, readScratch(nb, state.acc, cst(nb, i), e0, n),
              broadcast(nb, inverse[i], n));
          if (!elt.isF32())
            out = arith::TruncFOp::create(nb, loc, vec(nb, {n}, elt), out);
          init = vector::TransferWriteOp::create(
                     nb, loc, out, init, indices(nb, cst(nb, i), e0),
                     pick(nb, {featureDim(nb)}), ArrayRef<bool>{inBounds})
                     .getResult();
        }
        return init;
      });
}

Value mlir::attn::cpu::emitRowMajorKernel(OpBuilder &b, AttentionOp op,
                                          int64_t kvTile) {
  return RowMajorEmitter(op, kvTile).emit(b);
}
