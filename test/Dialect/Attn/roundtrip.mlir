// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func @basic
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>, tensor<2x4x32x64xf32>) outs(%{{.*}} : tensor<2x4x16x64xf32>) scale = 1.250000e-01 -> tensor<2x4x16x64xf32>
func.func @basic(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>,
                 %v: tensor<2x4x32x64xf32>, %o: tensor<2x4x16x64xf32>)
    -> tensor<2x4x16x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>, tensor<2x4x32x64xf32>)
         outs(%o : tensor<2x4x16x64xf32>) scale = 0.125 -> tensor<2x4x16x64xf32>
  return %0 : tensor<2x4x16x64xf32>
}

// CHECK-LABEL: func @no_batch_dims
// CHECK: attn.attention ins({{.*}} : tensor<4x16x64xf16>, tensor<4x32x64xf16>, tensor<4x32x64xf16>) outs({{.*}} : tensor<4x16x64xf16>) scale = 1.250000e-01 -> tensor<4x16x64xf16>
func.func @no_batch_dims(%q: tensor<4x16x64xf16>, %k: tensor<4x32x64xf16>,
                         %v: tensor<4x32x64xf16>, %o: tensor<4x16x64xf16>)
    -> tensor<4x16x64xf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<4x16x64xf16>, tensor<4x32x64xf16>, tensor<4x32x64xf16>)
         outs(%o : tensor<4x16x64xf16>) scale = 0.125 -> tensor<4x16x64xf16>
  return %0 : tensor<4x16x64xf16>
}

// CHECK-LABEL: func @two_batch_dims_gqa_dv
// CHECK: attn.attention ins({{.*}} : tensor<2x3x8x5x64xbf16>, tensor<2x3x2x7x64xbf16>, tensor<2x3x2x7x32xbf16>) outs({{.*}} : tensor<2x3x8x5x32xbf16>) scale = 1.250000e-01 -> tensor<2x3x8x5x32xbf16>
func.func @two_batch_dims_gqa_dv(%q: tensor<2x3x8x5x64xbf16>, %k: tensor<2x3x2x7x64xbf16>,
                                 %v: tensor<2x3x2x7x32xbf16>, %o: tensor<2x3x8x5x32xbf16>)
    -> tensor<2x3x8x5x32xbf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<2x3x8x5x64xbf16>, tensor<2x3x2x7x64xbf16>, tensor<2x3x2x7x32xbf16>)
         outs(%o : tensor<2x3x8x5x32xbf16>) scale = 0.125 -> tensor<2x3x8x5x32xbf16>
  return %0 : tensor<2x3x8x5x32xbf16>
}

// CHECK-LABEL: func @bool_mask_causal_top_left
// CHECK: attn.attention ins({{.*}}) mask(%{{.*}} : tensor<1x1x16x32xi1>) outs({{.*}}) scale = 1.250000e-01 causal = top_left -> tensor<1x4x16x64xf32>
func.func @bool_mask_causal_top_left(%q: tensor<1x4x16x64xf32>, %k: tensor<1x1x32x64xf32>,
                                     %v: tensor<1x1x32x64xf32>, %m: tensor<1x1x16x32xi1>,
                                     %o: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<1x4x16x64xf32>, tensor<1x1x32x64xf32>, tensor<1x1x32x64xf32>)
         mask(%m : tensor<1x1x16x32xi1>) outs(%o : tensor<1x4x16x64xf32>)
         scale = 0.125 causal = top_left -> tensor<1x4x16x64xf32>
  return %0 : tensor<1x4x16x64xf32>
}

// CHECK-LABEL: func @float_mask_bias_causal_bottom_right
// CHECK: attn.attention ins({{.*}}) mask(%{{.*}} : tensor<2x1x1x32xf16>) bias(%{{.*}} : tensor<1x4x16x32xf32>) outs({{.*}}) scale = 5.000000e-01 causal = bottom_right -> tensor<2x4x16x64xf16>
func.func @float_mask_bias_causal_bottom_right(%q: tensor<2x4x16x64xf16>, %k: tensor<2x4x32x64xf16>,
                                               %v: tensor<2x4x32x64xf16>, %m: tensor<2x1x1x32xf16>,
                                               %b: tensor<1x4x16x32xf32>, %o: tensor<2x4x16x64xf16>)
    -> tensor<2x4x16x64xf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<2x4x16x64xf16>, tensor<2x4x32x64xf16>, tensor<2x4x32x64xf16>)
         mask(%m : tensor<2x1x1x32xf16>) bias(%b : tensor<1x4x16x32xf32>)
         outs(%o : tensor<2x4x16x64xf16>) scale = 0.5 causal = bottom_right -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}

