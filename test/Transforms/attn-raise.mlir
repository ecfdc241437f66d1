// RUN: attn-opt %s --attn-raise="report=true" --split-input-file | FileCheck %s

// One case per form --attn-raise accepts. Every case must become a single
// attn.attention with the scale the graph applies, and the unfused ops must
// be gone. (Numerical equivalence: test/Integration/CPU/raise-*.mlir.)

// linalg.generic contractions (4-D), a decomposed generic softmax with the
// max subtraction, scores multiplied by a scalar captured in the body.
// CHECK-LABEL: func @generic_decomposed_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x32x8xf32>, %[[V:.*]]: tensor<2x4x32x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x16x4xf32>
// CHECK: %[[R:.*]] = attn.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x4xf32>) outs(%[[INIT]] : tensor<2x4x16x4xf32>) scale = 0.353553385 -> tensor<2x4x16x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#red = ["parallel", "parallel", "parallel", "parallel", "reduction"]
#par = ["parallel", "parallel", "parallel", "parallel"]
#rowred = ["parallel", "parallel", "parallel", "reduction"]
func.func @generic_decomposed_softmax(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x4xf32>) -> tensor<2x4x16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.353553385 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = #rowred} ins(%x : tensor<2x4x16x32xf32>) outs(%fm : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%x, %max : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = #rowred} ins(%e : tensor<2x4x16x32xf32>) outs(%fz : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%e, %sum : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.divf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x4xf32>) outs(%fo : tensor<2x4x16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x4xf32>
  return %o : tensor<2x4x16x4xf32>
}

// -----

// The same with the reductions' bodies written accumulator first
// (arith.maxnumf %out, %in; arith.addf %out, %in), as some frontends emit
// them.
// CHECK-LABEL: func @reductions_out_first
// CHECK-NOT: linalg.generic
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x4xf32>) outs(%{{.*}} : tensor<2x4x16x4xf32>) scale = 0.353553385 -> tensor<2x4x16x4xf32>
// CHECK-NOT: linalg.generic
#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#red = ["parallel", "parallel", "parallel", "parallel", "reduction"]
#par = ["parallel", "parallel", "parallel", "parallel"]
#rowred = ["parallel", "parallel", "parallel", "reduction"]
func.func @reductions_out_first(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x4xf32>) -> tensor<2x4x16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.353553385 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %er = tensor.empty() : tensor<2x4x16xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = #rowred} ins(%x : tensor<2x4x16x32xf32>) outs(%fm : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maxnumf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%x, %max : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = #rowred} ins(%e : tensor<2x4x16x32xf32>) outs(%fz : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%e, %sum : tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.divf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x4xf32>) outs(%fo : tensor<2x4x16x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x4xf32>
  return %o : tensor<2x4x16x4xf32>
}

// -----

