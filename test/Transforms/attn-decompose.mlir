// RUN: attn-opt %s --attn-decompose --split-input-file | FileCheck %s

// GQA (8 query heads on 2 kv heads), Dv != Dqk, f16 inputs, a boolean mask
// broadcast over heads, a bias broadcast over batch and rows, and causal
// bottom_right masking with Lq = 16 < Lk = 24.

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-DAG: #[[$S5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, d3)>
// CHECK-DAG: #[[$MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>

// CHECK-LABEL: func @gqa_mask_bias_causal
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<2x8x16x64xf16>, %[[K:[a-z0-9]+]]: tensor<2x2x24x64xf16>, %[[V:[a-z0-9]+]]: tensor<2x2x24x32xf16>, %[[M:[a-z0-9]+]]: tensor<2x1x16x24xi1>, %[[B:[a-z0-9]+]]: tensor<1x8x1x24xf32>, %[[O:[a-z0-9]+]]: tensor<2x8x16x32xf16>)
// CHECK-NOT: attn.attention
//
// Scores q . k^T accumulated in f32.
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x16x24xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #[[$S5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[ZERO]] : tensor<2x8x16x24xf32>)
// CHECK:   arith.extf {{.*}} : f16 to f32
// CHECK:   arith.extf {{.*}} : f16 to f32
// CHECK:   arith.mulf
// CHECK:   arith.addf
//
// Scale once, add the bias, then hide masked and causally hidden keys.
// CHECK: %[[OFF:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[SM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$BIAS]], #[[$MASK]], #[[$ID]]], {{.*}} ins(%[[S]], %[[B]], %[[M]] :
// CHECK:   ^bb0(%[[X:.*]]: f32, %[[BV:.*]]: f32, %[[MV:.*]]: i1, %{{.*}}: f32):
// CHECK:   %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK:   %[[BIASED:.*]] = arith.addf %[[SCALED]], %[[BV]] : f32
// CHECK:   %[[MASKED:.*]] = arith.select %[[MV]], %[[BIASED]], %[[NEGINF:.*]] : f32
// CHECK:   %[[I:.*]] = linalg.index 2 : index
// CHECK:   %[[J:.*]] = linalg.index 3 : index
// CHECK:   %[[LIM:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK:   %[[VIS:.*]] = arith.cmpi sle, %[[J]], %[[LIM]] : index
// CHECK:   arith.select %[[VIS]], %[[MASKED]], %[[NEGINF]] : f32
//
// Max-subtracted softmax; a row whose max is -inf gives 0, not NaN.
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[SM]] :
// CHECK:   arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[SM]], %[[MAX]] :
// CHECK:   %[[EMPTY:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:   arith.select %[[EMPTY]]
// CHECK:   arith.subf
// CHECK:   math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[E]] :
// CHECK:   arith.addf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SUM]] :
// CHECK:   arith.cmpf ogt
// CHECK:   arith.divf
// CHECK:   arith.select
//
// p . v in f32, then one conversion into the destination.
// CHECK: %[[PV:.*]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], #[[$S5]]], {{.*}} ins(%[[P]], %[[V]] :
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], {{.*}} ins(%[[PV]] : tensor<2x8x16x32xf32>) outs(%[[O]] : tensor<2x8x16x32xf16>)
// CHECK:   arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[R]]
func.func @gqa_mask_bias_causal(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x24x64xf16>, %v: tensor<2x2x24x32xf16>,
                                %m: tensor<2x1x16x24xi1>, %b: tensor<1x8x1x24xf32>, %o: tensor<2x8x16x32xf16>)
    -> tensor<2x8x16x32xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x24x64xf16>, tensor<2x2x24x32xf16>)
         mask(%m : tensor<2x1x16x24xi1>) bias(%b : tensor<1x8x1x24xf32>) outs(%o : tensor<2x8x16x32xf16>)
         scale = 0.125 causal = bottom_right -> tensor<2x8x16x32xf16>
  return %r : tensor<2x8x16x32xf16>
}

// -----

// No batch dims, f32, an additive f16 mask, causal top_left: the visible
// limit is i itself, the mask is widened and added.

// CHECK-LABEL: func @no_batch_float_mask_top_left
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK:   ^bb0(%[[X:.*]]: f32, %[[MV:.*]]: f16, %{{.*}}: f32):
// CHECK:   %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK:   %[[MF:.*]] = arith.extf %[[MV]] : f16 to f32
// CHECK:   %[[ADDED:.*]] = arith.addf %[[SCALED]], %[[MF]] : f32
// CHECK:   %[[I:.*]] = linalg.index 1 : index
// CHECK:   %[[J:.*]] = linalg.index 2 : index
// CHECK:   %[[LIM:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK:   arith.cmpi sle, %[[J]], %[[LIM]] : index
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @no_batch_float_mask_top_left(%q: tensor<4x16x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>,
                                        %m: tensor<1x16x8xf16>, %o: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>)
         mask(%m : tensor<1x16x8xf16>) outs(%o : tensor<4x16x16xf32>) scale = 0.25 causal = top_left -> tensor<4x16x16xf32>
  return %r : tensor<4x16x16xf32>
}

// -----

// Dynamic sizes come from the operands.

