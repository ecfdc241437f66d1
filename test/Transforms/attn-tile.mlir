// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=32" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-tile="q-tile=16 online-softmax=false" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=TILE-ONLY

// Causal bottom_right, Lq = 64, Lk = 100: the tile of rows [i, i+16) sees
// keys j <= row + 36, so its diagonal is d = i + 36. Blocks below
// floor((d + 1) / 32) * 32 are visible to all of its rows and run unmasked;
// the key loop ends at min(i + 16 + 36, 100).

// CHECK-DAG: #[[$DIAG:.*]] = affine_map<(d0) -> (d0 + 36)>
// CHECK-DAG: #[[$KCOL:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func @causal_block_skipping
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C100:.*]] = arith.constant 100 : index
// Scale 0.25 and log2(e) folded into one multiply of q.
// CHECK-DAG: %[[QSCALE:.*]] = arith.constant dense<0.360673755> : vector<16xf32>
// CHECK: scf.forall (%[[B:.*]], %[[I:.*]]) = (0, 0) to (2, 64) step (1, 16)
// CHECK: %[[D:.*]] = affine.apply #[[$DIAG]](%[[I]])
// q^T [Dqk, rows] built once per tile, a scaled column of q per step, in a
// [32, 16] scratch.
// CHECK: %[[QT:.*]] = scf.for %[[QD:.*]] = %[[C0]] to %[[C32]] step %[[C1]] iter_args(%[[QACC:.*]] = %{{.*}}) -> (tensor<32x16xf32>)
// CHECK:   %[[QV:.*]] = vector.transfer_read {{.*}}[%[[C0]], %[[C0]], %[[QD]]], {{.*}} {in_bounds = [true], permutation_map = #[[$KCOL]]} : tensor<1x16x32xf16>, vector<16xf16>
// CHECK:   %[[QF:.*]] = arith.extf %[[QV]]
// CHECK:   %[[QS:.*]] = arith.mulf %[[QF]], %[[QSCALE]] : vector<16xf32>
// CHECK:   vector.transfer_write %[[QS]], %[[QACC]][%[[QD]], %[[C0]]] {in_bounds = [true]} : vector<16xf32>, tensor<32x16xf32>
// CHECK: %[[LAST:.*]] = arith.addi %[[D]], %[[C16]] : index
// CHECK: %[[LASTLO:.*]] = arith.maxsi %[[LAST]], %[[C0]] : index
// CHECK: %[[KVEND:.*]] = arith.minsi %[[LASTLO]], %[[C100]] : index
// CHECK: %[[FIRST:.*]] = arith.addi %[[D]], %[[C1]] : index
// CHECK: %[[FIRSTLO:.*]] = arith.maxsi %[[FIRST]], %[[C0]] : index
// CHECK: %[[FULL:.*]] = arith.minsi %[[FIRSTLO]], %[[C100]] : index
// CHECK: %[[NFULL:.*]] = arith.divsi %[[FULL]], %[[C32]] : index
// CHECK: %[[FULLEND:.*]] = arith.muli %[[NFULL]], %[[C32]] : index
//
// The accumulator, transposed (oT[Dv, rows]), starts at 0, 8 columns at a
// time.
// CHECK: %[[OT0:.*]] = scf.for %{{.*}} = %[[C0]] to %[[C16]] step %[[C8]] iter_args(%{{.*}}) -> (tensor<16x16xf32>)
// CHECK:   vector.transfer_write %{{.*}} : vector<8x16xf32>, tensor<16x16xf32>
//
// Blocks every row sees: in-bounds reads, no element mask. Scores are kept
// keys-major, sT[32 keys, 16 rows]: four register blocks of 8 keys x 16
// rows, each a sum of outer products over Dqk.
// CHECK: %[[A:.*]]:4 = scf.for %[[J:.*]] = %[[C0]] to %[[FULLEND]] step %[[C32]] iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[OT0]], %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, tensor<16x16xf32>, tensor<32x16xf32>)
// CHECK:   %[[S0:.*]] = scf.for %[[DD:.*]] = %[[C0]] to %[[C32]] step %[[C1]] iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK:     vector.transfer_read {{.*}}[%[[C0]], %[[J]], %[[DD]]]{{.*}} {in_bounds = [true], permutation_map = #[[$KCOL]]} : tensor<1x100x32xf16>, vector<8xf16>
// CHECK:     vector.transfer_read %[[QT]][%[[DD]], %[[C0]]]
// CHECK:     vector.outerproduct {{.*}} : vector<8xf32>, vector<16xf32>
// CHECK:   vector.insert_strided_slice %[[S0]], %{{.*}} {offsets = [0, 0], strides = [1, 1]} : vector<8x16xf32> into vector<32x16xf32>
// CHECK:   %[[J8:.*]] = arith.addi %[[J]], %[[C8]] : index
// CHECK:   vector.transfer_read {{.*}}[%[[C0]], %[[J8]], %{{.*}}]{{.*}} : tensor<1x100x32xf16>, vector<8xf16>
// CHECK:   vector.insert_strided_slice {{.*}} {offsets = [8, 0], strides = [1, 1]}
// CHECK:   vector.insert_strided_slice {{.*}} {offsets = [16, 0], strides = [1, 1]}
// CHECK:   %[[S:.*]] = vector.insert_strided_slice {{.*}} {offsets = [24, 0], strides = [1, 1]}
// CHECK-NOT: arith.cmpi
// CHECK:   vector.multi_reduction <maximumf>, %[[S]], %{{.*}} [0] : vector<32x16xf32> to vector<16xf32>
// CHECK:   math.exp2
// CHECK:   %[[ALPHA:.*]] = math.exp2
// CHECK:   vector.multi_reduction <add>, %{{.*}} [0] : vector<32x16xf32> to vector<16xf32>
// p.v: oT[e0 : e0 + 8, :] is rescaled by alpha, then held in registers
// (8 columns x 16 rows) over the block's keys.
// CHECK:   scf.for %[[E0:.*]] = %[[C0]] to %[[C16]] step %[[C8]] iter_args(%[[OT:.*]] = %{{.*}}) -> (tensor<16x16xf32>)
// CHECK:     vector.transfer_read %[[OT]][%[[E0]], %[[C0]]]{{.*}} : tensor<16x16xf32>, vector<8x16xf32>
// CHECK:     vector.broadcast %[[ALPHA]] : vector<16xf32> to vector<8x16xf32>
// CHECK:     scf.for %{{.*}} = %[[C0]] to %[[C32]] step %[[C1]] iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK:       vector.transfer_read {{.*}}[%[[C0]], %{{.*}}, %[[E0]]]{{.*}} : tensor<1x100x16xf16>, vector<8xf16>
// CHECK:       vector.outerproduct {{.*}} : vector<8xf32>, vector<16xf32>
// CHECK:     vector.transfer_write %{{.*}}, %[[OT]][%[[E0]], %[[C0]]] {in_bounds = [true, true]} : vector<8x16xf32>, tensor<16x16xf32>
// CHECK:   scf.yield
//
// Blocks that cross the diagonal or the end of the keys: masked, and the
// p.v loop stops at the last key.
// CHECK: %[[M:.*]]:4 = scf.for %[[J2:.*]] = %[[FULLEND]] to %[[KVEND]] step %[[C32]] iter_args(%{{.*}} = %[[A]]#0, %{{.*}} = %[[A]]#1, %{{.*}} = %[[A]]#2, %{{.*}} = %[[A]]#3)
// CHECK:   vector.transfer_read {{.*}} {permutation_map = #[[$KCOL]]} : tensor<1x100x32xf16>, vector<8xf16>
// CHECK:   arith.cmpi slt
// CHECK:   arith.cmpi sle
// CHECK:   arith.select
// CHECK:   %[[REST:.*]] = arith.subi %[[C100]], %[[J2]] : index
// CHECK:   %[[NKEYS:.*]] = arith.minsi %[[REST]], %[[C32]] : index
// CHECK:   scf.for %{{.*}} = %[[C0]] to %[[NKEYS]] step %[[C1]]
// CHECK:   scf.yield
//
// One division per row; rows that saw no key give 0.
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[M]]#1, %{{.*}} : vector<16xf32>
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[M]]#1 : vector<16xf32>
// CHECK: arith.select %[[POS]], %[[INV]], %{{.*}} : vector<16xi1>, vector<16xf32>
// The output, 8 columns at a time: oT scaled, transposed back to rows.
// CHECK: scf.for %[[O0:.*]] = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK:   vector.transpose %{{.*}}, [1, 0] : vector<8x16xf32> to vector<16x8xf32>
// CHECK:   arith.truncf %{{.*}} : vector<16x8xf32> to vector<16x8xf16>
// CHECK:   vector.transfer_write %{{.*}}[%[[C0]], %[[C0]], %[[O0]]] {in_bounds = [true, true]} : vector<16x8xf16>, tensor<1x16x16xf16>
// CHECK: scf.forall.in_parallel

