// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=32 row-major-rows=0" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-tile="q-tile=16 online-softmax=false" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=TILE-ONLY
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=32" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=ROW
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=32 row-major-rows=4" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=ROW4
// RUN: attn-opt %s --attn-tile="q-tile=16 kv-tile=32 dynamic-row-cases=3" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=CASE3
// RUN: attn-opt %s --attn-tile="q-tile=64 kv-tile=32" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=GROUPS

// Prefix CHECK tests the keys-major kernel (row-major-rows=0), prefix ROW
// the defaults, where tiles of at most 32 static rows take the row-major
// kernel.

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
// A column of the block's 8 keys is 8 scalar loads (their rows computed
// once, outside the loop over Dqk).
// CHECK:   %[[J1:.*]] = arith.addi %[[J]], %[[C1]] : index
// CHECK:   %[[S0:.*]] = scf.for %[[DD:.*]] = %[[C0]] to %[[C32]] step %[[C1]] iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK:     %[[K0:.*]] = tensor.extract %[[KEY:.*]][%[[C0]], %[[J]], %[[DD]]] : tensor<1x100x32xf16>
// CHECK:     %[[K1:.*]] = tensor.extract %[[KEY]][%[[C0]], %[[J1]], %[[DD]]] : tensor<1x100x32xf16>
// CHECK:     %[[KCOL:.*]] = vector.from_elements %[[K0]], %[[K1]], {{.*}} : vector<8xf16>
// CHECK:     %[[KF:.*]] = arith.extf %[[KCOL]] : vector<8xf16> to vector<8xf32>
// CHECK:     %[[QCOL:.*]] = vector.transfer_read %[[QT]][%[[DD]], %[[C0]]]
// CHECK:     vector.outerproduct %[[KF]], %[[QCOL]], %{{.*}} {kind = #vector.kind<add>} : vector<8xf32>, vector<16xf32>
// CHECK:   vector.insert_strided_slice %[[S0]], %{{.*}} {offsets = [0, 0], strides = [1, 1]} : vector<8x16xf32> into vector<32x16xf32>
// CHECK:   %[[J8:.*]] = arith.addi %[[J]], %[[C8]] : index
// CHECK:   scf.for
// CHECK:     tensor.extract %[[KEY]][%[[C0]], %[[J8]], %{{.*}}] : tensor<1x100x32xf16>
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
// Keys past the end read the last one (their scores are -inf below).
// CHECK:   %[[K99:.*]] = arith.minsi %[[J2]], %[[C99:.*]] : index
// CHECK:   scf.for
// CHECK:     tensor.extract %{{.*}}[%[[C0]], %[[K99]], %{{.*}}] : tensor<1x100x32xf16>
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
// CHECK: tensor.extract {{.*}}[%c0, %c96, %{{.*}}] : tensor<1x100x64xf32>
// CHECK: tensor.extract {{.*}}[%c0, %c99, %{{.*}}] : tensor<1x100x64xf32>
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

// A full bias ([Lq, Lk] per batch), 16-row tiles: each 16 x 16 block of the
// keys-major scores reads 16 rows of the bias along the keys (no
// permutation map) and transposes them with four rounds of shuffles.

