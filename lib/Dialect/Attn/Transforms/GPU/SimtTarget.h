//===- SimtTarget.h - the SIMT primitives of the attention kernel -*- C++
//-*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The FlashAttention kernel is written once, against this interface, as the
// program of one thread of a block (4 warps, one warpgroup; or, warp
// specialized, a producer warpgroup and consumer warpgroups). Two targets
// implement it:
//
// - the NVGPU target emits what runs on the GPU: nvgpu.ldmatrix,
//   nvvm.mma.sync, nvgpu.device_async_copy, gpu.shuffle, gpu.barrier, with
//   every per-thread value a scalar;
// - the emulation target emits CPU code for the same program with the whole
//   block as vector lanes (every per-thread value is a vector<128xT>), and
//   models the cross-lane instructions (ldmatrix, mma.sync, shuffles) by the
//   fragment layouts of the PTX ISA. Running it against a float64 reference
//   tests the kernel's lane/fragment bookkeeping without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SIMTTARGET_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SIMTTARGET_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <memory>

namespace mlir {
namespace attn {
namespace gpu_kernel {

/// Threads per block of the kernels that are not warp specialized: 4 warps,
/// one warpgroup.
constexpr int64_t kThreadsPerBlock = 128;
constexpr int64_t kThreadsPerWarpGroup = 128;
constexpr int64_t kWarpSize = 32;

/// One 32-bit register holding two 16-bit elements (an mma.sync operand
/// register). `lo` is the element at the lower column/row index. The NVGPU
/// target fills `packed` (vector<2xT>); the emulation target fills lo/hi.
struct PackedReg {
  Value packed;
  Value lo, hi;
};

class SimtTarget {
public:
  SimtTarget(OpBuilder &b, Location loc, Type elemType)
      : b(b), loc(loc), elemType(elemType) {}
  virtual ~SimtTarget() = default;

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }

  /// The type of a per-thread value whose element type is `scalar`.
  virtual Type perThreadType(Type scalar) = 0;
  /// The per-thread copy of a block-uniform scalar.
  virtual Value lift(Value uniform) = 0;
  /// The thread's index in the block, per thread.
  virtual Value threadId() = 0;
  /// The block's index along `dim` (0: x, 1: y, 2: z); uniform.
  virtual Value blockId(int dim) = 0;

  /// A view of `type` at `byteOffset` of the block's shared memory.
  virtual Value sharedView(int64_t byteOffset, MemRefType type) = 0;

  /// Asynchronously copies `elems` consecutive elements of the last dim from
  /// `src[srcIdx]` to `dst[dstIdx]`; where `valid` is false nothing is read
  /// and zeros are written. Indices, `valid` and `active` are per thread;
  /// where `active` (null: every thread) is false, the thread copies
  /// nothing.
  virtual void copyAsync(Value src, ValueRange srcIdx, Value dst,
                         ValueRange dstIdx, int64_t elems, Value valid,
                         Value active = {}) = 0;
  /// Closes the group of copies issued since the last commit.
  virtual void commitGroup() = 0;
  /// Waits until at most `pending` committed groups are outstanding.
  virtual void waitGroups(int pending) = 0;
  virtual void barrier() = 0;

