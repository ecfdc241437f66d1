//===- FlashAttentionKernel.cpp - the per-block attention program ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2 as the program of one thread of a 4-warp block:
//   - Q (blockQ x D) is copied to shared memory once; warp w owns blockQ/4
//     consecutive query rows of the block: one or two m16 row tiles of
//     mma.sync (two, as FlashAttention-2 does, so each K/V fragment loaded
//     from shared memory feeds two mma and each K/V block serves 128 rows);
//   - K/V blocks of blockKV keys are double-buffered in shared memory with
//     cp.async: block j+1 is in flight while block j is used;
//   - S = Q K^T and O += P V run on mma.sync m16n8k16 with f32 accumulators,
//     operands loaded with ldmatrix (.trans for V); the f32 accumulators of
//     S become, rounded and packed, the A operand of the P V product, which
//     needs no data movement because the C and A fragment layouts agree;
//   - online softmax in base 2: scale * log2(e) is applied once, in the
//     exponent's fma (exp2(s * c - m); with a bias or float mask, to the
//     scores first); each thread holds two rows (g and
//     g + 8), whose maxima are combined across the 4 threads of a quad with
//     xor shuffles; the row sums stay per-thread partial sums until the end;
//   - hidden scores are a finite -1e30 (never -inf, so no inf - inf NaN);
//     a row whose maximum is still -1e30 at the end saw no visible key and
//     writes 0; a finite additive term, however low, hides nothing;
//   - causal blocks stop after the last block with a visible key, and only
//     the blocks that cross the diagonal or the end of the keys are masked.
//
// The Hopper variant (cfg.wgmma) keeps this structure but runs both
// products as warpgroup wgmma m64nNk16 on operands in shared memory: the 4
// warps are one warpgroup, each 64-row slab of the block one wgmma M (warp
// w owns its rows 16 w .. 16 w + 15, in the same accumulator layout as
// mma.sync's C, so the softmax code is shared); Q, K and V are staged in
// 64-column panels with the 128-byte swizzle that the descriptors name,
// and P stays in registers as the A operand of P V (the register-A form).
//
// Its warp-specialized form (producer and consumer warpgroups) is emitted by
// WarpSpecializedKernel.cpp; the choice of tiles is FlashKernelConfig.cpp's.
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionEmitter.h"
#include "SplitKV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

void FlashAttentionEmitter::loadTile(Value global, ArrayRef<Value> prefix,
                                     Value rowBase, Value limit, Value lastRow,
                                     Value dst, ArrayRef<Value> dstPrefix,
                                     int64_t rows, int64_t cols) {
  // 16-byte chunks: 8 16-bit or 4 f32 elements.
  int64_t perChunk = 16 / cfg.elemBytes();
  int64_t chunksPerRow = cols / perChunk, chunks = rows * cols / perChunk;
  // A warp's copies write shared memory in phases of 8 lanes, one 128-byte
  // wavefront when their chunks lie in 8 different 16-byte bank groups.
  // Row-major chunks do where a phase stays in one row. Where rows are not
  // a multiple of 8 chunks, a phase would span two rows and, the row stride
  // being padded for ldmatrix, conflict two-way; instead it takes `run`
  // adjacent chunks of 8 / run consecutive rows, run the largest power of
  // two (< 8) dividing the padded row stride in chunks, which puts those
  // rows in distinct groups of `run` bank groups.
  int64_t strideChunks =
      cast<MemRefType>(dst.getType()).getShape().back() / perChunk;
  int64_t run = strideChunks & -strideChunks;
  bool byPhase = !cfg.wgmma && chunksPerRow % 8 != 0 && run < 8 &&
                 chunksPerRow % run == 0 && rows % (8 / run) == 0;
  Value tid = t.threadId();
  for (int64_t first = 0; first < chunks; first += kThreadsPerBlock) {
    Value chunk = add(tid, pc(first));
    Value row, col;
    if (byPhase) {
      Value phase = div(chunk, pc(8)), inPhase = rem(chunk, pc(8));
      int64_t runsPerRow = chunksPerRow / run;
      row = add(mul(div(phase, pc(runsPerRow)), pc(8 / run)),
                div(inPhase, pc(run)));
      col = mul(
          add(mul(rem(phase, pc(runsPerRow)), pc(run)), rem(inPhase, pc(run))),
          pc(perChunk));
    } else {
      row = div(chunk, pc(chunksPerRow));
      col = mul(rem(chunk, pc(chunksPerRow)), pc(perChunk));
    }
    Value globalRow = add(t.lift(rowBase), row);
    Value valid = cmp(arith::CmpIPredicate::slt, globalRow, t.lift(limit));
    Value srcRow = minS(globalRow, t.lift(lastRow));
    Value active;
    if (cfg.wgmma) {
      // Rows of whole 128-byte panels: no tail.
      assert(chunks % kThreadsPerBlock == 0 && "wgmma tiles fill the block");
    } else if (first + kThreadsPerBlock > chunks) {
      // Threads past the tile copy nothing (their rows are past it).
      active = cmp(arith::CmpIPredicate::ult, chunk, pc(chunks));
    }
    SmallVector<Value> src, dstIdx;
    for (Value p : prefix)
      src.push_back(t.lift(p));
    src.push_back(srcRow);
    src.push_back(col);
    for (Value p : dstPrefix)
      dstIdx.push_back(t.lift(p));
    if (cfg.wgmma) {
      // [panel][row][64]: the 16-byte chunk c of a row r goes to c ^ (r % 8).
      dstIdx.push_back(div(col, pc(64)));
      dstIdx.push_back(row);
      dstIdx.push_back(swizzledColumn(row, col));
    } else {
      dstIdx.push_back(row);
      dstIdx.push_back(col);
    }
    t.copyAsync(global, src, dst, dstIdx, perChunk, valid, active);
  }
}