// CHECK-LABEL: func @full_bias
// The one full key block (its loop inlined): keys 0 to 15 of 16 rows.
// CHECK: %[[ROWS:.*]] = vector.transfer_read %[[BIAS:.*]][%c0, %c0, %c0], %{{.*}} {in_bounds = [false, true]} : tensor<1x?x50xf32>, vector<16x16xf32>
// CHECK: %[[R0:.*]] = vector.extract %[[ROWS]][0] : vector<16xf32> from vector<16x16xf32>
// CHECK: %[[R8:.*]] = vector.extract %[[ROWS]][8] : vector<16xf32> from vector<16x16xf32>
// CHECK: vector.shuffle %[[R0]], %[[R8]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: vector.shuffle %[[R0]], %[[R8]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27]
// CHECK: vector.shuffle {{.*}} [0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29]
// CHECK: %[[T0:.*]] = vector.shuffle {{.*}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30]
// CHECK: %[[T1:.*]] = vector.shuffle {{.*}} [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31]
// CHECK: %[[S0:.*]] = vector.insert_strided_slice %[[T0]], %{{.*}} {offsets = [0, 0], strides = [1]} : vector<16xf32> into vector<32x16xf32>
// CHECK: vector.insert_strided_slice %[[T1]], %[[S0]] {offsets = [1, 0], strides = [1]} : vector<16xf32> into vector<32x16xf32>
// CHECK: vector.transfer_read %[[BIAS]][%c0, %c0, %c16], %{{.*}} {in_bounds = [false, true]} : tensor<1x?x50xf32>, vector<16x16xf32>
// CHECK: vector.insert_strided_slice {{.*}} {offsets = [31, 0], strides = [1]} : vector<16xf32> into vector<32x16xf32>
// The tail block: keys past 50 read as 0 (then hidden).
// CHECK: vector.transfer_read %[[BIAS]][%c0, %c0, %c32], %{{.*}} {in_bounds = [false, true]} : tensor<1x?x50xf32>, vector<16x16xf32>
// CHECK: vector.transfer_read %[[BIAS]][%c0, %c0, %c48], %{{.*}} : tensor<1x?x50xf32>, vector<16x16xf32>
func.func @full_bias(%q: tensor<2x40x32xf32>, %k: tensor<2x50x32xf32>, %b: tensor<2x40x50xf32>,
                     %o: tensor<2x40x32xf32>) -> tensor<2x40x32xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<2x40x32xf32>, tensor<2x50x32xf32>, tensor<2x50x32xf32>)
         bias(%b : tensor<2x40x50xf32>) outs(%o : tensor<2x40x32xf32>) scale = 0.25 -> tensor<2x40x32xf32>
  return %r : tensor<2x40x32xf32>
}

// -----

// An op on memrefs is tiled as the same op on tensor views of its buffers,
// one view per buffer (q is also k and v here); the result is materialized
// in the init buffer. Dynamic head dims are left for --attn-decompose.

