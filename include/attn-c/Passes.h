/*===-- attn-c/Passes.h - C API for the attn passes ---------------*- C -*-===*\
|*                                                                            *|
|* Part of the attn-mlir project.                                             *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The attn passes, generated from Passes.td as upstream's are:               *|
|*   mlirRegisterAttnPasses(), and for each pass X                            *|
|*   mlirCreateAttnX() (a pass for mlirOpPassManagerAddOwnedPass) and         *|
|*   mlirRegisterAttnX(),                                                     *|
|* and the attn pipelines as builders.                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_PASSES_H
#define ATTN_C_PASSES_H

#include "mlir-c/Pass.h"

#include "attn/Dialect/Attn/Transforms/Passes.capi.h.inc"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the passes of --attn-cpu-pipeline to `passManager` (anchored on
/// builtin.module or any op): lowers a module of functions on tensors or
/// memrefs with attn ops to the LLVM dialect. `fold` canonicalizes attn ops
/// first (the pipeline's `fold` option, default true).
MLIR_CAPI_EXPORTED void mlirAttnBuildCPUPipeline(MlirOpPassManager passManager,
                                                 bool fold);

#ifdef __cplusplus
}
#endif

#endif // ATTN_C_PASSES_H
