// RUN: attn-opt %s --attn-raise="report=true" --split-input-file --verify-diagnostics
// RUN: attn-opt %s --split-input-file > %t.before
// RUN: attn-opt %s --attn-raise --split-input-file > %t.after
// RUN: diff %t.before %t.after

// Every refusal of --attn-raise: the graph differs from attention in a way
// attn.attention cannot express, so it is left unchanged (the diff above)
// and a remark at the second matmul names the check that failed.

// The scale is a function argument.
func.func @runtime_scale(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %scale: f32) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scale is not a compile-time constant}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A non-splat constant tensor multiplies the scores.
func.func @per_element_constant_scale(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<[[[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25]]]> : tensor<1x1x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (0, 0, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %c : tensor<8x16x32xf32>, tensor<1x1x32xf32>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %f: f32, %out: f32):
    %m = arith.mulf %a, %f : f32
    linalg.yield %m : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scale varies per element}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Dropout: the probabilities are multiplied by a mask after the softmax.
func.func @dropout(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %keep: tensor<8x16x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p0 = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = arith.mulf %p0, %keep : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the probabilities pass through 'arith.mulf' after the softmax (dropout?)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The probabilities are also returned.
func.func @probabilities_escape(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> (tensor<8x16x64xf32>, tensor<8x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores or probabilities are also used by 'func.return'}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o, %p : tensor<8x16x64xf32>, tensor<8x16x32xf32>
}

// -----

// masked_fill with -100: not effectively -inf for attention scores.
func.func @fill_not_negative_enough(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x32xi1>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<8x16x32xf32>, tensor<8x32xi1>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %fill = arith.constant -100.0 : f32
    %r = arith.select %keep, %a, %fill : f32
    linalg.yield %r : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the mask fill -100 is not effectively -inf (it must reach the softmax at -inf or <= -1000)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// -1e4 is a fine fill, but the scores are then divided by 100.
func.func @fill_scaled_too_small(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x32xi1>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<8x16x32xf32>, tensor<8x32xi1>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %fill = arith.constant -1.0e+04 : f32
    %c = arith.constant 100.0 : f32
    %w = arith.select %keep, %a, %fill : f32
    %r = arith.divf %w, %c : f32
    linalg.yield %r : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the mask fill -100 is not effectively -inf (it must reach the softmax at -inf or <= -1000)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The fill is not a constant.
func.func @runtime_fill(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x32xi1>, %fill: f32) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<8x16x32xf32>, tensor<8x32xi1>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %keep: i1, %out: f32):
    %r = arith.select %keep, %a, %fill : f32
    linalg.yield %r : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the mask fill is not a compile-time constant}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A runtime bias added after a finite fill could lift masked scores.
func.func @lifted_after_mask(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x32xi1>, %bias: tensor<8x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m, %bias : tensor<8x16x32xf32>, tensor<8x32xi1>, tensor<8x32xf32>) outs(%es : tensor<8x16x32xf32>) {
  ^bb0(%a: f32, %keep: i1, %b: f32, %out: f32):
    %fill = arith.constant -1.0e+04 : f32
    %w = arith.select %keep, %a, %fill : f32
    %r = arith.addf %w, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: an additive term after the mask could lift masked scores above -1000}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The softmax runs over the query dim; the second matmul contracts the key dim.
func.func @softmax_wrong_dim(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the softmax normalizes along the query dim, not along the dim the second matmul contracts}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Gemma-style soft-capping: tanh of the scores.
func.func @tanh_softcap(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = math.tanh %s : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores pass through 'math.tanh', which attn.attention cannot express}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The max subtracted is the maximum of other values.
func.func @max_of_other_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %other: tensor<8x16x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %er = tensor.empty() : tensor<8x16xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %max = linalg.reduce ins(%other : tensor<8x16x32xf32>) outs(%fm : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %d = arith.subf %s, %maxb : tensor<8x16x32xf32>
  %e = math.exp %d : tensor<8x16x32xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%e : tensor<8x16x32xf32>) outs(%fz : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = arith.divf %e, %sumb : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the row maximum subtracted before exp is not taken over the same scores}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The denominator sums exponentials of other values.
func.func @sum_of_other_exponentials(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %other: tensor<8x16x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %e = math.exp %s : tensor<8x16x32xf32>
  %e2 = math.exp %other : tensor<8x16x32xf32>
  %er = tensor.empty() : tensor<8x16xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%e2 : tensor<8x16x32xf32>) outs(%fz : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = arith.divf %e, %sumb : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the row sum does not add up the exponentials it divides}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The first matmul accumulates into a non-zero tensor.
func.func @nonzero_accumulator(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %acc: tensor<8x16x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%acc : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the softmax input is not computed from a matmul (a sum of products into a zero accumulator)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The scores of two matmuls are added (e.g. a relative-position term).
func.func @two_score_matmuls(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %rel: tensor<8x64x32xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s2 = linalg.batch_matmul ins(%q, %rel : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = arith.addf %s, %s2 : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are added to another score-dependent value}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// One query row: a "softmax" along the query axis (size 1, kept by TOSA's
// reduction) is 1 everywhere, not a softmax over the keys. Only the key
// axis of one key may be read at the key index.
func.func @tosa_softmax_over_one_query(%q: tensor<2x1x8xf32>, %k: tensor<2x3x8xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x3x8xf32>) -> tensor<2x8x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x1x8xf32>, tensor<2x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1x3xf32>
  %mx = tosa.reduce_max %s {axis = 1 : i32} : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %c = tosa.sub %s, %mx : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %e = tosa.exp %c : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %sm = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %r = tosa.reciprocal %sm : (tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<2x1x3xf32>, tensor<2x1x3xf32>, tensor<1xi8>) -> tensor<2x1x3xf32>
  // expected-remark @below {{attn-raise: not raised: a reduction runs along a dim other than the key dim the second matmul contracts}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x1x3xf32>, tensor<2x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1x4xf32>
  return %o : tensor<2x1x4xf32>
}

// -----

// Scores multiplied by 0: every key would get the same weight.
func.func @times_zero(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<0.0> : tensor<8x16x32xf32>
  %x = arith.mulf %s, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are multiplied by 0}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Scores multiplied by +inf.
func.func @times_inf(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<0x7F800000> : tensor<8x16x32xf32>
  %x = arith.mulf %s, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are multiplied by inf}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Scores divided by 0.
func.func @divided_by_zero(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<0.0> : tensor<8x16x32xf32>
  %x = arith.divf %s, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are divided by 0}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Two scales whose product (1e-60) is 0 in f32, the type of the op's scale.
func.func @scale_underflows_f32(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<1.0e-30> : tensor<8x16x32xf32>
  %y = arith.mulf %s, %c : tensor<8x16x32xf32>
  %x = arith.mulf %y, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the total scale 1e-60 is not a finite non-zero f32}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Two scales whose product (1e+60) overflows f32.
func.func @scale_overflows_f32(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<1.0e+30> : tensor<8x16x32xf32>
  %y = arith.mulf %s, %c : tensor<8x16x32xf32>
  %x = arith.mulf %y, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the total scale 1e+60 is not a finite non-zero f32}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Squared scores.
func.func @squared_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = arith.mulf %s, %s : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are multiplied by themselves}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The reciprocal of the scores.
func.func @reciprocal_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<1.0> : tensor<8x16x32xf32>
  %x = arith.divf %c, %s : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are in a denominator}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A constant minus the scores (refused, although the constant would cancel
// in the softmax).
func.func @subtracted_from_constant(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<1.0> : tensor<8x16x32xf32>
  %x = arith.subf %c, %s : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are subtracted from a value}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Negating masked scores would turn the -inf fill into +inf.
func.func @negated_after_mask(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x16x32xi1>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<8x16x32xf32>
  %y = arith.select %m, %s, %ninf : tensor<8x16x32xi1>, tensor<8x16x32xf32>
  %x = arith.negf %y : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores are negated after masking}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A mask computed from the scores themselves (keep the positive ones).
func.func @select_on_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<8x16x32xf32>
  %z = arith.constant dense<0.0> : tensor<8x16x32xf32>
  %m = arith.cmpf ogt, %s, %z : tensor<8x16x32xf32>
  %x = arith.select %m, %s, %ninf : tensor<8x16x32xi1>, tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: a select condition depends on the scores}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A select between two functions of the scores.
