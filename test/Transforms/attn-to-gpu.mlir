// RUN: attn-opt %s --split-input-file --attn-to-gpu --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-to-gpu=emulate --canonicalize --cse | FileCheck %s --check-prefix=EMU

// f16, D = 64, causal, default tiles: 128 query rows (two m16 row tiles per
// warp) and 64-key blocks. Grid (Lq/128, Hq, B), 4 warps, Q + 2x K + 2x V
// in 55296 bytes of dynamic shared memory (rows padded to 72 elements).
// CHECK-LABEL: func.func @causal_f16_d64
// scale * log2(e) = 0.125 / ln 2, and a hidden score before that scaling
// (2 * -1e30 / 0.1803...: scaled, still at most -1e30).
// CHECK: %[[THRESHOLD:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[C:.*]] = arith.constant 0.180336878 : f32
// CHECK: %[[HIDDEN:.*]] = arith.constant -1.10903554E+31 : f32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c8, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c55296_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// Causal: the heaviest query blocks first (block x -> ceil(Lq/128) - 1 - x).
// CHECK: %[[BX:.*]] = gpu.block_id  x
// CHECK: arith.subi %c0, %[[BX]] : index
// CHECK: memref.view {{.*}} to memref<128x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// Causal: the K/V loop ends at the last block with a visible key.
// CHECK: arith.divsi {{.*}}, %c64
// Prologue: Q (one group), then K/V block 0 (a second group); wait for Q.
// CHECK-COUNT-8: nvgpu.device_async_copy {{.*}}, 8, {{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK: gpu.barrier
// Q fragments stay in registers: one ldmatrix.x4 per row tile and k step.
// CHECK-COUNT-8: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: scf.for
// Prefetch of the next K/V block, then wait for the current one.
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// S = Q K^T on tensor cores: each K fragment feeds both row tiles.
// CHECK: %[[KF:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B0:.*]] = vector.extract %[[KF]][0]
// CHECK: %[[B1:.*]] = vector.extract %[[KF]][1]
// CHECK: nvvm.mma.sync A[%[[A0:[^,]*]], {{.*}}]  B[%[[B0]], %[[B1]]]  C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync A[%[[A1:[^,]*]], {{.*}}]  B[%[[B0]], %[[B1]]]
// Masks only in blocks that need them, on unscaled scores. A score is
// visible iff its (constant) column offset is at most its row's last
// visible offset (Lk and the diagonal in one): one i32 compare.
// CHECK-NOT: arith.mulf
// CHECK: scf.if
// CHECK: %[[LAST:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[VIS:.*]] = arith.cmpi sge, %[[LAST]], %c0_i32 : i32
// CHECK-NEXT: arith.select %[[VIS]], %{{.*}}, %[[HIDDEN]] : f32
// CHECK: arith.cmpi sge, %[[LAST]], %c1_i32 : i32
// Row maxima (across the quad) scaled once per row.
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: %[[MAX:.*]] = arith.mulf %{{.*}}, %[[C]] : f32
// CHECK: %[[CAND:.*]] = arith.maximumf %[[OLD:.*]], %[[MAX]] : f32
// Lazy rescaling: the maxima move only if a row of the warp rose by more
// than 8 (base 2).
// CHECK: %[[RISE:.*]] = arith.subf %[[CAND]], %[[OLD]] : f32
// CHECK: arith.cmpf ogt, %[[RISE]], %[[THRESHOLD]] : f32
// CHECK: %[[MOVED:.*]] = nvvm.vote.sync  any %c-1_i32, %{{.*}} -> i1
// CHECK: %[[M:.*]] = arith.select %[[MOVED]], %[[CAND]], %[[OLD]] : f32
// The exponent of each score is one fma: exp2(s * c - m).
// CHECK: %[[NEGM:.*]] = arith.negf %[[M]] : f32
// CHECK: %[[E:.*]] = llvm.intr.fma(%{{.*}}, %[[C]], %[[NEGM]])
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %[[E]]
// O (32 accumulators of the row tile) and the 2 row sums are rescaled
// only on the warp-uniform branch where the maxima moved.
// CHECK: scf.if %[[MOVED]] -> ({{(f32, )+}}f32) {
// CHECK-COUNT-34: arith.mulf
// CHECK: scf.yield
// CHECK: } else {
// CHECK-NEXT: scf.yield %arg{{.*}}
// O += P V with V fragments through ldmatrix.trans.
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// One division per row; hidden rows (max still -1e30) write 0.
// CHECK: arith.cmpf ole, %{{.*}}, %cst
// CHECK: arith.divf
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<1x8x128x64xf16>, vector<2xf16>
// CHECK: gpu.terminator

