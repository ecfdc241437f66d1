#!/usr/bin/python3
"""Generates examples/raise-*.mlir: unfused attention graphs as frontends
emit them, each with a @main that runs the graph on random weights and
inputs (embedded constants) and prints the result.

    /usr/bin/python3 test/lib/gen_raise_examples.py examples
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_raise_tests import dense  # noqa: E402

rng = np.random.RandomState(7)


def randn(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def main_fn(func, args, result):
    lines = ["func.func @main() {"]
    names = []
    for name, t, data in args:
        elt = t.split("x")[-1].rstrip(">")
        lines.append(f"  %{name} = arith.constant {dense(data, elt)}")
        names.append(f"%{name}")
    lines.append(f"  %r = call @{func}({', '.join(names)}) : "
                 f"({', '.join(t for _, t, _ in args)}) -> {result}")
    lines.append(f"  %u = tensor.cast %r : {result} to tensor<*xf32>")
    lines.append("  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()")
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------

BERT = """// A BERT-style encoder self-attention layer with a padding mask, in linalg
// on tensors as torch-mlir emits it: projections as linalg.matmul on
// [B*L, hidden], heads split with expand_shape + transpose, the batch and
// head dims folded into 3-D batch matmuls, K^T as a transpose, the scores
// divided by sqrt(d), the padding mask as (1 - m) * -10000, linalg.softmax.
//
//   attn-opt examples/raise-bert-encoder.mlir --attn-raise --canonicalize
//
// raises the attention core (not the projections) to one attn.attention
// with scale = 0.353553 and the mask as `bias`.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @encoder_self_attention(%x: tensor<2x8x32xf32>, %pad: tensor<2x8xi1>,
    %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
    %wo: tensor<32x32xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %q2 = linalg.matmul ins(%x2, %wq : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %k2 = linalg.matmul ins(%x2, %wk : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %v2 = linalg.matmul ins(%x2, %wv : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // [B*L, H*D] -> [B, L, H, D] -> [B, H, L, D]
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<16x32xf32> into tensor<2x8x4x8xf32>
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<16x32xf32> into tensor<2x8x4x8xf32>
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<16x32xf32> into tensor<2x8x4x8xf32>
  %eh = tensor.empty() : tensor<2x4x8x8xf32>
  %qh = linalg.transpose ins(%q4 : tensor<2x8x4x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %kh = linalg.transpose ins(%k4 : tensor<2x8x4x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) permutation = [0, 2, 3, 1]
  %vh = linalg.transpose ins(%v4 : tensor<2x8x4x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %kt3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %e3 = tensor.empty() : tensor<8x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%f3 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
  %sqrt_d = arith.constant dense<2.82842708> : tensor<2x4x8x8xf32>
  %scaled = arith.divf %s, %sqrt_d : tensor<2x4x8x8xf32>
  // extended_attention_mask = (1.0 - mask) * -10000.0, [B, 1, 1, L]
  %em = tensor.empty() : tensor<2x1x1x8xf32>
  %ext = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pad : tensor<2x8xi1>) outs(%em : tensor<2x1x1x8xf32>) {
  ^bb0(%m: i1, %out: f32):
    %one = arith.constant 1.0 : f32
    %big = arith.constant -10000.0 : f32
    %mf = arith.uitofp %m : i1 to f32
    %inv = arith.subf %one, %mf : f32
    %r = arith.mulf %inv, %big : f32
    linalg.yield %r : f32
  } -> tensor<2x1x1x8xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, 0, 0, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %ext : tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8x8xf32>
  %probs = linalg.softmax dimension(3) ins(%masked : tensor<2x4x8x8xf32>) outs(%eh : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p3 = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %c3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%f3 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %c4 = tensor.expand_shape %c3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
  %ec = tensor.empty() : tensor<2x8x4x8xf32>
  %ct = linalg.transpose ins(%c4 : tensor<2x4x8x8xf32>) outs(%ec : tensor<2x8x4x8xf32>) permutation = [0, 2, 1, 3]
  %c2 = tensor.collapse_shape %ct [[0, 1], [2, 3]] : tensor<2x8x4x8xf32> into tensor<16x32xf32>
  %o2 = linalg.matmul ins(%c2, %wo : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %o = tensor.expand_shape %o2 [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}
"""


def bert():
    pad = np.ones((2, 8), dtype=bool)
    pad[0, 6:] = False
    pad[1, 3:] = False
    args = [("x", "tensor<2x8x32xf32>", randn((2, 8, 32))),
            ("pad", "tensor<2x8xi1>", pad)]
    for w in ("wq", "wk", "wv", "wo"):
        args.append((w, "tensor<32x32xf32>", randn((32, 32), 0.2)))
    return BERT + "\n" + main_fn("encoder_self_attention", args,
                                 "tensor<2x8x32xf32>")


GPT = """// A GPT-style causal self-attention block with grouped-query attention
// (8 query heads share 2 key/value heads), in linalg on tensors: K and V are
// repeated across head groups (repeat_interleave: expand, broadcast,
// collapse), the scores come from a linalg.generic contraction, the causal
// mask is an index compare filling with finfo(f32).min (as Hugging Face
// writes it) after the scaling, and the softmax is decomposed into
// max/sub/exp/sum/div generics.
//
//   attn-opt examples/raise-gpt-causal-gqa.mlir --attn-raise --canonicalize
//
// raises it to one attn.attention with Hq = 8, Hkv = 2, scale = 0.353553
// and causal = top_left.

func.func private @printMemrefF32(tensor<*xf32>)

#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>

func.func @causal_gqa_block(%x: tensor<12x64xf32>, %wq: tensor<64x64xf32>,
    %wk: tensor<64x16xf32>, %wv: tensor<64x16xf32>, %wo: tensor<64x64xf32>)
    -> tensor<12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eq = tensor.empty() : tensor<12x64xf32>
  %fq = linalg.fill ins(%zero : f32) outs(%eq : tensor<12x64xf32>) -> tensor<12x64xf32>
  %ekv = tensor.empty() : tensor<12x16xf32>
  %fkv = linalg.fill ins(%zero : f32) outs(%ekv : tensor<12x16xf32>) -> tensor<12x16xf32>
  %q2 = linalg.matmul ins(%x, %wq : tensor<12x64xf32>, tensor<64x64xf32>) outs(%fq : tensor<12x64xf32>) -> tensor<12x64xf32>
  %k2 = linalg.matmul ins(%x, %wk : tensor<12x64xf32>, tensor<64x16xf32>) outs(%fkv : tensor<12x16xf32>) -> tensor<12x16xf32>
  %v2 = linalg.matmul ins(%x, %wv : tensor<12x64xf32>, tensor<64x16xf32>) outs(%fkv : tensor<12x16xf32>) -> tensor<12x16xf32>
  // [L, H*D] -> [1, H, L, D]
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [1, 12, 8, 8] : tensor<12x64xf32> into tensor<1x12x8x8xf32>
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [1, 12, 2, 8] : tensor<12x16xf32> into tensor<1x12x2x8xf32>
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [1, 12, 2, 8] : tensor<12x16xf32> into tensor<1x12x2x8xf32>
  %eqh = tensor.empty() : tensor<1x8x12x8xf32>
  %ekh = tensor.empty() : tensor<1x2x12x8xf32>
  %q = linalg.transpose ins(%q4 : tensor<1x12x8x8xf32>) outs(%eqh : tensor<1x8x12x8xf32>) permutation = [0, 2, 1, 3]
  %k = linalg.transpose ins(%k4 : tensor<1x12x2x8xf32>) outs(%ekh : tensor<1x2x12x8xf32>) permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%v4 : tensor<1x12x2x8xf32>) outs(%ekh : tensor<1x2x12x8xf32>) permutation = [0, 2, 1, 3]
  // repeat_interleave(k, 4, dim=1)
  %k5 = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 12, 8] : tensor<1x2x12x8xf32> into tensor<1x2x1x12x8xf32>
  %v5 = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 12, 8] : tensor<1x2x12x8xf32> into tensor<1x2x1x12x8xf32>
  %e5 = tensor.empty() : tensor<1x2x4x12x8xf32>
  %kb = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, 0, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k5 : tensor<1x2x1x12x8xf32>) outs(%e5 : tensor<1x2x4x12x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x12x8xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, e) -> (a, b, 0, d, e)>, affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v5 : tensor<1x2x1x12x8xf32>) outs(%e5 : tensor<1x2x4x12x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x12x8xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x12x8xf32> into tensor<1x8x12x8xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x12x8xf32> into tensor<1x8x12x8xf32>
  // scores = q @ k^T (k^T through the indexing map)
  %es = tensor.empty() : tensor<1x8x12x12xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kr : tensor<1x8x12x8xf32>, tensor<1x8x12x8xf32>) outs(%fs : tensor<1x8x12x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12x12xf32>
  // torch.where(causal_mask, scores / sqrt(d), finfo.min)
  %x1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x8x12x12xf32>) outs(%es : tensor<1x8x12x12xf32>) {
  ^bb0(%a: f32, %out: f32):
    %sqrt_d = arith.constant 2.82842708 : f32
    %fmin = arith.constant -3.40282347e+38 : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %visible = arith.cmpi ule, %j, %i : index
    %sc = arith.divf %a, %sqrt_d : f32
    %r = arith.select %visible, %sc, %fmin : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12x12xf32>
  // softmax(x1, dim=-1)
  %er = tensor.empty() : tensor<1x8x12xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x8x12xf32>) -> tensor<1x8x12xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x1 : tensor<1x8x12x12xf32>) outs(%fm : tensor<1x8x12xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x1, %max : tensor<1x8x12x12xf32>, tensor<1x8x12xf32>) outs(%es : tensor<1x8x12x12xf32>) {
  ^bb0(%a: f32, %mx: f32, %out: f32):
    %d = arith.subf %a, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12x12xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x8x12xf32>) -> tensor<1x8x12xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%e : tensor<1x8x12x12xf32>) outs(%fz : tensor<1x8x12xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %sum : tensor<1x8x12x12xf32>, tensor<1x8x12xf32>) outs(%es : tensor<1x8x12x12xf32>) {
  ^bb0(%a: f32, %sm: f32, %out: f32):
    %r = arith.divf %a, %sm : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12x12xf32>
  // p @ v, heads merged back, output projection
  %fo = linalg.fill ins(%zero : f32) outs(%eqh : tensor<1x8x12x8xf32>) -> tensor<1x8x12x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>, affine_map<(b, h, i, e, j) -> (b, h, j, e)>, affine_map<(b, h, i, e, j) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vr : tensor<1x8x12x12xf32>, tensor<1x8x12x8xf32>) outs(%fo : tensor<1x8x12x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x12x8xf32>
  %ec = tensor.empty() : tensor<1x12x8x8xf32>
  %ct = linalg.transpose ins(%c : tensor<1x8x12x8xf32>) outs(%ec : tensor<1x12x8x8xf32>) permutation = [0, 2, 1, 3]
  %c2 = tensor.collapse_shape %ct [[0, 1], [2, 3]] : tensor<1x12x8x8xf32> into tensor<12x64xf32>
  %o = linalg.matmul ins(%c2, %wo : tensor<12x64xf32>, tensor<64x64xf32>) outs(%fq : tensor<12x64xf32>) -> tensor<12x64xf32>
  return %o : tensor<12x64xf32>
}
"""


def gpt():
    args = [("x", "tensor<12x64xf32>", randn((12, 64))),
            ("wq", "tensor<64x64xf32>", randn((64, 64), 0.15)),
            ("wk", "tensor<64x16xf32>", randn((64, 16), 0.15)),
            ("wv", "tensor<64x16xf32>", randn((64, 16), 0.15)),
            ("wo", "tensor<64x64xf32>", randn((64, 64), 0.15))]
    return GPT + "\n" + main_fn("causal_gqa_block", args, "tensor<12x64xf32>")


TOSA = """// Self-attention in TOSA as a TFLite-style export has it: fully connected
// layers as tosa.matmul with constant weights, heads split from [B, L, H*D]
// with tosa.reshape/tosa.transpose into 3-D tosa.matmul batches, the scale
// as tosa.mul, an additive float mask, and the softmax spelled out as
// reduce_max/sub/exp/reduce_sum/reciprocal/mul.
//
//   attn-opt examples/raise-tflite-tosa.mlir --attn-raise --canonicalize
//
// raises the attention core to one attn.attention (scale = 0.25, the mask as
// `bias`); the rest stays TOSA. To run it on the CPU, lower TOSA first:
//
//   attn-opt ... --attn-raise | attn-opt --pass-pipeline='builtin.module(
//     func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,
//     tosa-to-tensor))' | attn-opt --attn-cpu-pipeline | mlir-runner ...