  /// ldmatrix .m8n8 .x`numTiles` (.trans): each thread passes the row/col of
  /// one matrix row in `smem` (threads 8i..8i+7 address matrix i); returns
  /// the thread's register of each matrix.
  virtual SmallVector<PackedReg> loadMatrix(Value smem, ValueRange prefix,
                                            Value row, Value col, int numTiles,
                                            bool transpose) = 0;
  /// mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32: `a` 4 registers, `b` 2,
  /// `c` 4 f32 per thread.
  virtual std::array<Value, 4> mma(ArrayRef<PackedReg> a, ArrayRef<PackedReg> b,
                                   ArrayRef<Value> c) = 0;
  /// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: `a` 4, `b` 2 and
  /// `c` 4 f32 per thread (a and b already rounded with roundToTF32).
  virtual std::array<Value, 4> mmaTF32(ArrayRef<Value> a, ArrayRef<Value> b,
                                       ArrayRef<Value> c) = 0;
  /// f32 rounded to tf32 (cvt.rna.tf32.f32: nearest, ties away from zero),
  /// still as an f32.
  virtual Value roundToTF32(Value x) = 0;
  /// The value of the thread whose lane is this lane xor `mask` (f32).
  virtual Value shuffleXor(Value v, int mask) = 0;
  /// Whether `pred` (per-thread i1) holds in any thread of this warp.
  virtual Value warpAny(Value pred) = 0;
  /// Whether per-thread values are scalars, so that a warp-uniform one can
  /// be the condition of an scf.if (the GPU). The emulation's are vectors.
  virtual bool hasScalarControlFlow() const = 0;
  /// The value (f32) of lane `srcLane` (per thread, index) of this warp.
  virtual Value shuffleIdx(Value v, Value srcLane) = 0;
  /// 2^x of a per-thread f32 (the GPU's ex2.approx).
  virtual Value exp2(Value x) = 0;
  /// x * y + z rounded once (f32, per thread).
  virtual Value fma(Value x, Value y, Value z) = 0;
  /// Rounds two f32 values to the element type and packs them (lo first).
  virtual PackedReg pack(Value lo, Value hi) = 0;
  /// The values that make up `r`, to carry it through a loop, and `r` from
  /// them.
  virtual SmallVector<Value> packedParts(const PackedReg &r) = 0;
  virtual PackedReg fromPackedParts(ValueRange parts) = 0;

  /// The shared-memory address (i64, uniform) of byte `byteOffset` (index,
  /// uniform) of the block's shared memory, whose byte 0 is aligned to the
  /// 1024-byte repeat of the 128-byte swizzle (what wgmma descriptors hold).
  virtual Value sharedAddress(Value byteOffset) = 0;
  /// fence.proxy.async.shared::cta: orders this thread's earlier writes to
  /// shared memory before later reads of it by wgmma (the async proxy).
  virtual void fenceAsyncProxy() = 0;
  /// wgmma.fence, after the accumulators `regs` and the A fragments `a`
  /// are written (no write to them may move past it).
  virtual void wgmmaFence(MutableArrayRef<Value> regs,
                          MutableArrayRef<PackedReg> a = {}) = 0;
  /// wgmma.mma_async.sync.aligned.m64n`n`k16.f32.T.T (T: f16/bf16) for the
  /// 4-warp warpgroup: D = A B (+ `d` if `accumulate`), A (64 x 16, K-major)
  /// and B (16 x n: K-major, or MN-major if `transposeB`) given by shared
  /// memory matrix descriptors (i64, uniform in the warpgroup). `d` and the
  /// result are the thread's n / 2 accumulators; they are valid after
  /// wgmmaWait.
  virtual SmallVector<Value> wgmma(Value descA, Value descB, ArrayRef<Value> d,
                                   int64_t n, bool accumulate,
                                   bool transposeB) = 0;
  /// The same with A from registers: warp w's 4 registers hold rows
  /// 16 w .. 16 w + 15 of A in the A fragment layout of mma.sync m16n8k16.
  virtual SmallVector<Value> wgmmaRegA(ArrayRef<PackedReg> a, Value descB,
                                       ArrayRef<Value> d, int64_t n,
                                       bool accumulate, bool transposeB) = 0;
  /// wgmma.commit_group: the wgmma issued since the last commit form a
  /// group.
  virtual void wgmmaCommit() = 0;
  /// wgmma.wait_group `pending`: all but the last `pending` groups are
  /// complete; `regs` (their results) are read only after it.
  virtual void wgmmaWait(int pending, MutableArrayRef<Value> regs) = 0;