// The emulation checks the shared-memory accesses for bank conflicts on
// their addresses, in a buffer aligned as the GPU's.
// EMU: llvm.mlir.global internal constant @{{.*}}("attn GPU emulation: shared-memory bank conflict in ldmatrix\00")
// EMU: llvm.mlir.global internal constant @{{.*}}("attn GPU emulation: shared-memory bank conflict in cp.async\00")
// EMU-LABEL: func.func @causal_f16_d64
// EMU-NOT: gpu.
// EMU: memref.alloca() {alignment = 1024 : i64} : memref<55296xi8>
// EMU: scf.for
// EMU: scf.for
// EMU: scf.for
// EMU: call @__attn_emu_copy8_
// EMU: call @__attn_emu_ldmatrix4_
// EMU: call @__attn_emu_mma_
// EMU: vector.shuffle
// EMU: call @__attn_emu_ldmatrix4t_
// EMU: call @__attn_emu_store_
// EMU: func.func private @__attn_emu_copy8_
func.func @causal_f16_d64(%q: memref<1x8x128x64xf16>, %k: memref<1x8x128x64xf16>,
                          %v: memref<1x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>, memref<1x8x128x64xf16>)
                 outs(%o : memref<1x8x128x64xf16>) scale = 0.125 causal = top_left
  return
}

// -----

// bf16, D = 128, GQA (8 query heads on 4 key/value heads), a boolean mask per
// batch and key and a bias per head: bf16 operands go to mma.sync as i32.
// CHECK-LABEL: func.func @gqa_bf16_d128_mask_bias
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[LOWEST:.*]] = arith.constant -3.1691265E+29 : f32
// CHECK-DAG: %[[HIDDEN:.*]] = arith.constant -1.000000e+30 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.127517357 : f32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %c87040_i32
// CHECK: arith.divui %block_id_y, %c2
// CHECK: memref.view {{.*}} to memref<64x136xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x136xbf16
// CHECK: scf.for
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32)
// With a bias, the scores are scaled by scale * log2(e) up front (not in
// the exponent's fma, where a row far down, at -1e9, would keep the
// rounding of its maximum's product) and the bias (base e) is added in one
// fma with log2(e). A -inf bias hides its key like the boolean mask (a
// predicate); a finite one is kept at or above -2^98, above the hidden
// value -1e30.
// Lk = 77 is odd: the bias is read one element at a time, with no branch.
// CHECK: %[[SCORE:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NOT: vector.load
// CHECK: %[[BIAS:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x8x100x77xf32>
// CHECK: %[[MASK:.*]] = memref.load %{{.*}}[%{{.*}}, %c0, %c0, %{{.*}}] : memref<2x1x1x77xi1>
// CHECK: %[[INRANGE:.*]] = arith.andi %{{.*}}, %[[MASK]] : i1
// CHECK: %[[FINITE:.*]] = arith.cmpf une, %[[BIAS]], %[[NEGINF]] : f32
// CHECK: %[[VISIBLE:.*]] = arith.andi %[[INRANGE]], %[[FINITE]] : i1
// CHECK: %[[ADDED:.*]] = llvm.intr.fma(%[[BIAS]], %[[LOG2E]], %[[SCORE]]) : (f32, f32, f32) -> f32
// CHECK: %[[KEPT:.*]] = arith.maximumf %[[ADDED]], %[[LOWEST]] : f32
// CHECK: arith.select %[[VISIBLE]], %[[KEPT]], %[[HIDDEN]] : f32
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<2x64x136xbf16
// CHECK: vector.store {{.*}} : memref<2x8x100x128xbf16>, vector<2xbf16>
func.func @gqa_bf16_d128_mask_bias(%q: memref<2x8x100x128xbf16>, %k: memref<2x4x77x128xbf16>,
                                   %v: memref<2x4x77x128xbf16>, %m: memref<2x1x1x77xi1>,
                                   %b: memref<2x8x100x77xf32>, %o: memref<2x8x100x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x100x128xbf16>, memref<2x4x77x128xbf16>, memref<2x4x77x128xbf16>)
                 mask(%m : memref<2x1x1x77xi1>) bias(%b : memref<2x8x100x77xf32>)
                 outs(%o : memref<2x8x100x128xbf16>) scale = 0.0883883
  return
}