// linalg.batch_matmul with K^T as linalg.transpose, the scores divided by a
// splat constant, linalg.softmax. The transpose is dead afterwards.
// CHECK-LABEL: func @batch_matmul_linalg_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<8x16x64xf32>, %[[K:.*]]: tensor<8x32x64xf32>, %[[V:.*]]: tensor<8x32x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.batch_matmul
// CHECK: attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs(%{{.*}} : tensor<8x16x64xf32>) scale = 1.250000e-01 -> tensor<8x16x64xf32>
// CHECK-NOT: linalg.softmax
func.func @batch_matmul_linalg_softmax(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c8 = arith.constant dense<8.0> : tensor<8x16x32xf32>
  %x = arith.divf %s, %c8 : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The scale as a scalar operand of the elementwise generic (ins of a
// non-tensor value, as some frontends write a broadcast constant).
// CHECK-LABEL: func @scalar_operand_scale
// CHECK: attn.attention {{.*}} scale = 1.250000e-01 -> tensor<8x16x64xf32>
// CHECK-NOT: linalg.generic
func.func @scalar_operand_scale(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.125 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %c : tensor<8x16x32xf32>, f32) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %f: f32, %out: f32):
    %m = arith.mulf %a, %f : f32
    linalg.yield %m : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The divisor as torch-mlir writes sqrt(d): an f64 constant truncated to
// f32 in the body.
// CHECK-LABEL: func @f64_divisor_truncated
// CHECK: attn.attention {{.*}} scale = 1.250000e-01 -> tensor<8x16x64xf32>
// CHECK-NOT: linalg.generic
func.func @f64_divisor_truncated(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c8 = arith.constant 8.0 : f64
    %t = arith.truncf %c8 : f64 to f32
    %d = arith.divf %a, %t : f32
    linalg.yield %d : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A scale computed from constants in the body, each op rounded in its
// result type: -(-0.25) * extf(f16 0.1), where f16's 0.1 is 0.0999755859;
// (2c - c) is c.
// CHECK-LABEL: func @constant_arithmetic_scale
// CHECK: attn.attention {{.*}} scale = 0.0249938965 -> tensor<8x16x64xf32>
// CHECK-NOT: linalg.generic
func.func @constant_arithmetic_scale(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %cn = arith.constant -0.25 : f32
    %n = arith.negf %cn : f32
    %h = arith.constant 0.1 : f16
    %e = arith.extf %h : f16 to f32
    %c = arith.mulf %n, %e : f32
    %c2 = arith.addf %c, %c : f32
    %c1 = arith.subf %c2, %c : f32
    %m = arith.mulf %a, %c1 : f32
    linalg.yield %m : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// No scale at all: scale = 1.0, never an implied 1/sqrt(d).
// CHECK-LABEL: func @no_scale
// CHECK: attn.attention {{.*}} scale = 1.000000e+00 -> tensor<8x16x64xf32>
func.func @no_scale(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// 2-D linalg.matmul (one head): the op gets a unit head dim. q is scaled
// (linalg.mul by a splat), the softmax has no max subtraction and
// multiplies by the reciprocal of the sum.
// CHECK-LABEL: func @matmul_scaled_q_reciprocal
// CHECK-SAME: (%[[Q:.*]]: tensor<16x64xf32>, %[[K:.*]]: tensor<32x64xf32>, %[[V:.*]]: tensor<32x64xf32>)
// CHECK-DAG: %[[Q3:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2]] output_shape [1, 16, 64]
// CHECK-DAG: %[[K3:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2]] output_shape [1, 32, 64]
// CHECK-DAG: %[[V3:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2]] output_shape [1, 32, 64]
// CHECK: %[[R:.*]] = attn.attention ins(%[[Q3]], %[[K3]], %[[V3]] : {{.*}}) outs(%{{.*}} : tensor<1x16x64xf32>) scale = 1.250000e-01 {attn.folded_scale = {q = 1.250000e-01 : f32}} -> tensor<1x16x64xf32>
// CHECK: %[[O:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]] : tensor<1x16x64xf32> into tensor<16x64xf32>
// CHECK: return %[[O]]
func.func @matmul_scaled_q_reciprocal(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant dense<0.125> : tensor<16x64xf32>
  %eq = tensor.empty() : tensor<16x64xf32>
  %qs = linalg.mul ins(%q, %c : tensor<16x64xf32>, tensor<16x64xf32>) outs(%eq : tensor<16x64xf32>) -> tensor<16x64xf32>
  %ekt = tensor.empty() : tensor<64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<32x64xf32>) outs(%ekt : tensor<64x32xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = linalg.matmul ins(%qs, %kt : tensor<16x64xf32>, tensor<64x32xf32>) outs(%fs : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e = linalg.exp ins(%s : tensor<16x32xf32>) outs(%es : tensor<16x32xf32>) -> tensor<16x32xf32>
  %er = tensor.empty() : tensor<16xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%e : tensor<16x32xf32>) outs(%fz : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %rcp = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%sum : tensor<16xf32>) outs(%er : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%e, %rcp : tensor<16x32xf32>, tensor<16xf32>) outs(%es : tensor<16x32xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %m = arith.mulf %a, %r : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %eo = tensor.empty() : tensor<16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x64xf32>) -> tensor<16x64xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x32xf32>, tensor<32x64xf32>) outs(%fo : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %o : tensor<16x64xf32>
}

// -----

// linalg.batch_matmul with a transposing indexing map (no explicit K^T),
// k divided by a constant, softmax from named ops (reduce, broadcast, sub,
// exp, div).
// CHECK-LABEL: func @batch_matmul_maps_scaled_k_named_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<8x16x64xf32>, %[[K:.*]]: tensor<8x32x64xf32>, %[[V:.*]]: tensor<8x32x64xf32>)
// CHECK: attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}} scale = 1.250000e-01 {attn.folded_scale = {k = 1.250000e-01 : f32}}
// CHECK-NOT: linalg.reduce
// CHECK-NOT: linalg.div
func.func @batch_matmul_maps_scaled_k_named_softmax(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c8 = arith.constant dense<8.0> : tensor<8x32x64xf32>
  %ks = arith.divf %k, %c8 : tensor<8x32x64xf32>
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
         ins(%q, %ks : tensor<8x16x64xf32>, tensor<8x32x64xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %er = tensor.empty() : tensor<8x16xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %max = linalg.reduce ins(%s : tensor<8x16x32xf32>) outs(%fm : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %d = linalg.sub ins(%s, %maxb : tensor<8x16x32xf32>, tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %e = linalg.exp ins(%d : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%e : tensor<8x16x32xf32>) outs(%fz : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = linalg.div ins(%e, %sumb : tensor<8x16x32xf32>, tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// q and k both scaled by d^-1/4 (the "sqrt on each" form).
// CHECK-LABEL: func @scaled_q_and_k
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}} scale = 0.124999993 {attn.folded_scale = {k = 0.353553385 : f32, q = 0.353553385 : f32}}
func.func @scaled_q_and_k(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %cq = arith.constant dense<0.353553385> : tensor<8x16x64xf32>
  %ck = arith.constant dense<0.353553385> : tensor<8x32x64xf32>
  %qs = arith.mulf %q, %cq : tensor<8x16x64xf32>
  %ks = arith.mulf %ck, %k : tensor<8x32x64xf32>
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%ks : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%qs, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Five loops of batch: a 5-D linalg.generic contraction gives a rank-5 op.
// CHECK-LABEL: func @generic_five_dims
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x3x4x16x8xf32>, tensor<2x3x4x32x8xf32>, tensor<2x3x4x32x8xf32>) outs(%{{.*}} : tensor<2x3x4x16x8xf32>) scale = 1.000000e+00
func.func @generic_five_dims(%q: tensor<2x3x4x16x8xf32>, %k: tensor<2x3x4x32x8xf32>, %v: tensor<2x3x4x32x8xf32>) -> tensor<2x3x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x3x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x4x16x32xf32>) -> tensor<2x3x4x16x32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b, c, i, j, d) -> (a, b, c, i, d)>, affine_map<(a, b, c, i, j, d) -> (a, b, c, j, d)>, affine_map<(a, b, c, i, j, d) -> (a, b, c, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x3x4x16x8xf32>, tensor<2x3x4x32x8xf32>) outs(%fs : tensor<2x3x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4x16x32xf32>
  %p = linalg.softmax dimension(4) ins(%s : tensor<2x3x4x16x32xf32>) outs(%es : tensor<2x3x4x16x32xf32>) -> tensor<2x3x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x3x4x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x4x16x8xf32>) -> tensor<2x3x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(a, b, c, i, e, j) -> (a, b, c, i, j)>, affine_map<(a, b, c, i, e, j) -> (a, b, c, j, e)>, affine_map<(a, b, c, i, e, j) -> (a, b, c, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x3x4x16x32xf32>, tensor<2x3x4x32x8xf32>) outs(%fo : tensor<2x3x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4x16x8xf32>
  return %o : tensor<2x3x4x16x8xf32>
}

// -----

// An additive f16 bias of another type than q, broadcast with
// linalg.broadcast and added with arith on tensors: it becomes `bias`,
// reshaped (not copied) to broadcast against [B, H, Lq, Lk].
// CHECK-LABEL: func @additive_f16_bias
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x32xf16>
// CHECK: %[[B:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [2, 1, 1, 32]
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) bias(%[[B]] : tensor<2x1x1x32xf16>) outs({{.*}}) scale = 1.250000e-01 ->
// CHECK-NOT: linalg.broadcast
func.func @additive_f16_bias(%q: tensor<2x4x16x64xf16>, %k: tensor<2x4x32x64xf16>, %v: tensor<2x4x32x64xf16>, %m: tensor<2x32xf16>) -> tensor<2x4x16x64xf16> {
  %zero = arith.constant 0.0 : f16
  %es = tensor.empty() : tensor<2x4x16x32xf16>
  %fs = linalg.fill ins(%zero : f16) outs(%es : tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x64xf16>, tensor<2x4x32x64xf16>) outs(%fs : tensor<2x4x16x32xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x16x32xf16>
  %c = arith.constant dense<0.125> : tensor<2x4x16x32xf16>
  %ss = arith.mulf %s, %c : tensor<2x4x16x32xf16>
  %mb = linalg.broadcast ins(%m : tensor<2x32xf16>) outs(%es : tensor<2x4x16x32xf16>) dimensions = [1, 2]
  %x = arith.addf %ss, %mb : tensor<2x4x16x32xf16>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf16>) outs(%es : tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16>
  %eo = tensor.empty() : tensor<2x4x16x64xf16>
  %fo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x4x16x64xf16>) -> tensor<2x4x16x64xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x32xf16>, tensor<2x4x32x64xf16>) outs(%fo : tensor<2x4x16x64xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p2 = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p2 : f16
    linalg.yield %r : f16
  } -> tensor<2x4x16x64xf16>
  return %o : tensor<2x4x16x64xf16>
}

// -----

#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#red = ["parallel", "parallel", "parallel", "parallel", "reduction"]
#par = ["parallel", "parallel", "parallel", "parallel"]
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>

// A boolean mask applied with arith.select against -inf in a generic: the
// mask tensor itself becomes `mask`.
// CHECK-LABEL: func @bool_mask_select
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x1x1x32xi1>
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) mask(%[[M]] : tensor<2x1x1x32xi1>) outs({{.*}}) scale = 1.250000e-01 ->
func.func @bool_mask_select(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x64xf32>, %m: tensor<2x1x1x32xi1>) -> tensor<2x4x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.125 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (b, 0, 0, j)>, #id], iterator_types = #par} ins(%s, %m : tensor<2x4x16x32xf32>, tensor<2x1x1x32xi1>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %sc = arith.mulf %a, %c : f32
    %r = arith.select %keep, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x64xf32>) outs(%fo : tensor<2x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x64xf32>
  return %o : tensor<2x4x16x64xf32>
}

// masked_fill(mask == 0, -1e9) followed by the scaling: the visible keys
// are computed into a boolean mask by a new generic; the fill scaled by
// 1/8 is still far below the scores.
// CHECK-LABEL: func @masked_fill_eq_zero
// CHECK: %[[VIS:.*]] = linalg.generic
// CHECK: arith.cmpi eq
// CHECK: arith.xori
// CHECK: -> tensor<2x1x1x32xi1>
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) mask(%[[VIS]] : tensor<2x1x1x32xi1>) outs({{.*}}) scale = 1.250000e-01 ->
func.func @masked_fill_eq_zero(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x64xf32>, %m: tensor<2x32xi32>) -> tensor<2x4x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (b, j)>, #id], iterator_types = #par} ins(%s, %m : tensor<2x4x16x32xf32>, tensor<2x32xi32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %flag: i32, %o: f32):
    %z = arith.constant 0 : i32
    %fill = arith.constant -1.0e+09 : f32
    %c = arith.constant 0.125 : f32
    %hide = arith.cmpi eq, %flag, %z : i32
    %w = arith.select %hide, %fill, %a : f32
    %r = arith.mulf %w, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x64xf32>) outs(%fo : tensor<2x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x64xf32>
  return %o : tensor<2x4x16x64xf32>
}