func.func private @printMemrefF32(tensor<*xf32>)

func.func @tflite_attention(%x: tensor<1x10x32xf32>, %mask: tensor<1x1x1x10xf32>,
    %wq: tensor<1x32x32xf32>, %wk: tensor<1x32x32xf32>, %wv: tensor<1x32x32xf32>)
    -> tensor<1x10x32xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %q = tosa.matmul %x, %wq, %zp, %zp : (tensor<1x10x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x32xf32>
  %k = tosa.matmul %x, %wk, %zp, %zp : (tensor<1x10x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x32xf32>
  %v = tosa.matmul %x, %wv, %zp, %zp : (tensor<1x10x32xf32>, tensor<1x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x32xf32>
  %heads = tosa.const_shape {values = dense<[1, 10, 2, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %bh = tosa.const_shape {values = dense<[2, 10, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %bht = tosa.const_shape {values = dense<[2, 16, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q4 = tosa.reshape %q, %heads : (tensor<1x10x32xf32>, !tosa.shape<4>) -> tensor<1x10x2x16xf32>
  %qt = tosa.transpose %q4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x10x2x16xf32>) -> tensor<1x2x10x16xf32>
  %q3 = tosa.reshape %qt, %bh : (tensor<1x2x10x16xf32>, !tosa.shape<3>) -> tensor<2x10x16xf32>
  %k4 = tosa.reshape %k, %heads : (tensor<1x10x32xf32>, !tosa.shape<4>) -> tensor<1x10x2x16xf32>
  %kt = tosa.transpose %k4 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x10x2x16xf32>) -> tensor<1x2x16x10xf32>
  %k3 = tosa.reshape %kt, %bht : (tensor<1x2x16x10xf32>, !tosa.shape<3>) -> tensor<2x16x10xf32>
  %v4 = tosa.reshape %v, %heads : (tensor<1x10x32xf32>, !tosa.shape<4>) -> tensor<1x10x2x16xf32>
  %vt = tosa.transpose %v4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x10x2x16xf32>) -> tensor<1x2x10x16xf32>
  %v3 = tosa.reshape %vt, %bh : (tensor<1x2x10x16xf32>, !tosa.shape<3>) -> tensor<2x10x16xf32>
  %s3 = tosa.matmul %q3, %k3, %zp, %zp : (tensor<2x10x16xf32>, tensor<2x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x10x10xf32>
  %sc = tosa.const_shape {values = dense<[1, 2, 10, 10]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s = tosa.reshape %s3, %sc : (tensor<2x10x10xf32>, !tosa.shape<4>) -> tensor<1x2x10x10xf32>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<1x2x10x10xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x2x10x10xf32>
  %sm = tosa.add %ss, %mask : (tensor<1x2x10x10xf32>, tensor<1x1x1x10xf32>) -> tensor<1x2x10x10xf32>
  %mx = tosa.reduce_max %sm {axis = 3 : i32} : (tensor<1x2x10x10xf32>) -> tensor<1x2x10x1xf32>
  %d = tosa.sub %sm, %mx : (tensor<1x2x10x10xf32>, tensor<1x2x10x1xf32>) -> tensor<1x2x10x10xf32>
  %e = tosa.exp %d : (tensor<1x2x10x10xf32>) -> tensor<1x2x10x10xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x2x10x10xf32>) -> tensor<1x2x10x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<1x2x10x1xf32>) -> tensor<1x2x10x1xf32>
  %p = tosa.mul %e, %rcp, %shift : (tensor<1x2x10x10xf32>, tensor<1x2x10x1xf32>, tensor<1xi8>) -> tensor<1x2x10x10xf32>
  %pc = tosa.const_shape {values = dense<[2, 10, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p3 = tosa.reshape %p, %pc : (tensor<1x2x10x10xf32>, !tosa.shape<3>) -> tensor<2x10x10xf32>
  %c3 = tosa.matmul %p3, %v3, %zp, %zp : (tensor<2x10x10xf32>, tensor<2x10x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x10x16xf32>
  %cs = tosa.const_shape {values = dense<[1, 2, 10, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c4 = tosa.reshape %c3, %cs : (tensor<2x10x16xf32>, !tosa.shape<4>) -> tensor<1x2x10x16xf32>
  %ct = tosa.transpose %c4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x2x10x16xf32>) -> tensor<1x10x2x16xf32>
  %os = tosa.const_shape {values = dense<[1, 10, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %o = tosa.reshape %ct, %os : (tensor<1x10x2x16xf32>, !tosa.shape<3>) -> tensor<1x10x32xf32>
  return %o : tensor<1x10x32xf32>
}
"""


def tosa():
    mask = np.zeros((1, 1, 1, 10), dtype=np.float32)
    mask[..., 7:] = -1e9
    args = [("x", "tensor<1x10x32xf32>", randn((1, 10, 32))),
            ("mask", "tensor<1x1x1x10xf32>", mask)]
    for w in ("wq", "wk", "wv"):
        args.append((w, "tensor<1x32x32xf32>", randn((1, 32, 32), 0.2)))
    return TOSA + "\n" + main_fn("tflite_attention", args, "tensor<1x10x32xf32>")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "examples"
    for name, fn in (("raise-bert-encoder", bert), ("raise-gpt-causal-gqa", gpt),
                     ("raise-tflite-tosa", tosa)):
        path = os.path.join(outdir, name + ".mlir")
        with open(path, "w") as f:
            f.write(fn())
        print(path)


if __name__ == "__main__":
    main()
