//===- RaiseAnalysis.h - pieces of the --attn-raise matcher -----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The matcher behind --attn-raise, split into independent pieces:
//
// * Space: the index space of the score matrix. Batch/head dims are kept as
//   a list of "factors" (the finest split of the batch dims that any reshape
//   in the graph needs), followed by the query row I and the key J; D and E
//   name the qk and v feature dims of operands. Each dim of a tensor in the
//   graph is described by a DimRef: a contiguous range of space dims (a
//   batch dim covering several factors, or one of I/J/D/E) or a unit dim.
// * Contraction classifier: which loops of a linalg or tosa matmul are
//   batch/M/N/K, and whether it is a plain sum of products from zero.
// * Expression builder: evaluates a tensor at a DimMap, walking through
//   elementwise, reduction, layout and softmax ops of linalg, arith/math and
//   tosa, and produces a hash-consed scalar expression DAG over the space.
//   Structurally equal computations give the same node, which is how the
//   softmax matcher checks that max, exp and sum see the same scores.
// * Layout tracer/builder: follows q/k/v back through transposes, reshapes,
//   broadcasts and constant scalings, and rebuilds them in the op's
//   [B..., H, L, D] layout.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEANALYSIS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEANALYSIS_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
namespace raise {

//===----------------------------------------------------------------------===//
// Space
//===----------------------------------------------------------------------===//

/// A dim of a tensor seen in the space: the space dims [lo, hi), or a unit
/// dim (size 1, read at index 0) when lo == hi.
struct DimRef {
  int lo = 0, hi = 0;
  static DimRef unit() { return {}; }
  static DimRef of(int d) { return {d, d + 1}; }
  bool isUnit() const { return lo == hi; }
  bool contains(int d) const { return lo <= d && d < hi; }
  bool operator==(const DimRef &o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const DimRef &o) const { return !(*this == o); }
};
using DimMap = SmallVector<DimRef, 6>;

/// Thrown (as a value) when a reshape needs a factor split in two: the
/// analysis restarts with the finer factor list.
struct RefineRequest {
  int factor = -1;
  int64_t outer = 0, inner = 0;
};

class Space {
public:
  explicit Space(SmallVector<int64_t> factors) : factors(std::move(factors)) {}

  int numFactors() const { return factors.size(); }
  int I() const { return numFactors(); }
  int J() const { return numFactors() + 1; }
  int D() const { return numFactors() + 2; }
  int E() const { return numFactors() + 3; }
  bool isFactorRange(DimRef r) const {
    return !r.isUnit() && r.hi <= numFactors();
  }
  int64_t factorSize(int f) const { return factors[f]; }
  /// Static size of a dim, or ShapedType::kDynamic.
  int64_t size(DimRef r) const;
  std::string str(DimRef r) const;

  /// Splits `r` into consecutive pieces of the given sizes (1 gives a unit
  /// piece). Fails when the sizes do not match; sets `refine` and fails when
  /// a factor must be split first.
  std::optional<SmallVector<DimRef>> split(DimRef r, ArrayRef<int64_t> sizes,
                                           RefineRequest &refine) const;
  /// Merges the refs of dims that a reshape fuses into one dim.
  std::optional<DimRef> merge(ArrayRef<DimRef> refs) const;

  SmallVector<int64_t> factors;
  /// Static Lq, Lk, Dqk, Dv (or kDynamic), learned from the matmuls.
  int64_t lq = 0, lk = 0, dqk = 0, dv = 0;
};

/// Applies a map to a DimMap: result r of `map` (an AffineDimExpr d or the
/// constant 0) reads refs[d] (or a unit dim). Fails on other expressions.
std::optional<DimMap> composeMap(AffineMap map, ArrayRef<DimRef> refs);

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// A contraction out[batch, m, n] = sum_k lhs[.., m, k] * rhs[.., k, n] in
/// any layout given by the maps (over the loops).
struct ContractionInfo {
  Operation *op = nullptr;
  Value lhs, rhs, init, result;
  AffineMap lhsMap, rhsMap, outMap;
  SmallVector<unsigned> batch;
  unsigned m = 0, n = 0, k = 0, numLoops = 0;
};

/// Recognizes linalg contractions (named or generic) and tosa.matmul whose
/// body is exactly a sum of (extended) products into a zero accumulator.
/// Any float type: the analysis refuses those attn.attention cannot take
/// with a remark, rather than passing over them in silence.
std::optional<ContractionInfo> classifyContraction(Operation *op);

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind {
  /// The result of the first matmul (`tensor` at `map`).
  Score,
  /// A scalar constant (`value`).
  Const,
  /// An opaque tensor read at `map`, or a scalar value (empty map).
  Leaf,
  /// The index along `dim`.
  Index,
  /// A pure scalar arith/math op `opName` applied to the operands.
  Op,
  /// Sum/max along J of operand 0 (J is bound inside the operand).
  RSum,
  RMax,
  /// Softmax along J of operand 0.
  Softmax,
  /// A reduction or softmax along a dim that is not J (`note` says which).
  BadReduce,
};

struct Expr {
  Expr(ExprKind kind, Type type) : kind(kind), type(type) {}

  ExprKind kind;
  Type type;
  SmallVector<Expr *, 3> operands;
  std::optional<OperationName> opName;
  /// The op it was built from where that is not `opName` (a TOSA op), for
  /// diagnostics; not part of the expression's identity.
  std::optional<OperationName> source;
  DictionaryAttr attrs;
  TypedAttr value;
  Value tensor;
  DimMap map;
  DimRef dim;
  std::string note;
  bool dependsOnScore = false;

