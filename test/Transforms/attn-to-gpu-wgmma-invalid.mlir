// What the wgmma kernel does not take: a located error at the op.
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-to-gpu=wgmma

func.func @f32(%q: memref<2x64x64xf32>, %k: memref<2x64x64xf32>,
               %v: memref<2x64x64xf32>, %o: memref<2x64x64xf32>) {
  // expected-error @+1 {{the wgmma kernel takes f16 or bf16 (f32 has the TF32 mma.sync kernel)}}
  attn.attention ins(%q, %k, %v : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<2x64x64xf32>)
                 outs(%o : memref<2x64x64xf32>) scale = 0.125
  return
}

// -----

// Valid for mma.sync (a multiple of 16), not for the 64-column panels.
func.func @head_dim_not_multiple_of_64(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>,
                                       %v: memref<2x64x80xbf16>, %o: memref<2x64x80xbf16>) {
  // expected-error @+1 {{the wgmma kernel needs head dims that are multiples of 64, got Dqk=64 and Dv=80}}
  attn.attention ins(%q, %k, %v : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x80xbf16>)
                 outs(%o : memref<2x64x80xbf16>) scale = 0.125
  return
}