// -----

// Dynamic batch and lengths: the grid is computed on the host, and an empty
// grid launches nothing. D = 256 takes 32-key blocks and reloads Q
// fragments from shared memory (no ldmatrix before the loop).
// CHECK-LABEL: func.func @dynamic_d256
// CHECK: %[[LQ:.*]] = memref.dim %arg0, %c2
// CHECK: arith.ceildivui %[[LQ]], %c64
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %{{.*}} : memref<64x264xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} : memref<2x32x264xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
func.func @dynamic_d256(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                        %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  attn.attention ins(%q, %k, %v : memref<?x4x?x256xf16>, memref<?x4x?x256xf16>, memref<?x4x?x256xf16>)
                 outs(%o : memref<?x4x?x256xf16>) scale = 0.0625 causal = bottom_right
  return
}

// -----

// Head counts known only at run time (what --attn-raise makes of a graph
// whose batch and heads share a dynamic dim): the grid's y is Hq, the empty
// grid test takes it too, and each block divides by Hq / Hkv once.
// CHECK-LABEL: func.func @dynamic_heads
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x64xbf16>, %[[K:[a-z0-9]+]]: memref<?x?x64xbf16>
// CHECK: %[[LQ:.*]] = memref.dim %[[Q]], %c1
// CHECK: %[[X:.*]] = arith.ceildivui %[[LQ]], %c128
// CHECK: %[[HQ:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[NOX:.*]] = arith.cmpi eq, %[[X]], %c0
// CHECK: %[[NOY:.*]] = arith.cmpi eq, %[[HQ]], %c0
// CHECK: arith.ori %[[NOX]], %[[NOY]]
// CHECK: scf.if
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[X]], %{{.*}} = %[[HQ]], %{{.*}} = %c1)
// CHECK: %[[HKV:.*]] = memref.dim %[[K]], %c0
// CHECK: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HKV]]
// CHECK: arith.divui %block_id_y, %[[GROUP]]
func.func @dynamic_heads(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                         %v: memref<?x?x64xbf16>, %o: memref<?x?x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<?x?x64xbf16>, memref<?x?x64xbf16>, memref<?x?x64xbf16>)
                 outs(%o : memref<?x?x64xbf16>) scale = 0.125
  return
}

// -----

// The output buffer of a bufferized tensor function is device memory: an
// async gpu.alloc (the form gpu-to-llvm lowers) on a stream of its own,
// waited for before the launch.
// CHECK-LABEL: func.func @allocated_output
// CHECK-NOT: memref.alloc
// CHECK: %[[S:.*]] = gpu.wait async
// CHECK: %[[OUT:.*]], %[[T:.*]] = gpu.alloc async [%[[S]]] () : memref<1x2x64x64xf16>
// CHECK: gpu.wait [%[[T]]]
// CHECK: gpu.launch
// CHECK: return %[[OUT]]
func.func @allocated_output(%q: memref<1x2x64x64xf16>, %k: memref<1x2x64x64xf16>,
                            %v: memref<1x2x64x64xf16>) -> memref<1x2x64x64xf16> {
  %o = memref.alloc() : memref<1x2x64x64xf16>
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>)
                 outs(%o : memref<1x2x64x64xf16>) scale = 0.125
  return %o : memref<1x2x64x64xf16>
}

// -----

