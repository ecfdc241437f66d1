//===- Transforms.h - attn dialect rewrites ---------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites behind the attn passes, exposed for compilers that drive them
// without the pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
class DialectRegistry;
namespace attn {
class AttentionOp;

/// Replaces `op` by the unfused linalg computation (see --attn-decompose).
/// On memrefs the computation writes `op`'s init. Emits an error and fails
/// where the op cannot be decomposed.
LogicalResult decomposeAttention(RewriterBase &rewriter, AttentionOp op);

/// Registers the BufferizableOpInterface external model of attn.attention.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
