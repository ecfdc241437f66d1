// attn.attention on memrefs whose init is also q, k and v (in place): the
// op's meaning is the result of reading the inputs first. The tiled
// kernels write each tile's rows while later tiles still read k and v, so
// --attn-tile's tensor views must make bufferization copy; 2-row tiles and
// 2-key blocks put every row in a different tile.
// RUN: attn-opt %s --attn-cpu-pipeline="q-tile=2 kv-tile=2" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="q-tile=2 kv-tile=2 row-major-rows=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline=fused=false | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// Expected: numpy in float64 (x = the rows below, s = x @ x.T with the
// upper triangle at -inf, softmax(s) @ x), to the runner's six digits.
// CHECK: [1, 0],
// CHECK-NEXT: [0.268941, 0.731059],
// CHECK-NEXT: [0.788058, 0.788058],
// CHECK-NEXT: [0.53527, 1.74959],
// CHECK-NEXT: [1.92845, -0.907916]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @in_place(%x: memref<1x1x5x2xf32>) {
  attn.attention ins(%x, %x, %x : memref<1x1x5x2xf32>, memref<1x1x5x2xf32>, memref<1x1x5x2xf32>)
    outs(%x : memref<1x1x5x2xf32>) scale = 1.0 causal = top_left
  return
}

func.func @main() {
  %c = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 2.0], [2.0, -1.0]]]]> : tensor<1x1x5x2xf32>
  %x = bufferization.to_buffer %c read_only : tensor<1x1x5x2xf32> to memref<1x1x5x2xf32, strided<[?, ?, ?, ?], offset: ?>>
  %buf = memref.alloc() : memref<1x1x5x2xf32>
  memref.copy %x, %buf : memref<1x1x5x2xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x1x5x2xf32>
  call @in_place(%buf) : (memref<1x1x5x2xf32>) -> ()
  %r = bufferization.to_tensor %buf restrict : memref<1x1x5x2xf32> to tensor<1x1x5x2xf32>
  %u = tensor.cast %r : tensor<1x1x5x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