// Also when the op writes a reshaped view of it (--attn-pack-gqa's).
// CHECK-LABEL: func.func @viewed_output
// CHECK-NOT: memref.alloc
// CHECK: %[[OUT:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<1x8x1x64xf16>
// CHECK: %[[E:.*]] = memref.expand_shape %[[OUT]]
// CHECK: %[[C:.*]] = memref.collapse_shape %[[E]]
// CHECK: gpu.launch
// CHECK: return %[[OUT]]
func.func @viewed_output(%q: memref<1x2x4x64xf16>, %k: memref<1x2x64x64xf16>,
                         %v: memref<1x2x64x64xf16>) -> memref<1x8x1x64xf16> {
  %o = memref.alloc() : memref<1x8x1x64xf16>
  %e = memref.expand_shape %o [[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 1, 64]
      : memref<1x8x1x64xf16> into memref<1x2x4x1x64xf16>
  %c = memref.collapse_shape %e [[0], [1], [2, 3], [4]]
      : memref<1x2x4x1x64xf16> into memref<1x2x4x64xf16>
  attn.attention ins(%q, %k, %v : memref<1x2x4x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>)
                 outs(%c : memref<1x2x4x64xf16>) scale = 0.125
  return %o : memref<1x8x1x64xf16>
}

// -----

// f32 inputs take the TF32 path: f32 tiles (32-key blocks; rows padded by 4
// words for Q/K and 8 for V), operands rounded with cvt.rna.tf32.f32,
// mma.sync m16n8k8, and P moved to the A layout with index shuffles
// (3xTF32 by default: attn-to-gpu-tf32.mlir).
// CHECK-LABEL: func.func @f32_tf32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %c53248_i32
// CHECK: memref.view {{.*}} to memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x32x68xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x32x72xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4, {{.*}} {bypassL1} : memref<1x2x100x64xf32> to memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f"
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32)
// CHECK: gpu.shuffle  idx
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<1x2x100x64xf32>, vector<2xf32>
func.func @f32_tf32(%q: memref<1x2x100x64xf32>, %k: memref<1x2x80x64xf32>,
                    %v: memref<1x2x80x64xf32>, %o: memref<1x2x100x64xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x2x100x64xf32>, memref<1x2x80x64xf32>, memref<1x2x80x64xf32>)
                 outs(%o : memref<1x2x100x64xf32>) scale = 0.125 causal = top_left
  return
}

// -----

// causal_offset (what tiling along Lq produces) shifts the diagonal: it is
// passed into the kernel and added to the causal limit and the block count.
// CHECK-LABEL: func.func @causal_offset
// CHECK-SAME: %[[OFF:[a-z0-9]+]]: index
// CHECK: gpu.launch
// CHECK: arith.addi %{{.*}}, %[[OFF]] : index
func.func @causal_offset(%q: memref<1x2x64x64xf16>, %k: memref<1x2x256x64xf16>,
                         %v: memref<1x2x256x64xf16>, %o: memref<1x2x64x64xf16>,
                         %off: index) {
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x256x64xf16>, memref<1x2x256x64xf16>)
                 outs(%o : memref<1x2x64x64xf16>) scale = 0.125 causal = top_left causal_offset(%off)
  return
}

// -----

// A causal period (packed grouped-query rows): row i is query
// (i + offset) mod 5, and bottom-right alignment places the diagonal for 5
// queries (Lk - 5 = 251). The block's last query is 4 where its rows wrap
// around the period, and decides the number of K/V blocks; each score's
// row takes its own query.
// CHECK-LABEL: func.func @causal_period
// CHECK-SAME: %[[OFF:[a-z0-9]+]]: index
// CHECK: gpu.launch
// CHECK: %[[Q0:.*]] = arith.muli %{{.*}}, %c128 : index
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %c20 : index
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1 : index
// CHECK: %[[FIRSTROW:.*]] = arith.addi %[[Q0]], %[[OFF]] : index
// CHECK: %[[LASTROW:.*]] = arith.addi %[[LAST]], %[[OFF]] : index
// CHECK: %[[G0:.*]] = arith.divui %[[FIRSTROW]], %c5 : index
// CHECK: %[[G1:.*]] = arith.divui %[[LASTROW]], %c5 : index
// CHECK: %[[WRAPS:.*]] = arith.cmpi ne, %[[G0]], %[[G1]] : index
// CHECK: %[[LASTREM:.*]] = arith.remui %[[LASTROW]], %c5 : index
// CHECK: %[[LASTQ:.*]] = arith.select %[[WRAPS]], %c4, %[[LASTREM]] : index
// CHECK: arith.addi %[[LASTQ]], %c251 : index
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[QUERY:.*]] = arith.remui %[[ROW]], %c5 : index
// CHECK: arith.addi %[[QUERY]], %c251 : index
func.func @causal_period(%q: memref<1x2x20x64xf16>, %k: memref<1x2x256x64xf16>,
                         %v: memref<1x2x256x64xf16>, %o: memref<1x2x20x64xf16>,
                         %off: index) {
  %c5 = arith.constant 5 : index
  attn.attention ins(%q, %k, %v : memref<1x2x20x64xf16>, memref<1x2x256x64xf16>, memref<1x2x256x64xf16>)
                 outs(%o : memref<1x2x20x64xf16>) scale = 0.125 causal = bottom_right causal_period(%c5) causal_offset(%off)
  return
}

