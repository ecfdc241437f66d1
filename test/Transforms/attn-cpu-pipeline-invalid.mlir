// What the attn pipelines do not lower is an error at the op, before any
// pass runs: TOSA left in the graph (--attn-raise turns the attention
// pattern into attn.attention; the rest must be lowered to linalg first).
// Found by the bad-input test: bufferization's error on the same input had
// no location.
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-cpu-pipeline
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-gpu-emulation-pipeline
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-gpu-pipeline

func.func @unraised_tosa(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  // The first TOSA op in the graph is reported.
  // expected-error @+1 {{'tosa.transpose' op is not lowered by the attn pipelines: raise the attention pattern first (--attn-raise), and lower the rest of the TOSA graph to linalg (--tosa-to-linalg-pipeline)}}
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}

// -----

// A dead TOSA constant (as --attn-raise leaves behind) is no obstacle.
func.func @dead_tosa_constant(%a: tensor<4xf32>) -> tensor<4xf32> {
  %unused = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  return %a : tensor<4xf32>
}