// CHECK-LABEL: func @on_memrefs
// CHECK-SAME: (%[[Q:.*]]: memref<4x8x16xf32>, %[[O:.*]]: memref<4x8x16xf32>,
// CHECK: %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK: %[[QT:.*]] = bufferization.to_tensor %[[Q]] restrict :
// CHECK-NOT: bufferization.to_tensor
// CHECK: %[[R:.*]] = scf.forall {{.*}} shared_outs(%{{.*}} = %[[OT]])
// CHECK: tensor.extract_slice %[[QT]]
// CHECK: bufferization.materialize_in_destination %[[R]] in writable %[[O]]
// CHECK-NOT: attn.attention {{.*}} : memref
// CHECK: attn.attention {{.*}} : tensor<4x8x?xf32>
func.func @on_memrefs(%q: memref<4x8x16xf32>, %o: memref<4x8x16xf32>, %t: tensor<4x8x?xf32>,
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
// CHECK: %[[QROW:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[QUERY:.*]] = arith.remui %[[QROW]], %{{.*}} : vector<16xi32>
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

// -----

// Decoding, one query row: the row-major kernel. Its vectors run along the
// head dims, 16 lanes: q (Dqk = 40) is scaled into a [1, 48] scratch, 0
// past Dqk. The scores of 16 keys are a [16 keys, 16 lanes] block of
// partial products over the whole chunks of Dqk, plus the masked tail
// chunk, then a tree of 4 levels of shuffles and adds that leaves key k in
// lane k. Lk = 100 = 3 * 32 + 4: three unmasked blocks, one masked. The
// accumulator [1, 32] holds Dv = 24 padded to whole vectors.
// ROW-LABEL: func @row_major_decode
// ROW-DAG: %[[C0:.*]] = arith.constant 0 : index
// ROW-DAG: %[[C16:.*]] = arith.constant 16 : index
// ROW-DAG: %[[C32:.*]] = arith.constant 32 : index
// ROW-DAG: %[[C48:.*]] = arith.constant 48 : index
// ROW-DAG: %[[C96:.*]] = arith.constant 96 : index
// ROW-DAG: %[[QSCALE:.*]] = arith.constant dense<0.360673755> : vector<16xf32>
// ROW: scf.forall
// ROW: %[[Q:.*]] = scf.for %[[QD:.*]] = %[[C0]] to %[[C48]] step %[[C16]] iter_args(%{{.*}}) -> (tensor<1x48xf32>)
// ROW:   vector.transfer_read {{.*}}[%[[C0]], %[[C0]], %[[QD]]], %{{.*}} : tensor<1x1x40xf32>, vector<16xf32>
// ROW:   arith.mulf %{{.*}}, %[[QSCALE]] : vector<16xf32>
// ROW: %[[A:.*]]:4 = scf.for %[[J:.*]] = %[[C0]] to %[[C96]] step %[[C32]] iter_args({{.*}}) -> (f32, f32, tensor<1x32xf32>, tensor<1x32xf32>)
// ROW:   scf.for %[[G:.*]] = %[[C0]] to %[[C32]] step %[[C16]]
// ROW:     %[[FIRST:.*]] = arith.addi %[[J]], %[[G]] : index
// ROW:     scf.for %[[D:.*]] = %[[C0]] to %[[C32]] step %[[C16]] iter_args(%{{.*}}) -> (vector<16x16xf32>)
// ROW:       vector.transfer_read {{.*}}[%[[C0]], %[[FIRST]], %[[D]]], %{{.*}} {in_bounds = [true, true]} : tensor<1x100x40xf32>, vector<16x16xf32>
// ROW:       vector.transfer_read %[[Q]][%{{.*}}, %[[D]]]
// ROW:       vector.fma {{.*}} : vector<16x16xf32>
// ROW:     vector.transfer_read {{.*}}[%[[C0]], %[[FIRST]], %[[C32]]], %{{.*}} {in_bounds = [true, false]} : tensor<1x100x40xf32>, vector<16x16xf32>
// ROW:     vector.fma {{.*}} : vector<16x16xf32>
// ROW-COUNT-8: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// ROW-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]
// ROW-COUNT-2: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29]
// ROW:     vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// ROW:     %[[SUMS:.*]] = arith.addf
// ROW:     %[[SROW:.*]] = vector.shape_cast %[[SUMS]] : vector<16xf32> to vector<1x16xf32>
// ROW:     vector.transfer_write %[[SROW]], %{{.*}}[%{{.*}}, %[[G]]] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x32xf32>
// Unmasked: no key mask; the max is a tree of halves, the sum one
// reassociable reduction.
// ROW-NOT: arith.cmpi
// ROW:   arith.maximumf {{.*}} : vector<16xf32>
// ROW:   math.exp2 {{.*}} : vector<32xf32>
// ROW:   math.exp2 {{.*}} : f32
// ROW:   vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<32xf32> into f32
// p.v: each V row (Dv = 24, read as 32 lanes, 0 past Dv) once per key.
// ROW:   scf.for %[[K:.*]] = %[[C0]] to %[[C32]] step %{{.*}} iter_args(%{{.*}}) -> (vector<32xf32>)
// ROW:     vector.transfer_read {{.*}}, %{{.*}} : tensor<1x100x24xf32>, vector<32xf32>
// ROW:     tensor.extract %{{.*}}[%[[C0]], %[[K]]] : tensor<1x32xf32>
// ROW:     vector.fma {{.*}} : vector<32xf32>
// The masked block: keys past Lk read as 0, then hidden.
// ROW: vector.transfer_read {{.*}} {in_bounds = [false, true]} : tensor<1x100x40xf32>, vector<16x16xf32>
// ROW: arith.cmpi slt
// ROW: arith.select {{.*}} : vector<32xi1>, vector<32xf32>
// ROW: arith.cmpf ogt
// ROW: arith.divf
// ROW: vector.transfer_write {{.*}} : vector<32xf32>, tensor<1x1x24xf32>
func.func @row_major_decode(%q: tensor<2x1x40xf32>, %k: tensor<2x100x40xf32>, %v: tensor<2x100x24xf32>,
                            %o: tensor<2x1x24xf32>) -> tensor<2x1x24xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x1x40xf32>, tensor<2x100x40xf32>, tensor<2x100x24xf32>)
         outs(%o : tensor<2x1x24xf32>) scale = 0.25 -> tensor<2x1x24xf32>
  return %r : tensor<2x1x24xf32>
}

