//===- InitAllAttn.h - register everything attn-mlir provides ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITALLATTN_H
#define ATTN_INITALLATTN_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace attn {

/// Adds the attn dialect and its interface models to `registry`, and what
/// the attn passes and pipelines need on their input: the upstream dialects
/// an attention computation is written in (arith, func, linalg, tensor, ...)
/// and their bufferization models. Safe to combine with
/// mlir::registerAllDialects/registerAllExtensions.
inline void registerAllAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  registerAttnPipelineDependencies(registry);
}

/// Registers every attn pass and pass pipeline with the global registry.
inline void registerAllAttnPasses() {
  registerAttnPasses();
  registerAttnPipelines();
}

} // namespace attn
} // namespace mlir

#endif // ATTN_INITALLATTN_H
