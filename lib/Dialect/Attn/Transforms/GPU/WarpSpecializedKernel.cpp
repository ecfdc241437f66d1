//===- WarpSpecializedKernel.cpp - producer and consumer warpgroups -------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The warp-specialized wgmma kernel (FlashAttention-3's design): a producer
// warpgroup, one thread of which issues the TMA loads of K and V into two
// stages of buffers, each with a full and an empty mbarrier, and one to
// three consumer warpgroups that compute a 64-row slab each and release
// every buffer as soon as their wgmma have read it; optionally with the
// intra-warpgroup overlap (a block's softmax while the previous block's
// P V runs) and the consumers' pingpong (turns on named barriers).
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

void FlashAttentionEmitter::produceTile(bool value, Value block, Value pred,
                                        int64_t extraBytes) {
  int64_t bn = cfg.blockKV;
  int64_t cols = value ? cfg.headDimV : cfg.headDimQK;
  Value buf = rem(block, ci(2));
  uint32_t before = actAs(kProducer);
  // The buffer is free once block - 2 has completed its empty barrier's
  // phase.
  Value reuse = arith::AndIOp::create(
      b, loc, pred, cmp(arith::CmpIPredicate::sge, block, ci(2)));
  auto ifOp = scf::IfOp::create(b, loc, reuse, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    t.waitBarrier(
        emptyBarrier(value, buf),
        blockPhaseParity(arith::SubIOp::create(b, loc, block, ci(2))));
  }
  Value full = fullBarrier(value, buf);
  t.expectBytes(full, bn * cols * cfg.elemBytes() + extraBytes, pred);
  // (`block` counts this block's steps; a split's start at kvBegin.)
  loadTileTma(value ? ops.value : ops.key, value ? ops.valueMap : ops.keyMap,
              kvPrefix, mul(add(kvBegin, block), ci(bn)),
              value ? vBufferOffset(buf) : kBufferOffset(buf), bn, cols, full,
              pred);
  actAs(before);
}

void FlashAttentionEmitter::emitWarpSpecialized() {
  int64_t d = cfg.headDimQK, bm = cfg.blockQ;
  // Full barriers: one arrival (the producer's, with the bytes) per phase;
  // empty barriers: one per consumer warp. See fullBarrier/emptyBarrier.
  int64_t consumerWarps = cfg.computeThreads() / kWarpSize;
  SmallVector<int64_t> arrivals = {
      1, 1, 1, 1, consumerWarps, consumerWarps, consumerWarps, consumerWarps};
  assert(static_cast<int64_t>(arrivals.size()) == cfg.numBarriers() &&
         "the static shared memory holds cfg.numBarriers() mbarriers");
  t.initBarriers(arrivals);
  t.barrier();

  // Block 0's K phase also brings Q. Nothing is loaded for a block with no
  // K/V step (it writes zeros): every load issued is waited for.
  auto produceFirst = [&](int64_t blocks) {
    uint32_t before = actAs(kProducer);
    Value any = cmp(arith::CmpIPredicate::sgt, numKV, ci(0));
    produceTile(/*value=*/false, ci(0), any, bm * d * cfg.elemBytes());
    loadTileTma(ops.query, ops.queryMap, qPrefix, q0, ci(0), bm, d,
                fullBarrier(false, ci(0)), any);
    produceTile(/*value=*/true, ci(0), any);
    for (int64_t block = 1; block < blocks; ++block) {
      Value more = cmp(arith::CmpIPredicate::sgt, numKV, ci(block));
      produceTile(/*value=*/false, ci(block), more);
      produceTile(/*value=*/true, ci(block), more);
    }
    actAs(before);
  };

  if (!t.hasProducerWarpGroup()) {
    // The emulation runs the consumers' programs; the producer fills both
    // buffers, then refills each as soon as the consumers release it.
    produceFirst(2);
    emitConsumerLoop(/*produce=*/true);
    t.endBarriers();
    return;
  }

  Value tid = t.threadId();
  Value producerGroup =
      cmp(arith::CmpIPredicate::ult, tid, pc(kThreadsPerWarpGroup));
  auto split =
      scf::IfOp::create(b, loc, producerGroup, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(split.thenBlock());
    if (cfg.producerRegisters())
      t.setMaxRegisters(cfg.producerRegisters(), /*increase=*/false);
    // One thread issues every load; it waits for each buffer's release.
    auto issuer = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, tid, pc(0)), false);
    b.setInsertionPointToStart(issuer.thenBlock());
    produceFirst(1);
    auto loop = scf::ForOp::create(b, loc, ci(1), numKV, ci(1));
    b.setInsertionPointToStart(loop.getBody());
    Value always = arith::ConstantIntOp::create(b, loc, 1, 1);
    produceTile(/*value=*/false, loop.getInductionVar(), always);
    produceTile(/*value=*/true, loop.getInductionVar(), always);

    b.setInsertionPointToStart(split.elseBlock());
    if (cfg.consumerRegisters())
      t.setMaxRegisters(cfg.consumerRegisters(), /*increase=*/true);
    setThread(arith::SubIOp::create(b, loc, tid, pc(kThreadsPerWarpGroup)));
    emitConsumerLoop(/*produce=*/false);
  }
}

