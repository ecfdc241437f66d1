//===- EmulationTarget.cpp - SIMT primitives emulated on the CPU ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Every per-thread value is a vector<128xT> whose lane i is thread i's value.
// A warp-specialized kernel runs each consumer warpgroup as a program of its
// own, interleaved with the others and the producer's steps by the kernel.
// The cross-lane instructions follow the PTX ISA's fragment layouts (for a
// thread with lane l in its warp: groupID g = l / 4, threadID_in_group
// t = l % 4):
//   mma.m16n8k16 A: a0,a1 = A[g][2t..2t+1]     a2,a3 = A[g+8][2t..2t+1]
//                   a4,a5 = A[g][2t+8..+9]     a6,a7 = A[g+8][2t+8..+9]
//                B: b0,b1 = B[2t..2t+1][g]     b2,b3 = B[2t+8..+9][g]
//                C: c0,c1 = C[g][2t..2t+1]     c2,c3 = C[g+8][2t..2t+1]
//   ldmatrix .m8n8: threads 8i..8i+7 give the row addresses of matrix i;
//                each thread gets row g, columns 2t..2t+1 of each matrix
//                (with .trans: rows 2t..2t+1 of column g).
// Asynchronous copies complete at once and the lanes run in lockstep, so
// shared memory never races here; instead every shared-memory access, wait
// and barrier updates a race model (SharedMemoryRaces.h), and an access
// that the GPU would not order after a conflicting one aborts the
// emulation. mbarriers are modelled by their phases and byte counts, and a
// wait that would not return (or return early) on the GPU aborts it too.
//
//===----------------------------------------------------------------------===//

#include "SharedMemoryRaces.h"
#include "SimtTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace mlir::attn::gpu_kernel;

namespace {
class EmulationTarget final : public SimtTarget {
public:
  EmulationTarget(OpBuilder &b, Location loc, Type elemType,
                  std::array<Value, 3> blockIds, Value smemBase,
                  EmulationFault fault)
      : SimtTarget(b, loc, elemType), blockIds(blockIds), smemBase(smemBase),
        programStart(b.getInsertionBlock()), fault(fault) {}

