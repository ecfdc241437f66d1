// RUN: attn-opt %s --generate-runtime-verification="verbose-level=0" --split-input-file | FileCheck %s

// attn.attention's RuntimeVerifiableOpInterface model: one cf.assert per
// shape rule that involves a dynamic size (the verifier checked the rest).
// Executed: test/Integration/CPU/runtime-verification.mlir.

// Every size dynamic: batch dim 0 of k, v and init against q's; Hkv of v,
// Hq of init; Hq a multiple of Hkv; Lq, Lk, Dqk, Dv; each dim of the mask
// and bias that is not a static 1 at the scores' size where either is
// dynamic (the static 4 and 8 against dynamic Lq and Lk too); the period
// and, with it, the offset.
// CHECK-LABEL: func @all_dynamic
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<?x?x?x?xf16>, %[[K:[a-z0-9]+]]: tensor<?x?x?x?xf16>
// CHECK: cf.assert %{{.*}}, "{{.*}}k's batch dim 0 differs from q's
// CHECK: cf.assert %{{.*}}, "{{.*}}v's batch dim 0 differs from q's
// CHECK: cf.assert %{{.*}}, "{{.*}}init's batch dim 0 differs from q's
// CHECK: cf.assert %{{.*}}, "{{.*}}v's head count differs from k's (Hkv)
// CHECK: cf.assert %{{.*}}, "{{.*}}init's head count differs from q's (Hq)
// CHECK: %[[HQ:.*]] = tensor.dim %[[Q]], %c1
// CHECK: %[[HKV:.*]] = tensor.dim %[[K]], %c1
// CHECK: %[[SOME:.*]] = arith.cmpi ne, %[[HKV]], %c0
// CHECK: %[[DIV:.*]] = arith.maxui %[[HKV]], %c1
// CHECK: %[[REM:.*]] = arith.remui %[[HQ]], %[[DIV]]
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[REM]], %c0
// CHECK: %[[OK:.*]] = arith.andi %[[SOME]], %[[WHOLE]]
// CHECK: cf.assert %[[OK]], "{{.*}}the query head count (Hq) is not a multiple of the key/value head count (Hkv)
// CHECK: cf.assert %{{.*}}, "{{.*}}init's Lq differs from q's
// CHECK: cf.assert %{{.*}}, "{{.*}}v's Lk differs from k's
// CHECK: cf.assert %{{.*}}, "{{.*}}k's Dqk differs from q's
// CHECK: cf.assert %{{.*}}, "{{.*}}init's Dv differs from v's
// CHECK: cf.assert %{{.*}}, "{{.*}}mask dim 0 differs from the scores' (only a static 1 broadcasts)
// CHECK-NOT: mask dim 1
// CHECK: cf.assert %{{.*}}, "{{.*}}mask dim 2 differs from the scores'
// CHECK: cf.assert %{{.*}}, "{{.*}}mask dim 3 differs from the scores'
// CHECK-NOT: bias dim 0
// CHECK-NOT: bias dim 1
// CHECK: cf.assert %{{.*}}, "{{.*}}bias dim 2 differs from the scores'
// CHECK: cf.assert %{{.*}}, "{{.*}}bias dim 3 differs from the scores'
// CHECK: cf.assert %{{.*}}, "{{.*}}causal_period is not positive
// CHECK: cf.assert %{{.*}}, "{{.*}}causal_offset is negative with a causal_period
// CHECK: attn.attention
func.func @all_dynamic(%q: tensor<?x?x?x?xf16>, %k: tensor<?x?x?x?xf16>, %v: tensor<?x?x?x?xf16>,
                       %m: tensor<?x1x4x?xi1>, %b: tensor<1x1x?x8xf32>, %o: tensor<?x?x?x?xf16>,
                       %p: index, %c: index) -> tensor<?x?x?x?xf16> {
  %0 = attn.attention ins(%q, %k, %v : tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>, tensor<?x?x?x?xf16>)
         mask(%m : tensor<?x1x4x?xi1>) bias(%b : tensor<1x1x?x8xf32>) outs(%o : tensor<?x?x?x?xf16>)
         scale = 0.125 causal = top_left causal_period(%p) causal_offset(%c) -> tensor<?x?x?x?xf16>
  return %0 : tensor<?x?x?x?xf16>
}

// -----

// Static sizes: nothing to check at run time.
// CHECK-LABEL: func @all_static
// CHECK-NOT: cf.assert
// CHECK: attn.attention
func.func @all_static(%q: tensor<8x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x32x64xf32>,
                      %o: tensor<8x16x64xf32>) -> tensor<8x16x64xf32> {
  %0 = attn.attention ins(%q, %k, %v : tensor<8x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x64xf32>)
         outs(%o : tensor<8x16x64xf32>) scale = 0.125 -> tensor<8x16x64xf32>
  return %0 : tensor<8x16x64xf32>
}

// -----

// On memrefs, with only Lk dynamic: v's Lk against k's, and the mask's.
// CHECK-LABEL: func @memref_dynamic_keys
// CHECK: memref.dim
// CHECK: cf.assert %{{.*}}, "{{.*}}v's Lk differs from k's
// CHECK: cf.assert %{{.*}}, "{{.*}}mask dim 2 differs from the scores'
// CHECK-NOT: cf.assert
// CHECK: attn.attention
func.func @memref_dynamic_keys(%q: memref<4x16x32xbf16>, %k: memref<4x?x32xbf16>, %v: memref<4x?x32xbf16>,
                               %m: memref<1x16x?xi1>, %o: memref<4x16x32xbf16>) {
  attn.attention ins(%q, %k, %v : memref<4x16x32xbf16>, memref<4x?x32xbf16>, memref<4x?x32xbf16>)
    mask(%m : memref<1x16x?xi1>) outs(%o : memref<4x16x32xbf16>) scale = 0.125
  return
}
