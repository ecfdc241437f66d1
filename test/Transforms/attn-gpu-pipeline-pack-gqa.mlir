// --attn-gpu-pipeline="pack-gqa=1": decoding with 16 query heads on 4
// key/value heads becomes one kernel per key/value head whose query rows
// are its group's 4 heads, on views of the buffers bufferization made.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa pack-gqa=1 split-kv=0" --mlir-print-ir-before=attn-to-gpu -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PACKED
// Without it the op is as it was.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90 format=isa split-kv=0" --mlir-print-ir-before=attn-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPACKED
// The host code, the result a device allocation under the views, translates
// to LLVM IR that calls the runtime only.
// RUN: mlir-translate --mlir-to-llvmir %t.mlir | FileCheck %s --check-prefix=LLVMIR --implicit-check-not=malloc
// The grid: one query block per key/value head and batch (4 x 2).
// RUN: attn-opt %s --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --attn-pack-gqa --attn-to-gpu --gpu-kernel-outlining --canonicalize | FileCheck %s --check-prefix=GRID

// PACKED-LABEL: func.func @decode(
// PACKED-SAME: %[[Q:[a-z0-9]+]]: memref<2x16x1x128xbf16>
// PACKED: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<2x16x1x128xbf16>
// PACKED: memref.expand_shape %[[Q]]
// PACKED: %[[QP:.*]] = memref.collapse_shape {{.*}} into memref<2x4x4x128xbf16>
// PACKED: memref.expand_shape %[[OUT]]
// PACKED: %[[OP:.*]] = memref.collapse_shape {{.*}} into memref<2x4x4x128xbf16>
// PACKED: attn.attention ins(%[[QP]], %{{.*}}, %{{.*}} : memref<2x4x4x128xbf16>, memref<2x4x?x128xbf16>, memref<2x4x?x128xbf16>) outs(%[[OP]] : memref<2x4x4x128xbf16>) scale = 0.0883883461{{[0-9]*}}{{$}}
// PACKED: return %[[OUT]]

// UNPACKED-LABEL: func.func @decode(
// UNPACKED-NOT: expand_shape
// UNPACKED: attn.attention ins({{.*}} : memref<2x16x1x128xbf16>, memref<2x4x?x128xbf16>, memref<2x4x?x128xbf16>) outs(%{{.*}} : memref<2x16x1x128xbf16>) scale = 0.0883883461{{[0-9]*}} causal = bottom_right

// LLVMIR-LABEL: define {{.*}} @decode(
// 2 x 16 x 1 x 128 bf16.
// LLVMIR: call ptr @mgpuMemAlloc(i64 8192,
// LLVMIR: call void @mgpuLaunchKernel(

// GRID-LABEL: func.func @decode(
// GRID: gpu.launch_func @decode_kernel::@decode_kernel blocks in (%c1, %c4, %c2)
func.func @decode(%q: tensor<2x16x1x128xbf16>, %k: tensor<2x4x?x128xbf16>,
                  %v: tensor<2x4x?x128xbf16>) -> tensor<2x16x1x128xbf16> {
  %e = tensor.empty() : tensor<2x16x1x128xbf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x16x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>)
                      outs(%e : tensor<2x16x1x128xbf16>) scale = 0.08838834764
                      causal = bottom_right -> tensor<2x16x1x128xbf16>
  return %r : tensor<2x16x1x128xbf16>
}

// Head counts known only at run time: the group and the tile test are
// computed on the host, which launches the packed kernel (grid y: Hkv) or
// the plain one (grid y: Hq); the packed views split the heads into two
// dynamic dims, which --attn-lower-dynamic-expand-shape turns into
// reinterpret casts before the NVVM pipeline lowers the host code.
// PACKED-LABEL: func.func @decode_dynamic_heads(
// PACKED: %[[G:.*]] = arith.divui
// PACKED: scf.if
// PACKED: memref.expand_shape {{.*}} into memref<?x?x?x1x128xbf16>
// PACKED: attn.attention {{.*}} outs(%{{.*}} : memref<?x?x?x128xbf16>) scale = 0.0883883461{{[0-9]*}}{{$}}
// PACKED: } else {
// PACKED: attn.attention {{.*}} outs(%{{.*}} : memref<?x?x1x128xbf16>) scale = 0.0883883461{{[0-9]*}} causal = bottom_right
// LLVMIR-LABEL: define {{.*}} @decode_dynamic_heads(
// LLVMIR: call ptr @mgpuMemAlloc(
// LLVMIR: call void @mgpuLaunchKernel(
// LLVMIR: call void @mgpuLaunchKernel(
func.func @decode_dynamic_heads(%q: tensor<?x?x1x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                                %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x1x128xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x1x128xbf16>
  %h = tensor.dim %q, %c1 : tensor<?x?x1x128xbf16>
  %e = tensor.empty(%b, %h) : tensor<?x?x1x128xbf16>
  %r = attn.attention ins(%q, %k, %v : tensor<?x?x1x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>)
                      outs(%e : tensor<?x?x1x128xbf16>) scale = 0.08838834764
                      causal = bottom_right -> tensor<?x?x1x128xbf16>
  return %r : tensor<?x?x1x128xbf16>
}