// Packed grouped-query rows: 4 heads of 5 queries, a tile's row offset.
// CHECK-LABEL: func @causal_period_offset
// CHECK: attn.attention ins({{.*}}) outs({{.*}}) scale = 1.250000e-01 causal = bottom_right causal_period(%{{.*}}) causal_offset(%{{.*}}) -> tensor<1x2x20x64xf32>
func.func @causal_period_offset(%q: tensor<1x2x20x64xf32>, %k: tensor<1x2x32x64xf32>,
                                %v: tensor<1x2x32x64xf32>, %o: tensor<1x2x20x64xf32>,
                                %p: index, %c: index) -> tensor<1x2x20x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<1x2x20x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>)
         outs(%o : tensor<1x2x20x64xf32>) scale = 0.125 causal = bottom_right causal_period(%p)
         causal_offset(%c) -> tensor<1x2x20x64xf32>
  return %0 : tensor<1x2x20x64xf32>
}

// CHECK-LABEL: func @bias_only
// CHECK: attn.attention ins({{.*}}) bias(%{{.*}} : tensor<1x1x1x1xbf16>) outs({{.*}}) scale = 1.000000e+00 -> tensor<1x2x3x8xf32>
func.func @bias_only(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>,
                     %b: tensor<1x1x1x1xbf16>, %o: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<1x2x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>)
         bias(%b : tensor<1x1x1x1xbf16>) outs(%o : tensor<1x2x3x8xf32>) scale = 1.0 -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// CHECK-LABEL: func @dynamic_dims
// CHECK: attn.attention ins({{.*}} : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) mask(%{{.*}} : tensor<?x1x?x?xi1>) outs({{.*}} : tensor<?x8x?x64xf32>) scale = 1.250000e-01 -> tensor<?x8x?x64xf32>
func.func @dynamic_dims(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>,
                        %m: tensor<?x1x?x?xi1>, %o: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>)
         mask(%m : tensor<?x1x?x?xi1>) outs(%o : tensor<?x8x?x64xf32>) scale = 0.125 -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// CHECK-LABEL: func @memrefs
// CHECK: attn.attention ins({{.*}} : memref<2x8x16x64xf16>, memref<2x1x32x64xf16>, memref<2x1x32x64xf16>) mask(%{{.*}} : memref<2x1x16x32xi1>) outs(%{{.*}} : memref<2x8x16x64xf16>) scale = 1.250000e-01 causal = top_left
// CHECK-NOT: ->
// CHECK: return
func.func @memrefs(%q: memref<2x8x16x64xf16>, %k: memref<2x1x32x64xf16>, %v: memref<2x1x32x64xf16>,
                   %m: memref<2x1x16x32xi1>, %o: memref<2x8x16x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x16x64xf16>, memref<2x1x32x64xf16>, memref<2x1x32x64xf16>)
    mask(%m : memref<2x1x16x32xi1>) outs(%o : memref<2x8x16x64xf16>) scale = 0.125 causal = top_left
  return
}

// CHECK-LABEL: func @discardable_attrs
// CHECK: attn.attention {{.*}} scale = 2.500000e-01 {attn.folded_scale = {q = 5.000000e-01 : f32}} -> tensor<1x1x4x4xf32>
func.func @discardable_attrs(%q: tensor<1x1x4x4xf32>, %o: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = attn.attention ins(%q, %q, %q : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
         outs(%o : tensor<1x1x4x4xf32>) scale = 0.25 {attn.folded_scale = {q = 0.5 : f32}} -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// CHECK-LABEL: func @causal_offset
// CHECK: attn.attention {{.*}} scale = 1.250000e-01 causal = top_left causal_offset(%arg2) -> tensor<4x16x8xf32>
func.func @causal_offset(%q: tensor<4x16x8xf32>, %o: tensor<4x16x8xf32>, %c: index) -> tensor<4x16x8xf32> {
  %0 = attn.attention ins(%q, %q, %q : tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>)
         outs(%o : tensor<4x16x8xf32>) scale = 0.125 causal = top_left causal_offset(%c) -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}
