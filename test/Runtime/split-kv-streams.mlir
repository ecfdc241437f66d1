// REQUIRES: cuda-toolkit, ptxas
// The host code --attn-gpu-pipeline makes for split-KV (chosen at run time,
// split-kv=0), run by mlir-runner with libattn_cuda_runtime.so against the
// fake driver, which prints the driver calls. Per call: ONE stream, on
// which the workspace's allocations, the partial and merge launches and the
// frees are enqueued in order (stream-ordered, from the runtime's memory
// pool), and one synchronization. Nothing else waits for the device: no
// cuMemFree (it synchronizes the device) and no stream per operation. An
// unsplit call is one launch on its stream. The stream, destroyed by the
// generated code, is kept by the runtime and reused by the next call.

// RUN: %cc -shared -fPIC %S/Inputs/fake-driver.c -o %t.fake-driver.so
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=bin split-kv=0" -o %t.mlir
// RUN: env %host_env ATTN_CUDA_DRIVER=%t.fake-driver.so mlir-runner %t.mlir \
// RUN:   -e main -entry-point-result=void \
// RUN:   -shared-libs=%attn_cuda_runtime,%mlir_runner_libs \
// RUN:   | FileCheck %s --implicit-check-not=cuMemFree{{$}} --implicit-check-not=cuMemAlloc \
// RUN:   --implicit-check-not=cuStreamCreate --implicit-check-not=cuStreamDestroy

// Decode (Lq = 1, Lk = 4096): 2 x 8 query heads of one 64-row block, each
// split 16 ways; partials of 16 x 2 x 8 rows of 128 f32 (131072 bytes) and
// their (max, sum) pairs (2048 bytes).
// CHECK-LABEL: first call
// CHECK-NEXT: cuStreamCreate stream=[[S1:[0-9]+]]
// The pool, once per process.
// CHECK-NEXT: cuMemPoolCreate
// CHECK-NEXT: cuMemPoolSetAttribute 4 18446744073709551615
// CHECK-NEXT: cuMemAllocFromPoolAsync 131072 stream=[[S1]]
// CHECK-NEXT: cuMemAllocFromPoolAsync 2048 stream=[[S1]]
// CHECK-NEXT: cuFuncSetAttribute 8 87040
// CHECK-NEXT: cuLaunchKernel grid=16,8,2 block=128 smem=87040 stream=[[S1]]
// CHECK-NEXT: cuLaunchKernel grid=1,8,2 block=128 smem=0 stream=[[S1]]
// CHECK-NEXT: cuMemFreeAsync stream=[[S1]]
// CHECK-NEXT: cuMemFreeAsync stream=[[S1]]
// CHECK-NEXT: cuStreamSynchronize
// CHECK-NEXT: second call
// CHECK-NEXT: cuMemAllocFromPoolAsync 131072 stream=[[S1]]
// CHECK-NEXT: cuMemAllocFromPoolAsync 2048 stream=[[S1]]
// CHECK-NEXT: cuLaunchKernel grid=16,8,2 block=128 smem=87040 stream=[[S1]]
// CHECK-NEXT: cuLaunchKernel grid=1,8,2 block=128 smem=0 stream=[[S1]]
// CHECK-NEXT: cuMemFreeAsync stream=[[S1]]
// CHECK-NEXT: cuMemFreeAsync stream=[[S1]]
// CHECK-NEXT: cuStreamSynchronize
// Prefill (Lq = Lk = 16384): 128 x 8 x 2 blocks fill the GPU, unsplit.
// CHECK-NEXT: unsplit call
// CHECK-NEXT: cuFuncSetAttribute 8 104448
// CHECK-NEXT: cuLaunchKernel grid=128,8,2 block=128 smem=104448 stream=[[S1]]
// CHECK-NEXT: cuStreamSynchronize
// CHECK-NEXT: done

func.func @attention(%q: memref<2x8x?x128xbf16>, %k: memref<2x2x?x128xbf16>,
                     %v: memref<2x2x?x128xbf16>, %o: memref<2x8x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<2x8x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>)
      outs(%o : memref<2x8x?x128xbf16>) scale = 0.088388347648
  return
}

// The fake driver touches no memory: host buffers stand for device ones.
func.func @call(%lq: index, %lk: index) {
  %q = memref.alloc(%lq) : memref<2x8x?x128xbf16>
  %k = memref.alloc(%lk) : memref<2x2x?x128xbf16>
  %v = memref.alloc(%lk) : memref<2x2x?x128xbf16>
  %o = memref.alloc(%lq) : memref<2x8x?x128xbf16>
  func.call @attention(%q, %k, %v, %o) : (memref<2x8x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x8x?x128xbf16>) -> ()
  memref.dealloc %q : memref<2x8x?x128xbf16>
  memref.dealloc %k : memref<2x2x?x128xbf16>
  memref.dealloc %v : memref<2x2x?x128xbf16>
  memref.dealloc %o : memref<2x8x?x128xbf16>
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %c16384 = arith.constant 16384 : index
  vector.print str "first call\n"
  func.call @call(%c1, %c4096) : (index, index) -> ()
  vector.print str "second call\n"
  func.call @call(%c1, %c4096) : (index, index) -> ()
  vector.print str "unsplit call\n"
  func.call @call(%c16384, %c16384) : (index, index) -> ()
  vector.print str "done\n"
  return
}
