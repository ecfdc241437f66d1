// --attn-gpu-pipeline on a host function on tensors, as a frontend emits
// it: the q * 1/8 scaling folds into `scale`, bufferization gives
// contiguous memrefs, the result buffer becomes device memory, and the
// kernel is compiled by the NVVM pipeline (here to PTX).
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa" -o %t.mlir
// RUN: FileCheck %s --check-prefix=HOST --input-file %t.mlir
// The host code translates to LLVM IR: the launch and the output's device
// allocation become mgpu* runtime calls.
// RUN: mlir-translate --mlir-to-llvmir %t.mlir | FileCheck %s --check-prefix=LLVMIR
// RUN: %gpu-binary %t.mlir %t.objects | FileCheck %s --check-prefix=OBJ
// RUN: FileCheck %s --check-prefix=PTX --input-file %t.objects/sdpa_kernel.sm_90.ptx
//
// The same for sm_80 (PTX 7.0).
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_80 features=+ptx70 format=isa" | FileCheck %s --check-prefix=SM80
// And for sm_90a (the arch-specific Hopper target), to a cubin.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a format=bin" | FileCheck %s --check-prefix=SM90A
//
// The pass pipeline before the NVVM lowering: the generic scaling q is gone,
// the result is a device allocation (gpu.alloc, async: gpu-to-llvm lowers
// no other form of it).
// RUN: attn-opt %s --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --attn-to-gpu --gpu-kernel-outlining --canonicalize | FileCheck %s --check-prefix=STAGES

// HOST: module attributes {gpu.container_module}
// HOST: llvm.func @sdpa(
// HOST: gpu.launch_func  @sdpa_kernel::@sdpa_kernel
// HOST: gpu.binary @sdpa_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">

// LLVMIR-LABEL: define {{.*}} @sdpa(
// 2 x 8 x 256 x 64 f16.
// LLVMIR: call ptr @mgpuStreamCreate()
// LLVMIR: call ptr @mgpuMemAlloc(i64 524288,
// LLVMIR: call void @mgpuStreamSynchronize(
// LLVMIR: call void @mgpuLaunchKernel(

// OBJ: sdpa_kernel.sm_90.ptx

// PTX: .target sm_90
// PTX: .entry sdpa_kernel(
// (instruction order is the backend's scheduling: DAG)
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: bar.sync
// PTX-DAG: st.global.b32

// SM80: chip = "sm_80"
// SM80-SAME: .target sm_80

// SM90A: gpu.binary @sdpa_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, properties = {{.*}}, bin = "

// STAGES-LABEL: func.func @sdpa(
// STAGES-SAME: %[[Q:[a-z0-9]+]]: memref<2x8x256x64xf16>
// STAGES-NOT: linalg.generic
// STAGES: %[[STREAM:.*]] = gpu.wait async
// STAGES: %[[OUT:.*]], %[[DONE:.*]] = gpu.alloc async [%[[STREAM]]] () : memref<2x8x256x64xf16>
// STAGES: gpu.wait [%[[DONE]]]
// STAGES: gpu.launch_func @sdpa_kernel::@sdpa_kernel blocks in (%c2, %c8, %c2) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c55296_i32 args(%[[Q]] : memref<2x8x256x64xf16>, {{.*}}, %[[OUT]] : memref<2x8x256x64xf16>)
// STAGES: return %[[OUT]]
// STAGES: gpu.module @sdpa_kernel
// STAGES: gpu.func @sdpa_kernel
func.func @sdpa(%q: tensor<2x8x256x64xf16>, %k: tensor<2x2x256x64xf16>,
                %v: tensor<2x2x256x64xf16>) -> tensor<2x8x256x64xf16> {
  %c = arith.constant 0.125 : f16
  %qs = linalg.generic {
      indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                       affine_map<(a, b, c, d) -> (a, b, c, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x8x256x64xf16>) outs(%q : tensor<2x8x256x64xf16>) {
  ^bb0(%x: f16, %y: f16):
    %m = arith.mulf %x, %c : f16
    linalg.yield %m : f16
  } -> tensor<2x8x256x64xf16>
  %e = tensor.empty() : tensor<2x8x256x64xf16>
  %r = attn.attention ins(%qs, %k, %v : tensor<2x8x256x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>)
                      outs(%e : tensor<2x8x256x64xf16>) scale = 1.0 causal = top_left -> tensor<2x8x256x64xf16>
  return %r : tensor<2x8x256x64xf16>
}
