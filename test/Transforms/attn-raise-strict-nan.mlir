// RUN: attn-opt %s --attn-raise="report=true strict-nan=true" --split-input-file --verify-diagnostics | FileCheck %s

// With strict-nan=true, --attn-raise refuses wherever a row of the scores
// could be fully masked: the unfused softmax gives NaN (or, for a finite
// fill, the mean of the values) there, the op gives 0.

// A boolean mask only known at run time may hide a whole row.
// CHECK-LABEL: func @runtime_bool_mask
// CHECK-NOT: attn.attention
// CHECK: return
func.func @runtime_bool_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x4xi1>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x4xf32>, tensor<2x4xi1>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: the mask is not a compile-time constant, so a row could be fully masked}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Causal top_left: key 0 is visible to every query.
// CHECK-LABEL: func @causal_top_left
// CHECK: attn.attention {{.*}} causal = top_left
func.func @causal_top_left(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %off = arith.constant 0 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %lim = arith.addi %i, %off : index
    %vis = arith.cmpi sle, %j, %lim : index
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Causal bottom_right with Lk >= Lq: the last key is visible to every query.
// CHECK-LABEL: func @causal_bottom_right_lk_ge_lq
// CHECK: attn.attention {{.*}} causal = bottom_right
func.func @causal_bottom_right_lk_ge_lq(%q: tensor<2x2x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x2x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x2x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x2x4xf32>) outs(%es : tensor<2x2x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %off = arith.constant 2 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %lim = arith.addi %i, %off : index
    %vis = arith.cmpi sle, %j, %lim : index
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x2x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x2x4xf32>) outs(%es : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %eo = tensor.empty() : tensor<2x2x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x2x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  return %o : tensor<2x2x8xf32>
}

// -----

// Causal bottom_right with Lq > Lk: the first rows see no key.
// CHECK-LABEL: func @causal_bottom_right_lq_gt_lk
// CHECK-NOT: attn.attention
// CHECK: return
func.func @causal_bottom_right_lq_gt_lk(%q: tensor<2x4x8xf32>, %k: tensor<2x2x8xf32>, %v: tensor<2x2x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x2xf32>
  %kt = linalg.transpose ins(%k : tensor<2x2x8xf32>) outs(%ekt : tensor<2x8x2xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x2xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x2xf32>) outs(%fs : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x2xf32>) outs(%es : tensor<2x4x2xf32>) {
  ^bb0(%a: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %off = arith.constant 2 : index
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %lim = arith.subi %i, %off : index
    %vis = arith.cmpi sle, %j, %lim : index
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x2xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x2xf32>) outs(%es : tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: with bottom_right causality and Lq > Lk the first rows see no key}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x2xf32>, tensor<2x2x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A constant mask with a visible key in every row.
// CHECK-LABEL: func @constant_mask_every_row_visible
// CHECK: arith.constant dense
// CHECK: attn.attention {{.*}} mask(
func.func @constant_mask_every_row_visible(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %m = arith.constant dense<[[true, false, false, true], [false, true, false, false], [true, true, true, true], [false, false, false, true]]> : tensor<4x4xi1>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x4xf32>, tensor<4x4xi1>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A constant mask that hides all of row 1.
// CHECK-LABEL: func @constant_mask_hidden_row
// CHECK-NOT: attn.attention
// CHECK: return
func.func @constant_mask_hidden_row(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %m = arith.constant dense<[[true, false, false, true], [false, false, false, false], [true, true, true, true], [false, false, false, true]]> : tensor<4x4xi1>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x4xf32>, tensor<4x4xi1>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: the mask hides every key of some row}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A float bias only known at run time may be -inf.
// CHECK-LABEL: func @runtime_float_bias
// CHECK-NOT: attn.attention
// CHECK: return
func.func @runtime_float_bias(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<2x4xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: an additive term may be -inf, so a row could be fully masked}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// (1 - m) * -10000 from a boolean m is finite: no row can be fully masked.
// CHECK-LABEL: func @finite_bias_from_bool
// CHECK: attn.attention {{.*}} bias(
func.func @finite_bias_from_bool(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x4xi1>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x4xf32>, tensor<2x4xi1>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %one = arith.constant 1.0 : f32
    %big = arith.constant -10000.0 : f32
    %f = arith.uitofp %keep : i1 to f32
    %d = arith.subf %one, %f : f32
    %b = arith.mulf %d, %big : f32
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A causal diagonal below the main one: row 0 sees no key.
// CHECK-LABEL: func @causal_strictly_lower
// CHECK-NOT: attn.attention
// CHECK: return
func.func @causal_strictly_lower(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ekt : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%fs : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %vis = arith.cmpi slt, %j, %i : index
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%es : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: with a causal diagonal below the main one the first rows see no key}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Bottom-right causal (Lk - Lq = 2) and a constant mask that hides keys
// 0 to 2: row 0 sees only those, so it sees none, although the mask alone
// leaves keys 3 to 5 to every row.
// CHECK-LABEL: func @causal_bottom_right_and_mask_hidden_row
// CHECK-NOT: attn.attention
// CHECK: return
func.func @causal_bottom_right_and_mask_hidden_row(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%ekt : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%fs : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %m = arith.constant dense<[[false, false, false, true, true, true], [false, false, false, true, true, true], [false, false, false, true, true, true], [false, false, false, true, true, true]]> : tensor<4x6xi1>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x6xf32>, tensor<4x6xi1>) outs(%es : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %two = arith.constant 2 : index
    %lim = arith.addi %i, %two : index
    %causal = arith.cmpi ule, %j, %lim : index
    %vis = arith.andi %causal, %keep : i1
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x6xf32>) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{attn-raise: not raised: strict-nan: the mask hides every key of some row}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Top-left causal and a constant mask that hides keys 1 and 4: key 0
// stays visible to every row.
// CHECK-LABEL: func @causal_top_left_and_mask_every_row_visible
// CHECK: attn.attention {{.*}} mask({{.*}}) outs({{.*}}) scale = 1.000000e+00 causal = top_left
func.func @causal_top_left_and_mask_every_row_visible(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%ekt : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%fs : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %m = arith.constant dense<[[true, false, true, true, false, true], [true, false, true, true, false, true], [true, false, true, true, false, true], [true, false, true, true, false, true]]> : tensor<4x6xi1>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x6xf32>, tensor<4x6xi1>) outs(%es : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %causal = arith.cmpi ule, %j, %i : index
    %vis = arith.andi %causal, %keep : i1
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x6xf32>) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Bottom-right causal (Lk - Lq = 2) and a constant mask that hides key 0:
// row 0 still sees keys 1 and 2 (it would see none with a top-left
// diagonal).
// CHECK-LABEL: func @causal_bottom_right_and_mask_every_row_visible
// CHECK: attn.attention {{.*}} mask({{.*}}) outs({{.*}}) scale = 1.000000e+00 causal = bottom_right
func.func @causal_bottom_right_and_mask_every_row_visible(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%ekt : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x6xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%fs : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %m = arith.constant dense<[[false, true, true, true, true, true], [false, true, true, true, true, true], [false, true, true, true, true, true], [false, true, true, true, true, true]]> : tensor<4x6xi1>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x4x6xf32>, tensor<4x6xi1>) outs(%es : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %two = arith.constant 2 : index
    %lim = arith.addi %i, %two : index
    %causal = arith.cmpi ule, %j, %lim : index
    %vis = arith.andi %causal, %keep : i1
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x6xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x6xf32>) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x8xf32>) outs(%fo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
