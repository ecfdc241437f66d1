/*===-- attn-c/RegisterEverything.h - register all of attn --------*- C -*-===*\
|*                                                                            *|
|* Part of the attn-mlir project.                                             *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The C counterpart of attn/InitAllAttn.h, next to upstream's                *|
|* mlir-c/RegisterEverything.h (mlirRegisterAllDialects, ...).                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_REGISTEREVERYTHING_H
#define ATTN_C_REGISTEREVERYTHING_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the attn dialect, its interface models, and what the attn passes
/// and pipelines need (the arith, func, linalg, tensor, ... dialects and
/// their bufferization models) to `registry`.
MLIR_CAPI_EXPORTED void
mlirAttnRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every attn pass and pipeline by name (for mlirParsePassPipeline
/// and mlirOpPassManagerAddPipeline).
MLIR_CAPI_EXPORTED void mlirAttnRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif // ATTN_C_REGISTEREVERYTHING_H
