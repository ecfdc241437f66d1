// The Hopper kernel with TMA loads, --attn-to-gpu="wgmma tma": the host
// encodes a tensor map per operand; in the kernel one thread issues a
// cp.async.bulk.tensor per 64-column panel and every thread waits on the
// K/V buffer's mbarrier by phase parity, instead of cp.async by all threads.
// RUN: attn-opt %s --attn-to-gpu="wgmma tma" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="wgmma tma emulate" | FileCheck %s --check-prefix=EMU
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a format=isa wgmma=1 tma=1" -o %t.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file %t.mlir
// The mbarrier globals live in the kernels' modules only.
// RUN: not grep 'llvm.mlir.global.*@__mbarrier' %t.mlir
// RUN: %gpu-binary %t.mlir %t.objects | FileCheck %s --check-prefix=OBJ
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.objects/gqa_d128_kernel.sm_90a.ptx
// RUN: not grep cp.async.cg %t.objects/gqa_d128_kernel.sm_90a.ptx

// D = 128 with GQA (8 query heads, 4 K/V heads) and a batch dim. Boxes of
// 128 Q rows and 64 K/V rows, each 64 columns (128 bytes, the swizzle's
// row), 1 in the batch and head dims.
// CHECK-LABEL: func.func @gqa_d128
// CHECK: %[[QC:.*]] = memref.cast %arg0 : memref<2x8x100x128xbf16> to memref<*xbf16>
// CHECK: %[[QMAP:.*]] = nvgpu.tma.create.descriptor %[[QC]] box[%c1, %c1, %c128, %c64] : memref<*xbf16> -> <tensor = memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK: %[[KC:.*]] = memref.cast %arg1 : memref<2x4x77x128xbf16> to memref<*xbf16>
// CHECK: %[[KMAP:.*]] = nvgpu.tma.create.descriptor %[[KC]] box[%c1, %c1, %c64, %c64] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16
// CHECK: %[[VC:.*]] = memref.cast %arg2 : memref<2x4x77x128xbf16> to memref<*xbf16>
// CHECK: %[[VMAP:.*]] = nvgpu.tma.create.descriptor %[[VC]] box[%c1, %c1, %c64, %c64]
// CHECK: %[[OC:.*]] = memref.cast %arg3 : memref<2x8x100x128xbf16> to memref<*xbf16>
// CHECK: nvgpu.tma.create.descriptor %[[OC]] box[%c1, %c1, %c128, %c64]
// CHECK: gpu.launch
// CHECK-SAME: dynamic_shared_memory_size %c99328_i32
// CHECK: %[[MIS:.*]] = arith.remui %{{.*}}, %c1024 : index
// CHECK: %[[PAD:.*]] = arith.subi %c1024, %[[MIS]]
// CHECK: %[[SHIFT:.*]] = arith.remui %[[PAD]], %c1024 : index
// CHECK: %[[BATCH:.*]] = arith.remui %block_id_z, %c2
// CHECK: %[[KVHEAD:.*]] = arith.divui %block_id_y, %c2
// CHECK: %[[Q0:.*]] = arith.muli %block_id_x, %c128
// Two mbarriers (one per K/V buffer), initialized by thread 0 for one
// arrival per phase, the initialization fenced before the TMA unit uses
// them and the barrier before any other thread does.
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// CHECK: %[[T0:.*]] = arith.cmpi eq, %thread_id_x, %c0
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c0], %c1, predicate = %[[T0]]
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c1], %c1, predicate = %[[T0]]
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// Block 0's phase of barrier 0 brings Q (128 x 128 x 2 bytes), K and V
// (64 x 128 x 2 each): 65536 bytes, Q's panels at bytes 0 and 16384, K's
// at 32768 and 40960, V's at 65536 and 73728. Coordinates go innermost
// first: column, row, head, batch.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c0], %c65536, predicate = %[[T0]]
// CHECK: %[[QV0:.*]] = memref.view %{{.*}}[%[[SHIFT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load %[[QMAP]][%c0, %[[Q0]], %block_id_y, %[[BATCH]]], %[[BARS]][%c0] to %[[QV0]], predicate = %[[T0]]
// CHECK: nvgpu.tma.async.load %[[QMAP]][%c64, %[[Q0]], %block_id_y, %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c0, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c64, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c0, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c64, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0]
// Step j: thread 0 announces and issues block j + 1 (if any) into the
// other buffer on that buffer's barrier (K and V: 32768 bytes), then every
// thread waits for block j: phase j / 2 of barrier j % 2.
// CHECK: scf.for %[[J:.*]] = %c0 to %c2
// CHECK: %[[BUF:.*]] = arith.remui %[[J]], %c2
// CHECK: %[[NBUF:.*]] = arith.subi %c1, %[[BUF]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[J]], %c1
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %c2
// CHECK: %[[ISSUE:.*]] = arith.andi %[[T0]], %[[MORE]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[NBUF]]], %c32768, predicate = %[[ISSUE]]
// CHECK: %[[ROW:.*]] = arith.muli %[[NEXT]], %c64
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c0, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[NBUF]]] to %{{.*}}, predicate = %[[ISSUE]]
// CHECK: nvgpu.tma.async.load %[[KMAP]][%c64, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[NBUF]]]
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c0, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[NBUF]]]
// CHECK: nvgpu.tma.async.load %[[VMAP]][%c64, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[NBUF]]]
// CHECK: %[[PHASE:.*]] = arith.divui %[[J]], %c2
// CHECK: %[[PBIT:.*]] = arith.remui %[[PHASE]], %c2
// CHECK: %[[PARITY:.*]] = arith.cmpi eq, %[[PBIT]], %c1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[BUF]]], %[[PARITY]], %c10000000
// TMA writes through the async proxy, as wgmma reads: no proxy fence, and
// no barrier before the products (one per step, at its end, before the
// next step's loads overwrite this buffer).
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.mma_async
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// The epilogue: once every warp is past the loop, O goes (swizzled, as
// bf16 pairs: 2 row tiles x 16 column tiles x 2 rows) into 64-column
// panels where Q was; the writes are fenced for the async proxy, and
// thread 0 stores each panel with TMA, which writes no row past Lq.
// Shared memory stays until the stores have read it.
// CHECK: gpu.barrier
// CHECK: %[[OV:.*]] = memref.view %{{.*}}[%[[SHIFT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-64: vector.store %{{.*}}, %[[OV]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NOT: vector.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvgpu.tma.async.store %{{.*}} to %[[OMAP:.*]][%c0, %[[Q0]], %block_id_y, %[[BATCH]]], predicate = %[[T0]] : memref<1x1x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.tma.async.store %{{.*}} to %[[OMAP]][%c64, %[[Q0]], %block_id_y, %[[BATCH]]], predicate = %[[T0]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NOT: nvgpu.device_async
// CHECK: gpu.terminator
func.func @gqa_d128(%q: memref<2x8x100x128xbf16>, %k: memref<2x4x77x128xbf16>,
                    %v: memref<2x4x77x128xbf16>, %o: memref<2x8x100x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x100x128xbf16>, memref<2x4x77x128xbf16>, memref<2x4x77x128xbf16>)
      outs(%o : memref<2x8x100x128xbf16>) scale = 0.088388347648
  return
}

