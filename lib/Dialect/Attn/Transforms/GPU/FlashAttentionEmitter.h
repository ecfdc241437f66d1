//===- FlashAttentionEmitter.h - emits one attention kernel ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The emitter of the per-block attention program (FlashAttentionKernel.cpp
// describes it), shared by its two halves: FlashAttentionKernel.cpp (the
// state, the softmax, the products, the kernel in which every thread
// computes, the epilogue) and WarpSpecializedKernel.cpp (the producer and
// consumer warpgroups of the warp-specialized wgmma kernel). Private to
// the GPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONEMITTER_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONEMITTER_H

#include "FlashAttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <cmath>

namespace mlir {
namespace attn {
namespace gpu_kernel {

/// The smallest scale * log2(e) applied in the exponent rather than to the
/// scores: 2 * kHiddenLogit / 1e-6 is still a finite f32.
constexpr double kMinDeferredScale = 1.0e-6;
/// A row of a wgmma operand tile: a 64-column panel of 16-bit elements, the
/// width of the 128-byte swizzle. 8 rows (the swizzle's repeat) are the
/// descriptors' stride byte offset; K-major descriptors do not use the
/// leading byte offset, which is set to 16.
constexpr int64_t kPanelRowBytes = 128;
constexpr int64_t kPanelGroupBytes = 8 * kPanelRowBytes;
constexpr int64_t kUnusedLBO = 16;
/// The named barrier of the consumer warpgroups of a warp-specialized
/// kernel (barrier 0 is the whole block's), and the first of their
/// pingpong barriers, one per consumer warpgroup.
constexpr int64_t kConsumerBarrier = 1;
constexpr int64_t kTurnBarrier = 2;

/// Whether the op adds a term to the scores: a bias, or a float mask.
inline bool hasAdditiveTerm(const FlashKernelOperands &ops) {
  return ops.bias ||
         (ops.mask &&
          !getElementTypeOrSelf(ops.mask.getType()).isSignlessInteger(1));
}

/// Emits the program of one block of the kernel that `cfg` describes
/// through `t`: the GPU's ops, or their CPU emulation.
class FlashAttentionEmitter {
public:
  FlashAttentionEmitter(SimtTarget &t, const FlashKernelConfig &cfg,
                        const FlashKernelOperands &ops)
      : t(t), b(t.builder()), loc(t.getLoc()), cfg(cfg), ops(ops) {
    // With a positive scale, scores stay unscaled until the exponent, where
    // scale * log2(e) costs one fma per score (FlashAttention-2's
    // scale_apply_exp2): maxima are taken on unscaled scores and scaled once
    // per row. A scale <= 0 reverses the order of the scores, and a tiny one
    // would put the unscaled hidden value past f32's range: those are
    // applied to the scores up front. So is any scale with additive terms
    // (bias, float masks): they can take a whole row far down (-1e9
    // padding), where the rounding of the row maximum's product, up to
    // half its ulp (64 at -1e9), would stay in each exponent of the fma and
    // overflow P or flush it to 0; scaled first, x - max is exact at the
    // maximum and never positive.
    double c = cfg.scale / std::log(2.0);
    if (c >= kMinDeferredScale && !hasAdditiveTerm(ops)) {
      scoreScale = 1.0;
      exponentScale = c;
    } else {
      scoreScale = c;
      exponentScale = 1.0;
    }
  }

