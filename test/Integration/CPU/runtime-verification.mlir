// --generate-runtime-verification asserts the op's shape rules that
// involve dynamic sizes, which the verifier cannot check and the lowerings
// rely on (a wrong size reads out of bounds). Each entry point below calls
// @attention, whose operands are all dynamic, with sizes that break one
// rule; each run aborts with the rule and the op's location. @valid keeps
// the rules and runs to the end, on both CPU paths. (That the checks pass
// on valid programs is also tested numerically: runtime-verification.test.)
// (stdbuf: cf.assert writes its message with puts and aborts, which does
// not flush a buffered stdout.)
// RUN: attn-opt %s --generate-runtime-verification --attn-cpu-pipeline -o %t
// RUN: mlir-runner %t -e valid -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=VALID
// RUN: attn-opt %s --generate-runtime-verification --attn-cpu-pipeline=fused=false | mlir-runner -e valid -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=VALID
// RUN: not --crash stdbuf -o0 mlir-runner %t -e heads_not_multiple -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not --crash stdbuf -o0 mlir-runner %t -e zero_kv_heads -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not --crash stdbuf -o0 mlir-runner %t -e value_length -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=LK
// RUN: not --crash stdbuf -o0 mlir-runner %t -e key_dim -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=DQK
// RUN: not --crash stdbuf -o0 mlir-runner %t -e mask_one_row -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=MASK
// RUN: not --crash stdbuf -o0 mlir-runner %t -e zero_period -entry-point-result=void -shared-libs=%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=PERIOD

// VALID: valid done
// HEADS: ERROR: Runtime op verification failed
// HEADS: ^ the query head count (Hq) is not a multiple of the key/value head count (Hkv)
// HEADS: Location: loc("{{.*}}runtime-verification.mlir":{{[0-9]+}}:8)
// LK: ^ v's Lk differs from k's
// DQK: ^ k's Dqk differs from q's
// MASK: ^ mask dim 1 differs from the scores' (only a static 1 broadcasts)
// PERIOD: ^ causal_period is not positive

func.func @attention(%q: tensor<?x?x?xf32>, %k: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>,
                     %m: tensor<?x?x?xi1>, %p: index) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %hq = tensor.dim %q, %c0 : tensor<?x?x?xf32>
  %lq = tensor.dim %q, %c1 : tensor<?x?x?xf32>
  %dv = tensor.dim %v, %c2 : tensor<?x?x?xf32>
  %init = tensor.empty(%hq, %lq, %dv) : tensor<?x?x?xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
         mask(%m : tensor<?x?x?xi1>) outs(%init : tensor<?x?x?xf32>) scale = 0.25
         causal = bottom_right causal_period(%p) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// Calls @attention on constant operands of the given static shapes.
func.func @run(%q: tensor<?x?x?xf32>, %k: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>,
               %m: tensor<?x?x?xi1>, %p: index) {
  %r = call @attention(%q, %k, %v, %m, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> tensor<?x?x?xf32>
  return
}

// 4 query heads on 2 kv heads, 3 rows (one query per period), 5 keys.
func.func @valid() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x8xf32>
  %v = arith.constant dense<1.0> : tensor<2x5x8xf32>
  %m = arith.constant dense<true> : tensor<4x3x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %vd = tensor.cast %v : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x3x5xi1> to tensor<?x?x?xi1>
  %r = call @attention(%qd, %kd, %vd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> tensor<?x?x?xf32>
  vector.print str "valid done\n"
  return
}

// 3 query heads on 2 kv heads.
func.func @heads_not_multiple() {
  %q = arith.constant dense<0.5> : tensor<3x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x8xf32>
  %m = arith.constant dense<true> : tensor<3x3x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<3x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<3x3x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %kd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}

// 4 query heads on no kv head: Hq is a multiple of 0 only with Hq = 0, and
// the verifier refuses a static Hkv of 0 in any case.
func.func @zero_kv_heads() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<> : tensor<0x5x8xf32>
  %m = arith.constant dense<true> : tensor<4x3x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<0x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x3x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %kd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}

// v has 4 keys, k 5.
func.func @value_length() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x8xf32>
  %v = arith.constant dense<1.0> : tensor<2x4x8xf32>
  %m = arith.constant dense<true> : tensor<4x3x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %vd = tensor.cast %v : tensor<2x4x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x3x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %vd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}

// k rows of 6 features, q rows of 8.
func.func @key_dim() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x6xf32>
  %v = arith.constant dense<1.0> : tensor<2x5x8xf32>
  %m = arith.constant dense<true> : tensor<4x3x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x6xf32> to tensor<?x?x?xf32>
  %vd = tensor.cast %v : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x3x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %vd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}

// A mask of one row, meant to broadcast over the 3 rows: a dynamic dim
// is read as the full size.
func.func @mask_one_row() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x8xf32>
  %m = arith.constant dense<true> : tensor<4x1x5xi1>
  %p = arith.constant 3 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x1x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %kd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}

func.func @zero_period() {
  %q = arith.constant dense<0.5> : tensor<4x3x8xf32>
  %k = arith.constant dense<0.5> : tensor<2x5x8xf32>
  %m = arith.constant dense<true> : tensor<4x3x5xi1>
  %p = arith.constant 0 : index
  %qd = tensor.cast %q : tensor<4x3x8xf32> to tensor<?x?x?xf32>
  %kd = tensor.cast %k : tensor<2x5x8xf32> to tensor<?x?x?xf32>
  %md = tensor.cast %m : tensor<4x3x5xi1> to tensor<?x?x?xi1>
  call @run(%qd, %kd, %kd, %md, %p) : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi1>, index) -> ()
  return
}
