// Extra attn-fuzz seeds (fuzz/make_corpus.py): attn.attention on memrefs in
// the forms --attn-to-gpu handles, so that the fuzzer's mutants reach the
// GPU kernel generator (and its emulation) from more than one side.

func.func @no_batch_dqk_ne_dv(%q: memref<4x33x32xf16>, %k: memref<4x17x32xf16>,
                              %v: memref<4x17x48xf16>, %o: memref<4x33x48xf16>) {
  attn.attention ins(%q, %k, %v : memref<4x33x32xf16>, memref<4x17x32xf16>, memref<4x17x48xf16>)
                 outs(%o : memref<4x33x48xf16>) scale = 0.25
  return
}

// -----

func.func @mqa_float_mask_one_row(%q: memref<1x4x1x16xbf16>, %k: memref<1x1x65x16xbf16>,
                                  %v: memref<1x1x65x16xbf16>, %m: memref<1x1x1x65xf16>,
                                  %o: memref<1x4x1x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x1x16xbf16>, memref<1x1x65x16xbf16>, memref<1x1x65x16xbf16>)
                 mask(%m : memref<1x1x1x65xf16>)
                 outs(%o : memref<1x4x1x16xbf16>) scale = 0.25 causal = bottom_right
  return
}

// -----

func.func @causal_offset(%q: memref<2x64x64xf16>, %k: memref<2x96x64xf16>,
                         %v: memref<2x96x64xf16>, %o: memref<2x64x64xf16>, %off: index) {
  attn.attention ins(%q, %k, %v : memref<2x64x64xf16>, memref<2x96x64xf16>, memref<2x96x64xf16>)
                 outs(%o : memref<2x64x64xf16>) scale = 0.125 causal = top_left causal_offset(%off)
  return
}

// -----

func.func @two_batch_dims_bias(%q: memref<2x3x2x70x32xf16>, %k: memref<2x3x2x70x32xf16>,
                               %v: memref<2x3x2x70x32xf16>, %b: memref<1x1x1x70x70xf16>,
                               %o: memref<2x3x2x70x32xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x3x2x70x32xf16>, memref<2x3x2x70x32xf16>, memref<2x3x2x70x32xf16>)
                 bias(%b : memref<1x1x1x70x70xf16>)
                 outs(%o : memref<2x3x2x70x32xf16>) scale = 0.17677669
  return
}