  Type perThreadType(Type scalar) override {
    return VectorType::get({kThreadsPerBlock}, scalar);
  }
  Value lift(Value uniform) override {
    return vector::BroadcastOp::create(b, loc, perThreadType(uniform.getType()),
                                       uniform);
  }
  Value threadId() override {
    SmallVector<int64_t> ids;
    for (int64_t i = 0; i < kThreadsPerBlock; ++i)
      ids.push_back(i);
    auto type = VectorType::get({kThreadsPerBlock}, b.getIndexType());
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, ArrayRef<Attribute>(llvm::map_to_vector(
                                         ids, [&](int64_t i) -> Attribute {
                                           return b.getIndexAttr(i);
                                         }))));
  }
  Value blockId(int dim) override { return blockIds[dim]; }

  Value sharedView(int64_t byteOffset, MemRefType type) override {
    Value offset = indexConst(byteOffset);
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    Value view =
        memref::ViewOp::create(b, loc, plain, smemBase, offset, ValueRange{});
    sharedViews.insert(view);
    return view;
  }

  void copyAsync(Value src, ValueRange srcIdx, Value dst, ValueRange dstIdx,
                 int64_t elems, Value valid, Value active) override {
    if (!active)
      active = lift(arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    SmallVector<Value> args = {src, dst, valid, active};
    args.append(srcIdx.begin(), srcIdx.end());
    args.append(dstIdx.begin(), dstIdx.end());
    size_t ns = srcIdx.size();
    int64_t bytes =
        elems * cast<MemRefType>(dst.getType()).getElementTypeBitWidth() / 8;
    trackLanes("cp.async", Access::CopyWrite, dst, dstIdx, bytes, kWarpSize,
               active);
    outlined("copy" + std::to_string(elems), args, {},
             [&](ValueRange a) -> SmallVector<Value> {
               copyAsyncImpl(a[0], a.slice(4, ns), a[1], a.drop_front(4 + ns),
                             elems, a[2], a[3]);
               return {};
             });
  }
  void copyAsyncImpl(Value src, ValueRange srcIdx, Value dst, ValueRange dstIdx,
                     int64_t elems, Value valid, Value active) {
    // Every phase, including those whose chunks lie in several tile rows
    // (loadTile's chunk order). Zero fills write their bytes too.
    int64_t bytes =
        elems * cast<MemRefType>(dst.getType()).getElementTypeBitWidth() / 8;
    checkBanks("cp.async", dst, dstIdx, bytes, 128 / bytes, kWarpSize, active);
    checkAligned("cp.async", dst, dstIdx, bytes, kWarpSize, active);
    checkAligned("cp.async (its global source)", src, srcIdx, bytes, kWarpSize,
                 active);
    laneLoop({}, [&](Value lane, ValueRange) -> SmallVector<Value> {
      auto activeIf = scf::IfOp::create(b, loc, extract(active, lane),
                                        /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(activeIf.thenBlock()->getTerminator());
      SmallVector<Value> s = extractAll(srcIdx, lane);
      SmallVector<Value> d = extractAll(dstIdx, lane);
      Value ok = extract(valid, lane);
      Type elem = cast<MemRefType>(dst.getType()).getElementType();
      for (int64_t e = 0; e < elems; ++e) {
        SmallVector<Value> si = s, di = d;
        si.back() = addConst(si.back(), e);
        di.back() = addConst(di.back(), e);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, ok,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          scf::YieldOp::create(b, loc, ValueRange{loadOrNaN(src, si, elem)});
          b.setInsertionPointToStart(ifOp.elseBlock());
          Value zero =
              arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem));
          scf::YieldOp::create(b, loc, zero);
        }
        memref::StoreOp::create(b, loc, ifOp.getResult(0), dst, di);
      }
      return {};
    });
  }
  /// src[idx], or NaN where idx is outside src: a copy whose source row
  /// escaped its clamp would read out of bounds on a GPU; here it poisons
  /// the result instead of reading the emulation's neighbouring memory.
  Value loadOrNaN(Value src, ValueRange idx, Type elem) {
    auto floatType = cast<FloatType>(elem);
    return loadIfInside(
        src, idx,
        b.getFloatAttr(elem, APFloat::getNaN(floatType.getFloatSemantics())));
  }
  /// Whether idx is inside memref `m` (each index unsigned below its dim).
  Value isInside(Value m, ValueRange idx) {
    Value inside = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    for (auto [d, i] : llvm::enumerate(idx)) {
      Value size = memref::DimOp::create(b, loc, m, d);
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, size));
    }
    return inside;
  }
  /// src[idx], or the constant `outside` where idx is outside src.
  Value loadIfInside(Value src, ValueRange idx, TypedAttr outside) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{outside.getType()},
                                  isInside(src, idx), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc,
                         ValueRange{memref::LoadOp::create(b, loc, src, idx)});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc, ValueRange{arith::ConstantOp::create(b, loc, outside)});
    return ifOp.getResult(0);
  }

  void commitGroup() override {
    if (checkRaces)
      races::commitCopies(b, loc, raceState());
  }
  void waitGroups(int pending) override {
    if (!keep(EmulationFault::Kind::CopyWait) || !checkRaces)
      return;
    outlined("race_wait_copies" + std::to_string(pending), {raceState()}, {},
             [&](ValueRange a) -> SmallVector<Value> {
               races::waitCopies(b, loc, a[0], pending);
               return {};
             });
  }
  void barrier() override {
    if (!keep(EmulationFault::Kind::Barrier) || !checkRaces)
      return;
    races::barrier(b, loc, raceState());
    if (ordering == races::Ordering::WarpGroups)
      races::syncGroups(b, loc, raceState(), (1u << races::kMaxWarpGroups) - 1);
  }

  SmallVector<PackedReg> loadMatrix(Value smem, ValueRange prefix, Value row,
                                    Value col, int numTiles,
                                    bool transpose) override {
    SmallVector<Value> args = {smem, row, col};
    args.append(prefix.begin(), prefix.end());
    SmallVector<Value> at(prefix.begin(), prefix.end());
    at.append({row, col});
    trackLanes("ldmatrix", Access::Read, smem, at, 16, 8 * numTiles);
    SmallVector<Type> results(2 * numTiles, perThreadType(elemType));
    SmallVector<Value> regs =
        outlined("ldmatrix" + std::to_string(numTiles) + (transpose ? "t" : ""),
                 args, results, [&](ValueRange a) -> SmallVector<Value> {
                   SmallVector<PackedReg> r = loadMatrixImpl(
                       a[0], a.drop_front(3), a[1], a[2], numTiles, transpose);
                   SmallVector<Value> flat;
                   for (const PackedReg &p : r) {
                     flat.push_back(p.lo);
                     flat.push_back(p.hi);
                   }
                   return flat;
                 });
    SmallVector<PackedReg> out;
    for (int i = 0; i < numTiles; ++i)
      out.push_back({{}, regs[2 * i], regs[2 * i + 1]});
    return out;
  }
  SmallVector<PackedReg> loadMatrixImpl(Value smem, ValueRange prefix,
                                        Value row, Value col, int numTiles,
                                        bool transpose) {
    // Lane 8i + r gives the address of row r of matrix i: 16 bytes; each
    // matrix is one phase.
    SmallVector<Value> at(prefix.begin(), prefix.end());
    at.append({row, col});
    checkBanks("ldmatrix", smem, at, 16, 8, 8 * numTiles);
    checkAligned("ldmatrix", smem, at, 16, 8 * numTiles);
    SmallVector<Value> inits;
    for (int i = 0; i < 2 * numTiles; ++i)
      inits.push_back(zeros(elemType));
    SmallVector<Value> regs =
        laneLoop(inits, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          auto [warpBase, g, t] = laneCoords(lane);
          SmallVector<Value> next;
          for (int i = 0; i < numTiles; ++i) {
            for (int e = 0; e < 2; ++e) {
              // The thread whose address gives the element's matrix row.
              Value src, colOffset;
              if (!transpose) {
                src = add(warpBase, addConst(g, 8 * i));
                colOffset = addConst(mulConst(t, 2), e);
              } else {
                src = add(warpBase, addConst(mulConst(t, 2), 8 * i + e));
                colOffset = g;
              }
              SmallVector<Value> idx(prefix.begin(), prefix.end());
              idx.push_back(extract(row, src));
              idx.push_back(add(extract(col, src), colOffset));
              Value v = memref::LoadOp::create(b, loc, smem, idx);
              next.push_back(insert(v, cur[2 * i + e], lane));
            }
          }
          return next;
        });
    SmallVector<PackedReg> out;
    for (int i = 0; i < numTiles; ++i)
      out.push_back({{}, regs[2 * i], regs[2 * i + 1]});
    return out;
  }

  std::array<Value, 4> mma(ArrayRef<PackedReg> a, ArrayRef<PackedReg> bRegs,
                           ArrayRef<Value> c) override {
    SmallVector<Value> args;
    for (const PackedReg &r : a)
      args.append({r.lo, r.hi});
    for (const PackedReg &r : bRegs)
      args.append({r.lo, r.hi});
    args.append(c.begin(), c.end());
    SmallVector<Type> results(4, perThreadType(b.getF32Type()));
    SmallVector<Value> d =
        outlined("mma", args, results, [&](ValueRange x) -> SmallVector<Value> {
          SmallVector<PackedReg> ar, br;
          for (int i = 0; i < 4; ++i)
            ar.push_back({{}, x[2 * i], x[2 * i + 1]});
          for (int i = 0; i < 2; ++i)
            br.push_back({{}, x[8 + 2 * i], x[8 + 2 * i + 1]});
          SmallVector<Value> c4(x.slice(12, 4));
          std::array<Value, 4> r = mmaImpl(ar, br, c4);
          return {r[0], r[1], r[2], r[3]};
        });
    return {d[0], d[1], d[2], d[3]};
  }
  std::array<Value, 4> mmaImpl(ArrayRef<PackedReg> a, ArrayRef<PackedReg> bRegs,
                               ArrayRef<Value> c) {
    Type f32 = b.getF32Type();
    auto widen = [&](Value v) {
      return arith::ExtFOp::create(b, loc, perThreadType(f32), v);
    };
    // [reg][element] as f32 vectors.
    SmallVector<std::array<Value, 2>> av, bv;
    for (const PackedReg &r : a)
      av.push_back({widen(r.lo), widen(r.hi)});
    for (const PackedReg &r : bRegs)
      bv.push_back({widen(r.lo), widen(r.hi)});
    // 16-bit operands: k = 8 kHalf + 2 pair + e sits in lane 4 row + pair,
    // register (rowHalf +) 2 kHalf for A (kHalf for B), element e.
    return emulateMma(
        16, c,
        [&](int rowHalf, int k) {
          return std::make_pair(av[rowHalf + 2 * (k / 8)][k % 2], (k % 8) / 2);
        },
        [&](int k) { return std::make_pair(bv[k / 8][k % 2], (k % 8) / 2); });
  }

  std::array<Value, 4> mmaTF32(ArrayRef<Value> a, ArrayRef<Value> bv,
                               ArrayRef<Value> c) override {
    SmallVector<Value> args(a.begin(), a.end());
    args.append(bv.begin(), bv.end());
    args.append(c.begin(), c.end());
    SmallVector<Type> results(4, perThreadType(b.getF32Type()));
    SmallVector<Value> d = outlined(
        "mmatf32", args, results, [&](ValueRange x) -> SmallVector<Value> {
          SmallVector<Value> av(x.slice(0, 4)), bw(x.slice(4, 2)),
              cv(x.slice(6, 4));
          // tf32 operands: k = 4 kHalf + pair sits in lane 4 row + pair,
          // register (rowHalf +) 2 kHalf for A (kHalf for B).
          std::array<Value, 4> r = emulateMma(
              8, cv,
              [&](int rowHalf, int k) {
                return std::make_pair(av[rowHalf + 2 * (k / 4)], k % 4);
              },
              [&](int k) { return std::make_pair(bw[k / 4], k % 4); });
          return {r[0], r[1], r[2], r[3]};
        });
    return {d[0], d[1], d[2], d[3]};
  }

  Value roundToTF32(Value x) override {
    // Nearest, ties away from zero, on the magnitude bits: add half of the
    // dropped 13-bit range, then clear it.
    Type i32 = perThreadType(b.getI32Type());
    auto splat = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          b, loc, i32,
          DenseElementsAttr::get(cast<ShapedType>(i32),
                                 b.getI32IntegerAttr(v)));
    };
    Value bits = arith::BitcastOp::create(b, loc, i32, x);
    bits = arith::AddIOp::create(b, loc, bits, splat(0x1000));
    bits = arith::AndIOp::create(b, loc, bits, splat(-0x2000) /* 0xFFFFE000 */);
    return arith::BitcastOp::create(b, loc, x.getType(), bits);
  }

  Value shuffleIdx(Value v, Value srcLane) override {
    return outlined(
        "shflidx", {v, srcLane}, {v.getType()},
        [&](ValueRange x) -> SmallVector<Value> {
          return laneLoop(
              {x[0]}, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
                auto [warpBase, g, t] = laneCoords(lane);
                (void)g, (void)t;
                Value src = add(warpBase, extract(x[1], lane));
                return {insert(extract(x[0], src), cur[0], lane)};
              });
        })[0];
  }

  Value shuffleXor(Value v, int mask) override { return laneXor(v, mask); }
  /// The value of lane (lane xor mask) of the same warp, for every lane.
  Value laneXor(Value v, int mask) {
    SmallVector<int64_t> perm;
    for (int64_t l = 0; l < kThreadsPerBlock; ++l)
      perm.push_back((l & ~(kWarpSize - 1)) | ((l % kWarpSize) ^ mask));
    return vector::ShuffleOp::create(b, loc, v, v, perm);
  }

  Value warpAny(Value pred) override {
    // A butterfly of ors within each warp's 32 lanes.
    for (int mask = 1; mask < kWarpSize; mask *= 2)
      pred = arith::OrIOp::create(b, loc, pred, laneXor(pred, mask));
    return pred;
  }
  bool hasScalarControlFlow() const override { return false; }

  // Lane loops in helpers: LLVM scalarizes the vector intrinsics into one
  // libm call per lane at each use, thousands per K/V step, which made
  // compiling the emulation take twice as long.
  Value exp2(Value x) override {
    return lanewise("exp2", {x}, [&](ValueRange v) -> Value {
      return math::Exp2Op::create(b, loc, v[0]);
    });
  }
  Value fma(Value x, Value y, Value z) override {
    return lanewise("fma", {x, y, z}, [&](ValueRange v) -> Value {
      return math::FmaOp::create(b, loc, v[0], v[1], v[2]);
    });
  }
  /// The per-thread value whose lane l is `scalar` of lane l of `args`,
  /// computed by the helper `kind`.
  Value lanewise(const std::string &kind, ValueRange args,
                 llvm::function_ref<Value(ValueRange)> scalar) {
    Type type = args[0].getType();
    return outlined(
        kind, args, {type}, [&](ValueRange a) -> SmallVector<Value> {
          return laneLoop(
              {a[0]}, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
                Value r = scalar(extractAll(a, lane));
                return {insert(r, cur[0], lane)};
              });
        })[0];
  }

  PackedReg pack(Value lo, Value hi) override {
    Type type = perThreadType(elemType);
    return {{},
            arith::TruncFOp::create(b, loc, type, lo),
            arith::TruncFOp::create(b, loc, type, hi)};
  }

  SmallVector<Value> packedParts(const PackedReg &r) override {
    return {r.lo, r.hi};
  }
  PackedReg fromPackedParts(ValueRange parts) override {
    return {{}, parts[0], parts[1]};
  }

  Value sharedAddress(Value byteOffset) override {
    // The emulated shared memory starts at address 0.
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), byteOffset);
  }
  // wgmma completes at once here, but its groups are tracked: a wait that
  // releases a register of a group that would still be in flight on the
  // GPU (too many groups left pending) makes the emulation abort there.
  void fenceAsyncProxy() override {
    if (!keep(EmulationFault::Kind::ProxyFence) || !checkRaces)
      return;
    races::proxyFence(b, loc, raceState(),
                      ordering == races::Ordering::WarpGroups
                          ? actingGroupList()
                          : SmallVector<Value>());
  }
  void wgmmaFence(MutableArrayRef<Value>, MutableArrayRef<PackedReg>) override {
  }
  void wgmmaCommit() override {
    ++committedGroups;
    if (checkRaces)
      races::commitWgmma(b, loc, raceState(), ordering, groupOrNull());
  }
  void wgmmaWait(int pending, MutableArrayRef<Value> regs) override {
    if (!keep(EmulationFault::Kind::WgmmaWait))
      return;
    if (checkRaces)
      races::waitWgmma(b, loc, raceState(), pending, ordering, groupOrNull());
    bool early = false;
    for (Value r : regs) {
      auto it = wgmmaGroupOf.find(r);
      if (it == wgmmaGroupOf.end())
        continue;
      // Uncommitted, or among the `pending` most recent groups.
      early |= it->second >= committedGroups - pending;
    }
    if (early)
      abortUnless(arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0),
                  "attn GPU emulation: a wgmma wait releases registers of a "
                  "group still in flight");
  }
  /// Records that `results` come from a wgmma of the group being built.
  SmallVector<Value> inGroup(SmallVector<Value> results) {
    for (Value r : results)
      wgmmaGroupOf[r] = committedGroups;
    return results;
  }

  SmallVector<Value> wgmma(Value descA, Value descB, ArrayRef<Value> d,
                           int64_t n, bool accumulate,
                           bool transposeB) override {
    std::string kind = "wgmma" + std::to_string(n) + (transposeB ? "t" : "") +
                       (accumulate ? "acc" : "");
    trackWgmmaOperand(descA, /*kMajor=*/true, 64);
    trackWgmmaOperand(descB, !transposeB, n);
    return inGroup(wgmmaCall(
        kind, {descA}, descB, d, n, accumulate,
        [&](ValueRange args, Value descBArg, Value smem, Value scratch) {
          Value elems = halfView(smem);
          Value startA = descField(args[0], 0);
          Value sboA = descField(args[0], 32);
          wgmmaImpl(descBArg, elems, scratch, n, accumulate, transposeB,
                    [&](Value, Value row, Value, int k) {
                      return loadSwizzled(
                          elems,
                          kMajorAddress(startA, sboA, row, indexConst(k)));
                    });
        }));
  }

  SmallVector<Value> wgmmaRegA(ArrayRef<PackedReg> a, Value descB,
                               ArrayRef<Value> d, int64_t n, bool accumulate,
                               bool transposeB) override {
    std::string kind = "wgmmar" + std::to_string(n) + (transposeB ? "t" : "") +
                       (accumulate ? "acc" : "");
    SmallVector<Value> regs;
    for (const PackedReg &r : a)
      regs.append({r.lo, r.hi});
    trackWgmmaOperand(descB, !transposeB, n);
    return inGroup(wgmmaCall(
        kind, regs, descB, d, n, accumulate,
        [&](ValueRange av, Value descBArg, Value smem, Value scratch) {
          wgmmaImpl(
              descBArg, halfView(smem), scratch, n, accumulate, transposeB,
              [&](Value warpBase, Value row, Value rowHalf, int k) {
                // The mma.sync A layout within the warp: A[g + 8 h][k] is
                // in lane 4 g + (k % 8) / 2, register h + 2 (k / 8),
                // element k % 2 (g = row % 8).
                Value lane =
                    add(warpBase,
                        addConst(mulConst(remConst(row, 8), 4), (k % 8) / 2));
                Value rowG = extract(av[2 * (2 * (k / 8)) + k % 2], lane);
                Value rowG8 = extract(av[2 * (1 + 2 * (k / 8)) + k % 2], lane);
                Value second = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::eq, rowHalf, indexConst(1));
                Value v = arith::SelectOp::create(b, loc, second, rowG8, rowG);
                return arith::ExtFOp::create(b, loc, b.getF32Type(), v)
                    .getResult();
              });
        }));
  }

  // mbarriers are modelled by their state: completed phases, outstanding
  // transaction bytes, pending arrivals, and phases waited for. TMA copies
  // complete at once, so a wait must find its phase complete with no bytes
  // outstanding: a wrong byte count or parity, a load that is waited for
  // twice or never, an arrival too many or missing, aborts the emulation
  // instead of hanging a GPU. kArrivals is the count each phase expects;
  // kCarriesBytes whether copies complete its phases (then each phase must
  // be waited for).
  enum BarrierField {
    kCompleted,
    kTxBytes,
    kPendingArrivals,
    kWaited,
    kArrivals,
    kCarriesBytes,
    kNumFields
  };

  void initBarriers(ArrayRef<int64_t> arrivals) override {
    int64_t count = arrivals.size();
    assert(count <= races::kMaxMbarriers &&
           "the race model follows every mbarrier");
    assert((!barrierState ||
            cast<MemRefType>(barrierState.getType()).getDimSize(0) == count) &&
           "one set of barriers per block program");
    if (!barrierState) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(smemBase);
      barrierState = memref::AllocaOp::create(
          b, loc, MemRefType::get({count, kNumFields}, b.getIndexType()));
    }
    for (auto [i, expected] : llvm::enumerate(arrivals))
      for (auto [f, value] : {std::pair<BarrierField, int64_t>{kCompleted, 0},
                              {kTxBytes, 0},
                              {kPendingArrivals, expected},
                              {kWaited, 0},
                              {kArrivals, expected},
                              {kCarriesBytes, 0}})
        setField(indexConst(i), f, indexConst(value));
    if (checkRaces)
      races::initMbarriers(b, loc, raceState());
  }

  void expectBytes(Value barrier, int64_t bytes, Value pred) override {
    auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    setField(barrier, kTxBytes, addConst(field(barrier, kTxBytes), bytes));
    setField(barrier, kCarriesBytes, indexConst(1));
    releaseTo(barrier);
    arrive(barrier, indexConst(1));
  }

  void arriveBarrier(Value barrier, Value pred) override {
    // One arrival per lane where pred holds.
    Value count = laneLoop(
        {indexConst(0)}, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          Value one = arith::ExtUIOp::create(b, loc, b.getI64Type(),
                                             extract(pred, lane));
          return {add(cur[0], arith::IndexCastUIOp::create(
                                  b, loc, b.getIndexType(), one))};
        })[0];
    releaseTo(barrier);
    arrive(barrier, count);
  }
  /// WarpGroups ordering: the acting warpgroups release their clocks into
  /// `barrier`'s current phase (before the arrival that may complete it).
  void releaseTo(Value barrier) {
    if (!checkRaces || ordering != races::Ordering::WarpGroups)
      return;
    for (Value group : actingGroupList())
      outlined("race_arrive", {raceState(), toI32(barrier), group}, {},
               [&](ValueRange a) -> SmallVector<Value> {
                 races::arrive(b, loc, a[0], a[1], a[2]);
                 return {};
               });
  }
  /// `count` arrivals on the current phase of `barrier`.
  void arrive(Value barrier, Value count) {
    Value pending = field(barrier, kPendingArrivals);
    abortUnless(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, count,
                                      pending),
                "attn GPU emulation: more arrivals on an mbarrier than its "
                "phase expects");
    setField(barrier, kPendingArrivals,
             arith::SubIOp::create(b, loc, pending, count));
    completePhaseIfDone(barrier);
  }

  void setIssuer(Value) override {}
  bool hasProducerWarpGroup() const override { return false; }
  void setMaxRegisters(int64_t, bool) override {}
  // Named barriers (bar.sync and bar.arrive with a thread count) are
  // modelled by the threads that arrived in each one's current phase and
  // the count the phase was given. The emulation runs the warpgroups'
  // programs in the order their synchronizations allow (the pingpong turns
  // included), so a bar.sync must complete once its own threads are
  // counted: otherwise its threads would wait, on the GPU, for arrivals
  // that come in a later phase or never (a hang, or an order the kernel did
  // not mean). A bar.sync is run by all of the acting warpgroups (a
  // barrier of several is emitted once for all of them).
  void namedBarrier(Value id, int64_t threads) override {
    if (!keep(EmulationFault::Kind::NamedBarrier))
      return;
    assert(ordering == races::Ordering::WarpGroups && actingGroups &&
           "named barriers order a warp-specialized kernel's warpgroups");
    Value barrier = namedBarrierIndex(id, threads, "bar.sync");
    int64_t arriving = kThreadsPerWarpGroup * llvm::popcount(actingGroups);
    Value arrived = arriveNamed(barrier, threads, indexConst(arriving));
    abortUnless(eq(arrived, indexConst(threads)),
                "attn GPU emulation: a bar.sync is not completed by the "
                "threads that arrive on its named barrier in the phase "
                "(wrong id or thread count, or an arrival missing or in "
                "excess): on the GPU it would wait for arrivals that come "
                "later or never");
    setNamedField(barrier, kNamedArrived, indexConst(0));
    // The syncing warpgroups' accesses are ordered (and the warps of
    // each); what the arriving ones did before is not (their release is
    // not modelled, which could only report a race that is not one).
    if (checkRaces)
      races::syncGroups(b, loc, raceState(), actingGroups);
  }
  void namedBarrierArrive(Value id, int64_t threads, Value pred) override {
    if (!keep(EmulationFault::Kind::NamedArrive))
      return;
    assert(ordering == races::Ordering::WarpGroups &&
           llvm::popcount(actingGroups) == 1 &&
           "one warpgroup's warps arrive on a named barrier");
    Value barrier = namedBarrierIndex(id, threads, "bar.arrive");
    // The arrival counts whole warps: a warp's threads must agree.
    Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    SmallVector<Value> counted = laneLoop(
        {indexConst(0), yes},
        [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          Value on = pred ? extract(pred, lane) : yes;
          Value first =
              pred ? extract(pred, std::get<0>(laneCoords(lane))) : yes;
          Value warpStart = eq(remConst(lane, kWarpSize), indexConst(0));
          Value counts = arith::AndIOp::create(b, loc, on, warpStart);
          Value n = arith::SelectOp::create(
              b, loc, counts, addConst(cur[0], kWarpSize), cur[0]);
          Value agree = arith::AndIOp::create(b, loc, cur[1], eq(on, first));
          return {n, agree};
        });
    abortUnless(counted[1], "attn GPU emulation: the threads of a warp "
                            "disagree on a bar.arrive");
    Value total = arriveNamed(barrier, threads, counted[0]);
    // Arrivals alone may complete a phase (no thread waits on it); those
    // past its count are the next phase's.
    setNamedField(barrier, kNamedArrived,
                  remConst(total, std::max<int64_t>(threads, 1)));
  }
  enum NamedBarrierField { kNamedArrived, kNamedCount, kNumNamedFields };
  /// The named barrier `id` (per thread) as an index; aborts unless every
  /// thread names the same one of the 15 (barrier 0 is the block's
  /// bar.sync) and `threads` is a whole number of warps.
  Value namedBarrierIndex(Value id, int64_t threads, StringRef what) {
    Value first = extract(id, indexConst(0));
    Value same =
        laneLoop({arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1)},
                 [&](Value lane, ValueRange cur) -> SmallVector<Value> {
                   return {arith::AndIOp::create(b, loc, cur[0],
                                                 eq(extract(id, lane), first))};
                 })[0];
    Value ok = arith::AndIOp::create(
        b, loc, same,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              addConst(first, -1),
                              indexConst(kNumNamedBarriers - 1)));
    bool wholeWarps = threads > 0 && threads % kWarpSize == 0;
    ok = arith::AndIOp::create(
        b, loc, ok,
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), wholeWarps));
    abortUnless(ok, ("attn GPU emulation: a " + what +
                     " names a barrier other than 1 to 15, not the same in "
                     "every thread, or a thread count that is not a whole "
                     "number of warps")
                        .str());
    return first;
  }
  /// `n` threads arrive on named barrier `barrier` with count `threads`;
  /// returns the threads arrived in its phase. Aborts if the phase was
  /// begun with another count.
  Value arriveNamed(Value barrier, int64_t threads, Value n) {
    Value arrived = namedField(barrier, kNamedArrived);
    Value sameCount = arith::OrIOp::create(
        b, loc, eq(arrived, indexConst(0)),
        eq(namedField(barrier, kNamedCount), indexConst(threads)));
    abortUnless(sameCount, "attn GPU emulation: threads arrive on a named "
                           "barrier with a thread count other than its "
                           "phase's");
    setNamedField(barrier, kNamedCount, indexConst(threads));
    return add(arrived, n);
  }
  /// [barrier][NamedBarrierField] (index), made with none arrived at the
  /// start of the block's program.
  Value namedBarrierState() {
    if (namedState)
      return namedState;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(smemBase);
    namedState = memref::AllocaOp::create(
        b, loc,
        MemRefType::get({kNumNamedBarriers, kNumNamedFields},
                        b.getIndexType()));
    if (namedState.getParentBlock() == programStart)
      b.setInsertionPointAfterValue(namedState);
    else
      b.setInsertionPointToStart(programStart);
    auto loop = scf::ForOp::create(
        b, loc, indexConst(0), indexConst(kNumNamedBarriers), indexConst(1));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    for (int64_t f = 0; f < kNumNamedFields; ++f)
      memref::StoreOp::create(
          b, loc, indexConst(0), namedState,
          ValueRange{loop.getInductionVar(), indexConst(f)});
    return namedState;
  }
  Value namedField(Value barrier, NamedBarrierField f) {
    return memref::LoadOp::create(b, loc, namedBarrierState(),
                                  ValueRange{barrier, indexConst(f)});
  }
  void setNamedField(Value barrier, NamedBarrierField f, Value v) {
    memref::StoreOp::create(b, loc, v, namedBarrierState(),
                            ValueRange{barrier, indexConst(f)});
  }

  void orderSharedMemoryByMbarriers() override {
    assert(!raceModel && "set before the first shared-memory access");
    ordering = races::Ordering::WarpGroups;
  }
  void actAs(uint32_t warpGroups) override {
    assert(warpGroups && warpGroups < (1u << races::kMaxWarpGroups) &&
           "acting warpgroups the race model tells apart");
    actingGroups = warpGroups;
  }
  /// The acting warpgroups, as i32 constants.
  SmallVector<Value> actingGroupList() {
    SmallVector<Value> groups;
    for (int64_t g = 0; g < races::kMaxWarpGroups; ++g)
      if (actingGroups & (1u << g))
        groups.push_back(arith::ConstantIntOp::create(b, loc, g, 32));
    return groups;
  }
  /// WarpGroups ordering: the one acting warpgroup (i32), which accesses
  /// shared memory; else null.
  Value groupOrNull() {
    if (ordering != races::Ordering::WarpGroups)
      return {};
    assert(llvm::popcount(actingGroups) == 1 &&
           "one warpgroup's program accesses shared memory");
    return actingGroupList().front();
  }

  void tmaLoad(Value global, Value, ValueRange coords, Value byteOffset,
               ArrayRef<int64_t> box, Value barrier, Value pred) override {
    boxCopy(/*load=*/true, global, coords, byteOffset, box, pred, [&] {
      // The box completes with the barrier's current phase.
      if (checkRaces)
        trackBox(/*load=*/true, byteOffset, box, barrier,
                 field(barrier, kCompleted));
      // The copy's bytes count towards the barrier's phase.
      setField(barrier, kTxBytes,
               addConst(field(barrier, kTxBytes), -boxBytes(global, box)));
      completePhaseIfDone(barrier);
    });
  }

  void tmaStore(Value global, Value, ValueRange coords, Value byteOffset,
                ArrayRef<int64_t> box, Value pred) override {
    boxCopy(/*load=*/false, global, coords, byteOffset, box, pred, [&] {
      if (checkRaces)
        trackBox(/*load=*/false, byteOffset, box, {}, {});
    });
  }

  /// The bytes of a box of `global`'s elements.
  static int64_t boxBytes(Value global, ArrayRef<int64_t> box) {
    Type elem = cast<MemRefType>(global.getType()).getElementType();
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    for (int64_t d : box)
      bytes *= d;
    return bytes;
  }

  /// Where `pred` holds: copies the box `box` at `coords` of `global` to
  /// shared memory at `byteOffset` (`load`) or back, then runs `after`.
  /// Shared memory holds the box row by row with the 128-byte swizzle:
  /// 16-byte chunk c of the row at address a is at c ^ (a / 128 % 8), as
  /// loadSwizzled reads it. Elements outside `global` load as zero and are
  /// not stored.
  void boxCopy(bool load, Value global, ValueRange coords, Value byteOffset,
               ArrayRef<int64_t> box, Value pred,
               llvm::function_ref<void()> after) {
    int64_t rank = box.size();
    assert(cast<MemRefType>(global.getType()).getElementTypeBitWidth() == 16 &&
           rank >= 2 && box.back() == 64 &&
           llvm::all_of(box.drop_back(2), [](int64_t d) { return d == 1; }) &&
           "boxes are rows of 64 16-bit elements");
    auto ifOp = scf::IfOp::create(b, loc, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // What the GPU needs: the box's shared memory at the swizzle's 1024-byte
    // repeat, and the tensor map's base address 16-byte aligned.
    abortUnless(eq(remConst(byteOffset, 1024), indexConst(0)),
                "attn GPU emulation: a TMA box's shared memory is not "
                "1024-byte aligned");
    abortUnless(
        eq(remConst(
               memref::ExtractAlignedPointerAsIndexOp::create(b, loc, global),
               16),
           indexConst(0)),
        "attn GPU emulation: a TMA tensor's base address is not 16-byte "
        "aligned");
    SmallVector<Value> args = {global, smemBase, byteOffset};
    args.append(coords.begin(), coords.end());
    int64_t rows = box[rank - 2], cols = box[rank - 1];
    outlined((load ? "tma" : "tmastore") + std::to_string(rows), args, {},
             [&](ValueRange a) -> SmallVector<Value> {
               boxCopyImpl(load, a[0], halfView(a[1]), a[2], a.drop_front(3),
                           rows, cols);
               return {};
             });
    after();
  }
  void boxCopyImpl(bool load, Value global, Value elems, Value byteOffset,
                   ValueRange coords, int64_t rows, int64_t cols) {
    auto rowLoop = scf::ForOp::create(b, loc, indexConst(0), indexConst(rows),
                                      indexConst(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rowLoop.getBody()->getTerminator());
    Value r = rowLoop.getInductionVar();
    auto colLoop = scf::ForOp::create(b, loc, indexConst(0), indexConst(cols),
                                      indexConst(1));
    b.setInsertionPoint(colLoop.getBody()->getTerminator());
    Value c = colLoop.getInductionVar();
    SmallVector<Value> idx(coords.begin(), coords.end());
    idx[idx.size() - 2] = add(idx[idx.size() - 2], r);
    idx.back() = add(idx.back(), c);
    Value addr = add(byteOffset, add(mulConst(r, 128), mulConst(c, 2)));
    Value swz = mulConst(remConst(divConst(addr, 128), 8), 16);
    Value phys = divConst(arith::XOrIOp::create(b, loc, addr, swz), 2);
    if (load) {
      Type elem = cast<MemRefType>(global.getType()).getElementType();
      Value v = loadIfInside(global, idx, cast<TypedAttr>(b.getZeroAttr(elem)));
      memref::StoreOp::create(b, loc, v, elems, ValueRange{phys});
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, isInside(global, idx),
                                  /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v = memref::LoadOp::create(b, loc, elems, ValueRange{phys});
    memref::StoreOp::create(b, loc, v, global, idx);
  }

  // The stores completed when issued.
  void waitTmaStores() override {}

  void waitBarrier(Value barrier, Value parity) override {
    if (!keep(EmulationFault::Kind::MbarrierWait))
      return;
    Value completed = field(barrier, kCompleted);
    Value waited = field(barrier, kWaited);
    // The wait is for phase `waited`: its TMA loads are written now.
    if (checkRaces) {
      abortUnless(races::mbarriersPublished(b, loc, raceState()),
                  "attn GPU emulation: shared-memory race: an mbarrier wait "
                  "before a barrier after the mbarrier's init");
      outlined("race_wait_tma", {raceState(), toI32(barrier), toI32(waited)},
               {}, [&](ValueRange a) -> SmallVector<Value> {
                 races::waitTma(b, loc, a[0], a[1], a[2]);
                 return {};
               });
      if (ordering == races::Ordering::WarpGroups)
        for (Value group : actingGroupList())
          races::acquire(b, loc, raceState(), toI32(barrier), group);
    }
    Value parityIdx =
        arith::ExtUIOp::create(b, loc, b.getI64Type(), parity).getResult();
    parityIdx =
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(), parityIdx);
    // try_wait.parity returns once the phase with that parity is complete:
    // the current phase's parity differs.
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                     remConst(completed, 2), parityIdx);
    ok = arith::AndIOp::create(b, loc, ok, eq(completed, addConst(waited, 1)));
    ok = arith::AndIOp::create(b, loc, ok,
                               eq(field(barrier, kTxBytes), indexConst(0)));
    abortUnless(ok, "attn GPU emulation: an mbarrier wait found its phase "
                    "incomplete (wrong parity, byte count or missing load)");
    setField(barrier, kWaited, addConst(waited, 1));
  }

  void endBarriers() override {
    int64_t count = cast<MemRefType>(barrierState.getType()).getDimSize(0);
    for (int64_t i = 0; i < count; ++i) {
      Value id = indexConst(i);
      // Phases that no copy completed (a consumer's release) need no wait.
      Value ok = arith::OrIOp::create(
          b, loc, eq(field(id, kCompleted), field(id, kWaited)),
          eq(field(id, kCarriesBytes), indexConst(0)));
      ok = arith::AndIOp::create(b, loc, ok,
                                 eq(field(id, kTxBytes), indexConst(0)));
      ok = arith::AndIOp::create(
          b, loc, ok, eq(field(id, kPendingArrivals), field(id, kArrivals)));
      abortUnless(ok, "attn GPU emulation: a block ended with a TMA load "
                      "that was never waited for, or a phase part-arrived");
    }
  }

  /// Aborts unless one shared-memory instruction of every warp is free of
  /// bank conflicts: lane l of the block accesses `bytes` bytes from
  /// memref[idx at lane l] (an index that is not a vector is the same for
  /// every lane), lanes [0, activeLanes) of each warp, served in phases of
  /// `lanesPerPhase` lanes (one 128-byte wavefront each). A conflict is two
  /// different 4-byte words of one phase in one of the 32 banks; the same
  /// word is a broadcast. Addresses are taken modulo 128: shared memory
  /// starts 1024-byte aligned, here as on the GPU. Lanes where `active`
  /// (per thread, if given) is false access nothing.
  void checkBanks(StringRef what, Value memref, ValueRange idx, int64_t bytes,
                  int64_t lanesPerPhase, int64_t activeLanes,
                  Value active = {}) {
    auto byteAddress = laneByteAddress(memref, idx);
    Value seen = memref::AllocaOp::create(
        b, loc, MemRefType::get({kNumBanks}, b.getIndexType()));
    Value none = indexConst(-1);
    Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    Value ok = yes;
    for (int64_t warp = 0; warp < kThreadsPerBlock / kWarpSize; ++warp) {
      for (int64_t first = 0; first < activeLanes; first += lanesPerPhase) {
        int64_t firstLane = warp * kWarpSize + first;
        auto reset = scf::ForOp::create(b, loc, indexConst(0),
                                        indexConst(kNumBanks), indexConst(1));
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(reset.getBody()->getTerminator());
          memref::StoreOp::create(b, loc, none, seen,
                                  ValueRange{reset.getInductionVar()});
        }
        // Carries whether the phase is free of conflicts so far.
        auto lanes = scf::ForOp::create(b, loc, indexConst(firstLane),
                                        indexConst(firstLane + lanesPerPhase),
                                        indexConst(1), ValueRange{yes});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(lanes.getBody());
          Value lane = lanes.getInductionVar();
          Value word = divConst(byteAddress(lane), 4);
          Value laneOk = lanes.getRegionIterArgs()[0];
          Value idle =
              active ? arith::XOrIOp::create(b, loc, extract(active, lane), yes)
                           .getResult()
                     : Value();
          for (int64_t w = 0; w < std::max<int64_t>(bytes / 4, 1); ++w) {
            Value wordW = addConst(word, w);
            Value bank = remConst(wordW, kNumBanks);
            Value prev = memref::LoadOp::create(b, loc, seen, ValueRange{bank});
            Value free =
                arith::OrIOp::create(b, loc, eq(prev, none), eq(prev, wordW));
            if (idle) {
              free = arith::OrIOp::create(b, loc, free, idle);
              wordW = arith::SelectOp::create(b, loc, idle, prev, wordW);
            }
            laneOk = arith::AndIOp::create(b, loc, laneOk, free);
            memref::StoreOp::create(b, loc, wordW, seen, ValueRange{bank});
          }
          scf::YieldOp::create(b, loc, ValueRange{laneOk});
        }
        ok = arith::AndIOp::create(b, loc, ok, lanes.getResult(0));
      }
    }
    abortUnless(
        ok,
        ("attn GPU emulation: shared-memory bank conflict in " + what).str());
  }
  static constexpr int64_t kNumBanks = 32;

  /// Aborts unless the accesses of one instruction are aligned to their
  /// size, as the GPU needs (there an unaligned one faults; here it would
  /// move the same elements): lanes [0, lanesPerWarp) of each warp, where
  /// `active` (per thread, if given) holds, access `bytes` bytes at
  /// memref[idx at the lane] (an index that is not a vector is the same
  /// for every lane).
  void checkAligned(StringRef what, Value memref, ValueRange idx, int64_t bytes,
                    int64_t lanesPerWarp, Value active = {}) {
    auto byteAddress = laneByteAddress(memref, idx);
    Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    Value ok = laneLoop({yes}, [&](Value lane, ValueRange cur) {
      Value aligned = eq(remConst(byteAddress(lane), bytes), indexConst(0));
      Value idle = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         remConst(lane, kWarpSize),
                                         indexConst(lanesPerWarp));
      if (active)
        idle = arith::OrIOp::create(
            b, loc, idle,
            arith::XOrIOp::create(b, loc, extract(active, lane), yes));
      aligned = arith::OrIOp::create(b, loc, aligned, idle);
      return SmallVector<Value>{arith::AndIOp::create(b, loc, cur[0], aligned)};
    })[0];
    abortUnless(ok, ("attn GPU emulation: " + what +
                     " accesses an address not aligned to its size")
                        .str());
  }

  /// Where `ok` is false: prints `msg` and aborts. (cf.assert's message is
  /// lost when stdout is a pipe: the process aborts before flushing it.)
  void abortUnless(Value ok, StringRef msg) {
    ModuleOp module =
        b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
    MLIRContext *ctx = b.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    // Declared as the control-flow lowering declares them.
    auto declare = [&](StringRef name, Type result, ArrayRef<Type> args) {
      if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        return fn;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      return LLVM::LLVMFuncOp::create(
          b, loc, name, LLVM::LLVMFunctionType::get(result, args));
    };
    LLVM::LLVMFuncOp puts = declare("puts", voidType, {ptr});
    LLVM::LLVMFuncOp fflush = declare("fflush", b.getI32Type(), {ptr});
    LLVM::LLVMFuncOp abort = declare("abort", voidType, {});
    std::string &name = messageGlobals[msg];
    if (name.empty()) {
      for (int n = 0;; ++n) {
        name = "__attn_emu_msg_" + std::to_string(n);
        if (!SymbolTable::lookupSymbolIn(module, name))
          break;
      }
      std::string text = (msg + Twine('\0')).str();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      LLVM::GlobalOp::create(
          b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), text.size()),
          /*isConstant=*/true, LLVM::Linkage::Internal, name,
          b.getStringAttr(text));
    }
    Value failed = arith::XOrIOp::create(
        b, loc, ok, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    auto ifOp = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value str = LLVM::AddressOfOp::create(b, loc, ptr, name);
    LLVM::CallOp::create(b, loc, puts, ValueRange{str});
    LLVM::CallOp::create(b, loc, fflush,
                         ValueRange{LLVM::ZeroOp::create(b, loc, ptr)});
    LLVM::CallOp::create(b, loc, abort, ValueRange{});
  }

  Value field(Value barrier, BarrierField f) {
    return memref::LoadOp::create(b, loc, barrierState,
                                  ValueRange{barrier, indexConst(f)});
  }
  void setField(Value barrier, BarrierField f, Value v) {
    memref::StoreOp::create(b, loc, v, barrierState,
                            ValueRange{barrier, indexConst(f)});
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  /// An mbarrier's phase completes when its arrivals and bytes are in.
  void completePhaseIfDone(Value barrier) {
    Value done = arith::AndIOp::create(
        b, loc, eq(field(barrier, kPendingArrivals), indexConst(0)),
        eq(field(barrier, kTxBytes), indexConst(0)));
    auto ifOp = scf::IfOp::create(b, loc, done, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    setField(barrier, kCompleted, addConst(field(barrier, kCompleted), 1));
    setField(barrier, kPendingArrivals, field(barrier, kArrivals));
    if (checkRaces && ordering == races::Ordering::WarpGroups)
      races::completePhase(b, loc, raceState(), toI32(barrier));
  }

  Value load(Value memref, ValueRange idx) override {
    SmallVector<Value> args = {memref};
    args.append(idx.begin(), idx.end());
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    bool shared = sharedViews.contains(memref);
    if (shared)
      trackLanes("ld.shared", Access::Read, memref, idx,
                 elem.getIntOrFloatBitWidth() / 8, kWarpSize);
    return outlined(shared ? "ldshared" : "load", args, {perThreadType(elem)},
                    [&](ValueRange a) -> SmallVector<Value> {
                      if (shared) {
                        int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
                        checkBanks("ld.shared", a[0], a.drop_front(), bytes,
                                   kWarpSize, kWarpSize);
                        checkAligned("ld.shared", a[0], a.drop_front(), bytes,
                                     kWarpSize);
                      }
                      return {loadImpl(a[0], a.drop_front())};
                    })[0];
  }
  Value loadImpl(Value memref, ValueRange idx) {
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    return laneLoop(
        {zeros(elem)}, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          Value v =
              memref::LoadOp::create(b, loc, memref, extractAll(idx, lane));
          return {insert(v, cur[0], lane)};
        })[0];
  }
  std::pair<Value, Value> loadPair(Value memref, ValueRange idx) override {
    SmallVector<Value> args = {memref};
    args.append(idx.begin(), idx.end());
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    SmallVector<Value> pair = outlined(
        "load_pair", args, {perThreadType(elem), perThreadType(elem)},
        [&](ValueRange a) { return loadPairImpl(a[0], a.drop_front()); });
    return {pair[0], pair[1]};
  }
  /// Checks, lane by lane, what the GPU's vector load needs: the pair's
  /// address aligned to its size, and stride 1 between its elements.
  SmallVector<Value> loadPairImpl(Value memref, ValueRange idx) {
    auto type = cast<MemRefType>(memref.getType());
    Type elem = type.getElementType();
    // (An i1 is stored in a byte.)
    int64_t bytes = std::max<int64_t>(elem.getIntOrFloatBitWidth() / 8, 1);
    auto byteAddress = laneByteAddress(memref, idx);
    Value adjacent = eq(memref::ExtractStridedMetadataOp::create(b, loc, memref)
                            .getStrides()
                            .back(),
                        indexConst(1));
    return laneLoop(
        {zeros(elem), zeros(elem)},
        [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          SmallVector<Value> at = extractAll(idx, lane);
          Value ok = eq(arith::RemUIOp::create(b, loc, byteAddress(lane),
                                               indexConst(2 * bytes)),
                        indexConst(0));
          ok = arith::AndIOp::create(b, loc, ok, adjacent);
          abortUnless(ok, "attn GPU emulation: a paired load is misaligned "
                          "or its elements are not adjacent");
          Value lo = memref::LoadOp::create(b, loc, memref, at);
          at.back() = addConst(at.back(), 1);
          Value hi = memref::LoadOp::create(b, loc, memref, at);
          return {insert(lo, cur[0], lane), insert(hi, cur[1], lane)};
        });
  }
  /// Per-thread store of `v` to `memref[idx]` where `pred` holds.
  void store(Value v, Value memref, ValueRange idx, Value pred) {
    SmallVector<Value> args = {v, memref, pred};
    args.append(idx.begin(), idx.end());
    outlined("store", args, {}, [&](ValueRange a) -> SmallVector<Value> {
      storeImpl(a[0], a[1], a.drop_front(3), a[2]);
      return {};
    });
  }
  void storePair(Value lo, Value hi, Value memref, ValueRange idx,
                 Value pred) override {
    if (sharedViews.contains(memref)) {
      // (All lanes store: the shared stores are not predicated.)
      SmallVector<Value> args = {memref};
      args.append(idx.begin(), idx.end());
      int64_t bytes =
          2 * getElementTypeOrSelf(lo.getType()).getIntOrFloatBitWidth() / 8;
      outlined(
          "stshared_check", args, {}, [&](ValueRange a) -> SmallVector<Value> {
            checkBanks("st.shared", a[0], a.drop_front(), bytes,
                       128 / std::max<int64_t>(bytes, 4), kWarpSize);
            checkAligned("st.shared", a[0], a.drop_front(), bytes, kWarpSize);
            return {};
          });
      trackLanes("st.shared", Access::Write, memref, idx, bytes, kWarpSize,
                 pred);
    }
    store(lo, memref, idx, pred);
    SmallVector<Value> next(idx.begin(), idx.end());
    Value one = arith::ConstantOp::create(
        b, loc, perThreadType(b.getIndexType()),
        DenseElementsAttr::get(
            cast<ShapedType>(perThreadType(b.getIndexType())),
            b.getIndexAttr(1)));
    next.back() = add(next.back(), one);
    store(hi, memref, next, pred);
  }
  void storeImpl(Value v, Value memref, ValueRange idx, Value pred) {
    laneLoop({}, [&](Value lane, ValueRange) -> SmallVector<Value> {
      auto ifOp = scf::IfOp::create(b, loc, extract(pred, lane),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, loc, extract(v, lane), memref,
                              extractAll(idx, lane));
      return {};
    });
  }

private:
  /// Whether to emit the `kind` synchronization the kernel asks for next:
  /// all but the one the fault leaves out.
  bool keep(EmulationFault::Kind kind) {
    int64_t n = emittedSyncs[static_cast<int>(kind)]++;
    if (fault.kind != kind || n != fault.index)
      return true;
    if (fault.leftOut)
      ++*fault.leftOut;
    return false;
  }

  /// The race model's state, made at the start of the block's program.
  Value raceState() {
    assert(checkRaces && "no race model for this kernel");
    if (!raceModel) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(programStart);
      raceModel = races::createState(
          b, loc, cast<MemRefType>(smemBase.getType()).getDimSize(0));
    }
    return raceModel;
  }
  /// The names of the race checks' helpers, which differ with the rules
  /// that apply.
  std::string racePrefix() const {
    return ordering == races::Ordering::BlockBarriers ? "race_"
                                                      : "race_groups_";
  }
  /// The unit (see races::read) of an access by warp `warp` (index), in
  /// a helper whose argument `group` is groupOrNull()'s.
  Value accessUnit(Value warp, Value group) {
    return group ? group : toI32(warp);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }

  /// Aborts with the message for `what` where `hazard` (i32) is not 0.
  void abortOnHazard(StringRef what, Value hazard) {
    for (int32_t h = 1; h < races::kNumHazards; ++h)
      abortUnless(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, hazard,
                                arith::ConstantIntOp::create(b, loc, h, 32)),
          races::describe(what, static_cast<races::Hazard>(h)));
  }
  /// The first hazard of `prev` (i32) and `next`.
  Value firstOf(Value prev, Value next) {
    Value none = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, prev,
        arith::ConstantIntOp::create(b, loc, races::kNoHazard, 32));
    return arith::SelectOp::create(b, loc, none, next, prev);
  }

  enum class Access { Read, Write, CopyWrite };
  /// Checks the accesses of one shared-memory instruction `what` against
  /// the race model and records them: lanes [0, lanesPerWarp) of each warp
  /// (where `pred`, per thread, holds) access `bytes` bytes at
  /// `view[idx at the lane]` (an index that is not a vector is the same
  /// for every lane).
  void trackLanes(StringRef what, Access kind, Value view, ValueRange idx,
                  int64_t bytes, int64_t lanesPerWarp, Value pred = {}) {
    if (!checkRaces)
      return;
    SmallVector<Value> args = {
        raceState(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smemBase), view};
    Value group = groupOrNull();
    if (group)
      args.push_back(group);
    if (pred)
      args.push_back(pred);
    size_t first = args.size();
    args.append(idx.begin(), idx.end());
    std::string name = racePrefix() + what.str() + "_" + std::to_string(bytes) +
                       "_" + std::to_string(lanesPerWarp) + (pred ? "p" : "");
    std::replace(name.begin(), name.end(), '.', '_');
    outlined(name, args, {}, [&](ValueRange a) -> SmallVector<Value> {
      Value state = a[0], smemAddress = a[1], memref = a[2];
      Value groupArg = group ? a[3] : Value();
      Value lanePred = pred ? a[group ? 4 : 3] : Value();
      auto byteAddress = laneByteAddress(memref, a.drop_front(first));
      Value hazard = firstHazardOver(
          kThreadsPerBlock / kWarpSize, lanesPerWarp,
          [&](Value warp, Value inWarp) {
            Value lane = add(mulConst(warp, kWarpSize), inWarp);
            auto access = [&]() -> Value {
              Value word = divConst(
                  arith::SubIOp::create(b, loc, byteAddress(lane), smemAddress),
                  4);
              Value h =
                  arith::ConstantIntOp::create(b, loc, races::kNoHazard, 32);
              for (int64_t w = 0; w < std::max<int64_t>(bytes / 4, 1); ++w) {
                Value wordW = addConst(word, w);
                Value unit = accessUnit(warp, groupArg);
                // Under WarpGroups ordering, the warp within the group.
                Value warpInGroup = groupArg ? toI32(warp) : Value();
                h = firstOf(
                    h, kind == Access::Read
                           ? races::read(b, loc, state, wordW, unit, ordering,
                                         warpInGroup)
                           : races::write(b, loc, state, wordW, unit,
                                          kind == Access::Write
                                              ? races::WriteKind::Store
                                              : races::WriteKind::CopyAsync,
                                          ordering, {}, {}, warpInGroup));
              }
              return h;
            };
            if (!lanePred)
              return access();
            auto ifOp = scf::IfOp::create(b, loc, TypeRange{b.getI32Type()},
                                          extract(lanePred, lane),
                                          /*withElseRegion=*/true);
            OpBuilder::InsertionGuard ifGuard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            scf::YieldOp::create(b, loc, access());
            b.setInsertionPointToStart(ifOp.elseBlock());
            scf::YieldOp::create(b, loc,
                                 ValueRange{arith::ConstantIntOp::create(
                                     b, loc, races::kNoHazard, 32)});
            return ifOp.getResult(0);
          });
      abortOnHazard(what, hazard);
      return {};
    });
  }

  /// The first hazard (i32) of `hazardAt(i, j)` over i < outer, j < inner
  /// (index loops).
  Value firstHazardOver(int64_t outer, int64_t inner,
                        function_ref<Value(Value, Value)> hazardAt) {
    Value none = arith::ConstantIntOp::create(b, loc, races::kNoHazard, 32);
    auto outerLoop =
        scf::ForOp::create(b, loc, indexConst(0), indexConst(outer),
                           indexConst(1), ValueRange{none});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(outerLoop.getBody());
    auto innerLoop =
        scf::ForOp::create(b, loc, indexConst(0), indexConst(inner),
                           indexConst(1), outerLoop.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard innerGuard(b);
      b.setInsertionPointToStart(innerLoop.getBody());
      Value h =
          hazardAt(outerLoop.getInductionVar(), innerLoop.getInductionVar());
      scf::YieldOp::create(b, loc,
                           firstOf(innerLoop.getRegionIterArgs()[0], h));
    }
    scf::YieldOp::create(b, loc, innerLoop.getResults());
    b.setInsertionPointAfter(outerLoop);
    return outerLoop.getResult(0);
  }
  /// The word (index) holding unswizzled byte address `addr` of shared
  /// memory laid out with the 128-byte swizzle.
  Value swizzledWord(Value addr) {
    Value swz = mulConst(remConst(divConst(addr, 128), 8), 16);
    return divConst(arith::XOrIOp::create(b, loc, addr, swz), 4);
  }

  /// Checks and records the reads of one wgmma operand through its
  /// descriptor: `rows` x 16 (K-major) or 16 x `rows` (MN-major) 16-bit
  /// elements, read by the whole warpgroup until its group is waited for.
  void trackWgmmaOperand(Value desc, bool kMajor, int64_t rows) {
    if (!checkRaces)
      return;
    std::string kind =
        racePrefix() + "wgmma_" + (kMajor ? "k" : "mn") + std::to_string(rows);
    // Read by the warpgroup's 4 warps (BlockBarriers ordering: warps 0-3).
    Value unit = groupOrNull();
    if (!unit)
      unit = arith::ConstantIntOp::create(b, loc, 0xF, 32);
    outlined(
        kind, {raceState(), desc, unit}, {},
        [&](ValueRange a) -> SmallVector<Value> {
          Value state = a[0];
          Value start = descField(a[1], 0), lbo = descField(a[1], 16),
                sbo = descField(a[1], 32);
          // Every 4-byte word: (mn, k pair) K-major, (k, mn pair) MN-major.
          Value hazard = firstHazardOver(
              kMajor ? rows : 16, kMajor ? 8 : rows / 2, [&](Value i, Value j) {
                Value addr =
                    kMajor ? kMajorAddress(start, sbo, i, mulConst(j, 2))
                           : mnMajorAddress(start, lbo, sbo, i, mulConst(j, 2));
                return races::asyncRead(b, loc, state, swizzledWord(addr), a[2],
                                        /*wgmma=*/true, ordering);
              });
          abortOnHazard("wgmma", hazard);
          return {};
        });
  }

  /// Checks and records the shared-memory side of a TMA box at
  /// `byteOffset` (laid out as boxCopy does): a load's writes, which
  /// complete with phase `phase` (index) of mbarrier `barrier` (index), or
  /// a store's reads (by thread 0, through the async proxy).
  void trackBox(bool load, Value byteOffset, ArrayRef<int64_t> box,
                Value barrier, Value phase) {
    int64_t rows = box[box.size() - 2], cols = box.back();
    // A load's issuing warpgroup (BlockBarriers ordering: none); a store's
    // reader, thread 0 (warp 0).
    Value unit = groupOrNull();
    if (!unit)
      unit = arith::ConstantIntOp::create(b, loc, load ? -1 : 1, 32);
    SmallVector<Value> args = {raceState(), byteOffset, unit};
    if (load)
      args.append({toI32(barrier), toI32(phase)});
    outlined(
        racePrefix() + (load ? "tma" : "tmastore") + std::to_string(rows), args,
        {}, [&](ValueRange a) -> SmallVector<Value> {
          // Each row's 128 bytes, a word at a time.
          Value hazard = firstHazardOver(rows, cols / 2, [&](Value r, Value w) {
            Value word =
                swizzledWord(add(a[1], add(mulConst(r, 128), mulConst(w, 4))));
            // The store's issuing thread is in warp 0 (of its group).
            if (!load)
              return races::asyncRead(
                  b, loc, a[0], word, a[2], /*wgmma=*/false, ordering,
                  ordering == races::Ordering::WarpGroups
                      ? arith::ConstantIntOp::create(b, loc, 0, 32).getResult()
                      : Value());
            return races::write(b, loc, a[0], word, a[2], races::WriteKind::Tma,
                                ordering, a[3], a[4]);
          });
          abortOnHazard(load ? "a TMA load" : "a TMA store", hazard);
          return {};
        });
  }

  using WgmmaBody = llvm::function_ref<void(ValueRange operandsA, Value descB,
                                            Value smem, Value scratch)>;
  /// Calls the helper `kind` on the A operands `operandsA`, descriptor
  /// `descB`, shared memory and the accumulators, which go through a
  /// [register][lane] scratch buffer, so that the helper loops over
  /// registers instead of unrolling n / 2 of them.
  SmallVector<Value> wgmmaCall(const std::string &kind, ValueRange operandsA,
                               Value descB, ArrayRef<Value> d, int64_t n,
                               bool accumulate, WgmmaBody body) {
    if (!wgmmaScratch) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(smemBase);
      wgmmaScratch = memref::AllocaOp::create(
          b, loc,
          MemRefType::get({kMaxWgmmaN / 2, kThreadsPerBlock}, b.getF32Type()));
    }
    auto regIndex = [&](int64_t i) -> SmallVector<Value> {
      return {indexConst(i), indexConst(0)};
    };
    if (accumulate)
      for (int64_t i = 0; i < n / 2; ++i)
        vector::StoreOp::create(b, loc, d[i], wgmmaScratch, regIndex(i));
    SmallVector<Value> args(operandsA.begin(), operandsA.end());
    size_t numA = args.size();
    args.append({descB, smemBase, wgmmaScratch});
    outlined(kind, args, {}, [&](ValueRange x) -> SmallVector<Value> {
      body(x.take_front(numA), x[numA], x[numA + 1], x[numA + 2]);
      return {};
    });
    SmallVector<Value> out;
    auto type = cast<VectorType>(perThreadType(b.getF32Type()));
    for (int64_t i = 0; i < n / 2; ++i)
      out.push_back(
          vector::LoadOp::create(b, loc, type, wgmmaScratch, regIndex(i)));
    return out;
  }

  /// A[row][k] as f32, given the thread's first lane of its warp, the row,
  /// and which of the thread's two rows it is (0: g, 1: g + 8).
  using WgmmaA = llvm::function_ref<Value(Value warpBase, Value row,
                                          Value rowHalf, int k)>;
  /// The PTX ISA's wgmma m64nNk16 with f32 accumulators and 16-bit operands
  /// in 128-byte-swizzled canonical layouts, decoded from the descriptors
  /// (bits 0-13: start address >> 4, 16-29: leading byte offset >> 4,
  /// 32-45: stride byte offset >> 4; swizzle mode 1 is assumed):
  ///   K-major element (mn, k):  (mn / 8) SBO + (mn % 8) 128 + 2 k
  ///   MN-major element (k, mn): (mn / 64) LBO + 2 (mn % 64) + (k % 8) 128
  ///                             + (k / 8) SBO
  /// from the start address, then bits 4-6 of the address XOR bits 7-9.
  /// Thread l of the warpgroup holds D[16 (l / 32) + g + 8 ((i / 2) % 2)]
  /// [8 (i / 4) + 2 t + i % 2] in register i (g, t: lane % 32 / 4, lane % 4).
  void wgmmaImpl(Value descB, Value elems, Value scratch, int64_t n,
                 bool accumulate, bool transposeB, WgmmaA aAt) {
    Value startB = descField(descB, 0), lboB = descField(descB, 16),
          sboB = descField(descB, 32);
    laneLoop({}, [&](Value lane, ValueRange) -> SmallVector<Value> {
      auto [warpBase, g, t] = laneCoords(lane);
      // Warp w of the warpgroup holds rows 16 w .. 16 w + 15.
      Value rowBase = add(mulConst(divConst(lane, kWarpSize), 16), g);
      auto regs = scf::ForOp::create(b, loc, indexConst(0), indexConst(n / 2),
                                     indexConst(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(regs.getBody()->getTerminator());
      Value i = regs.getInductionVar();
      Value rowHalf = remConst(divConst(i, 2), 2);
      Value row = add(rowBase, mulConst(rowHalf, 8));
      Value col =
          add(add(mulConst(divConst(i, 4), 8), mulConst(t, 2)), remConst(i, 2));
      Value acc =
          accumulate
              ? memref::LoadOp::create(b, loc, scratch, ValueRange{i, lane})
                    .getResult()
              : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0))
                    .getResult();
      for (int k = 0; k < 16; ++k) {
        Value bAddr =
            transposeB ? mnMajorAddress(startB, lboB, sboB, indexConst(k), col)
                       : kMajorAddress(startB, sboB, col, indexConst(k));
        Value prod = arith::MulFOp::create(
            b, loc, aAt(warpBase, row, rowHalf, k), loadSwizzled(elems, bAddr));
        acc = arith::AddFOp::create(b, loc, acc, prod);
      }
      memref::StoreOp::create(b, loc, acc, scratch, ValueRange{i, lane});
      return {};
    });
  }
  /// Shared memory as 16-bit elements.
  Value halfView(Value smem) {
    int64_t bytes = cast<MemRefType>(smem.getType()).getDimSize(0);
    return memref::ViewOp::create(b, loc,
                                  MemRefType::get({bytes / 2}, elemType), smem,
                                  indexConst(0), ValueRange{});
  }
  /// A descriptor's 14-bit field at bit `shift`, in bytes (index).
  Value descField(Value desc, int64_t shift) {
    Value v = arith::ShRUIOp::create(
        b, loc, desc, arith::ConstantIntOp::create(b, loc, shift, 64));
    v = arith::AndIOp::create(b, loc, v,
                              arith::ConstantIntOp::create(b, loc, 0x3FFF, 64));
    return mulConst(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v),
                    16);
  }
  Value kMajorAddress(Value start, Value sbo, Value mn, Value k) {
    Value off = arith::MulIOp::create(b, loc, divConst(mn, 8), sbo);
    off = add(off, mulConst(remConst(mn, 8), 128));
    return add(start, add(off, mulConst(k, 2)));
  }
  Value mnMajorAddress(Value start, Value lbo, Value sbo, Value k, Value mn) {
    Value off = arith::MulIOp::create(b, loc, divConst(mn, 64), lbo);
    off = add(off, mulConst(remConst(mn, 64), 2));
    off = add(off, mulConst(remConst(k, 8), 128));
    off = add(off, arith::MulIOp::create(b, loc, divConst(k, 8), sbo));
    return add(start, off);
  }
  /// The element at (unswizzled) byte address `addr`, as f32.
  Value loadSwizzled(Value elems, Value addr) {
    Value swz = mulConst(remConst(divConst(addr, 128), 8), 16);
    Value phys = arith::XOrIOp::create(b, loc, addr, swz);
    Value v =
        memref::LoadOp::create(b, loc, elems, ValueRange{divConst(phys, 2)});
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  }

  using OutlinedBody = llvm::function_ref<SmallVector<Value>(ValueRange)>;
  /// Calls a private function that does what `body` builds, creating it
  /// the first time: one copy of each lane loop per module keeps the
  /// emulation small enough for LLVM to compile quickly. The body depends
  /// only on `kind` and the function type, which together are the key; the
  /// functions carry it, so that the emulations of several attention ops
  /// in one module share them instead of clashing on names.
  SmallVector<Value> outlined(const std::string &kind, ValueRange args,
                              TypeRange results, OutlinedBody body) {
    auto fnType = b.getFunctionType(TypeRange(args), results);
    std::string key;
    llvm::raw_string_ostream os(key);
    os << kind << fnType;
    auto it = outlinedFns.find(key);
    func::FuncOp fn;
    ModuleOp module =
        b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
    if (it != outlinedFns.end()) {
      fn = it->second;
    } else if ((fn = findHelper(module, key))) {
      outlinedFns[key] = fn;
    } else {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      std::string name;
      for (int n = 0;; ++n) {
        name = "__attn_emu_" + kind + "_" + std::to_string(n);
        if (!SymbolTable::lookupSymbolIn(module, name))
          break;
      }
      fn = func::FuncOp::create(b, loc, name, fnType);
      fn->setAttr(kHelperKeyAttr, b.getStringAttr(key));
      fn.setPrivate();
      // Internal in LLVM too, so that modules with emulated kernels link
      // together.
      fn->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                      b.getContext(), LLVM::Linkage::Internal));
      Block *entry = fn.addEntryBlock();
      b.setInsertionPointToStart(entry);
      SmallVector<Value> res = body(entry->getArguments());
      func::ReturnOp::create(b, loc, res);
      outlinedFns[key] = fn;
    }
    return SmallVector<Value>(
        func::CallOp::create(b, loc, fn, args).getResults());
  }

  static constexpr llvm::StringLiteral kHelperKeyAttr = "attn.emulation_helper";
  static func::FuncOp findHelper(ModuleOp module, StringRef key) {
    for (auto fn : module.getOps<func::FuncOp>())
      if (auto attr = fn->getAttrOfType<StringAttr>(kHelperKeyAttr))
        if (attr.getValue() == key)
          return fn;
    return {};
  }

  /// The register (an f32 vector over lanes) holding an A element of row
  /// half `rowHalf` and column k, or a B element of row k, and the element's
  /// pair index within its row of 4 lanes.
  using AOperand =
      llvm::function_ref<std::pair<Value, int>(int rowHalf, int k)>;
  using BOperand = llvm::function_ref<std::pair<Value, int>(int k)>;
  /// D = A B + C of an m16n8kK mma.sync with f32 accumulators: output i of
  /// lane (g, t) is C[g + 8 (i / 2)][2t + i % 2]; A[m][k] comes from lane
  /// 4 (m % 8) + pair(k) of the same warp, B[k][n] from lane 4 n + pair(k).
  std::array<Value, 4> emulateMma(int kSize, ValueRange c, AOperand aAt,
                                  BOperand bAt) {
    SmallVector<Value> results =
        laneLoop(c, [&](Value lane, ValueRange cur) -> SmallVector<Value> {
          auto [warpBase, g, t] = laneCoords(lane);
          SmallVector<Value> next;
          for (int i = 0; i < 4; ++i) {
            Value n = addConst(mulConst(t, 2), i % 2);
            Value acc = extract(cur[i], lane);
            for (int k = 0; k < kSize; ++k) {
              auto [aReg, aPair] = aAt(i / 2, k);
              auto [bReg, bPair] = bAt(k);
              Value aVal =
                  extract(aReg, add(warpBase, addConst(mulConst(g, 4), aPair)));
              Value bVal =
                  extract(bReg, add(warpBase, addConst(mulConst(n, 4), bPair)));
              acc = arith::AddFOp::create(
                  b, loc, acc, arith::MulFOp::create(b, loc, aVal, bVal));
            }
            next.push_back(insert(acc, cur[i], lane));
          }
          return next;
        });
    return {results[0], results[1], results[2], results[3]};
  }

  /// The byte address (index) at which lane `lane` accesses
  /// memref[idx at the lane] (an index that is not a vector is the same
  /// for every lane). The memref's layout is read where this is called;
  /// the function it returns is called per lane.
  std::function<Value(Value lane)> laneByteAddress(Value memref,
                                                   ValueRange idx) {
    auto type = cast<MemRefType>(memref.getType());
    // (An i1 is stored in a byte.)
    int64_t elemBytes = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value offset = meta.getOffset();
    SmallVector<Value> strides(meta.getStrides()), indices(idx);
    return [this, base, offset, strides, indices, elemBytes](Value lane) {
      Value linear = offset;
      for (auto [i, stride] : llvm::enumerate(strides)) {
        Value at = isa<VectorType>(indices[i].getType())
                       ? extract(indices[i], lane)
                       : indices[i];
        linear = add(linear, arith::MulIOp::create(b, loc, at, stride));
      }
      return add(base, mulConst(linear, elemBytes));
    };
  }

  using LaneBody =
      llvm::function_ref<SmallVector<Value>(Value lane, ValueRange cur)>;
  /// for lane in [0, 128) carrying `inits`; returns the final values.
  SmallVector<Value> laneLoop(ValueRange inits, LaneBody body) {
    Value lb = indexConst(0);
    Value ub = indexConst(kThreadsPerBlock);
    Value step = indexConst(1);
    auto loop = scf::ForOp::create(b, loc, lb, ub, step, inits);
    OpBuilder::InsertionGuard guard(b);
    // Without iter_args the loop already has its (empty) yield.
    if (inits.empty())
      b.setInsertionPoint(loop.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next =
        body(loop.getInductionVar(), loop.getRegionIterArgs());
    if (!inits.empty())
      scf::YieldOp::create(b, loc, next);
    return SmallVector<Value>(loop.getResults());
  }
  /// (first lane of the warp, groupID, threadID_in_group) of `lane`.
  std::tuple<Value, Value, Value> laneCoords(Value lane) {
    Value inWarp = remConst(lane, kWarpSize);
    Value warpBase = arith::SubIOp::create(b, loc, lane, inWarp);
    return {warpBase, divConst(inWarp, 4), remConst(inWarp, 4)};
  }
  Value zeros(Type scalar) {
    auto type = cast<VectorType>(perThreadType(scalar));
    return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  }
  Value extract(Value v, Value lane) {
    return vector::ExtractOp::create(b, loc, v, ArrayRef<OpFoldResult>{lane});
  }
  SmallVector<Value> extractAll(ValueRange vs, Value lane) {
    return llvm::map_to_vector(vs, [&](Value v) { return extract(v, lane); });
  }
  Value insert(Value scalar, Value v, Value lane) {
    return vector::InsertOp::create(b, loc, scalar, v,
                                    ArrayRef<OpFoldResult>{lane});
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value indexConst(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value addConst(Value x, int64_t c) {
    if (c == 0)
      return x;
    return add(x, indexConst(c));
  }
  Value mulConst(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, indexConst(c));
  }
  Value divConst(Value x, int64_t c) {
    return arith::DivUIOp::create(b, loc, x, indexConst(c));
  }
  Value remConst(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, indexConst(c));
  }

  /// The widest wgmma (n = 256).
  static constexpr int64_t kMaxWgmmaN = 256;

  std::array<Value, 3> blockIds;
  Value smemBase, wgmmaScratch;
  // The block program's first block, where the race model's state is made.
  Block *programStart;
  EmulationFault fault;
  // The synchronizations of each kind emitted so far (for the fault).
  std::array<int64_t,
             static_cast<size_t>(EmulationFault::Kind::NamedArrive) + 1>
      emittedSyncs = {};
  // Whether the race model applies, how it orders accesses, and its state
  // once made.
  bool checkRaces = true;
  races::Ordering ordering = races::Ordering::BlockBarriers;
  Value raceModel;
  // Warp specialized: the warpgroups whose program is being emitted (see
  // actAs).
  uint32_t actingGroups = 0;
  // [barrier][BarrierField] (index) of the TMA path's mbarriers.
  Value barrierState;
  // See namedBarrierState.
  static constexpr int64_t kNumNamedBarriers = 16;
  Value namedState;

  llvm::StringMap<func::FuncOp> outlinedFns;
  // wgmma groups committed so far, and the group of each wgmma result.
  int64_t committedGroups = 0;
  llvm::DenseMap<Value, int64_t> wgmmaGroupOf;
  // The views of shared memory, whose accesses are checked for bank
  // conflicts.
  llvm::DenseSet<Value> sharedViews;
  // The global holding each abort message.
  llvm::StringMap<std::string> messageGlobals;
};
} // namespace

