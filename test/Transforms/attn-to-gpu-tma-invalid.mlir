// What the TMA loads of --attn-to-gpu="wgmma tma" do not take: a located
// error at the op.
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-to-gpu="wgmma tma"
// TMA is part of the wgmma kernel.
// RUN: not attn-opt %s --split-input-file --attn-to-gpu=tma 2>&1 | FileCheck %s --check-prefix=NOWGMMA

// A tensor map addresses at most 5 dimensions: 3 batch dims are too many.
func.func @rank6(%q: memref<1x2x2x2x64x64xbf16>, %k: memref<1x2x2x2x64x64xbf16>,
                 %v: memref<1x2x2x2x64x64xbf16>, %o: memref<1x2x2x2x64x64xbf16>) {
  // expected-error @+1 {{cannot be lowered to the GPU kernel: TMA tensor maps have at most 5 dimensions: query, key and value may have at most 2 batch dimensions}}
  attn.attention ins(%q, %k, %v : memref<1x2x2x2x64x64xbf16>, memref<1x2x2x2x64x64xbf16>, memref<1x2x2x2x64x64xbf16>)
                 outs(%o : memref<1x2x2x2x64x64xbf16>) scale = 0.125
  return
}

// -----

// Two batch dims (rank 5) are fine.
func.func @rank5(%q: memref<2x2x2x64x64xbf16>, %k: memref<2x2x2x64x64xbf16>,
                 %v: memref<2x2x2x64x64xbf16>, %o: memref<2x2x2x64x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x2x2x64x64xbf16>, memref<2x2x2x64x64xbf16>, memref<2x2x2x64x64xbf16>)
                 outs(%o : memref<2x2x2x64x64xbf16>) scale = 0.125
  return
}

// NOWGMMA: error: 'attn.attention' op cannot be lowered to the GPU kernel: TMA loads (tma=1) are part of the wgmma kernel: add wgmma=1
