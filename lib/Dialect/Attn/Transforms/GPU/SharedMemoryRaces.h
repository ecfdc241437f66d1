//===- SharedMemoryRaces.h - the emulation's shared-memory race model -*- C++
//-*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The emulation runs a block's threads in lockstep, so its shared memory
// never races: a missing barrier or wait would still give right numbers on
// the CPU and wrong ones, now and then, on a GPU. This model records, per
// 4-byte word of shared memory, who last wrote it and who read it since the
// last block barrier, and whether an asynchronous copy or wgmma that
// touches it is still in flight, and reports each access that the GPU does
// not order after the accesses it conflicts with:
//
// - time is a clock that ticks at each block barrier (bar.sync) and proxy
//   fence; two accesses of different warps are ordered when a barrier
//   lies between them;
// - a cp.async writes when its group is waited for (cp.async.wait_group);
//   until then the word is in flight for every access;
// - a TMA load writes when its mbarrier phase is waited for;
// - wgmma and TMA stores read through the async proxy: what a thread wrote
//   must be fenced (fence.proxy.async) before a barrier that precedes them;
//   a wgmma reads until its group is waited for (wgmma.wait_group);
// - a read of bytes that nothing wrote in the block reads what an earlier
//   block on the multiprocessor left there.
//
// Two orderings (Ordering): a kernel ordered by block barriers has the
// warp as its unit of program order (the kernels' shared-memory
// instructions are warp-collective), and the rules above. A
// warp-specialized kernel orders its warpgroups by mbarriers and named
// barriers instead; there the unit is the warpgroup, and each keeps a
// vector clock: an mbarrier arrival releases the arriving warpgroup's
// clock (and the wgmma groups it has waited for) into the phase, a wait
// for the phase acquires what its arrivals released, and a named barrier
// joins the clocks of the warpgroups it syncs; a release also carries
// the warpgroup's last proxy fence, which an async-proxy read of its
// writes by another warpgroup needs. An access of another
// warpgroup that the accessing one has not acquired, or a wgmma read it
// does not know complete, is a race. Within a warpgroup, a thread's write
// and another warp's later read or write of the word race unless a barrier
// of the warpgroup (named or the block's) lies between them (the warps'
// own mbarrier arrivals and waits are not counted, nor their reads before
// another warp's write).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SHAREDMEMORYRACES_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SHAREDMEMORYRACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace attn {
namespace gpu_kernel {
namespace races {

/// How accesses of different threads are ordered (see above).
enum class Ordering {
  /// By block barriers; the unit is the warp.
  BlockBarriers,
  /// By mbarrier phases and named barriers; the unit is the warpgroup.
  WarpGroups,
};
/// The warpgroups that WarpGroups ordering tells apart (a producer and up
/// to three consumers), and the mbarriers whose phases it follows.
constexpr int64_t kMaxWarpGroups = 4;
constexpr int64_t kMaxMbarriers = 16;

/// What an access conflicts with (an i32 at run time; 0: nothing).
enum Hazard : int32_t {
  kNoHazard = 0,
  kCopyInFlight,
  kTmaNotWaited,
  kReadAfterWrite,
  kWriteAfterRead,
  kWriteAfterWrite,
  kWgmmaInFlight,
  kNoProxyFence,
  kUninitialized,
  kGroupReadAfterWrite,
  kGroupWriteAfterRead,
  kGroupWgmmaInFlight,
  kGroupWriteAfterWrite,
  kWarpReadAfterWrite,
  kWarpWriteAfterWrite,
  kNumHazards
};
/// The message for an access by `what` (an instruction) that hits `h`.
std::string describe(StringRef what, Hazard h);

/// How a write arrives.
enum class WriteKind { Store, CopyAsync, Tma };

/// The model's state for a block with `sharedBytes` of shared memory: a
/// heap buffer (freed by buffer deallocation) holding one record per word
/// and the block's clock, initialized for a block that has not run.
Value createState(OpBuilder &b, Location loc, int64_t sharedBytes);
/// The number of words `state` covers.
int64_t numWords(Value state);

/// In what follows, `unit` (i32) is the accessing warp under BlockBarriers
/// ordering and the accessing warpgroup under WarpGroups ordering; there,
/// `warp` (i32) is the accessing warp within it, or null for an access of
/// the whole warpgroup (wgmma) or of the async proxy (a TMA load).

/// Checks and records a read of word `word` (index) by `unit` through the
/// generic proxy (ld.shared, ldmatrix); returns its hazard.
Value read(OpBuilder &b, Location loc, Value state, Value word, Value unit,
           Ordering ordering, Value warp = {});
/// Checks and records a read through the async proxy: a wgmma (in flight
/// until its group is waited for) or a TMA store (`warp`: the issuing
/// thread's). Under BlockBarriers ordering the reading warps are the bits
/// of `unit`.
Value asyncRead(OpBuilder &b, Location loc, Value state, Value word, Value unit,
                bool wgmma, Ordering ordering, Value warp = {});
/// Checks and records a write by `unit`. A TMA load is written by the
/// async proxy and completes with phase `tmaPhase` (i32) of mbarrier
/// `tmaBarrier` (i32); its `unit` is the issuing warpgroup (WarpGroups
/// ordering) or -1.
Value write(OpBuilder &b, Location loc, Value state, Value word, Value unit,
            WriteKind kind, Ordering ordering, Value tmaBarrier = {},
            Value tmaPhase = {}, Value warp = {});

/// bar.sync of the whole block (which also syncs every warpgroup).
void barrier(OpBuilder &b, Location loc, Value state);
/// fence.proxy.async in every thread (WarpGroups ordering: in those of
/// the warpgroups `groups`, i32).
void proxyFence(OpBuilder &b, Location loc, Value state,
                ArrayRef<Value> groups = {});
/// cp.async.commit_group and cp.async.wait_group `pending` (which completes
/// the copies of the groups it waits for: a loop over the words).
void commitCopies(OpBuilder &b, Location loc, Value state);
void waitCopies(OpBuilder &b, Location loc, Value state, int64_t pending);
/// wgmma.commit_group and wgmma.wait_group `pending`: the block's groups
/// (BlockBarriers ordering), or warpgroup `group`'s (i32; WarpGroups).
void commitWgmma(OpBuilder &b, Location loc, Value state, Ordering ordering,
                 Value group = {});
void waitWgmma(OpBuilder &b, Location loc, Value state, int64_t pending,
               Ordering ordering, Value group = {});
/// A wait on phase `phase` (i32) of mbarrier `barrier` (i32) completes the
/// TMA loads of that phase (a loop over the words).
void waitTma(OpBuilder &b, Location loc, Value state, Value barrier,
             Value phase);
/// mbarrier.init by the issuing thread, and whether a block barrier has
/// made it visible to the other threads since (i1): they may not wait on
/// an mbarrier before.
void initMbarriers(OpBuilder &b, Location loc, Value state);
Value mbarriersPublished(OpBuilder &b, Location loc, Value state);

/// WarpGroups ordering. An arrival of warpgroup `group` (i32) on mbarrier
/// `mbarrier` (i32) releases its clock into the current phase; the
/// phase's completion closes what it released; a wait of warpgroup
/// `group` for the last completed phase acquires it.
void arrive(OpBuilder &b, Location loc, Value state, Value mbarrier,
            Value group);
void completePhase(OpBuilder &b, Location loc, Value state, Value mbarrier);
void acquire(OpBuilder &b, Location loc, Value state, Value mbarrier,
             Value group);
/// A named barrier (bar.sync N) of the warpgroups `groups` (bits), which
/// also orders the warps within each.
void syncGroups(OpBuilder &b, Location loc, Value state, uint32_t groups);

} // namespace races
} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SHAREDMEMORYRACES_H
