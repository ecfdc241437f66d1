// What the warp-specialized kernel (--attn-to-gpu="wgmma warp-specialize")
// does not take: a located error at the op.
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-to-gpu="wgmma warp-specialize"
// Warp specialization is part of the wgmma kernel, and for sm_90a.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu=warp-specialize 2>&1 | FileCheck %s --check-prefix=NOWGMMA
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize chip=sm_90" 2>&1 | FileCheck %s --check-prefix=CHIP
// One 64-row slab per consumer warpgroup, at most three of them; at most
// 256 keys per step (one wgmma's N).
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize block-q=256" 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize block-q=96" 2>&1 | FileCheck %s --check-prefix=BADQ96
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize block-kv=272" 2>&1 | FileCheck %s --check-prefix=BADKV
// Pingpong needs another consumer warpgroup to take turns with.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize pingpong block-q=64" 2>&1 | FileCheck %s --check-prefix=PINGPONG
// More keys per step than shared memory holds.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize block-q=192 block-kv=256" 2>&1 | FileCheck %s --check-prefix=SMEM
// With pingpong, the default block-q is not lowered below 128 to fit many
// keys (block-kv=208 alone runs at 64 rows): the shared-memory error.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu="wgmma warp-specialize pingpong block-kv=208" 2>&1 | FileCheck %s --check-prefix=SMEMPP

// NOWGMMA: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+12]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: warp specialization (warp-specialize=1) is part of the wgmma kernel: add wgmma=1
// CHIP: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+11]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the wgmma kernel needs chip=sm_90a, got sm_90
// BADQ: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+10]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-q must be 64, 128 or 192 (one 64-row slab per consumer warpgroup), got 256
// BADQ96: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+9]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-q must be 64, 128 or 192 (one 64-row slab per consumer warpgroup), got 96
// BADKV: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+8]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: block-kv must be a multiple of 16 up to 256, got 272
// PINGPONG: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+7]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: pingpong needs two or three consumer warpgroups (block-q 128 or 192), got block-q=64
// Q 192 x 128, two K and two V buffers of 256 x 128 (bf16), the alignment;
// the 8 mbarriers' 64 bytes come off the 227 KB.
// SMEM: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+4]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the tiles need 312320 bytes of shared memory, more than a block's 232384; use smaller block-q/block-kv
// SMEMPP: attn-to-gpu-warp-specialize-invalid.mlir:[[@LINE+3]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the tiles need 246784 bytes of shared memory, more than a block's 232384; use smaller block-q/block-kv
func.func @d128(%q: memref<1x2x200x128xbf16>, %k: memref<1x2x200x128xbf16>,
                %v: memref<1x2x200x128xbf16>, %o: memref<1x2x200x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x200x128xbf16>, memref<1x2x200x128xbf16>, memref<1x2x200x128xbf16>)
                 outs(%o : memref<1x2x200x128xbf16>) scale = 0.125
  return
}

// -----

// The producer loads by TMA: at most 5 dimensions.
func.func @rank6(%q: memref<1x2x2x2x64x64xbf16>, %k: memref<1x2x2x2x64x64xbf16>,
                 %v: memref<1x2x2x2x64x64xbf16>, %o: memref<1x2x2x2x64x64xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU kernel: TMA tensor maps have at most 5 dimensions: query, key and value may have at most 2 batch dimensions}}
  attn.attention ins(%q, %k, %v : memref<1x2x2x2x64x64xbf16>, memref<1x2x2x2x64x64xbf16>, memref<1x2x2x2x64x64xbf16>)
                 outs(%o : memref<1x2x2x2x64x64xbf16>) scale = 0.125
  return
}

// -----

// f32 has the TF32 mma.sync kernel only.
func.func @f32(%q: memref<1x2x64x64xf32>, %k: memref<1x2x64x64xf32>,
               %v: memref<1x2x64x64xf32>, %o: memref<1x2x64x64xf32>) {
  // expected-error @+1 {{cannot be lowered to the GPU kernel: the wgmma kernel takes f16 or bf16 (f32 has the TF32 mma.sync kernel)}}
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32>)
                 outs(%o : memref<1x2x64x64xf32>) scale = 0.125
  return
}
