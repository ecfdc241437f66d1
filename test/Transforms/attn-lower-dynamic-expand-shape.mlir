// RUN: attn-opt %s --split-input-file --attn-lower-dynamic-expand-shape | FileCheck %s
// What upstream's expand-strided-metadata makes of the result (it crashes
// on the ops as they were).
// RUN: attn-opt %s --split-input-file --attn-lower-dynamic-expand-shape --expand-strided-metadata --canonicalize | FileCheck %s --check-prefix=LOWERED

// The query heads of GQA packing with dynamic head counts: [Hq] splits
// into [Hkv, g], both dynamic. The cast keeps the source's buffer and
// offset; g's stride is the heads' stride (Lq * 32), Hkv's is that times g.
// CHECK-LABEL: func.func @two_dynamic
// CHECK-SAME: %[[SRC:[a-z0-9]+]]: memref<?x?x?x32xf32>, %[[HKV:[a-z0-9]+]]: index, %[[G:[a-z0-9]+]]: index, %[[B:[a-z0-9]+]]: index, %[[LQ:[a-z0-9]+]]: index
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:4, %[[STRIDES:.*]]:4 = memref.extract_strided_metadata %[[SRC]]
// CHECK: %[[OUTER:.*]] = arith.muli %[[STRIDES]]#1, %[[G]]
// CHECK: %[[CAST:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[HKV]], %[[G]], %[[LQ]], 32], strides: [%[[STRIDES]]#0, %[[OUTER]], %[[STRIDES]]#1, 32, 1] : memref<f32> to memref<?x?x?x?x32xf32>
// CHECK-NOT: expand_shape
// CHECK: return %[[CAST]]
// LOWERED-LABEL: func.func @two_dynamic
// LOWERED-NOT: expand_shape
// LOWERED: memref.reinterpret_cast
func.func @two_dynamic(%src: memref<?x?x?x32xf32>, %hkv: index, %g: index, %b: index, %lq: index) -> memref<?x?x?x?x32xf32> {
  %e = memref.expand_shape %src [[0], [1, 2], [3], [4]] output_shape [%b, %hkv, %g, %lq, 32]
      : memref<?x?x?x32xf32> into memref<?x?x?x?x32xf32>
  return %e : memref<?x?x?x?x32xf32>
}

// -----

// A strided source with a dynamic offset, and a group of three with a
// static dim between the dynamic ones: strides from the innermost out.
// CHECK-LABEL: func.func @strided_three
// CHECK-SAME: %[[SRC:[a-z0-9]+]]: memref<?x8xf16, strided<[?, 1], offset: ?>>, %[[X:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: index
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[SRC]]
// CHECK: %[[MID:.*]] = arith.muli %[[STRIDES]]#0, %[[Y]]
// CHECK: %[[TOP:.*]] = arith.muli %[[MID]], %c3
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%[[X]], 3, %[[Y]], 8], strides: [%[[TOP]], %[[MID]], %[[STRIDES]]#0, 1]
func.func @strided_three(%src: memref<?x8xf16, strided<[?, 1], offset: ?>>, %x: index, %y: index)
    -> memref<?x3x?x8xf16, strided<[?, ?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %src [[0, 1, 2], [3]] output_shape [%x, 3, %y, 8]
      : memref<?x8xf16, strided<[?, 1], offset: ?>> into memref<?x3x?x8xf16, strided<[?, ?, ?, 1], offset: ?>>
  return %e : memref<?x3x?x8xf16, strided<[?, ?, ?, 1], offset: ?>>
}

// -----

// One dynamic dim per group is upstream's to lower: left as it is.
// CHECK-LABEL: func.func @one_dynamic
// CHECK: memref.expand_shape
// CHECK-NOT: reinterpret_cast
func.func @one_dynamic(%src: memref<?x32xf32>, %b: index) -> memref<?x4x32xf32> {
  %e = memref.expand_shape %src [[0, 1], [2]] output_shape [%b, 4, 32]
      : memref<?x32xf32> into memref<?x4x32xf32>
  return %e : memref<?x4x32xf32>
}
