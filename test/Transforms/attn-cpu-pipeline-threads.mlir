// --attn-cpu-pipeline=threads=true: the tiles run in an OpenMP worksharing
// loop, scheduled by --attn-omp-schedule (dynamic unless told otherwise).
// RUN: attn-opt %s --attn-cpu-pipeline=threads=true | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline="threads=true schedule=static" | FileCheck %s --check-prefix=STATIC
// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s --check-prefix=SERIAL
// RUN: not attn-opt %s --attn-cpu-pipeline="threads=true schedule=auto" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --schedule option: Cannot find option named 'auto'!

// The 4 tiles of a causal attention (two heads of 2 tiles) differ in cost.
// CHECK-LABEL: llvm.func @causal
// CHECK: omp.parallel
// CHECK: omp.wsloop schedule(dynamic) {
// STATIC-LABEL: llvm.func @causal
// STATIC: omp.wsloop schedule(static) {
// Without threads, a loop and no OpenMP.
// SERIAL-LABEL: llvm.func @causal
// SERIAL-NOT: omp.
func.func @causal(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                  %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %init = tensor.empty() : tensor<1x2x128x64xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>)
         outs(%init : tensor<1x2x128x64xf32>) scale = 0.125 causal = top_left
         -> tensor<1x2x128x64xf32>
  return %r : tensor<1x2x128x64xf32>
}
