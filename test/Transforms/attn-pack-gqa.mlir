// RUN: attn-opt %s --split-input-file --attn-pack-gqa | FileCheck %s
// Every op that is not packed says why (with a kernel for at most 16
// static rows, as the CPU pipeline gives).
// RUN: attn-opt %s --split-input-file --attn-pack-gqa="remarks row-major-rows=16" --verify-diagnostics -o /dev/null
// Where the rows are known only at run time, packing also must not take
// that kernel from the op's rows while leaving at most 16 packed rows
// without it. With the run-time cases 1, 2, 4 and 8 every count up to 16
// has it (16: 8 twice), so packing never loses it; without a case of 1
// row, odd counts do not.
// RUN: attn-opt %s --split-input-file --attn-pack-gqa="row-major-rows=16" --canonicalize --cse | FileCheck %s --check-prefix=ALL
// RUN: attn-opt %s --split-input-file --attn-pack-gqa="row-major-rows=16 dynamic-row-cases=2,4,8" --canonicalize --cse | FileCheck %s --check-prefix=FEW
// The same for 64-row tiles and at most 32 row-major rows (the CPU
// pipeline's defaults), and without a case of 1 row: a static group of
// half a tile still packs.
// RUN: attn-opt %s --split-input-file --attn-pack-gqa="row-major-rows=32 block-rows=64 dynamic-row-cases=2,4,8" --canonicalize --cse | FileCheck %s --check-prefix=HALF
// Without the tile test (block-rows=0) the long-query case packs too.
// RUN: attn-opt %s --split-input-file --attn-pack-gqa=block-rows=0 | FileCheck %s --check-prefix=ANY

// Decoding, 16 query heads on 4 key/value heads: the query, the mask and
// the init become 4 heads of 4 rows (the group), keys and values stay, and
// the result goes back to 16 heads of 1 row. Bottom-right causal masking
// of one query hides no key, so it is dropped.
// CHECK-LABEL: func.func @decode_tensor
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x16x1x64xf16>, %[[K:[a-z0-9]+]]: tensor<2x4x?x64xf16>, %[[V:[a-z0-9]+]]: tensor<2x4x?x64xf16>, %[[M:[a-z0-9]+]]: tensor<2x16x1x?xi1>, %[[O:[a-z0-9]+]]: tensor<2x16x1x64xf16>
// CHECK: %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 4, 4, 1, 64] : tensor<2x16x1x64xf16> into tensor<2x4x4x1x64xf16>
// CHECK: %[[QP:.*]] = tensor.collapse_shape %[[QE]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x4x4x1x64xf16> into tensor<2x4x4x64xf16>
// CHECK: %[[MP:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x4x4x1x?xi1> into tensor<2x4x4x?xi1>
// CHECK: %[[OP:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x4x4x1x64xf16> into tensor<2x4x4x64xf16>
// CHECK: %[[R:.*]] = attn.attention ins(%[[QP]], %[[K]], %[[V]] : tensor<2x4x4x64xf16>, tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16>) mask(%[[MP]] : tensor<2x4x4x?xi1>) outs(%[[OP]] : tensor<2x4x4x64xf16>) scale = 1.250000e-01 {attn.folded_scale = {query = 5.000000e-01 : f32}} -> tensor<2x4x4x64xf16>
// CHECK: %[[RE:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 4, 4, 1, 64] : tensor<2x4x4x64xf16> into tensor<2x4x4x1x64xf16>
// CHECK: %[[RC:.*]] = tensor.collapse_shape %[[RE]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x4x4x1x64xf16> into tensor<2x16x1x64xf16>
// CHECK: return %[[RC]]
func.func @decode_tensor(%q: tensor<2x16x1x64xf16>, %k: tensor<2x4x?x64xf16>,
                         %v: tensor<2x4x?x64xf16>, %m: tensor<2x16x1x?xi1>,
                         %o: tensor<2x16x1x64xf16>) -> tensor<2x16x1x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x16x1x64xf16>, tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16>)
                      mask(%m : tensor<2x16x1x?xi1>) outs(%o : tensor<2x16x1x64xf16>)
                      scale = 0.125 causal = bottom_right
                      {attn.folded_scale = {query = 0.5 : f32}} -> tensor<2x16x1x64xf16>
  return %r : tensor<2x16x1x64xf16>
}

