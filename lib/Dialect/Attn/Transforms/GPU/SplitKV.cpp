//===- SplitKV.cpp - split-KV attention: split count and merge ------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SplitKV.h"
#include "FlashAttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

Value mlir::attn::gpu_kernel::emitSplitCount(OpBuilder &b, Location loc,
                                             Value blocks, Value kvBlocks,
                                             int64_t waveBlocks,
                                             int64_t maxSplits) {
  auto ci = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto cf = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto toF32 = [&](Value index) -> Value {
    Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
    return arith::UIToFPOp::create(b, loc, b.getF32Type(), i64);
  };
  int64_t wave = waveBlocks;
  Value most = arith::MinUIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, kvBlocks, ci(1)),
      ci(std::min(maxSplits, wave)));
  // The fraction of the waves that `splits` keep busy: blocks / (waves x
  // wave size). (Integer ceilings: no libm call in the host code.)
  auto efficiency = [&](Value splits) -> Value {
    Value total = arith::MulIOp::create(b, loc, blocks, splits);
    Value slots = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, total, ci(wave)), ci(wave));
    return arith::DivFOp::create(b, loc, toF32(total), toF32(slots));
  };
  // A split count that leaves the steps per split as one fewer splits does
  // only adds blocks: it is not a candidate, for the best efficiency either.
  auto eligible = [&](Value splits) -> Value {
    Value fewer = arith::MaxUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, splits, ci(1)), ci(1));
    return arith::OrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, splits, ci(1)),
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ne,
            arith::CeilDivUIOp::create(b, loc, kvBlocks, splits),
            arith::CeilDivUIOp::create(b, loc, kvBlocks, fewer)));
  };
  Value end = arith::AddIOp::create(b, loc, most, ci(1));
  auto bestLoop = scf::ForOp::create(b, loc, ci(1), end, ci(1), {cf(0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(bestLoop.getBody());
    Value splits = bestLoop.getInductionVar();
    Value best = bestLoop.getRegionIterArgs()[0];
    Value better = arith::MaximumFOp::create(b, loc, best, efficiency(splits));
    Value kept =
        arith::SelectOp::create(b, loc, eligible(splits), better, best);
    scf::YieldOp::create(b, loc, kept);
  }
  Value good = arith::MulFOp::create(b, loc, bestLoop.getResult(0), cf(0.85));
  // From the most splits down, so the last one chosen is the fewest.
  auto pickLoop = scf::ForOp::create(b, loc, ci(0), most, ci(1), {ci(1)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pickLoop.getBody());
    Value splits =
        arith::SubIOp::create(b, loc, most, pickLoop.getInductionVar());
    Value enough = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         efficiency(splits), good);
    Value take = arith::AndIOp::create(b, loc, eligible(splits), enough);
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::SelectOp::create(b, loc, take, splits,
                                           pickLoop.getRegionIterArgs()[0])
                       .getResult()});
  }
  // A grid that fills most of a wave is not split.
  Value full = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge,
      arith::MulIOp::create(b, loc, blocks, ci(5)), ci(4 * wave));
  return arith::SelectOp::create(b, loc, full, ci(1), pickLoop.getResult(0));
}

Value mlir::attn::gpu_kernel::splitKVPartialRow(OpBuilder &b, Location loc,
                                                Value split, Value batch,
                                                Value head, Value batches,
                                                Value heads) {
  Value splitBatch = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, split, batches), batch);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, splitBatch, heads), head);
}

Value mlir::attn::gpu_kernel::splitKVMergeBlocks(OpBuilder &b, Location loc,
                                                 Value out) {
  auto type = cast<MemRefType>(out.getType());
  int64_t rank = type.getRank();
  auto ci = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lq = memref::DimOp::create(b, loc, out, rank - 2);
  Value pairs =
      arith::MulIOp::create(b, loc, lq, ci(type.getDimSize(rank - 1) / 2));
  return arith::CeilDivUIOp::create(b, loc, pairs, ci(kMergeThreads));
}