func.func @select_between_scores(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %m: tensor<8x16x32xi1>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %c = arith.constant dense<2.0> : tensor<8x16x32xf32>
  %y = arith.mulf %s, %c : tensor<8x16x32xf32>
  %x = arith.select %m, %s, %y : tensor<8x16x32xi1>, tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: both sides of a select depend on the scores}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A softmax of probabilities.
func.func @softmax_of_softmax(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %x = linalg.softmax dimension(2) ins(%s : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the scores pass through a softmax before the softmax}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The row sum starts from 1, not 0.
func.func @row_sum_starts_at_one(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %one = arith.constant 1.0 : f32
  %e = math.exp %s : tensor<8x16x32xf32>
  %er = tensor.empty() : tensor<8x16xf32>
  %fsum = linalg.fill ins(%one : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%e : tensor<8x16x32xf32>) outs(%fsum : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = arith.divf %e, %sumb : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the row sum does not start from 0}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// The row maximum starts from 0: for a row of negative scores it is not
// their maximum.
func.func @row_max_starts_at_zero(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %d0 = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<8x16xf32>
  %fmax = linalg.fill ins(%d0 : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %max = linalg.reduce ins(%s : tensor<8x16x32xf32>) outs(%fmax : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %d = arith.subf %s, %maxb : tensor<8x16x32xf32>
  %e = math.exp %d : tensor<8x16x32xf32>
  %er2 = tensor.empty() : tensor<8x16xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%e : tensor<8x16x32xf32>) outs(%fz : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = arith.divf %e, %sumb : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the row maximum does not start from -inf or the lowest finite value}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Exponentials divided by their row maximum instead of their row sum.
func.func @divided_by_row_max(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e = math.exp %s : tensor<8x16x32xf32>
  %er = tensor.empty() : tensor<8x16xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%er : tensor<8x16xf32>) -> tensor<8x16xf32>
  %max = linalg.reduce ins(%e : tensor<8x16x32xf32>) outs(%fmax : tensor<8x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<8x16xf32>) outs(%es : tensor<8x16x32xf32>) dimensions = [2]
  %p = arith.divf %e, %maxb : tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: the second matmul's operand is not a softmax along the key dim}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// A bias in f64, added to the scores widened to f64.
func.func @f64_bias(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x64xf32>, %b: tensor<8x16x32xf64>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<8x64x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf32>) outs(%ekt : tensor<8x64x32xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%fs : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s64 = arith.extf %s : tensor<8x16x32xf32> to tensor<8x16x32xf64>
  %y = arith.addf %s64, %b : tensor<8x16x32xf64>
  %x = arith.truncf %y : tensor<8x16x32xf64> to tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: an additive term has unsupported type}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Attention in f64 (the contractions are found, and refused by type rather
// than passed over in silence).
func.func @f64_attention(%q: tensor<8x16x64xf64>, %k: tensor<8x32x64xf64>, %v: tensor<8x32x64xf64>) -> tensor<8x16x64xf64> {
  %zero = arith.constant 0.0 : f64
  %c = arith.constant dense<0.125> : tensor<8x16x32xf64>
  %ekt = tensor.empty() : tensor<8x64x32xf64>
  %kt = linalg.transpose ins(%k : tensor<8x32x64xf64>) outs(%ekt : tensor<8x64x32xf64>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x16x32xf64>
  %fs = linalg.fill ins(%zero : f64) outs(%es : tensor<8x16x32xf64>) -> tensor<8x16x32xf64>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x64xf64>, tensor<8x64x32xf64>) outs(%fs : tensor<8x16x32xf64>) -> tensor<8x16x32xf64>
  %x = arith.mulf %s, %c : tensor<8x16x32xf64>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf64>) outs(%es : tensor<8x16x32xf64>) -> tensor<8x16x32xf64>
  %eo = tensor.empty() : tensor<8x16x64xf64>
  %fo = linalg.fill ins(%zero : f64) outs(%eo : tensor<8x16x64xf64>) -> tensor<8x16x64xf64>
  // expected-remark @below {{attn-raise: not raised: element type f64 is not supported by attn.attention (f32, f16 or bf16)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf64>, tensor<8x32x64xf64>) outs(%fo : tensor<8x16x64xf64>) -> tensor<8x16x64xf64>
  return %o : tensor<8x16x64xf64>
}

// -----

// fp8 Q and K, widened to f32 inside the first matmul's body.
func.func @fp8_scores(%q: tensor<8x16x64xf8E4M3FN>, %k: tensor<8x32x64xf8E4M3FN>, %v: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<0.125> : tensor<8x16x32xf32>
  %es = tensor.empty() : tensor<8x16x32xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x16x64xf8E4M3FN>, tensor<8x32x64xf8E4M3FN>) outs(%fs : tensor<8x16x32xf32>) {
  ^bb0(%a: f8E4M3FN, %b: f8E4M3FN, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %b32 = arith.extf %b : f8E4M3FN to f32
    %m = arith.mulf %a32, %b32 : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x16x32xf32>
  %x = arith.mulf %s, %c : tensor<8x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x16x32xf32>) outs(%es : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %eo = tensor.empty() : tensor<8x16x64xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  // expected-remark @below {{attn-raise: not raised: element type f8E4M3FN is not supported by attn.attention (f32, f16 or bf16)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}

// -----

// Soft-capping in TOSA (Gemma exported through TOSA): tosa.tanh of the
// scores, refused as math.tanh is; the remark names the TOSA op.
func.func @tosa_tanh_softcap(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x4xf32>) -> tensor<2x4x4xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x4x8xf32>, tensor<2x8x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x6xf32>
  %t = tosa.tanh %s : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %mx = tosa.reduce_max %t {axis = 2 : i32} : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
  %d = tosa.sub %t, %mx : (tensor<2x4x6xf32>, tensor<2x4x1xf32>) -> tensor<2x4x6xf32>
  %e = tosa.exp %d : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %sm = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
  %r = tosa.reciprocal %sm : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<2x4x6xf32>, tensor<2x4x1xf32>, tensor<1xi8>) -> tensor<2x4x6xf32>
  // expected-remark @below {{attn-raise: not raised: the scores pass through 'tosa.tanh', which attn.attention cannot express}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x4x6xf32>, tensor<2x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}
