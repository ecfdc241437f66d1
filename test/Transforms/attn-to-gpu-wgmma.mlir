// The Hopper kernel of --attn-to-gpu="wgmma": both products on wgmma from
// shared memory in the 128-byte-swizzled layout, P through shared memory.
// RUN: attn-opt %s --attn-to-gpu=wgmma --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-to-gpu="wgmma emulate" | FileCheck %s --check-prefix=EMU
// The pipeline to PTX for sm_90a, the only target with wgmma.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a format=isa wgmma=1" -o %t.mlir
// RUN: %gpu-binary %t.mlir %t.objects | FileCheck %s --check-prefix=OBJ
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.objects/bf16_d128_kernel.sm_90a.ptx
// Other chips have no wgmma: a located error.
// RUN: not attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa wgmma=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM90

// D = 128: two 64-row slabs, 32-key blocks (the defaults). Shared memory:
// Q 2 panels x 128 rows x 64 (32768 bytes), K and V 2 buffers x 2 panels
// x 32 x 64 (16384 each), P one 64-key panel x 128 rows (16384), and 1024
// bytes to align the start to the swizzle's repeat: 82944.
// CHECK-LABEL: func.func @bf16_d128
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c82944_i32
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK: %[[MIS:.*]] = arith.remui %[[ADDR]], %c1024
// CHECK: %[[PAD:.*]] = arith.subi %c1024, %[[MIS]]
// CHECK: %[[SHIFT:.*]] = arith.remui %[[PAD]], %c1024
// CHECK: memref.view %[[SMEM]][%[[SHIFT]]][] {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x2x32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<1x128x64xbf16, #gpu.address_space<workgroup>>
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
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// The second slab reuses the K descriptors.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "=f,0"
// P to shared memory (32-bit stores), fenced and synchronized for wgmma.
// CHECK: vector.store %{{.*}} : memref<1x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// O += P V: V is MN-major (B transposed: <row>), LBO = 32 keys x 128 bytes
// between 64-column panels (256 << 16).
// CHECK: llvm.inline_asm has_side_effects "", "=f,0"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.ori %{{.*}}, %c4611686293322072064_i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
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
// the accumulators in a [register][lane] scratch buffer.
// EMU-LABEL: func.func @bf16_d128
// EMU: %[[SMEM:.*]] = memref.alloca() : memref<82944xi8>
// EMU: %[[SCRATCH:.*]] = memref.alloca() : memref<128x128xf32>
// EMU: call @__attn_emu_wgmma32_0(%{{.*}}, %{{.*}}, %[[SMEM]], %[[SCRATCH]]) : (i64, i64, memref<82944xi8>, memref<128x128xf32>) -> ()
// EMU: call @__attn_emu_wgmma32acc_0(
// EMU: call @__attn_emu_wgmma128tacc_0(
// EMU: func.func private @__attn_emu_wgmma32_0(
// EMU: func.func private @__attn_emu_wgmma32acc_0(
// EMU: func.func private @__attn_emu_wgmma128tacc_0(

// OBJ: bf16_d128_kernel.sm_90a.ptx

// PTX: .target sm_90a
// (block order is the backend's: DAG)
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: wgmma.fence.sync.aligned;
// Scale-d predicate, scale-a, scale-b, no transposes.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// B (V) transposed.
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;

// SM90: error: 'nvvm.wgmma.fence.aligned' op is not supported on sm_90
