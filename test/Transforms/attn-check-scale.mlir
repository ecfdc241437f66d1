// RUN: attn-opt %s --canonicalize --attn-check-scale --split-input-file --verify-diagnostics | FileCheck %s

// The usual scale, 1/sqrt(Dqk): nothing to report, IR unchanged.
// CHECK-LABEL: func @correct_scale
// CHECK: attn.attention {{.*}} scale = 1.250000e-01
func.func @correct_scale(%q: tensor<1x8x16x64xf16>, %o: tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16> {
  %0 = attn.attention ins(%q, %q, %q : tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>)
         outs(%o : tensor<1x8x16x64xf16>) scale = 0.125 -> tensor<1x8x16x64xf16>
  return %0 : tensor<1x8x16x64xf16>
}

// -----

// CHECK-LABEL: func @scaled_twice
func.func @scaled_twice(%q: tensor<1x8x16x64xf16>, %o: tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16> {
  // expected-warning @+1 {{suspicious attention scale 0.015625: it equals 1/Dqk = 1/64: 1/sqrt(Dqk) applied twice? (expected 1/sqrt(64) = 0.125)}}
  %0 = attn.attention ins(%q, %q, %q : tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>)
         outs(%o : tensor<1x8x16x64xf16>) scale = 0.015625 -> tensor<1x8x16x64xf16>
  return %0 : tensor<1x8x16x64xf16>
}

// -----

// 1/sqrt(Hq * Dqk) = 1/sqrt(8 * 64).
// CHECK-LABEL: func @model_dim_instead_of_head_dim
func.func @model_dim_instead_of_head_dim(%q: tensor<1x8x16x64xf32>, %o: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-warning @+1 {{suspicious attention scale 0.0441942: it equals 1/sqrt(Hq*Dqk) = 1/sqrt(512): the model dim used instead of the head dim? (expected 1/sqrt(64) = 0.125)}}
  %0 = attn.attention ins(%q, %q, %q : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>)
         outs(%o : tensor<1x8x16x64xf32>) scale = 0.0441941738 -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

// CHECK-LABEL: func @unscaled
func.func @unscaled(%q: tensor<2x16x128xbf16>, %o: tensor<2x16x128xbf16>) -> tensor<2x16x128xbf16> {
  // expected-warning @+1 {{suspicious attention scale 1: scores are not scaled although Dqk = 128 (expected 1/sqrt(128) = 0.0883883)}}
  %0 = attn.attention ins(%q, %q, %q : tensor<2x16x128xbf16>, tensor<2x16x128xbf16>, tensor<2x16x128xbf16>)
         outs(%o : tensor<2x16x128xbf16>) scale = 1.0 -> tensor<2x16x128xbf16>
  return %0 : tensor<2x16x128xbf16>
}

// -----

// With Dqk = 1 no scale is suspicious; with a dynamic Dqk nothing is known.
// CHECK-LABEL: func @nothing_to_compare
func.func @nothing_to_compare(%q: tensor<1x1x4x1xf32>, %o: tensor<1x1x4x1xf32>,
                              %d: tensor<1x1x4x?xf32>, %od: tensor<1x1x4x1xf32>)
    -> (tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>) {
  %0 = attn.attention ins(%q, %q, %q : tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>)
         outs(%o : tensor<1x1x4x1xf32>) scale = 1.0 -> tensor<1x1x4x1xf32>
  %1 = attn.attention ins(%d, %d, %q : tensor<1x1x4x?xf32>, tensor<1x1x4x?xf32>, tensor<1x1x4x1xf32>)
         outs(%od : tensor<1x1x4x1xf32>) scale = 1.0 -> tensor<1x1x4x1xf32>
  return %0, %1 : tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>
}

// -----

// The frontend scaled q by 1/sqrt(d) and the kernel was given 1/sqrt(d) as
// well: after folding, the effective scale is 1/d, and the remark says where
// part of it came from.
// CHECK-LABEL: func @folded_from_q_twice
func.func @folded_from_q_twice(%q: tensor<1x8x16x64xf16>, %o: tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16> {
  %c = arith.constant dense<0.125> : tensor<1x8x16x64xf16>
  %qs = arith.mulf %q, %c : tensor<1x8x16x64xf16>
  // expected-remark @+2 {{scale 0.015625 includes factors folded from the inputs (q x 0.125)}}
  // expected-warning @+1 {{suspicious attention scale 0.015625: it equals 1/Dqk = 1/64}}
  %0 = attn.attention ins(%qs, %q, %q : tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>, tensor<1x8x16x64xf16>)
         outs(%o : tensor<1x8x16x64xf16>) scale = 0.125 -> tensor<1x8x16x64xf16>
  return %0 : tensor<1x8x16x64xf16>
}

// -----

// Scaling split between q and k: the sum is right, the remark names both.
// CHECK-LABEL: func @folded_from_q_and_k
func.func @folded_from_q_and_k(%q: tensor<1x8x16x64xf32>, %o: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %c = arith.constant dense<0.353553385> : tensor<1x8x16x64xf32>
  %qs = arith.mulf %q, %c : tensor<1x8x16x64xf32>
  %ks = arith.mulf %q, %c : tensor<1x8x16x64xf32>
  // expected-remark @+1 {{scale 0.125 includes factors folded from the inputs (k x 0.353553, q x 0.353553)}}
  %0 = attn.attention ins(%qs, %ks, %q : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>)
         outs(%o : tensor<1x8x16x64xf32>) scale = 1.0 -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}