  bool isOp(StringRef name) const {
    return kind == ExprKind::Op && opName->getStringRef() == name;
  }
  template <typename OpTy> bool isOp() const {
    return isOp(OpTy::getOperationName());
  }
  std::optional<double> getConstFloat() const;
  std::optional<int64_t> getConstInt() const;
};

/// Owns hash-consed expressions.
class ExprContext {
public:
  explicit ExprContext(MLIRContext *ctx) : ctx(ctx) {}
  Expr *intern(Expr proto);
  Expr *constant(TypedAttr value);
  Expr *constFloat(Type type, double v);
  Expr *op(StringRef name, Type type, ArrayRef<Expr *> operands,
           DictionaryAttr attrs = {});
  MLIRContext *getContext() { return ctx; }

private:
  MLIRContext *ctx;
  std::vector<std::unique_ptr<Expr>> storage;
  std::map<std::string, Expr *> uniq;
};

/// Drops float-to-float casts (extf, truncf) around `e`.
Expr *stripCasts(Expr *e);
/// Equality up to float casts at any depth.
bool equivModCasts(Expr *a, Expr *b);
/// Does `e` (transitively) contain a softmax-like node?
bool containsSoftmaxLike(Expr *e, int depth = 8);
/// Space dims that leaves and index nodes of `e` read.
void collectUsedDims(Expr *e, SmallVectorImpl<bool> &used,
                     DenseSet<Expr *> &seen);
/// Leaves of `e`.
void collectLeaves(Expr *e, SmallVectorImpl<Expr *> &leaves,
                   DenseSet<Expr *> &seen);

/// Builds expressions by evaluating tensors at DimMaps.
class ExprBuilder {
public:
  ExprBuilder(ExprContext &ec, Space &space, int budget)
      : ec(ec), space(space), budget(budget) {}

  /// The expression for `v` read at `map` (one DimRef per dim of `v`).
  /// Anything not understood becomes a Leaf. Check `failed()` afterwards.
  Expr *build(Value v, const DimMap &map);

  /// Set when the analysis must restart with finer factors.
  std::optional<RefineRequest> refine;
  /// Set when the op budget ran out.
  bool overBudget = false;
  /// Set when values nest deeper than kMaxDepth: the builder, and every
  /// walk of its expressions, recurses once per level.
  bool tooDeep = false;
  static constexpr int kMaxDepth = 512;
  bool failed() const { return refine || overBudget || tooDeep; }
  /// Ops whose results the expressions that depend on the scores read.
  llvm::SetVector<Operation *> scoreOps;

private:
  Expr *buildUncached(Value v, const DimMap &map);
  Expr *leaf(Value v, const DimMap &map);
  Expr *buildLinalg(Operation *op, unsigned resultIdx, const DimMap &map);
  Expr *buildTosa(Operation *op, const DimMap &map);
  Expr *buildTensorArith(Operation *op, const DimMap &map);
  Expr *buildReshape(Value src, Value result,
                     ArrayRef<ReassociationIndices> reassoc, bool expand,
                     const DimMap &map);
  Expr *reduction(ExprKind kind, Expr *inner, Type type);
  bool checkShape(Value v, const DimMap &map);
  DimMap broadcastOperand(Value operand, Value result, const DimMap &map);

  ExprContext &ec;
  Space &space;
  int budget;
  int depth = 0;
  std::map<std::pair<void *, std::vector<int>>, Expr *> memo;
};

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

/// q, k or v followed back to where it has no more layout ops: `source`,
/// with one DimRef per dim, times `scale`. Factors absent from `desc` are
/// broadcast.
struct TracedOperand {
  Value source;
  DimMap desc;
  double scale = 1.0;
  SmallVector<bool> present; // per factor
};

/// Follows `v` (described by `desc`) back through layout ops and constant
/// scalings. Sets `refine` when a factor must be split.
TracedOperand traceOperand(const Space &space, Value v, DimMap desc,
                           std::optional<RefineRequest> &refine);

/// How factors become the op's batch dims: `perm` orders the factors, and
/// each group (consecutive in `perm`) is fused into one op dim; an empty
/// group is a unit dim.
struct OpLayout {
  SmallVector<int> perm;
  SmallVector<SmallVector<int>> groups;
  int rank() const { return groups.size() + 2; }
};

/// Rebuilds `source` (dims described by `desc`) as a tensor in op layout
/// [groups..., tail...]. Factors absent from `desc` become unit dims, or are
/// broadcast (materialized) where `full` says so; absent tail dims become
/// unit dims.
Value toOpLayout(OpBuilder &b, Location loc, const Space &space, Value source,
                 const DimMap &desc, ArrayRef<int> tail, const OpLayout &layout,
                 ArrayRef<bool> full);

/// Expands every dim of `x` that holds several factors of `space` into one
/// dim per factor, updating its description `desc`; `x` unchanged when no dim
/// does.
Value splitIntoFactors(OpBuilder &b, Location loc, const Space &space, Value x,
                       DimMap &desc);

/// The inverse for the result: `value` in op layout [groups..., I, E] to a
/// tensor of `targetShape` whose dims are described by `desc`.
Value fromOpLayout(OpBuilder &b, Location loc, const Space &space, Value value,
                   const DimMap &desc, ArrayRef<int> tail,
                   const OpLayout &layout);

} // namespace raise
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEANALYSIS_H