// -----

// Four packed rows with a causal period of 2 (two query heads of two
// queries each, bottom_right: diagonal 98): row i's last visible key is
// (i mod 2) + 98, a scalar per row in the masked block. Each row's state
// is a scalar max and sum; the p.v loop updates all four rows from one
// load of each V row.
// ROW-LABEL: func @row_major_causal_period
// ROW-DAG: %[[PERIOD:.*]] = arith.constant dense<2> : vector<4xi32>
// ROW-DAG: %[[DIAG:.*]] = arith.constant dense<98> : vector<4xi32>
// ROW: %[[QUERY:.*]] = arith.remui %{{.*}}, %[[PERIOD]] : vector<4xi32>
// ROW: %[[LIMITS:.*]] = arith.addi %[[QUERY]], %[[DIAG]] : vector<4xi32>
// ROW: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, tensor<4x16xf32>, tensor<4x32xf32>)
// ROW:   scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ROW:     vector.transfer_read {{.*}} : tensor<1x100x16xf16>, vector<16xf16>
// ROW-COUNT-4: vector.fma
// ROW: %[[L0:.*]] = vector.extract %[[LIMITS]][0] : i32 from vector<4xi32>
// ROW: %[[B0:.*]] = vector.broadcast %[[L0]] : i32 to vector<32xi32>
// ROW: arith.cmpi sle, %{{.*}}, %[[B0]] : vector<32xi32>
// ROW: vector.extract %[[LIMITS]][1] : i32 from vector<4xi32>
// ROW: vector.extract %[[LIMITS]][2] : i32 from vector<4xi32>
// ROW: vector.extract %[[LIMITS]][3] : i32 from vector<4xi32>
func.func @row_major_causal_period(%q: tensor<2x4x32xf16>, %k: tensor<2x100x32xf16>, %v: tensor<2x100x16xf16>,
                                   %o: tensor<2x4x16xf16>) -> tensor<2x4x16xf16> {
  %c2 = arith.constant 2 : index
  %0 = attn.attention ins(%q, %k, %v : tensor<2x4x32xf16>, tensor<2x100x32xf16>, tensor<2x100x16xf16>)
         outs(%o : tensor<2x4x16xf16>) scale = 0.25 causal = bottom_right causal_period(%c2) -> tensor<2x4x16xf16>
  return %0 : tensor<2x4x16xf16>
}

// -----

// A bias broadcast along the keys is one scalar per row, splat; a mask
// broadcast along the rows is read from its row 0 for every row.
// ROW-LABEL: func @row_major_operands
// ROW: tensor.extract %{{.*}}[%c0, %c0, %c0, %c0] : tensor<1x1x3x1xf32>
// ROW: vector.transfer_read %{{.*}}[%c0, %c0, %c0, %c0], %{{.*}} {in_bounds = [true]} : tensor<1x1x1x48xf16>, vector<32xf16>
// ROW: tensor.extract %{{.*}}[%c0, %c0, %c1, %c0] : tensor<1x1x3x1xf32>
// ROW: tensor.extract %{{.*}}[%c0, %c0, %c2, %c0] : tensor<1x1x3x1xf32>
// The masked block reads the mask's tail with bounds checks.
// ROW: vector.transfer_read %{{.*}}[%c0, %c0, %c0, %c32], %{{.*}} : tensor<1x1x1x48xf16>, vector<32xf16>
func.func @row_major_operands(%q: tensor<1x2x3x16xbf16>, %k: tensor<1x2x48x16xbf16>, %m: tensor<1x1x1x48xf16>,
                              %b: tensor<1x2x3x1xf32>, %o: tensor<1x2x3x16xbf16>) -> tensor<1x2x3x16xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x3x16xbf16>, tensor<1x2x48x16xbf16>, tensor<1x2x48x16xbf16>)
         mask(%m : tensor<1x1x1x48xf16>) bias(%b : tensor<1x2x3x1xf32>) outs(%o : tensor<1x2x3x16xbf16>)
         scale = 0.25 -> tensor<1x2x3x16xbf16>
  return %r : tensor<1x2x3x16xbf16>
}

// -----