void mlir::attn::gpu_kernel::emitSplitKVMergeBlock(
    SimtTarget &t, const SplitKVMergeOperands &ops) {
  OpBuilder &b = t.builder();
  Location loc = t.getLoc();
  auto outType = cast<MemRefType>(ops.out.getType());
  int64_t rank = outType.getRank(), dv = outType.getDimSize(rank - 1);
  Type f32 = b.getF32Type();
  auto ci = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto pf = [&](double v) -> Value {
    return t.lift(arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)));
  };
  auto pc = [&](int64_t v) { return t.lift(ci(v)); };

  // Uniform: the head, the batch (linear and per dim), the rows.
  Value head = t.blockId(1), batchLinear = t.blockId(2);
  SmallVector<Value> prefix(rank - 3);
  Value batches = ci(1), rest = batchLinear;
  for (int64_t i = rank - 4; i >= 0; --i) {
    Value size = memref::DimOp::create(b, loc, ops.out, i);
    prefix[i] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
    batches = arith::MulIOp::create(b, loc, batches, size);
  }
  prefix.push_back(head);
  Value lq = memref::DimOp::create(b, loc, ops.out, rank - 2);
  Value lastRow = arith::SubIOp::create(b, loc, lq, ci(1));
  Value heads = memref::DimOp::create(b, loc, ops.out, rank - 3);

  // Per thread: one pair of columns of one row.
  Value pair = arith::AddIOp::create(
      b, loc,
      t.lift(arith::MulIOp::create(b, loc, t.blockId(0), ci(kMergeThreads))),
      t.threadId());
  Value row = arith::DivUIOp::create(b, loc, pair, pc(dv / 2));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, pair, pc(dv / 2)), pc(2));
  Value inRows =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, t.lift(lq));
  // (Threads past the last row read the last row and store nothing.)
  Value readRow = arith::MinUIOp::create(b, loc, row, t.lift(lastRow));
  // The partials' row of split s.
  auto partialIndex = [&](Value s) -> Value {
    return t.lift(
        splitKVPartialRow(b, loc, s, batchLinear, head, batches, heads));
  };

  // M = max_s m_s.
  auto maxLoop = scf::ForOp::create(b, loc, ci(0), ops.numSplits, ci(1),
                                    {pf(kHiddenLogit)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    Value p = partialIndex(maxLoop.getInductionVar());
    auto [m, l] = t.loadPair(ops.partialStats, {p, readRow, pc(0)});
    (void)l;
    scf::YieldOp::create(
        b, loc,
        ValueRange{
            arith::MaximumFOp::create(b, loc, maxLoop.getRegionIterArgs()[0], m)
                .getResult()});
  }
  Value rowMax = maxLoop.getResult(0);
  // Sums of the splits' O and l, weighted by 2^(m_s - M): 0 for a split
  // in which the row saw no key (m_s = -1e30, l_s = 0, O_s = 0).
  auto sumLoop = scf::ForOp::create(b, loc, ci(0), ops.numSplits, ci(1),
                                    {pf(0.0), pf(0.0), pf(0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sumLoop.getBody());
    Value p = partialIndex(sumLoop.getInductionVar());
    ValueRange acc = sumLoop.getRegionIterArgs();
    auto [m, l] = t.loadPair(ops.partialStats, {p, readRow, pc(0)});
    auto [o0, o1] = t.loadPair(ops.partialOut, {p, readRow, col});
    Value w = t.exp2(arith::SubFOp::create(b, loc, m, rowMax));
    scf::YieldOp::create(b, loc,
                         ValueRange{t.fma(w, l, acc[0]), t.fma(w, o0, acc[1]),
                                    t.fma(w, o1, acc[2])});
  }
  // A row no split saw a key of writes 0 (its sum is 0).
  Value hidden = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                       rowMax, pf(kHiddenLogit));
  Value inv = arith::SelectOp::create(
      b, loc, hidden, pf(0.0),
      arith::DivFOp::create(b, loc, pf(1.0), sumLoop.getResult(0)));
  Type outElem = outType.getElementType();
  Value result[2];
  for (int e = 0; e < 2; ++e) {
    result[e] = arith::MulFOp::create(b, loc, sumLoop.getResult(1 + e), inv);
    if (outElem != f32)
      result[e] =
          arith::TruncFOp::create(b, loc, t.perThreadType(outElem), result[e]);
  }
  SmallVector<Value> idx;
  for (Value v : prefix)
    idx.push_back(t.lift(v));
  idx.append({row, col});
  t.storePair(result[0], result[1], ops.out, idx, inRows);
}
