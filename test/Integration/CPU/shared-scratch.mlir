// Two attention ops in one function on the same q and k (other values and
// a bias): CSE merges their score computation, so both ops' kernels start
// from one score scratch tensor. The row-major kernel wrote it a row at a
// time with rank-1 vector.transfer_writes, and one-shot bufferization took
// the write of row 0 at (0, 0) for an overwrite of the whole tile (it
// matches vector dims to the tensor's from the front): both ops wrote the
// scratch in place and the second read the first one's probabilities as
// its scores (row 1 gave 2.62081).
// RUN: attn-opt %s --attn-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="row-major-rows=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline=fused=false | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// Expected: numpy in float64, softmax(q k^T + bias) v, to six digits.
// CHECK: [4.60143],
// CHECK-NEXT: [5.24174],
// CHECK-NEXT: [5]
// CHECK: [2.10791],
// CHECK-NEXT: [2.86142],
// CHECK-NEXT: [2.33333]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]> : tensor<1x3x2xf32>
  %k = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]]> : tensor<1x3x2xf32>
  %v0 = arith.constant dense<[[[3.0], [5.0], [7.0]]]> : tensor<1x3x1xf32>
  %v1 = arith.constant dense<[[[1.0], [2.0], [4.0]]]> : tensor<1x3x1xf32>
  %bias = arith.constant dense<[[[0.0, 0.0, 0.0], [0.0, -5.0, 0.0], [0.0, 0.0, 0.0]]]> : tensor<1x3x3xf32>
  %i = tensor.empty() : tensor<1x3x1xf32>
  %o0 = attn.attention ins(%q, %k, %v0 : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x1xf32>) outs(%i : tensor<1x3x1xf32>) scale = 1.0 -> tensor<1x3x1xf32>
  %u0 = tensor.cast %o0 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %o1 = attn.attention ins(%q, %k, %v1 : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x1xf32>) bias(%bias : tensor<1x3x3xf32>) outs(%i : tensor<1x3x1xf32>) scale = 1.0 -> tensor<1x3x1xf32>
  %u1 = tensor.cast %o1 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}
