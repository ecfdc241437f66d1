// A bias at the lowest float (HF's finfo(dtype).min padding masks) leaves
// its key visible: the op adds it in f32 and a row whose every key has it
// is the mean of the values, as in the unfused graph. The fused kernels
// work in base 2, where the bias times log2(e) overflowed to -inf and such
// a row wrote 0. A -inf bias still hides its key.
// RUN: attn-opt %s --attn-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="row-major-rows=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline=fused=false | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// q = [[1, 0], [0, 1], [1, 1]], k = [[1, 0], [0, 1], [0.5, 0.5]],
// v = [1, 2, 4]; expected from numpy in float64, to the runner's digits.
// f32 bias rows [L, L, L], [L, 0, L], [-inf, -inf, -inf]: the mean 7/3,
// key 1 alone, no visible key.
// CHECK: [2.33333],
// CHECK-NEXT: [2],
// CHECK-NEXT: [0]
// bf16 bias rows [L, L, L], [0, L, 0], [L, L, 0]: the mean, the softmax of
// [0, 0.5] over keys 0 and 2, key 2 alone.
// CHECK: [2.33333],
// CHECK-NEXT: [2.86738],
// CHECK-NEXT: [4]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]> : tensor<1x3x2xf32>
  %k = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]]> : tensor<1x3x2xf32>
  %v = arith.constant dense<[[[1.0], [2.0], [4.0]]]> : tensor<1x3x1xf32>
  %b32 = arith.constant dense<[[[-3.40282347e+38, -3.40282347e+38, -3.40282347e+38], [-3.40282347e+38, 0.0, -3.40282347e+38], [0xFF800000, 0xFF800000, 0xFF800000]]]> : tensor<1x3x3xf32>
  %b16 = arith.constant dense<[[[0xFF7F, 0xFF7F, 0xFF7F], [0.0, 0xFF7F, 0.0], [0xFF7F, 0xFF7F, 0.0]]]> : tensor<1x3x3xbf16>
  %i = tensor.empty() : tensor<1x3x1xf32>
  %o32 = attn.attention ins(%q, %k, %v : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x1xf32>) bias(%b32 : tensor<1x3x3xf32>) outs(%i : tensor<1x3x1xf32>) scale = 1.0 -> tensor<1x3x1xf32>
  %u32 = tensor.cast %o32 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u32) : (tensor<*xf32>) -> ()
  %o16 = attn.attention ins(%q, %k, %v : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x1xf32>) bias(%b16 : tensor<1x3x3xbf16>) outs(%i : tensor<1x3x1xf32>) scale = 1.0 -> tensor<1x3x1xf32>
  %u16 = tensor.cast %o16 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
  return
}