SmallVector<Value> FlashAttentionEmitter::scoreOperandIndices(Value m,
                                                              Value row,
                                                              Value col,
                                                              bool pair) {
  auto type = cast<MemRefType>(m.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> idx;
  auto full = [&](int64_t d) { return type.getDimSize(d) != 1; };
  for (int64_t d = 0; d < rank - 3; ++d)
    idx.push_back(t.lift(full(d) ? batchIdx[d] : ci(0)));
  idx.push_back(t.lift(full(rank - 3) ? head : ci(0)));
  // Rows past Lq and keys past Lk exist in the last blocks: clamp the reads.
  idx.push_back(
      full(rank - 2)
          ? minS(row, t.lift(arith::SubIOp::create(b, loc, lq, ci(1))))
          : pc(0));
  idx.push_back(full(rank - 1) ? minS(col, t.lift(arith::SubIOp::create(
                                               b, loc, lk, ci(pair ? 2 : 1))))
                               : pc(0));
  return idx;
}

Value FlashAttentionEmitter::pairedLoadCondition(Value m) {
  auto type = cast<MemRefType>(m.getType());
  Type elem = type.getElementType();
  int64_t rank = type.getRank();
  if (type.getDimSize(rank - 1) == 1)
    return {};
  auto eqZero = [&](Value v) {
    return cmp(arith::CmpIPredicate::eq, v, ci(0));
  };
  auto both = [&](Value x, Value y) {
    return arith::AndIOp::create(b, loc, x, y).getResult();
  };
  // (An i1 is stored in a byte.)
  int64_t bytes = std::max<int64_t>(elem.getIntOrFloatBitWidth() / 8, 1);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
  Value address = add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m),
                      mul(meta.getOffset(), ci(bytes)));
  // Columns are even, and Lk (the last dim) too, so no pair crosses the end
  // of a row; other dims move by an even number of elements.
  Value ok = eqZero(rem(address, ci(2 * bytes)));
  ok = both(ok, eqZero(rem(lk, ci(2))));
  ok = both(ok,
            cmp(arith::CmpIPredicate::eq, meta.getStrides()[rank - 1], ci(1)));
  for (int64_t d = 0; d < rank - 1; ++d)
    if (type.getDimSize(d) != 1)
      ok = both(ok, eqZero(rem(meta.getStrides()[d], ci(2))));
  return ok;
}

SmallVector<Value> FlashAttentionEmitter::loadScoreOperand(Value m, bool pairs,
                                                           ArrayRef<Value> rows,
                                                           Value colBase,
                                                           int64_t count) {
  // Element i: row rows[(i % 4) / 2], column colBase + 8 (i / 4) + i % 2.
  auto column = [&](int64_t i) {
    return add(colBase, pc(8 * (i / 4) + i % 2));
  };
  // With the rows broadcast, rows g and g + 8 share each value: only the
  // first row's elements are loaded.
  auto type = cast<MemRefType>(m.getType());
  bool oneRow = type.getDimSize(type.getRank() - 2) == 1;
  SmallVector<Value> v;
  for (int64_t i = 0; i < count; i += pairs ? 2 : 1) {
    Value row = rows[(i % 4) / 2];
    if (oneRow && i % 4 >= 2) {
      v.push_back(v[i - 2]);
      if (pairs)
        v.push_back(v[i - 1]);
    } else if (pairs) {
      auto [lo, hi] =
          t.loadPair(m, scoreOperandIndices(m, row, column(i), /*pair=*/true));
      v.append({lo, hi});
    } else {
      v.push_back(t.load(m, scoreOperandIndices(m, row, column(i))));
    }
  }
  return v;
}

SmallVector<Value> FlashAttentionEmitter::applyMasks(ArrayRef<Value> s,
                                                     Value kv0, int64_t rt) {
  const double log2e = 1.0 / std::log(2.0);
  Value rowBase = add(tileRow(rt), add(group, t.lift(q0)));
  Value colBase = add(mul(quad, pc(2)), t.lift(kv0));
  // Element i is at column colBase + o, o = 8 nt + e a constant. It is
  // visible iff o <= the last visible offset of its row (half): before Lk
  // and, if causal, at or before the diagonal. Clamped to [-1, blockKV],
  // that offset fits i32: one 32-bit compare per element.
  Type i32 = b.getI32Type();
  Value rows[2] = {rowBase, add(rowBase, pc(8))};
  Value lastBeforeLk =
      arith::SubIOp::create(b, loc, t.lift(lk), add(colBase, pc(1)));
  Value lastOffset[2];
  for (int half = 0; half < 2; ++half) {
    Value last = lastBeforeLk;
    if (cfg.causal)
      last = minS(last,
                  arith::SubIOp::create(
                      b, loc, add(queryIndex(rows[half]), t.lift(diagOffset)),
                      colBase));
    last = maxS(minS(last, pc(cfg.blockKV)), pc(-1));
    lastOffset[half] =
        arith::IndexCastOp::create(b, loc, t.perThreadType(i32), last);
  }
  // Additive terms are base-e; the scores here are in the exponent's unit.
  Value additiveScale;
  if (ops.mask || ops.bias)
    additiveScale = pf(log2e / exponentScale);
  int64_t count = s.size();
  // The scores with their terms and masks, the operands read by pairs or
  // not. Both versions are whole, so that each value is used as soon as it
  // is loaded (a branch around the loads alone would keep them all live).
  auto apply = [&](bool pairs) {
    SmallVector<Value> biasValues, maskValues;
    if (ops.bias)
      biasValues =
          loadScoreOperand(ops.bias, pairs && biasPaired, rows, colBase, count);
    if (ops.mask)
      maskValues =
          loadScoreOperand(ops.mask, pairs && maskPaired, rows, colBase, count);
    return combine(s, biasValues, maskValues, lastOffset, additiveScale);
  };
  if (!pairedLoads)
    return apply(false);
  SmallVector<Type> types(count, t.perThreadType(b.getF32Type()));
  auto ifOp =
      scf::IfOp::create(b, loc, types, pairedLoads, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, apply(true));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, apply(false));
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value> FlashAttentionEmitter::combine(ArrayRef<Value> s,
                                                  ArrayRef<Value> biasValues,
                                                  ArrayRef<Value> maskValues,
                                                  ArrayRef<Value> lastOffset,
                                                  Value additiveScale) {
  Type i32 = b.getI32Type();
  Value hidden = pf(hiddenScore());
  Value lowest, negInf;
  if (hasAdditiveTerm(ops)) {
    assert(exponentScale == 1.0 && "additive terms come with scaled scores");
    lowest = pf(kLowestVisibleLogit);
    negInf = pf(-std::numeric_limits<double>::infinity());
  }
  SmallVector<Value> out;
  for (int64_t i = 0, count = s.size(); i < count; ++i) {
    int64_t nt = i / 4, half = (i % 4) / 2, e = i % 2;
    Value x = s[i];
    Value offset =
        t.lift(arith::ConstantIntOp::create(b, loc, i32, 8 * nt + e));
    Value visible = cmp(arith::CmpIPredicate::sle, offset, lastOffset[half]);
    Value additive;
    auto addTerm = [&](Value term) {
      additive = additive ? fadd(additive, term) : term;
    };
    if (ops.bias) {
      Value v = biasValues[i];
      if (!getElementTypeOrSelf(v.getType()).isF32())
        v = arith::ExtFOp::create(b, loc, t.perThreadType(b.getF32Type()), v);
      addTerm(v);
    }
    if (ops.mask) {
      Value v = maskValues[i];
      Type elem = getElementTypeOrSelf(v.getType());
      if (elem.isInteger(1)) {
        visible = arith::AndIOp::create(b, loc, visible, v);
      } else {
        if (!elem.isF32())
          v = arith::ExtFOp::create(b, loc, t.perThreadType(b.getF32Type()), v);
        addTerm(v);
      }
    }
    // A -inf term hides its key, a finite one however low does not (two
    // lowest floats add up to -inf, as in the CPU kernels). UNE: a NaN term
    // leaves the key visible and spreads, as in the op's semantics.
    if (additive) {
      visible = arith::AndIOp::create(
          b, loc, visible,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, additive,
                                negInf));
      x = fmax(fma(additive, additiveScale, x), lowest);
    }
    out.push_back(sel(visible, x, hidden));
  }
  return out;
}

