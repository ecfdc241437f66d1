// RUN: attn-opt %s --split-input-file --verify-diagnostics
// Every verifier rule of attn.attention, one case each.

// -----

func.func @q_rank(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>, %o: tensor<16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op q must have rank >= 3 ([B..., Hq, Lq, Dqk]), got rank 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) outs(%o : tensor<16x64xf32>) scale = 0.125 -> tensor<16x64xf32>
  return
}

// -----

func.func @k_rank(%q: tensor<1x4x16x64xf32>, %k: tensor<4x32x64xf32>, %v: tensor<1x4x32x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op k has rank 3 but q has rank 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<4x32x64xf32>, tensor<1x4x32x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @q_elt(%q: tensor<1x4x16x64xf64>, %k: tensor<1x4x32x64xf64>, %v: tensor<1x4x32x64xf64>, %o: tensor<1x4x16x64xf64>) {
  // expected-error @+1 {{'attn.attention' op q element type must be f32, f16 or bf16, got 'f64'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf64>, tensor<1x4x32x64xf64>, tensor<1x4x32x64xf64>) outs(%o : tensor<1x4x16x64xf64>) scale = 0.125 -> tensor<1x4x16x64xf64>
  return
}

// -----

func.func @k_elt(%q: tensor<1x4x16x64xf16>, %k: tensor<1x4x32x64xf32>, %v: tensor<1x4x32x64xf16>, %o: tensor<1x4x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op q, k and v must have the same element type, got 'f16', 'f32' and 'f16'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf16>, tensor<1x4x32x64xf32>, tensor<1x4x32x64xf16>) outs(%o : tensor<1x4x16x64xf16>) scale = 0.125 -> tensor<1x4x16x64xf16>
  return
}

// -----

func.func @init_elt(%q: tensor<1x4x16x64xf16>, %k: tensor<1x4x32x64xf16>, %v: tensor<1x4x32x64xf16>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op init element type 'f32' must be v's element type 'f16'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf16>, tensor<1x4x32x64xf16>, tensor<1x4x32x64xf16>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @k_batch(%q: tensor<2x4x16x64xf32>, %k: tensor<3x4x32x64xf32>, %v: tensor<2x4x32x64xf32>, %o: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op k dim 0 (B0) is 3 but q dim 0 is 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x16x64xf32>, tensor<3x4x32x64xf32>, tensor<2x4x32x64xf32>) outs(%o : tensor<2x4x16x64xf32>) scale = 0.125 -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @v_batch(%q: tensor<2x3x4x16x64xf32>, %k: tensor<2x3x4x32x64xf32>, %v: tensor<2x5x4x32x64xf32>, %o: tensor<2x3x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op v dim 1 (B1) is 5 but q dim 1 is 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x4x16x64xf32>, tensor<2x3x4x32x64xf32>, tensor<2x5x4x32x64xf32>) outs(%o : tensor<2x3x4x16x64xf32>) scale = 0.125 -> tensor<2x3x4x16x64xf32>
  return
}

// -----

func.func @init_batch(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op init dim 0 (B0) is 1 but q dim 0 is 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>, tensor<2x4x32x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @v_heads(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x32x64xf32>, %v: tensor<1x2x32x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op v dim 1 (Hkv) is 2 but k dim 1 is 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x32x64xf32>, tensor<1x2x32x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @lk(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x512x64xf32>, %v: tensor<1x4x256x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op k dim 2 (Lk) is 512 but v dim 2 is 256}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x512x64xf32>, tensor<1x4x256x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @dqk(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x32xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op k dim 3 (Dqk) is 32 but q dim 3 is 64}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @init_heads(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op init dim 1 (Hq) is 2 but q dim 1 is 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x2x16x64xf32>) scale = 0.125 -> tensor<1x2x16x64xf32>
  return
}

// -----

func.func @init_lq(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x12x64xf32>) {
  // expected-error @+1 {{'attn.attention' op init dim 2 (Lq) is 12 but q dim 2 is 16}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x12x64xf32>) scale = 0.125 -> tensor<1x4x12x64xf32>
  return
}

// -----

func.func @init_dv(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x32xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op init dim 3 (Dv) is 64 but v dim 3 is 32}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x32xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @heads_multiple(%q: tensor<1x6x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x6x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op q dim 1 (Hq) is 6, not a multiple of k dim 1 (Hkv) 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x6x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x6x16x64xf32>) scale = 0.125 -> tensor<1x6x16x64xf32>
  return
}

// -----

