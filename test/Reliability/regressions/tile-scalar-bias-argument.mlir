// Found by differential testing (test/lib/attn_random.py, seed 100, graph
// 80, shrunk): a bias or mask with one element for every score (all dims 1)
// that is a function argument. --attn-tile read it with an all-broadcast
// vector.transfer_read, which became a 0-d transfer on a memref with
// dynamic strides that --attn-cpu-pipeline did not lower: mlir-runner
// failed on a leftover vector.transfer_read. It is now a scalar
// tensor.extract and a vector.broadcast.
//
// RUN: attn-opt %s --attn-tile | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-cpu-pipeline='q-tile=1 kv-tile=64' \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

// TILE-LABEL: func.func @attention(
// TILE: %[[S:.*]] = tensor.extract %{{.*}} : tensor<1x1x1x1xf32>
// TILE: vector.broadcast %[[S]] : f32 to vector<
// TILE-NOT: vector.transfer_read {{.*}} : tensor<1x1x1x1xf32>, vector<
// TILE-LABEL: func.func @main(

// No vector dialect op is left (LLVM's vector intrinsics are fine).
// CPU-LABEL: llvm.func @attention(
// CPU-NOT: {{[ "]vector\.}}
// CPU-LABEL: llvm.func @main(

// q = 0: every key gets the same score whatever the (scalar) bias, so the
// output is the mean of v's rows: [(1 + 3) / 2, (2 + 4) / 2] = [2, 3].
// EXEC: sizes = [1, 1, 1, 2]
// EXEC-NEXT: {{\[}}[{{\[}}[2, 3]]]]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @attention(%q: tensor<1x1x1x2xf32>, %k: tensor<1x1x2x2xf32>,
                     %v: tensor<1x1x2x2xf32>, %b: tensor<1x1x1x1xf32>)
    -> tensor<1x1x1x2xf32> {
  %init = tensor.empty() : tensor<1x1x1x2xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
         bias(%b : tensor<1x1x1x1xf32>) outs(%init : tensor<1x1x1x2xf32>)
         scale = 1.0 -> tensor<1x1x1x2xf32>
  return %r : tensor<1x1x1x2xf32>
}

func.func @main() {
  %q = arith.constant dense<0.0> : tensor<1x1x1x2xf32>
  %k = arith.constant dense<[[[[1.0, -2.0], [0.5, 3.0]]]]> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %b = arith.constant dense<0.75> : tensor<1x1x1x1xf32>
  %r = call @attention(%q, %k, %v, %b) : (tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x2xf32>
  %u = tensor.cast %r : tensor<1x1x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