// -----

// On memrefs the op writes a view of its init; a dynamic batch dim and a
// query length above 1 (the rows are the group's heads times the queries,
// head-major); a bias broadcast over heads and rows stays as it is.
// CHECK-LABEL: func.func @memref_rows
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x8x3x64xbf16>, %[[K:[a-z0-9]+]]: memref<?x2x?x64xbf16>, %[[V:[a-z0-9]+]]: memref<?x2x?x64xbf16>, %[[B:[a-z0-9]+]]: memref<1x1x1x?xf32>, %[[O:[a-z0-9]+]]: memref<?x8x3x64xbf16>
// CHECK: %[[QE:.*]] = memref.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 4, 3, 64] : memref<?x8x3x64xbf16> into memref<?x2x4x3x64xbf16>
// CHECK: %[[QP:.*]] = memref.collapse_shape %[[QE]] {{\[\[}}0], [1], [2, 3], [4]] : memref<?x2x4x3x64xbf16> into memref<?x2x12x64xbf16>
// CHECK: %[[OE:.*]] = memref.expand_shape %[[O]]
// CHECK: %[[OP:.*]] = memref.collapse_shape %[[OE]] {{.*}} into memref<?x2x12x64xbf16>
// CHECK: attn.attention ins(%[[QP]], %[[K]], %[[V]] : memref<?x2x12x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>) bias(%[[B]] : memref<1x1x1x?xf32>) outs(%[[OP]] : memref<?x2x12x64xbf16>) scale = 1.250000e-01
// CHECK-NEXT: return
func.func @memref_rows(%q: memref<?x8x3x64xbf16>, %k: memref<?x2x?x64xbf16>,
                       %v: memref<?x2x?x64xbf16>, %b: memref<1x1x1x?xf32>,
                       %o: memref<?x8x3x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x8x3x64xbf16>, memref<?x2x?x64xbf16>, memref<?x2x?x64xbf16>)
                 bias(%b : memref<1x1x1x?xf32>) outs(%o : memref<?x8x3x64xbf16>) scale = 0.125
  return
}

// -----

// Multi-query attention without batch dims, Dv != Dqk, and a bias with a
// head and a row per query: all 32 heads become one.
// CHECK-LABEL: func.func @mqa_rank3
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x32x128xf32>, tensor<1x50x128xf32>, tensor<1x50x32xf32>) bias(%{{.*}} : tensor<1x32x50xf16>) outs(%{{.*}} : tensor<1x32x32xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<1x32x1x32xf32> into tensor<32x1x32xf32>
func.func @mqa_rank3(%q: tensor<32x1x128xf32>, %k: tensor<1x50x128xf32>,
                     %v: tensor<1x50x32xf32>, %b: tensor<32x1x50xf16>,
                     %o: tensor<32x1x32xf32>) -> tensor<32x1x32xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<32x1x128xf32>, tensor<1x50x128xf32>, tensor<1x50x32xf32>)
                      bias(%b : tensor<32x1x50xf16>) outs(%o : tensor<32x1x32xf32>)
                      scale = 0.088388 -> tensor<32x1x32xf32>
  return %r : tensor<32x1x32xf32>
}

// -----