// Causal, dynamic Lk: the prologue's loads (and their bytes) are issued
// only if the block has a K/V step, so that no load is left unwaited.
// CHECK-LABEL: func.func @causal_dynamic
// CHECK: gpu.launch
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create
// CHECK: %[[T0:.*]] = arith.cmpi eq, %thread_id_x, %c0
// CHECK: gpu.barrier
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[NUMKV:.*]], %c0 : index
// CHECK: %[[ISSUE:.*]] = arith.andi %[[T0]], %[[ANY]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c0], %c32768, predicate = %[[ISSUE]]
// CHECK: nvgpu.tma.async.load {{.*}} predicate = %[[ISSUE]]
// CHECK: scf.for %{{.*}} = %c0 to %[[NUMKV]]
func.func @causal_dynamic(%q: memref<1x4x?x64xf16>, %k: memref<1x4x?x64xf16>,
                          %v: memref<1x4x?x64xf16>, %o: memref<1x4x?x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>)
      outs(%o : memref<1x4x?x64xf16>) scale = 0.125 causal = top_left
  return
}

// Dv = 4 Dqk at 16-key blocks: O's panels (64 KB) would not fit where Q
// and K were (20 KB), so the threads store O themselves.
// CHECK-LABEL: func.func @dv_wider
// CHECK-COUNT-3: nvgpu.tma.create.descriptor
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: gpu.launch
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: vector.store {{.*}} : memref<1x2x100x256xf16>, vector<2xf16>
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: gpu.terminator
func.func @dv_wider(%q: memref<1x2x100x64xf16>, %k: memref<1x2x77x64xf16>,
                    %v: memref<1x2x77x256xf16>, %o: memref<1x2x100x256xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x100x64xf16>, memref<1x2x77x64xf16>, memref<1x2x77x256xf16>)
      outs(%o : memref<1x2x100x256xf16>) scale = 0.125
  return
}