void FlashAttentionEmitter::emitConsumerLoop(bool produce) {
  if (cfg.intraWarpgroupOverlap)
    emitOverlappedConsumers(produce);
  else
    emitConsumers(produce);
}

void FlashAttentionEmitter::emitConsumers(bool produce) {
  // On the GPU each thread runs its own warpgroup's program. The emulation
  // runs every consumer warpgroup's as a 128-lane program of its own, one
  // after the other at each phase of a step: `copies` of them.
  int64_t copies = produce ? cfg.consumerGroups() : 1;
  startTurns(copies, produce);
  int64_t sTiles = cfg.blockKV / 8;
  SmallVector<Value> inits;
  for (int64_t c = 0; c < copies; ++c)
    inits.append(initialLoopState());
  size_t stateSize = inits.size() / copies;

  auto loop = scf::ForOp::create(b, loc, ci(0), numKV, ci(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs();
    Value buf = rem(j, ci(2));
    Value parity = blockPhaseParity(j);
    Value refill = add(j, ci(2));
    Value more = cmp(arith::CmpIPredicate::slt, refill, numKV);

    SmallVector<SmallVector<SmallVector<Value>>> s(copies);
    SmallVector<SmallVector<Value>> acc(copies), yield(copies);
    consumersWait(fullBarrier(false, buf), parity);
    for (int64_t c = 0; c < copies; ++c) {
      Value slabOffset = selectConsumer(c, produce);
      s[c].assign(1, SmallVector<Value>(sTiles * 4, pf(0.0)));
      awaitTurn();
      issueScoresWgmma(s[c], buf, slabOffset);
      passTurn();
      t.wgmmaWait(0, s[c][0]);
      releaseBuffer(emptyBarrier(false, buf));
    }
    if (produce)
      produceTile(/*value=*/false, refill, more);

    for (int64_t c = 0; c < copies; ++c) {
      selectConsumer(c, produce);
      computeLogits(s[c], {0}, add(kvBegin, j));
      onlineSoftmax(0, state.slice(c * stateSize, stateSize), s[c][0], acc[c],
                    yield[c]);
    }

    consumersWait(fullBarrier(true, buf), parity);
    for (int64_t c = 0; c < copies; ++c) {
      selectConsumer(c, produce);
      issuePVWgmma(acc[c], s[c][0], buf);
      t.wgmmaWait(0, acc[c]);
      releaseBuffer(emptyBarrier(true, buf));
    }
    if (produce)
      produceTile(/*value=*/true, refill, more);

    SmallVector<Value> next;
    for (int64_t c = 0; c < copies; ++c) {
      next.append(yield[c]);
      next.append(acc[c]);
    }
    scf::YieldOp::create(b, loc, next);
  }
  writeOutput(loop.getResults(), copies,
              [&](int64_t c) { (void)selectConsumer(c, produce); });
}

Value FlashAttentionEmitter::selectConsumer(int64_t c, bool emulated) {
  Type i64 = b.getI64Type();
  int64_t slabDescBytes = (64 * kPanelRowBytes) >> 4;
  if (!emulated)
    return arith::IndexCastOp::create(b, loc, i64,
                                      mul(div(warp, pc(4)), pc(slabDescBytes)));
  actAs(1u << (c + 1));
  setThread(add(t.threadId(), pc(c * kThreadsPerWarpGroup)));
  return arith::ConstantIntOp::create(b, loc, i64, c * slabDescBytes);
}

Value FlashAttentionEmitter::blockPhaseParity(Value block) {
  return cmp(arith::CmpIPredicate::eq, rem(div(block, ci(2)), ci(2)), ci(1));
}

void FlashAttentionEmitter::startTurns(int64_t copies, bool produce) {
  if (!takesTurns())
    return;
  for (int64_t c = 0; c < copies; ++c) {
    if (produce)
      selectConsumer(c, produce);
    t.namedBarrierArrive(pc(kTurnBarrier), 2 * kThreadsPerWarpGroup,
                         cmp(arith::CmpIPredicate::ult, warp, pc(4)));
  }
}

void FlashAttentionEmitter::awaitTurn() {
  if (takesTurns())
    t.namedBarrier(add(pc(kTurnBarrier), div(warp, pc(4))),
                   2 * kThreadsPerWarpGroup);
}

void FlashAttentionEmitter::passTurn() {
  if (!takesTurns())
    return;
  Value next = rem(add(div(warp, pc(4)), pc(1)), pc(cfg.consumerGroups()));
  t.namedBarrierArrive(add(pc(kTurnBarrier), next), 2 * kThreadsPerWarpGroup);
}

void FlashAttentionEmitter::releaseBuffer(Value barrier) {
  // One arrival per warp, once its wgmma have read the buffer.
  t.arriveBarrier(barrier, cmp(arith::CmpIPredicate::eq, lane, pc(0)));
}

void FlashAttentionEmitter::emitOverlappedConsumers(bool produce) {
  // FlashAttention-3's intra-warpgroup overlap: step j issues S_j and then
  // P_{j-1} V_{j-1}, waits for S_j only, and runs S_j's softmax while the
  // tensor cores compute P_{j-1} V_{j-1}; the rescaling of O that S_j's
  // softmax asks for waits until step j + 1, before its P V is issued
  // (O is complete then). P and that rescaling are carried to the next
  // step; block 0's S and softmax come before the loop, the last P V
  // after it.
  int64_t copies = produce ? cfg.consumerGroups() : 1;
  int64_t sTiles = cfg.blockKV / 8, oTiles = cfg.headDimV / 8;
  int64_t kSteps = cfg.blockKV / 16;
  startTurns(copies, produce);
  bool lazy = cfg.rescaleThreshold >= 0;
  // Each copy's state: row maxima and sums (4), O (oTiles * 4), P (the
  // packed A fragments of P V, as carried by the target), alpha (2), and
  // with lazy rescaling whether the maxima moved.
  SmallVector<PackedReg> zeroP;
  for (int64_t i = 0; i < 4 * kSteps; ++i)
    zeroP.push_back(t.pack(pf(0.0), pf(0.0)));
  int64_t partsPerReg = t.packedParts(zeroP[0]).size();
  int64_t base = 4 + oTiles * 4, pSize = 4 * kSteps * partsPerReg;
  size_t stateSize = base + pSize + 2 + (lazy ? 1 : 0);
  struct CopyState {
    SmallVector<Value> stats, acc;
    SmallVector<PackedReg> p;
    PendingRescale pending;
  };
  auto unpack = [&](ValueRange st) {
    CopyState c;
    c.stats.assign(st.begin(), st.begin() + 4);
    c.acc.assign(st.begin() + 4, st.begin() + base);
    for (int64_t i = 0; i < 4 * kSteps; ++i)
      c.p.push_back(
          t.fromPackedParts(st.slice(base + i * partsPerReg, partsPerReg)));
    c.pending.alpha[0] = st[base + pSize];
    c.pending.alpha[1] = st[base + pSize + 1];
    if (lazy)
      c.pending.moved = st[base + pSize + 2];
    return c;
  };
  auto pack = [&](const CopyState &c) {
    SmallVector<Value> out(c.stats);
    out.append(c.acc);
    for (const PackedReg &r : c.p)
      out.append(t.packedParts(r));
    out.append({c.pending.alpha[0], c.pending.alpha[1]});
    if (lazy)
      out.push_back(c.pending.moved);
    return out;
  };
  auto initial = [&]() {
    CopyState c;
    SmallVector<Value> st = initialLoopState();
    c.stats.assign(st.begin(), st.begin() + 4);
    c.acc.assign(st.begin() + 4, st.end());
    c.p = zeroP;
    c.pending = {{pf(1.0), pf(1.0)}, {}};
    if (lazy)
      c.pending.moved = t.lift(arith::ConstantIntOp::create(b, loc, 0, 1));
    return c;
  };
  // S_j of every copy, then what `between` issues for it (its P V, which
  // stays in flight while S_j is waited for), K released; the producer's
  // K refill.
  auto scores = [&](Value j, SmallVector<SmallVector<Value>> &s,
                    function_ref<void(int64_t)> between) {
    Value buf = rem(j, ci(2));
    s.assign(copies, SmallVector<Value>(sTiles * 4, pf(0.0)));
    for (int64_t c = 0; c < copies; ++c) {
      Value slab = selectConsumer(c, produce);
      SmallVector<SmallVector<Value>> one(1, s[c]);
      awaitTurn();
      issueScoresWgmma(one, buf, slab);
      int pendingGroups = 0;
      if (between) {
        between(c);
        pendingGroups = 1;
      }
      passTurn();
      t.wgmmaWait(pendingGroups, one[0]);
      s[c] = one[0];
      releaseBuffer(emptyBarrier(false, buf));
    }
    if (produce) {
      Value refill = add(j, ci(2));
      produceTile(/*value=*/false, refill,
                  cmp(arith::CmpIPredicate::slt, refill, numKV));
    }
  };
  // Copy c's softmax of S_j, from and into its state `st`: new row
  // statistics, P and pending rescale (O is left as it is).
  auto softmax = [&](Value j, CopyState &st, SmallVector<Value> &sc) {
    SmallVector<SmallVector<Value>> one(1, sc);
    computeLogits(one, {0}, add(kvBegin, j));
    SmallVector<Value> stIn(st.stats), yield, accUnused;
    stIn.append(st.acc);
    onlineSoftmax(0, stIn, one[0], accUnused, yield, &st.pending);
    st.stats.assign(yield.begin(), yield.end());
    st.p.clear();
    for (int64_t kk = 0; kk < kSteps; ++kk)
      st.p.append(probabilityFragment(one[0], kk));
  };
  // Copy c's O rescaled as its last softmax asked, then P V of K/V buffer
  // `buf` issued (not waited for).
  auto issuePV = [&](CopyState &c, Value buf) {
    SmallVector<Value> noSums;
    rescaleRows(c.acc, noSums, c.pending);
    issuePVFragments(c.acc, c.p, buf);
  };

  // Block 0, if any: S_0 and its softmax.
  Value any = cmp(arith::CmpIPredicate::sgt, numKV, ci(0));
  SmallVector<Value> inits;
  for (int64_t c = 0; c < copies; ++c)
    inits.append(pack(initial()));
  auto first = scf::IfOp::create(b, loc, ValueRange(inits).getTypes(), any,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    consumersWait(fullBarrier(false, ci(0)), blockPhaseParity(ci(0)));
    SmallVector<SmallVector<Value>> s;
    scores(ci(0), s, {});
    SmallVector<Value> out;
    for (int64_t c = 0; c < copies; ++c) {
      selectConsumer(c, produce);
      CopyState state = initial();
      softmax(ci(0), state, s[c]);
      out.append(pack(state));
    }
    scf::YieldOp::create(b, loc, out);
    b.setInsertionPointToStart(first.elseBlock());
    scf::YieldOp::create(b, loc, inits);
  }

  // Step j >= 1: S_j, then P_{j-1} V_{j-1}; S_j's softmax; P V waited for.
  auto loop = scf::ForOp::create(b, loc, ci(1), numKV, ci(1),
                                 ValueRange(first.getResults()));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value prev = arith::SubIOp::create(b, loc, j, ci(1));
    Value prevBuf = rem(prev, ci(2));
    ValueRange state = loop.getRegionIterArgs();
    SmallVector<CopyState> states;
    for (int64_t c = 0; c < copies; ++c)
      states.push_back(unpack(state.slice(c * stateSize, stateSize)));
    consumersWait(fullBarrier(false, rem(j, ci(2))), blockPhaseParity(j));
    SmallVector<SmallVector<Value>> s;
    scores(j, s, [&](int64_t c) {
      // (V of block j - 1 came with it, long before: one wait, for the
      // first copy.)
      if (c == 0)
        consumersWait(fullBarrier(true, prevBuf), blockPhaseParity(prev));
      issuePV(states[c], prevBuf);
    });
    SmallVector<Value> out;
    for (int64_t c = 0; c < copies; ++c) {
      selectConsumer(c, produce);
      CopyState next = states[c];
      softmax(j, next, s[c]);
      t.wgmmaWait(0, next.acc);
      releaseBuffer(emptyBarrier(true, prevBuf));
      out.append(pack(next));
    }
    if (produce) {
      Value refill = add(j, ci(1));
      produceTile(/*value=*/true, refill,
                  cmp(arith::CmpIPredicate::slt, refill, numKV));
    }
    scf::YieldOp::create(b, loc, out);
  }

  // The last block's P V.
  SmallVector<CopyState> finals;
  SmallVector<Value> results;
  for (int64_t c = 0; c < copies; ++c) {
    finals.push_back(unpack(loop.getResults().slice(c * stateSize, stateSize)));
    results.append(finals[c].stats);
    results.append(finals[c].acc);
  }
  auto last = scf::IfOp::create(b, loc, ValueRange(results).getTypes(), any,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(last.thenBlock());
    Value lastBlock = arith::SubIOp::create(b, loc, numKV, ci(1));
    Value lastBuf = rem(lastBlock, ci(2));
    consumersWait(fullBarrier(true, lastBuf), blockPhaseParity(lastBlock));
    SmallVector<Value> out;
    for (int64_t c = 0; c < copies; ++c) {
      selectConsumer(c, produce);
      CopyState &st = finals[c];
      issuePV(st, lastBuf);
      t.wgmmaWait(0, st.acc);
      releaseBuffer(emptyBarrier(true, lastBuf));
      out.append(st.stats);
      out.append(st.acc);
    }
    scf::YieldOp::create(b, loc, out);
    b.setInsertionPointToStart(last.elseBlock());
    scf::YieldOp::create(b, loc, results);
  }
  writeOutput(last.getResults(), copies,
              [&](int64_t c) { (void)selectConsumer(c, produce); });
}
