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

/// Emits the model's i32 arithmetic on `state`.
struct Emitter {
  OpBuilder &b;
  Location loc;
  Value state;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value blockRow() { return idx(races::numWords(state)); }
  Value get(Value word, int64_t field) {
    return memref::LoadOp::create(b, loc, state, ValueRange{word, idx(field)});
  }
  void set(Value word, int64_t field, Value v) {
    memref::StoreOp::create(b, loc, v, state, ValueRange{word, idx(field)});
  }
  Value block(BlockField f) { return get(blockRow(), f); }
  void setBlock(BlockField f, Value v) { set(blockRow(), f, v); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sge0(Value x) { return cmp(arith::CmpIPredicate::sge, x, i32(0)); }
  Value gt(Value x, Value y) { return cmp(arith::CmpIPredicate::sgt, x, y); }
  Value ne(Value x, Value y) { return cmp(arith::CmpIPredicate::ne, x, y); }
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
  Value onlyIf(bool applies, Value cond) {
    return applies ? cond
                   : arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0)
                         .getResult();
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
    Value now = block(kClock);
    setBlock(f, now);
    setBlock(kClock, arith::AddIOp::create(b, loc, now, i32(1)));
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
  case kNoHazard:
  case kNumHazards:
    break;
  }
  llvm_unreachable("not a hazard");
}

Value races::createState(OpBuilder &b, Location loc, int64_t sharedBytes) {
  int64_t words = (sharedBytes + 3) / 4;
  auto type = MemRefType::get({words + 1, kNumFields}, b.getI32Type());
  Value state = memref::AllocOp::create(b, loc, type);
  Emitter e{b, loc, state};
  // -1 everywhere: no write, no read, nothing in flight (a read clock of -1
  // predates every barrier, so its readers do not count).
  auto rows = scf::ForOp::create(b, loc, e.idx(0), e.idx(words + 1), e.idx(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rows.getBody()->getTerminator());
    for (int64_t f = 0; f < kNumFields; ++f)
      e.set(rows.getInductionVar(), f, e.i32(-1));
  }
  // Accesses before the first barrier happen at clock 1, after barrier 0.
  e.setBlock(kClock, e.i32(1));
  e.setBlock(kLastBarrier, e.i32(0));
  e.setBlock(kCopiesCommitted, e.i32(0));
  e.setBlock(kWgmmaCommitted, e.i32(0));
  e.setBlock(kWgmmaCompleted, e.i32(0));
  return state;
}

int64_t races::numWords(Value state) {
  return cast<MemRefType>(state.getType()).getDimSize(0) - 1;
}

Value races::read(OpBuilder &b, Location loc, Value state, Value word,
                  Value warp, bool barrierOrdered) {
  Emitter e{b, loc, state};
  Value writer = e.get(word, kWriter);
  Value unordered =
      e.both(e.both(e.sge0(writer), e.ne(writer, warp)),
             e.gt(e.get(word, kWriteClock), e.block(kLastBarrier)));
  Value h =
      e.firstHazard({{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
                     {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
                     {e.neverWritten(word), kUninitialized},
                     {e.onlyIf(barrierOrdered, unordered), kReadAfterWrite}});
  e.noteRead(word, arith::ShLIOp::create(b, loc, e.i32(1), warp));
  return h;
}

Value races::asyncRead(OpBuilder &b, Location loc, Value state, Value word,
                       int32_t warpMask, bool wgmma, bool barrierOrdered) {
  Emitter e{b, loc, state};
  // A thread's write reaches the async proxy through its fence, and the
  // other threads through a barrier after that fence.
  Value unfenced =
      e.both(e.sge0(e.get(word, kWriter)),
             e.gt(e.get(word, kWriteClock), e.block(kFenceBeforeBarrier)));
  Value h =
      e.firstHazard({{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
                     {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
                     {e.neverWritten(word), kUninitialized},
                     {e.onlyIf(barrierOrdered, unfenced), kNoProxyFence}});
  e.noteRead(word, e.i32(warpMask));
  if (wgmma)
    e.set(word, kWgmmaGroup, e.block(kWgmmaCommitted));
  return h;
}

Value races::write(OpBuilder &b, Location loc, Value state, Value word,
                   Value warp, WriteKind kind, Value tmaBarrier, Value tmaPhase,
                   bool barrierOrdered) {
  Emitter e{b, loc, state};
  Value lastBarrier = e.block(kLastBarrier);
  // Readers other than this warp (a TMA load's: any reader).
  Value self = kind == WriteKind::Tma
                   ? e.i32(0)
                   : arith::ShLIOp::create(b, loc, e.i32(1), warp).getResult();
  Value others =
      arith::AndIOp::create(b, loc, e.get(word, kReaders),
                            arith::XOrIOp::create(b, loc, self, e.i32(-1)));
  Value readByOthers = e.both(e.gt(e.get(word, kReadClock), lastBarrier),
                              e.ne(others, e.i32(0)));
  Value writtenByOthers = e.both(e.gt(e.get(word, kWriteClock), lastBarrier),
                                 e.ne(e.get(word, kWriter), warp));
  Value wgmmaReading =
      e.cmp(arith::CmpIPredicate::sge, e.get(word, kWgmmaGroup),
            e.block(kWgmmaCompleted));
  Value h = e.firstHazard(
      {{e.sge0(e.get(word, kCopyGroup)), kCopyInFlight},
       {e.sge0(e.get(word, kTmaBarrier)), kTmaNotWaited},
       {e.onlyIf(barrierOrdered, wgmmaReading), kWgmmaInFlight},
       {e.onlyIf(barrierOrdered, readByOthers), kWriteAfterRead},
       {e.onlyIf(barrierOrdered, writtenByOthers), kWriteAfterWrite}});
  e.set(word, kWriteClock, e.block(kClock));
  e.set(word, kWriter, warp);
  e.set(word, kCopyGroup,
        kind == WriteKind::CopyAsync ? e.block(kCopiesCommitted) : e.i32(-1));
  e.set(word, kTmaBarrier, kind == WriteKind::Tma ? tmaBarrier : e.i32(-1));
  e.set(word, kTmaPhase, kind == WriteKind::Tma ? tmaPhase : e.i32(-1));
  return h;
}

void races::barrier(OpBuilder &b, Location loc, Value state) {
  Emitter e{b, loc, state};
  e.setBlock(kFenceBeforeBarrier, e.block(kLastFence));
  e.tick(kLastBarrier);
}

void races::proxyFence(OpBuilder &b, Location loc, Value state) {
  Emitter{b, loc, state}.tick(kLastFence);
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

void races::commitWgmma(OpBuilder &b, Location loc, Value state) {
  Emitter{b, loc, state}.increment(kWgmmaCommitted);
}

void races::waitWgmma(OpBuilder &b, Location loc, Value state,
                      int64_t pending) {
  Emitter e{b, loc, state};
  Value done =
      arith::SubIOp::create(b, loc, e.block(kWgmmaCommitted), e.i32(pending));
  e.setBlock(kWgmmaCompleted,
             arith::MaxSIOp::create(b, loc, done, e.block(kWgmmaCompleted)));
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
