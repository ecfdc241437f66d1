// The warp-specialized Hopper kernel, --attn-to-gpu="wgmma warp-specialize"
// (FlashAttention-3's structure): warpgroup 0 is the producer, one thread of
// which issues every TMA load into two K and two V buffers, each with a full
// mbarrier (the producer's arrival and the bytes) and an empty one (one
// arrival per consumer warp); the other warpgroups are consumers, each
// computing one 64-row slab, releasing each buffer as soon as its wgmma have
// read it. The producer gives its registers to the consumers (setmaxnreg).
// By default each consumer runs a block's softmax while the tensor cores
// compute the previous block's P V (FlashAttention-3's intra-warpgroup
// overlap); SERIAL checks the plain loop.
// RUN: attn-opt %s --attn-to-gpu="wgmma warp-specialize" --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,OVERLAP
// RUN: attn-opt %s --attn-to-gpu="wgmma warp-specialize intra-warpgroup-overlap=0" --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,SERIAL
// RUN: attn-opt %s --attn-to-gpu="wgmma warp-specialize pingpong" --canonicalize --cse | FileCheck %s --check-prefix=PINGPONG
// RUN: attn-opt %s --attn-to-gpu="wgmma warp-specialize emulate" | FileCheck %s --check-prefix=EMU
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a format=isa wgmma=1 warp-specialize=1" -o %t.mlir
// RUN: %gpu-binary %t.mlir %t.objects | FileCheck %s --check-prefix=OBJ
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.objects/gqa_d128_kernel.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=PTX64 --input-file %t.objects/rows192_d64_kernel.sm_90a.ptx

