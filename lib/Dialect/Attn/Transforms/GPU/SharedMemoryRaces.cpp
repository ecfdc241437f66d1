//===- SharedMemoryRaces.cpp - the emulation's shared-memory race model ---===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SharedMemoryRaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn::gpu_kernel;

namespace {
/// The fields of a word's record (row `word` of the state).
enum RecordField : int64_t {
  /// The clock of the last write; for a cp.async or TMA load, of its wait.
  kWriteClock,
  /// The warp of the last write; -1: a TMA load (the async proxy).
  kWriter,
  /// The cp.async group of a copy in flight that writes the word, or -1.
  kCopyGroup,
  /// The mbarrier (and its phase) of a TMA load not waited for, or -1.
  kTmaBarrier,
  kTmaPhase,
  /// The clock of the last read, and the warps (bits) that read the word
  /// since the last barrier before it.
  kReadClock,
  kReaders,
  /// The wgmma group of the last wgmma that read the word, or -1.
  kWgmmaGroup,
  /// WarpGroups ordering: [kGroupRead + g], the clock of warpgroup g's
  /// last read, and [kGroupWgmma + g], the group of its last wgmma that
  /// read the word (or -1).
  kGroupRead,
  kGroupWgmma = kGroupRead + races::kMaxWarpGroups,
  /// WarpGroups ordering: the warp, within its warpgroup, of the last
  /// write by a thread, or -1.
  kWriterWarp = kGroupWgmma + races::kMaxWarpGroups,
  kNumFields
};
/// The block's fields (the state's last row).
enum BlockField : int64_t {
  kClock,
  kLastBarrier,
  kLastFence,
  /// The last fence before the last barrier.
  kFenceBeforeBarrier,
  kCopiesCommitted,
  kWgmmaCommitted,
  kWgmmaCompleted,
  /// The clock of the mbarriers' initialization.
  kMbarrierInit,
};
static_assert(static_cast<int64_t>(kMbarrierInit) < kNumFields,
              "the block's fields fit in a row");
/// WarpGroups ordering: the fields of a warpgroup's row (its vector clock)
/// and of an mbarrier phase's release (the clock it released).
enum ClockField : int64_t {
  /// [kSeen + h]: the clock up to which warpgroup h's accesses are ordered
  /// before this warpgroup's next ones (the release: before the waiter's).
  kSeen,
  /// [kSeenWgmma + h]: how many of h's wgmma groups are complete by then.
  kSeenWgmma = kSeen + races::kMaxWarpGroups,
  /// [kSeenFence + h]: the clock of h's last proxy fence by then.
  kSeenFence = kSeenWgmma + races::kMaxWarpGroups,
  kNumClockFields = kSeenFence + races::kMaxWarpGroups,
  /// A warpgroup's own wgmma groups: committed, and complete; the clock of
  /// its last proxy fence.
  kWgmmaIssued = kNumClockFields,
  kWgmmaDone,
  kFenced,
  /// The clock of its last barrier, which orders its warps.
  kWarpsSynced,
};
static_assert(static_cast<int64_t>(kWarpsSynced) < kNumFields,
              "a warpgroup's fields fit in a row");
/// The state's rows: a record per word, then the block's row, one per
/// warpgroup, and two per mbarrier (the current phase's release, and the
/// last completed phase's).
constexpr int64_t kExtraRows =
    1 + races::kMaxWarpGroups + 2 * races::kMaxMbarriers;

/// Emits the model's i32 arithmetic on `state`.
struct Emitter {
  OpBuilder &b;
  Location loc;
  Value state;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value blockRow() { return idx(races::numWords(state)); }
  /// The row of warpgroup `group` (i32).
  Value groupRow(Value group) {
    return arith::AddIOp::create(b, loc, idx(races::numWords(state) + 1),
                                 toIndex(group));
  }
  /// The row of mbarrier `mbarrier`'s (i32) current phase's release, or
  /// of its last completed phase's.
  Value releaseRow(Value mbarrier, bool completed) {
    Value first = arith::MulIOp::create(b, loc, toIndex(mbarrier), idx(2));
    return arith::AddIOp::create(b, loc,
                                 idx(races::numWords(state) + 1 +
                                     races::kMaxWarpGroups +
                                     (completed ? 1 : 0)),
                                 first);
  }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value get(Value row, int64_t field) {
    return memref::LoadOp::create(b, loc, state, ValueRange{row, idx(field)});
  }
  void set(Value row, int64_t field, Value v) {
    memref::StoreOp::create(b, loc, v, state, ValueRange{row, idx(field)});
  }
  /// Field `first + i` of `row` (i: i32, at least 0).
  Value getAt(Value row, int64_t first, Value i) {
    Value field = arith::AddIOp::create(b, loc, idx(first), toIndex(i));
    return memref::LoadOp::create(b, loc, state, ValueRange{row, field});
  }
  void setAt(Value row, int64_t first, Value i, Value v) {
    Value field = arith::AddIOp::create(b, loc, idx(first), toIndex(i));
    memref::StoreOp::create(b, loc, v, state, ValueRange{row, field});
  }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value none() {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  }
  Value block(BlockField f) { return get(blockRow(), f); }
  void setBlock(BlockField f, Value v) { set(blockRow(), f, v); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sge0(Value x) { return cmp(arith::CmpIPredicate::sge, x, i32(0)); }
  Value gt(Value x, Value y) { return cmp(arith::CmpIPredicate::sgt, x, y); }
  Value ne(Value x, Value y) { return cmp(arith::CmpIPredicate::ne, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// The first hazard of `checks` that holds, else kNoHazard.
  Value firstHazard(ArrayRef<std::pair<Value, races::Hazard>> checks) {
    Value h = i32(races::kNoHazard);
    for (auto [cond, hazard] : llvm::reverse(checks))
      h = select(cond, i32(hazard), h);
    return h;
  }
  /// `cond` where the rule applies, else false.
  Value onlyIf(bool applies, Value cond) { return applies ? cond : none(); }
  /// WarpGroups ordering: whether the last write of `word`, by another
  /// warpgroup than `group`, is not ordered before `group`'s accesses.
  Value unorderedWrite(Value word, Value group) {
    Value writer = get(word, kWriter);
    Value byGroup = both(sge0(writer), ne(writer, group));
    // (A TMA load's writer, -1, reads field kSeen.)
    Value seen = getAt(groupRow(group), kSeen, max(writer, i32(0)));
    return both(byGroup, gt(get(word, kWriteClock), seen));
  }
  /// WarpGroups ordering: whether the last write of `word`, by a thread of
  /// `group` in another warp than `warp` (if given), is not ordered before
  /// `warp`'s accesses by a barrier of the warpgroup.
  Value unorderedWarpWrite(Value word, Value group, Value warp) {
    if (!warp)
      return none();
    Value writerWarp = get(word, kWriterWarp);
    Value sameGroup = both(eq(get(word, kWriter), group), sge0(writerWarp));
    return both(both(sameGroup, ne(writerWarp, warp)),
                gt(get(word, kWriteClock), get(groupRow(group), kWarpsSynced)));
  }
  /// WarpGroups ordering: what the reads of `word` leave unordered
  /// before a write by `group`.
  struct UnorderedReads {
    /// A wgmma of `group` itself still reads the word.
    Value ownWgmma;
    /// Another warpgroup's read is not ordered before the write.
    Value read;
    /// Another warpgroup's read is, but not the completion of its wgmma.
    Value otherWgmma;
  };
  UnorderedReads unorderedReads(Value word, Value group) {
    Value row = groupRow(group);
    UnorderedReads r{none(), none(), none()};
    for (int64_t h = 0; h < races::kMaxWarpGroups; ++h) {
      Value other = ne(group, i32(h));
      Value wgmma = get(word, kGroupWgmma + h);
      r.ownWgmma = either(r.ownWgmma, both(eq(group, i32(h)),
                                           cmp(arith::CmpIPredicate::sge, wgmma,
                                               get(row, kWgmmaDone))));
      r.read = either(r.read, both(other, gt(get(word, kGroupRead + h),
                                             get(row, kSeen + h))));
      r.otherWgmma =
          either(r.otherWgmma, both(other, cmp(arith::CmpIPredicate::sge, wgmma,
                                               get(row, kSeenWgmma + h))));
    }
    return r;
  }
  /// WarpGroups ordering: whether the last write of `word`, by a thread,
  /// is not known to `group` to be fenced for the async proxy (by its
  /// writer's fence.proxy.async, released to `group` if another's).
  Value unfencedWrite(Value word, Value group) {
    Value writer = get(word, kWriter);
    Value row = groupRow(group);
    Value fenced = select(eq(writer, group), get(row, kFenced),
                          getAt(row, kSeenFence, max(writer, i32(0))));
    return both(sge0(writer), gt(get(word, kWriteClock), fenced));
  }
  /// WarpGroups ordering: the entries for warpgroup h of the clock that
  /// warpgroup `group` (i32) releases, at kSeen, kSeenWgmma and
  /// kSeenFence: its own are now, its wgmma groups complete and its last
  /// fence.
  std::array<Value, 3> released(Value group, int64_t h) {
    Value row = groupRow(group);
    Value self = cmp(arith::CmpIPredicate::eq, group, i32(h));
    return {select(self, block(kClock), get(row, kSeen + h)),
            select(self, get(row, kWgmmaDone), get(row, kSeenWgmma + h)),
            select(self, get(row, kFenced), get(row, kSeenFence + h))};
  }
  void tickClock() {
    setBlock(kClock, arith::AddIOp::create(b, loc, block(kClock), i32(1)));
  }
  /// Whether no write (or copy) of the block has touched the word.
  Value neverWritten(Value word) {
    return cmp(arith::CmpIPredicate::slt, get(word, kWriteClock), i32(0));
  }
  /// Adds the warps `mask` to the word's readers since the last barrier.
  void noteRead(Value word, Value mask) {
    Value recent = gt(get(word, kReadClock), block(kLastBarrier));
    Value readers = select(recent, get(word, kReaders), i32(0));
    set(word, kReaders, arith::OrIOp::create(b, loc, readers, mask));
    set(word, kReadClock, block(kClock));
  }
  /// Ticks the clock after recording it in `f`.
  void tick(BlockField f) {
    setBlock(f, block(kClock));
    tickClock();
  }
  void increment(BlockField f) {
    setBlock(f, arith::AddIOp::create(b, loc, block(f), i32(1)));
  }
  /// for word in [0, words): body(word).
  void forEachWord(function_ref<void(Value)> body) {
    auto loop =
        scf::ForOp::create(b, loc, idx(0), idx(races::numWords(state)), idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }
  /// Completes the asynchronous writes in flight on the words whose field
  /// `pending` satisfies `isDone`: they are written now.
  void completeWrites(RecordField pending,
                      function_ref<Value(Value word)> isDone) {
    Value now = block(kClock);
    forEachWord([&](Value word) {
      when(isDone(word), [&] {
        set(word, pending, i32(-1));
        set(word, kWriteClock, now);
      });
    });
  }
  /// if (cond) body().
  void when(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }
};
} // namespace

std::string races::describe(StringRef what, Hazard h) {
  std::string prefix =
      ("attn GPU emulation: shared-memory race: " + what).str();
  switch (h) {
  case kCopyInFlight:
    return prefix + " accesses bytes that a cp.async still in flight writes "
                    "(no cp.async.wait_group for it)";
  case kTmaNotWaited:
    return prefix + " accesses bytes that a TMA load writes before its "
                    "mbarrier phase was waited for";
  case kReadAfterWrite:
    return prefix + " reads bytes that another warp wrote after the last "
                    "barrier";
  case kWriteAfterRead:
    return prefix + " writes bytes that another warp read after the last "
                    "barrier";
  case kWriteAfterWrite:
    return prefix + " writes bytes that another warp wrote after the last "
                    "barrier";
  case kWgmmaInFlight:
    return prefix + " writes bytes that a wgmma still in flight reads (no "
                    "wgmma.wait_group for it)";
  case kNoProxyFence:
    return prefix + " reads through the async proxy bytes that a thread "
                    "wrote with no fence.proxy.async and barrier after it";
  case kUninitialized:
    return prefix + " reads bytes that nothing wrote in this block";
  case kGroupReadAfterWrite:
    return prefix + " reads bytes that another warpgroup wrote, with no "
                    "mbarrier wait or named barrier ordering the two";
  case kGroupWriteAfterRead:
    return prefix + " writes bytes that another warpgroup read, with no "
                    "mbarrier wait or named barrier ordering the two";
  case kGroupWgmmaInFlight:
    return prefix + " writes bytes that a wgmma of another warpgroup may "
                    "still read (no mbarrier wait or named barrier orders "
                    "the write after its wgmma.wait_group)";
  case kGroupWriteAfterWrite:
    return prefix + " writes bytes that another warpgroup wrote, with no "
                    "mbarrier wait or named barrier ordering the two";
  case kWarpReadAfterWrite:
    return prefix + " reads bytes that another warp of its warpgroup wrote, "
                    "with no barrier of the warpgroup between";
  case kWarpWriteAfterWrite:
    return prefix + " writes bytes that another warp of its warpgroup wrote, "
                    "with no barrier of the warpgroup between";
  case kNoHazard:
  case kNumHazards:
    break;
  }
  llvm_unreachable("not a hazard");
}

Value races::createState(OpBuilder &b, Location loc, int64_t sharedBytes) {
  int64_t words = (sharedBytes + 3) / 4;
  auto type = MemRefType::get({words + kExtraRows, kNumFields}, b.getI32Type());
  Value state = memref::AllocOp::create(b, loc, type);
  Emitter e{b, loc, state};
  // Words and the block: -1 everywhere: no write, no read, nothing in
  // flight (a read clock of -1 predates every barrier, so its readers do
  // not count). Clocks: 0, which no access predates.
  auto fill = [&](int64_t from, int64_t to, int64_t value) {
    auto rows = scf::ForOp::create(b, loc, e.idx(from), e.idx(to), e.idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rows.getBody()->getTerminator());
    for (int64_t f = 0; f < kNumFields; ++f)
      e.set(rows.getInductionVar(), f, e.i32(value));
  };
  fill(0, words + 1, -1);
  fill(words + 1, words + kExtraRows, 0);
  // Accesses before the first barrier happen at clock 1, after barrier 0.
  e.setBlock(kClock, e.i32(1));
  e.setBlock(kLastBarrier, e.i32(0));
  e.setBlock(kCopiesCommitted, e.i32(0));
  e.setBlock(kWgmmaCommitted, e.i32(0));
  e.setBlock(kWgmmaCompleted, e.i32(0));
  return state;
}

int64_t races::numWords(Value state) {
  return cast<MemRefType>(state.getType()).getDimSize(0) - kExtraRows;
}

Value races::read(OpBuilder &b, Location loc, Value state, Value word,
                  Value unit, Ordering ordering, Value warp) {
  Emitter e{b, loc, state};
  bool byBarriers = ordering == Ordering::BlockBarriers;
  Value writer = e.get(word, kWriter);
  Value unordered =
      e.both(e.both(e.sge0(writer), e.ne(writer, unit)),
             e.gt(e.get(word, kWriteClock), e.block(kLastBarrier)));
  Value h = e.firstHazard(
      {{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
       {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
       {e.neverWritten(word), kUninitialized},
       {e.onlyIf(byBarriers, unordered), kReadAfterWrite},
       {byBarriers ? e.none() : e.unorderedWrite(word, unit),
        kGroupReadAfterWrite},
       {byBarriers ? e.none() : e.unorderedWarpWrite(word, unit, warp),
        kWarpReadAfterWrite}});
  if (byBarriers)
    e.noteRead(word, arith::ShLIOp::create(b, loc, e.i32(1), unit));
  else
    e.setAt(word, kGroupRead, unit, e.block(kClock));
  return h;
}

Value races::asyncRead(OpBuilder &b, Location loc, Value state, Value word,
                       Value unit, bool wgmma, Ordering ordering, Value warp) {
  Emitter e{b, loc, state};
  bool byBarriers = ordering == Ordering::BlockBarriers;
  // A thread's write reaches the async proxy through its fence, and the
  // other threads through a barrier (WarpGroups: a release) after that
  // fence.
  Value unfenced =
      byBarriers
          ? e.both(e.sge0(e.get(word, kWriter)),
                   e.gt(e.get(word, kWriteClock), e.block(kFenceBeforeBarrier)))
          : e.unfencedWrite(word, unit);
  Value h = e.firstHazard(
      {{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
       {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
       {e.neverWritten(word), kUninitialized},
       {byBarriers ? e.none() : e.unorderedWrite(word, unit),
        kGroupReadAfterWrite},
       {byBarriers ? e.none() : e.unorderedWarpWrite(word, unit, warp),
        kWarpReadAfterWrite},
       {unfenced, kNoProxyFence}});
  if (byBarriers) {
    e.noteRead(word, unit);
    if (wgmma)
      e.set(word, kWgmmaGroup, e.block(kWgmmaCommitted));
    return h;
  }
  e.setAt(word, kGroupRead, unit, e.block(kClock));
  if (wgmma)
    e.setAt(word, kGroupWgmma, unit, e.get(e.groupRow(unit), kWgmmaIssued));
  return h;
}

Value races::write(OpBuilder &b, Location loc, Value state, Value word,
                   Value unit, WriteKind kind, Ordering ordering,
                   Value tmaBarrier, Value tmaPhase, Value warp) {
  Emitter e{b, loc, state};
  bool byBarriers = ordering == Ordering::BlockBarriers;
  Value inFlight = e.none(), afterRead = e.none(), afterWrite = e.none(),
        groupAfterRead = e.none(), otherWgmma = e.none(),
        groupAfterWrite = e.none(), warpAfterWrite = e.none();
  if (byBarriers) {
    Value lastBarrier = e.block(kLastBarrier);
    // Readers other than this warp (a TMA load's: any reader).
    Value self =
        kind == WriteKind::Tma
            ? e.i32(0)
            : arith::ShLIOp::create(b, loc, e.i32(1), unit).getResult();
    Value others =
        arith::AndIOp::create(b, loc, e.get(word, kReaders),
                              arith::XOrIOp::create(b, loc, self, e.i32(-1)));
    afterRead = e.both(e.gt(e.get(word, kReadClock), lastBarrier),
                       e.ne(others, e.i32(0)));
    afterWrite = e.both(e.gt(e.get(word, kWriteClock), lastBarrier),
                        e.ne(e.get(word, kWriter), unit));
    inFlight = e.cmp(arith::CmpIPredicate::sge, e.get(word, kWgmmaGroup),
                     e.block(kWgmmaCompleted));
  } else {
    Emitter::UnorderedReads reads = e.unorderedReads(word, unit);
    inFlight = reads.ownWgmma;
    groupAfterRead = reads.read;
    otherWgmma = reads.otherWgmma;
    groupAfterWrite = e.unorderedWrite(word, unit);
    warpAfterWrite = e.unorderedWarpWrite(word, unit, warp);
  }
  Value h = e.firstHazard({{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
                           {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
                           {inFlight, kWgmmaInFlight},
                           {afterRead, kWriteAfterRead},
                           {afterWrite, kWriteAfterWrite},
                           {groupAfterRead, kGroupWriteAfterRead},
                           {otherWgmma, kGroupWgmmaInFlight},
                           {groupAfterWrite, kGroupWriteAfterWrite},
                           {warpAfterWrite, kWarpWriteAfterWrite}});
  e.set(word, kWriteClock, e.block(kClock));
  e.set(word, kWriter, kind == WriteKind::Tma ? e.i32(-1) : unit);
  e.set(word, kCopyGroup,
        kind == WriteKind::CopyAsync ? e.block(kCopiesCommitted) : e.i32(-1));
  e.set(word, kTmaBarrier, kind == WriteKind::Tma ? tmaBarrier : e.i32(-1));
  e.set(word, kTmaPhase, kind == WriteKind::Tma ? tmaPhase : e.i32(-1));
  if (!byBarriers)
    e.set(word, kWriterWarp, kind != WriteKind::Tma && warp ? warp : e.i32(-1));
  return h;
}

void races::barrier(OpBuilder &b, Location loc, Value state) {
  Emitter e{b, loc, state};
  e.setBlock(kFenceBeforeBarrier, e.block(kLastFence));
  e.tick(kLastBarrier);
}

void races::proxyFence(OpBuilder &b, Location loc, Value state,
                       ArrayRef<Value> groups) {
  Emitter e{b, loc, state};
  for (Value group : groups)
    e.set(e.groupRow(group), kFenced, e.block(kClock));
  e.tick(kLastFence);
}

void races::commitCopies(OpBuilder &b, Location loc, Value state) {
  Emitter{b, loc, state}.increment(kCopiesCommitted);
}

void races::waitCopies(OpBuilder &b, Location loc, Value state,
                       int64_t pending) {
  Emitter e{b, loc, state};
  // Groups below `done` are complete; their bytes are written now.
  Value done =
      arith::SubIOp::create(b, loc, e.block(kCopiesCommitted), e.i32(pending));
  e.completeWrites(kCopyGroup, [&](Value word) {
    Value group = e.get(word, kCopyGroup);
    return e.both(e.sge0(group), e.cmp(arith::CmpIPredicate::slt, group, done));
  });
}

void races::commitWgmma(OpBuilder &b, Location loc, Value state,
                        Ordering ordering, Value group) {
  Emitter e{b, loc, state};
  Value row =
      ordering == Ordering::BlockBarriers ? e.blockRow() : e.groupRow(group);
  int64_t field =
      ordering == Ordering::BlockBarriers ? kWgmmaCommitted : kWgmmaIssued;
  e.set(row, field, arith::AddIOp::create(b, loc, e.get(row, field), e.i32(1)));
}

void races::waitWgmma(OpBuilder &b, Location loc, Value state, int64_t pending,
                      Ordering ordering, Value group) {
  Emitter e{b, loc, state};
  bool byBarriers = ordering == Ordering::BlockBarriers;
  Value row = byBarriers ? e.blockRow() : e.groupRow(group);
  int64_t committed = byBarriers ? kWgmmaCommitted : kWgmmaIssued;
  int64_t completed = byBarriers ? kWgmmaCompleted : kWgmmaDone;
  Value done =
      arith::SubIOp::create(b, loc, e.get(row, committed), e.i32(pending));
  e.set(row, completed, e.max(done, e.get(row, completed)));
}

void races::waitTma(OpBuilder &b, Location loc, Value state, Value barrier,
                    Value phase) {
  Emitter e{b, loc, state};
  e.completeWrites(kTmaBarrier, [&](Value word) {
    return e.both(
        e.cmp(arith::CmpIPredicate::eq, e.get(word, kTmaBarrier), barrier),
        e.cmp(arith::CmpIPredicate::eq, e.get(word, kTmaPhase), phase));
  });
}

void races::initMbarriers(OpBuilder &b, Location loc, Value state) {
  Emitter e{b, loc, state};
  e.setBlock(kMbarrierInit, e.block(kClock));
}

Value races::mbarriersPublished(OpBuilder &b, Location loc, Value state) {
  Emitter e{b, loc, state};
  return e.cmp(arith::CmpIPredicate::sge, e.block(kLastBarrier),
               e.block(kMbarrierInit));
}

void races::arrive(OpBuilder &b, Location loc, Value state, Value mbarrier,
                   Value group) {
  Emitter e{b, loc, state};
  Value phase = e.releaseRow(mbarrier, /*completed=*/false);
  for (int64_t h = 0; h < kMaxWarpGroups; ++h) {
    std::array<Value, 3> entries = e.released(group, h);
    for (auto [field, v] : llvm::zip(
             std::array<int64_t, 3>{kSeen + h, kSeenWgmma + h, kSeenFence + h},
             entries))
      e.set(phase, field, e.max(e.get(phase, field), v));
  }
  // The arriving warpgroup's later accesses are not released.
  e.tickClock();
}

void races::completePhase(OpBuilder &b, Location loc, Value state,
                          Value mbarrier) {
  Emitter e{b, loc, state};
  Value phase = e.releaseRow(mbarrier, /*completed=*/false);
  Value last = e.releaseRow(mbarrier, /*completed=*/true);
  for (int64_t f = 0; f < kNumClockFields; ++f) {
    e.set(last, f, e.get(phase, f));
    e.set(phase, f, e.i32(0));
  }
}

void races::acquire(OpBuilder &b, Location loc, Value state, Value mbarrier,
                    Value group) {
  Emitter e{b, loc, state};
  Value last = e.releaseRow(mbarrier, /*completed=*/true);
  Value row = e.groupRow(group);
  for (int64_t f = 0; f < kNumClockFields; ++f)
    e.set(row, f, e.max(e.get(row, f), e.get(last, f)));
}

void races::syncGroups(OpBuilder &b, Location loc, Value state,
                       uint32_t groups) {
  Emitter e{b, loc, state};
  SmallVector<int64_t> members;
  for (int64_t g = 0; g < kMaxWarpGroups; ++g)
    if (groups & (1u << g))
      members.push_back(g);
  // Every member's clock becomes the join of all of theirs, released.
  SmallVector<Value> joined(kNumClockFields, e.i32(0));
  for (int64_t g : members) {
    for (int64_t h = 0; h < kMaxWarpGroups; ++h) {
      std::array<Value, 3> entries = e.released(e.i32(g), h);
      for (auto [field, v] :
           llvm::zip(std::array<int64_t, 3>{kSeen + h, kSeenWgmma + h,
                                            kSeenFence + h},
                     entries))
        joined[field] = e.max(joined[field], v);
    }
  }
  for (int64_t g : members) {
    Value row = e.groupRow(e.i32(g));
    for (int64_t f = 0; f < kNumClockFields; ++f)
      e.set(row, f, joined[f]);
    e.set(row, kWarpsSynced, e.block(kClock));
  }
  e.tickClock();
}
