// RUN: attn-opt %s --one-shot-bufferize="bufferize-function-boundaries" --split-input-file | FileCheck %s

// One-shot bufferization writes the result into the init buffer in place;
// init is never read, so a fresh destination needs no copy.

// CHECK-LABEL: func @in_place
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x16x64xf16, strided<{{.*}}>>, %[[K:.*]]: memref<1x2x32x64xf16, strided<{{.*}}>>, %[[V:.*]]: memref<1x2x32x64xf16, strided<{{.*}}>>, %[[M:.*]]: memref<1x1x16x32xi1, strided<{{.*}}>>, %[[O:.*]]: memref<1x4x16x64xf16, strided<{{.*}}>>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) mask(%[[M]] : {{.*}}) outs(%[[O]] : memref<1x4x16x64xf16, strided<{{.*}}>>) scale = 1.250000e-01 causal = top_left
// CHECK-NOT: ->
// CHECK: return %[[O]]
func.func @in_place(%q: tensor<1x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>,
                    %m: tensor<1x1x16x32xi1>, %o: tensor<1x4x16x64xf16>) -> tensor<1x4x16x64xf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>)
         mask(%m : tensor<1x1x16x32xi1>) outs(%o : tensor<1x4x16x64xf16>) scale = 0.125 causal = top_left
         -> tensor<1x4x16x64xf16>
  return %0 : tensor<1x4x16x64xf16>
}

// -----

// CHECK-LABEL: func @fresh_destination
// CHECK: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<4x16x64xf32>
// CHECK-NOT: memref.copy
// CHECK: attn.attention {{.*}} outs(%[[ALLOC]] : memref<4x16x64xf32>)
// CHECK: return %[[ALLOC]]
func.func @fresh_destination(%q: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %e = tensor.empty() : tensor<4x16x64xf32>
  %0 = attn.attention ins(%q, %q, %q : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>)
         outs(%e : tensor<4x16x64xf32>) scale = 0.125 -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// The init's old contents are not needed, but the caller's tensor is still
// live after the op: bufferization must allocate a new buffer rather than
// clobber it, and needs no copy of the old contents into it.

// CHECK-LABEL: func @init_still_used
// CHECK: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<1x1x4x4xf32>
// CHECK-NOT: memref.copy
// CHECK: attn.attention {{.*}} outs(%[[ALLOC]] : memref<1x1x4x4xf32>)
// CHECK: return %[[ALLOC]], %arg1
func.func @init_still_used(%q: tensor<1x1x4x4xf32>, %o: tensor<1x1x4x4xf32>)
    -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %0 = attn.attention ins(%q, %q, %q : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
         outs(%o : tensor<1x1x4x4xf32>) scale = 0.5 -> tensor<1x1x4x4xf32>
  return %0, %o : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}