// The (1 - m) * -10000 form: an additive float term, kept as `bias`.
// CHECK-LABEL: func @one_minus_mask
// CHECK: %[[AM:.*]] = linalg.generic
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) bias(%{{.*}} : tensor<2x1x1x32xf32>) outs({{.*}}) scale = 1.250000e-01 ->
func.func @one_minus_mask(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x64xf32>, %m: tensor<2x32xf32>) -> tensor<2x4x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %em = tensor.empty() : tensor<2x32xf32>
  %am = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x32xf32>) outs(%em : tensor<2x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %big = arith.constant -10000.0 : f32
    %d = arith.subf %one, %a : f32
    %r = arith.mulf %d, %big : f32
    linalg.yield %r : f32
  } -> tensor<2x32xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (b, j)>, #id], iterator_types = #par} ins(%s, %am : tensor<2x4x16x32xf32>, tensor<2x32xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c = arith.constant 8.0 : f32
    %sc = arith.divf %a, %c : f32
    %r = arith.addf %sc, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x64xf32>) outs(%fo : tensor<2x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x64xf32>
  return %o : tensor<2x4x16x64xf32>
}

// Causal masks from index compares. j <= i is top_left; with Lq = 16 and
// Lk = 32, j < i + 17 (that is j <= i + Lk - Lq) is bottom_right; the mask
// and its generic disappear.
// CHECK-LABEL: func @causal_iota
// CHECK-NOT: linalg.index
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) outs({{.*}}) scale = 1.250000e-01 causal = top_left ->
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) outs({{.*}}) scale = 1.250000e-01 causal = bottom_right ->
func.func @causal_iota(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x4x32x64xf32>) -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %s2 = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %c = arith.constant 0.125 : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %vis = arith.cmpi ule, %j, %i : index
    %sc = arith.mulf %a, %c : f32
    %r = arith.select %vis, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s2 : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %c = arith.constant 0.125 : f32
    %c17 = arith.constant 17 : i64
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %lim = arith.addi %ii, %c17 : i64
    %hide = arith.cmpi sge, %ji, %lim : i64
    %sc = arith.mulf %a, %c : f32
    %r = arith.select %hide, %ninf, %sc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %p2 = linalg.softmax dimension(3) ins(%x2 : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %eo = tensor.empty() : tensor<2x4x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x64xf32>) outs(%fo : tensor<2x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pp = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pp : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x64xf32>
  %o2 = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p2, %v : tensor<2x4x16x32xf32>, tensor<2x4x32x64xf32>) outs(%fo : tensor<2x4x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pp = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pp : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x64xf32>
  return %o, %o2 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
}

// A constant triangular additive mask (0 on and below the diagonal, -inf
// above) is causal top_left; the constant is dropped.
// CHECK-LABEL: func @causal_constant_triangle
// CHECK-NOT: arith.constant dense
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) outs({{.*}}) scale = 1.000000e+00 causal = top_left ->
func.func @causal_constant_triangle(%q: tensor<2x4x4x64xf32>, %k: tensor<2x4x4x64xf32>, %v: tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %tri = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %es = tensor.empty() : tensor<2x4x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x4x64xf32>, tensor<2x4x4x64xf32>) outs(%fs : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x4xf32>
  %x = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (i, j)>, #id], iterator_types = #par} ins(%s, %tri : tensor<2x4x4x4xf32>, tensor<4x4xf32>) outs(%es : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %r = arith.addf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x4x4xf32>) outs(%es : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x4x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x4x64xf32>) -> tensor<2x4x4x64xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x4x4xf32>, tensor<2x4x4x64xf32>) outs(%fo : tensor<2x4x4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4x64xf32>
  return %o : tensor<2x4x4x64xf32>
}

// f16 scores upcast to f32 around the softmax and truncated back: an f16
// op (which accumulates in f32 itself).
// CHECK-LABEL: func @f16_upcast_softmax
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x16x64xf16>, tensor<2x4x32x64xf16>, tensor<2x4x32x64xf16>) outs(%{{.*}} : tensor<2x4x16x64xf16>) scale = 1.250000e-01 ->
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
func.func @f16_upcast_softmax(%q: tensor<2x4x16x64xf16>, %k: tensor<2x4x32x64xf16>, %v: tensor<2x4x32x64xf16>) -> tensor<2x4x16x64xf16> {
  %zero = arith.constant 0.0 : f16
  %es = tensor.empty() : tensor<2x4x16x32xf16>
  %es32 = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f16) outs(%es : tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %k : tensor<2x4x16x64xf16>, tensor<2x4x32x64xf16>) outs(%fs : tensor<2x4x16x32xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x16x32xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<2x4x16x32xf16>) outs(%es32 : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f16, %o: f32):
    %w = arith.extf %a : f16 to f32
    %c = arith.constant 0.125 : f32
    %r = arith.mulf %w, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p32 = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es32 : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %p = arith.truncf %p32 : tensor<2x4x16x32xf32> to tensor<2x4x16x32xf16>
  %eo = tensor.empty() : tensor<2x4x16x64xf16>
  %fo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x4x16x64xf16>) -> tensor<2x4x16x64xf16>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x4x16x32xf16>, tensor<2x4x32x64xf16>) outs(%fo : tensor<2x4x16x64xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p2 = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %p2 : f16
    linalg.yield %r : f16
  } -> tensor<2x4x16x64xf16>
  return %o : tensor<2x4x16x64xf16>
}

// -----

#qk = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>]
#pv = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>]
#red = ["parallel", "parallel", "parallel", "parallel", "reduction"]

