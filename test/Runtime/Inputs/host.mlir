// Host code that uses every GPU runtime call the lowering knows: launches
// (plain and clustered) of a cubin and of PTX (JIT), async streams and
// events, memory, host registration, and a TMA descriptor. The kernels are
// placeholders: the test only looks at the mgpu* functions the lowering
// declares.
!desc = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.binary @cubin [#gpu.object<#nvvm.target, bin = "\00">]
  gpu.binary @ptx [#gpu.object<#nvvm.target, assembly = "\00">]
  func.func @main(%a: memref<16xf32>, %u: memref<*xf32>, %f: f32,
                  %hv: i16, %t16: memref<*xf16>) {
    %c1 = arith.constant 1 : index
    %smem = arith.constant 65536 : i32
    gpu.launch_func @cubin::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %smem args(%f : f32)
    gpu.launch_func @ptx::@k clusters in (%c1, %c1, %c1) blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%f : f32)
    %t = gpu.wait async
    %m, %t2 = gpu.alloc async [%t] () : memref<16xf32>
    %t3 = gpu.memcpy async [%t2] %m, %a : memref<16xf32>, memref<16xf32>
    %t4 = gpu.memset async [%t3] %m, %f : memref<16xf32>, f32
    %hm, %t5 = gpu.alloc async [%t4] () : memref<16xi16>
    %t6 = gpu.memset async [%t5] %hm, %hv : memref<16xi16>, i16
    %t7 = gpu.wait async
    %t8 = gpu.wait async [%t6, %t7]
    %t9 = gpu.dealloc async [%t8] %m : memref<16xf32>
    gpu.wait [%t9]
    gpu.host_register %u : memref<*xf32>
    gpu.host_unregister %u : memref<*xf32>
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %d = nvgpu.tma.create.descriptor %t16 box[%c128, %c64] : memref<*xf16> -> !desc
    return
  }
}
