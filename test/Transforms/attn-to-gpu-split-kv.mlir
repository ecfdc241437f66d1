// Split-KV (--attn-to-gpu="split-kv=N"): the kernel's K/V steps split over
// N grid blocks per query block, which write f32 partials (unnormalized O;
// row maxima and sums) to two device buffers, merged by a second kernel.
// split-kv=0 chooses N on the host at run time and keeps the single kernel
// for grids that fill the GPU.
// RUN: attn-opt %s --attn-to-gpu="split-kv=4" --canonicalize --cse | FileCheck %s --check-prefix=FORCED
// RUN: attn-opt %s --attn-to-gpu="split-kv=0" --canonicalize --cse | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --attn-to-gpu="split-kv=0 sm-count=100" --canonicalize --cse | FileCheck %s --check-prefix=SMS
// RUN: attn-opt %s --attn-to-gpu="split-kv=0 chip=sm_80" --canonicalize --cse | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=OFF
// Warp specialized: the partial kernel is the producer and one consumer
// warpgroup on 64-row slabs, its TMA loads from the split's first block.
// RUN: attn-opt %s --attn-to-gpu="split-kv=4 wgmma warp-specialize chip=sm_90a" --canonicalize --cse | FileCheck %s --check-prefix=WS
// Through the GPU pipeline the host code translates to LLVM IR that calls
// only the mgpu* runtime (no libm: AOT links need nothing else).
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa split-kv=0" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=HOSTIR --implicit-check-not=ceilf --implicit-check-not=ceil.

// Z * Hq = 16 rows of partials per split. The partial kernel has 64-row
// tiles (87040 bytes of shared memory at D = 128), grid x = query blocks
// times splits; the merge kernel has no shared memory and reads both
// buffers for every split before they are freed. The allocations, both
// launches and the frees are one chain on one stream, waited for once.
// FORCED-LABEL: func.func @gqa_d128
// FORCED-SAME: %[[Q:[a-z0-9]+]]: memref<2x8x?x128xbf16>
// FORCED-SAME: %[[O:[a-z0-9]+]]: memref<2x8x?x128xbf16>
// FORCED-DAG: %[[LQ:.*]] = memref.dim %[[Q]], %c2
// FORCED: %[[QB:.*]] = arith.ceildivui %[[LQ]], %c64
// FORCED: %[[S0:.*]] = gpu.wait async
// FORCED-NOT: gpu.wait
// FORCED: %[[PO:.*]], %[[S1:.*]] = gpu.alloc async [%[[S0]]] (%c64, %[[LQ]]) : memref<?x?x128xf32>
// FORCED: %[[PS:.*]], %[[S2:.*]] = gpu.alloc async [%[[S1]]] (%c64, %[[LQ]]) : memref<?x?x2xf32>
// FORCED: %[[X:.*]] = arith.muli %[[QB]], %c4
// FORCED: %[[S3:.*]] = gpu.launch async [%[[S2]]] blocks({{.*}}) in ({{.*}} = %[[X]], {{.*}} = %c8, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c87040_i32
// FORCED: vector.store {{.*}}, %[[PO]]
// FORCED: vector.store {{.*}}, %[[PS]]
// FORCED: gpu.terminator
// FORCED: %[[S4:.*]] = gpu.launch async [%[[S3]]] blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c0_i32
// FORCED: scf.for %{{.*}} = %c0 to %c4
// FORCED: memref.extract_strided_metadata %[[PS]]
// FORCED: arith.maximumf
// FORCED: scf.for %{{.*}} = %c0 to %c4
// FORCED: memref.extract_strided_metadata %[[PS]]
// FORCED: memref.extract_strided_metadata %[[PO]]
// FORCED: ex2.approx.ftz.f32
// FORCED: vector.store {{.*}}, %[[O]]
// FORCED: gpu.terminator
// FORCED: %[[S5:.*]] = gpu.dealloc async [%[[S4]]] %[[PO]]
// FORCED-NEXT: %[[S6:.*]] = gpu.dealloc async [%[[S5]]] %[[PS]]
// FORCED-NEXT: gpu.wait [%[[S6]]]
// FORCED-NOT: gpu.launch
// FORCED-NOT: gpu.wait