// A query length known at run time: the choice is made there, by the tile
// test, between the packed op and the op as it was.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<8x?x64xf16>
// CHECK: %[[LQ:.*]] = tensor.dim %[[Q]], %c1
// CHECK: %[[PT:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: %[[T:.*]] = arith.ceildivui %[[LQ]], %c128
// CHECK: %[[A:.*]] = arith.muli %[[PT]], %c10
// CHECK: %[[B:.*]] = arith.muli %[[T]], %c36
// CHECK: %[[FILLS:.*]] = arith.cmpi ult, %[[A]], %[[B]]
// CHECK: %[[R:.*]] = scf.if %[[FILLS]] -> (tensor<8x?x64xf16>)
// CHECK: attn.attention {{.*}} outs(%{{.*}} : tensor<2x?x64xf16>)
// CHECK: scf.yield %{{.*}} : tensor<8x?x64xf16>
// CHECK: } else {
// CHECK: %[[U:.*]] = attn.attention {{.*}} outs(%{{.*}} : tensor<8x?x64xf16>)
// CHECK: scf.yield %[[U]]
// CHECK: return %[[R]]
func.func @dynamic_rows(%q: tensor<8x?x64xf16>, %k: tensor<2x?x64xf16>,
                        %v: tensor<2x?x64xf16>, %o: tensor<8x?x64xf16>) -> tensor<8x?x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<8x?x64xf16>, tensor<2x?x64xf16>, tensor<2x?x64xf16>)
                      outs(%o : tensor<8x?x64xf16>) scale = 0.125 -> tensor<8x?x64xf16>
  return %r : tensor<8x?x64xf16>
}

// -----

// Rows known only at run time, 32 query heads on one key/value head: 32
// packed rows of an odd number of queries are no run-time case of the
// row-major kernel, but a group of half the 64-row tile packs where the
// tile test says so (the keys-major tile cost about as much as 32 one-row
// ops). A group of 16 is tested for the row-major kernel it would take
// away (where Lq has it and 16 Lq, at most 32, does not): the pass does
// not prove that an even Lq makes 16 Lq even, so it emits the test.
// HALF-LABEL: func.func @dynamic_rows_half_tile_group
// HALF: %[[FILLS:.*]] = arith.cmpi ult
// HALF-NOT: arith.cmpi ule
// HALF: scf.if %[[FILLS]]
// HALF-LABEL: func.func @dynamic_rows_smaller_group
// HALF: %[[FILLS:.*]] = arith.cmpi ult
// HALF: %[[NOTMANY:.*]] = arith.cmpi ule, %[[PACKED:.*]], %c32
// HALF: %[[PBY8:.*]] = arith.remui %[[PACKED]], %c8
// HALF: %[[PBY4:.*]] = arith.remui %[[PBY8]], %c4
// HALF: %[[PBY2:.*]] = arith.remui %[[PBY4]], %c2
// HALF: %[[PODD:.*]] = arith.cmpi ne, %[[PBY2]], %c0
// HALF: %[[PACKEDLOSES:.*]] = arith.andi %[[NOTMANY]], %[[PODD]]
// HALF: %[[FEWLQ:.*]] = arith.cmpi ule, %[[LQ:.*]], %c32
// HALF: %[[BY8:.*]] = arith.remui %[[LQ]], %c8
// HALF: %[[BY4:.*]] = arith.remui %[[BY8]], %c4
// HALF: %[[BY2:.*]] = arith.remui %[[BY4]], %c2
// HALF: %[[EVEN:.*]] = arith.cmpi eq, %[[BY2]], %c0
// HALF: %[[LQHAS:.*]] = arith.andi %[[FEWLQ]], %[[EVEN]]
// HALF: %[[LOSES:.*]] = arith.andi %[[LQHAS]], %[[PACKEDLOSES]]
// HALF: %[[KEEPS:.*]] = arith.xori %[[LOSES]], %true
// HALF: %[[PACK:.*]] = arith.andi %[[FILLS]], %[[KEEPS]]
// HALF: scf.if %[[PACK]]
// With a case of 1 row, only the tile test.
// ALL-LABEL: func.func @dynamic_rows_half_tile_group
// ALL-LABEL: func.func @dynamic_rows_smaller_group
// ALL: %[[FILLS:.*]] = arith.cmpi ult
// ALL-NOT: arith.xori
// ALL: scf.if %[[FILLS]]
func.func @dynamic_rows_half_tile_group(%q: tensor<32x?x64xf32>, %k: tensor<1x?x64xf32>,
    %v: tensor<1x?x64xf32>, %o: tensor<32x?x64xf32>) -> tensor<32x?x64xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<32x?x64xf32>, tensor<1x?x64xf32>, tensor<1x?x64xf32>)
                      outs(%o : tensor<32x?x64xf32>) scale = 0.125 -> tensor<32x?x64xf32>
  return %r : tensor<32x?x64xf32>
}
func.func @dynamic_rows_smaller_group(%q: tensor<16x?x64xf32>, %k: tensor<1x?x64xf32>,
    %v: tensor<1x?x64xf32>, %o: tensor<16x?x64xf32>) -> tensor<16x?x64xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<16x?x64xf32>, tensor<1x?x64xf32>, tensor<1x?x64xf32>)
                      outs(%o : tensor<16x?x64xf32>) scale = 0.125 -> tensor<16x?x64xf32>
  return %r : tensor<16x?x64xf32>
}

