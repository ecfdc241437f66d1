// Option values --attn-tile cannot tile with are an error, reported before
// any op is changed.
// RUN: not attn-opt %s --attn-tile="q-tile=0" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-tile="row-major-rows=-1" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-tile="dynamic-row-cases=1,0" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-cpu-pipeline="dynamic-row-cases=-2" 2>&1 | FileCheck %s

// CHECK: error: attn-tile: q-tile, kv-tile and the dynamic-row-cases must be > 0, and row-major-rows >= 0
func.func @decode(%q: tensor<1x?x32xf32>, %k: tensor<1x64x32xf32>, %o: tensor<1x?x32xf32>) -> tensor<1x?x32xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x?x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
         outs(%o : tensor<1x?x32xf32>) scale = 0.25 -> tensor<1x?x32xf32>
  return %r : tensor<1x?x32xf32>
}