  void emit();

private:
  // Block-uniform scalars.
  Value ci(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cf(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  // Per-thread values (scalars on the GPU, vectors in emulation).
  Value pc(int64_t v) { return t.lift(ci(v)); }
  Value pf(double v) { return t.lift(cf(v)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minS(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxS(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sel(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value fma(Value x, Value y, Value z) { return t.fma(x, y, z); }
  /// The hidden score in the unit of the scores before the exponent
  /// (`scoreScale` applied). Scaled by `exponentScale` it stays at or below
  /// kHiddenLogit, so a row that saw only hidden scores keeps the maximum
  /// kHiddenLogit.
  double hiddenScore() const {
    return exponentScale == 1.0 ? kHiddenLogit
                                : 2.0 * kHiddenLogit / exponentScale;
  }
  Value exp2(Value x) { return t.exp2(x); }
  Value dim(Value memref, int64_t i) {
    return memref::DimOp::create(b, loc, memref, i);
  }

  MemRefType sharedType(ArrayRef<int64_t> shape) {
    return MemRefType::get(shape, cfg.elemType, MemRefLayoutAttrInterface{},
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  }

  /// Issues the cp.async copies of rows [rowBase, rowBase + rows) (`cols`
  /// columns) of global[prefix..., row, :] into dst[dstPrefix..., :, :].
  /// Rows at or past `limit` are zero-filled without reading; `lastRow`
  /// (>= 0) keeps every source address inside the tensor.
  void loadTile(Value global, ArrayRef<Value> prefix, Value rowBase,
                Value limit, Value lastRow, Value dst,
                ArrayRef<Value> dstPrefix, int64_t rows, int64_t cols);
  /// Calls `copy(coords, byteOffset)` for each 64-column panel of rows
  /// [rowBase, rowBase + rows) of global[prefix..., row, :] (`cols`
  /// columns): the panel's coordinates in the tensor, and its place in
  /// shared memory, the panels `rows` x 128 bytes apart from `byteOffset`.
  void forEachTmaPanel(
      ArrayRef<Value> prefix, Value rowBase, Value byteOffset, int64_t rows,
      int64_t cols,
      function_ref<void(ArrayRef<Value> coords, Value panelOffset)> copy) {
    for (int64_t p = 0; p < cols / 64; ++p) {
      SmallVector<Value> coords(prefix);
      coords.append({rowBase, ci(64 * p)});
      copy(coords, add(byteOffset, ci(p * rows * kPanelRowBytes)));
    }
  }
  /// The TMA loads of rows [rowBase, rowBase + rows) of
  /// global[prefix..., row, :] (`cols` columns) through `map`, from byte
  /// `byteOffset` of shared memory on (see forEachTmaPanel), completing on
  /// mbarrier `barrier`; issued where `pred` holds. Rows past the tensor
  /// arrive as zeros.
  void loadTileTma(Value global, Value map, ArrayRef<Value> prefix,
                   Value rowBase, Value byteOffset, int64_t rows, int64_t cols,
                   Value barrier, Value pred) {
    SmallVector<int64_t> box = tmaPanelBox(prefix.size() + 2, rows);
    forEachTmaPanel(prefix, rowBase, byteOffset, rows, cols,
                    [&](ArrayRef<Value> coords, Value panelOffset) {
                      t.tmaLoad(global, map, coords, panelOffset, box, barrier,
                                pred);
                    });
  }
  /// Byte offsets in shared memory of K and V buffer `buf` (uniform).
  Value kBufferOffset(Value buf) {
    return add(ci(cfg.sharedKOffset()), mul(buf, ci(cfg.sharedKBytes() / 2)));
  }
  Value vBufferOffset(Value buf) {
    return add(ci(cfg.sharedVOffset()), mul(buf, ci(cfg.sharedVBytes() / 2)));
  }
  /// First block row of the warp's row tile `rt` (per thread): consecutive
  /// rows per warp for mma.sync; for wgmma, rows 16 w .. 16 w + 15 of the
  /// 64-row slab `rt` (the accumulator layout of wgmma m64).
  Value tileRow(int64_t rt) {
    if (cfg.wgmma)
      return add(mul(warp, pc(16)), pc(64 * rt));
    return add(mul(warp, pc(cfg.rowsPerWarp())), pc(16 * rt));
  }
  /// The query index of row `row` (per thread) in the causal rule: the row
  /// itself, or with a causal period (row + offset) mod P.
  Value queryIndex(Value row) {
    if (!ops.causalPeriod)
      return row;
    if (rowShift)
      row = add(row, t.lift(rowShift));
    return rem(row, t.lift(ops.causalPeriod));
  }
  /// The column, within its 64-column panel, where element `col` of row
  /// `row` is stored in the 128-byte-swizzled layout (per thread).
  Value swizzledColumn(Value row, Value col) {
    Value chunk = div(rem(col, pc(64)), pc(8));
    Value swizzled = arith::XOrIOp::create(b, loc, chunk, rem(row, pc(8)));
    return add(mul(swizzled, pc(8)), rem(col, pc(8)));
  }
  /// The wgmma matrix descriptor (uniform i64) of a 128-byte-swizzled
  /// operand starting at byte `byteOffset` (uniform index) of shared memory,
  /// with leading and stride byte offsets `lbo` and `sbo`.
  Value wgmmaDescriptor(Value byteOffset, int64_t lbo, int64_t sbo) {
    Type i64 = b.getI64Type();
    auto c64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    Value addr = t.sharedAddress(byteOffset);
    Value start = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, addr, c64(0x3FFFF)), c64(4));
    // Swizzle mode 1 (128 bytes) in bits 62-63.
    int64_t fields = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1LL << 62);
    return arith::OrIOp::create(b, loc, start, c64(fields));
  }
  /// `desc` with its start address `bytes` further (a multiple of 16): one
  /// add to the start field, which cannot carry out of its 14 bits as
  /// shared addresses stay below 2^18.
  Value advanceDescriptor(Value desc, int64_t bytes) {
    if (bytes == 0)
      return desc;
    return arith::AddIOp::create(
        b, loc, desc,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4));
  }
  /// acc[rt] n8 tiles 2np and 2np+1 += a[rt] times the two B fragments of
  /// one ldmatrix.x4 (`frag`), for every row tile rt: one fragment load
  /// feeds the mma of all row tiles.
  void mmaFragmentPair(ArrayRef<SmallVector<PackedReg>> a,
                       ArrayRef<PackedReg> frag, int64_t np,
                       MutableArrayRef<SmallVector<Value>> acc) {
    for (int64_t h = 0; h < 2; ++h) {
      int64_t nt = 2 * np + h;
      for (size_t rt = 0; rt < acc.size(); ++rt) {
        std::array<Value, 4> r =
            t.mma(a[rt], {frag[2 * h], frag[2 * h + 1]},
                  ArrayRef<Value>(acc[rt]).slice(4 * nt, 4));
        for (int i = 0; i < 4; ++i)
          acc[rt][4 * nt + i] = r[i];
      }
    }
  }
  /// TF32 path: s += Q K^T of the warp's row tile `rt` and key block `buf`,
  /// with mma.sync m16n8k8 and plain shared-memory loads.
  void scoresTF32(SmallVector<Value> &s, Value sQ, Value sK, Value buf,
                  int64_t rt);
  /// TF32 path: acc += P V, P (in the C layout of `p`) moved to the A
  /// layout with shuffles.
  void accumulatePVTF32(SmallVector<Value> &acc, ArrayRef<Value> p, Value sV,
                        Value buf);
  /// The A fragment of k step `kk` of P V: the accumulators of key tiles
  /// 2 kk and 2 kk + 1 of P (C layout), rounded and packed, in the A
  /// layout of mma.sync m16n8k16 (and of wgmma m64k16, per warp).
  SmallVector<PackedReg> probabilityFragment(ArrayRef<Value> p, int64_t kk) {
    const Value *p0 = &p[4 * (2 * kk)];
    const Value *p1 = &p[4 * (2 * kk + 1)];
    return {t.pack(p0[0], p0[1]), t.pack(p0[2], p0[3]), t.pack(p1[0], p1[1]),
            t.pack(p1[2], p1[3])};
  }
  /// wgmma path: issues acc += P V for one slab (P rounded, from
  /// registers) as one wgmma group; `acc` is in flight until waited for.
  void issuePVWgmma(SmallVector<Value> &acc, ArrayRef<Value> p, Value buf);
  /// The same with P already the A fragments (probabilityFragment).
  void issuePVFragments(SmallVector<Value> &acc, SmallVector<PackedReg> a,
                        Value buf);
  static SmallVector<Value> flatten(ArrayRef<SmallVector<Value>> tiles) {
    SmallVector<Value> flat;
    for (const SmallVector<Value> &tile : tiles)
      flat.append(tile);
    return flat;
  }
  static void unflatten(ArrayRef<Value> flat,
                        MutableArrayRef<SmallVector<Value>> tiles) {
    for (SmallVector<Value> &tile : tiles) {
      tile.assign(flat.begin(), flat.begin() + tile.size());
      flat = flat.drop_front(tile.size());
    }
  }
  /// An f32 value as mma operands: {tf32(x)}, or with splitTF32
  /// {hi, lo} = {tf32(x), tf32(x - hi)} (x - hi is exact in f32).
  SmallVector<Value, 2> toTF32(Value x) {
    Value hi = t.roundToTF32(x);
    if (!cfg.splitTF32)
      return {hi};
    return {hi, t.roundToTF32(arith::SubFOp::create(b, loc, x, hi))};
  }
  /// A shared-memory element, per thread, as mma operands (toTF32).
  SmallVector<Value, 2> loadTF32(Value smem, ArrayRef<Value> prefix, Value row,
                                 Value col) {
    SmallVector<Value> idx;
    for (Value v : prefix)
      idx.push_back(t.lift(v));
    idx.push_back(row);
    idx.push_back(col);
    return toTF32(t.load(smem, idx));
  }
  /// c += A B on the TF32 path, from fragments given as toTF32 parts
  /// (a[i][part], bf[i][part]): one mma, or with splitTF32 three, the small
  /// terms first: lo hi + hi lo + hi hi (lo lo is below f32's precision).
  std::array<Value, 4> mmaTF32Parts(ArrayRef<SmallVector<Value, 2>> a,
                                    ArrayRef<SmallVector<Value, 2>> bf,
                                    ArrayRef<Value> c) {
    auto part = [](ArrayRef<SmallVector<Value, 2>> frags, size_t which) {
      SmallVector<Value> out;
      for (const SmallVector<Value, 2> &f : frags)
        out.push_back(f[which]);
      return out;
    };
    std::array<Value, 4> acc = {c[0], c[1], c[2], c[3]};
    if (cfg.splitTF32) {
      acc = t.mmaTF32(part(a, 1), part(bf, 0), acc);
      acc = t.mmaTF32(part(a, 0), part(bf, 1), acc);
    }
    return t.mmaTF32(part(a, 0), part(bf, 0), acc);
  }
  /// s[i] (the scores of row tile `rt`) with masks, bias and the causal
  /// rule applied (base-2 logits).
  SmallVector<Value> applyMasks(ArrayRef<Value> s, Value kv0, int64_t rt);
  /// Indices of element (row, col) of the broadcasting [B..., Hq, Lq, Lk]
  /// operand `m` (per thread).
  /// The indices of score operand `m` (mask or bias) at (row, col), both
  /// clamped into the tensor (for a `pair`, col to the last pair's start).
  SmallVector<Value> scoreOperandIndices(Value m, Value row, Value col,
                                         bool pair = false);
  /// Whether the elements (col, col + 1), col even, of score operand `m`
  /// can be read by one aligned load everywhere: a uniform i1, or null
  /// where the keys are broadcast.
  Value pairedLoadCondition(Value m);
  /// Score operand `m` at the score fragment's elements (see applyMasks),
  /// read by pairs or not.
  SmallVector<Value> loadScoreOperand(Value m, bool pairs, ArrayRef<Value> rows,
                                      Value colBase, int64_t count);
  /// The scores `s` with bias and additive-mask terms added and hidden
  /// elements (past lastOffset of their row, or masked out) set hidden.
  SmallVector<Value> combine(ArrayRef<Value> s, ArrayRef<Value> biasValues,
                             ArrayRef<Value> maskValues,
                             ArrayRef<Value> lastOffset, Value additiveScale);

  /// The block's uniform coordinates, shared-memory views and K/V step
  /// count (the members below).
  void setUp();
  /// warp, lane, group and quad of the thread `tid` (per thread) among the
  /// threads that compute.
  void setThread(Value tid);
  /// The kernel that is not warp specialized: every thread computes.
  void emitBlock();
  /// The warp-specialized kernel: a producer warpgroup and
  /// cfg.consumerGroups() consumer warpgroups.
  void emitWarpSpecialized();
  /// The consumer warpgroups' K/V loop and epilogue; with `produce` (the
  /// emulation's interleaving), every consumer warpgroup's program, and
  /// the producer's loads of block j + 2 as soon as block j's buffers are
  /// released.
  void emitConsumers(bool produce);
  /// The same with FlashAttention-3's intra-warpgroup overlap (see there).
  void emitOverlappedConsumers(bool produce);
  /// The consumers' loop the config asks for: one of the two above.
  void emitConsumerLoop(bool produce);
  /// Selects consumer warpgroup c's thread coordinates where `emulated`
  /// (the emulation's program c; on the GPU the thread's own) and returns
  /// its slab's offset in Q's wgmma descriptors (i64, uniform in the
  /// warpgroup: per thread on the GPU, a constant per program emulated).
  Value selectConsumer(int64_t c, bool emulated);
  /// The parity of phase block / 2 of buffer block % 2's barriers: the one
  /// K/V block `block` completes (its full barriers; its empty ones, once
  /// the consumers are done with it).
  Value blockPhaseParity(Value block);
  /// The consumer warps' arrival on an empty barrier.
  void releaseBuffer(Value barrier);
  /// The emulation of the warp-specialized kernel: the warpgroups whose
  /// program follows (SimtTarget::actAs; bit 0 the producer, bit c + 1
  /// consumer c); returns those before.
  uint32_t actAs(uint32_t groups) {
    uint32_t before = acting;
    acting = groups;
    if (groups)
      t.actAs(groups);
    return before;
  }
  uint32_t allConsumers() const {
    return ((1u << cfg.consumerGroups()) - 1) << 1;
  }
  static constexpr uint32_t kProducer = 1;
  /// The consumers' wait for a full barrier's phase: every consumer
  /// warpgroup waits (the emulation emits one wait for all).
  void consumersWait(Value barrier, Value parity) {
    uint32_t before = actAs(allConsumers());
    t.waitBarrier(barrier, parity);
    actAs(before);
  }
  /// The consumers' bar.sync on kConsumerBarrier (every consumer
  /// warpgroup syncs; the emulation emits one for all).
  void consumersSync() {
    uint32_t before = acting ? actAs(allConsumers()) : 0;
    t.namedBarrier(pc(kConsumerBarrier), cfg.computeThreads());
    actAs(before);
  }
  /// Pingpong (cfg.pingpong): consumer warpgroup c waits for its turn to
  /// issue wgmma on named barrier kTurnBarrier + c (with the 128 threads of
  /// the warpgroup before it, which arrive there when they pass the turn
  /// on); warpgroup 0 gives itself the first turn. The emulation runs the
  /// warpgroups in turn order, and its model of the barriers checks ids and
  /// counts.
  bool takesTurns() const { return cfg.pingpong; }
  /// Warpgroup 0's first turn; the emulation (`produce`) emits it for each
  /// of the `copies` warpgroups, as each runs it.
  void startTurns(int64_t copies, bool produce);
  void awaitTurn();
  void passTurn();
  /// The producer's load of the K (or V) tile of `block` into buffer
  /// block % 2, where `pred` (uniform) holds: it waits until the consumers
  /// released the buffer's previous block (block - 2), then announces
  /// the bytes on the buffer's full barrier (`extraBytes` more for loads
  /// the caller issues on the same phase) and issues the TMA loads.
  void produceTile(bool value, Value block, Value pred, int64_t extraBytes = 0);
  /// The mbarriers of the warp-specialized kernel (uniform indices).
  Value fullBarrier(bool value, Value buf) {
    return add(ci(value ? 2 : 0), buf);
  }
  Value emptyBarrier(bool value, Value buf) {
    return add(ci(value ? 6 : 4), buf);
  }
  /// The initial loop state: per row tile the row maxima (rows g, g + 8)
  /// and partial row sums, then the O accumulators of every row tile.
  SmallVector<Value> initialLoopState();
  /// Issues s[rt] = Q K^T of K/V buffer `buf` on wgmma, one commit group
  /// per row tile (64-row slab). `slabOffset` (i64 uniform in the
  /// warpgroup, or null) is added to Q's descriptors: the warpgroup's slab.
  void issueScoresWgmma(MutableArrayRef<SmallVector<Value>> s, Value buf,
                        Value slabOffset);
  /// The scores of the row tiles `tiles` of K/V step `j` in the unit of the
  /// exponent's input (see scoreScale), with masks where needed.
  void computeLogits(MutableArrayRef<SmallVector<Value>> s,
                     ArrayRef<int64_t> tiles, Value j);
  /// The rescaling of a row tile's O accumulators that one softmax step
  /// asks for: by alpha of the thread's two rows (g, g + 8), skipped where
  /// `moved` (lazy rescaling, warp-uniform; null: always) is false.
  struct PendingRescale {
    Value alpha[2];
    Value moved;
  };
  /// Online softmax of row tile `rt`: s becomes P; `acc` (the row tile's O
  /// accumulators, from `state`) is rescaled, or, with `deferred`, left as
  /// it is and its rescaling returned there; the new row maxima and sums
  /// are appended to `yield`.
  void onlineSoftmax(int64_t rt, ValueRange state, SmallVector<Value> &s,
                     SmallVector<Value> &acc, SmallVector<Value> &yield,
                     PendingRescale *deferred = nullptr);
  /// Applies `pending` to O accumulators `acc` and row sums `sums`.
  void rescaleRows(MutableArrayRef<Value> acc, MutableArrayRef<Value> sums,
                   const PendingRescale &pending);
  /// The epilogue: full row sums, one division per row, hidden rows write
  /// 0. `results` is the loop's final state: of `copies` programs (see
  /// emitConsumers), each selected by `selectCopy` before its part.
  void writeOutput(ValueRange results, int64_t copies = 1,
                   function_ref<void(int64_t)> selectCopy = {});

  SimtTarget &t;
  OpBuilder &b;
  Location loc;
  const FlashKernelConfig &cfg;
  const FlashKernelOperands &ops;

  // Base-2 logits are scores * scoreScale * exponentScale (one of them is
  // 1); see the constructor.
  double scoreScale, exponentScale;

  // Set up by setUp(), uniform.
  SmallVector<Value> batchIdx;
  Value head, kvHead, q0, lq, lk, diagOffset;
  // With a causal period: the rows' shift (or null) and the block's
  // smallest query index (see queryIndex).
  Value rowShift, firstQuery;
  // See pairedLoadCondition; pairedLoads: all of those that are not null.
  Value maskPaired, biasPaired, pairedLoads;
  Value sQ, sK, sV;
  SmallVector<Value> qPrefix, kvPrefix;
  // numKV: the block's K/V steps, from block kvBegin on (0 unless split).
  Value lastQ, lastK, numKV, kvBegin;
  // Split-KV: the block's row of the partial outputs.
  Value partialIndex;
  // Set up by setThread(), per thread.
  Value warp, lane, group, quad;
  // See actAs (0: not emulating a warp-specialized kernel).
  uint32_t acting = 0;
};
} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_FLASHATTENTIONEMITTER_H