void FlashAttentionEmitter::scoresTF32(SmallVector<Value> &s, Value sQ,
                                       Value sK, Value buf, int64_t rt) {
  // m16n8k8 fragments (g = lane / 4, t = lane % 4):
  //   A: a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
  //   B: b0 = B[t][g], b1 = B[t+4][g]; here B[k][n] = K[key n][k].
  Value row = add(tileRow(rt), group);
  for (int64_t kk = 0; kk < cfg.headDimQK / 8; ++kk) {
    Value col = add(quad, pc(8 * kk));
    SmallVector<SmallVector<Value, 2>> a = {
        loadTF32(sQ, {}, row, col), loadTF32(sQ, {}, add(row, pc(8)), col),
        loadTF32(sQ, {}, row, add(col, pc(4))),
        loadTF32(sQ, {}, add(row, pc(8)), add(col, pc(4)))};
    for (size_t nt = 0; nt < s.size() / 4; ++nt) {
      Value key = add(group, pc(8 * nt));
      SmallVector<SmallVector<Value, 2>> bf = {
          loadTF32(sK, {buf}, key, col),
          loadTF32(sK, {buf}, key, add(col, pc(4)))};
      std::array<Value, 4> r =
          mmaTF32Parts(a, bf, ArrayRef<Value>(s).slice(4 * nt, 4));
      for (int i = 0; i < 4; ++i)
        s[4 * nt + i] = r[i];
    }
  }
}

void FlashAttentionEmitter::accumulatePVTF32(SmallVector<Value> &acc,
                                             ArrayRef<Value> p, Value sV,
                                             Value buf) {
  // Key tile kk of P in the C layout: lane (g, t) holds P[g][2t], P[g][2t+1]
  // (c0, c1) and P[g+8][2t], P[g+8][2t+1] (c2, c3). The A operand needs
  // P[g][t] and P[g][t+4] (and row g+8): element t % 2 of lanes
  // 4g + t / 2 and 4g + 2 + t / 2.
  Value quadBase = arith::SubIOp::create(b, loc, lane, quad);
  Value half = div(quad, pc(2));
  Value srcLo = add(quadBase, half), srcHi = add(quadBase, add(half, pc(2)));
  Value odd = cmp(arith::CmpIPredicate::eq, rem(quad, pc(2)), pc(1));
  auto fetch = [&](const Value *c, int e, Value src) {
    // c[e], c[e+1] of lane `src`, then the one this lane's t % 2 picks.
    Value even = t.shuffleIdx(c[e], src);
    Value oddV = t.shuffleIdx(c[e + 1], src);
    return toTF32(sel(odd, oddV, even));
  };
  Value vCol = group;
  for (size_t kk = 0; kk < p.size() / 4; ++kk) {
    const Value *c = &p[4 * kk];
    SmallVector<SmallVector<Value, 2>> a = {
        fetch(c, 0, srcLo), fetch(c, 2, srcLo), fetch(c, 0, srcHi),
        fetch(c, 2, srcHi)};
    Value key = add(quad, pc(8 * kk));
    for (size_t nt = 0; nt < acc.size() / 4; ++nt) {
      Value col = add(vCol, pc(8 * nt));
      SmallVector<SmallVector<Value, 2>> bf = {
          loadTF32(sV, {buf}, key, col),
          loadTF32(sV, {buf}, add(key, pc(4)), col)};
      std::array<Value, 4> r =
          mmaTF32Parts(a, bf, ArrayRef<Value>(acc).slice(4 * nt, 4));
      for (int i = 0; i < 4; ++i)
        acc[4 * nt + i] = r[i];
    }
  }
}

void FlashAttentionEmitter::issuePVWgmma(SmallVector<Value> &acc,
                                         ArrayRef<Value> p, Value buf) {
  SmallVector<PackedReg> a;
  for (int64_t kk = 0; kk < cfg.blockKV / 16; ++kk)
    a.append(probabilityFragment(p, kk));
  issuePVFragments(acc, a, buf);
}

void FlashAttentionEmitter::issuePVFragments(SmallVector<Value> &acc,
                                             SmallVector<PackedReg> a,
                                             Value buf) {
  int64_t bn = cfg.blockKV, dv = cfg.headDimV;
  // A = P from registers; B = V[key][dv] is MN-major: LBO steps over
  // 64-column panels, SBO over 8-key groups.
  t.wgmmaFence(acc, a);
  Value vDesc = wgmmaDescriptor(vBufferOffset(buf), bn * kPanelRowBytes,
                                kPanelGroupBytes);
  for (int64_t kk = 0; kk < bn / 16; ++kk) {
    Value descV = advanceDescriptor(vDesc, kk * 16 * kPanelRowBytes);
    acc = t.wgmmaRegA(ArrayRef<PackedReg>(a).slice(4 * kk, 4), descV, acc, dv,
                      /*accumulate=*/true, /*transposeB=*/true);
  }
  t.wgmmaCommit();
}

