//===- AttnToGPU.cpp - attn.attention to a fused GPU kernel ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "GPU/FlashAttentionKernel.h"
#include "GPU/SimtTarget.h"
#include "GPU/SplitKV.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTOGPU
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

namespace {
struct AttnToGPUPass : public attn::impl::AttnToGPUBase<AttnToGPUPass> {
  using AttnToGPUBase::AttnToGPUBase;
  void runOnOperation() override;

private:
  /// `partial`: split-KV's kernel, where cfg.splitKV != 1.
  void lower(AttentionOp op, const FlashKernelConfig &cfg,
             const std::optional<FlashKernelConfig> &partial);

  /// The synchronization the emulation leaves out (emulation-fault), and
  /// how many times it did.
  EmulationFault fault;
  int64_t faultsLeftOut = 0;
};
} // namespace

/// (grid x, y, z) of `op`: query blocks, query heads, batch.
static std::array<Value, 3> gridSize(OpBuilder &b, Location loc, AttentionOp op,
                                     const FlashKernelConfig &cfg) {
  Value q = op.getQuery();
  int64_t rank = op.getRank();
  Value lq = memref::DimOp::create(b, loc, q, rank - 2);
  Value blockQ = arith::ConstantIndexOp::create(b, loc, cfg.blockQ);
  Value x = arith::CeilDivUIOp::create(b, loc, lq, blockQ);
  Value y = memref::DimOp::create(b, loc, q, rank - 3);
  Value z = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t i = 0; i < rank - 3; ++i)
    z = arith::MulIOp::create(b, loc, z, memref::DimOp::create(b, loc, q, i));
  return {x, y, z};
}

/// A device allocation of `type` enqueued on the stream `token` stands for;
/// `token` becomes the allocation's (gpu-to-llvm lowers only the async form
/// of a device, not host-shared, gpu.alloc).
static Value createDeviceAlloc(OpBuilder &b, Location loc, MemRefType type,
                               ValueRange dynamicSizes, Value &token) {
  auto alloc = gpu::AllocOp::create(b, loc, TypeRange{type, token.getType()},
                                    ValueRange{token}, dynamicSizes,
                                    ValueRange{}, /*hostShared=*/false);
  token = alloc.getAsyncToken();
  return alloc.getMemref();
}

/// Frees `memref` on the stream of `token`, which becomes the free's.
static void createDeviceDealloc(OpBuilder &b, Location loc, Value memref,
                                Value &token) {
  token =
      gpu::DeallocOp::create(b, loc, token.getType(), ValueRange{token}, memref)
          .getAsyncToken();
}

