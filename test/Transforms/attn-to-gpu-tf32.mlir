// RUN: attn-opt %s --attn-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --attn-to-gpu --canonicalize --cse | grep -c nvvm.mma.sync | FileCheck %s --check-prefix=SPLIT-MMAS
// RUN: attn-opt %s --attn-to-gpu=tf32=1 --canonicalize --cse | FileCheck %s --check-prefix=TF32
// RUN: attn-opt %s --attn-to-gpu=tf32=1 --canonicalize --cse | grep -c nvvm.mma.sync | FileCheck %s --check-prefix=TF32-MMAS

// f32 inputs (the TF32 path). By default (3xTF32) each operand x is split
// into hi = tf32(x) and lo = tf32(x - hi), and each m16n8k8 product takes
// three mma.sync, small terms first: lo(A) hi(B), hi(A) lo(B), hi(A) hi(B).
// With tf32=1, one mma.sync on tf32(x). Here D = 16 and 32-key blocks:
// per K/V step 8 mma for Q K^T and 8 for P V, three times as many split.

// SPLIT-LABEL: func.func @f32_d16
// SPLIT: %[[A:.*]] = memref.load %{{.*}} : memref<64x20xf32, #gpu.address_space<workgroup>>
// SPLIT-NEXT: %[[AHI:.*]] = llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %[[A]]
// SPLIT-NEXT: %[[AHIF:.*]] = arith.bitcast %[[AHI]] : i32 to f32
// SPLIT-NEXT: %[[AREST:.*]] = arith.subf %[[A]], %[[AHIF]] : f32
// SPLIT-NEXT: %[[ALO:.*]] = llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %[[AREST]]
// SPLIT: %[[B:.*]] = memref.load %{{.*}} : memref<2x32x20xf32, #gpu.address_space<workgroup>>
// SPLIT-NEXT: %[[BHI:.*]] = llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %[[B]]
// SPLIT-NEXT: %[[BHIF:.*]] = arith.bitcast %[[BHI]] : i32 to f32
// SPLIT-NEXT: %[[BREST:.*]] = arith.subf %[[B]], %[[BHIF]] : f32
// SPLIT-NEXT: %[[BLO:.*]] = llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %[[BREST]]
// SPLIT: nvvm.mma.sync A[%[[ALO]], {{.*}}]  B[%[[BHI]], {{.*}}]  C[
// SPLIT-SAME: multiplicandAPtxType = #nvvm.mma_type<tf32>
// SPLIT: nvvm.mma.sync A[%[[AHI]], {{.*}}]  B[%[[BLO]], {{.*}}]  C[
// SPLIT: nvvm.mma.sync A[%[[AHI]], {{.*}}]  B[%[[BHI]], {{.*}}]  C[
// SPLIT-MMAS: {{^}}48{{$}}

// TF32-LABEL: func.func @f32_d16
// TF32: %[[A:.*]] = memref.load %{{.*}} : memref<64x20xf32, #gpu.address_space<workgroup>>
// TF32-NEXT: %[[AHI:.*]] = llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %[[A]]
// TF32-NOT: arith.subf
// TF32: nvvm.mma.sync A[%[[AHI]], {{.*}}]  B[{{.*}}]  C[
// TF32-MMAS: {{^}}16{{$}}
func.func @f32_d16(%q: memref<1x1x64x16xf32>, %k: memref<1x1x64x16xf32>,
                   %v: memref<1x1x64x16xf32>, %o: memref<1x1x64x16xf32>) {
  attn.attention ins(%q, %k, %v : memref<1x1x64x16xf32>, memref<1x1x64x16xf32>, memref<1x1x64x16xf32>)
                 outs(%o : memref<1x1x64x16xf32>) scale = 0.25
  return
}