void FlashAttentionEmitter::setUp() {
  auto qType = cast<MemRefType>(ops.query.getType());
  int64_t rank = qType.getRank(), numBatch = rank - 3;
  int64_t d = cfg.headDimQK, dv = cfg.headDimV;
  int64_t bm = cfg.blockQ, bn = cfg.blockKV;

  // Uniform coordinates of the block.
  assert(!(ops.numSplits && cfg.tmaStore) &&
         "split partials are stored by the threads, not by TMA");
  Value qBlock = t.blockId(0);
  Value numQBlocks =
      arith::CeilDivUIOp::create(b, loc, dim(ops.query, rank - 2), ci(bm));
  Value split;
  if (ops.numSplits) {
    split = div(qBlock, numQBlocks);
    qBlock = rem(qBlock, numQBlocks);
  }
  if (cfg.causal) {
    // Causal work grows with the query block: launch the heaviest blocks
    // first (x varies fastest in launch order) so the last wave is short.
    qBlock = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, numQBlocks, ci(1)), qBlock);
  }
  head = t.blockId(1);
  Value batchLinear = t.blockId(2);
  if (ops.numSplits) {
    Value batchCount = ci(1);
    for (int64_t i = 0; i < numBatch; ++i)
      batchCount = mul(batchCount, dim(ops.query, i));
    partialIndex = splitKVPartialRow(b, loc, split, batchLinear, head,
                                     batchCount, dim(ops.query, rank - 3));
  }
  batchIdx.assign(numBatch, Value());
  for (int64_t i = numBatch - 1; i >= 0; --i) {
    Value size = dim(ops.query, i);
    batchIdx[i] = rem(batchLinear, size);
    batchLinear = div(batchLinear, size);
  }
  // Hq / Hkv, or read from the operands: one division per block.
  kvHead = div(head, ShapedType::isDynamic(cfg.groupSize)
                         ? div(dim(ops.query, rank - 3), dim(ops.key, rank - 3))
                         : ci(cfg.groupSize));
  lq = dim(ops.query, rank - 2);
  lk = dim(ops.key, rank - 2);
  q0 = mul(qBlock, ci(bm));
  // Key j is visible to row i iff j <= queryIndex(i) + diagOffset: i, or
  // with a causal period (i + offset) mod P, whose diagonal is placed for
  // P queries and is not moved by the offset.
  if (cfg.causal) {
    Value queries = ops.causalPeriod ? ops.causalPeriod : lq;
    diagOffset = *cfg.causal == CausalAlignment::BottomRight
                     ? arith::SubIOp::create(b, loc, lk, queries).getResult()
                     : ci(0);
    if (ops.causalPeriod)
      rowShift = ops.causalOffset;
    else if (ops.causalOffset)
      diagOffset = add(diagOffset, ops.causalOffset);
  }

  // Masks and bias are read in pairs where layout and alignment allow it
  // (checked once: the loop branches on it).
  if (ops.bias)
    biasPaired = pairedLoadCondition(ops.bias);
  if (ops.mask)
    maskPaired = pairedLoadCondition(ops.mask);
  for (Value c : {biasPaired, maskPaired})
    if (c)
      pairedLoads =
          pairedLoads ? arith::AndIOp::create(b, loc, pairedLoads, c) : c;

  // Shared memory: Q, the two K buffers, the two V buffers.
  int64_t kOffset = cfg.sharedKOffset(), vOffset = cfg.sharedVOffset();
  if (cfg.wgmma) {
    // Panels of 64 columns: [(buffer,) panel, row, 64].
    sQ = t.sharedView(0, sharedType({d / 64, bm, 64}));
    sK = t.sharedView(kOffset, sharedType({2, d / 64, bn, 64}));
    sV = t.sharedView(vOffset, sharedType({2, dv / 64, bn, 64}));
  } else {
    sQ = t.sharedView(0, sharedType({bm, d + cfg.padQK()}));
    sK = t.sharedView(kOffset, sharedType({2, bn, d + cfg.padQK()}));
    sV = t.sharedView(vOffset, sharedType({2, bn, dv + cfg.padV()}));
  }

  qPrefix.assign(batchIdx.begin(), batchIdx.end());
  kvPrefix.assign(batchIdx.begin(), batchIdx.end());
  qPrefix.push_back(head);
  kvPrefix.push_back(kvHead);
  lastQ = maxS(arith::SubIOp::create(b, loc, lq, ci(1)), ci(0));
  lastK = maxS(arith::SubIOp::create(b, loc, lk, ci(1)), ci(0));

  // Number of K/V blocks: all of them, or up to the last one with a key
  // visible to the block's last row.
  numKV = div(add(lk, ci(bn - 1)), ci(bn));
  if (cfg.causal) {
    Value lastRow =
        arith::SubIOp::create(b, loc, minS(add(q0, ci(bm)), lq), ci(1));
    Value lastQuery = lastRow;
    firstQuery = q0;
    if (ops.causalPeriod) {
      // The block's rows from q0 to lastRow: their queries run up from
      // q0's, or take every index where they wrap around the period.
      Value period = ops.causalPeriod;
      Value first = q0, last = lastRow;
      if (rowShift) {
        first = add(first, rowShift);
        last = add(last, rowShift);
      }
      Value wraps =
          cmp(arith::CmpIPredicate::ne, div(first, period), div(last, period));
      firstQuery = sel(wraps, ci(0), rem(first, period));
      lastQuery = sel(wraps, arith::SubIOp::create(b, loc, period, ci(1)),
                      rem(last, period));
    }
    Value lastKey = add(lastQuery, diagOffset);
    Value causalBlocks =
        sel(cmp(arith::CmpIPredicate::slt, lastKey, ci(0)), ci(0),
            add(arith::DivSIOp::create(b, loc, lastKey, ci(bn)), ci(1)));
    numKV = minS(numKV, causalBlocks);
  }
  // Split-KV: split s runs the s-th share of the block's steps (of the
  // visible ones, so that causal splits stay balanced); a split past the
  // end runs none and writes hidden rows.
  kvBegin = ci(0);
  if (ops.numSplits) {
    Value perSplit =
        div(add(numKV, arith::SubIOp::create(b, loc, ops.numSplits, ci(1))),
            ops.numSplits);
    kvBegin = minS(mul(split, perSplit), numKV);
    numKV = arith::SubIOp::create(b, loc, minS(add(kvBegin, perSplit), numKV),
                                  kvBegin);
  }
}