/// A new stream (`gpu.wait async`), and the host's wait for all that was
/// enqueued on it. Both are made in one block: gpu-to-llvm destroys a stream
/// only where the waited token is the stream itself, not a token carried
/// out of an scf.if.
static Value createStream(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange{})
      .getAsyncToken();
}
static void waitForStream(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

/// A device allocation on a stream of its own, waited for at once.
static Value createDeviceAlloc(OpBuilder &b, Location loc, MemRefType type,
                               ValueRange dynamicSizes) {
  Value token = createStream(b, loc);
  Value memref = createDeviceAlloc(b, loc, type, dynamicSizes, token);
  waitForStream(b, loc, token);
  return memref;
}

/// Frees a device allocation (on a stream of its own, waited for at once).
static void createDeviceDealloc(OpBuilder &b, Location loc, Value memref) {
  Value token = createStream(b, loc);
  createDeviceDealloc(b, loc, memref, token);
  waitForStream(b, loc, token);
}

/// Emits `grid` blocks of the program `body` emits: a gpu.launch of
/// `threads` threads with `sharedBytes` of dynamic shared memory (whose
/// views start `sharedAlign`-aligned), or, emulated, loops over the grid
/// around the program with the threads as vector lanes. With a `token`
/// (not emulated), the launch is enqueued on its stream and `token` becomes
/// the launch's; without, the launch is synchronous.
static void emitLaunch(OpBuilder &b, Location loc, bool emulate, Type elemType,
                       std::array<Value, 3> grid, int64_t threads,
                       int64_t sharedBytes, int64_t sharedAlign,
                       function_ref<void(SimtTarget &)> body,
                       Value *token = nullptr, EmulationFault fault = {}) {
  OpBuilder::InsertionGuard guard(b);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  if (emulate) {
    // Shared memory is one stack buffer, reused by the blocks in turn (a
    // stack buffer, so that buffer deallocation has nothing to track),
    // aligned as the GPU's (bank conflicts are checked on addresses).
    // It is made in the function's entry block: a stack buffer allocated
    // under control flow (split-KV's run-time choice) becomes a dynamic
    // alloca, and LLVM's x86 frames then misaligned the emulation's vector
    // spills (a crash, seen).
    auto smemType =
        MemRefType::get({std::max<int64_t>(sharedBytes, 16)}, b.getI8Type());
    Value smem;
    {
      OpBuilder::InsertionGuard entryGuard(b);
      Operation *fn = b.getInsertionBlock()->getParentOp();
      if (!isa<FunctionOpInterface>(fn))
        fn = fn->getParentOfType<FunctionOpInterface>();
      b.setInsertionPointToStart(
          &cast<FunctionOpInterface>(fn).getFunctionBody().front());
      smem =
          memref::AllocaOp::create(b, loc, smemType, b.getI64IntegerAttr(1024));
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    auto zLoop = scf::ForOp::create(b, loc, zero, grid[2], one);
    b.setInsertionPointToStart(zLoop.getBody());
    auto yLoop = scf::ForOp::create(b, loc, zero, grid[1], one);
    b.setInsertionPointToStart(yLoop.getBody());
    auto xLoop = scf::ForOp::create(b, loc, zero, grid[0], one);
    b.setInsertionPointToStart(xLoop.getBody());
    std::unique_ptr<SimtTarget> target =
        createEmulationTarget(b, loc, elemType,
                              {xLoop.getInductionVar(), yLoop.getInductionVar(),
                               zLoop.getInductionVar()},
                              smem, fault);
    body(*target);
    return;
  }
  Value threadCount = arith::ConstantIndexOp::create(b, loc, threads);
  Value smemBytes = arith::ConstantIntOp::create(b, loc, sharedBytes, 32);
  Type tokenType = token ? token->getType() : Type();
  ValueRange deps = token ? ValueRange(*token) : ValueRange();
  auto launch =
      gpu::LaunchOp::create(b, loc, grid[0], grid[1], grid[2], threadCount, one,
                            one, smemBytes, tokenType, deps);
  if (token)
    *token = launch.getAsyncToken();
  b.setInsertionPointToStart(&launch.getBody().front());
  auto smemType = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value smem = gpu::DynamicSharedMemoryOp::create(b, loc, smemType);
  std::unique_ptr<SimtTarget> target =
      createNVGPUTarget(b, loc, elemType, smem, sharedAlign);
  body(*target);
  gpu::TerminatorOp::create(b, loc);
}

void AttnToGPUPass::lower(AttentionOp op, const FlashKernelConfig &cfg,
                          const std::optional<FlashKernelConfig> &partial) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // The output buffer bufferization allocated for a tensor result lives on
  // the device like every other operand (also when the op writes a reshaped
  // view of it, as after --attn-pack-gqa).
  if (!emulate) {
    Value buffer = op.getInit();
    while (Operation *view = buffer.getDefiningOp()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(view))
        break;
      buffer = view->getOperand(0);
    }
    if (auto alloc = buffer.getDefiningOp<memref::AllocOp>()) {
      OpBuilder ab(alloc);
      Value device = createDeviceAlloc(ab, alloc.getLoc(), alloc.getType(),
                                       alloc.getDynamicSizes());
      alloc.getResult().replaceAllUsesWith(device);
      alloc.erase();
      // Deallocations of it, if any, must free device memory too.
      for (Operation *user : llvm::make_early_inc_range(device.getUsers()))
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
          OpBuilder db(dealloc);
          createDeviceDealloc(db, dealloc.getLoc(), dealloc.getMemref());
          dealloc.erase();
        }
    }
  }

  FlashKernelOperands operands;
  operands.query = op.getQuery();
  operands.key = op.getKey();
  operands.value = op.getValue();
  operands.mask = op.getMask();
  operands.bias = op.getBias();
  operands.out = op.getInit();
  operands.causalOffset = op.getCausalOffset();
  operands.causalPeriod = op.getCausalPeriod();
  std::array<Value, 3> grid = gridSize(b, loc, op, cfg);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);

  // One tensor map per operand (for the kernel's boxes), encoded by the
  // runtime on each call (it caches them) and read by the kernel from
  // device memory.
  auto encodeMaps = [&](const FlashKernelConfig &kernel,
                        FlashKernelOperands &kernelOps) {
    auto encode = [&](Value memref, int64_t rows) -> Value {
      auto type = cast<MemRefType>(memref.getType());
      SmallVector<int64_t> box = tmaPanelBox(type.getRank(), rows);
      SmallVector<Value> boxSizes;
      for (int64_t d : box)
        boxSizes.push_back(arith::ConstantIndexOp::create(b, loc, d));
      Value unranked = memref::CastOp::create(
          b, loc,
          UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
          memref);
      return nvgpu::TmaCreateDescriptorOp::create(
          b, loc, getTmaMapType(b.getContext(), box, kernel.elemType), unranked,
          boxSizes);
    };
    kernelOps.queryMap = encode(kernelOps.query, kernel.blockQ);
    kernelOps.keyMap = encode(kernelOps.key, kernel.blockKV);
    kernelOps.valueMap = encode(kernelOps.value, kernel.blockKV);
    if (kernel.tmaStore)
      kernelOps.outMap = encode(kernelOps.out, kernel.blockQ);
  };
  auto launchKernel =
      [&](const FlashKernelConfig &kernel, FlashKernelOperands kernelOps,
          std::array<Value, 3> kernelGrid, Value *token = nullptr) {
        if (kernel.tma && !emulate)
          encodeMaps(kernel, kernelOps);
        emitLaunch(
            b, loc, emulate, cfg.elemType, kernelGrid, kernel.threadsPerBlock(),
            kernel.sharedBytes(), kernel.sharedAlign(),
            [&](SimtTarget &target) {
              emitFlashAttentionBlock(target, kernel, kernelOps);
            },
            token, fault);
      };
  // Split-KV: the partial kernel (on a grid of its own query blocks, times
  // the splits) writes each split's partials, a second kernel merges them
  // into the output. On the GPU the workspace's allocation, both launches
  // and the frees are enqueued in order on one stream, which the host waits
  // for once: the runtime allocates stream-ordered (docs/runtime.md), so
  // nothing in between waits for the device.
  std::array<Value, 3> splitGrid =
      partial ? gridSize(b, loc, op, *partial) : grid;
  auto launchSplit = [&](Value numSplits) {
    int64_t rank = op.getRank();
    Value lq = memref::DimOp::create(b, loc, op.getQuery(), rank - 2);
    Value rows = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, numSplits, splitGrid[2]),
        splitGrid[1]);
    Type f32 = b.getF32Type();
    Value stream = emulate ? Value() : createStream(b, loc);
    Value *token = emulate ? nullptr : &stream;
    auto workspace = [&](int64_t cols) -> Value {
      auto type = MemRefType::get(
          {ShapedType::kDynamic, ShapedType::kDynamic, cols}, f32);
      if (emulate)
        return memref::AllocOp::create(b, loc, type, ValueRange{rows, lq},
                                       b.getI64IntegerAttr(64));
      return createDeviceAlloc(b, loc, type, ValueRange{rows, lq}, stream);
    };
    FlashKernelOperands partialOps = operands;
    partialOps.numSplits = numSplits;
    partialOps.partialOut = workspace(cfg.headDimV);
    partialOps.partialStats = workspace(2);
    launchKernel(*partial, partialOps,
                 {arith::MulIOp::create(b, loc, splitGrid[0], numSplits),
                  splitGrid[1], splitGrid[2]},
                 token);
    SplitKVMergeOperands merge{numSplits, partialOps.partialOut,
                               partialOps.partialStats, op.getInit()};
    emitLaunch(
        b, loc, emulate, cfg.elemType,
        {splitKVMergeBlocks(b, loc, op.getInit()), splitGrid[1], splitGrid[2]},
        kMergeThreads,
        /*sharedBytes=*/0, /*sharedAlign=*/0,
        [&](SimtTarget &target) { emitSplitKVMergeBlock(target, merge); },
        token, fault);
    // (The emulation's buffers are freed by buffer deallocation.)
    if (emulate)
      return;
    for (Value buffer : {partialOps.partialOut, partialOps.partialStats})
      createDeviceDealloc(b, loc, buffer, stream);
    waitForStream(b, loc, stream);
  };
  auto launchAll = [&]() {
    if (cfg.splitKV == 1)
      return launchKernel(cfg, operands, grid);
    if (cfg.splitKV > 1)
      return launchSplit(arith::ConstantIndexOp::create(b, loc, cfg.splitKV));
    // Chosen at run time: grids that fill the GPU run unsplit.
    Value lk = memref::DimOp::create(b, loc, op.getKey(), op.getRank() - 2);
    Value kvBlocks = arith::CeilDivUIOp::create(
        b, loc, lk, arith::ConstantIndexOp::create(b, loc, partial->blockKV));
    Value blocks = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, splitGrid[0], splitGrid[1]),
        splitGrid[2]);
    Value numSplits =
        emitSplitCount(b, loc, blocks, kvBlocks,
                       partial->smCount * partial->blocksPerSM, kMaxSplitKV);
    auto ifOp = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numSplits,
                              arith::ConstantIndexOp::create(b, loc, 1)),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    launchSplit(numSplits);
    b.setInsertionPointToStart(ifOp.elseBlock());
    launchKernel(cfg, operands, grid);
  };

  if (emulate) {
    launchAll();
    op.erase();
    return;
  }

  // An empty grid is not a valid launch (nor is the merge's, empty with it).
  Value empty = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (Value size : grid)
    empty = arith::OrIOp::create(
        b, loc, empty,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, zero));
  Value nonEmpty = arith::XOrIOp::create(
      b, loc, empty, arith::ConstantIntOp::create(b, loc, 1, 1));
  auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  launchAll();
  op.erase();
}

void AttnToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<EmulationFault> parsedFault = parseEmulationFault(emulationFault);
  if (::mlir::failed(parsedFault) ||
      (parsedFault->kind != EmulationFault::Kind::None && !emulate)) {
    module.emitError(
        "attn-to-gpu: emulation-fault must be empty or "
        "<barrier|copy-wait|proxy-fence|mbarrier-wait|wgmma-"
        "wait|named-barrier|named-arrive>:<N>, with emulate, got '")
        << emulationFault << "'";
    return signalPassFailure();
  }
  fault = *parsedFault;
  fault.leftOut = &faultsLeftOut;
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) {
    // Ops already inside a kernel are not host code.
    if (!op->getParentOfType<gpu::GPUModuleOp>() &&
        !op->getParentOfType<gpu::LaunchOp>())
      ops.push_back(op);
  });
  bool failed = false;
  for (AttentionOp op : ops) {
    std::string why;
    FlashKernelRequest request{blockQ,
                               blockKV,
                               wgmma,
                               tma,
                               warpSpecialize,
                               intraWarpgroupOverlap,
                               pingpong,
                               rescaleThreshold,
                               splitKV,
                               smCount,
                               chip};
    request.tf32 = tf32;
    FailureOr<FlashKernelConfig> cfg = getFlashKernelConfig(op, request, why);
    std::optional<FlashKernelConfig> partial;
    if (succeeded(cfg) && cfg->splitKV != 1) {
      request.splitPartials = true;
      FailureOr<FlashKernelConfig> split =
          getFlashKernelConfig(op, request, why);
      if (succeeded(split))
        partial = *split;
      else
        cfg = failure();
    }
    if (::mlir::failed(cfg)) {
      op.emitOpError("cannot be lowered to the GPU kernel: ") << why;
      failed = true;
      continue;
    }
    lower(op, *cfg, partial);
  }
  if (failed)
    return signalPassFailure();
  // A test whose fault matches nothing would pass without testing anything.
  if (fault.kind != EmulationFault::Kind::None && faultsLeftOut == 0) {
    module.emitError("attn-to-gpu: emulation-fault '")
        << emulationFault << "' left nothing out: no emulated kernel has "
        << "that many synchronizations of its kind";
    return signalPassFailure();
  }
  if (!emulate && !ops.empty())
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
}
