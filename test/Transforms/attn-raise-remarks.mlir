// RUN: attn-opt %s --attn-raise --remarks-filter-missed=attn-raise -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-raise -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty

// Refusals also go to MLIR's remark engine (category attn-raise), without
// report=true. Without a remark filter the pass is silent.

// CHECK: remark: [Missed] AttnRaise | Category:attn-raise | Function=tanh_softcap | Remark="attn-raise: not raised: the scores pass through 'math.tanh', which attn.attention cannot express"
// QUIET-NOT: remark
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%fo : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}