void FlashAttentionEmitter::setThread(Value tid) {
  warp = div(tid, pc(kWarpSize));
  lane = rem(tid, pc(kWarpSize));
  group = div(lane, pc(4));
  quad = rem(lane, pc(4));
}

SmallVector<Value> FlashAttentionEmitter::initialLoopState() {
  SmallVector<Value> inits;
  int64_t numRT = cfg.rowTiles();
  for (int64_t rt = 0; rt < numRT; ++rt)
    inits.append({pf(kHiddenLogit), pf(kHiddenLogit), pf(0.0), pf(0.0)});
  for (int64_t i = 0; i < numRT * (cfg.headDimV / 8) * 4; ++i)
    inits.push_back(pf(0.0));
  return inits;
}

void FlashAttentionEmitter::issueScoresWgmma(
    MutableArrayRef<SmallVector<Value>> s, Value buf, Value slabOffset) {
  // One m64n(bn)k16 wgmma per slab and 16 columns of D; every operand is
  // K-major. k step kk is 16 elements into the rows of panel kk / 4. Q's
  // descriptors are built whole: they are loop-invariant, and advancing
  // one base made LLVM hoist all d / 16 of them into registers (8 bytes of
  // spills at D = 256).
  int64_t d = cfg.headDimQK, bm = cfg.blockQ, bn = cfg.blockKV;
  Value kDesc =
      wgmmaDescriptor(kBufferOffset(buf), kUnusedLBO, kPanelGroupBytes);
  t.wgmmaFence({});
  for (size_t rt = 0; rt < s.size(); ++rt) {
    for (int64_t kk = 0; kk < d / 16; ++kk) {
      int64_t inRow = (kk % 4) * 16 * cfg.elemBytes();
      Value descQ = wgmmaDescriptor(
          ci((kk / 4) * bm * kPanelRowBytes + rt * 64 * kPanelRowBytes + inRow),
          kUnusedLBO, kPanelGroupBytes);
      if (slabOffset)
        descQ = add(descQ, slabOffset);
      Value descK =
          advanceDescriptor(kDesc, (kk / 4) * bn * kPanelRowBytes + inRow);
      s[rt] = t.wgmma(descQ, descK, s[rt], bn, /*accumulate=*/kk > 0,
                      /*transposeB=*/false);
    }
    // One group per slab: the softmax of slab 0 runs while the tensor
    // cores compute slab 1 (waited for slab by slab).
    t.wgmmaCommit();
  }
}

void FlashAttentionEmitter::computeLogits(MutableArrayRef<SmallVector<Value>> s,
                                          ArrayRef<int64_t> tiles, Value j) {
  int64_t bn = cfg.blockKV, sTiles = bn / 8;
  if (scoreScale != 1.0) {
    Value factor = pf(scoreScale);
    for (int64_t rt : tiles)
      for (Value &x : s[rt])
        x = fmul(x, factor);
  }
  Value kv0 = mul(j, ci(bn));
  if (ops.mask || ops.bias) {
    for (int64_t rt : tiles)
      s[rt] = applyMasks(s[rt], kv0, rt);
    return;
  }
  // Only the blocks crossing the end of the keys or the diagonal: one
  // uniform branch for all the tiles. (The diagonal test takes the block's
  // first row: conservative for the later warpgroups of a warp-specialized
  // block.)
  Value blockEnd = add(kv0, ci(bn));
  Value needMask = cmp(arith::CmpIPredicate::sgt, blockEnd, lk);
  if (cfg.causal) {
    Value crosses = cmp(arith::CmpIPredicate::sgt,
                        arith::SubIOp::create(b, loc, blockEnd, ci(1)),
                        add(firstQuery, diagOffset));
    needMask = arith::OrIOp::create(b, loc, needMask, crosses);
  }
  SmallVector<Type> types(tiles.size() * sTiles * 4,
                          t.perThreadType(b.getF32Type()));
  auto ifOp = scf::IfOp::create(b, loc, types, needMask,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> masked, plain;
    for (int64_t rt : tiles) {
      masked.append(applyMasks(s[rt], kv0, rt));
      plain.append(s[rt]);
    }
    scf::YieldOp::create(b, loc, masked);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, plain);
  }
  for (size_t n = 0; n < tiles.size(); ++n)
    s[tiles[n]].assign(ifOp.getResults().begin() + n * sTiles * 4,
                       ifOp.getResults().begin() + (n + 1) * sTiles * 4);
}

