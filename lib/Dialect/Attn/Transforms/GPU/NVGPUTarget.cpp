//===- NVGPUTarget.cpp - SIMT primitives as GPU ops -----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "SimtTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn::gpu_kernel;

namespace {
class NVGPUTarget final : public SimtTarget {
public:
  NVGPUTarget(OpBuilder &b, Location loc, Type elemType, Value smemBase,
              int64_t alignShared)
      : SimtTarget(b, loc, elemType), smemBase(smemBase) {
    if (alignShared <= 0)
      return;
    // The shared-window address of byte 0, and the shift to the first
    // aligned byte.
    baseAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smemBase);
    Value align = arith::ConstantIndexOp::create(b, loc, alignShared);
    Value misalign = arith::RemUIOp::create(b, loc, baseAddress, align);
    shift = arith::RemUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, align, misalign), align);
  }

  Type perThreadType(Type scalar) override { return scalar; }
  Value lift(Value uniform) override { return uniform; }
  Value threadId() override {
    return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  }
  Value blockId(int dim) override {
    return gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(dim));
  }

  Value sharedView(int64_t byteOffset, MemRefType type) override {
    Value offset = arith::ConstantIndexOp::create(b, loc, byteOffset);
    if (shift)
      offset = arith::AddIOp::create(b, loc, shift, offset);
    return memref::ViewOp::create(b, loc, type, smemBase, offset, ValueRange{});
  }

  Value sharedAddress(Value byteOffset) override {
    assert(baseAddress && "shared addresses need an aligned shared memory");
    Value addr = arith::AddIOp::create(
        b, loc, baseAddress, arith::AddIOp::create(b, loc, shift, byteOffset));
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), addr);
  }

  void fenceAsyncProxy() override {
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }

  void wgmmaFence(MutableArrayRef<Value> regs,
                  MutableArrayRef<PackedReg> a) override {
    pin(regs);
    for (PackedReg &r : a) {
      Value bits = asI32(r.packed);
      pin(bits);
      r.packed = bits;
    }
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
  }

  SmallVector<Value> wgmma(Value descA, Value descB, ArrayRef<Value> d,
                           int64_t n, bool accumulate,
                           bool transposeB) override {
    Type f32 = b.getF32Type();
    auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 SmallVector<Type>(n / 2, f32));
    // Without `accumulate` the instruction does not read D.
    Value in = LLVM::PoisonOp::create(b, loc, type);
    if (accumulate)
      for (int64_t i = 0; i < n / 2; ++i)
        in = LLVM::InsertValueOp::create(b, loc, in, d[i], i);
    auto operand =
        elemType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    // layoutA = row: A is K-major; layoutB = col: B is K-major (row: the
    // transposed, MN-major form).
    Value out = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, type, in, descA, descB,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), operand, operand,
        NVVM::WGMMATypes::f32,
        accumulate ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        transposeB ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
    SmallVector<Value> res;
    for (int64_t i = 0; i < n / 2; ++i)
      res.push_back(LLVM::ExtractValueOp::create(b, loc, out, i));
    return res;
  }

  SmallVector<Value> wgmmaRegA(ArrayRef<PackedReg> a, Value descB,
                               ArrayRef<Value> d, int64_t n, bool accumulate,
                               bool transposeB) override {
    // nvvm.wgmma.mma_async takes A only from shared memory; this is the
    // instruction's register-A form, built as upstream builds that op (PTX
    // in inline asm). Operands: $0..$m-1 the accumulators (outputs, tied
    // to the inputs $m..$2m-1), then A, the B descriptor and scale-d.
    int64_t m = n / 2;
    StringRef type = elemType.isBF16() ? "bf16" : "f16";
    std::string ptx;
    llvm::raw_string_ostream os(ptx);
    os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * m + 5 << ", 0;\n"
       << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32." << type << "."
       << type << " {";
    for (int64_t i = 0; i < m; ++i)
      os << (i ? ", " : "") << "$" << i;
    os << "}, {$" << 2 * m << ", $" << 2 * m + 1 << ", $" << 2 * m + 2 << ", $"
       << 2 * m + 3 << "}, $" << 2 * m + 4 << ", p, 1, 1, "
       << (transposeB ? 1 : 0) << ";\n}\n";
    std::string constraints;
    for (int64_t i = 0; i < m; ++i)
      constraints += "=f,";
    for (int64_t i = 0; i < m; ++i)
      constraints += std::to_string(i) + ",";
    constraints += "r,r,r,r,l,r";
    Type f32 = b.getF32Type();
    SmallVector<Value> operands;
    // Without `accumulate` the instruction does not read D.
    Value poison;
    if (!accumulate)
      poison = LLVM::PoisonOp::create(b, loc, f32);
    for (int64_t i = 0; i < m; ++i)
      operands.push_back(accumulate ? d[i] : poison);
    for (const PackedReg &r : a)
      operands.push_back(asI32(r.packed));
    operands.push_back(descB);
    operands.push_back(
        arith::ConstantIntOp::create(b, loc, accumulate ? 1 : 0, 32));
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(m, f32));
    Value out = inlineAsm(ptx, constraints, resultType, operands);
    SmallVector<Value> res;
    for (int64_t i = 0; i < m; ++i)
      res.push_back(LLVM::ExtractValueOp::create(b, loc, out, i));
    return res;
  }

  void wgmmaCommit() override { NVVM::WgmmaGroupSyncAlignedOp::create(b, loc); }

  void wgmmaWait(int pending, MutableArrayRef<Value> regs) override {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(pending));
    pin(regs);
  }

  /// A packed register as the i32 that PTX operands take.
  Value asI32(Value packed) {
    if (packed.getType().isInteger(32))
      return packed;
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), packed);
  }

  /// Ties each of `regs` (f32 or i32) to its place in the program: an empty
  /// volatile inline asm that reads and rewrites it. The wgmma fence and
  /// wait are ordered only with memory and side effects; without this, LLVM
  /// may move the arithmetic on a wgmma operand across them (CUTLASS does
  /// the same).
  void pin(MutableArrayRef<Value> regs) {
    for (Value &r : regs)
      r = inlineAsm("", r.getType().isF32() ? "=f,0" : "=r,0", r.getType(),
                    {r});
  }

  /// Inline asm; volatile (ordered with other side effects, never
  /// removed or merged) unless `pure`.
  Value inlineAsm(StringRef asmText, StringRef constraints, Type result,
                  ValueRange operands, bool pure = false) {
    return LLVM::InlineAsmOp::create(
               b, loc, result, operands, b.getStringAttr(asmText),
               b.getStringAttr(constraints),
               /*has_side_effects=*/pure ? UnitAttr() : b.getUnitAttr(),
               /*is_align_stack=*/UnitAttr(),
               LLVM::TailCallKindAttr::get(b.getContext(),
                                           LLVM::TailCallKind::None),
               /*asm_dialect=*/LLVM::AsmDialectAttr(),
               /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }

  void copyAsync(Value src, ValueRange srcIdx, Value dst, ValueRange dstIdx,
                 int64_t elems, Value valid, Value active) override {
    // Zero source elements: cp.async's src-size operand zero-fills.
    Value full = arith::ConstantIndexOp::create(b, loc, elems);
    Value none = arith::ConstantIndexOp::create(b, loc, 0);
    Value srcElems = arith::SelectOp::create(b, loc, valid, full, none);
    auto copy = [&] {
      return nvgpu::DeviceAsyncCopyOp::create(b, loc, dst, dstIdx, src, srcIdx,
                                              b.getIndexAttr(elems), srcElems,
                                              b.getUnitAttr());
    };
    if (!active) {
      pending.push_back(copy());
      return;
    }
    // A predicated copy. Its token stays inside the branch: the group's
    // commit orders nothing by its tokens (cp.async.commit_group takes no
    // operand).
    auto ifOp = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copy();
  }
  void commitGroup() override {
    Value group = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, pending);
    if (!firstGroup)
      firstGroup = group;
    pending.clear();
  }
  void waitGroups(int pendingGroups) override {
    // The wait counts groups; its token operand only orders it after a
    // commit. The first group (committed in the prologue) dominates every
    // wait, including those after the K/V loop.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, firstGroup,
                                     b.getI32IntegerAttr(pendingGroups));
  }
  void barrier() override { gpu::BarrierOp::create(b, loc); }

  SmallVector<PackedReg> loadMatrix(Value smem, ValueRange prefix, Value row,
                                    Value col, int numTiles,
                                    bool transpose) override {
    SmallVector<Value> idx(prefix.begin(), prefix.end());
    idx.push_back(row);
    idx.push_back(col);
    auto type = VectorType::get({numTiles, 2}, elemType);
    Value frag =
        nvgpu::LdMatrixOp::create(b, loc, type, smem, idx, transpose, numTiles);
    SmallVector<PackedReg> regs;
    for (int i = 0; i < numTiles; ++i)
      regs.push_back({vector::ExtractOp::create(b, loc, frag, i), {}, {}});
    return regs;
  }

  std::array<Value, 4> mma(ArrayRef<PackedReg> a, ArrayRef<PackedReg> bRegs,
                           ArrayRef<Value> c) override {
    // f16 operands go as vector<2xf16>; bf16 ones as i32 (the form
    // nvvm.mma.sync infers bf16 from, with explicit PTX types).
    bool bf16 = elemType.isBF16();
    auto operand = [&](const PackedReg &r) -> Value {
      if (!bf16)
        return r.packed;
      return LLVM::BitcastOp::create(b, loc, b.getI32Type(), r.packed);
    };
    SmallVector<Value> av, bv;
    for (const PackedReg &r : a)
      av.push_back(operand(r));
    for (const PackedReg &r : bRegs)
      bv.push_back(operand(r));
    NVVM::MMATypes type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    return mmaSync({16, 8, 16}, type, av, bv, c);
  }

  std::array<Value, 4> mmaTF32(ArrayRef<Value> a, ArrayRef<Value> bv,
                               ArrayRef<Value> c) override {
    auto bits = [&](Value x) -> Value {
      return arith::BitcastOp::create(b, loc, b.getI32Type(), x);
    };
    SmallVector<Value> av = llvm::map_to_vector(a, bits);
    SmallVector<Value> bw = llvm::map_to_vector(bv, bits);
    return mmaSync({16, 8, 8}, NVVM::MMATypes::tf32, av, bw, c);
  }

  /// nvvm.mma.sync (row.col, f32 accumulators) and its 4 results.
  std::array<Value, 4> mmaSync(std::array<int64_t, 3> shape,
                               NVVM::MMATypes type, ValueRange a, ValueRange bv,
                               ValueRange c) {
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, a, bv, c, shape, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{type, type},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    std::array<Value, 4> out;
    for (int i = 0; i < 4; ++i)
      out[i] = LLVM::ExtractValueOp::create(b, loc, d, i);
    return out;
  }

  Value roundToTF32(Value x) override {
    Value r = inlinePtx("cvt.rna.tf32.f32 $0, $1;", "=r,f", b.getI32Type(), x);
    return arith::BitcastOp::create(b, loc, b.getF32Type(), r);
  }

  Value shuffleIdx(Value v, Value srcLane) override {
    Value lane32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), srcLane);
    Value width =
        arith::ConstantIntOp::create(b, loc, attn::gpu_kernel::kWarpSize, 32);
    return gpu::ShuffleOp::create(b, loc, v, lane32, width,
                                  gpu::ShuffleMode::IDX)
        .getShuffleResult();
  }

  Value shuffleXor(Value v, int mask) override {
    Value offset = arith::ConstantIntOp::create(b, loc, mask, 32);
    Value width =
        arith::ConstantIntOp::create(b, loc, attn::gpu_kernel::kWarpSize, 32);
    return gpu::ShuffleOp::create(b, loc, v, offset, width,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  Value warpAny(Value pred) override {
    Value all = arith::ConstantIntOp::create(b, loc, -1, 32);
    return NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), all, pred,
                                    NVVM::VoteSyncKind::any);
  }
  bool hasScalarControlFlow() const override { return true; }

  Value exp2(Value x) override {
    // The instruction itself: math.exp2 would become a libdevice call (which
    // needs libdevice at compile time) and llvm.exp2 is illegal in the NVVM
    // lowering. Flushing denormal results to 0 does not matter in softmax.
    return inlinePtx("ex2.approx.ftz.f32 $0, $1;", "=f,f", x.getType(), x);
  }

  Value fma(Value x, Value y, Value z) override {
    // The LLVM intrinsic: math.fma would become a libdevice call.
    return LLVM::FMAOp::create(b, loc, x, y, z);
  }

  /// One PTX instruction as side-effect-free inline assembly.
  Value inlinePtx(StringRef ptx, StringRef constraints, Type result, Value x) {
    return inlineAsm(ptx, constraints, result, x, /*pure=*/true);
  }

  PackedReg pack(Value lo, Value hi) override {
    Value l = arith::TruncFOp::create(b, loc, elemType, lo);
    Value h = arith::TruncFOp::create(b, loc, elemType, hi);
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, elemType), ValueRange{l, h});
    return {v, {}, {}};
  }

  SmallVector<Value> packedParts(const PackedReg &r) override {
    return {r.packed};
  }
  PackedReg fromPackedParts(ValueRange parts) override {
    return {parts[0], {}, {}};
  }

  void initBarriers(ArrayRef<int64_t> arrivals) override {
    auto groupType = nvgpu::MBarrierGroupType::get(
        b.getContext(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup),
        arrivals.size());
    barriers = nvgpu::MBarrierCreateOp::create(b, loc, groupType);
    elected =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId(),
                              arith::ConstantIndexOp::create(b, loc, 0));
    for (auto [i, count] : llvm::enumerate(arrivals))
      nvgpu::MBarrierInitOp::create(
          b, loc, barriers, arith::ConstantIndexOp::create(b, loc, count),
          arith::ConstantIndexOp::create(b, loc, i), elected);
    // The initialization is visible to the TMA unit (the async proxy)
    // before its copies complete on these barriers.
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }

  void expectBytes(Value barrier, int64_t bytes, Value pred) override {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, loc, barriers, arith::ConstantIndexOp::create(b, loc, bytes),
        barrier, issuer(pred));
  }

  void tmaLoad(Value global, Value map, ValueRange coords, Value byteOffset,
               ArrayRef<int64_t> box, Value barrier, Value pred) override {
    assert(map && "TMA loads on the GPU need a tensor map");
    nvgpu::TmaAsyncLoadOp::create(b, loc, boxView(byteOffset, box), barriers,
                                  map, innermostFirst(coords), barrier,
                                  /*multicastMask=*/Value(), issuer(pred));
  }

  void tmaStore(Value global, Value map, ValueRange coords, Value byteOffset,
                ArrayRef<int64_t> box, Value pred) override {
    assert(map && "TMA stores on the GPU need a tensor map");
    nvgpu::TmaAsyncStoreOp::create(b, loc, boxView(byteOffset, box), map,
                                   innermostFirst(coords), issuer(pred));
  }

  /// The shared-memory tile of a TMA box at `byteOffset`.
  Value boxView(Value byteOffset, ArrayRef<int64_t> box) {
    Value offset =
        shift ? arith::AddIOp::create(b, loc, shift, byteOffset) : byteOffset;
    return memref::ViewOp::create(b, loc,
                                  getTmaBoxType(b.getContext(), box, elemType),
                                  smemBase, offset, ValueRange{});
  }
  /// TMA instructions take coordinates innermost first.
  static SmallVector<Value> innermostFirst(ValueRange coords) {
    return SmallVector<Value>(llvm::reverse(coords));
  }

  void waitTmaStores() override {
    // Bulk groups are per thread; in the others the group is empty.
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0),
                                         b.getUnitAttr());
  }

  void waitBarrier(Value barrier, Value parity) override {
    // The suspend-time hint of upstream's examples; try_wait loops until
    // the phase completes either way.
    Value ticks = arith::ConstantIndexOp::create(b, loc, 10000000);
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, barriers, parity, ticks,
                                           barrier);
  }

  void endBarriers() override {}

  void arriveBarrier(Value barrier, Value pred) override {
    auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    nvgpu::MBarrierArriveOp::create(
        b, loc, nvgpu::MBarrierTokenType::get(b.getContext()), barriers,
        barrier);
  }

  void setIssuer(Value pred) override { elected = pred; }

  bool hasProducerWarpGroup() const override { return true; }

  void setMaxRegisters(int64_t count, bool increase) override {
    NVVM::SetMaxRegisterOp::create(b, loc, static_cast<int32_t>(count),
                                   increase
                                       ? NVVM::SetMaxRegisterAction::increase
                                       : NVVM::SetMaxRegisterAction::decrease);
  }

  void namedBarrier(Value id, int64_t threads) override {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, asI32Index(id),
                            arith::ConstantIntOp::create(b, loc, threads, 32),
                            /*reductionOp=*/NVVM::BarrierReductionAttr{},
                            /*reductionPredicate=*/Value{});
  }
  void namedBarrierArrive(Value id, int64_t threads, Value pred) override {
    OpBuilder::InsertionGuard guard(b);
    if (pred) {
      auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    NVVM::BarrierArriveOp::create(
        b, loc, asI32Index(id),
        arith::ConstantIntOp::create(b, loc, threads, 32));
  }
  // (The GPU runs what the kernel orders.)
  void orderSharedMemoryByMbarriers() override {}
  void actAs(uint32_t) override {}
  Value asI32Index(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }

  /// `pred`, in the one thread that issues the block's TMA operations.
  Value issuer(Value pred) {
    assert(elected && "initBarriers comes first");
    return arith::AndIOp::create(b, loc, elected, pred);
  }

  Value load(Value memref, ValueRange idx) override {
    return memref::LoadOp::create(b, loc, memref, idx);
  }
  std::pair<Value, Value> loadPair(Value memref, ValueRange idx) override {
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    // An i1 is stored in a byte.
    Type stored = elem.isInteger(1) ? b.getI8Type() : elem;
    int64_t bits = stored.getIntOrFloatBitWidth();
    // The pair's address: element `linear` from the buffer's aligned start,
    // in the global space (the cast is loop-invariant).
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value linear = meta.getOffset();
    for (auto [i, stride] : llvm::enumerate(meta.getStrides()))
      linear = arith::AddIOp::create(
          b, loc, linear, arith::MulIOp::create(b, loc, idx[i], stride));
    Type i64 = b.getI64Type();
    auto globalPtr =
        LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/1);
    Value start = LLVM::AddrSpaceCastOp::create(
        b, loc, globalPtr,
        LLVM::IntToPtrOp::create(
            b, loc, LLVM::LLVMPointerType::get(b.getContext()),
            arith::IndexCastOp::create(
                b, loc, i64,
                memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref))
                .getResult()));
    Value ptr = LLVM::GEPOp::create(
        b, loc, globalPtr, stored, start,
        ArrayRef<LLVM::GEPArg>{
            arith::IndexCastOp::create(b, loc, i64, linear).getResult()});
    // One load of both elements instead of two, in asm: LLVM splits a
    // vector load whose lanes are only extracted back into scalar loads,
    // which then merge with the unpaired path's.
    if (bits == 32) {
      Type f32 = b.getF32Type();
      Value pair = inlineAsm(
          "ld.global.v2.f32 {$0, $1}, [$2];", "=f,=f,l",
          LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32}), {ptr});
      return {LLVM::ExtractValueOp::create(b, loc, pair, 0),
              LLVM::ExtractValueOp::create(b, loc, pair, 1)};
    }
    // (The verifier allows f32, f16, bf16 and, for masks, i1.)
    assert((bits == 16 || bits == 8) && "unexpected mask/bias element type");
    Type word = b.getIntegerType(2 * bits), narrow = b.getIntegerType(bits);
    Value pair =
        bits == 16 ? inlineAsm("ld.global.b32 $0, [$1];", "=r,l", word, {ptr})
                   : inlineAsm("ld.global.b16 $0, [$1];", "=h,l", word, {ptr});
    // Little-endian: the first element is the low half. An i1 is the low
    // bit of its byte.
    auto half = [&](int64_t shift) -> Value {
      Value x = pair;
      if (shift)
        x = arith::ShRUIOp::create(
            b, loc, x, arith::ConstantIntOp::create(b, loc, word, shift));
      if (elem.isInteger(1))
        return arith::TruncIOp::create(b, loc, elem, x);
      return arith::BitcastOp::create(
          b, loc, elem, arith::TruncIOp::create(b, loc, narrow, x));
    };
    return {half(0), half(bits)};
  }
  void storePair(Value lo, Value hi, Value memref, ValueRange idx,
                 Value pred) override {
    auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Type elem = lo.getType();
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, elem), ValueRange{lo, hi});
    // One 32-bit (64-bit for f32) store instead of two.
    vector::StoreOp::create(
        b, loc, pair, memref, idx, /*nontemporal=*/false,
        llvm::MaybeAlign(2 * elem.getIntOrFloatBitWidth() / 8));
  }

private:
  Value smemBase, baseAddress, shift;
  // The mbarrier group and the thread that issues TMA operations.
  Value barriers, elected;
  SmallVector<Value> pending;
  Value firstGroup;
};
} // namespace

MemRefType mlir::attn::gpu_kernel::getTmaBoxType(MLIRContext *ctx,
                                                 ArrayRef<int64_t> box,
                                                 Type elemType) {
  return MemRefType::get(
      box, elemType, MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

Type mlir::attn::gpu_kernel::getTmaMapType(MLIRContext *ctx,
                                           ArrayRef<int64_t> box,
                                           Type elemType) {
  // The 128-byte swizzle of the wgmma operand panels; L2 promotion of 128
  // bytes (CUTLASS's default for TMA loads); zeros outside the tensor.
  return nvgpu::TensorMapDescriptorType::get(
      ctx, getTmaBoxType(ctx, box, elemType),
      nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

std::unique_ptr<SimtTarget>
mlir::attn::gpu_kernel::createNVGPUTarget(OpBuilder &b, Location loc,
                                          Type elemType, Value smemBase,
                                          int64_t alignShared) {
  return std::make_unique<NVGPUTarget>(b, loc, elemType, smemBase, alignShared);
}