// D = 128, GQA and a batch dim, dynamic Lk: the default tiles are 128 rows
// (two consumer warpgroups) by 176 keys; 384 threads, Q (32768 bytes) and
// two K and two V buffers (45056 bytes each) after the 1024 bytes of
// alignment.
// CHECK-LABEL: func.func @gqa_d128
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384, %{{.*}} = %c1, %{{.*}} = %c1) dynamic_shared_memory_size %c214016_i32
// CHECK: %[[BATCH:.*]] = arith.remui %block_id_z, %c2
// CHECK: %[[KVHEAD:.*]] = arith.divui %block_id_y, %c2
// CHECK: %[[LK:.*]] = memref.dim %arg1, %c2
// CHECK: %[[Q0:.*]] = arith.muli %block_id_x, %c128
// CHECK: %[[LKUP:.*]] = arith.addi %[[LK]], %c175
// CHECK: %[[NUMKV:.*]] = arith.divui %[[LKUP]], %c176
// Full barriers 0, 1 (K buffers) and 2, 3 (V buffers) expect one arrival,
// empty barriers 4, 5 (K) and 6, 7 (V) one per consumer warp.
// CHECK: %[[BARS:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 8>
// CHECK: %[[T0:.*]] = arith.cmpi eq, %thread_id_x, %c0
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c0], %c1, predicate = %[[T0]]
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c3], %c1, predicate = %[[T0]]
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c4], %c8, predicate = %[[T0]]
// CHECK: nvgpu.mbarrier.init %[[BARS]][%c7], %c8, predicate = %[[T0]]
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// The producer warpgroup keeps 24 registers; its thread 0 loads block 0's
// K with Q on barrier 0 (45056 + 32768 bytes) and its V on barrier 2, if
// the block has a K/V step.
// CHECK: %[[PRODUCER:.*]] = arith.cmpi ult, %thread_id_x, %c128
// CHECK: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister  decrease 24
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[NUMKV]], %c0
// CHECK: %[[ISSUE:.*]] = arith.andi %[[T0]], %[[ANY]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c0], %c77824, predicate = %[[ISSUE]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0] to %{{.*}}, predicate = %[[ISSUE]] : <tensor = memref<1x1x176x64xbf16
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %[[Q0]], %block_id_y, %[[BATCH]]], %[[BARS]][%c0] to %{{.*}}, predicate = %[[ISSUE]] : <tensor = memref<1x1x128x64xbf16
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %[[Q0]], %block_id_y, %[[BATCH]]], %[[BARS]][%c0]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%c2], %c45056, predicate = %[[ISSUE]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c2]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %c0, %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%c2]
// Then block j into buffer j % 2, K before V: from j = 2 on, once the
// consumers released block j - 2 (phase (j - 2) / 2 of empty barrier
// 4 + j % 2, then 6 + j % 2).
// CHECK: scf.for %[[J:.*]] = %c1 to %[[NUMKV]] step %c1 {
// CHECK-NEXT: %[[BUF:.*]] = arith.remui %[[J]], %c2
// CHECK-NEXT: %[[REUSE:.*]] = arith.cmpi sge, %[[J]], %c2
// CHECK-NEXT: scf.if %[[REUSE]] {
// CHECK-NEXT: %[[EMPTYK:.*]] = arith.addi %[[BUF]], %c4
// CHECK-NEXT: %[[PREV:.*]] = arith.subi %[[J]], %c2
// CHECK-NEXT: %[[PHASE:.*]] = arith.divui %[[PREV]], %c2
// CHECK-NEXT: %[[PBIT:.*]] = arith.remui %[[PHASE]], %c2
// CHECK-NEXT: %[[PARITY:.*]] = arith.cmpi eq, %[[PBIT]], %c1
// CHECK-NEXT: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[EMPTYK]]], %[[PARITY]]
// CHECK-NEXT: }
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[BUF]]], %c45056, predicate = %[[T0]]
// CHECK: %[[ROW:.*]] = arith.muli %[[J]], %c176
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[BUF]]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[BUF]]]
// CHECK: scf.if %[[REUSE]] {
// CHECK: %[[EMPTYV:.*]] = arith.addi %[[BUF]], %c6
// CHECK: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[EMPTYV]]]
// CHECK: %[[FULLV:.*]] = arith.addi %[[BUF]], %c2
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[BARS]][%[[FULLV]]], %c45056, predicate = %[[T0]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c0, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[FULLV]]]
// CHECK: nvgpu.tma.async.load %{{.*}}[%c64, %[[ROW]], %[[KVHEAD]], %[[BATCH]]], %[[BARS]][%[[FULLV]]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// The consumers take 240 registers; thread 128 + t is consumer thread t.
// OVERLAP: } else {
// OVERLAP-NEXT: nvvm.setmaxregister  increase 240
// OVERLAP-NEXT: %[[CTID:.*]] = arith.subi %thread_id_x, %c128
// OVERLAP-NEXT: %[[WARP:.*]] = arith.divui %[[CTID]], %c32
// OVERLAP-NEXT: %[[LANE:.*]] = arith.remui %[[CTID]], %c32
// Block 0, if any: its K (with Q), the slab's S (Q's descriptors 64 rows
// further per warpgroup: 512 in the descriptor's 16-byte units), K
// released once its wgmma are done (lane 0 of each warp), the softmax; the
// step's state is the row maxima and sums, and P: 44 packed bf16 pairs
// (176 keys), carried to the next step (O is still 0 here).
// OVERLAP: %[[ANYC:.*]] = arith.cmpi sgt, %[[NUMKV]], %c0
// OVERLAP-NEXT: %[[FIRST:.*]]:51 = scf.if %[[ANYC]] -> (f32, f32, f32, f32, vector<2xbf16>,
// OVERLAP-NEXT: nvgpu.mbarrier.try_wait.parity %[[BARS]][%c0], %false
// OVERLAP-NEXT: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// OVERLAP-NEXT: %[[SLAB:.*]] = arith.muli %[[GROUP]], %c512
// OVERLAP-NEXT: %[[SLAB64:.*]] = arith.index_cast %[[SLAB]] : index to i64
// OVERLAP: %[[DESCQ:.*]] = arith.addi %{{.*}}, %[[SLAB64]] : i64
// OVERLAP-NEXT: nvvm.wgmma.mma_async %[[DESCQ]], %{{.*}}, <m = 64, n = 176, k = 16>
// OVERLAP-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 176, k = 16>
// OVERLAP: nvvm.wgmma.commit.group.sync.aligned
// OVERLAP-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP: %[[FIRSTLANE:.*]] = arith.cmpi eq, %[[LANE]], %c0
// OVERLAP-NEXT: scf.if %[[FIRSTLANE]] {
// OVERLAP-NEXT: nvgpu.mbarrier.arrive %[[BARS]][%c4]
// OVERLAP-NOT: wgmma.mma_async.sync.aligned.m64n128k16
// OVERLAP: scf.yield
// Step j >= 1: K of block j; S_j issued; O rescaled as block j - 1's
// softmax asked (skipped unless a row's maximum moved); V of block j - 1;
// its P V issued with P from registers. Then S_j is waited for while P V
// is in flight (wait_group 1), K released, S_j's softmax, P V waited for,
// and block j - 1's V released.
// OVERLAP: scf.for %[[J:.*]] = %c1 to %[[NUMKV]] step %c1 iter_args(
// OVERLAP-NEXT: %[[PREV:.*]] = arith.subi %[[J]], %c1
// OVERLAP-NEXT: %[[PREVBUF:.*]] = arith.remui %[[PREV]], %c2
// OVERLAP-NEXT: %[[BUF:.*]] = arith.remui %[[J]], %c2
// OVERLAP: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[BUF]]]
// OVERLAP-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 176, k = 16>
// OVERLAP: nvvm.wgmma.commit.group.sync.aligned
// OVERLAP-NEXT: %[[FULLV:.*]] = arith.addi %[[PREVBUF]], %c2
// OVERLAP: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[FULLV]]]
// OVERLAP-NEXT: %{{.*}}:64 = scf.if %{{.*}} -> (f32,
// OVERLAP: arith.mulf
// OVERLAP-COUNT-11: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// OVERLAP: nvvm.wgmma.commit.group.sync.aligned
// OVERLAP-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// OVERLAP: %[[RELK:.*]] = arith.addi %[[BUF]], %c4
// OVERLAP: nvgpu.mbarrier.arrive %[[BARS]][%[[RELK]]]
// OVERLAP: vector.from_elements
// OVERLAP: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP: %[[RELV:.*]] = arith.addi %[[PREVBUF]], %c6
// OVERLAP-NEXT: scf.if %{{.*}} {
// OVERLAP-NEXT: nvgpu.mbarrier.arrive %[[BARS]][%[[RELV]]]
// OVERLAP-NOT: gpu.barrier
// OVERLAP: scf.yield
// The last block's P V, after the loop.
// OVERLAP: scf.if %[[ANYC]] -> (f32,
// OVERLAP-NEXT: %[[LAST:.*]] = arith.subi %[[NUMKV]], %c1
// OVERLAP-NEXT: %[[LASTBUF:.*]] = arith.remui %[[LAST]], %c2
// OVERLAP-NEXT: %[[LASTV:.*]] = arith.addi %[[LASTBUF]], %c2
// OVERLAP: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[LASTV]]]
// OVERLAP-COUNT-11: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// OVERLAP: nvvm.wgmma.wait.group.sync.aligned 0
// OVERLAP: %[[RELLAST:.*]] = arith.addi %[[LASTBUF]], %c6
// OVERLAP: nvgpu.mbarrier.arrive %[[BARS]][%[[RELLAST]]]
// The plain loop: the same step as one sequence, P V waited for at once.
// Step j waits for block j's K (phase j / 2 of barrier j % 2), computes
// its slab's S (Q's descriptors 64 rows further per warpgroup: 512 in the
// descriptor's 16-byte units), releases K once its wgmma are done (lane 0
// of each warp), then waits for V, and releases V after P V.
// SERIAL: } else {
// SERIAL-NEXT: nvvm.setmaxregister  increase 240
// SERIAL-NEXT: %[[CTID:.*]] = arith.subi %thread_id_x, %c128
// SERIAL-NEXT: %[[WARP:.*]] = arith.divui %[[CTID]], %c32
// SERIAL-NEXT: %[[LANE:.*]] = arith.remui %[[CTID]], %c32
// SERIAL: scf.for %[[CJ:.*]] = %c0 to %[[NUMKV]] step %c1
// SERIAL-NEXT: %[[CBUF:.*]] = arith.remui %[[CJ]], %c2
// SERIAL-NEXT: %[[CPHASE:.*]] = arith.divui %[[CJ]], %c2
// SERIAL-NEXT: %[[CPBIT:.*]] = arith.remui %[[CPHASE]], %c2
// SERIAL-NEXT: %[[CPARITY:.*]] = arith.cmpi eq, %[[CPBIT]], %c1
// SERIAL-NEXT: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[CBUF]]], %[[CPARITY]]
// SERIAL-NEXT: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// SERIAL-NEXT: %[[SLAB:.*]] = arith.muli %[[GROUP]], %c512
// SERIAL-NEXT: %[[SLAB64:.*]] = arith.index_cast %[[SLAB]] : index to i64
// SERIAL: nvvm.wgmma.fence.aligned
// SERIAL: %[[DESCQ:.*]] = arith.addi %{{.*}}, %[[SLAB64]] : i64
// SERIAL-NEXT: nvvm.wgmma.mma_async %[[DESCQ]], %{{.*}}, <m = 64, n = 176, k = 16>
// SERIAL-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 176, k = 16>
// SERIAL-NOT: nvvm.wgmma.mma_async
// SERIAL: nvvm.wgmma.commit.group.sync.aligned
// SERIAL-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// SERIAL: %[[RELK:.*]] = arith.addi %[[CBUF]], %c4
// SERIAL: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// SERIAL-NEXT: scf.if %[[FIRST]] {
// SERIAL-NEXT: nvgpu.mbarrier.arrive %[[BARS]][%[[RELK]]]
// SERIAL-NOT: gpu.barrier
// SERIAL: %[[CFULLV:.*]] = arith.addi %[[CBUF]], %c2
// SERIAL-NEXT: nvgpu.mbarrier.try_wait.parity %[[BARS]][%[[CFULLV]]], %[[CPARITY]]
// SERIAL-COUNT-11: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SERIAL: nvvm.wgmma.commit.group.sync.aligned
// SERIAL-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// SERIAL: %[[RELV:.*]] = arith.addi %[[CBUF]], %c6
// SERIAL-NEXT: scf.if %[[FIRST]] {
// SERIAL-NEXT: nvgpu.mbarrier.arrive %[[BARS]][%[[RELV]]]
// SERIAL-NOT: gpu.barrier
// SERIAL: scf.yield
// The epilogue: each warpgroup writes its O rows over its own Q slab (no
// barrier before), fences them for the async proxy, the consumers meet on
// named barrier 1 (256 threads), and consumer thread 0 stores the panels.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK-COUNT-32: vector.store %{{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: %[[W32:.*]] = arith.muli %[[WARP]], %c32
// CHECK-NEXT: %[[CT:.*]] = arith.addi %[[W32]], %[[LANE]]
// CHECK-NEXT: %[[ISSUER:.*]] = arith.cmpi eq, %[[CT]], %c0
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%c0, %[[Q0]], %block_id_y, %[[BATCH]]], predicate = %[[ISSUER]]
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%c64, %[[Q0]], %block_id_y, %[[BATCH]]], predicate = %[[ISSUER]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator

// With pingpong the consumer warpgroups take turns issuing their wgmma:
// warpgroup c waits on named barrier 2 + c (256 threads: its own and the
// arrivals of the warpgroup before it), issues S (and, after block 0, the
// previous block's P V), and passes the turn on to 2 + (c + 1) % 2 before
// it waits for its products. Warpgroup 0 gives itself the first turn.
// PINGPONG-LABEL: func.func @gqa_d128
// PINGPONG: nvvm.setmaxregister  increase 240
// PINGPONG-NEXT: %[[CTID:.*]] = arith.subi %thread_id_x, %c128
// PINGPONG-NEXT: %[[WARP:.*]] = arith.divui %[[CTID]], %c32
// PINGPONG: %[[WG0:.*]] = arith.cmpi ult, %[[WARP]], %c4
// PINGPONG-NEXT: scf.if %[[WG0]] {
// PINGPONG-NEXT: nvvm.barrier.arrive id = %c2_i32 number_of_threads = %c256_i32
// PINGPONG: nvgpu.mbarrier.try_wait.parity
// PINGPONG: %[[GROUP0:.*]] = arith.divui %[[WARP]], %c4
// PINGPONG: %[[OWN0:.*]] = arith.addi %[[GROUP0]], %c2
// PINGPONG-NEXT: %[[OWN032:.*]] = arith.index_cast %[[OWN0]] : index to i32
// PINGPONG-NEXT: nvvm.barrier id = %[[OWN032]] number_of_threads = %c256_i32
// PINGPONG-COUNT-8: <m = 64, n = 176, k = 16>
// PINGPONG: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG-NEXT: %[[NEXT0:.*]] = arith.addi %[[GROUP0]], %c1
// PINGPONG-NEXT: %[[NEXTM0:.*]] = arith.remui %[[NEXT0]], %c2
// PINGPONG-NEXT: %[[NEXTB0:.*]] = arith.addi %[[NEXTM0]], %c2
// PINGPONG-NEXT: %[[NEXTB032:.*]] = arith.index_cast %[[NEXTB0]] : index to i32
// PINGPONG-NEXT: nvvm.barrier.arrive id = %[[NEXTB032]] number_of_threads = %c256_i32
// PINGPONG-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// PINGPONG: scf.for %{{.*}} = %c1 to
// PINGPONG: nvgpu.mbarrier.try_wait.parity
// PINGPONG: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// PINGPONG: %[[OWN:.*]] = arith.addi %[[GROUP]], %c2
// PINGPONG-NEXT: %[[OWN32:.*]] = arith.index_cast %[[OWN]] : index to i32
// PINGPONG-NEXT: nvvm.barrier id = %[[OWN32]] number_of_threads = %c256_i32
// PINGPONG-COUNT-8: <m = 64, n = 176, k = 16>
// PINGPONG-COUNT-11: wgmma.mma_async.sync.aligned.m64n128k16
// PINGPONG: nvvm.wgmma.commit.group.sync.aligned
// PINGPONG-NEXT: %[[NEXT:.*]] = arith.addi %[[GROUP]], %c1
// PINGPONG-NEXT: %[[NEXTM:.*]] = arith.remui %[[NEXT]], %c2
// PINGPONG-NEXT: %[[NEXTB:.*]] = arith.addi %[[NEXTM]], %c2
// PINGPONG-NEXT: %[[NEXTB32:.*]] = arith.index_cast %[[NEXTB]] : index to i32
// PINGPONG-NEXT: nvvm.barrier.arrive id = %[[NEXTB32]] number_of_threads = %c256_i32
// PINGPONG-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// The last block's P V takes no turn.
// PINGPONG: scf.yield
// PINGPONG-NOT: nvvm.barrier id = %{{[0-9]+}}
// PINGPONG: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32

// The emulation models the empty barriers' arrivals too.
// EMU: llvm.mlir.global internal constant @{{.*}}("attn GPU emulation: more arrivals on an mbarrier than its phase expects\00")
// The emulation runs each consumer warpgroup as a 128-lane program. In each
// step after block 0: warpgroup 0's S and P V, warpgroup 1's, then the
// producer's refill of the K buffer they released (block j + 2), their
// softmaxes, and the refill of the V buffer (block j + 1).
// EMU-LABEL: func.func @gqa_d128
// EMU: scf.for %{{.*}} = %c1{{(_[0-9]+)?}} to %{{.*}} iter_args(
// EMU: call @__attn_emu_wgmma176_0
// EMU-COUNT-11: call @__attn_emu_wgmmar128tacc_0
// EMU: call @__attn_emu_wgmma176_0
// EMU-COUNT-11: call @__attn_emu_wgmmar128tacc_0
// EMU: call @__attn_emu_tma176_0(%arg1,
// EMU: call @__attn_emu_tma176_0(%arg1,
// EMU: call @__attn_emu_tma176_0(%arg2,
// EMU: call @__attn_emu_tma176_0(%arg2,
// EMU: scf.yield

// OBJ: gqa_d128_kernel.sm_90a.ptx
// PTX: .maxntid 384, 1, 1
// ptxas knows the register count at entry (--attn-gpu-launch-bounds).
// PTX-NEXT: .minnctapersm 1
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// (LLVM lays the consumer loop out rotated: no order among these.)
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: bar.sync 1, 256;
// PTX: cp.async.bulk.tensor.4d.global.shared::cta
func.func @gqa_d128(%q: memref<2x8x100x128xbf16>, %k: memref<2x4x?x128xbf16>,
                    %v: memref<2x4x?x128xbf16>, %o: memref<2x8x100x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x100x128xbf16>, memref<2x4x?x128xbf16>, memref<2x4x?x128xbf16>)
      outs(%o : memref<2x8x100x128xbf16>) scale = 0.088388347648
  return
}

