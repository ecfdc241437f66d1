// A grouped-query, causal attention block as a frontend would hand it over:
// 4 query heads share 2 key/value heads, keys carry a padding mask, and the
// frontend has already multiplied q by 1/sqrt(Dqk) (the kernel's own scale
// is 1.0). Canonicalization folds that multiplication into `scale`, so the
// lowering scales exactly once.
//
//   attn-opt examples/gqa-causal-attention.mlir --attn-cpu-pipeline \
//     | mlir-runner -e main -entry-point-result=void \
//         -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so

func.func private @printMemrefF32(tensor<*xf32>)

func.func @attention(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x6x8xf32>,
                     %v: tensor<1x2x6x8xf32>, %pad: tensor<1x1x1x6xi1>)
    -> tensor<1x4x4x8xf32> {
  %inv_sqrt_d = arith.constant dense<0.353553385> : tensor<1x4x4x8xf32>
  %qs = arith.mulf %q, %inv_sqrt_d : tensor<1x4x4x8xf32>
  %init = tensor.empty() : tensor<1x4x4x8xf32>
  %out = attn.attention ins(%qs, %k, %v : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>)
           mask(%pad : tensor<1x1x1x6xi1>) outs(%init : tensor<1x4x4x8xf32>)
           scale = 1.0 causal = bottom_right -> tensor<1x4x4x8xf32>
  return %out : tensor<1x4x4x8xf32>
}

func.func @main() {
  // Deterministic inputs: q[.., h, i, d] = (i + d - 2h) / 8, k[.., j, d] = (j - d) / 8,
  // v[.., j, d] = j + d / 8; the last key is padding.
  %e_q = tensor.empty() : tensor<1x4x4x8xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e_q : tensor<1x4x4x8xf32>) {
  ^bb0(%unused: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %d = linalg.index 3 : index
    %id = arith.addi %i, %d : index
    %h2 = arith.addi %h, %h : index
    %s = arith.subi %id, %h2 : index
    %si = arith.index_cast %s : index to i32
    %sf = arith.sitofp %si : i32 to f32
    %c8 = arith.constant 8.0 : f32
    %r = arith.divf %sf, %c8 : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x8xf32>
  %e_k = tensor.empty() : tensor<1x2x6x8xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(b, h, j, d) -> (b, h, j, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e_k : tensor<1x2x6x8xf32>) {
  ^bb0(%unused: f32):
    %j = linalg.index 2 : index
    %d = linalg.index 3 : index
    %s = arith.subi %j, %d : index
    %si = arith.index_cast %s : index to i32
    %sf = arith.sitofp %si : i32 to f32
    %c8 = arith.constant 8.0 : f32
    %r = arith.divf %sf, %c8 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6x8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(b, h, j, d) -> (b, h, j, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e_k : tensor<1x2x6x8xf32>) {
  ^bb0(%unused: f32):
    %j = linalg.index 2 : index
    %d = linalg.index 3 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %c8 = arith.constant 8.0 : f32
    %dd = arith.divf %df, %c8 : f32
    %r = arith.addf %jf, %dd : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6x8xf32>
  %pad = arith.constant dense<[[[[true, true, true, true, true, false]]]]> : tensor<1x1x1x6xi1>

  %out = call @attention(%q, %k, %v, %pad)
      : (tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x1x6xi1>) -> tensor<1x4x4x8xf32>
  %u = tensor.cast %out : tensor<1x4x4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
