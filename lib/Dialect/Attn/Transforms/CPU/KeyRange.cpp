//===- KeyRange.cpp - the keys a CPU tile's rows see ----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "KeyRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

Value cpu::iotaI32(OpBuilder &b, Location loc, int64_t n, Value start) {
  Type i32 = b.getI32Type();
  auto type = VectorType::get({n}, i32);
  Value steps = arith::IndexCastOp::create(
      b, loc, type,
      vector::StepOp::create(b, loc, VectorType::get({n}, b.getIndexType())));
  Value first = vector::BroadcastOp::create(
      b, loc, type, arith::IndexCastOp::create(b, loc, i32, start));
  return arith::AddIOp::create(b, loc, steps, first);
}

cpu::KeyRange cpu::computeKeyRange(OpBuilder &b, AttentionOp op, int64_t rows,
                                   int64_t kvTile, Value lq, Value lk) {
  Location loc = op.getLoc();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = cst(0);
  auto clamp = [&](Value x, Value hi) -> Value {
    return arith::MinSIOp::create(b, loc,
                                  arith::MaxSIOp::create(b, loc, x, zero), hi);
  };
  KeyRange range{Value(), lk, lk};
  Value fullLimit = lk;
  Value period = op.getCausalPeriod();
  std::optional<CausalAlignment> causal = op.getCausal();
  if (causal && !period) {
    Value diagonal = *causal == CausalAlignment::BottomRight
                         ? arith::SubIOp::create(b, loc, lk, lq).getResult()
                         : (op.getCausalOffset() ? op.getCausalOffset() : zero);
    range.rowLimits = iotaI32(b, loc, rows, diagonal);
    // The last row sees keys up to lq - 1 + diagonal: later blocks are
    // skipped. The first row sees keys up to diagonal: earlier blocks are
    // visible to every row and need no causal mask.
    range.end = clamp(arith::AddIOp::create(b, loc, lq, diagonal), lk);
    fullLimit = clamp(arith::AddIOp::create(b, loc, diagonal, cst(1)), lk);
  } else if (causal) {
    // Row i is query (i + offset) mod P. The tile's rows run from query
    // `first` up, and wrap to query 0 after P - 1 if there are enough.
    Value diagonal = *causal == CausalAlignment::BottomRight
                         ? arith::SubIOp::create(b, loc, lk, period).getResult()
                         : zero;
    Value offset = op.getCausalOffset() ? op.getCausalOffset() : zero;
    Type i32Vec = VectorType::get({rows}, b.getI32Type());
    auto splat = [&](Value v) -> Value {
      return vector::BroadcastOp::create(
          b, loc, i32Vec,
          arith::IndexCastOp::create(b, loc, b.getI32Type(), v));
    };
    range.rowLimits = arith::AddIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, iotaI32(b, loc, rows, offset),
                               splat(period)),
        splat(diagonal));
    Value first = arith::RemUIOp::create(b, loc, offset, period);
    Value last = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, lq), cst(1));
    Value wraps =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, last, period);
    Value maxQuery = arith::SelectOp::create(
        b, loc, wraps, arith::SubIOp::create(b, loc, period, cst(1)), last);
    Value minQuery = arith::SelectOp::create(b, loc, wraps, zero, first);
    // The end of the keys that query `query` sees.
    auto keysThrough = [&](Value query) {
      return clamp(
          arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, query, diagonal), cst(1)),
          lk);
    };
    range.end = keysThrough(maxQuery);
    fullLimit = keysThrough(minQuery);
  }
  range.fullEnd = arith::MulIOp::create(
      b, loc, arith::DivSIOp::create(b, loc, fullLimit, cst(kvTile)),
      cst(kvTile));
  return range;
}