// D = 64: three consumer warpgroups (192 rows, 128 keys), 512 threads; the
// producer keeps 32 registers and the consumers take 160; empty barriers
// expect 12 arrivals; the consumers' barrier has 384 threads.
// CHECK-LABEL: func.func @rows192_d64
// CHECK: gpu.launch
// CHECK-SAME: in (%{{.*}} = %c512, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: nvgpu.mbarrier.init %{{.*}}[%c4], %c12
// CHECK: nvvm.setmaxregister  decrease 32
// CHECK: nvvm.setmaxregister  increase 160
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c384_i32
// PTX64: .maxntid 512, 1, 1
// PTX64-NEXT: .minnctapersm 1
// PTX64: setmaxnreg.dec.sync.aligned.u32 32;
// PTX64: setmaxnreg.inc.sync.aligned.u32 160;
// PTX64: bar.sync 1, 384;
func.func @rows192_d64(%q: memref<1x4x?x64xf16>, %k: memref<1x4x?x64xf16>,
                       %v: memref<1x4x?x64xf16>, %o: memref<1x4x?x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>)
      outs(%o : memref<1x4x?x64xf16>) scale = 0.125 causal = top_left
  return
}

// Dv > Dqk: O's store panels reach past Q's space into the K buffers, which
// the other warpgroup may still read: the consumers meet before writing.
// CHECK-LABEL: func.func @wide_values
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: memref.view
// CHECK: vector.store
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
func.func @wide_values(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>,
                       %v: memref<1x2x?x128xbf16>, %o: memref<1x2x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x128xbf16>)
      outs(%o : memref<1x2x?x128xbf16>) scale = 0.125
  return
}