// CHECK-LABEL: func @dynamic
// CHECK-DAG: %[[B:.*]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[LQ:.*]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[LK:.*]] = tensor.dim %arg1, %c2
// CHECK: tensor.empty(%[[B]], %[[LQ]], %[[LK]]) : tensor<?x4x?x?xf32>
func.func @dynamic(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x8xf32>,
                   %o: tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x8xf32>)
         outs(%o : tensor<?x4x?x8xf32>) scale = 0.25 -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

// Head counts known only at run time: the contractions' maps cannot divide
// by Hq / Hkv, so K and V are first gathered to the query heads (head h
// reads kv head h / (Hq / Hkv)) and read head by head.

// CHECK-LABEL: func @dynamic_head_group
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x?x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x8xf32>
// CHECK: tensor.empty(%{{.*}}) : tensor<1x?x4x8xf32>
// CHECK: %[[HQ:.*]] = tensor.dim %[[Q]], %c1{{.*}} : tensor<1x?x4x8xf32>
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %[[G:.*]] = arith.divui %[[HQ]], %c2 : index
// CHECK: %[[KR:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?x4x8xf32>)
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %[[G]] : index
// CHECK: tensor.extract %[[K]][%{{.*}}, %[[KVH]], %{{.*}}, %{{.*}}] : tensor<1x2x4x8xf32>
// CHECK: tensor.extract %[[V]]
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %[[KR]] : tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>)
// CHECK-NOT: attn.attention
func.func @dynamic_head_group(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x4x8xf32>,
                              %v: tensor<1x2x4x8xf32>, %o: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
         outs(%o : tensor<1x?x4x8xf32>) scale = 0.35 -> tensor<1x?x4x8xf32>
  return %0 : tensor<1x?x4x8xf32>
}

// -----

// On memrefs the computation reads tensor views of the buffers and writes
// the destination buffer.

// CHECK-LABEL: func @on_memrefs
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4x16x16xbf16>)
// CHECK: bufferization.to_tensor %arg0 restrict
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16x16xbf16>)
// CHECK: bufferization.materialize_in_destination %[[R]] in writable %[[O]]
// CHECK-NOT: attn.attention
func.func @on_memrefs(%q: memref<4x16x16xbf16>, %k: memref<1x8x16xbf16>, %v: memref<1x8x16xbf16>,
                      %o: memref<4x16x16xbf16>) {
  attn.attention ins(%q, %k, %v : memref<4x16x16xbf16>, memref<1x8x16xbf16>, memref<1x8x16xbf16>)
    outs(%o : memref<4x16x16xbf16>) scale = 0.25
  return
}

// -----

// CHECK: #{{.*}} = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 8, d3, d4)>
// CHECK-LABEL: func @mqa_one_kv_head
func.func @mqa_one_kv_head(%q: tensor<1x8x4x16xf32>, %k: tensor<1x1x4x16xf32>, %o: tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32> {
  %0 = attn.attention ins(%q, %k, %k : tensor<1x8x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
         outs(%o : tensor<1x8x4x16xf32>) scale = 0.25 -> tensor<1x8x4x16xf32>
  return %0 : tensor<1x8x4x16xf32>
}

// -----

// An explicit causal offset moves the diagonal: j <= i + %c.

// CHECK-LABEL: func @causal_offset
// CHECK-SAME: %[[C:[a-z0-9]+]]: index)
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[LIM:.*]] = arith.addi %[[I]], %[[C]] : index
// CHECK: arith.cmpi sle, %[[J]], %[[LIM]] : index
func.func @causal_offset(%q: tensor<2x4x16xf32>, %o: tensor<2x4x16xf32>, %c: index) -> tensor<2x4x16xf32> {
  %0 = attn.attention ins(%q, %q, %q : tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>)
         outs(%o : tensor<2x4x16xf32>) scale = 0.25 causal = top_left causal_offset(%c) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Packed grouped-query rows, 5 queries per group: row i is query
// (i + %c) mod 5, and bottom_right places the diagonal for 5 queries:
// j <= (i + %c) mod 5 + Lk - 5.

// CHECK-LABEL: func @causal_period
// CHECK-SAME: %[[C:[a-z0-9]+]]: index)
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK: %[[DIAG:.*]] = arith.subi %[[C9]], %[[C5]] : index
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[ROW:.*]] = arith.addi %[[I]], %[[C]] : index
// CHECK: %[[POS:.*]] = arith.remui %[[ROW]], %[[C5]] : index
// CHECK: %[[LIM:.*]] = arith.addi %[[POS]], %[[DIAG]] : index
// CHECK: arith.cmpi sle, %[[J]], %[[LIM]] : index
func.func @causal_period(%q: tensor<2x20x16xf32>, %k: tensor<2x9x16xf32>, %o: tensor<2x20x16xf32>, %c: index) -> tensor<2x20x16xf32> {
  %c5 = arith.constant 5 : index
  %0 = attn.attention ins(%q, %k, %k : tensor<2x20x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>)
         outs(%o : tensor<2x20x16xf32>) scale = 0.25 causal = bottom_right causal_period(%c5) causal_offset(%c) -> tensor<2x20x16xf32>
  return %0 : tensor<2x20x16xf32>
}