// q/k/v in [B, L, H, D] permuted to [B, H, L, D]: the op reads the
// permuted tensors and its result is permuted back to [B, L, H, D].
// CHECK-LABEL: func @blhd_layout
// CHECK: %[[QT:.*]] = linalg.transpose ins(%arg0
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1
// CHECK: %[[VT:.*]] = linalg.transpose ins(%arg2
// CHECK: %[[R:.*]] = attn.attention ins(%[[QT]], %[[KT]], %[[VT]] : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>)
// CHECK: %[[O:.*]] = linalg.transpose ins(%[[R]] : tensor<2x4x16x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK: return %[[O]]
func.func @blhd_layout(%q: tensor<2x16x4x8xf32>, %k: tensor<2x32x4x8xf32>, %v: tensor<2x32x4x8xf32>) -> tensor<2x16x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<2x4x16x8xf32>
  %ek = tensor.empty() : tensor<2x4x32x8xf32>
  %qt = linalg.transpose ins(%q : tensor<2x16x4x8xf32>) outs(%eq : tensor<2x4x16x8xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x32x4x8xf32>) outs(%ek : tensor<2x4x32x8xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x32x4x8xf32>) outs(%ek : tensor<2x4x32x8xf32>) permutation = [0, 2, 1, 3]
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%qt, %kt : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>) outs(%fs : tensor<2x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eq : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %vt : tensor<2x4x16x32xf32>, tensor<2x4x32x8xf32>) outs(%fo : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  %eout = tensor.empty() : tensor<2x16x4x8xf32>
  %out = linalg.transpose ins(%o : tensor<2x4x16x8xf32>) outs(%eout : tensor<2x16x4x8xf32>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x16x4x8xf32>
}

// K/V repeated across head groups (repeat_interleave: broadcast along a new
// dim after the kv head, then collapse) is grouped-query attention with
// Hkv = 2 < Hq = 8; the repeats disappear.
// CHECK-LABEL: func @gqa_repeat_interleave
// CHECK-NOT: linalg.broadcast
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16x8xf32>, tensor<2x2x32x8xf32>, tensor<2x2x32x8xf32>)
func.func @gqa_repeat_interleave(%q: tensor<2x8x16x8xf32>, %k: tensor<2x2x32x8xf32>, %v: tensor<2x2x32x8xf32>) -> tensor<2x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<2x2x4x32x8xf32>
  %kb = linalg.broadcast ins(%k : tensor<2x2x32x8xf32>) outs(%e5 : tensor<2x2x4x32x8xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x4x32x8xf32> into tensor<2x8x32x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<2x2x32x8xf32>) outs(%e5 : tensor<2x2x4x32x8xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x4x32x8xf32> into tensor<2x8x32x8xf32>
  %es = tensor.empty() : tensor<2x8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %kr : tensor<2x8x16x8xf32>, tensor<2x8x32x8xf32>) outs(%fs : tensor<2x8x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x8x16x32xf32>) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %eo = tensor.empty() : tensor<2x8x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16x8xf32>) -> tensor<2x8x16x8xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %vr : tensor<2x8x16x32xf32>, tensor<2x8x32x8xf32>) outs(%fo : tensor<2x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x8xf32>
  return %o : tensor<2x8x16x8xf32>
}

// One K/V for all heads (multi-query): Hkv = 1.
// CHECK-LABEL: func @mqa_broadcast
// CHECK-DAG: %[[K:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 32, 8]
// CHECK-DAG: %[[V:.*]] = tensor.expand_shape %arg2 {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 32, 8]
// CHECK: attn.attention ins(%arg0, %[[K]], %[[V]] : tensor<2x8x16x8xf32>, tensor<2x1x32x8xf32>, tensor<2x1x32x8xf32>)
func.func @mqa_broadcast(%q: tensor<2x8x16x8xf32>, %k: tensor<2x32x8xf32>, %v: tensor<2x32x8xf32>) -> tensor<2x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x8x32x8xf32>
  %kr = linalg.broadcast ins(%k : tensor<2x32x8xf32>) outs(%e4 : tensor<2x8x32x8xf32>) dimensions = [1]
  %vr = linalg.broadcast ins(%v : tensor<2x32x8xf32>) outs(%e4 : tensor<2x8x32x8xf32>) dimensions = [1]
  %es = tensor.empty() : tensor<2x8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%q, %kr : tensor<2x8x16x8xf32>, tensor<2x8x32x8xf32>) outs(%fs : tensor<2x8x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x8x16x32xf32>) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %eo = tensor.empty() : tensor<2x8x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16x8xf32>) -> tensor<2x8x16x8xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %vr : tensor<2x8x16x32xf32>, tensor<2x8x32x8xf32>) outs(%fo : tensor<2x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x8xf32>
  return %o : tensor<2x8x16x8xf32>
}

// One q for the whole batch (Perceiver-style latent queries): the op has no
// broadcast q, so q is broadcast along the batch, placed as the scores have
// it, so that K, V and the result are used as they are, not transposed.
// CHECK-LABEL: func @latent_queries
// CHECK-SAME: (%[[Q:.*]]: tensor<8x16x8xf32>, %[[K:.*]]: tensor<2x8x32x8xf32>, %[[V:.*]]: tensor<2x8x32x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[QB:.*]] = linalg.broadcast ins(%[[Q]] : tensor<8x16x8xf32>) outs(%{{.*}} : tensor<2x8x16x8xf32>) dimensions = [0]
// CHECK-NOT: linalg.transpose
// CHECK: %[[O:.*]] = attn.attention ins(%[[QB]], %[[K]], %[[V]] : tensor<2x8x16x8xf32>, tensor<2x8x32x8xf32>, tensor<2x8x32x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[O]]
func.func @latent_queries(%q: tensor<8x16x8xf32>, %k: tensor<2x8x32x8xf32>, %v: tensor<2x8x32x8xf32>) -> tensor<2x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<2x8x16x8xf32>
  %qb = linalg.broadcast ins(%q : tensor<8x16x8xf32>) outs(%eq : tensor<2x8x16x8xf32>) dimensions = [0]
  %es = tensor.empty() : tensor<2x8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %s = linalg.generic {indexing_maps = #qk, iterator_types = #red} ins(%qb, %k : tensor<2x8x16x8xf32>, tensor<2x8x32x8xf32>) outs(%fs : tensor<2x8x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x8x16x32xf32>) outs(%es : tensor<2x8x16x32xf32>) -> tensor<2x8x16x32xf32>
  %eo = tensor.empty() : tensor<2x8x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16x8xf32>) -> tensor<2x8x16x8xf32>
  %o = linalg.generic {indexing_maps = #pv, iterator_types = #red} ins(%p, %v : tensor<2x8x16x32xf32>, tensor<2x8x32x8xf32>) outs(%fo : tensor<2x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p2 = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p2 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x16x8xf32>
  return %o : tensor<2x8x16x8xf32>
}

