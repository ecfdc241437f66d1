// The Hopper kernel of --attn-to-gpu="wgmma": both products on wgmma, Q, K
// and V from shared memory in the 128-byte-swizzled layout, P from
// registers.
// RUN: attn-opt %s --attn-to-gpu=wgmma --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="wgmma emulate" | FileCheck %s --check-prefix=EMU
// The pipeline to PTX for sm_90a, the only target with wgmma.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a format=isa wgmma=1" -o %t.mlir
// RUN: %gpu-binary %t.mlir %t.objects | FileCheck %s --check-prefix=OBJ
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.objects/bf16_d128_kernel.sm_90a.ptx
// Other chips have no wgmma: a located error at the op.
// RUN: not attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa wgmma=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM90

// D = 128: two 64-row slabs, 64-key blocks (the defaults). Shared memory:
// Q 2 panels x 128 rows x 64 (32768 bytes), K and V 2 buffers x 2 panels
// x 64 x 64 (32768 each), and 1024 bytes to align the start to the
// swizzle's repeat: 99328.
// CHECK-LABEL: func.func @bf16_d128
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c99328_i32
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[MIS:.*]] = arith.remui %[[ADDR]], %c1024
// CHECK: %[[PAD:.*]] = arith.subi %c1024, %[[MIS]]
// CHECK: %[[SHIFT:.*]] = arith.remui %[[PAD]], %c1024
// CHECK: memref.view %[[SMEM]][%[[SHIFT]]][] {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// The swizzle of the cp.async destinations: chunk xor row % 8.
// CHECK: arith.xori
// CHECK: nvgpu.device_async_copy {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// K/V block j is complete and visible to the async proxy before wgmma.
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// S = Q K^T: descriptors of 128-byte swizzle (mode 1 << 62), SBO 1024
// (64 << 32), LBO 16 (1 << 16); the first k step does not read D.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.andi %{{.*}}, %c262143_i64
// CHECK: arith.shrui %{{.*}}, %c4_i64
// CHECK: arith.ori %{{.*}}, %c4611686293305360384_i64
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// The second slab (its own group) reuses the K descriptors.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// Slab 0's softmax runs while slab 1's S group may still be in flight;
// then slab 0's O += P V is issued as its own group, and slab 1's softmax
// runs while it is in flight (one group pending at each wait: the later S,
// then slab 0's P V). Each slab rescales its O accumulators only on the
// warp-uniform branch where its row maxima moved (lazy rescaling).
// O += P V: P from registers (register-A wgmma: 64 accumulators tied to
// their inputs, 4 A registers, the V descriptor, scale-d), after the O
// accumulators and the packed P registers are pinned and fenced. V is
// MN-major (imm-trans-b 1); its LBO = 64 keys x 128 bytes between
// 64-column panels (512 << 16). No barrier: P never leaves the warp.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: %[[MOVED0:.*]] = nvvm.vote.sync  any
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK: scf.if %[[MOVED0]]
// CHECK-NOT: gpu.barrier
// CHECK: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: llvm.inline_asm has_side_effects "", "=r,0"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.ori %{{.*}}, %c4611686293338849280_i64
// CHECK-COUNT-4: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $133, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;\0A}\0A", "=f,{{.*}},=f,0,1,{{.*}},63,r,r,r,r,l,r"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: %[[MOVED1:.*]] = nvvm.vote.sync  any
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK: scf.if %[[MOVED1]]
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.barrier
// CHECK: scf.yield
func.func @bf16_d128(%q: memref<2x8x100x128xbf16>, %k: memref<2x8x77x128xbf16>,
                     %v: memref<2x8x77x128xbf16>, %o: memref<2x8x100x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x100x128xbf16>, memref<2x8x77x128xbf16>, memref<2x8x77x128xbf16>)
      outs(%o : memref<2x8x100x128xbf16>) scale = 0.088388347648
  return
}

// The emulation decodes the descriptors in one helper per wgmma form, with
// the accumulators in a [register][lane] scratch buffer; the register-A
// form takes the 4 A registers as 8 lane vectors.
// EMU-LABEL: func.func @bf16_d128
// EMU: %[[SMEM:.*]] = memref.alloca() {alignment = 1024 : i64} : memref<99328xi8>
// EMU: %[[SCRATCH:.*]] = memref.alloca() : memref<128x128xf32>
// EMU: call @__attn_emu_wgmma64_0(%{{.*}}, %{{.*}}, %[[SMEM]], %[[SCRATCH]]) : (i64, i64, memref<99328xi8>, memref<128x128xf32>) -> ()
// EMU: call @__attn_emu_wgmma64acc_0(
// EMU: call @__attn_emu_wgmmar128tacc_0({{.*}}, %[[SMEM]], %[[SCRATCH]]) : (vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, vector<128xbf16>, i64, memref<99328xi8>, memref<128x128xf32>) -> ()
// EMU: func.func private @__attn_emu_wgmma64_0(
// EMU: func.func private @__attn_emu_wgmma64acc_0(
// EMU: func.func private @__attn_emu_wgmmar128tacc_0(

// OBJ: bf16_d128_kernel.sm_90a.ptx

// PTX: .target sm_90a
// (block order is the backend's: DAG)
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: wgmma.fence.sync.aligned;
// Scale-d predicate, scale-a, scale-b, no transposes.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// A from registers, B (V) transposed.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;

// SM90: error: 'attn.attention' op cannot be lowered to the GPU kernel: the wgmma kernel needs chip=sm_90a, got sm_90