func.func @zero_kv_heads(%q: tensor<1x4x16x64xf32>, %k: tensor<1x0x8x64xf32>, %v: tensor<1x0x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op k dim 1 (Hkv) must not be 0}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x0x8x64xf32>, tensor<1x0x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @mask_rank(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %m: tensor<16x8xi1>) {
  // expected-error @+1 {{'attn.attention' op mask has rank 2 but must have the rank of q (4) and broadcast to [B..., Hq, Lq, Lk]}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) mask(%m : tensor<16x8xi1>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @mask_elt(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %m: tensor<1x1x16x8xi8>) {
  // expected-error @+1 {{'attn.attention' op mask element type must be i1, f32, f16 or bf16, got 'i8'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) mask(%m : tensor<1x1x16x8xi8>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @mask_dim(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %m: tensor<1x1x16x7xi1>) {
  // expected-error @+1 {{'attn.attention' op mask dim 3 (Lk) is 7 but must be 1 or 8}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) mask(%m : tensor<1x1x16x7xi1>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @mask_head_dim(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %m: tensor<1x2x16x8xi1>) {
  // expected-error @+1 {{'attn.attention' op mask dim 1 (Hq) is 2 but must be 1 or 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) mask(%m : tensor<1x2x16x8xi1>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @bias_bool(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %b: tensor<1x1x16x8xi1>) {
  // expected-error @+1 {{'attn.attention' op bias element type must be f32, f16 or bf16, got 'i1'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) bias(%b : tensor<1x1x16x8xi1>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @bias_dim(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>, %b: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op bias dim 2 (Lq) is 4 but must be 1 or 16}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) bias(%b : tensor<1x1x4x8xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @bias_batch_dim(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x8x64xf32>, %v: tensor<2x4x8x64xf32>, %o: tensor<2x4x16x64xf32>, %b: tensor<3x1x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op bias dim 0 (B0) is 3 but must be 1 or 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) bias(%b : tensor<3x1x1x8xf32>) outs(%o : tensor<2x4x16x64xf32>) scale = 0.125 -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @scale_inf(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op scale must be finite, got +inf}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0x7F800000 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @scale_nan(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op scale must be finite, got NaN}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0x7FC00000 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @result_type(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op result type 'tensor<1x4x16x32xf32>' must match init type 'tensor<1x4x16x64xf32>'}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x32xf32>
  return
}

// -----

func.func @tensor_no_result(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op on tensors must have exactly one result, got 0}}
  attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125
  return
}

// -----

func.func @mixed_tensor_memref(%q: tensor<1x4x16x64xf32>, %k: memref<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op operands must be all ranked tensors or all memrefs}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, memref<1x4x8x64xf32>, tensor<1x4x8x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @memref_mask_on_tensors(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %m: memref<1x1x16x8xi1>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op operands must be all ranked tensors or all memrefs}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) mask(%m : memref<1x1x16x8xi1>) outs(%o : tensor<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @memref_with_result(%q: memref<1x4x16x64xf32>, %k: memref<1x4x8x64xf32>, %v: memref<1x4x8x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op on memrefs must not have results, got 1}}
  %r = attn.attention ins(%q, %k, %v : memref<1x4x16x64xf32>, memref<1x4x8x64xf32>, memref<1x4x8x64xf32>) outs(%o : memref<1x4x16x64xf32>) scale = 0.125 -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @unranked(%q: tensor<*xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op operand #0 must be ranked tensor or memref, but got 'tensor<*xf32>'}}
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0>, scale = 1.0 : f32}> : (tensor<*xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @missing_scale(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{requires attribute 'scale'}}
  %r = "attn.attention"(%q, %q, %q, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0>}> : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @missing_scale_custom(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{expected 'scale'}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @scale_not_f32(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %r = "attn.attention"(%q, %q, %q, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0>, scale = 1.0 : f64}> : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @bad_causal(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'causal' [top_left, bottom_right]}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal = diagonal -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_offset_bottom_right(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>, %c: index) {
  // expected-error @+1 {{'attn.attention' op causal_offset requires causal = top_left or a causal_period}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal = bottom_right causal_offset(%c) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_offset_not_causal(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>, %c: index) {
  // expected-error @+1 {{'attn.attention' op causal_offset requires causal = top_left or a causal_period}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal_offset(%c) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_period_not_causal(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>, %p: index) {
  // expected-error @+1 {{'attn.attention' op causal_period requires causal}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal_period(%p) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_period_zero(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  %p = arith.constant 0 : index
  // expected-error @+1 {{'attn.attention' op causal_period must be positive and below 2^31, got 0}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal = top_left causal_period(%p) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_period_too_large(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) {
  %p = arith.constant 4294967296 : index
  // expected-error @+1 {{'attn.attention' op causal_period must be positive and below 2^31, got 4294967296}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal = top_left causal_period(%p) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @causal_period_negative_offset(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>, %p: index) {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'attn.attention' op causal_offset must not be negative with a causal_period, got -1}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>) outs(%o : tensor<1x4x16x64xf32>) scale = 1.0 causal = bottom_right causal_period(%p) causal_offset(%c) -> tensor<1x4x16x64xf32>
  return
}
