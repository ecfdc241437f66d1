// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-to-gpu

func.func @tensors(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>,
                   %v: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @+1 {{the GPU kernel is built on memrefs: bufferize first}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
                      outs(%o : tensor<1x2x64x64xf16>) scale = 0.125 -> tensor<1x2x64x64xf16>
  return %r : tensor<1x2x64x64xf16>
}

// -----

func.func @head_dim_not_multiple_of_16(%q: memref<2x64x40xf16>, %k: memref<2x64x40xf16>,
                                       %v: memref<2x64x40xf16>, %o: memref<2x64x40xf16>) {
  // expected-error @+1 {{the head dims must be multiples of 16 up to 256 (mma.sync k=16), got Dqk=40 and Dv=40}}
  attn.attention ins(%q, %k, %v : memref<2x64x40xf16>, memref<2x64x40xf16>, memref<2x64x40xf16>)
                 outs(%o : memref<2x64x40xf16>) scale = 0.125
  return
}

// -----

func.func @head_dim_too_large(%q: memref<2x64x512xbf16>, %k: memref<2x64x512xbf16>,
                              %v: memref<2x64x64xbf16>, %o: memref<2x64x64xbf16>) {
  // expected-error @+1 {{got Dqk=512 and Dv=64}}
  attn.attention ins(%q, %k, %v : memref<2x64x512xbf16>, memref<2x64x512xbf16>, memref<2x64x64xbf16>)
                 outs(%o : memref<2x64x64xbf16>) scale = 0.125
  return
}

// -----

func.func @dynamic_head_dim(%q: memref<2x64x?xf16>, %k: memref<2x64x?xf16>,
                            %v: memref<2x64x?xf16>, %o: memref<2x64x?xf16>) {
  // expected-error @+1 {{the head dims must be static}}
  attn.attention ins(%q, %k, %v : memref<2x64x?xf16>, memref<2x64x?xf16>, memref<2x64x?xf16>)
                 outs(%o : memref<2x64x?xf16>) scale = 0.125
  return
}

// -----

func.func @strided_rows(%q: memref<2x64x64xf16, strided<[8192, 128, 1]>>, %k: memref<2x64x64xf16>,
                        %v: memref<2x64x64xf16>, %o: memref<2x64x64xf16>) {
  // expected-error @+1 {{query, key, value and init must have the identity layout}}
  attn.attention ins(%q, %k, %v : memref<2x64x64xf16, strided<[8192, 128, 1]>>, memref<2x64x64xf16>, memref<2x64x64xf16>)
                 outs(%o : memref<2x64x64xf16>) scale = 0.125
  return
}

// -----

#not_strided = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 2, d2, d1 mod 2)>
func.func @bias_not_strided(%q: memref<2x64x64xf16>, %k: memref<2x64x64xf16>,
                            %v: memref<2x64x64xf16>, %b: memref<2x64x64xf32, #not_strided>,
                            %o: memref<2x64x64xf16>) {
  // expected-error @+1 {{mask and bias must have a strided layout}}
  attn.attention ins(%q, %k, %v : memref<2x64x64xf16>, memref<2x64x64xf16>, memref<2x64x64xf16>)
                 bias(%b : memref<2x64x64xf32, #not_strided>)
                 outs(%o : memref<2x64x64xf16>) scale = 0.125
  return
}
