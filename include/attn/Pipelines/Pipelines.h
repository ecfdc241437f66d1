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
  PassOptions::Option<bool> fused{
      *this, "fused",
      llvm::cl::desc("Lower attention with --attn-tile (tiled online softmax "
                     "on vectors); false: the unfused --attn-decompose "
                     "reference, which materializes the score matrix"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> qTile{
      *this, "q-tile", llvm::cl::desc("Query rows per tile (fused)"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> kvTile{
      *this, "kv-tile", llvm::cl::desc("Keys per online-softmax block (fused)"),
      llvm::cl::init(32)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the tiles in parallel with OpenMP (the program then "
                     "needs libomp at run time); false: one thread"),
      llvm::cl::init(false)};
};

/// Lowers a module of functions on tensors (func, arith, math, tensor,
/// linalg and attn ops) to the LLVM dialect, ready for mlir-runner or
/// mlir-translate. attn.attention goes through --attn-tile (fused, the
/// default) or --attn-decompose.
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