// The emulation reads the operands themselves (no tensor maps): one TMA
// helper per box height writes the swizzled box, and the mbarriers are
// modelled by a [barrier][completed, bytes, pending arrivals, waited,
// arrivals per phase, completed by copies] state that each wait checks.
// EMU-LABEL: func.func @gqa_d128
// EMU-NOT: nvgpu.tma.create.descriptor
// EMU: %[[SMEM:.*]] = memref.alloca() {alignment = 1024 : i64} : memref<99328xi8>
// EMU: %[[STATE:.*]] = memref.alloca() : memref<2x6xindex>
// EMU: call @__attn_emu_tma128_0(%arg0, %[[SMEM]], {{.*}}) : (memref<2x8x100x128xbf16>, memref<99328xi8>, index, index, index, index, index) -> ()
// EMU: call @__attn_emu_tma64_0(%arg1, %[[SMEM]], {{.*}}) : (memref<2x4x77x128xbf16>, memref<99328xi8>, index, index, index, index, index) -> ()
// EMU: llvm.call @puts
// EMU: llvm.call @fflush
// EMU-NEXT: llvm.call @abort
// EMU: call @__attn_emu_tmastore128_0(%arg3, %[[SMEM]], {{.*}}) : (memref<2x8x100x128xbf16>, memref<99328xi8>, index, index, index, index, index) -> ()
// EMU: func.func private @__attn_emu_tma128_0(
// EMU: func.func private @__attn_emu_tma64_0(

// The host calls the runtime to encode each map (rank 4; CUDA's enums:
// bf16 9, no interleave 0, 128-byte swizzle 3, 128-byte L2 promotion 2,
// zero fill 0); the kernel gets the maps as pointers.
// HOST-LABEL: llvm.func @gqa_d128(
// HOST-DAG: %[[RANK:.*]] = llvm.mlir.constant(4 : index) : i64
// HOST-DAG: %[[BF16:.*]] = llvm.mlir.constant(9 : i32) : i64
// HOST-DAG: %[[SWIZZLE:.*]] = llvm.mlir.constant(3 : i32) : i64
// HOST-DAG: %[[L2:.*]] = llvm.mlir.constant(2 : i32) : i64
// HOST-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i64
// HOST-COUNT-4: llvm.call @mgpuTensorMapEncodeTiledMemref(%[[RANK]], %{{.*}}, %[[BF16]], %[[ZERO]], %[[SWIZZLE]], %[[L2]], %[[ZERO]], %{{.*}}) : (i64, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> !llvm.ptr
// HOST: gpu.launch_func @gqa_d128_kernel::@gqa_d128_kernel

// OBJ: gqa_d128_kernel.sm_90a.ptx

// PTX: .target sm_90a
// PTX-DAG: .shared .align 8 .b8 __mbarrier[16];
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.global.shared::cta.bulk_group
// PTX-DAG: cp.async.bulk.commit_group;
// PTX-DAG: cp.async.bulk.wait_group.read 0;