void FlashAttentionEmitter::onlineSoftmax(int64_t rt, ValueRange state,
                                          SmallVector<Value> &s,
                                          SmallVector<Value> &acc,
                                          SmallVector<Value> &yield,
                                          PendingRescale *deferred) {
  int64_t numRT = cfg.rowTiles(), sTiles = cfg.blockKV / 8,
          oTiles = cfg.headDimV / 8;
  ValueRange st = state.slice(4 * rt, 4);
  acc.assign(state.begin() + 4 * numRT + rt * oTiles * 4,
             state.begin() + 4 * numRT + (rt + 1) * oTiles * 4);
  Value expScale = pf(exponentScale);
  Value alpha[2], mNew[2];
  for (int h = 0; h < 2; ++h) {
    Value mx = s[2 * h];
    for (int64_t nt = 0; nt < sTiles; ++nt)
      for (int e = 0; e < 2; ++e)
        mx = fmax(mx, s[4 * nt + 2 * h + e]);
    mx = fmax(mx, t.shuffleXor(mx, 1));
    mx = fmax(mx, t.shuffleXor(mx, 2));
    if (exponentScale != 1.0)
      mx = fmul(mx, expScale);
    mNew[h] = fmax(st[h], mx);
  }
  // Lazy rescaling (as FlashAttention-4 does): the running maxima move
  // only when a row of the warp rises more than the threshold above its
  // own; otherwise this block is exponentiated against the stale
  // maxima, alpha is 1, and the warp skips rescaling O and the sums.
  // (A negative threshold: FlashAttention-2's rescaling at every step.)
  bool lazy = cfg.rescaleThreshold >= 0;
  Value moved;
  if (lazy) {
    for (int h = 0; h < 2; ++h) {
      Value rise =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                arith::SubFOp::create(b, loc, mNew[h], st[h]),
                                pf(cfg.rescaleThreshold));
      moved = moved ? arith::OrIOp::create(b, loc, moved, rise) : rise;
    }
    moved = t.warpAny(moved);
    for (int h = 0; h < 2; ++h)
      mNew[h] = sel(moved, mNew[h], st[h]);
  }
  for (int h = 0; h < 2; ++h)
    alpha[h] = exp2(arith::SubFOp::create(b, loc, st[h], mNew[h]));
  Value negMax[2];
  if (exponentScale != 1.0)
    for (int h = 0; h < 2; ++h)
      negMax[h] = arith::NegFOp::create(b, loc, mNew[h]);
  Value rowSum[2] = {pf(0.0), pf(0.0)};
  for (size_t i = 0; i < s.size(); ++i) {
    int h = (i % 4) / 2;
    Value logit = exponentScale == 1.0
                      ? arith::SubFOp::create(b, loc, s[i], mNew[h]).getResult()
                      : fma(s[i], expScale, negMax[h]);
    s[i] = exp2(logit);
    rowSum[h] = fadd(rowSum[h], s[i]);
  }
  // O and the sums, rescaled by their row's alpha (skipped where the
  // maxima stayed); deferred, the sums only.
  PendingRescale pending{{alpha[0], alpha[1]}, moved};
  SmallVector<Value> sums = {st[2], st[3]};
  if (deferred) {
    *deferred = pending;
    rescaleRows({}, sums, pending);
  } else {
    rescaleRows(acc, sums, pending);
  }
  yield.append({mNew[0], mNew[1]});
  for (int h = 0; h < 2; ++h)
    yield.push_back(fadd(sums[h], rowSum[h]));
}

void FlashAttentionEmitter::rescaleRows(MutableArrayRef<Value> acc,
                                        MutableArrayRef<Value> sums,
                                        const PendingRescale &pending) {
  // Accumulator i holds row half (i % 4) / 2; sum h, row half h.
  SmallVector<Value> values(acc);
  values.append(sums.begin(), sums.end());
  auto rescale = [&]() {
    SmallVector<Value> out;
    for (auto [i, v] : llvm::enumerate(values)) {
      size_t half = i < acc.size() ? (i % 4) / 2 : i - acc.size();
      out.push_back(fmul(v, pending.alpha[half]));
    }
    return out;
  };
  SmallVector<Value> result;
  if (!pending.moved) {
    result = rescale();
  } else if (!t.hasScalarControlFlow()) {
    // The emulation takes the GPU's branch lane by lane (`moved` is
    // uniform in each warp), so that a wrong flag shows in its numbers
    // (where the maxima stayed, alpha is exactly 1 anyway).
    for (auto [v, scaled] : llvm::zip_equal(values, rescale()))
      result.push_back(sel(pending.moved, scaled, v));
  } else {
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(values).getTypes(),
                                  pending.moved, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, rescale());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, values);
    result.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }
  llvm::copy(ArrayRef<Value>(result).take_front(acc.size()), acc.begin());
  llvm::copy(ArrayRef<Value>(result).drop_front(acc.size()), sums.begin());
}

void FlashAttentionEmitter::emit() {
  if (cfg.warpSpecialized)
    t.orderSharedMemoryByMbarriers();
  setUp();
  if (cfg.warpSpecialized)
    emitWarpSpecialized();
  else
    emitBlock();
}

