//===- PipelineInputCheck.h - what the attn pipelines cannot lower -*- C++ -*-//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PIPELINES_PIPELINEINPUTCHECK_H
#define ATTN_LIB_PIPELINES_PIPELINEINPUTCHECK_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace attn {

/// A pass that fails, with an error at the op, on the first live op of a
/// dialect the attn pipelines do not lower (TOSA: it must be raised or
/// lowered to linalg first). Without it such ops reach bufferization, whose
/// error can lose the location (constants it re-creates have none).
std::unique_ptr<Pass> createPipelineInputCheckPass();

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_PIPELINES_PIPELINEINPUTCHECK_H