// -----

// On memrefs, bottom-right causal: packed and not causal where Lq = 1 (the
// one query sees every key), else, where the tile test says so, packed
// with the query length as its causal period.
// CHECK-LABEL: func.func @dynamic_rows_causal
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x16x?x128xbf16>
// CHECK: %[[LQ:.*]] = memref.dim %[[Q]], %c2
// CHECK: %[[FILLS:.*]] = arith.cmpi ult
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[LQ]], %c1
// CHECK: scf.if %[[ONE]] {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : memref<?x4x?x128xbf16>) scale = 1.250000e-01{{$}}
// CHECK: } else {
// CHECK: scf.if %[[FILLS]] {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : memref<?x4x?x128xbf16>) scale = 1.250000e-01 causal = bottom_right causal_period(%[[LQ]]){{$}}
// CHECK: } else {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : memref<?x16x?x128xbf16>) scale = 1.250000e-01 causal = bottom_right{{$}}
// CHECK: }
// CHECK: }
// CHECK-NEXT: return
func.func @dynamic_rows_causal(%q: memref<?x16x?x128xbf16>, %k: memref<?x4x?x128xbf16>,
                               %v: memref<?x4x?x128xbf16>, %m: memref<?x1x1x?xi1>,
                               %o: memref<?x16x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x16x?x128xbf16>, memref<?x4x?x128xbf16>, memref<?x4x?x128xbf16>)
                 mask(%m : memref<?x1x1x?xi1>) outs(%o : memref<?x16x?x128xbf16>)
                 scale = 0.125 causal = bottom_right
  return
}

// -----

// Top-left, on tensors: the tile test alone (one query sees its first key
// only, so Lq = 1 is not special).
// CHECK-LABEL: func.func @dynamic_rows_top_left
// CHECK: %[[LQ:.*]] = tensor.dim
// CHECK: %[[FILLS:.*]] = arith.cmpi ult
// CHECK-NOT: arith.cmpi eq
// CHECK: %[[R:.*]] = scf.if %[[FILLS]] -> (tensor<8x?x64xf16>) {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : tensor<2x?x64xf16>) scale = 1.250000e-01 causal = top_left causal_period(%[[LQ]]) -> tensor<2x?x64xf16>
// CHECK: } else {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : tensor<8x?x64xf16>) scale = 1.250000e-01 causal = top_left -> tensor<8x?x64xf16>
// CHECK: return %[[R]]
func.func @dynamic_rows_top_left(%q: tensor<8x?x64xf16>, %k: tensor<2x?x64xf16>,
                                 %v: tensor<2x?x64xf16>, %o: tensor<8x?x64xf16>) -> tensor<8x?x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<8x?x64xf16>, tensor<2x?x64xf16>, tensor<2x?x64xf16>)
                      outs(%o : tensor<8x?x64xf16>) scale = 0.125 causal = top_left -> tensor<8x?x64xf16>
  return %r : tensor<8x?x64xf16>
}

// -----