void FlashAttentionEmitter::emitBlock() {
  int64_t d = cfg.headDimQK, dv = cfg.headDimV;
  int64_t bm = cfg.blockQ, bn = cfg.blockKV;
  setThread(t.threadId());

  // The TMA path: K/V block j arrives in buffer j % 2 and completes phase
  // j / 2 of mbarrier j % 2, whose bytes (both tiles) thread 0 announces
  // when it issues the loads. Block 0's phase also brings Q.
  int64_t kvTmaBytes = bn * (d + dv) * cfg.elemBytes();
  auto loadKVTma = [&](Value block, Value buffer, Value pred) {
    Value base = mul(block, ci(bn));
    loadTileTma(ops.key, ops.keyMap, kvPrefix, base, kBufferOffset(buffer), bn,
                d, buffer, pred);
    loadTileTma(ops.value, ops.valueMap, kvPrefix, base, vBufferOffset(buffer),
                bn, dv, buffer, pred);
  };

  if (cfg.tma) {
    // Nothing is loaded for a block with no K/V step (it writes zeros): every
    // load issued is waited for in the loop.
    assert(cfg.numBarriers() == 2 && "one mbarrier per K/V buffer");
    t.initBarriers({1, 1});
    t.barrier();
    Value any = cmp(arith::CmpIPredicate::sgt, numKV, ci(0));
    t.expectBytes(ci(0), bm * d * cfg.elemBytes() + kvTmaBytes, any);
    loadTileTma(ops.query, ops.queryMap, qPrefix, q0, ci(0), bm, d, ci(0), any);
    loadKVTma(kvBegin, ci(0), any);
  } else {
    // Prologue: Q (group 0), then K/V block 0 (group 1).
    loadTile(ops.query, qPrefix, q0, lq, lastQ, sQ, {}, bm, d);
    t.commitGroup();
    Value firstLimit =
        sel(cmp(arith::CmpIPredicate::sgt, numKV, ci(0)), lk, ci(0));
    Value firstBase = mul(kvBegin, ci(bn));
    loadTile(ops.key, kvPrefix, firstBase, firstLimit, lastK, sK, {ci(0)}, bn,
             d);
    loadTile(ops.value, kvPrefix, firstBase, firstLimit, lastK, sV, {ci(0)}, bn,
             dv);
    t.commitGroup();
    t.waitGroups(1);
    t.barrier();
  }

  // A-operand fragments of the warp's query rows: row tile rt, k step kk.
  int64_t numRT = cfg.rowTiles();
  Value qColInStep = mul(div(lane, pc(16)), pc(8));
  auto loadQ = [&](int64_t rt, int64_t kk) {
    return t.loadMatrix(sQ, {}, add(tileRow(rt), rem(lane, pc(16))),
                        add(qColInStep, pc(16 * kk)), 4, /*transpose=*/false);
  };
  SmallVector<SmallVector<SmallVector<PackedReg>>> qFrags(numRT);
  if (cfg.qInRegisters && !cfg.isTF32())
    for (int64_t rt = 0; rt < numRT; ++rt)
      for (int64_t kk = 0; kk < d / 16; ++kk)
        qFrags[rt].push_back(loadQ(rt, kk));

  int64_t sTiles = bn / 8, oTiles = dv / 8;
  auto loop =
      scf::ForOp::create(b, loc, ci(0), numKV, ci(1), initialLoopState());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    // Step `step` of the block runs K/V block j (the buffers and mbarrier
    // phases count steps).
    Value step = loop.getInductionVar();
    Value j = add(kvBegin, step);
    ValueRange state = loop.getRegionIterArgs();
    Value buf = rem(step, ci(2));
    Value nextBuf = arith::SubIOp::create(b, loc, ci(1), buf);
    Value next = add(step, ci(1));

    // Prefetch block j + 1 into the other buffer, then wait for block j.
    if (cfg.tma) {
      // The other buffer's last readers finished before the barrier that
      // ended the previous step.
      Value more = cmp(arith::CmpIPredicate::slt, next, numKV);
      t.expectBytes(nextBuf, kvTmaBytes, more);
      loadKVTma(add(j, ci(1)), nextBuf, more);
      t.waitBarrier(buf, blockPhaseParity(step));
    } else {
      // (All zero-size past the end.)
      Value nextLimit =
          sel(cmp(arith::CmpIPredicate::slt, next, numKV), lk, ci(0));
      Value nextBase = mul(add(j, ci(1)), ci(bn));
      loadTile(ops.key, kvPrefix, nextBase, nextLimit, lastK, sK, {nextBuf}, bn,
               d);
      loadTile(ops.value, kvPrefix, nextBase, nextLimit, lastK, sV, {nextBuf},
               bn, dv);
      t.commitGroup();
      t.waitGroups(1);
      // cp.async writes are generic-proxy writes; wgmma reads through the
      // async proxy.
      if (cfg.wgmma)
        t.fenceAsyncProxy();
      t.barrier();
    }

    // S = Q K^T: per row tile, 16 rows x bn keys as sTiles m16n8 tiles. Each
    // K fragment feeds the mma of every row tile.
    SmallVector<SmallVector<Value>> s(numRT,
                                      SmallVector<Value>(sTiles * 4, pf(0.0)));
    if (cfg.isTF32()) {
      for (int64_t rt = 0; rt < numRT; ++rt)
        scoresTF32(s[rt], sQ, sK, buf, rt);
    } else if (cfg.wgmma) {
      issueScoresWgmma(s, buf, /*slabOffset=*/{});
    } else {
      Value kRow = add(mul(div(lane, pc(16)), pc(8)), rem(lane, pc(8)));
      Value kCol = mul(rem(div(lane, pc(8)), pc(2)), pc(8));
      for (int64_t kk = 0; kk < d / 16; ++kk) {
        SmallVector<SmallVector<PackedReg>> a;
        for (int64_t rt = 0; rt < numRT; ++rt)
          a.push_back(cfg.qInRegisters ? qFrags[rt][kk] : loadQ(rt, kk));
        for (int64_t np = 0; np < sTiles / 2; ++np) {
          SmallVector<PackedReg> kf =
              t.loadMatrix(sK, {buf}, add(kRow, pc(16 * np)),
                           add(kCol, pc(16 * kk)), 4, /*transpose=*/false);
          mmaFragmentPair(a, kf, np, s);
        }
      }
    }

    SmallVector<Value> yield;
    SmallVector<SmallVector<Value>> acc(numRT);
    if (cfg.wgmma) {
      // Slab by slab as its S group completes, and its P V issued at once:
      // slab 0's softmax runs while the tensor cores compute slab 1's S,
      // and slab 1's while they compute slab 0's P V. Groups complete in
      // order; when slab rt's S is waited for, the groups after it are the
      // numRT - 1 - rt later S and the rt P V issued: numRT - 1 in all.
      for (int64_t rt = 0; rt < numRT; ++rt) {
        t.wgmmaWait(numRT - 1, s[rt]);
        computeLogits(s, {rt}, j);
        onlineSoftmax(rt, state, s[rt], acc[rt], yield);
        issuePVWgmma(acc[rt], s[rt], buf);
      }
      SmallVector<Value> flat = flatten(acc);
      t.wgmmaWait(0, flat);
      unflatten(flat, acc);
    } else {
      computeLogits(s, llvm::to_vector(llvm::seq<int64_t>(0, numRT)), j);
      for (int64_t rt = 0; rt < numRT; ++rt)
        onlineSoftmax(rt, state, s[rt], acc[rt], yield);
    }

    if (cfg.isTF32()) {
      for (int64_t rt = 0; rt < numRT; ++rt)
        accumulatePVTF32(acc[rt], s[rt], sV, buf);
    } else if (!cfg.wgmma) {
      // O += P V: the S accumulators of key tiles 2kk and 2kk+1 are the A
      // operand of k step kk. Each V fragment feeds every row tile.
      Value vRow =
          add(mul(rem(div(lane, pc(8)), pc(2)), pc(8)), rem(lane, pc(8)));
      Value vCol = mul(div(lane, pc(16)), pc(8));
      for (int64_t kk = 0; kk < bn / 16; ++kk) {
        SmallVector<SmallVector<PackedReg>> a;
        for (int64_t rt = 0; rt < numRT; ++rt)
          a.push_back(probabilityFragment(s[rt], kk));
        for (int64_t np = 0; np < oTiles / 2; ++np) {
          SmallVector<PackedReg> vf =
              t.loadMatrix(sV, {buf}, add(vRow, pc(16 * kk)),
                           add(vCol, pc(16 * np)), 4, /*transpose=*/true);
          mmaFragmentPair(a, vf, np, acc);
        }
      }
    }
    // Block j's buffers are overwritten by the prefetch of iteration j + 1.
    t.barrier();

    for (SmallVector<Value> &tile : acc)
      yield.append(tile);
    scf::YieldOp::create(b, loc, yield);
  }
  if (cfg.tma)
    t.endBarriers();
  else
    t.waitGroups(0);
  writeOutput(loop.getResults());
}