  /// TMA and mbarriers (sm_90). These are block-level operations on
  /// uniform operands: on the GPU one thread issues them.
  ///
  /// Initializes one mbarrier per element of `arrivals`, each expecting
  /// that many arrivals per phase; a barrier() must follow before any other
  /// thread uses them.
  virtual void initBarriers(ArrayRef<int64_t> arrivals) = 0;
  /// Arrives on mbarrier `barrier` (uniform index) in the threads where
  /// `pred` (per thread) holds: one arrival each.
  virtual void arriveBarrier(Value barrier, Value pred) = 0;
  /// Where `pred` holds: arrives on mbarrier `barrier` (index), announcing
  /// `bytes` of asynchronous copies that complete its current phase.
  virtual void expectBytes(Value barrier, int64_t bytes, Value pred) = 0;
  /// Where `pred` holds: cp.async.bulk.tensor of the box `box` (in memref
  /// order, all but the last two dims 1; the last dim is 64 16-bit elements,
  /// 128 bytes) at `coords` (memref order) of `global` to shared memory at
  /// `byteOffset` (1024-byte aligned) with the 128-byte swizzle, completing
  /// on `barrier`. Box elements outside `global` read as zero. The GPU reads
  /// through the tensor map `map`; the emulation reads `global` itself.
  virtual void tmaLoad(Value global, Value map, ValueRange coords,
                       Value byteOffset, ArrayRef<int64_t> box, Value barrier,
                       Value pred) = 0;
  /// Where `pred` holds: cp.async.bulk.tensor of the box `box` from shared
  /// memory at `byteOffset` (laid out as tmaLoad writes it) to `coords` of
  /// `global`; box elements outside `global` are not written.
  virtual void tmaStore(Value global, Value map, ValueRange coords,
                        Value byteOffset, ArrayRef<int64_t> box,
                        Value pred) = 0;
  /// Commits the TMA stores issued so far and waits until they have read
  /// their shared memory.
  virtual void waitTmaStores() = 0;
  /// Waits until the phase of `barrier` with parity `parity` (i1) has
  /// completed; its copies are then visible to this thread.
  virtual void waitBarrier(Value barrier, Value parity) = 0;
  /// The block is done with its mbarriers. (The emulation checks that every
  /// completed phase that copies completed was waited for, and that no bytes
  /// and no arrivals of an incomplete phase are outstanding.)
  virtual void endBarriers() = 0;
  /// From here on, the thread where `pred` (per thread) holds issues the
  /// block-level operations above (initially thread 0).
  virtual void setIssuer(Value pred) = 0;

  /// Warp specialization (sm_90a). Whether the producer of a
  /// warp-specialized kernel runs as a warpgroup of its own, concurrently
  /// with the consumer warpgroups (the GPU: threads 0..127, then the
  /// consumers), or the kernel interleaves the producer's steps into the
  /// consumers' program (the emulation, whose lanes are the consumer
  /// threads only).
  virtual bool hasProducerWarpGroup() const = 0;
  /// setmaxnreg.{inc,dec}.sync.aligned: this warpgroup's per-thread
  /// register budget becomes `count`.
  virtual void setMaxRegisters(int64_t count, bool increase) = 0;
  /// bar.sync `id`, `threads`: a barrier among `threads` threads (whole
  /// warps) that execute it or arrive on it; `id` (index, uniform in the
  /// warpgroup) is one of the block's 16 barriers.
  virtual void namedBarrier(Value id, int64_t threads) = 0;
  /// bar.arrive `id`, `threads` in the threads where `pred` (per thread,
  /// uniform in each warp; null: every thread) holds: they count towards
  /// the barrier without waiting for it.
  virtual void namedBarrierArrive(Value id, int64_t threads,
                                  Value pred = {}) = 0;
  /// The kernel orders the shared-memory accesses of its warpgroups by
  /// mbarriers and named barriers, not block barriers (warp specialized):
  /// the emulation's race model follows those instead.
  virtual void orderSharedMemoryByMbarriers() = 0;
  /// Warp specialized, without a producer warpgroup of its own (see
  /// hasProducerWarpGroup): the code that follows is the program of the
  /// warpgroups `warpGroups` (bit 0: the producer; bit c + 1: consumer c).
  /// Its accesses are one warpgroup's; its mbarrier arrivals and waits,
  /// each of theirs. The GPU, which runs each warpgroup's program on its
  /// own threads, has no use for it.
  virtual void actAs(uint32_t warpGroups) = 0;