std::unique_ptr<SimtTarget> mlir::attn::gpu_kernel::createEmulationTarget(
    OpBuilder &b, Location loc, Type elemType, std::array<Value, 3> blockIds,
    Value smemBase, EmulationFault fault) {
  return std::make_unique<EmulationTarget>(b, loc, elemType, blockIds, smemBase,
                                           fault);
}

FailureOr<EmulationFault>
mlir::attn::gpu_kernel::parseEmulationFault(StringRef spec) {
  EmulationFault fault;
  if (spec.empty())
    return fault;
  auto [name, index] = spec.split(':');
  using Kind = EmulationFault::Kind;
  std::optional<Kind> kind = llvm::StringSwitch<std::optional<Kind>>(name)
                                 .Case("barrier", Kind::Barrier)
                                 .Case("copy-wait", Kind::CopyWait)
                                 .Case("proxy-fence", Kind::ProxyFence)
                                 .Case("mbarrier-wait", Kind::MbarrierWait)
                                 .Case("wgmma-wait", Kind::WgmmaWait)
                                 .Case("named-barrier", Kind::NamedBarrier)
                                 .Case("named-arrive", Kind::NamedArrive)
                                 .Default(std::nullopt);
  if (!kind || index.getAsInteger(10, fault.index) || fault.index < 0)
    return failure();
  fault.kind = *kind;
  return fault;
}