// TILE-ONLY-LABEL: func @causal_block_skipping
// TILE-ONLY: scf.forall
// TILE-ONLY: attn.attention {{.*}} : tensor<1x16x32xf16>, tensor<1x100x32xf16>, tensor<1x100x16xf16>) outs({{.*}}) scale = 2.500000e-01 causal = top_left causal_offset
func.func @causal_block_skipping(%q: tensor<2x64x32xf16>, %k: tensor<2x100x32xf16>, %v: tensor<2x100x16xf16>,
                                 %o: tensor<2x64x16xf16>) -> tensor<2x64x16xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x64x32xf16>, tensor<2x100x32xf16>, tensor<2x100x16xf16>)
         outs(%o : tensor<2x64x16xf16>) scale = 0.25 causal = bottom_right -> tensor<2x64x16xf16>
  return %r : tensor<2x64x16xf16>
}

// -----

// Non-causal with Lk = 100 = 3 * 32 + 4: three unmasked blocks, then the
// tail block with the bounds mask (one iteration, so the canonicalizer
// inlines that loop). Lq = 40 = 2 * 16 + 8: the last tile has
// 8 of its 16 rows, so q is read and the output written with in_bounds
// false on the rows.

// CHECK-LABEL: func @tails
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 40) step (1, 16)
// CHECK: vector.transfer_read {{.*}} {permutation_map = #{{.*}}} : tensor<1x?x64xf32>, vector<16xf32>
// CHECK: %[[FULL:.*]]:4 = scf.for %{{.*}} = %c0 to %c96 step %c32
// The tail block: a single iteration, inlined by the canonicalizer.
// CHECK: vector.transfer_read {{.*}}[%c0, %c96, %{{.*}}], {{.*}} {permutation_map = #{{.*}}} : tensor<1x100x64xf32>, vector<8xf32>
// CHECK: arith.cmpi slt
// CHECK: arith.maximumf %[[FULL]]#0
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<16x8xf32>, tensor<1x?x64xf32>
func.func @tails(%q: tensor<4x40x64xf32>, %k: tensor<4x100x64xf32>, %o: tensor<4x40x64xf32>) -> tensor<4x40x64xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<4x40x64xf32>, tensor<4x100x64xf32>, tensor<4x100x64xf32>)
         outs(%o : tensor<4x40x64xf32>) scale = 0.125 -> tensor<4x40x64xf32>
  return %r : tensor<4x40x64xf32>
}