// -----

// A negative scale reverses the order of the scores: they are multiplied by
// scale * log2(e) (-0.5 / ln 2) before the row maxima, and the exponent is
// a subtraction, with no fma.
// CHECK-LABEL: func.func @negative_scale
// CHECK: %[[C:.*]] = arith.constant -0.72134751 : f32
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: arith.mulf %{{.*}}, %[[C]] : f32
// CHECK: gpu.shuffle  xor
// CHECK-NOT: llvm.intr.fma
// CHECK: arith.subf
// CHECK-NOT: llvm.intr.fma
// CHECK: scf.yield
func.func @negative_scale(%q: memref<1x2x64x64xf16>, %k: memref<1x2x128x64xf16>,
                          %v: memref<1x2x128x64xf16>, %o: memref<1x2x64x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>)
                 outs(%o : memref<1x2x64x64xf16>) scale = -0.5
  return
}

// -----

// Masks and bias are read two elements at a time where their layout allows
// it, which the types do not say here: the kernel checks once that each
// starts aligned to a pair, Lk is even, the last dim has stride 1 and the
// other dims that are indexed (not of size 1) have even strides, and at
// each step branches on all of it to one of two whole versions of the
// masking code: by pairs (columns clamped to the last pair) or by elements.
// CHECK-LABEL: func.func @paired_loads
// CHECK: %[[LK:.*]] = memref.dim %arg1, %c2 : memref<1x4x?x64xf16>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[BS:.*]]:4 = memref.extract_strided_metadata %arg4
// CHECK: %[[BPTR:.*]] = memref.extract_aligned_pointer_as_index %arg4
// CHECK: %[[BREM:.*]] = arith.remui %[[BPTR]], %c4 : index
// CHECK: %[[BALIGNED:.*]] = arith.cmpi eq, %[[BREM]], %c0 : index
// CHECK: %[[LKREM:.*]] = arith.remui %[[LK]], %c2 : index
// CHECK: %[[LKEVEN:.*]] = arith.cmpi eq, %[[LKREM]], %c0 : index
// CHECK: %[[B1:.*]] = arith.andi %[[BALIGNED]], %[[LKEVEN]] : i1
// CHECK: arith.remui %[[BS]]#1, %c2 : index
// CHECK: %[[B2:.*]] = arith.andi %[[B1]], %{{.*}} : i1
// CHECK: arith.remui %[[BS]]#2, %c2 : index
// CHECK: %[[BPAIRED:.*]] = arith.andi %[[B2]], %{{.*}} : i1
// The mask's offset counts; its size-1 dims and unit last stride do not.
// CHECK: %{{.*}}, %[[MOFF:.*]], %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %arg3
// CHECK: %[[MPTR:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[MOFFB:.*]] = arith.muli %[[MOFF]], %c4 : index
// CHECK: %[[MADDR:.*]] = arith.addi %[[MPTR]], %[[MOFFB]] : index
// CHECK: %[[MREM:.*]] = arith.remui %[[MADDR]], %c8 : index
// CHECK: %[[MALIGNED:.*]] = arith.cmpi eq, %[[MREM]], %c0 : index
// CHECK: %[[MPAIRED:.*]] = arith.andi %[[MALIGNED]], %[[LKEVEN]] : i1
// CHECK: %[[PAIRED:.*]] = arith.andi %[[BPAIRED]], %[[MPAIRED]] : i1
// CHECK: scf.for
// A pair is one load in inline PTX (LLVM would split a vector load back
// into scalar ones), from the element's address in the global space.
// CHECK: scf.if %[[PAIRED]] -> ([[F32X32:(f32, ){31}f32]]) {
// CHECK: %[[LAST:.*]] = arith.subi %[[LK]], %c2 : index
// CHECK: %[[COL:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK: %[[HEAD:.*]] = arith.muli %block_id_y, %[[BS]]#1 : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[BS]]#2 : index
// CHECK: %[[HR:.*]] = arith.addi %[[HEAD]], %[[ROW]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[HR]], %[[COL]] : index
// CHECK: %[[P0:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.addrspacecast %[[P0]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[LIN64:.*]] = arith.index_cast %[[LIN]] : index to i64
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[P1]][%[[LIN64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK: %[[WORD:.*]] = llvm.inline_asm has_side_effects "ld.global.b32 $0, [$1];", "=r,l" %[[ADDR]] : (!llvm.ptr<1>) -> i32
// CHECK: %[[LO:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK: arith.bitcast %[[LO]] : i16 to bf16
// CHECK: %[[HI:.*]] = arith.shrui %[[WORD]], %c16_i32 : i32
// The mask's rows are broadcast: 8 pairs serve both rows of the thread.
// CHECK-COUNT-8: llvm.inline_asm has_side_effects "ld.global.v2.f32 {$0, $1}, [$2];", "=f,=f,l" %{{.*}} : (!llvm.ptr<1>) -> !llvm.struct<(f32, f32)>
// CHECK-NOT: llvm.inline_asm
// CHECK-NOT: memref.load
// CHECK: } else {
// CHECK-NOT: llvm.inline_asm
// CHECK-COUNT-32: memref.load %arg4
// CHECK-NOT: memref.load %arg4
// CHECK: scf.yield
// The emulation checks every paired load's address (see EmulationTarget).
// EMU-LABEL: func.func @paired_loads
// EMU: func.call @__attn_emu_load_pair_{{.*}} -> (vector<128xbf16>, vector<128xbf16>)
// EMU: func.func private @__attn_emu_load_pair_
// EMU: memref.extract_aligned_pointer_as_index
// EMU: llvm.call @abort()
func.func @paired_loads(%q: memref<1x4x?x64xf16>, %k: memref<1x4x?x64xf16>,
                        %v: memref<1x4x?x64xf16>,
                        %m: memref<1x1x1x?xf32, strided<[?, ?, ?, 1], offset: ?>>,
                        %b: memref<1x4x?x?xbf16>, %o: memref<1x4x?x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>)
                 mask(%m : memref<1x1x1x?xf32, strided<[?, ?, ?, 1], offset: ?>>)
                 bias(%b : memref<1x4x?x?xbf16>)
                 outs(%o : memref<1x4x?x64xf16>) scale = 0.125
  return
}

// -----

// Its deallocation frees device memory, after the launch.
// CHECK-LABEL: func.func @freed_output
// CHECK: %[[OUT:.*]], %{{.*}} = gpu.alloc async
// CHECK: gpu.launch
// CHECK: memref.copy %[[OUT]], %{{.*}}
// CHECK: %[[S:.*]] = gpu.wait async
// CHECK: %[[T:.*]] = gpu.dealloc async [%[[S]]] %[[OUT]] : memref<1x2x64x64xf16>
// CHECK: gpu.wait [%[[T]]]
// CHECK-NOT: memref.dealloc
func.func @freed_output(%q: memref<1x2x64x64xf16>, %k: memref<1x2x64x64xf16>,
                        %v: memref<1x2x64x64xf16>, %r: memref<1x2x64x64xf16>) {
  %o = memref.alloc() : memref<1x2x64x64xf16>
  attn.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>)
                 outs(%o : memref<1x2x64x64xf16>) scale = 0.125
  memref.copy %o, %r : memref<1x2x64x64xf16> to memref<1x2x64x64xf16>
  memref.dealloc %o : memref<1x2x64x64xf16>
  return
}