void FlashAttentionEmitter::writeOutput(
    ValueRange results, int64_t copies,
    function_ref<void(int64_t)> selectCopy) {
  // With TMA stores, O goes to shared memory in Q's (and K's) place, in the
  // 128-byte-swizzled panels, and one thread stores each panel with one
  // cp.async.bulk.tensor, which writes no row past Lq.
  int64_t numRT = cfg.rowTiles(), oTiles = cfg.headDimV / 8;
  int64_t dv = cfg.headDimV, bm = cfg.blockQ;
  Type outElem = cast<MemRefType>(ops.out.getType()).getElementType();
  Value sO;
  if (cfg.tmaStore) {
    // Every warp's wgmma have read Q and K (their groups are complete),
    // and no load is in flight: the space is free once all warps are here.
    // (The barrier that ended the last K/V step already makes it so, as
    // the emulation's race model shows; this one does not rely on it.)
    // Warp specialized, each consumer warpgroup writes its rows over its
    // own slab of Q, which only its own wgmma read, unless O's panels
    // reach into K's buffers.
    if (!cfg.warpSpecialized)
      t.barrier();
    else if (dv > cfg.headDimQK)
      consumersSync();
    sO = t.sharedView(0, sharedType({dv / 64, bm, 64}));
  }
  size_t stateSize = results.size() / copies;
  for (int64_t c = 0; c < copies; ++c) {
    if (selectCopy)
      selectCopy(c);
    ValueRange res = results.slice(c * stateSize, stateSize);
    for (int64_t rt = 0; rt < numRT; ++rt) {
      ValueRange st = res.slice(4 * rt, 4);
      ValueRange o = res.slice(4 * numRT + rt * oTiles * 4, oTiles * 4);
      Value inv[2];
      Value rowBase = add(tileRow(rt), add(group, t.lift(q0)));
      for (int h = 0; h < 2; ++h) {
        Value sum = st[2 + h];
        sum = fadd(sum, t.shuffleXor(sum, 1));
        sum = fadd(sum, t.shuffleXor(sum, 2));
        Value hiddenRow = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLE, st[h], pf(kHiddenLogit));
        if (!ops.numSplits) {
          inv[h] = sel(hiddenRow, pf(0.0),
                       arith::DivFOp::create(b, loc, pf(1.0), sum));
          continue;
        }
        // A split's partial: O unnormalized, and the row's maximum and sum
        // (one thread of the quad writes them). A row hidden in this split
        // has weight 0 in the merge (its O accumulated hidden scores as 1).
        inv[h] = sel(hiddenRow, pf(0.0), pf(1.0));
        Value row = add(rowBase, pc(8 * h));
        Value write = arith::AndIOp::create(
            b, loc, cmp(arith::CmpIPredicate::slt, row, t.lift(lq)),
            cmp(arith::CmpIPredicate::eq, quad, pc(0)));
        t.storePair(sel(hiddenRow, pf(kHiddenLogit), st[h]),
                    sel(hiddenRow, pf(0.0), sum), ops.partialStats,
                    {t.lift(partialIndex), row, pc(0)}, write);
      }
      // Each thread writes two adjacent columns of rows g and g + 8 per
      // tile.
      for (int64_t nt = 0; nt < oTiles; ++nt) {
        for (int h = 0; h < 2; ++h) {
          Value row = add(rowBase, pc(8 * h));
          Value col = add(mul(quad, pc(2)), pc(8 * nt));
          Value pair[2];
          for (int e = 0; e < 2; ++e) {
            pair[e] = fmul(o[4 * nt + 2 * h + e], inv[h]);
            if (!outElem.isF32() && !ops.numSplits)
              pair[e] = arith::TruncFOp::create(
                  b, loc, t.perThreadType(outElem), pair[e]);
          }
          if (cfg.tmaStore) {
            Value blockRow = add(add(tileRow(rt), group), pc(8 * h));
            Value all = t.lift(arith::ConstantIntOp::create(b, loc, 1, 1));
            // The pair stays within one 16-byte chunk: col is even.
            t.storePair(pair[0], pair[1], sO,
                        {div(col, pc(64)), blockRow,
                         swizzledColumn(blockRow, rem(col, pc(64)))},
                        all);
            continue;
          }
          SmallVector<Value> idx;
          if (ops.numSplits)
            idx.push_back(t.lift(partialIndex));
          else
            for (Value p : qPrefix)
              idx.push_back(t.lift(p));
          idx.push_back(row);
          idx.push_back(col);
          t.storePair(pair[0], pair[1],
                      ops.numSplits ? ops.partialOut : ops.out, idx,
                      cmp(arith::CmpIPredicate::slt, row, t.lift(lq)));
        }
      }
    }
  }
  if (!cfg.tmaStore)
    return;
  // The threads' writes are visible to the TMA unit (the async proxy).
  uint32_t before = acting ? actAs(allConsumers()) : 0;
  t.fenceAsyncProxy();
  actAs(before);
  Value issue = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (cfg.warpSpecialized) {
    consumersSync();
    // The first consumer thread stores the whole block.
    t.setIssuer(cmp(arith::CmpIPredicate::eq,
                    add(mul(warp, pc(kWarpSize)), lane), pc(0)));
    if (acting)
      actAs(1u << 1);
  } else {
    t.barrier();
  }
  SmallVector<int64_t> box = tmaPanelBox(qPrefix.size() + 2, bm);
  forEachTmaPanel(qPrefix, q0, ci(0), bm, dv,
                  [&](ArrayRef<Value> coords, Value panelOffset) {
                    t.tmaStore(ops.out, ops.outMap, coords, panelOffset, box,
                               issue);
                  });
  // Shared memory lives until the stores have read it.
  t.waitTmaStores();
}

SmallVector<int64_t> mlir::attn::gpu_kernel::tmaPanelBox(int64_t rank,
                                                         int64_t rows) {
  SmallVector<int64_t> box(rank - 2, 1);
  box.append({rows, kPanelRowBytes / 2});
  return box;
}

void mlir::attn::gpu_kernel::emitFlashAttentionBlock(
    SimtTarget &target, const FlashKernelConfig &cfg,
    const FlashKernelOperands &operands) {
  FlashAttentionEmitter(target, cfg, operands).emit();
}
