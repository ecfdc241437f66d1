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
//===----------------------------------------------------------------------===//

#include "FlashAttentionKernel.h"
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

/// The smallest scale * log2(e) applied in the exponent rather than to the
/// scores: 2 * kHiddenLogit / 1e-6 is still a finite f32.
static constexpr double kMinDeferredScale = 1.0e-6;
/// A row of a wgmma operand tile: a 64-column panel of 16-bit elements, the
/// width of the 128-byte swizzle. 8 rows (the swizzle's repeat) are the
/// descriptors' stride byte offset; K-major descriptors do not use the
/// leading byte offset, which is set to 16.
static constexpr int64_t kPanelRowBytes = 128;
static constexpr int64_t kPanelGroupBytes = 8 * kPanelRowBytes;
static constexpr int64_t kUnusedLBO = 16;
/// The named barrier of the consumer warpgroups of a warp-specialized
/// kernel (barrier 0 is the whole block's), and the first of their
/// pingpong barriers, one per consumer warpgroup.
static constexpr int64_t kConsumerBarrier = 1;
static constexpr int64_t kTurnBarrier = 2;

/// Whether the op adds a term to the scores: a bias, or a float mask.
static bool hasAdditiveTerm(const FlashKernelOperands &ops) {
  return ops.bias ||
         (ops.mask &&
          !getElementTypeOrSelf(ops.mask.getType()).isSignlessInteger(1));
}

namespace {
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
} // namespace

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