// Chosen at run time: split where 5 x blocks < 4 x (2 x 132) blocks (two
// partial blocks per multiprocessor), into
// the splits whose last wave is fullest; else the 128-row kernel.
// AUTO-LABEL: func.func @gqa_d128
// AUTO: scf.for
// AUTO-NOT: math.ceil
// AUTO: arith.ceildivui
// AUTO: scf.for
// AUTO: arith.cmpi uge, %{{.*}}, %c1056
// AUTO: %[[SPLIT:.*]] = arith.cmpi ugt, %{{.*}}, %c1
// AUTO: scf.if %[[SPLIT]] {
// AUTO: gpu.alloc
// AUTO: dynamic_shared_memory_size %c87040_i32
// AUTO: dynamic_shared_memory_size %c0_i32
// AUTO: gpu.dealloc
// AUTO: } else {
// AUTO: dynamic_shared_memory_size %c104448_i32
// A wave is sm-count times the partial kernel's blocks that a
// multiprocessor holds: two here (87040 bytes of shared memory and 1 KB
// for the system each, of 228 KB), one on sm_80 (of 164 KB).
// SMS-LABEL: func.func @gqa_d128
// SMS: arith.cmpi uge, %{{.*}}, %c800
// SM80-LABEL: func.func @gqa_d128
// SM80: arith.cmpi uge, %{{.*}}, %c432
// SM80-LABEL: func.func @dynamic_batch
// HOSTIR-LABEL: define void @gqa_d128(
// HOSTIR: %[[STREAM:.*]] = call ptr @mgpuStreamCreate()
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call ptr @mgpuMemAlloc(i64 %{{.*}}, ptr %[[STREAM]], i8 0)
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call ptr @mgpuMemAlloc(i64 %{{.*}}, ptr %[[STREAM]], i8 0)
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call void @mgpuLaunchKernel({{.*}}, ptr %[[STREAM]],
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call void @mgpuLaunchKernel({{.*}}, ptr %[[STREAM]],
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call void @mgpuMemFree(ptr %{{.*}}, ptr %[[STREAM]])
// HOSTIR-NOT: @mgpuStream
// HOSTIR: call void @mgpuMemFree(ptr %{{.*}}, ptr %[[STREAM]])
// HOSTIR-NEXT: call void @mgpuStreamSynchronize(ptr %[[STREAM]])
// HOSTIR-NEXT: call void @mgpuStreamDestroy(ptr %[[STREAM]])
// HOSTIR: call void @mgpuLaunchKernel(
// The threads store the partials (no TMA store of O), then the merge.
// WS-LABEL: func.func @gqa_d128
// WS: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c64
// WS: %[[PO:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<?x?x128xf32>
// WS: %[[PS:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<?x?x2xf32>
// WS: %[[X:.*]] = arith.muli %[[QB]], %c4
// WS: gpu.launch async {{.*}} blocks({{.*}}) in ({{.*}} = %[[X]], {{.*}} = %c8, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c256,
// WS: nvgpu.tma.async.load
// WS-NOT: nvgpu.tma.async.store
// WS: vector.store {{.*}}, %[[PO]]
// WS-NOT: nvgpu.tma.async.store
// WS: gpu.terminator
// WS: gpu.launch async {{.*}} threads({{.*}}) in ({{.*}} = %c128, {{.*}}) dynamic_shared_memory_size %c0_i32
// WS: gpu.dealloc async
// OFF-LABEL: func.func @gqa_d128
// OFF-NOT: gpu.alloc
// OFF: dynamic_shared_memory_size %c104448_i32
// OFF-NOT: gpu.launch
func.func @gqa_d128(%q: memref<2x8x?x128xbf16>, %k: memref<2x2x?x128xbf16>,
                    %v: memref<2x2x?x128xbf16>, %o: memref<2x8x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>)
      outs(%o : memref<2x8x?x128xbf16>) scale = 0.088388347648
  return
}

// Dynamic batch: the partials' rows are splits x Z x Hq with Z the batch
// size at run time.
// OFF-LABEL: func.func @dynamic_batch
// At D = 64 (82944 bytes) two partial blocks fit sm_80's multiprocessor.
// SM80: arith.cmpi uge, %{{.*}}, %c864
// FORCED-LABEL: func.func @dynamic_batch
// FORCED: %[[B:.*]] = memref.dim %{{.*}}, %c0
// FORCED: %[[R:.*]] = arith.muli %[[B]], %c16
// FORCED: gpu.alloc async [%{{.*}}] (%[[R]], %{{.*}}) : memref<?x?x64xf32>
// FORCED: gpu.alloc async [%{{.*}}] (%[[R]], %{{.*}}) : memref<?x?x2xf32>
func.func @dynamic_batch(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                         %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<?x4x?x64xf16>, memref<?x4x?x64xf16>, memref<?x4x?x64xf16>)
      outs(%o : memref<?x4x?x64xf16>) scale = 0.125 causal = bottom_right
  return
}
