// RUN: attn-opt %s --transform-interpreter --split-input-file --canonicalize --cse | FileCheck %s

// TilingInterface: the domain is [B..., Hq, Lq]; every tile reads all of
// K and V (Lk is reduced inside the tile), the kv head of a query-head tile
// is h / (Hq / Hkv), and broadcast dims of the mask stay whole.

// CHECK-DAG: #[[$DIV4:.*]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-DAG: #[[$DIAG:.*]] = affine_map<(d0) -> (d0 - 16)>
// CHECK-LABEL: func @tile_batch_heads_rows
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<2x8x64x32xf16>, %[[K:[a-z0-9]+]]: tensor<2x2x48x32xf16>, %[[V:[a-z0-9]+]]: tensor<2x2x48x16xf16>, %[[M:[a-z0-9]+]]: tensor<2x1x64x48xi1>, %[[O:[a-z0-9]+]]: tensor<2x8x64x16xf16>)
// CHECK: scf.for %[[B:.*]] = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %[[O]])
// CHECK: scf.for %[[H:.*]] = %c0 to %c8 step %c1 iter_args(%[[A1:.*]] = %[[A0]])
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c16 iter_args(%[[A2:.*]] = %[[A1]])
// CHECK-DAG: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 32] [1, 1, 1, 1]
// CHECK-DAG: %[[KVH:.*]] = affine.apply #[[$DIV4]](%[[H]])
// CHECK-DAG: %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[KVH]], 0, 0] [1, 1, 48, 32] [1, 1, 1, 1]
// CHECK-DAG: %[[VS:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[KVH]], 0, 0] [1, 1, 48, 16] [1, 1, 1, 1]
// CHECK-DAG: %[[MS:.*]] = tensor.extract_slice %[[M]][%[[B]], 0, %[[I]], 0] [1, 1, 16, 48] [1, 1, 1, 1]
// CHECK-DAG: %[[OS:.*]] = tensor.extract_slice %[[A2]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 16] [1, 1, 1, 1]
// The tile's rows start at row i of a bottom_right problem with Lq = 64 and
// Lk = 48: its diagonal is at i + 48 - 64.
// CHECK: %[[OFF:.*]] = affine.apply #[[$DIAG]](%[[I]])
// CHECK: %[[T:.*]] = attn.attention ins(%[[QS]], %[[KS]], %[[VS]] : tensor<1x1x16x32xf16>, tensor<1x1x48x32xf16>, tensor<1x1x48x16xf16>) mask(%[[MS]] : tensor<1x1x16x48xi1>) outs(%[[OS]] : tensor<1x1x16x16xf16>) scale = 1.250000e-01 causal = top_left causal_offset(%[[OFF]])
// CHECK: tensor.insert_slice %[[T]] into %[[A2]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 16] [1, 1, 1, 1]
func.func @tile_batch_heads_rows(%q: tensor<2x8x64x32xf16>, %k: tensor<2x2x48x32xf16>, %v: tensor<2x2x48x16xf16>,
                                 %m: tensor<2x1x64x48xi1>, %o: tensor<2x8x64x16xf16>) -> tensor<2x8x64x16xf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<2x8x64x32xf16>, tensor<2x2x48x32xf16>, tensor<2x2x48x16xf16>)
         mask(%m : tensor<2x1x64x48xi1>) outs(%o : tensor<2x8x64x16xf16>) scale = 0.125 causal = bottom_right
         -> tensor<2x8x64x16xf16>
  return %0 : tensor<2x8x64x16xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops:3 = transform.structured.tile_using_for %0 tile_sizes [1, 1, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A head tile covering whole groups (4 query heads per kv head, tile 8)
// reads 2 kv heads; forall tiling with a bias broadcast over heads.

// CHECK-DAG: #[[$X8:.*]] = affine_map<(d0) -> (d0 * 8)>
// CHECK-DAG: #[[$X16:.*]] = affine_map<(d0) -> (d0 * 16)>
// CHECK-DAG: #[[$X2:.*]] = affine_map<(d0) -> (d0 * 2)>
// CHECK-LABEL: func @forall_whole_groups
// CHECK: scf.forall (%[[TH:.*]], %[[TI:.*]]) in (2, 2)
// CHECK-DAG: %[[H:.*]] = affine.apply #[[$X8]](%[[TH]])
// CHECK-DAG: %[[I:.*]] = affine.apply #[[$X16]](%[[TI]])
// CHECK-DAG: %[[KVH:.*]] = affine.apply #[[$X2]](%[[TH]])
// CHECK-DAG: tensor.extract_slice %arg0[%[[H]], %[[I]], 0] [8, 16, 64] [1, 1, 1]
// CHECK-DAG: tensor.extract_slice %arg1[%[[KVH]], 0, 0] [2, 24, 64] [1, 1, 1]
// CHECK-DAG: tensor.extract_slice %arg3[0, %[[I]], 0] [1, 16, 24] [1, 1, 1]
// CHECK: attn.attention {{.*}} : tensor<8x16x64xf32>, tensor<2x24x64xf32>, tensor<2x24x64xf32>) bias({{.*}} : tensor<1x16x24xf32>) outs({{.*}} : tensor<8x16x64xf32>)
// CHECK: scf.forall.in_parallel
func.func @forall_whole_groups(%q: tensor<16x32x64xf32>, %k: tensor<4x24x64xf32>, %v: tensor<4x24x64xf32>,
                               %b: tensor<1x32x24xf32>, %o: tensor<16x32x64xf32>) -> tensor<16x32x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<16x32x64xf32>, tensor<4x24x64xf32>, tensor<4x24x64xf32>)
         bias(%b : tensor<1x32x24xf32>) outs(%o : tensor<16x32x64xf32>) scale = 0.125 -> tensor<16x32x64xf32>
  return %0 : tensor<16x32x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %2 = transform.structured.tile_using_forall %0 tile_sizes [8, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head counts known only at run time (a frontend's dynamic shapes): a tile
// of one query head reads kv head h / (Hq / Hkv), computed then.

// CHECK-LABEL: func @dynamic_heads
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<?x?x32xf32>, %[[K:[a-z0-9]+]]: tensor<?x?x32xf32>, %[[V:[a-z0-9]+]]: tensor<?x?x16xf32>, %[[O:[a-z0-9]+]]: tensor<?x?x16xf32>)
// CHECK: scf.for %[[H:.*]] = %c0 to %{{.*}} step %c1
// CHECK-DAG: %[[HQ:.*]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[HKV:.*]] = tensor.dim %[[K]], %c0
// CHECK: %[[G:.*]] = arith.divui %[[HQ]], %[[HKV]] : index
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %[[G]] : index
// CHECK-DAG: tensor.extract_slice %[[K]][%[[KVH]], 0, 0] [1, %{{.*}}, 32] [1, 1, 1]
// CHECK-DAG: tensor.extract_slice %[[V]][%[[KVH]], 0, 0] [1, %{{.*}}, 16] [1, 1, 1]
// CHECK: attn.attention {{.*}} : tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x16xf32>) outs({{.*}} : tensor<1x?x16xf32>)
func.func @dynamic_heads(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x16xf32>,
                         %o: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x16xf32>)
         outs(%o : tensor<?x?x16xf32>) scale = 0.125 -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Tiling a tile again adds the row offset to the existing causal offset.

// CHECK: #[[$ADD:.*]] = affine_map<(d0)[s0] -> (d0 + s0)>
// CHECK-LABEL: func @retile_causal_offset
// CHECK-SAME: %[[C:[a-z0-9]+]]: index)
// CHECK: scf.for %[[I:.*]] = %c0 to %c32 step %c8
// CHECK: %[[OFF:.*]] = affine.apply #[[$ADD]](%[[I]])[%[[C]]]
// CHECK: attn.attention {{.*}} causal = top_left causal_offset(%[[OFF]]) -> tensor<8x8x16xf32>
func.func @retile_causal_offset(%q: tensor<8x32x16xf32>, %o: tensor<8x32x16xf32>, %c: index) -> tensor<8x32x16xf32> {
  %0 = attn.attention ins(%q, %q, %q : tensor<8x32x16xf32>, tensor<8x32x16xf32>, tensor<8x32x16xf32>)
         outs(%o : tensor<8x32x16xf32>) scale = 0.25 causal = top_left causal_offset(%c) -> tensor<8x32x16xf32>
  return %0 : tensor<8x32x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [0, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Packed grouped-query rows (a period of %p queries): a tile keeps its
// alignment and period, and its offset is its first row (plus the offset
// it had), whichever the alignment.

// CHECK-LABEL: func @tile_causal_period
// CHECK-SAME: %[[C:[a-z0-9]+]]: index, %[[P:[a-z0-9]+]]: index)
// CHECK: scf.for %[[I:.*]] = %c0 to %c20 step %c8
// CHECK: attn.attention {{.*}} causal = bottom_right causal_period(%[[P]]) causal_offset(%[[I]]) -> tensor<2x?x16xf32>
// CHECK: scf.for %[[J:.*]] = %c0 to %c20 step %c8
// CHECK: %[[OFF:.*]] = affine.apply #{{.*}}(%[[J]])[%[[C]]]
// CHECK: attn.attention {{.*}} causal = top_left causal_period(%[[P]]) causal_offset(%[[OFF]]) -> tensor<2x?x16xf32>
func.func @tile_causal_period(%q: tensor<2x20x16xf32>, %k: tensor<2x9x16xf32>,
                              %o: tensor<2x20x16xf32>, %c: index, %p: index) -> (tensor<2x20x16xf32>, tensor<2x20x16xf32>) {
  %0 = attn.attention ins(%q, %k, %k : tensor<2x20x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>)
         outs(%o : tensor<2x20x16xf32>) scale = 0.25 causal = bottom_right causal_period(%p) -> tensor<2x20x16xf32>
  %1 = attn.attention ins(%q, %k, %k : tensor<2x20x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32>)
         outs(%o : tensor<2x20x16xf32>) scale = 0.25 causal = top_left causal_period(%p) causal_offset(%c) -> tensor<2x20x16xf32>
  return %0, %1 : tensor<2x20x16xf32>, tensor<2x20x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [0, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Fusion into a tiled consumer (generateResultTileValue): a tile of the
// result's rows is computed by the op on those query rows and whole K and
// V (the kv head of query head h is h / 2), with the diagonal moved by the
// tile's first row.

// CHECK-DAG: #[[$KVH:.*]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-DAG: #[[$DIAG:.*]] = affine_map<(d0) -> (d0 - 16)>
// CHECK-LABEL: func @fuse_into_consumer
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<4x64x32xf16>, %[[K:[a-z0-9]+]]: tensor<2x48x32xf16>, %[[V:[a-z0-9]+]]: tensor<2x48x16xf16>, %[[O:[a-z0-9]+]]: tensor<4x64x16xf16>)
// CHECK: scf.for %[[H:.*]] = %c0 to %c4 step %c1
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c16
// CHECK-DAG: %[[G:.*]] = affine.apply #[[$KVH]](%[[H]])
// CHECK-DAG: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[H]], %[[I]], 0] [1, 16, 32] [1, 1, 1]
// CHECK-DAG: %[[KS:.*]] = tensor.extract_slice %[[K]][%[[G]], 0, 0] [1, 48, 32] [1, 1, 1]
// CHECK-DAG: %[[VS:.*]] = tensor.extract_slice %[[V]][%[[G]], 0, 0] [1, 48, 16] [1, 1, 1]
// CHECK-DAG: %[[OS:.*]] = tensor.extract_slice %[[O]][%[[H]], %[[I]], 0] [1, 16, 16] [1, 1, 1]
// CHECK-DAG: %[[OFF:.*]] = affine.apply #[[$DIAG]](%[[I]])
// CHECK: %[[T:.*]] = attn.attention ins(%[[QS]], %[[KS]], %[[VS]] : tensor<1x16x32xf16>, tensor<1x48x32xf16>, tensor<1x48x16xf16>) outs(%[[OS]] : tensor<1x16x16xf16>) scale = 1.250000e-01 causal = top_left causal_offset(%[[OFF]])
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<1x16x16xf16>)
func.func @fuse_into_consumer(%q: tensor<4x64x32xf16>, %k: tensor<2x48x32xf16>, %v: tensor<2x48x16xf16>,
                              %o: tensor<4x64x16xf16>) -> tensor<4x64x16xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<4x64x32xf16>, tensor<2x48x32xf16>, tensor<2x48x16xf16>)
         outs(%o : tensor<4x64x16xf16>) scale = 0.125 causal = bottom_right
         -> tensor<4x64x16xf16>
  %e = tensor.empty() : tensor<4x64x16xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(h, i, d) -> (h, i, d)>, affine_map<(h, i, d) -> (h, i, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%0 : tensor<4x64x16xf16>) outs(%e : tensor<4x64x16xf32>) {
  ^bb0(%x: f16, %y: f32):
    %w = arith.extf %x : f16 to f32
    linalg.yield %w : f32
  } -> tensor<4x64x16xf32>
  return %1 : tensor<4x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.generic"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops:2 = transform.structured.fuse %0 tile_sizes [1, 16, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A result tile with part of Dv is not a tile of the op's domain (Dv is
// not one of its dims): the op stays whole, before the consumer's loops.

// CHECK-LABEL: func @no_fusion_for_part_of_dv
// CHECK: attn.attention {{.*}} -> tensor<4x64x16xf16>
// CHECK: scf.for
// CHECK-NOT: attn.attention
func.func @no_fusion_for_part_of_dv(%q: tensor<4x64x32xf16>, %k: tensor<2x48x32xf16>, %v: tensor<2x48x16xf16>,
                                    %o: tensor<4x64x16xf16>) -> tensor<4x64x16xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<4x64x32xf16>, tensor<2x48x32xf16>, tensor<2x48x16xf16>)
         outs(%o : tensor<4x64x16xf16>) scale = 0.125 causal = bottom_right
         -> tensor<4x64x16xf16>
  %e = tensor.empty() : tensor<4x64x16xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(h, i, d) -> (h, i, d)>, affine_map<(h, i, d) -> (h, i, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%0 : tensor<4x64x16xf16>) outs(%e : tensor<4x64x16xf32>) {
  ^bb0(%x: f16, %y: f32):
    %w = arith.extf %x : f16 to f32
    linalg.yield %w : f32
  } -> tensor<4x64x16xf32>
  return %1 : tensor<4x64x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.generic"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops:3 = transform.structured.fuse %0 tile_sizes [1, 16, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
