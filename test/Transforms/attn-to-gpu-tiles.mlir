// The kernel's tiles chosen with --attn-to-gpu="block-q= block-kv=", and
// their validation (a located error at the op).
// RUN: attn-opt %s --attn-to-gpu="block-q=64 block-kv=32" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-gpu-pipeline="block-q=64 block-kv=32 format=isa" | FileCheck %s --check-prefix=PIPE
// Two emulated ops in one module share the helpers their types allow and
// get distinct names for the others (the fuzzer found clashing names).
// RUN: attn-opt %s --attn-to-gpu=emulate | FileCheck %s --check-prefix=EMU
// RUN: not attn-opt %s --attn-to-gpu="block-q=96" 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not attn-opt %s --attn-to-gpu="block-kv=24" 2>&1 | FileCheck %s --check-prefix=BADKV
// RUN: not attn-opt %s --attn-to-gpu="block-kv=256" 2>&1 | FileCheck %s --check-prefix=BADKV2
// RUN: not attn-opt %s --attn-to-gpu="block-q=128 block-kv=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMEM

// One row tile per warp: grid (ceil(100 / 64), Hq, B); Q 64x72, K and V
// 2x32x72 (27648 bytes); 16 cp.async chunks of Q and 8 of K/V per thread
// split over the 128 threads; 4 Q fragments (one per k step) in registers.
// CHECK-LABEL: func.func @f16_d64
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c27648_i32
// CHECK: memref.view {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x32x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x32x72xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.ldmatrix %{{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.ldmatrix %{{.*}} : memref<64x72xf16
// CHECK: scf.for
// S: 32 keys = two ldmatrix.x4 of K per k step, one mma per n8 tile.
// CHECK: %[[KF:.*]] = nvgpu.ldmatrix %{{.*}} : memref<2x32x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %{{.*}} : memref<2x32x72xf16, #gpu.address_space<workgroup>>

// The pipeline passes the tiles on; shared addresses are 32-bit registers
// (short pointers).
// PIPE-LABEL: llvm.func @f16_d64
// PIPE: %[[BYTES:.*]] = llvm.mlir.constant(27648 : i32) : i32
// PIPE: %[[THREADS:.*]] = llvm.mlir.constant(128 : index) : i64
// PIPE: gpu.launch_func @f16_d64_kernel::@f16_d64_kernel blocks in ({{.*}}) threads in (%[[THREADS]], {{.*}}) : i64 dynamic_shared_memory_size %[[BYTES]]
// PIPE: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{.*}}}, [%r{{[0-9]+}}

// BADQ: attn-to-gpu-tiles.mlir:[[@LINE+5]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-q must be 64 or 128 (4 warps of one or two m16 row tiles), got 96
// BADKV: attn-to-gpu-tiles.mlir:[[@LINE+4]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-kv must be a multiple of 16 up to 128, got 24
// BADKV2: attn-to-gpu-tiles.mlir:[[@LINE+3]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-kv must be a multiple of 16 up to 128, got 256
func.func @f16_d64(%q: memref<1x4x100x64xf16>, %k: memref<1x4x100x64xf16>,
                   %v: memref<1x4x100x64xf16>, %o: memref<1x4x100x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x100x64xf16>, memref<1x4x100x64xf16>, memref<1x4x100x64xf16>)
      outs(%o : memref<1x4x100x64xf16>) scale = 0.125
  return
}

// EMU-LABEL: func.func @f16_d64
// EMU: call @__attn_emu_mma_0
// EMU: call @__attn_emu_store_0({{.*}}) : (vector<128xf16>, memref<1x4x100x64xf16>
// EMU-LABEL: func.func @f16_d256
// EMU: call @__attn_emu_mma_0
// EMU: call @__attn_emu_store_1({{.*}}) : (vector<128xf16>, memref<1x4x100x256xf16>
// EMU-DAG: func.func private @__attn_emu_store_0({{.*}}: memref<1x4x100x64xf16>
// EMU-DAG: func.func private @__attn_emu_store_1({{.*}}: memref<1x4x100x256xf16>

// 128 rows by 128 keys of D = 256 need 128x264 + 2 x 2 x 128x264 f16
// elements: more shared memory than a block has.
// SMEM: attn-to-gpu-tiles.mlir:[[@LINE+3]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the tiles need 337920 bytes of shared memory, more than a block's 232448; use smaller block-q/block-kv
func.func @f16_d256(%q: memref<1x4x100x256xf16>, %k: memref<1x4x100x256xf16>,
                    %v: memref<1x4x100x256xf16>, %o: memref<1x4x100x256xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x100x256xf16>, memref<1x4x100x256xf16>, memref<1x4x100x256xf16>)
      outs(%o : memref<1x4x100x256xf16>) scale = 0.0625
  return
}

// D = 16 at 32 keys: a K or V tile is 64 16-byte chunks, so threads 64..127
// copy nothing (a predicated cp.async; they once wrote zeros into a row's
// padding, all into the same bytes: a race the emulation reports).
// CHECK-LABEL: func.func @f16_d16
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c64
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: nvgpu.device_async_copy
func.func @f16_d16(%q: memref<1x4x100x16xf16>, %k: memref<1x4x100x16xf16>,
                   %v: memref<1x4x100x16xf16>, %o: memref<1x4x100x16xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x100x16xf16>, memref<1x4x100x16xf16>, memref<1x4x100x16xf16>)
      outs(%o : memref<1x4x100x16xf16>) scale = 0.25
  return
}
