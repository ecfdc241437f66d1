// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s

// The whole scaling of the scores lives in `scale`: constant scalings of q
// and k fold into it (and are recorded in attn.folded_scale); masks and
// biases that cannot change the result are dropped.

!q = tensor<1x4x16x64xf32>
!kv = tensor<1x4x32x64xf32>

// CHECK-LABEL: func @fold_arith_mulf_q
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x4x16x64xf32>, %[[K:[a-z0-9]+]]: tensor<1x4x32x64xf32>
// CHECK-NOT: arith.mulf
// CHECK: attn.attention ins(%[[Q]], %[[K]], %{{.*}} : {{.*}} scale = 1.250000e-01 {attn.folded_scale = {q = 1.250000e-01 : f32}}
func.func @fold_arith_mulf_q(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<0.125> : !q
  %qs = arith.mulf %q, %c : !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_arith_mulf_constant_lhs
// CHECK: attn.attention {{.*}} scale = 5.000000e-01 {attn.folded_scale = {q = 5.000000e-01 : f32}}
func.func @fold_arith_mulf_constant_lhs(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<0.5> : !q
  %qs = arith.mulf %c, %q : !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_arith_divf_k
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x4x16x64xf32>, %[[K:[a-z0-9]+]]: tensor<1x4x32x64xf32>
// CHECK-NOT: arith.divf
// CHECK: attn.attention ins(%[[Q]], %[[K]], %{{.*}} : {{.*}} scale = 1.250000e-01 {attn.folded_scale = {k = 1.250000e-01 : f32}}
func.func @fold_arith_divf_k(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<8.0> : !kv
  %ks = arith.divf %k, %c : !kv
  %0 = attn.attention ins(%q, %ks, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// sqrt(1/sqrt(64)) on each of q and k multiplies to 1/sqrt(64) in total.
// CHECK-LABEL: func @fold_both_q_and_k
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}} scale = 0.124999993 {attn.folded_scale = {k = 0.353553385 : f32, q = 0.353553385 : f32}}
func.func @fold_both_q_and_k(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %cq = arith.constant dense<0.353553385> : !q
  %ck = arith.constant dense<0.353553385> : !kv
  %qs = arith.mulf %q, %cq : !q
  %ks = arith.mulf %k, %ck : !kv
  %0 = attn.attention ins(%qs, %ks, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// A chain of scalings folds step by step and multiplies into the scale.
// CHECK-LABEL: func @fold_chain
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: attn.attention ins(%arg0, {{.*}} scale = 2.500000e-01 {attn.folded_scale = {q = 5.000000e-01 : f32}}
func.func @fold_chain(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c2 = arith.constant dense<2.0> : !q
  %c4 = arith.constant dense<4.0> : !q
  %q1 = arith.mulf %q, %c2 : !q
  %q2 = arith.divf %q1, %c4 : !q
  %0 = attn.attention ins(%q2, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.5 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_generic_captured_scalar
// CHECK-NOT: linalg.generic
// CHECK: attn.attention ins(%arg0, {{.*}} scale = 1.250000e-01 {attn.folded_scale = {q = 1.250000e-01 : f32}}
func.func @fold_generic_captured_scalar(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant 0.125 : f32
  %e = tensor.empty() : !q
  %qs = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                                         affine_map<(a, b, c, d) -> (a, b, c, d)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : !q) outs(%e : !q) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %c : f32
    linalg.yield %m : f32
  } -> !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_generic_broadcast_splat_input
// CHECK-NOT: linalg.generic
// CHECK: attn.attention ins(%arg0, %arg1, {{.*}} scale = 1.250000e-01 {attn.folded_scale = {k = 1.250000e-01 : f32}}
func.func @fold_generic_broadcast_splat_input(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<8.0> : tensor<1xf32>
  %e = tensor.empty() : !kv
  %ks = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                                         affine_map<(a, b, c, d) -> (0)>,
                                         affine_map<(a, b, c, d) -> (a, b, c, d)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %c : !kv, tensor<1xf32>) outs(%e : !kv) {
  ^bb0(%x: f32, %s: f32, %y: f32):
    %m = arith.divf %x, %s : f32
    linalg.yield %m : f32
  } -> !kv
  %0 = attn.attention ins(%q, %ks, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_linalg_mul_fill
// CHECK-NOT: linalg.mul
// CHECK: attn.attention ins(%arg0, {{.*}} scale = 2.500000e-01 {attn.folded_scale = {q = 2.500000e-01 : f32}}
func.func @fold_linalg_mul_fill(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant 0.25 : f32
  %e = tensor.empty() : !q
  %f = linalg.fill ins(%c : f32) outs(%e : !q) -> !q
  %qs = linalg.mul ins(%q, %f : !q, !q) outs(%e : !q) -> !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_linalg_div
// CHECK-NOT: linalg.div
// CHECK: attn.attention ins(%arg0, {{.*}} scale = 1.250000e-01 {attn.folded_scale = {q = 1.250000e-01 : f32}}
func.func @fold_linalg_div(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<8.0> : !q
  %e = tensor.empty() : !q
  %qs = linalg.div ins(%q, %c : !q, !q) outs(%e : !q) -> !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @fold_tosa_mul_broadcast
// CHECK-NOT: tosa.mul
// CHECK: attn.attention ins(%arg0, {{.*}} scale = 1.250000e-01 {attn.folded_scale = {q = 1.250000e-01 : f32}}
func.func @fold_tosa_mul_broadcast(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %qs = tosa.mul %q, %c, %shift : (!q, tensor<1x1x1x1xf32>, tensor<1xi8>) -> !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// Not a splat: the scaling differs per element and must stay.
// CHECK-LABEL: func @no_fold_non_splat
// CHECK: %[[QS:.*]] = arith.mulf
// CHECK: attn.attention ins(%[[QS]], {{.*}} scale = 1.000000e+00 -> tensor
func.func @no_fold_non_splat(%q: tensor<1x1x2x2xf32>, %o: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %c = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %qs = arith.mulf %q, %c : tensor<1x1x2x2xf32>
  %0 = attn.attention ins(%qs, %q, %q : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
         outs(%o : tensor<1x1x2x2xf32>) scale = 1.0 -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// Not a constant: a runtime scale is not foldable.
// CHECK-LABEL: func @no_fold_runtime_scale
// CHECK: %[[QS:.*]] = arith.mulf
// CHECK: attn.attention ins(%[[QS]], {{.*}} scale = 1.000000e+00 -> tensor
func.func @no_fold_runtime_scale(%q: !q, %s: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %qs = arith.mulf %q, %s : !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// c / q is not a scaling of q.
// CHECK-LABEL: func @no_fold_reciprocal
// CHECK: %[[QS:.*]] = arith.divf
// CHECK: attn.attention ins(%[[QS]], {{.*}} scale = 1.000000e+00 -> tensor
func.func @no_fold_reciprocal(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<8.0> : !q
  %qs = arith.divf %c, %q : !q
  %0 = attn.attention ins(%qs, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// Scaling v scales the output, not the scores: it must stay.
// CHECK-LABEL: func @no_fold_value_scaling
// CHECK: %[[VS:.*]] = arith.mulf
// CHECK: attn.attention ins(%arg0, %arg1, %[[VS]] : {{.*}} scale = 1.000000e+00 -> tensor
func.func @no_fold_value_scaling(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c = arith.constant dense<8.0> : !kv
  %vs = arith.mulf %v, %c : !kv
  %0 = attn.attention ins(%q, %k, %vs : !q, !kv, !kv) outs(%o : !q) scale = 1.0 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @drop_all_true_mask
// CHECK: attn.attention ins({{.*}}) outs({{.*}}) scale = 1.250000e-01 causal = top_left -> tensor
func.func @drop_all_true_mask(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %m = arith.constant dense<true> : tensor<1x1x16x32xi1>
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) mask(%m : tensor<1x1x16x32xi1>)
         outs(%o : !q) scale = 0.125 causal = top_left -> !q
  return %0 : !q
}

// CHECK-LABEL: func @drop_all_zero_float_mask_and_bias
// CHECK: attn.attention ins({{.*}}) outs({{.*}}) scale = 1.250000e-01 -> tensor
func.func @drop_all_zero_float_mask_and_bias(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %m = arith.constant dense<0.0> : tensor<1x1x1x32xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x16x32xf32>
  %b = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32>
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) mask(%m : tensor<1x1x1x32xf16>)
         bias(%b : tensor<1x4x16x32xf32>) outs(%o : !q) scale = 0.125 -> !q
  return %0 : !q
}

// CHECK-LABEL: func @keep_meaningful_mask_and_bias
// CHECK: attn.attention ins({{.*}}) mask(%{{.*}} : tensor<1x1x16x32xi1>) bias(%{{.*}} : tensor<1x1x1x32xf32>) outs
func.func @keep_meaningful_mask_and_bias(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %m = arith.constant dense<false> : tensor<1x1x16x32xi1>
  %b = arith.constant dense<1.0> : tensor<1x1x1x32xf32>
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) mask(%m : tensor<1x1x16x32xi1>)
         bias(%b : tensor<1x1x1x32xf32>) outs(%o : !q) scale = 0.125 -> !q
  return %0 : !q
}

// On memrefs, q may be written between the scaling and the op: no folding.
// CHECK-LABEL: func @no_fold_on_memrefs
// CHECK: attn.attention ins(%arg0, {{.*}} mask(%{{.*}}) {{.*}} scale = 1.250000e-01
func.func @no_fold_on_memrefs(%q: memref<1x1x4x4xf32>, %o: memref<1x1x4x4xf32>) {
  %m = memref.alloc() : memref<1x1x4x4xi1>
  attn.attention ins(%q, %q, %q : memref<1x1x4x4xf32>, memref<1x1x4x4xf32>, memref<1x1x4x4xf32>)
    mask(%m : memref<1x1x4x4xi1>) outs(%o : memref<1x1x4x4xf32>) scale = 0.125
  return
}

// CHECK-LABEL: func @drop_zero_causal_offset
// CHECK: attn.attention {{.*}} scale = 1.250000e-01 causal = top_left -> tensor
func.func @drop_zero_causal_offset(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c0 = arith.constant 0 : index
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_offset(%c0) -> !q
  return %0 : !q
}

// CHECK-LABEL: func @keep_nonzero_causal_offset
// CHECK: attn.attention {{.*}} causal = top_left causal_offset(%{{.*}}) -> tensor
func.func @keep_nonzero_causal_offset(%q: !q, %k: !kv, %v: !kv, %o: !q) -> !q {
  %c3 = arith.constant 3 : index
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_offset(%c3) -> !q
  return %0 : !q
}

// A constant period that leaves every row's query index as it is says
// nothing: top_left with a period of at least Lq (16), bottom_right with Lq
// itself.
// CHECK-LABEL: func @drop_trivial_causal_period
// CHECK: causal = top_left -> tensor
// CHECK: causal = bottom_right -> tensor
func.func @drop_trivial_causal_period(%q: !q, %k: !kv, %v: !kv, %o: !q) -> (!q, !q) {
  %c20 = arith.constant 20 : index
  %c16 = arith.constant 16 : index
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_period(%c20) -> !q
  %1 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = bottom_right causal_period(%c16) -> !q
  return %0, %1 : !q, !q
}

// Periods that group the rows, or move them (an offset), stay, as does one
// known only at run time; a zero offset goes, and then the period that it
// kept.
// CHECK-LABEL: func @keep_causal_period
// CHECK-SAME: %[[C:[a-z0-9]+]]: index, %[[P:[a-z0-9]+]]: index)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK: causal = bottom_right causal_period(%[[C20]]) -> tensor
// CHECK: causal = top_left causal_period(%[[C4]]) -> tensor
// CHECK: causal = top_left causal_period(%[[C16]]) causal_offset(%[[C]]) -> tensor
// CHECK: causal = top_left -> tensor
// CHECK: causal = top_left causal_period(%[[P]]) -> tensor
func.func @keep_causal_period(%q: !q, %k: !kv, %v: !kv, %o: !q, %c: index, %p: index) -> (!q, !q, !q, !q, !q) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %0 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = bottom_right causal_period(%c20) -> !q
  %1 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_period(%c4) -> !q
  %2 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_period(%c16) causal_offset(%c) -> !q
  %3 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_period(%c16) causal_offset(%c0) -> !q
  %4 = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%o : !q) scale = 0.125 causal = top_left causal_period(%p) -> !q
  return %0, %1, %2, %3, %4 : !q, !q, !q, !q, !q
}
