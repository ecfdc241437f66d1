// AttnMLIRPlugin.so in Debian's stock mlir-opt 22: one file is the dialect
// plugin and the pass plugin.
//
// Pass flags as in attn-opt, after the plugin is loaded:
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin \
// RUN:   --load-pass-plugin=%attn_plugin --attn-raise --attn-decompose | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin \
// RUN:   --load-pass-plugin=%attn_plugin --attn-check-scale \
// RUN:   --attn-cpu-pipeline=fold=false 2>&1 | FileCheck %s --check-prefix=CPU
// A textual pipeline, mixing built-in and attn passes; the dialect plugin
// alone registers the passes too:
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin \
// RUN:   --pass-pipeline='builtin.module(canonicalize,attn-decompose)' | FileCheck %s
// The result runs:
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin \
// RUN:   --load-pass-plugin=%attn_plugin --attn-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s --check-prefix=EXEC
// Round trip with the dialect plugin:
// RUN: mlir-opt %s --load-dialect-plugin=%attn_plugin | FileCheck %s --check-prefix=ROUNDTRIP
//
// Refusals are clean errors:
// RUN: not mlir-opt %s --load-pass-plugin=%attn_plugin --attn-decompos 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mlir-opt %s --load-dialect-plugin=%attn_plugin \
// RUN:   --load-pass-plugin=%attn_plugin --canonicalize --attn-decompose 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MIXED
// RUN: not mlir-opt %s --attn-decompose 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
//
// One copy of MLIR: the plugin uses mlir-opt's libMLIR.so and defines none
// of MLIR's own symbols.
// RUN: llvm-readelf --dynamic-table %attn_plugin | FileCheck %s --check-prefix=NEEDED
// RUN: llvm-nm --dynamic --defined-only %attn_plugin | FileCheck %s --check-prefix=SYMBOLS

// CHECK-LABEL: func.func @attention(
// CHECK-NOT: attn.attention
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: return

// CPU: warning: suspicious attention scale 1: scores are not scaled although Dqk = 2
// CPU: llvm.func @main()
// CPU-NOT: attn.

// EXEC: sizes = [1, 1, 2, 2]
// EXEC-NEXT: {{\[}}[{{\[}}[2,     3],
// EXEC-NEXT: [2,     3]]]]

// ROUNDTRIP: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) outs(%{{.*}} : tensor<1x1x2x2xf32>) scale = 1.000000e+00 -> tensor<1x1x2x2xf32>

// UNKNOWN: mlir-opt: Unknown command line argument '--attn-decompos'.
// MIXED: '--attn-decompose' (a pass from a plugin) cannot be combined with flags of built-in passes
// NOPLUGIN: Unknown command line argument '--attn-decompose'

// NEEDED: (NEEDED) Shared library: [libMLIR.so.22.1]
// SYMBOLS-NOT: {{ T _ZN4mlir11MLIRContext}}
// SYMBOLS-NOT: {{ T _ZN4mlir11PassManager}}
// SYMBOLS: mlirGetDialectPluginInfo
// SYMBOLS: mlirGetPassPluginInfo

func.func private @printMemrefF32(tensor<*xf32>)

func.func @attention(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>,
                     %v: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %init = tensor.empty() : tensor<1x1x2x2xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
         outs(%init : tensor<1x1x2x2xf32>) scale = 1.0 -> tensor<1x1x2x2xf32>
  return %o : tensor<1x1x2x2xf32>
}

// Equal scores: every row is the mean of the values, [2, 3].
func.func @main() {
  %q = arith.constant dense<1.0> : tensor<1x1x2x2xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x2x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %o = call @attention(%q, %k, %v) : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %u = tensor.cast %o : tensor<1x1x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
