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

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
class DialectRegistry;
namespace attn {

/// Replaces `op` by the unfused linalg computation (see --attn-decompose).
/// On memrefs the computation writes `op`'s init. Emits an error and fails
/// where the op cannot be decomposed.
LogicalResult decomposeAttention(RewriterBase &rewriter, AttentionOp op);

/// Replaces `op` on memrefs by the same op on tensor views of its buffers
/// (bufferization.to_tensor, restrict; one per buffer) whose result is
/// materialized in its init buffer, for the rewrites that work on tensors.
/// Returns the new op; fails without changing the IR where `op` is not on
/// memrefs.
FailureOr<AttentionOp> convertAttentionToTensors(RewriterBase &rewriter,
                                                 AttentionOp op);

/// Tiles `op` (on tensors) with an scf.forall over its batch dims, query
/// heads and blocks of `qTile` query rows. Returns the tiled ops.
FailureOr<SmallVector<AttentionOp>>
tileAttentionOverRows(RewriterBase &rewriter, AttentionOp op, int64_t qTile);

/// Replaces `op`, a tile with one batch/head and at most `maxRows` query
/// rows (and static Dqk, Dv, and no boolean mask), by the online-softmax
/// loop over blocks of `kvTile` keys on vectors: along the rows, or, for a
/// static number of rows up to `rowMajorRows` (decoding), along the head
/// dims (see --attn-tile). A tile of rows known only at run time runs the
/// row-major kernels of `rowCases` (up to `rowMajorRows`) on slices of its
/// rows where their count, at most `rowMajorRows`, is a sum of the cases
/// taken largest first, and the keys-major kernel otherwise; with
/// `onlyRowCases` (the count is always one of `rowCases`, as for the tiles
/// of a static Lq), no keys-major kernel where every case has its own.
/// Fails without changing the IR when `op` is not such a tile.
LogicalResult lowerAttentionTileToOnlineSoftmax(RewriterBase &rewriter,
                                                AttentionOp op, int64_t maxRows,
                                                int64_t kvTile,
                                                int64_t rowMajorRows = 0,
                                                ArrayRef<int64_t> rowCases = {},
                                                bool onlyRowCases = false);

/// The run-time row counts of `dynamicRowCases` that get a row-major kernel
/// of their own in tiles of at most `maxRows` rows (see --attn-tile): those
/// from 1 to min(`rowMajorRows`, `maxRows`), once each, in order.
/// --attn-pack-gqa asks the same to know which packed rows keep it.
SmallVector<int64_t> getRowMajorRowCases(ArrayRef<int64_t> dynamicRowCases,
                                         int64_t rowMajorRows, int64_t maxRows);

/// Whether the run-time row counts `cases` cover every count up to the
/// largest: a case of 1 row leaves nothing over from a greedy sum.
inline bool rowCasesCoverEveryCount(ArrayRef<int64_t> cases) {
  return llvm::is_contained(cases, 1);
}

/// Whether `rows`, a count known only at run time, is a sum of `cases` (not
/// empty) taken greedily, largest first (i1): `rows` modulo each case in
/// turn leaves 0. A constant true where rowCasesCoverEveryCount(cases).
Value emitIsGreedySumOfRowCases(OpBuilder &b, Location loc, Value rows,
                                ArrayRef<int64_t> cases);

/// Whether a tile of `rows` query rows, a count known only at run time,
/// takes row-major kernels (i1): whether `rows` is at most `maxRows` and a
/// greedy sum of `cases` (those of getRowMajorRowCases, at most `maxRows`).
Value emitHasRowMajorKernels(OpBuilder &b, Location loc, Value rows,
                             ArrayRef<int64_t> cases, int64_t maxRows);

/// Rewrites `op` (grouped-query, Hq = g * Hkv) into an attention with Hkv
/// heads of g * Lq query rows, on reshaped views of its query, init, mask
/// and bias (see --attn-pack-gqa), where that fills tiles of `blockRows`
/// query rows better (0: wherever it can). With `rowMajorRows` > 0 (the
/// kernel that follows has one for at most that many static query rows,
/// and for the run-time counts `rowCases`), rows known only at run time
/// are not packed where that would take that kernel from the op's rows and
/// leave at most `rowMajorRows` packed rows without it. Returns the new op
/// (the causal one, where a query length known at run time also has a
/// packed op for one bottom-right query); fails without changing the IR
/// where `op` is not packed.
FailureOr<AttentionOp> packQueryHeadGroups(RewriterBase &rewriter,
                                           AttentionOp op, int64_t blockRows,
                                           int64_t rowMajorRows = 0,
                                           ArrayRef<int64_t> rowCases = {});

/// Adds the pattern of --attn-approximate-exp2: every f32 math.exp2 (scalar
/// or vector) becomes a polynomial and exponent-bit arithmetic.
void populateApproximateExp2Patterns(RewritePatternSet &patterns);

/// Registers the BufferizableOpInterface external model of attn.attention.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// Registers the RuntimeVerifiableOpInterface external model of
/// attn.attention: run-time checks of the shape rules that involve dynamic
/// sizes (--generate-runtime-verification).
void registerRuntimeVerifiableOpInterfaceExternalModels(
    DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
