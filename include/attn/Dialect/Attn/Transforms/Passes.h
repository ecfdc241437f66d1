//===- Passes.h - attn dialect passes ---------------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/OpenMP/OpenMPOpsEnums.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace NVVM {
class NVVMDialect;
} // namespace NVVM
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace memref {
class MemRefDialect;
} // namespace memref
namespace nvgpu {
class NVGPUDialect;
} // namespace nvgpu
namespace omp {
class OpenMPDialect;
} // namespace omp
namespace affine {
class AffineDialect;
} // namespace affine
namespace arith {
class ArithDialect;
} // namespace arith
namespace bufferization {
class BufferizationDialect;
} // namespace bufferization
namespace linalg {
class LinalgDialect;
} // namespace linalg
namespace math {
class MathDialect;
} // namespace math
namespace scf {
class SCFDialect;
} // namespace scf
namespace tensor {
class TensorDialect;
} // namespace tensor
namespace vector {
class VectorDialect;
} // namespace vector

namespace attn {

#define GEN_PASS_DECL
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
