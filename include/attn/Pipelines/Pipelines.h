//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace attn {

struct AttnCPUPipelineOptions
    : public PassPipelineOptions<AttnCPUPipelineOptions> {
  PassOptions::Option<bool> fold{
      *this, "fold",
      llvm::cl::desc("Canonicalize attn ops first, so that scalings of q and "
                     "k fold into the scale attribute"),
      llvm::cl::init(true)};
};

/// Lowers a module of functions on tensors (func, arith, math, tensor,
/// linalg and attn ops) to the LLVM dialect, ready for mlir-runner or
/// mlir-translate. attn.attention goes through --attn-decompose.
void buildAttnCPUPipeline(OpPassManager &pm,
                          const AttnCPUPipelineOptions &options);

/// Registers --attn-cpu-pipeline.
void registerAttnPipelines();

/// Adds the dialects and the external interface models that the attn
/// pipelines need on their input and along the way (the bufferization and
/// buffer-deallocation models of arith, cf, func, linalg, scf, tensor,
/// vector, ...).
/// attn-opt gets them from registerAllDialects/registerAllExtensions; a
/// compiler that registers only what it uses gets them through
/// registerAllAttnDialects, which calls this.
void registerAttnPipelineDependencies(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