  /// Per-thread load of `memref[idx]` (indices per thread, in bounds).
  virtual Value load(Value memref, ValueRange idx) = 0;
  /// Per-thread load of `memref[idx]` and the next element of the last
  /// dim (stride 1) as one vector; the caller has checked that the pair is
  /// in bounds and aligned to its size.
  virtual std::pair<Value, Value> loadPair(Value memref, ValueRange idx) = 0;
  /// Per-thread store of `lo`, `hi` to `memref[idx]` and the next element of
  /// the last dim, where `pred` holds; the last index is even and rows have
  /// an even length, so the pair is aligned to its size.
  virtual void storePair(Value lo, Value hi, Value memref, ValueRange idx,
                         Value pred) = 0;

protected:
  OpBuilder &b;
  Location loc;
  Type elemType;
};

/// The GPU target; must be created inside the gpu.launch body. With
/// `alignShared` > 0, the views and addresses of shared memory start at the
/// first `alignShared`-byte aligned byte of `smemBase` (which must have that
/// many bytes to spare).
std::unique_ptr<SimtTarget> createNVGPUTarget(OpBuilder &b, Location loc,
                                              Type elemType, Value smemBase,
                                              int64_t alignShared);

/// The shared-memory tile (memref<box x elemType>, workgroup space) that one
/// TMA load of `box` fills, and the type of the tensor map (a
/// !nvgpu.tensormap.descriptor, 128-byte swizzle, zero fill) that the host
/// encodes for such loads.
MemRefType getTmaBoxType(MLIRContext *ctx, ArrayRef<int64_t> box,
                         Type elemType);
Type getTmaMapType(MLIRContext *ctx, ArrayRef<int64_t> box, Type elemType);

/// Test only: one synchronization that the emulation leaves out of a
/// kernel, so that a test can show that its race checks catch the kernel
/// without it.
struct EmulationFault {
  enum class Kind {
    None,
    Barrier,      // bar.sync of the block
    CopyWait,     // cp.async.wait_group
    ProxyFence,   // fence.proxy.async
    MbarrierWait, // mbarrier.try_wait.parity
    WgmmaWait,    // wgmma.wait_group
    NamedBarrier, // bar.sync of some warpgroups
    NamedArrive,  // bar.arrive
  };
  Kind kind = Kind::None;
  /// Which one of its kind, from 0, in the order the kernel emits them.
  int64_t index = 0;
  /// If set, counts the synchronizations left out.
  int64_t *leftOut = nullptr;
};
/// Parses `kind:N` (`barrier`, `copy-wait`, `proxy-fence`, `mbarrier-wait`,
/// `wgmma-wait`, `named-barrier`, `named-arrive`); an empty spec is no
/// fault.
FailureOr<EmulationFault> parseEmulationFault(StringRef spec);

/// The emulation target, created at the start of the block's program (its
/// race model's state is made there). `blockIds` are the (uniform) loop
/// indices that stand for the block ids; `smemBase` a memref<Nxi8> standing
/// for shared memory.
std::unique_ptr<SimtTarget> createEmulationTarget(OpBuilder &b, Location loc,
                                                  Type elemType,
                                                  std::array<Value, 3> blockIds,
                                                  Value smemBase,
                                                  EmulationFault fault = {});

} // namespace gpu_kernel
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_GPU_SIMTTARGET_H
