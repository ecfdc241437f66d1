//===- RaiseMatch.h - softmax and score classification ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Classifiers over the expression DAG (see RaiseAnalysis.h): the softmax
// matcher, the score-chain classifier (scale, additive terms, masks), causal
// recognition, a small interpreter for constant masks and an interval
// analysis for the fill and strict-nan checks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEMATCH_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEMATCH_H

#include "RaiseAnalysis.h"

namespace mlir {
namespace attn {
namespace raise {

/// A finite fill at or below this value, as it reaches the softmax, counts
/// as -inf: exp(fill - m) underflows to 0 in f32 for every row maximum
/// m > fill + 104.
constexpr double kEffectivelyNegInf = -1000.0;

/// The probabilities as a softmax along J: returns the softmax input, or
/// fails with the reason in `why`.
Expr *matchSoftmax(Expr *p, std::string &why);

/// The softmax input decomposed as
///   select(visible..., scale * score + sum(coeff * addend), fill).
struct ScoreForm {
  Expr *score = nullptr;
  double scale = 1.0;
  struct Term {
    Expr *expr;
    double coeff;
    /// Added after a mask: it also shifts the fill.
    bool afterMask;
  };
  SmallVector<Term> addends;
  struct Masking {
    Expr *visible;
    double fill;
  };
  SmallVector<Masking> masks;
};

/// Classifies the softmax input; fails with the reason in `why`.
LogicalResult classifyScores(ExprContext &ec, Expr *x, ScoreForm &form,
                             std::string &why);

/// Evaluates constant expressions (constant tensors, indices) at points of
/// the space.
class Evaluator {
public:
  explicit Evaluator(const Space &space) : space(space) {}
  /// Whether `e` only reads constants and indices.
  bool isConstant(Expr *e);
  /// The value of `e` at `point` (one index per space dim up to J).
  std::optional<double> eval(Expr *e, ArrayRef<int64_t> point);
  /// The range of a constant leaf's values.
  std::optional<std::pair<double, double>> leafRange(Expr *leaf);

private:
  const std::vector<double> *leafValues(Expr *leaf);
  const Space &space;
  DenseMap<Expr *, std::optional<std::vector<double>>> leaves;
  DenseMap<Expr *, bool> constness;
};

/// `j <= i + offset` where `pred` is that predicate on indices.
std::optional<int64_t> matchCausalPredicate(const Space &space, Expr *pred);

/// Bounds of the values of a float expression (-inf/inf when unknown).
std::pair<double, double> valueRange(Evaluator &ev, Expr *e);

} // namespace raise
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_RAISEMATCH_H
