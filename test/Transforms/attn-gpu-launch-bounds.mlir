// --attn-gpu-launch-bounds: kernels that trade registers between warpgroups
// (nvvm.setmaxregister) declare one block per SM, so that ptxas knows their
// register count at entry and honors setmaxnreg.
// RUN: attn-opt %s --pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds))" | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @warp_specialized() kernel attributes {nvvm.minctasm = 1 : i32}
// A kernel without setmaxnreg is left as it is.
// CHECK: gpu.func @plain() kernel {
// A device function is not a launch.
// CHECK: gpu.func @helper() {
// A minimum the kernel declares already stays.
// CHECK: gpu.func @declared() kernel attributes {nvvm.minctasm = 2 : i32}
gpu.module @kernels {
  gpu.func @warp_specialized() kernel {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %producer = arith.cmpi eq, %tid, %c0 : index
    scf.if %producer {
      nvvm.setmaxregister decrease 24
    } else {
      nvvm.setmaxregister increase 240
    }
    gpu.return
  }
  gpu.func @plain() kernel {
    gpu.return
  }
  gpu.func @helper() {
    nvvm.setmaxregister increase 240
    gpu.return
  }
  gpu.func @declared() kernel attributes {nvvm.minctasm = 2 : i32} {
    nvvm.setmaxregister increase 240
    gpu.return
  }
}