// Causal rows: 4 heads of 4 queries keep bottom-right alignment for a
// period of 4 queries (row i is query i mod 4). One query with top-left
// alignment sees the first key only: a period of 1.
// CHECK-LABEL: func.func @causal
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>) outs(%{{.*}} : tensor<2x16x64xf16>) scale = 1.250000e-01 causal = bottom_right causal_period(%[[C4]]) -> tensor<2x16x64xf16>
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>) outs(%{{.*}} : tensor<2x4x64xf16>) scale = 1.250000e-01 causal = top_left causal_period(%[[C1]]) -> tensor<2x4x64xf16>
func.func @causal(%q: tensor<8x4x64xf16>, %k: tensor<2x9x64xf16>,
                  %v: tensor<2x9x64xf16>, %o: tensor<8x4x64xf16>,
                  %q1: tensor<8x1x64xf16>, %o1: tensor<8x1x64xf16>)
    -> (tensor<8x4x64xf16>, tensor<8x1x64xf16>) {
  %0 = attn.attention ins(%q, %k, %v : tensor<8x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      outs(%o : tensor<8x4x64xf16>) scale = 0.125 causal = bottom_right -> tensor<8x4x64xf16>
  %1 = attn.attention ins(%q1, %k, %v : tensor<8x1x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      outs(%o1 : tensor<8x1x64xf16>) scale = 0.125 causal = top_left -> tensor<8x1x64xf16>
  return %0, %1 : tensor<8x4x64xf16>, tensor<8x1x64xf16>
}

// -----

// 128 queries fill 128-row tiles already: packing would not read K/V less.
// CHECK-LABEL: func.func @long_query
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x128x64xf16>,
// ANY-LABEL: func.func @long_query
// ANY: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x512x64xf16>,
func.func @long_query(%q: tensor<8x128x64xf16>, %k: tensor<2x128x64xf16>,
                      %v: tensor<2x128x64xf16>, %o: tensor<8x128x64xf16>) -> tensor<8x128x64xf16> {
  // expected-remark @below {{query heads not packed: its 128-row tiles are filled as well unpacked}}
  %r = attn.attention ins(%q, %k, %v : tensor<8x128x64xf16>, tensor<2x128x64xf16>, tensor<2x128x64xf16>)
                      outs(%o : tensor<8x128x64xf16>) scale = 0.125 -> tensor<8x128x64xf16>
  return %r : tensor<8x128x64xf16>
}

// -----

// What is left as it is.
// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: expand_shape
// CHECK-NOT: collapse_shape
// CHECK: return
func.func @not_packed(%q: tensor<8x4x64xf16>, %k: tensor<2x9x64xf16>,
                      %v: tensor<2x9x64xf16>, %o: tensor<8x4x64xf16>,
                      %q1: tensor<8x1x64xf16>, %o1: tensor<8x1x64xf16>,
                      %mh: tensor<1x4x9xi1>, %mr: tensor<8x1x9xf16>,
                      %qm: tensor<2x4x64xf16>, %om: tensor<2x4x64xf16>,
                      %c: index) {
  // Rows that are already groups of queries (and the heads of a group).
  // expected-remark @below {{query heads not packed: it has a causal period}}
  %1 = attn.attention ins(%q, %k, %v : tensor<8x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      outs(%o : tensor<8x4x64xf16>) scale = 0.125 causal = top_left causal_period(%c) -> tensor<8x4x64xf16>
  // expected-remark @below {{query heads not packed: it has a causal offset}}
  %2 = attn.attention ins(%q1, %k, %v : tensor<8x1x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      outs(%o1 : tensor<8x1x64xf16>) scale = 0.125 causal = top_left causal_offset(%c) -> tensor<8x1x64xf16>
  // Packed, a mask shared by the heads but not the rows (or the other way)
  // would have to be repeated per head of the group.
  // expected-remark @below {{query heads not packed: a mask or bias broadcasts over only one of the query heads and the query rows}}
  %3 = attn.attention ins(%q, %k, %v : tensor<8x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      mask(%mh : tensor<1x4x9xi1>) outs(%o : tensor<8x4x64xf16>) scale = 0.125 -> tensor<8x4x64xf16>
  // expected-remark @below {{query heads not packed: a mask or bias broadcasts over only one of the query heads and the query rows}}
  %4 = attn.attention ins(%q, %k, %v : tensor<8x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      bias(%mr : tensor<8x1x9xf16>) outs(%o : tensor<8x4x64xf16>) scale = 0.125 -> tensor<8x4x64xf16>
  // Multi-head attention has nothing to pack (and no remark).
  %6 = attn.attention ins(%qm, %k, %v : tensor<2x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      outs(%om : tensor<2x4x64xf16>) scale = 0.125 -> tensor<2x4x64xf16>
  return
}

// -----

// A strided memref whose heads are not `rows` apart cannot be viewed packed.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: expand_shape
// CHECK: return
func.func @strided(%q: memref<8x2x64xf16, strided<[256, 64, 1]>>, %k: memref<2x9x64xf16>,
                   %v: memref<2x9x64xf16>, %o: memref<8x2x64xf16>) {
  // expected-remark @below {{query heads not packed: an operand's layout does not make the group and the rows one dim}}
  attn.attention ins(%q, %k, %v : memref<8x2x64xf16, strided<[256, 64, 1]>>, memref<2x9x64xf16>, memref<2x9x64xf16>)
                 outs(%o : memref<8x2x64xf16>) scale = 0.125
  return
}

// -----

// Head counts known only at run time: the group g = Hq / Hkv is computed
// there, and so is the tile test (here with Lq = 1, true iff g > 1); the
// views take Hkv and g as their output sizes. Bottom-right causal masking
// of one query is dropped as with static heads.
// CHECK-LABEL: func.func @dynamic_heads
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x?x1x64xf16>, %[[K:[a-z0-9]+]]: tensor<2x?x?x64xf16>, %[[V:[a-z0-9]+]]: tensor<2x?x?x64xf16>, %[[O:[a-z0-9]+]]: tensor<2x?x1x64xf16>
// CHECK: %[[HKV:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<2x?x?x64xf16>
// CHECK: %[[HQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<2x?x1x64xf16>
// CHECK: %[[G:.*]] = arith.divui %[[HQ]], %[[HKV]]
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %[[G]]
// CHECK: %[[PT:.*]] = arith.ceildivui %[[ROWS]], %c128
// CHECK: %[[T:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: %[[A:.*]] = arith.muli %[[PT]], %c10
// CHECK: %[[TG:.*]] = arith.muli %[[T]], %[[G]]
// CHECK: %[[B:.*]] = arith.muli %[[TG]], %c9
// CHECK: %[[FILLS:.*]] = arith.cmpi ult, %[[A]], %[[B]]
// CHECK: %[[R:.*]] = scf.if %[[FILLS]] -> (tensor<2x?x1x64xf16>) {
// CHECK: %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, %[[HKV]], %[[G]], 1, 64] : tensor<2x?x1x64xf16> into tensor<2x?x?x1x64xf16>
// CHECK: %[[QP:.*]] = tensor.collapse_shape %[[QE]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x?x?x1x64xf16> into tensor<2x?x?x64xf16>
// CHECK: %[[PACKED:.*]] = attn.attention ins(%[[QP]], %[[K]], %[[V]] : tensor<2x?x?x64xf16>, tensor<2x?x?x64xf16>, tensor<2x?x?x64xf16>) outs(%{{.*}} : tensor<2x?x?x64xf16>) scale = 1.250000e-01 -> tensor<2x?x?x64xf16>
// CHECK: %[[RE:.*]] = tensor.expand_shape %[[PACKED]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, %[[HKV]], %[[G]], 1, 64] : tensor<2x?x?x64xf16> into tensor<2x?x?x1x64xf16>
// CHECK: tensor.collapse_shape %[[RE]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x?x?x1x64xf16> into tensor<2x?x1x64xf16>
// CHECK: } else {
// CHECK: attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs(%[[O]] : tensor<2x?x1x64xf16>) scale = 1.250000e-01 causal = bottom_right
// CHECK: return %[[R]]
// Without the tile test, packing where the group has more than one head.
// ANY-LABEL: func.func @dynamic_heads
// ANY: %[[G:.*]] = arith.divui
// ANY: %[[ONE:.*]] = arith.constant 1 : index
// ANY: %[[GROUPED:.*]] = arith.cmpi ugt, %[[G]], %[[ONE]]
// ANY: scf.if %[[GROUPED]] -> (tensor<2x?x1x64xf16>) {
// ANY: attn.attention {{.*}} -> tensor<2x?x?x64xf16>
// ANY: } else {
// ANY: attn.attention {{.*}} causal = bottom_right -> tensor<2x?x1x64xf16>
// With the kernel for few rows, one static query row has it, and g packed
// rows have it where g, at most 16, is a sum of the cases taken largest
// first. With the cases 1, 2, 4 and 8 every g up to 16 is: the tile test
// alone. With 2, 4 and 8 an even g is: the tile test is and-ed with "not
// (g <= 16, g odd and 2g < 128)" (a group of half the 128-row tile still
// packs).
// ALL-LABEL: func.func @dynamic_heads
// ALL: %[[FILLS:.*]] = arith.cmpi ult
// ALL-NOT: arith.xori
// ALL: scf.if %[[FILLS]]
// FEW-LABEL: func.func @dynamic_heads
// FEW: %[[G:.*]] = arith.divui
// FEW: %[[FILLS:.*]] = arith.cmpi ult
// FEW: %[[FEWROWS:.*]] = arith.cmpi ule, %[[G]], %c16
// FEW: %[[BY8:.*]] = arith.remui %[[G]], %c8
// FEW: %[[BY4:.*]] = arith.remui %[[BY8]], %c4
// FEW: %[[BY2:.*]] = arith.remui %[[BY4]], %c2
// FEW: %[[ODD:.*]] = arith.cmpi ne, %[[BY2]], %c0
// FEW: %[[FEWLOSES:.*]] = arith.andi %[[FEWROWS]], %[[ODD]]
// FEW: %[[TWOG:.*]] = arith.muli %[[G]], %c2
// FEW: %[[SMALLG:.*]] = arith.cmpi ult, %[[TWOG]], %c128
// FEW: %[[LOSES:.*]] = arith.andi %[[FEWLOSES]], %[[SMALLG]]
// FEW: %[[KEEPS:.*]] = arith.xori %[[LOSES]], %true
// FEW: %[[PACK:.*]] = arith.andi %[[FILLS]], %[[KEEPS]]
// FEW: scf.if %[[PACK]]
// FEW: tensor.expand_shape
// FEW: } else {
// FEW: attn.attention {{.*}} causal = bottom_right -> tensor<2x?x1x64xf16>
func.func @dynamic_heads(%q: tensor<2x?x1x64xf16>, %k: tensor<2x?x?x64xf16>,
                         %v: tensor<2x?x?x64xf16>, %o: tensor<2x?x1x64xf16>) -> tensor<2x?x1x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x?x1x64xf16>, tensor<2x?x?x64xf16>, tensor<2x?x?x64xf16>)
                      outs(%o : tensor<2x?x1x64xf16>) scale = 0.125 causal = bottom_right -> tensor<2x?x1x64xf16>
  return %r : tensor<2x?x1x64xf16>
}

// -----

// Everything dynamic on memrefs, with a static Hkv: Lq = 1 first, then the
// tile test on the run-time Lq and g. A mask whose dims are all dynamic is
// full (a broadcast is a static 1) and is packed with the query.
// CHECK-LABEL: func.func @dynamic_heads_memref
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x?x128xbf16>, %[[K:[a-z0-9]+]]: memref<?x4x?x128xbf16>, %[[V:[a-z0-9]+]]: memref<?x4x?x128xbf16>, %[[M:[a-z0-9]+]]: memref<?x?x?x?xi1>
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %c1
// CHECK: %[[G:.*]] = arith.divui %[[HQ]], %c4
// CHECK: %[[LQ:.*]] = memref.dim %[[Q]], %c2
// CHECK: %[[FILLS:.*]] = arith.cmpi ult
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[LQ]], %c1
// CHECK: scf.if %[[ONE]] {
// CHECK: memref.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 4, %[[G]], %{{.*}}, 128] : memref<?x?x?x128xbf16> into memref<?x4x?x?x128xbf16>
// CHECK: memref.expand_shape %[[M]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [%{{.*}}, 4, %[[G]], %{{.*}}, %{{.*}}] : memref<?x?x?x?xi1> into memref<?x4x?x?x?xi1>
// CHECK: attn.attention {{.*}} mask(%{{.*}} : memref<?x4x?x?xi1>) outs(%{{.*}} : memref<?x4x?x128xbf16>) scale = 1.250000e-01{{$}}
// CHECK: } else {
// CHECK: scf.if %[[FILLS]] {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : memref<?x4x?x128xbf16>) scale = 1.250000e-01 causal = bottom_right causal_period(%[[LQ]]){{$}}
// CHECK: } else {
// CHECK: attn.attention {{.*}} outs(%{{.*}} : memref<?x?x?x128xbf16>) scale = 1.250000e-01 causal = bottom_right{{$}}
// With the kernel for few rows, Lq = 1 is packed only where packing keeps
// it (the same test as above, on g), the rest after the tile test.
// FEW-LABEL: func.func @dynamic_heads_memref
// FEW: scf.if %{{.*}} {
// FEW-NEXT: scf.if %{{.*}} {
// FEW-NEXT: attn.attention {{.*}} outs(%{{.*}} : memref<?x?x?x128xbf16>) scale = 1.250000e-01 causal = bottom_right{{$}}
// FEW: } else {
// FEW: memref.expand_shape
// FEW: attn.attention {{.*}} outs(%{{.*}} : memref<?x4x?x128xbf16>) scale = 1.250000e-01{{$}}
// FEW: } else {
// FEW: scf.if
// FEW: memref.expand_shape
// FEW: causal_period
func.func @dynamic_heads_memref(%q: memref<?x?x?x128xbf16>, %k: memref<?x4x?x128xbf16>,
                                %v: memref<?x4x?x128xbf16>, %m: memref<?x?x?x?xi1>,
                                %o: memref<?x?x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x?x?x128xbf16>, memref<?x4x?x128xbf16>, memref<?x4x?x128xbf16>)
                 mask(%m : memref<?x?x?x?xi1>) outs(%o : memref<?x?x?x128xbf16>)
                 scale = 0.125 causal = bottom_right
  return
}

// -----

// A mask with a dynamic row dim has a row per query (a broadcast is a
// static 1), so it is packed; its static heads split into Hkv and g.
// CHECK-LABEL: func.func @dynamic_mask_rows
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [2, 4, %{{.*}}, 9] : tensor<8x?x9xi1> into tensor<2x4x?x9xi1>
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>) mask(%{{.*}} : tensor<2x?x9xi1>) outs(%{{.*}} : tensor<2x16x64xf16>)
func.func @dynamic_mask_rows(%q: tensor<8x4x64xf16>, %k: tensor<2x9x64xf16>,
                             %v: tensor<2x9x64xf16>, %m: tensor<8x?x9xi1>,
                             %o: tensor<8x4x64xf16>) -> tensor<8x4x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<8x4x64xf16>, tensor<2x9x64xf16>, tensor<2x9x64xf16>)
                      mask(%m : tensor<8x?x9xi1>) outs(%o : tensor<8x4x64xf16>) scale = 0.125 -> tensor<8x4x64xf16>
  return %r : tensor<8x4x64xf16>
}

// -----

// A static query head count split by a dynamic Hkv has no typed view.
// CHECK-LABEL: func.func @static_query_heads_dynamic_kv_heads
// CHECK-NOT: expand_shape
// CHECK: return
func.func @static_query_heads_dynamic_kv_heads(%q: tensor<8x20x64xf16>, %k: tensor<?x9x64xf16>,
                                               %v: tensor<?x9x64xf16>, %o: tensor<8x20x64xf16>) -> tensor<8x20x64xf16> {
  // expected-remark @below {{query heads not packed: an operand has a static head count and the key/value head count is not static}}
  %r = attn.attention ins(%q, %k, %v : tensor<8x20x64xf16>, tensor<?x9x64xf16>, tensor<?x9x64xf16>)
                      outs(%o : tensor<8x20x64xf16>) scale = 0.125 -> tensor<8x20x64xf16>
  return %r : tensor<8x20x64xf16>
}
