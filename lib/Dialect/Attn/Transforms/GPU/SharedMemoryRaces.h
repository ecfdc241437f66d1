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
// Warps are the unit: accesses of one warp are in program order (the
// kernels' shared-memory instructions are warp-collective). The ordering
// rules (the first, and the fence's) are for kernels ordered by block
// barriers; a warp-specialized kernel orders its warpgroups by mbarriers
// and named barriers, which the model does not follow: for it only the
// rules that need no ordering between warps apply (copies and loads in
// flight, reads of bytes nothing wrote), with `barrierOrdered` false.
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

/// Checks and records a read of word `word` (index) by warp `warp` (i32)
/// through the generic proxy (ld.shared, ldmatrix); returns its hazard.
Value read(OpBuilder &b, Location loc, Value state, Value word, Value warp,
           bool barrierOrdered = true);
/// Checks and records a read through the async proxy by the warps in
/// `warpMask` (i32 constant bits): a wgmma (in flight until its group is
/// waited for) or a TMA store.
Value asyncRead(OpBuilder &b, Location loc, Value state, Value word,
                int32_t warpMask, bool wgmma, bool barrierOrdered = true);
/// Checks and records a write by warp `warp` (i32; -1 for a TMA load, the
/// async proxy's), which for a TMA load completes with phase `tmaPhase`
/// (i32) of mbarrier `tmaBarrier` (i32).
Value write(OpBuilder &b, Location loc, Value state, Value word, Value warp,
            WriteKind kind, Value tmaBarrier = {}, Value tmaPhase = {},
            bool barrierOrdered = true);

/// bar.sync of the whole block.
void barrier(OpBuilder &b, Location loc, Value state);
/// fence.proxy.async in every thread.
void proxyFence(OpBuilder &b, Location loc, Value state);
/// cp.async.commit_group and cp.async.wait_group `pending` (which completes
/// the copies of the groups it waits for: a loop over the words).
void commitCopies(OpBuilder &b, Location loc, Value state);
void waitCopies(OpBuilder &b, Location loc, Value state, int64_t pending);
/// wgmma.commit_group and wgmma.wait_group `pending`.
void commitWgmma(OpBuilder &b, Location loc, Value state);
void waitWgmma(OpBuilder &b, Location loc, Value state, int64_t pending);
/// A wait on phase `phase` (i32) of mbarrier `barrier` (i32) completes the
/// TMA loads of that phase (a loop over the words).
void waitTma(OpBuilder &b, Location loc, Value state, Value barrier,
             Value phase);
/// mbarrier.init by the issuing thread, and whether a block barrier has
/// made it visible to the other threads since (i1): they may not wait on
/// an mbarrier before.
void initMbarriers(OpBuilder &b, Location loc, Value state);
Value mbarriersPublished(OpBuilder &b, Location loc, Value state);

} // namespace races
} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SHAREDMEMORYRACES_H