// Heads folded into the batch of 3-D batch matmuls with collapse_shape, the
// softmax in 4-D between expand_shape and collapse_shape: the op works on
// the unfolded [B, H, L, D] tensors.
// CHECK-LABEL: func @folded_heads_3d_bmm
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[R:.*]] = attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>) outs(%{{.*}} : tensor<2x4x16x8xf32>) scale = 0.353553385 ->
// CHECK: return %[[R]]
func.func @folded_heads_3d_bmm(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x8xf32>) -> tensor<2x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x4x32x8xf32> into tensor<8x32x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x32x8xf32> into tensor<8x32x8xf32>
  %es3 = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es3 : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s3 = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>]
          ins(%q3, %k3 : tensor<8x16x8xf32>, tensor<8x32x8xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
  %c = arith.constant dense<0.353553385> : tensor<2x4x16x32xf32>
  %x = arith.mulf %s, %c : tensor<2x4x16x32xf32>
  %es = tensor.empty() : tensor<2x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<2x4x16x32xf32>) outs(%es : tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x4x16x32xf32> into tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x16x32xf32>, tensor<8x32x8xf32>) outs(%fo : tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 16, 8] : tensor<8x16x8xf32> into tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// K already transposed by the producer: the op needs [.., Lk, D], so the
// raise adds the transpose.
// CHECK-LABEL: func @k_pretransposed
// CHECK: %[[K:.*]] = linalg.transpose ins(%arg1 : tensor<8x64x32xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: attn.attention ins(%arg0, %[[K]], %arg2 : tensor<8x16x64xf32>, tensor<8x32x64xf32>, tensor<8x32x64xf32>)
func.func @k_pretransposed(%q: tensor<8x16x64xf32>, %kt: tensor<8x64x32xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// TOSA as a TFLite export has it: heads split from [B, L, H*D] with
// reshape/transpose, tosa.matmul, scale by tosa.mul, an additive mask, the
// softmax as reduce_max/sub/exp/reduce_sum/reciprocal/mul.
// CHECK-LABEL: func @tosa_tflite
// CHECK: %[[Q:.*]] = tosa.transpose
// CHECK: %[[V:.*]] = tosa.transpose
// CHECK: %[[K:.*]] = linalg.transpose
// CHECK: %[[R:.*]] = attn.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<2x2x8x4xf32>, tensor<2x2x12x4xf32>, tensor<2x2x12x2xf32>) bias(%arg3 : tensor<2x1x1x12xf32>) outs(%{{.*}} : tensor<2x2x8x2xf32>) scale = 5.000000e-01 ->
// CHECK-NOT: tosa.matmul
// CHECK-NOT: tosa.exp
func.func @tosa_tflite(%q: tensor<2x8x8xf32>, %k: tensor<2x12x8xf32>, %v: tensor<2x12x4xf32>, %mask: tensor<2x1x1x12xf32>) -> tensor<2x8x4xf32> {
  %s1 = tosa.const_shape {values = dense<[2, 8, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q4 = tosa.reshape %q, %s1 : (tensor<2x8x8xf32>, !tosa.shape<4>) -> tensor<2x8x2x4xf32>
  %qt = tosa.transpose %q4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x8x2x4xf32>) -> tensor<2x2x8x4xf32>
  %s2 = tosa.const_shape {values = dense<[4, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q3 = tosa.reshape %qt, %s2 : (tensor<2x2x8x4xf32>, !tosa.shape<3>) -> tensor<4x8x4xf32>
  %s3 = tosa.const_shape {values = dense<[2, 12, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %k4 = tosa.reshape %k, %s3 : (tensor<2x12x8xf32>, !tosa.shape<4>) -> tensor<2x12x2x4xf32>
  %kt = tosa.transpose %k4 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x12x2x4xf32>) -> tensor<2x2x4x12xf32>
  %s4 = tosa.const_shape {values = dense<[4, 4, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %k3 = tosa.reshape %kt, %s4 : (tensor<2x2x4x12xf32>, !tosa.shape<3>) -> tensor<4x4x12xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q3, %k3, %zp, %zp : (tensor<4x8x4xf32>, tensor<4x4x12xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x12xf32>
  %s5 = tosa.const_shape {values = dense<[2, 2, 8, 12]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s4d = tosa.reshape %s, %s5 : (tensor<4x8x12xf32>, !tosa.shape<4>) -> tensor<2x2x8x12xf32>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s4d, %c, %shift : (tensor<2x2x8x12xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x2x8x12xf32>
  %x = tosa.add %ss, %mask : (tensor<2x2x8x12xf32>, tensor<2x1x1x12xf32>) -> tensor<2x2x8x12xf32>
  %mx = tosa.reduce_max %x {axis = 3 : i32} : (tensor<2x2x8x12xf32>) -> tensor<2x2x8x1xf32>
  %d = tosa.sub %x, %mx : (tensor<2x2x8x12xf32>, tensor<2x2x8x1xf32>) -> tensor<2x2x8x12xf32>
  %e = tosa.exp %d : (tensor<2x2x8x12xf32>) -> tensor<2x2x8x12xf32>
  %sm = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<2x2x8x12xf32>) -> tensor<2x2x8x1xf32>
  %r = tosa.reciprocal %sm : (tensor<2x2x8x1xf32>) -> tensor<2x2x8x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x2x8x12xf32>, tensor<2x2x8x1xf32>, tensor<1xi8>) -> tensor<2x2x8x12xf32>
  %s6 = tosa.const_shape {values = dense<[4, 8, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p3 = tosa.reshape %p, %s6 : (tensor<2x2x8x12xf32>, !tosa.shape<3>) -> tensor<4x8x12xf32>
  %s7 = tosa.const_shape {values = dense<[2, 12, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v4 = tosa.reshape %v, %s7 : (tensor<2x12x4xf32>, !tosa.shape<4>) -> tensor<2x12x2x2xf32>
  %vt = tosa.transpose %v4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x12x2x2xf32>) -> tensor<2x2x12x2xf32>
  %s8 = tosa.const_shape {values = dense<[4, 12, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %v3 = tosa.reshape %vt, %s8 : (tensor<2x2x12x2xf32>, !tosa.shape<3>) -> tensor<4x12x2xf32>
  %o = tosa.matmul %p3, %v3, %zp, %zp : (tensor<4x8x12xf32>, tensor<4x12x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x2xf32>
  %s9 = tosa.const_shape {values = dense<[2, 2, 8, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o4 = tosa.reshape %o, %s9 : (tensor<4x8x2xf32>, !tosa.shape<4>) -> tensor<2x2x8x2xf32>
  %ot = tosa.transpose %o4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x2x8x2xf32>) -> tensor<2x8x2x2xf32>
  %s10 = tosa.const_shape {values = dense<[2, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %out = tosa.reshape %ot, %s10 : (tensor<2x8x2x2xf32>, !tosa.shape<3>) -> tensor<2x8x4xf32>
  return %out : tensor<2x8x4xf32>
}

// TOSA with K/V repeated by tosa.tile (GQA), a causal mask as a constant
// boolean triangle applied with tosa.select against -inf, and the scale
// applied after the select.
// CHECK-LABEL: func @tosa_tile_select_causal
// CHECK-NOT: tosa.tile
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<1x4x2x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) outs(%{{.*}} : tensor<1x4x2x8xf32>) scale = 2.500000e-01 causal = bottom_right ->
func.func @tosa_tile_select_causal(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x2x8xf32> {
  %sh5 = tosa.const_shape {values = dense<[1, 2, 1, 3, 8]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %mult = tosa.const_shape {values = dense<[1, 1, 2, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %sh4 = tosa.const_shape {values = dense<[1, 4, 3, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %k5 = tosa.reshape %k, %sh5 : (tensor<1x2x3x8xf32>, !tosa.shape<5>) -> tensor<1x2x1x3x8xf32>
  %kt5 = tosa.tile %k5, %mult : (tensor<1x2x1x3x8xf32>, !tosa.shape<5>) -> tensor<1x2x2x3x8xf32>
  %kr = tosa.reshape %kt5, %sh4 : (tensor<1x2x2x3x8xf32>, !tosa.shape<4>) -> tensor<1x4x3x8xf32>
  %v5 = tosa.reshape %v, %sh5 : (tensor<1x2x3x8xf32>, !tosa.shape<5>) -> tensor<1x2x1x3x8xf32>
  %vt5 = tosa.tile %v5, %mult : (tensor<1x2x1x3x8xf32>, !tosa.shape<5>) -> tensor<1x2x2x3x8xf32>
  %vr = tosa.reshape %vt5, %sh4 : (tensor<1x2x2x3x8xf32>, !tosa.shape<4>) -> tensor<1x4x3x8xf32>
  %q3s = tosa.const_shape {values = dense<[4, 2, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q3 = tosa.reshape %q, %q3s : (tensor<1x4x2x8xf32>, !tosa.shape<3>) -> tensor<4x2x8xf32>
  %ktr = tosa.transpose %kr {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x3x8xf32>) -> tensor<1x4x8x3xf32>
  %k3s = tosa.const_shape {values = dense<[4, 8, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %k3 = tosa.reshape %ktr, %k3s : (tensor<1x4x8x3xf32>, !tosa.shape<3>) -> tensor<4x8x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.matmul %q3, %k3, %zp, %zp : (tensor<4x2x8xf32>, tensor<4x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x2x3xf32>
  %s4s = tosa.const_shape {values = dense<[1, 4, 2, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s = tosa.reshape %s3, %s4s : (tensor<4x2x3xf32>, !tosa.shape<4>) -> tensor<1x4x2x3xf32>
  %tri = "tosa.const"() <{values = dense<[[[[true, true, false], [true, true, true]]]]> : tensor<1x1x2x3xi1>}> : () -> tensor<1x1x2x3xi1>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %sel = tosa.select %tri, %s, %ninf : (tensor<1x1x2x3xi1>, tensor<1x4x2x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x2x3xf32>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %sel, %c, %shift : (tensor<1x4x2x3xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x2x3xf32>
  %mx = tosa.reduce_max %x {axis = 3 : i32} : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x1xf32>
  %d = tosa.sub %x, %mx : (tensor<1x4x2x3xf32>, tensor<1x4x2x1xf32>) -> tensor<1x4x2x3xf32>
  %e = tosa.exp %d : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %sm = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x1xf32>
  %r = tosa.reciprocal %sm : (tensor<1x4x2x1xf32>) -> tensor<1x4x2x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<1x4x2x3xf32>, tensor<1x4x2x1xf32>, tensor<1xi8>) -> tensor<1x4x2x3xf32>
  %p3s = tosa.const_shape {values = dense<[4, 2, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p3 = tosa.reshape %p, %p3s : (tensor<1x4x2x3xf32>, !tosa.shape<3>) -> tensor<4x2x3xf32>
  %v3s = tosa.const_shape {values = dense<[4, 3, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %v3 = tosa.reshape %vr, %v3s : (tensor<1x4x3x8xf32>, !tosa.shape<3>) -> tensor<4x3x8xf32>
  %o3 = tosa.matmul %p3, %v3, %zp, %zp : (tensor<4x2x3xf32>, tensor<4x3x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x2x8xf32>
  %o4s = tosa.const_shape {values = dense<[1, 4, 2, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o = tosa.reshape %o3, %o4s : (tensor<4x2x8xf32>, !tosa.shape<4>) -> tensor<1x4x2x8xf32>
  return %o : tensor<1x4x2x8xf32>
}

// -----

// TOSA has no float division: torch-mlir lowers `scores / sqrt(d)` to a
// multiplication by tosa.reciprocal of the constant, which is the scale.
// CHECK-LABEL: func @tosa_reciprocal_scale
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x4xf32>) outs(%{{.*}} : tensor<2x5x4xf32>) scale = 2.500000e-01 ->
// CHECK-NOT: tosa.reciprocal
func.func @tosa_reciprocal_scale(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x4xf32>) -> tensor<2x5x4xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x7x8xf32>) -> tensor<2x8x7xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x5x8xf32>, tensor<2x8x7xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x7xf32>
  %d = "tosa.const"() <{values = dense<4.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %inv = tosa.reciprocal %d : (tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %s, %inv, %shift : (tensor<2x5x7xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x5x7xf32>
  %mx = tosa.reduce_max %x {axis = 2 : i32} : (tensor<2x5x7xf32>) -> tensor<2x5x1xf32>
  %c = tosa.sub %x, %mx : (tensor<2x5x7xf32>, tensor<2x5x1xf32>) -> tensor<2x5x7xf32>
  %e = tosa.exp %c : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %sm = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x5x7xf32>) -> tensor<2x5x1xf32>
  %r = tosa.reciprocal %sm : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x5x7xf32>, tensor<2x5x1xf32>, tensor<1xi8>) -> tensor<2x5x7xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x5x7xf32>, tensor<2x7x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x4xf32>
  return %o : tensor<2x5x4xf32>
}

// -----

// One key (Lk = 1): TOSA's reductions keep the reduced axis, so the row
// max has the scores' own shape and the subtraction reads it at the key
// index, which for one key is the same element.
// CHECK-LABEL: func @tosa_one_key
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x5x8xf32>, tensor<2x1x8xf32>, tensor<2x1x4xf32>) outs(%{{.*}} : tensor<2x5x4xf32>) scale = 5.000000e-01 ->
func.func @tosa_one_key(%q: tensor<2x5x8xf32>, %k: tensor<2x1x8xf32>, %v: tensor<2x1x4xf32>) -> tensor<2x5x4xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x1x8xf32>) -> tensor<2x8x1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x5x8xf32>, tensor<2x8x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x1xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %s, %half, %shift : (tensor<2x5x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x5x1xf32>
  %mx = tosa.reduce_max %x {axis = 2 : i32} : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %c = tosa.sub %x, %mx : (tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %e = tosa.exp %c : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %sm = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %r = tosa.reciprocal %sm : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x5x1xf32>, tensor<2x5x1xf32>, tensor<1xi8>) -> tensor<2x5x1xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x5x1xf32>, tensor<2x1x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x4xf32>
  return %o : tensor<2x5x4xf32>
}

// -----

// One query and one key, heads split from [B, L, H*D] (H = 1): which unit
// dim of the scores' reshape to [B, H, Lq, Lk] is the key dim is a guess,
// and the one the subtraction reads need not be the reduced axis. With one
// key, every size-1 reduction is the reduction over it.
// CHECK-LABEL: func @tosa_one_query_one_key
// CHECK: attn.attention ins({{.*}} : tensor<2x1x1x4xf32>, tensor<2x1x1x4xf32>, tensor<2x1x1x3xf32>) bias({{.*}} : tensor<2x1x1x1xf32>) outs({{.*}} : tensor<2x1x1x3xf32>) scale = 5.000000e-01 ->
// CHECK-NOT: tosa.matmul
func.func @tosa_one_query_one_key(%q: tensor<2x1x4xf32>, %k: tensor<2x1x4xf32>, %v: tensor<2x1x3xf32>, %bias: tensor<2x1x1x1xf32>) -> tensor<2x1x3xf32> {
  %t1 = tosa.const_shape {values = dense<[2, 1, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t2 = tosa.reshape %q, %t1 : (tensor<2x1x4xf32>, !tosa.shape<4>) -> tensor<2x1x1x4xf32>
  %t3 = tosa.transpose %t2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x1x1x4xf32>) -> tensor<2x1x1x4xf32>
  %t4 = tosa.const_shape {values = dense<[2, 1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t5 = tosa.reshape %t3, %t4 : (tensor<2x1x1x4xf32>, !tosa.shape<3>) -> tensor<2x1x4xf32>
  %t6 = tosa.const_shape {values = dense<[2, 1, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t7 = tosa.reshape %k, %t6 : (tensor<2x1x4xf32>, !tosa.shape<4>) -> tensor<2x1x1x4xf32>
  %t8 = tosa.transpose %t7 {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x1x1x4xf32>) -> tensor<2x1x4x1xf32>
  %t9 = tosa.const_shape {values = dense<[2, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t10 = tosa.reshape %t8, %t9 : (tensor<2x1x4x1xf32>, !tosa.shape<3>) -> tensor<2x4x1xf32>
  %t11 = tosa.const_shape {values = dense<[2, 1, 1, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t12 = tosa.reshape %v, %t11 : (tensor<2x1x3xf32>, !tosa.shape<4>) -> tensor<2x1x1x3xf32>
  %t13 = tosa.transpose %t12 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %t14 = tosa.const_shape {values = dense<[2, 1, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t15 = tosa.reshape %t13, %t14 : (tensor<2x1x1x3xf32>, !tosa.shape<3>) -> tensor<2x1x3xf32>
  %t16 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t17 = tosa.matmul %t5, %t10, %t16, %t16 : (tensor<2x1x4xf32>, tensor<2x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1x1xf32>
  %t18 = tosa.const_shape {values = dense<[2, 1, 1, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t19 = tosa.reshape %t17, %t18 : (tensor<2x1x1xf32>, !tosa.shape<4>) -> tensor<2x1x1x1xf32>
  %t20 = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %t21 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t22 = tosa.mul %t19, %t20, %t21 : (tensor<2x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1x1xf32>
  %t23 = tosa.add %t22, %bias : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t24 = tosa.reduce_max %t23 {axis = 3 : i32} : (tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t25 = tosa.sub %t23, %t24 : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t26 = tosa.exp %t25 : (tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t27 = tosa.reduce_sum %t26 {axis = 3 : i32} : (tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t28 = tosa.reciprocal %t27 : (tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %t29 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t30 = tosa.mul %t26, %t28, %t29 : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1x1xf32>
  %t31 = tosa.const_shape {values = dense<[2, 1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t32 = tosa.reshape %t30, %t31 : (tensor<2x1x1x1xf32>, !tosa.shape<3>) -> tensor<2x1x1xf32>
  %t33 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t34 = tosa.matmul %t32, %t15, %t33, %t33 : (tensor<2x1x1xf32>, tensor<2x1x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1x3xf32>
  %t35 = tosa.const_shape {values = dense<[2, 1, 1, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t36 = tosa.reshape %t34, %t35 : (tensor<2x1x3xf32>, !tosa.shape<4>) -> tensor<2x1x1x3xf32>
  %t37 = tosa.transpose %t36 {perms = array<i32: 0, 2, 1, 3>} : (tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %t38 = tosa.const_shape {values = dense<[2, 1, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t39 = tosa.reshape %t37, %t38 : (tensor<2x1x1x3xf32>, !tosa.shape<3>) -> tensor<2x1x3xf32>
  return %t39 : tensor<2x1x3xf32>
}

// -----

// A bias broadcast along every dim ([1, 1, 1]) on scores whose first dim
// folds batch and grouped heads: its unit dims are dropped (a 0-d tensor)
// and expanded back for the op's 4-D layout. Folding that expand into the
// next collapse indexed its groups, of which a 0-d expand has none (an
// out-of-bounds read, then heap corruption in release builds).
// CHECK-LABEL: func @tosa_gqa_bias_broadcast_everywhere
// CHECK: %[[B:.*]] = tensor.expand_shape %arg3 {{\[\[}}0, 1], [2], [3]] output_shape [1, 1, 1, 1] : tensor<1x1x1xf32> into tensor<1x1x1x1xf32>
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<1x4x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x2xf32>) bias(%[[B]] : tensor<1x1x1x1xf32>) outs(%{{.*}} : tensor<1x4x3x2xf32>) scale = 5.000000e-01 ->
func.func @tosa_gqa_bias_broadcast_everywhere(%q: tensor<1x4x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x2xf32>, %bias: tensor<1x1x1xf32>) -> tensor<1x4x3x2xf32> {
  %t1 = tosa.const_shape {values = dense<[4, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t2 = tosa.reshape %q, %t1 : (tensor<1x4x3x4xf32>, !tosa.shape<3>) -> tensor<4x3x4xf32>
  %t3 = tosa.const_shape {values = dense<[1, 2, 1, 5, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t4 = tosa.reshape %k, %t3 : (tensor<1x2x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x1x5x4xf32>
  %t5 = tosa.const_shape {values = dense<[1, 1, 2, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t6 = tosa.tile %t4, %t5 : (tensor<1x2x1x5x4xf32>, !tosa.shape<5>) -> tensor<1x2x2x5x4xf32>
  %t7 = tosa.const_shape {values = dense<[1, 4, 5, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t8 = tosa.reshape %t6, %t7 : (tensor<1x2x2x5x4xf32>, !tosa.shape<4>) -> tensor<1x4x5x4xf32>
  %t9 = tosa.transpose %t8 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x5x4xf32>) -> tensor<1x4x4x5xf32>
  %t10 = tosa.const_shape {values = dense<[4, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t11 = tosa.reshape %t9, %t10 : (tensor<1x4x4x5xf32>, !tosa.shape<3>) -> tensor<4x4x5xf32>
  %t12 = tosa.const_shape {values = dense<[1, 2, 1, 5, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t13 = tosa.reshape %v, %t12 : (tensor<1x2x5x2xf32>, !tosa.shape<5>) -> tensor<1x2x1x5x2xf32>
  %t14 = tosa.const_shape {values = dense<[1, 1, 2, 1, 1]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %t15 = tosa.tile %t13, %t14 : (tensor<1x2x1x5x2xf32>, !tosa.shape<5>) -> tensor<1x2x2x5x2xf32>
  %t16 = tosa.const_shape {values = dense<[1, 4, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t17 = tosa.reshape %t15, %t16 : (tensor<1x2x2x5x2xf32>, !tosa.shape<4>) -> tensor<1x4x5x2xf32>
  %t18 = tosa.const_shape {values = dense<[4, 5, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t19 = tosa.reshape %t17, %t18 : (tensor<1x4x5x2xf32>, !tosa.shape<3>) -> tensor<4x5x2xf32>
  %t20 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t21 = tosa.matmul %t2, %t11, %t20, %t20 : (tensor<4x3x4xf32>, tensor<4x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3x5xf32>
  %t22 = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %t23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t24 = tosa.mul %t21, %t22, %t23 : (tensor<4x3x5xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x3x5xf32>
  %t25 = tosa.add %t24, %bias : (tensor<4x3x5xf32>, tensor<1x1x1xf32>) -> tensor<4x3x5xf32>
  %t26 = tosa.reduce_max %t25 {axis = 2 : i32} : (tensor<4x3x5xf32>) -> tensor<4x3x1xf32>
  %t27 = tosa.sub %t25, %t26 : (tensor<4x3x5xf32>, tensor<4x3x1xf32>) -> tensor<4x3x5xf32>
  %t28 = tosa.exp %t27 : (tensor<4x3x5xf32>) -> tensor<4x3x5xf32>
  %t29 = tosa.reduce_sum %t28 {axis = 2 : i32} : (tensor<4x3x5xf32>) -> tensor<4x3x1xf32>
  %t30 = tosa.reciprocal %t29 : (tensor<4x3x1xf32>) -> tensor<4x3x1xf32>
  %t31 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t32 = tosa.mul %t28, %t30, %t31 : (tensor<4x3x5xf32>, tensor<4x3x1xf32>, tensor<1xi8>) -> tensor<4x3x5xf32>
  %t33 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t34 = tosa.matmul %t32, %t19, %t33, %t33 : (tensor<4x3x5xf32>, tensor<4x5x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3x2xf32>
  %t35 = tosa.const_shape {values = dense<[1, 4, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t36 = tosa.reshape %t34, %t35 : (tensor<4x3x2xf32>, !tosa.shape<4>) -> tensor<1x4x3x2xf32>
  return %t36 : tensor<1x4x3x2xf32>
}

// -----

// A causal diagonal that is neither alignment (keys strictly before the
// query: j < i) is top_left with an explicit causal_offset.
// CHECK-LABEL: func @causal_strictly_lower
// CHECK: %[[OFF:.*]] = arith.constant -1 : index
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : {{.*}}) outs({{.*}}) scale = 1.000000e+00 causal = top_left causal_offset(%[[OFF]]) ->
func.func @causal_strictly_lower(%q: tensor<8x16x64xf32>, %k: tensor<8x16x64xf32>, %v: tensor<8x16x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x64xf32>) outs(%ekt : tensor<8x64x16xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x16xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x16xf32>) outs(%fs : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x16xf32>) outs(%es : tensor<8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %vis = arith.cmpi slt, %j, %i : index
    %r = arith.select %vis, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x16xf32>) outs(%es : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// linalg.matmul with a transposing indexing map for K, and linalg.contract
// for p . v.
// CHECK-LABEL: func @matmul_map_and_contract
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x16x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) outs({{.*}}) scale = 1.000000e+00 ->
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.contract
func.func @matmul_map_and_contract(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>]
         ins(%q, %k : tensor<16x64xf32>, tensor<32x64xf32>) outs(%fs : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x32xf32>) outs(%es : tensor<16x32xf32>) -> tensor<16x32xf32>
  %eo = tensor.empty() : tensor<16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x64xf32>) -> tensor<16x64xf32>
  %o = linalg.contract indexing_maps = [affine_map<(i, e, j) -> (i, j)>, affine_map<(i, e, j) -> (j, e)>, affine_map<(i, e, j) -> (i, e)>]
         ins(%p, %v : tensor<16x32xf32>, tensor<32x64xf32>) outs(%fo : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %o : tensor<16x64xf32>
}

// -----

// Negated scores (arith.negf): a negative scale, applied once.
// CHECK-LABEL: func @negated_scores
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<8x16x64xf32>, tensor<8x32x64xf32>, tensor<8x32x64xf32>) outs(%{{.*}} : tensor<8x16x64xf32>) scale = -1.250000e-01 ->
// CHECK-NOT: arith.negf
func.func @negated_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<8.0> : tensor<8x16x32xf32>
  %y = arith.divf %s, %c : tensor<8x16x32xf32>
  %x = arith.negf %y : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A causal buffer of ones and zeros turned into a penalty, (1 - tril) *
// -10000 (BERT-era extended attention masks): evaluated point by point, a
// top-left causal mask, with no bias left.
// CHECK-LABEL: func @hf_causal_buffer
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xf32>) scale = 2.500000e-01 causal = top_left ->
// CHECK-NOT: linalg.generic
func.func @hf_causal_buffer(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x16xf32>) outs(%ekt : tensor<2x16x8xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%fs : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %tri = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %tri : tensor<2x8x8xf32>, tensor<8x8xf32>) outs(%es : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %one = arith.constant 1.0 : f32
    %big = arith.constant -10000.0 : f32
    %sc = arith.mulf %a, %c : f32
    %inv = arith.subf %one, %t : f32
    %pen = arith.mulf %inv, %big : f32
    %r = arith.addf %sc, %pen : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%fo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// Masks are evaluated point by point with each op's own semantics (the
// next four cases). sitofp reads i1 true as -1: sitofp(j > i) < 0 hides
// the future keys (read as 1 it would hide none).
// CHECK-LABEL: func @sitofp_true_is_minus_one
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xf32>) scale = 2.500000e-01 causal = top_left ->
// CHECK-NOT: linalg.generic
func.func @sitofp_true_is_minus_one(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x16xf32>) outs(%ekt : tensor<2x16x8xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%fs : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %sc = arith.mulf %a, %c : f32
    %f = arith.sitofp %future : i1 to f32
    %zf = arith.constant 0.0 : f32
    %hide = arith.cmpf olt, %f, %zf : f32
    %r = arith.select %hide, %ninf, %sc : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%fo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// sitofp(j > i) * 10000 is -10000 at the future keys: a causal penalty,
// with no bias left.
// CHECK-LABEL: func @sitofp_penalty
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xf32>) scale = 2.500000e-01 causal = top_left ->
// CHECK-NOT: linalg.generic
func.func @sitofp_penalty(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x16xf32>) outs(%ekt : tensor<2x16x8xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%fs : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %sc = arith.mulf %a, %c : f32
    %f = arith.sitofp %future : i1 to f32
    %big = arith.constant 10000.0 : f32
    %t = arith.mulf %f, %big : f32
    %r = arith.addf %sc, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%fo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// index_cast sign-extends: i1 true becomes -1.
// CHECK-LABEL: func @index_cast_i1_is_signed
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xf32>) scale = 2.500000e-01 causal = top_left ->
// CHECK-NOT: linalg.generic
func.func @index_cast_i1_is_signed(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x16xf32>) outs(%ekt : tensor<2x16x8xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%fs : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %sc = arith.mulf %a, %c : f32
    %fi = arith.index_cast %future : i1 to index
    %c0 = arith.constant 0 : index
    %hide = arith.cmpi slt, %fi, %c0 : index
    %r = arith.select %hide, %ninf, %sc : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%fo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

// addi on i1 wraps: (j > i) + true is j <= i.
// CHECK-LABEL: func @i1_add_wraps
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xf32>) scale = 2.500000e-01 causal = top_left ->
// CHECK-NOT: linalg.generic
func.func @i1_add_wraps(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x16xf32>) outs(%ekt : tensor<2x16x8xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x8x8xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%fs : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %sc = arith.mulf %a, %c : f32
    %true = arith.constant true
    %vis = arith.addi %future, %true : i1
    %r = arith.select %vis, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x8x8xf32>) outs(%es : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>) outs(%fo : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}
