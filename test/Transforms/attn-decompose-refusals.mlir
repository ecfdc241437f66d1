// RUN: attn-opt %s --attn-decompose --split-input-file --verify-diagnostics

// Valid ops that --attn-decompose does not handle are refused with the op's
// location and the reason, and left alone.

// Two dynamic head counts may differ: the kv head of a query head is unknown.
func.func @dynamic_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x4x8xf32>,
                         %v: tensor<1x?x4x8xf32>, %o: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{'attn.attention' op cannot be decomposed: the query head group size Hq / Hkv must be static, but Hq is dynamic and Hkv is dynamic}}
  %0 = attn.attention ins(%q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>)
         outs(%o : tensor<1x?x4x8xf32>) scale = 0.35 -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

func.func @dynamic_query_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                               %v: tensor<1x2x4x8xf32>, %o: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  // expected-error @+1 {{'attn.attention' op cannot be decomposed: the query head group size Hq / Hkv must be static, but Hq is dynamic and Hkv is 2}}
  %0 = attn.attention ins(%q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
         outs(%o : tensor<1x?x4x8xf32>) scale = 0.35 -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}
