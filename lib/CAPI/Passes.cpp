//===- Passes.cpp - C API for the attn passes and pipelines ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Passes.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

#ifdef __cplusplus
extern "C" {
#endif

#include "attn/Dialect/Attn/Transforms/Passes.capi.cpp.inc"

#ifdef __cplusplus
}
#endif

void mlirAttnBuildCPUPipeline(MlirOpPassManager passManager, bool fold) {
  AttnCPUPipelineOptions options;
  options.fold = fold;
  buildAttnCPUPipeline(*unwrap(passManager), options);
}