// -----

// A boolean mask becomes an additive f16 mask once; its broadcast query dim
// is read as a broadcast (permutation map result 0). The bias is scaled by
// log2(e) like the scores.

// CHECK-DAG: #[[$BCAST:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, 0)>
// CHECK-LABEL: func @mask_and_bias
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x1x48xi1>) outs(%{{.*}} : tensor<2x1x1x48xf16>)
// CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : f16
// CHECK: scf.forall
// CHECK: vector.transfer_read %{{.*}} {in_bounds = [true], permutation_map = #{{.*}}} : tensor<1x1x8x16xbf16>, vector<8xbf16>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, true], permutation_map = #[[$BCAST]]} : tensor<1x1x1x48xf32>, vector<32x8xf32>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, true], permutation_map = #[[$BCAST]]} : tensor<1x1x1x48xf16>, vector<32x8xf16>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [false, true], permutation_map = #[[$BCAST]]} : tensor<1x1x1x48xf32>, vector<32x8xf32>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [false, true], permutation_map = #[[$BCAST]]} : tensor<1x1x1x48xf16>, vector<32x8xf16>
func.func @mask_and_bias(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x48x16xbf16>, %m: tensor<2x1x1x48xi1>,
                         %b: tensor<1x4x1x48xf32>, %o: tensor<2x4x8x16xbf16>) -> tensor<2x4x8x16xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x8x16xbf16>, tensor<2x4x48x16xbf16>, tensor<2x4x48x16xbf16>)
         mask(%m : tensor<2x1x1x48xi1>) bias(%b : tensor<1x4x1x48xf32>) outs(%o : tensor<2x4x8x16xbf16>)
         scale = 0.25 -> tensor<2x4x8x16xbf16>
  return %r : tensor<2x4x8x16xbf16>
}

// -----

// Memref ops and dynamic head dims are left for --attn-decompose.