// row-major-rows bounds the rows of a tile that take the row-major kernel:
// with 4, a tile of 4 static rows takes it and one of 5 the keys-major one
// (on 8 lanes). A tile of rows known only at run time takes row-major
// kernels where its count is a sum of the dynamic-row-cases (1, 2, 4, 8) up
// to 4, taken largest first (with a case of 1, any count up to 4): the
// kernel of 4 rows on each slice of 4 rows, then that of 2, then that of 1,
// each writing its slice of the output; more rows run the keys-major
// kernel on 16 lanes (q-tile).
// ROW4-LABEL: func @row_major_threshold
// ROW4: vector.fma {{.*}} : vector<16x16xf32>
// ROW4: vector.multi_reduction <maximumf>, %{{.*}}, %{{.*}} [0] : vector<32x8xf32> to vector<8xf32>
// ROW4: scf.forall {{.*}} shared_outs(%[[SHARED:.*]] = %{{.*}})
// ROW4: %[[N:.*]] = affine.min
// ROW4: %[[Q:.*]] = tensor.extract_slice %{{.*}} [1, %[[N]], 32]
// ROW4: %[[OUT:.*]] = tensor.extract_slice %[[SHARED]]
// ROW4: %[[FEW:.*]] = arith.cmpi ule, %[[N]], %c4
// ROW4: scf.if %[[FEW]] -> (tensor<1x?x32xf32>) {
// ROW4: %[[FOURS:.*]] = arith.divui %[[N]], %c4
// ROW4: %[[BY4:.*]] = scf.for %[[I:.*]] = %c0 to %[[FOURS]] step %c1 iter_args(%[[O4:.*]] = %[[OUT]])
// ROW4: %[[ROW4:.*]] = arith.muli %[[I]], %c4
// ROW4: tensor.extract_slice %[[Q]][0, %[[ROW4]], 0] [1, 4, 32]
// ROW4: %[[SLICE4:.*]] = tensor.extract_slice %[[O4]][0, %[[ROW4]], 0] [1, 4, 32]
// ROW4: vector.fma {{.*}} : vector<16x16xf32>
// ROW4: vector.transfer_write {{.*}}, %[[SLICE4]][%c0, %c0, %c0] {{.*}} : vector<32xf32>, tensor<1x4x32xf32>
// ROW4: tensor.insert_slice %{{.*}} into %[[O4]][0, %[[ROW4]], 0] [1, 4, 32]
// ROW4: %[[DONE4:.*]] = arith.muli %[[FOURS]], %c4
// ROW4: %[[REST4:.*]] = arith.subi %[[N]], %[[DONE4]]
// ROW4: %[[TWOS:.*]] = arith.divui %[[REST4]], %c2
// ROW4: %[[BY2:.*]] = scf.for %[[J:.*]] = %c0 to %[[TWOS]] step %c1 iter_args(%{{.*}} = %[[BY4]])
// ROW4: %[[OFF2:.*]] = arith.muli %[[J]], %c2
// ROW4: %[[ROW2:.*]] = arith.addi %[[DONE4]], %[[OFF2]]
// ROW4: tensor.extract_slice %[[Q]][0, %[[ROW2]], 0] [1, 2, 32]
// ROW4: vector.fma {{.*}} : vector<16x16xf32>
// ROW4: %[[DONE2:.*]] = arith.muli %[[TWOS]], %c2
// ROW4: %[[FIRST1:.*]] = arith.addi %[[DONE4]], %[[DONE2]]
// ROW4: %[[ONES:.*]] = arith.subi %[[REST4]], %[[DONE2]]
// ROW4: %[[BY1:.*]] = scf.for %[[K:.*]] = %c0 to %[[ONES]] step %c1 iter_args(%{{.*}} = %[[BY2]])
// ROW4: %[[ROW1:.*]] = arith.addi %[[FIRST1]], %[[K]]
// ROW4: tensor.extract_slice %[[Q]][0, %[[ROW1]], 0] [1, 1, 32]
// ROW4: vector.fma {{.*}} : vector<16x16xf32>
// ROW4: scf.yield %[[BY1]]
// ROW4: } else {
// ROW4-NOT: vector<16x16xf32>
// ROW4: vector.multi_reduction <maximumf>, %{{.*}}, %{{.*}} [0] : vector<32x16xf32> to vector<16xf32>
// ROW4-NOT: vector<16x16xf32>
// ROW4: return
func.func @row_major_threshold(%q4: tensor<1x4x32xf32>, %q5: tensor<1x5x32xf32>, %qd: tensor<1x?x32xf32>,
                               %k: tensor<1x64x32xf32>, %o4: tensor<1x4x32xf32>, %o5: tensor<1x5x32xf32>,
                               %od: tensor<1x?x32xf32>) -> (tensor<1x4x32xf32>, tensor<1x5x32xf32>, tensor<1x?x32xf32>) {
  %r4 = attn.attention ins(%q4, %k, %k : tensor<1x4x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
          outs(%o4 : tensor<1x4x32xf32>) scale = 0.25 -> tensor<1x4x32xf32>
  %r5 = attn.attention ins(%q5, %k, %k : tensor<1x5x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
          outs(%o5 : tensor<1x5x32xf32>) scale = 0.25 -> tensor<1x5x32xf32>
  %rd = attn.attention ins(%qd, %k, %k : tensor<1x?x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
          outs(%od : tensor<1x?x32xf32>) scale = 0.25 -> tensor<1x?x32xf32>
  return %r4, %r5, %rd : tensor<1x4x32xf32>, tensor<1x5x32xf32>, tensor<1x?x32xf32>
}

// -----

// With a static Lq that is not a multiple of q-tile, the tile's count is
// known only at run time, but it is either q-tile or the remainder: Lq = 18
// is one tile of 16 rows and one of 2, so the cases are 16 and 2 (not the
// dynamic-row-cases), and each tile takes the kernel of its count, as if
// static. The count is always a case, so there is no keys-major kernel (with
// row-major-rows=4, 16 is no case: 2 rows take the kernel of 2, 16 the
// keys-major one). A dynamic Lq has the cases 1, 2, 4 and 8, which cover
// every count up to the tile's 16 rows (16 rows: 8 twice): no keys-major
// kernel either. With dynamic-row-cases=3 the cases of a dynamic Lq are 3
// alone: multiples of 3 up to 16 run it once per 3 rows, and the others the
// keys-major kernel.
// ROW-LABEL: func @row_count_cases
// ROW: scf.forall
// ROW: %[[N:.*]] = affine.min
// ROW-NOT: scf.if
// ROW: %[[SIXTEENS:.*]] = arith.divui %[[N]], %c16
// ROW: scf.for %{{.*}} = %c0 to %[[SIXTEENS]]
// ROW: tensor.extract_slice {{.*}} to tensor<1x16x32xf32>
// ROW: vector.fma {{.*}} : vector<16x16xf32>
// ROW: %[[DONE16:.*]] = arith.muli %[[SIXTEENS]], %c16
// ROW: %[[REST16:.*]] = arith.subi %[[N]], %[[DONE16]]
// ROW: %[[TWOS:.*]] = arith.divui %[[REST16]], %c2
// ROW: scf.for %{{.*}} = %c0 to %[[TWOS]]
// ROW: tensor.extract_slice {{.*}} to tensor<1x2x32xf32>
// ROW: vector.fma {{.*}} : vector<16x16xf32>
// ROW-NOT: tensor<1x1x32xf32>
// ROW-NOT: scf.if
// ROW-NOT: vector<32x16xf32>
// ROW: scf.forall
// ROW: %[[ND:.*]] = affine.min
// ROW-NOT: scf.if
// ROW: %[[EIGHTS:.*]] = arith.divui %[[ND]], %c8
// ROW: scf.for %{{.*}} = %c0 to %[[EIGHTS]]
// ROW: to tensor<1x8x32xf32>
// ROW: to tensor<1x4x32xf32>
// ROW: to tensor<1x2x32xf32>
// ROW: to tensor<1x1x32xf32>
// ROW-NOT: vector<32x16xf32>
// ROW: return
// CASE3-LABEL: func @row_count_cases
// CASE3: affine.min
// CASE3-NOT: scf.if
// CASE3: to tensor<1x16x32xf32>
// CASE3: to tensor<1x2x32xf32>
// CASE3-NOT: scf.if
// CASE3-NOT: vector<32x16xf32>
// CASE3: scf.forall
// CASE3: %[[N:.*]] = affine.min
// CASE3: %[[FEW:.*]] = arith.cmpi ule, %[[N]], %c16
// CASE3: %[[REST:.*]] = arith.remui %[[N]], %c3
// CASE3: %[[NONE:.*]] = arith.cmpi eq, %[[REST]], %c0
// CASE3: %[[TRIPLES:.*]] = arith.andi %[[FEW]], %[[NONE]]
// CASE3: scf.if %[[TRIPLES]] -> (tensor<1x?x32xf32>) {
// CASE3: %[[THREES:.*]] = arith.divui %[[N]], %c3
// CASE3: scf.for %{{.*}} = %c0 to %[[THREES]]
// CASE3-NOT: tensor<1x1x32xf32>
// CASE3-NOT: tensor<1x2x32xf32>
// CASE3: to tensor<1x3x32xf32>
// CASE3-NOT: tensor<1x1x32xf32>
// CASE3-NOT: tensor<1x2x32xf32>
// CASE3: } else {
// CASE3: vector.multi_reduction <maximumf>, %{{.*}}, %{{.*}} [0] : vector<32x16xf32> to vector<16xf32>
// ROW4-LABEL: func @row_count_cases
// ROW4: %[[N:.*]] = affine.min
// ROW4: %[[FEW:.*]] = arith.cmpi ule, %[[N]], %c4
// ROW4: %[[REST:.*]] = arith.remui %[[N]], %c2
// ROW4: %[[NONE:.*]] = arith.cmpi eq, %[[REST]], %c0
// ROW4: %[[PAIRS:.*]] = arith.andi %[[FEW]], %[[NONE]]
// ROW4: scf.if %[[PAIRS]] -> (tensor<1x?x32xf32>) {
// ROW4-NOT: to tensor<1x16x32xf32>
// ROW4: to tensor<1x2x32xf32>
// ROW4: } else {
// ROW4: vector.multi_reduction <maximumf>, %{{.*}}, %{{.*}} [0] : vector<32x16xf32> to vector<16xf32>
// ROW4: scf.forall
func.func @row_count_cases(%q: tensor<1x18x32xf32>, %qd: tensor<1x?x32xf32>, %k: tensor<1x64x32xf32>,
                           %o: tensor<1x18x32xf32>, %od: tensor<1x?x32xf32>) -> (tensor<1x18x32xf32>, tensor<1x?x32xf32>) {
  %r = attn.attention ins(%q, %k, %k : tensor<1x18x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
         outs(%o : tensor<1x18x32xf32>) scale = 0.25 -> tensor<1x18x32xf32>
  %rd = attn.attention ins(%qd, %k, %k : tensor<1x?x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32>)
          outs(%od : tensor<1x?x32xf32>) scale = 0.25 -> tensor<1x?x32xf32>
  return %r, %rd : tensor<1x18x32xf32>, tensor<1x?x32xf32>
}

// -----

// More than 16 rows keep their output blocks in registers in groups of at
// most 16 rows (20 rows: two groups of 10), one product loop over the
// block's keys per group, so that the accumulators do not spill.
// GROUPS-LABEL: func @row_major_groups
// GROUPS: scf.for {{.*}} -> ({{(vector<16xf32>, ){9}v}}ector<16xf32>)
// GROUPS: scf.for {{.*}} -> ({{(vector<16xf32>, ){9}v}}ector<16xf32>)
// GROUPS-NOT: -> ({{(vector<16xf32>, ){9}v}}ector<16xf32>)
// GROUPS: return
func.func @row_major_groups(%q: tensor<1x20x64xf32>, %k: tensor<1x128x64xf32>, %v: tensor<1x128x16xf32>, %o: tensor<1x20x16xf32>) -> tensor<1x20x16xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x20x64xf32>, tensor<1x128x64xf32>, tensor<1x128x16xf32>)
         outs(%o : tensor<1x20x16xf32>) scale = 0.125 -> tensor<1x20x16xf32>
  return %r : tensor<1x20x16xf32>
}
