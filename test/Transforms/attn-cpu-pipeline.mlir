// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC
// RUN: attn-opt %s --attn-cpu-pipeline=approximate-exp2=false | FileCheck %s --check-prefix=LIBM
// RUN: attn-opt %s --attn-cpu-pipeline=approximate-exp2=false | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

// The pipeline leaves only the LLVM dialect. The exponentials are
// polynomials (--attn-approximate-exp2), or libm's with approximate-exp2=false.
// IR-NOT: attn.
// IR-NOT: linalg.
// IR-NOT: tensor.
// IR-NOT: memref.
// IR-LABEL: llvm.func @main()
// IR-NOT: llvm.intr.exp2
// IR: llvm.intr.floor
// IR-NOT: llvm.intr.exp2
// LIBM-LABEL: llvm.func @main()
// LIBM: llvm.intr.exp2

// A problem whose answer is worked out by hand. q rows [1,0], [0,1], [1,1];
// keys [1,0], [0,1]; values [1,2], [3,4]; scale 1; causal bottom_right with
// Lq = 3 > Lk = 2: query i sees key j iff j <= i - 1.
//   row 0 sees no key                         -> [0, 0] (not NaN)
//   row 1 sees key 0 only                     -> [1, 2]
//   row 2 sees both with equal scores 1 and 1 -> the mean, [2, 3]
// EXEC: sizes = [1, 1, 3, 2]
// EXEC-NEXT: {{\[}}[{{\[}}[0,     0],
// EXEC-NEXT: [1,     2],
// EXEC-NEXT: [2,     3]]]]

// And with scale 2 and top_left alignment, row 0 sees key 0 only, row 1
// sees keys 0 and 1 with scores 0 and 2, row 2 both with scores 2 and 2:
//   row 1: weights 1/(1+e^2), e^2/(1+e^2) -> [1 + 2p, 2 + 2p], p = 0.880797
// EXEC: sizes = [1, 1, 3, 2]
// EXEC-NEXT: {{\[}}[{{\[}}[1,     2],
// EXEC-NEXT: [2.76159,     3.76159],
// EXEC-NEXT: [2,     3]]]]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]]> : tensor<1x1x3x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %init = tensor.empty() : tensor<1x1x3x2xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x3x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
         outs(%init : tensor<1x1x3x2xf32>) scale = 1.0 causal = bottom_right -> tensor<1x1x3x2xf32>
  %u = tensor.cast %r : tensor<1x1x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()

  %init2 = tensor.empty() : tensor<1x1x3x2xf32>
  %r2 = attn.attention ins(%q, %k, %v : tensor<1x1x3x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
          outs(%init2 : tensor<1x1x3x2xf32>) scale = 2.0 causal = top_left -> tensor<1x1x3x2xf32>
  %u2 = tensor.cast %r2 : tensor<1x1x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  return
}