// CHECK-LABEL: func @left_alone
// CHECK: attn.attention {{.*}} : memref<4x8x16xf32>
// CHECK: attn.attention {{.*}} : tensor<4x8x?xf32>
func.func @left_alone(%q: memref<4x8x16xf32>, %o: memref<4x8x16xf32>, %t: tensor<4x8x?xf32>,
                      %to: tensor<4x8x?xf32>) -> tensor<4x8x?xf32> {
  attn.attention ins(%q, %q, %q : memref<4x8x16xf32>, memref<4x8x16xf32>, memref<4x8x16xf32>)
    outs(%o : memref<4x8x16xf32>) scale = 0.25
  %r = attn.attention ins(%t, %t, %t : tensor<4x8x?xf32>, tensor<4x8x?xf32>, tensor<4x8x?xf32>)
         outs(%to : tensor<4x8x?xf32>) scale = 0.25 -> tensor<4x8x?xf32>
  return %r : tensor<4x8x?xf32>
}

// -----

// Packed grouped-query rows, a causal period of 10 queries with
// bottom_right alignment (diagonal Lk - 10 = 90): a tile's row r is query
// (i + r) mod 10, a limit per row. Its rows run from query i mod 10 and
// wrap where they pass query 9, and then hold every query: the key loop
// ends after the last query's window, the unmasked blocks end before the
// first query's.
// CHECK-LABEL: func @causal_period
// CHECK: scf.forall (%{{.*}}, %[[I:.*]]) = (0, 0) to (2, 40) step (1, 16)
// CHECK: %[[ROWS:.*]] = affine.min #{{.*}}(%[[I]])
// CHECK: %[[STEP:.*]] = vector.step : vector<16xindex>
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[QUERY:.*]] = arith.remui %[[ROW]], %{{.*}} : vector<16xi32>
// CHECK: %[[LIMITS:.*]] = arith.addi %[[QUERY]], %{{.*}} : vector<16xi32>
// CHECK: %[[FIRST:.*]] = arith.remui %[[I]], %c10 : index
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %[[ROWS]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1 : index
// CHECK: %[[WRAPS:.*]] = arith.cmpi sge, %[[LAST]], %c10 : index
// CHECK: %[[MAXQ:.*]] = arith.select %[[WRAPS]], %c9, %[[LAST]] : index
// CHECK: %[[MINQ:.*]] = arith.select %[[WRAPS]], %c0, %[[FIRST]] : index
// CHECK: arith.addi %[[MAXQ]], %c91 : index
// CHECK: arith.addi %[[MINQ]], %c91 : index
// CHECK: vector.broadcast %[[LIMITS]] : vector<16xi32> to vector<32x16xi32>
func.func @causal_period(%q: tensor<2x40x32xf16>, %k: tensor<2x100x32xf16>, %v: tensor<2x100x16xf16>,
                         %o: tensor<2x40x16xf16>) -> tensor<2x40x16xf16> {
  %c10 = arith.constant 10 : index
  %0 = attn.attention ins(%q, %k, %v : tensor<2x40x32xf16>, tensor<2x100x32xf16>, tensor<2x100x16xf16>)
         outs(%o : tensor<2x40x16xf16>) scale = 0.25 causal = bottom_right causal_period(%c10) -> tensor<2x40x16xf16>
  return %0 : tensor<2x40x16xf16>
}

// -----

// A tile of 6 rows (Lq = 6) is computed on vectors of 8 rows, the next power
// of two (LLVM builds vectors of other lengths element by element): q's
// rows past the 6th are read as 0, and the output's are not written.
// CHECK-LABEL: func @rows_padded_to_power_of_two
// CHECK: vector.transfer_read {{.*}} {permutation_map = #{{.*}}} : tensor<1x6x32xf32>, vector<8xf32>
// CHECK: vector.multi_reduction <maximumf>, %{{.*}}, %{{.*}} [0] : vector<32x8xf32> to vector<8xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<8x8xf32>, tensor<1x6x16xf32>
func.func @rows_padded_to_power_of_two(%q: tensor<2x6x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x16xf32>,
                                       %o: tensor<2x6x16xf32>) -> tensor<2x6x16xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x6x32xf32>, tensor<2x64x32xf32>, tensor<2x64x16xf32>)
         outs(%o : tensor<2x6x16xf32>) scale = 0.25 -> tensor<2x6x16xf32>
  return %r : tensor<2x6x16xf32>
}
