//===- AttnToGPU.cpp - attn.attention to a fused GPU kernel ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "GPU/FlashAttentionKernel.h"
#include "GPU/SimtTarget.h"

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
  void lower(AttentionOp op, const FlashKernelConfig &cfg);
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
  Value y = arith::ConstantIndexOp::create(b, loc, op.getNumQueryHeads());
  Value z = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t i = 0; i < rank - 3; ++i)
    z = arith::MulIOp::create(b, loc, z, memref::DimOp::create(b, loc, q, i));
  return {x, y, z};
}

void AttnToGPUPass::lower(AttentionOp op, const FlashKernelConfig &cfg) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // The output buffer bufferization allocated for a tensor result lives on
  // the device like every other operand.
  if (!emulate) {
    if (auto alloc = op.getInit().getDefiningOp<memref::AllocOp>()) {
      OpBuilder ab(alloc);
      auto gpuAlloc = gpu::AllocOp::create(
          ab, alloc.getLoc(), TypeRange{alloc.getType()},
          /*asyncDependencies=*/ValueRange{}, alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/false);
      alloc.getResult().replaceAllUsesWith(gpuAlloc.getMemref());
      alloc.erase();
      // Deallocations of it, if any, must free device memory too.
      for (Operation *user :
           llvm::make_early_inc_range(gpuAlloc.getMemref().getUsers()))
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
          OpBuilder db(dealloc);
          gpu::DeallocOp::create(db, dealloc.getLoc(), TypeRange{},
                                 ValueRange{}, dealloc.getMemref());
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
  std::array<Value, 3> grid = gridSize(b, loc, op, cfg);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);

  if (emulate) {
    // Shared memory is one stack buffer, reused by the blocks in turn (a
    // stack buffer, so that buffer deallocation has nothing to track),
    // aligned as the GPU's (bank conflicts are checked on addresses).
    auto smemType = MemRefType::get({cfg.sharedBytes()}, b.getI8Type());
    Value smem =
        memref::AllocaOp::create(b, loc, smemType, b.getI64IntegerAttr(1024));
    auto zLoop = scf::ForOp::create(b, loc, zero, grid[2], one);
    b.setInsertionPointToStart(zLoop.getBody());
    auto yLoop = scf::ForOp::create(b, loc, zero, grid[1], one);
    b.setInsertionPointToStart(yLoop.getBody());
    auto xLoop = scf::ForOp::create(b, loc, zero, grid[0], one);
    b.setInsertionPointToStart(xLoop.getBody());
    std::unique_ptr<SimtTarget> target =
        createEmulationTarget(b, loc, cfg.elemType,
                              {xLoop.getInductionVar(), yLoop.getInductionVar(),
                               zLoop.getInductionVar()},
                              smem);
    emitFlashAttentionBlock(*target, cfg, operands);
    op.erase();
    return;
  }

  // An empty grid is not a valid launch.
  Value empty = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, grid[0], zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, grid[2], zero));
  Value nonEmpty = arith::XOrIOp::create(
      b, loc, empty, arith::ConstantIntOp::create(b, loc, 1, 1));
  auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  if (cfg.tma) {
    // One tensor map per operand, encoded by the runtime on each call (it
    // caches them) and read by the kernel from device memory.
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
          b, loc, getTmaMapType(b.getContext(), box, cfg.elemType), unranked,
          boxSizes);
    };
    operands.queryMap = encode(operands.query, cfg.blockQ);
    operands.keyMap = encode(operands.key, cfg.blockKV);
    operands.valueMap = encode(operands.value, cfg.blockKV);
    if (cfg.tmaStore)
      operands.outMap = encode(operands.out, cfg.blockQ);
  }
  Value threads = arith::ConstantIndexOp::create(b, loc, cfg.threadsPerBlock());
  Value smemBytes = arith::ConstantIntOp::create(b, loc, cfg.sharedBytes(), 32);
  auto launch = gpu::LaunchOp::create(b, loc, grid[0], grid[1], grid[2],
                                      threads, one, one, smemBytes);
  b.setInsertionPointToStart(&launch.getBody().front());
  auto smemType = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value smem = gpu::DynamicSharedMemoryOp::create(b, loc, smemType);
  std::unique_ptr<SimtTarget> target =
      createNVGPUTarget(b, loc, cfg.elemType, smem, cfg.sharedAlign());
  emitFlashAttentionBlock(*target, cfg, operands);
  gpu::TerminatorOp::create(b, loc);
  op.erase();
}

void AttnToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
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
    FailureOr<FlashKernelConfig> cfg = getFlashKernelConfig(
        op,
        {blockQ, blockKV, wgmma, tma, warpSpecialize, intraWarpgroupOverlap,
         pingpong, rescaleThreshold, chip},
        why);
    if (::mlir::failed(cfg)) {
      op.emitOpError("cannot be lowered to the GPU kernel: ") << why;
      failed = true;
      continue;
    }
    lower(op, *cfg);
  }
  if (failed)
    return signalPassFailure();
  if (!emulate && !ops.empty())
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
}
