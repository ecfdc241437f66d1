// RUN: attn-opt %s --transform-interpreter --split-input-file --verify-diagnostics

// Query-head tiles of grouped-query attention must cover whole groups or
// lie within one, so that they read whole key/value heads: otherwise the
// tiling fails with a located error (the op stays untiled).

// 6 query heads on 2 key/value heads (groups of 3), tiles of 2 heads.
func.func @head_tile_splits_groups(%q: tensor<6x64x32xf16>, %k: tensor<2x48x32xf16>, %v: tensor<2x48x16xf16>,
                                   %o: tensor<6x64x16xf16>) -> tensor<6x64x16xf16> {
  // expected-error @below {{head tile size 2 must be a multiple or a divisor of the query head group size 3}}
  // expected-error @below {{to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %0 = attn.attention ins(%q, %k, %v : tensor<6x64x32xf16>, tensor<2x48x32xf16>, tensor<2x48x16xf16>)
         outs(%o : tensor<6x64x16xf16>) scale = 0.125 -> tensor<6x64x16xf16>
  return %0 : tensor<6x64x16xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [2]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Tiles of 3 of 4 query heads: the last tile has one head, a size known
// only at run time.
func.func @head_tile_leaves_partial_tile(%q: tensor<4x64x32xf16>, %k: tensor<2x48x32xf16>, %v: tensor<2x48x16xf16>,
                                         %o: tensor<4x64x16xf16>) -> tensor<4x64x16xf16> {
  // expected-error @below {{cannot tile query heads of grouped-query attention into tiles of run-time size (a head tile size that does not divide the number of query heads, 4, leaves a partial last tile)}}
  // expected-error @below {{to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %0 = attn.attention ins(%q, %k, %v : tensor<4x64x32xf16>, tensor<2x48x32xf16>, tensor<2x48x16xf16>)
         outs(%o : tensor<4x64x16xf16>) scale = 0.125 -> tensor<4x64x16xf16>
  return %0 : tensor<4x64x16xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [3]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Head counts known only at run time: the group size is unknown, so a
// tile of two query heads may read one kv head or two (a tile of one
// reads kv head h / (Hq / Hkv): tiling-interface.mlir).
func.func @dynamic_head_group(%q: tensor<?x64x32xf16>, %k: tensor<?x48x32xf16>, %v: tensor<?x48x16xf16>,
                              %o: tensor<?x64x16xf16>) -> tensor<?x64x16xf16> {
  // expected-error @below {{cannot tile query heads of grouped-query attention whose head group size is not static into tiles of more than one head}}
  // expected-error @below {{to tile operation}}
  // expected-error @below {{failed to generate tiling loops}}
  %0 = attn.attention ins(%q, %k, %v : tensor<?x64x32xf16>, tensor<?x48x32xf16>, tensor<?x48x16xf16>)
         outs(%o : tensor<?x64x16xf16>) scale = 0.125 -> tensor<?x64x16xf16>
  return %0 : tensor<?x64x16xf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg0: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["attn.attention"]} in %arg0 : (!transform.any_op) -> !transform.any_op
    %1, %loops = transform.structured.tile_using_for %0 tile_sizes [2]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
