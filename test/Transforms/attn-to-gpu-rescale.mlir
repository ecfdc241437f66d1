// --attn-to-gpu="rescale-threshold=T": the lazy rescaling rule's threshold
// (base 2). A warp moves its row maxima, and rescales O and the row sums on
// a warp-uniform branch, only when a row's maximum rose more than T; a
// negative T rescales at every step with no vote and no branch, as
// FlashAttention-2 does.
// RUN: attn-opt %s --attn-to-gpu="rescale-threshold=2.5" --canonicalize --cse | FileCheck %s --check-prefix=LAZY
// RUN: attn-opt %s --attn-to-gpu="rescale-threshold=-1" --canonicalize --cse | FileCheck %s --check-prefix=EAGER
// Above 8 the stale scores (up to 2^T) lose precision in f16/bf16 P.
// RUN: not attn-opt %s --attn-to-gpu="rescale-threshold=9" 2>&1 | FileCheck %s --check-prefix=TOO-LARGE

// LAZY-LABEL: func.func @f16_d64
// LAZY: %[[T:.*]] = arith.constant 2.500000e+00 : f32
// LAZY: scf.for
// LAZY: arith.cmpf ogt, %{{.*}}, %[[T]] : f32
// LAZY: arith.cmpf ogt, %{{.*}}, %[[T]] : f32
// LAZY: %[[MOVED:.*]] = nvvm.vote.sync  any %c-1_i32, %{{.*}} -> i1
// LAZY: scf.if %[[MOVED]] -> (f32

// EAGER-LABEL: func.func @f16_d64
// EAGER: scf.for
// The masking branch of the boundary blocks is the only branch with
// results (the epilogue's stores have none).
// EAGER: scf.if %{{.*}} -> (f32
// EAGER-NOT: nvvm.vote.sync
// EAGER-NOT: arith.cmpf ogt
// EAGER-NOT: scf.if %{{.*}} -> (f32
// EAGER: gpu.terminator

// TOO-LARGE: error: 'attn.attention' op cannot be lowered to the GPU kernel: rescale-threshold must be at most 8 (the exponentiated scores of a stale maximum reach 2^threshold), got 9.00
func.func @f16_d64(%q: memref<1x2x100x64xf16>, %k: memref<1x2x300x64xf16>,
                   %v: memref<1x2x300x64xf16>, %o: memref<1x2x100x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x100x64xf16>, memref<1x2x300x64xf16>, memref<1x2x300x64xf16>)
      outs(%o : memref<1x2x100x64xf16>) scale = 0.125
  return
}
