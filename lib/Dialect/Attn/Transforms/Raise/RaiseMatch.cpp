//===- RaiseMatch.cpp - softmax and score classification ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

static constexpr double kInf = std::numeric_limits<double>::infinity();

static std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

static std::string opNameOf(Expr *e) {
  if (e->kind == ExprKind::Op)
    return "'" + (e->source ? *e->source : *e->opName).getStringRef().str() +
           "'";
  switch (e->kind) {
  case ExprKind::RSum:
    return "a row sum";
  case ExprKind::RMax:
    return "a row maximum";
  case ExprKind::Softmax:
    return "a softmax";
  default:
    return "an unsupported op";
  }
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// exp(x - rowmax(x)) or exp(x): returns x.
static Expr *matchExpNumerator(Expr *num, std::string &why) {
  Expr *n = stripCasts(num);
  if (!n->isOp<math::ExpOp>())
    return nullptr;
  Expr *arg = n->operands[0];
  Expr *y = stripCasts(arg);
  if (y->isOp<arith::SubFOp>()) {
    Expr *m = stripCasts(y->operands[1]);
    if (m->kind == ExprKind::RMax) {
      if (!equivModCasts(m->operands[0], y->operands[0])) {
        why = "the row maximum subtracted before exp is not taken over the "
              "same scores";
        return nullptr;
      }
      return y->operands[0];
    }
    if (m->kind == ExprKind::BadReduce) {
      why = m->note;
      return nullptr;
    }
  }
  return arg;
}

static bool isSumOf(Expr *den, Expr *num, std::string &why) {
  Expr *d = stripCasts(den);
  if (d->kind == ExprKind::BadReduce) {
    why = d->note;
    return false;
  }
  if (d->kind != ExprKind::RSum)
    return false;
  if (!equivModCasts(d->operands[0], num)) {
    why = "the row sum does not add up the exponentials it divides";
    return false;
  }
  return true;
}

static bool isRecipOfSum(Expr *r, Expr *num, std::string &why) {
  r = stripCasts(r);
  if (!r->isOp<arith::DivFOp>())
    return false;
  std::optional<double> one = r->operands[0]->getConstFloat();
  return one && *one == 1.0 && isSumOf(r->operands[1], num, why);
}

static Expr *matchSoftmaxImpl(Expr *p, std::string &why) {
  Expr *e = stripCasts(p);
  if (e->kind == ExprKind::Softmax)
    return e->operands[0];
  if (e->kind == ExprKind::BadReduce) {
    why = e->note;
    return nullptr;
  }
  if (e->isOp<arith::DivFOp>()) {
    if (Expr *x = matchExpNumerator(e->operands[0], why))
      if (isSumOf(e->operands[1], e->operands[0], why))
        return x;
  }
  if (e->isOp<arith::MulFOp>()) {
    for (auto [a, r] : {std::pair(e->operands[0], e->operands[1]),
                        std::pair(e->operands[1], e->operands[0])}) {
      if (Expr *x = matchExpNumerator(a, why))
        if (isRecipOfSum(r, a, why))
          return x;
    }
  }
  return nullptr;
}

Expr *raise::matchSoftmax(Expr *p, std::string &why) {
  if (Expr *x = matchSoftmaxImpl(p, why))
    return x;
  if (!why.empty())
    return nullptr;
  // A softmax that is changed before the matmul (dropout, rescaling).
  Expr *e = stripCasts(p);
  for (Expr *o : e->operands) {
    std::string ignored;
    if (matchSoftmaxImpl(o, ignored)) {
      why = "the probabilities pass through " + opNameOf(e) +
            " after the softmax (dropout?)";
      return nullptr;
    }
  }
  why = "the second matmul's operand is not a softmax along the key dim";
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Scores
//===----------------------------------------------------------------------===//

static LogicalResult scaleBy(ScoreForm &form, double c, std::string &why) {
  if (c == 0.0 || !std::isfinite(c)) {
    why = "the scores are multiplied by " + fmt(c);
    return failure();
  }
  if (c < 0 && !form.masks.empty()) {
    why = "the scores are negated after masking";
    return failure();
  }
  form.scale *= c;
  for (ScoreForm::Term &t : form.addends)
    t.coeff *= c;
  for (ScoreForm::Masking &m : form.masks)
    m.fill *= c;
  return success();
}

/// Why a score-independent factor is not a usable scale.
static std::string describeNonConstantScale(Expr *factor) {
  if (factor->kind == ExprKind::Leaf && factor->tensor &&
      isa<ShapedType>(factor->tensor.getType()) &&
      matchPattern(factor->tensor, m_Constant()))
    return "the scale varies per element";
  return "the scale is not a compile-time constant";
}

LogicalResult raise::classifyScores(ExprContext &ec, Expr *e, ScoreForm &form,
                                    std::string &why) {
  if (e->kind == ExprKind::Score) {
    form.score = e;
    return success();
  }
  if (!e->dependsOnScore) {
    why = "the softmax input is not computed from a matmul (a sum of "
          "products into a zero accumulator)";
    return failure();
  }
  if (e->kind != ExprKind::Op) {
    why = "the scores pass through " + opNameOf(e) + " before the softmax";
    return failure();
  }
  auto dep = [](Expr *x) { return x->dependsOnScore; };
  if (e->isOp<arith::ExtFOp>() || e->isOp<arith::TruncFOp>())
    return classifyScores(ec, e->operands[0], form, why);

  if (e->isOp<arith::MulFOp>() || e->isOp<arith::DivFOp>()) {
    Expr *a = e->operands[0], *b = e->operands[1];
    bool divide = e->isOp<arith::DivFOp>();
    if (dep(a) && dep(b)) {
      why = "the scores are multiplied by themselves";
      return failure();
    }
    if (divide && dep(b)) {
      why = "the scores are in a denominator";
      return failure();
    }
    Expr *scores = dep(a) ? a : b, *factor = dep(a) ? b : a;
    std::optional<double> c = factor->getConstFloat();
    if (!c) {
      why = describeNonConstantScale(factor);
      return failure();
    }
    if (failed(classifyScores(ec, scores, form, why)))
      return failure();
    if (divide && *c == 0.0) {
      why = "the scores are divided by 0";
      return failure();
    }
    return scaleBy(form, divide ? 1.0 / *c : *c, why);
  }
  if (e->isOp<arith::NegFOp>()) {
    if (failed(classifyScores(ec, e->operands[0], form, why)))
      return failure();
    return scaleBy(form, -1.0, why);
  }
  if (e->isOp<arith::AddFOp>() || e->isOp<arith::SubFOp>()) {
    Expr *a = e->operands[0], *b = e->operands[1];
    bool subtract = e->isOp<arith::SubFOp>();
    if (dep(a) && dep(b)) {
      why = "the scores are added to another score-dependent value";
      return failure();
    }
    if (subtract && dep(b)) {
      why = "the scores are subtracted from a value";
      return failure();
    }
    Expr *scores = dep(a) ? a : b, *term = dep(a) ? b : a;
    if (failed(classifyScores(ec, scores, form, why)))
      return failure();
    form.addends.push_back({term, subtract ? -1.0 : 1.0, !form.masks.empty()});
    return success();
  }
  if (e->isOp<arith::SelectOp>()) {
    Expr *cond = e->operands[0], *t = e->operands[1], *f = e->operands[2];
    if (dep(cond)) {
      why = "a select condition depends on the scores";
      return failure();
    }
    if (dep(t) == dep(f)) {
      why = "both sides of a select depend on the scores";
      return failure();
    }
    Expr *scores = dep(t) ? t : f, *fill = dep(t) ? f : t;
    Expr *visible =
        dep(t) ? cond
               : ec.op(arith::XOrIOp::getOperationName(), cond->type,
                       {cond, ec.constant(IntegerAttr::get(cond->type, 1))});
    std::optional<double> fillValue = stripCasts(fill)->getConstFloat();
    if (!fillValue) {
      why = "the mask fill is not a compile-time constant";
      return failure();
    }
    if (failed(classifyScores(ec, scores, form, why)))
      return failure();
    form.masks.push_back({visible, *fillValue});
    return success();
  }
  why = "the scores pass through " + opNameOf(e) +
        ", which attn.attention cannot express";
  return failure();
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

const std::vector<double> *Evaluator::leafValues(Expr *leaf) {
  auto it = leaves.find(leaf);
  if (it != leaves.end())
    return it->second ? &*it->second : nullptr;
  std::optional<std::vector<double>> values;
  DenseElementsAttr attr;
  if (leaf->tensor && isa<RankedTensorType>(leaf->tensor.getType()) &&
      matchPattern(leaf->tensor, m_Constant(&attr)) &&
      attr.getNumElements() <= (1 << 22)) {
    values.emplace();
    values->reserve(attr.getNumElements());
    Type elt = attr.getElementType();
    if (isa<FloatType>(elt)) {
      for (const APFloat &f : attr.getValues<APFloat>())
        values->push_back(f.convertToDouble());
    } else if (elt.isInteger(1)) {
      for (bool v : attr.getValues<bool>())
        values->push_back(v ? 1.0 : 0.0);
    } else if (isa<IntegerType, IndexType>(elt)) {
      for (const APInt &v : attr.getValues<APInt>())
        values->push_back(static_cast<double>(v.getSExtValue()));
    } else {
      values.reset();
    }
  }
  auto &slot = leaves[leaf];
  slot = std::move(values);
  return slot ? &*slot : nullptr;
}

bool Evaluator::isConstant(Expr *e) {
  auto it = constness.find(e);
  if (it != constness.end())
    return it->second;
  bool result;
  switch (e->kind) {
  case ExprKind::Const:
  case ExprKind::Index:
    result = true;
    break;
  case ExprKind::Leaf:
    result = leafValues(e) != nullptr;
    break;
  case ExprKind::Op:
    result = llvm::all_of(e->operands, [&](Expr *o) { return isConstant(o); });
    break;
  default:
    result = false;
  }
  constness[e] = result;
  return result;
}

std::optional<std::pair<double, double>> Evaluator::leafRange(Expr *leaf) {
  const std::vector<double> *values = leafValues(leaf);
  if (!values || values->empty())
    return std::nullopt;
  auto [lo, hi] = std::minmax_element(values->begin(), values->end());
  return std::make_pair(*lo, *hi);
}

/// The index of `r` at `point` (factor ranges are linearized).
static int64_t indexAt(const Space &space, DimRef r, ArrayRef<int64_t> point) {
  int64_t idx = 0;
  for (int d = r.lo; d < r.hi; ++d)
    idx = idx * (d < space.numFactors() ? space.factorSize(d) : 1) + point[d];
  return idx;
}

/// `v` as a value of `type`: floats rounded to it (double holds every
/// f32/f16/bf16 operand and the exact result of one add, sub, mul or div
/// closely enough that rounding it once gives the op's own result),
/// integers wrapped to their width. i1 is 0 or 1 (true is 1).
static std::optional<double> roundToType(double v, Type type) {
  if (auto ft = dyn_cast<FloatType>(type)) {
    if (std::isnan(v))
      return v;
    APFloat f(v);
    bool losesInfo;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    return f.convertToDouble();
  }
  auto it = dyn_cast<IntegerType>(type);
  if (!it || it.getWidth() >= 64)
    return v;
  if (!(std::abs(v) < 0x1p63))
    return std::nullopt;
  unsigned w = it.getWidth();
  uint64_t bits =
      static_cast<uint64_t>(static_cast<int64_t>(v)) & ((uint64_t(1) << w) - 1);
  if (w == 1)
    return static_cast<double>(bits);
  // Two's complement: the top bit of the width is the sign.
  int64_t wrapped = bits >= (uint64_t(1) << (w - 1))
                        ? static_cast<int64_t>(bits) - (int64_t(1) << w)
                        : static_cast<int64_t>(bits);
  return static_cast<double>(wrapped);
}

/// The signed value of an integer operand: i1 true is -1.
static double asSigned(double v, Type type) {
  return type.isInteger(1) && v != 0 ? -1.0 : v;
}

/// The result of op `e` on the operand values `x`, before rounding to its
/// type; nullopt for ops it does not know.
static std::optional<double> evalOp(Expr *e, ArrayRef<double> x) {
  StringRef name = e->opName->getStringRef();
  auto is = [&](auto opTag) {
    return name == decltype(opTag)::getOperationName();
  };
  Type operandType = e->operands.empty() ? Type() : e->operands[0]->type;
  if (is(arith::AddFOp()) || is(arith::AddIOp()))
    return x[0] + x[1];
  if (is(arith::SubFOp()) || is(arith::SubIOp()))
    return x[0] - x[1];
  if (is(arith::MulFOp()) || is(arith::MulIOp()))
    return x[0] * x[1];
  if (is(arith::DivFOp()))
    return x[0] / x[1];
  if (is(arith::NegFOp()))
    return -x[0];
  // maximumf/minimumf propagate NaN; maxnumf/minnumf return the other
  // operand (std::max and std::min do neither consistently).
  bool isMaximum = is(arith::MaximumFOp()), isMinimum = is(arith::MinimumFOp());
  if (isMaximum || isMinimum || is(arith::MaxNumFOp()) ||
      is(arith::MinNumFOp())) {
    bool nan0 = std::isnan(x[0]), nan1 = std::isnan(x[1]);
    if (nan0 || nan1) {
      if (isMaximum || isMinimum || (nan0 && nan1))
        return std::numeric_limits<double>::quiet_NaN();
      return nan0 ? x[1] : x[0];
    }
    bool max = isMaximum || is(arith::MaxNumFOp());
    return max ? std::max(x[0], x[1]) : std::min(x[0], x[1]);
  }
  if (is(arith::ExtFOp()) || is(arith::TruncFOp()))
    return x[0];
  // Signed conversions (index_cast too) read i1 true as -1.
  if (is(arith::SIToFPOp()) || is(arith::ExtSIOp()) || is(arith::IndexCastOp()))
    return asSigned(x[0], operandType);
  if (is(arith::UIToFPOp()) || is(arith::ExtUIOp()) ||
      is(arith::IndexCastUIOp())) {
    if (x[0] < 0)
      return std::nullopt;
    return x[0];
  }
  if (is(arith::AndIOp()))
    return static_cast<double>(static_cast<int64_t>(x[0]) &
                               static_cast<int64_t>(x[1]));
  if (is(arith::OrIOp()))
    return static_cast<double>(static_cast<int64_t>(x[0]) |
                               static_cast<int64_t>(x[1]));
  if (is(arith::XOrIOp()))
    return static_cast<double>(static_cast<int64_t>(x[0]) ^
                               static_cast<int64_t>(x[1]));
  if (is(arith::SelectOp()))
    return x[0] != 0 ? x[1] : x[2];
  if (is(arith::CmpFOp())) {
    auto pred =
        cast<arith::CmpFPredicateAttr>(e->attrs.get("predicate")).getValue();
    double a = x[0], b = x[1];
    bool unordered = std::isnan(a) || std::isnan(b);
    using P = arith::CmpFPredicate;
    switch (pred) {
    case P::OEQ:
      return !unordered && a == b;
    case P::ONE:
      return !unordered && a != b;
    case P::OLT:
      return !unordered && a < b;
    case P::OLE:
      return !unordered && a <= b;
    case P::OGT:
      return !unordered && a > b;
    case P::OGE:
      return !unordered && a >= b;
    case P::UEQ:
      return unordered || a == b;
    case P::UNE:
      return unordered || a != b;
    case P::ULT:
      return unordered || a < b;
    case P::ULE:
      return unordered || a <= b;
    case P::UGT:
      return unordered || a > b;
    case P::UGE:
      return unordered || a >= b;
    case P::ORD:
      return !unordered;
    case P::UNO:
      return unordered;
    case P::AlwaysTrue:
      return 1.0;
    case P::AlwaysFalse:
      return 0.0;
    }
  }
  if (is(arith::CmpIOp())) {
    auto pred =
        cast<arith::CmpIPredicateAttr>(e->attrs.get("predicate")).getValue();
    double a = x[0], b = x[1];
    using P = arith::CmpIPredicate;
    bool isUnsigned =
        pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
    if (isUnsigned && (a < 0 || b < 0))
      return std::nullopt;
    if (!isUnsigned) {
      a = asSigned(a, operandType);
      b = asSigned(b, operandType);
    }
    switch (pred) {
    case P::eq:
      return a == b;
    case P::ne:
      return a != b;
    case P::slt:
    case P::ult:
      return a < b;
    case P::sle:
    case P::ule:
      return a <= b;
    case P::sgt:
    case P::ugt:
      return a > b;
    case P::sge:
    case P::uge:
      return a >= b;
    }
  }
  return std::nullopt;
}

std::optional<double> Evaluator::eval(Expr *e, ArrayRef<int64_t> point) {
  switch (e->kind) {
  case ExprKind::Const:
    if (auto f = e->getConstFloat())
      return *f;
    if (auto i = e->getConstInt())
      return static_cast<double>(*i);
    return std::nullopt;
  case ExprKind::Index:
    return static_cast<double>(indexAt(space, e->dim, point));
  case ExprKind::Leaf: {
    const std::vector<double> *values = leafValues(e);
    if (!values)
      return std::nullopt;
    auto type = cast<RankedTensorType>(e->tensor.getType());
    int64_t flat = 0;
    for (auto [size, r] : llvm::zip(type.getShape(), e->map))
      flat = flat * size + (r.isUnit() ? 0 : indexAt(space, r, point));
    return (*values)[flat];
  }
  case ExprKind::Op:
    break;
  default:
    return std::nullopt;
  }
  SmallVector<double, 3> x;
  for (Expr *o : e->operands) {
    std::optional<double> v = eval(o, point);
    if (!v)
      return std::nullopt;
    x.push_back(*v);
  }
  std::optional<double> r = evalOp(e, x);
  if (!r)
    return std::nullopt;
  return roundToType(*r, e->type);
}

//===----------------------------------------------------------------------===//
// Causal predicates
//===----------------------------------------------------------------------===//

namespace {
/// ci * i + cj * j + c over the query index i and the key index j.
struct Linear {
  int64_t ci = 0, cj = 0, c = 0;
  bool nonNegative() const { return ci >= 0 && cj >= 0 && c >= 0; }
};
} // namespace

static std::optional<Linear> linearOf(Expr *e, int qDim, int kDim) {
  if (e->kind == ExprKind::Index) {
    if (e->dim == DimRef::of(qDim))
      return Linear{1, 0, 0};
    if (e->dim == DimRef::of(kDim))
      return Linear{0, 1, 0};
    return std::nullopt;
  }
  if (std::optional<int64_t> i = e->getConstInt())
    return Linear{0, 0, *i};
  if (std::optional<double> f = e->getConstFloat()) {
    if (std::abs(*f) < (1 << 24) && *f == std::floor(*f))
      return Linear{0, 0, static_cast<int64_t>(*f)};
    return std::nullopt;
  }
  if (e->kind != ExprKind::Op)
    return std::nullopt;
  StringRef name = e->opName->getStringRef();
  auto operand = [&](int i) { return linearOf(e->operands[i], qDim, kDim); };
  if (name == arith::IndexCastOp::getOperationName() ||
      name == arith::ExtSIOp::getOperationName() ||
      name == arith::SIToFPOp::getOperationName()) {
    // Signed, an i1 true would be -1: not worth a case.
    if (e->operands[0]->type.isInteger(1))
      return std::nullopt;
    return operand(0);
  }
  if (name == arith::IndexCastUIOp::getOperationName() ||
      name == arith::ExtUIOp::getOperationName() ||
      name == arith::UIToFPOp::getOperationName()) {
    std::optional<Linear> x = operand(0);
    if (x && x->nonNegative())
      return x;
    return std::nullopt;
  }
  if (name == arith::AddIOp::getOperationName() ||
      name == arith::AddFOp::getOperationName() ||
      name == arith::SubIOp::getOperationName() ||
      name == arith::SubFOp::getOperationName()) {
    std::optional<Linear> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    int64_t s = (name == arith::SubIOp::getOperationName() ||
                 name == arith::SubFOp::getOperationName())
                    ? -1
                    : 1;
    return Linear{a->ci + s * b->ci, a->cj + s * b->cj, a->c + s * b->c};
  }
  return std::nullopt;
}

std::optional<int64_t> raise::matchCausalPredicate(const Space &space,
                                                   Expr *pred) {
  bool negated = false;
  while (pred->isOp<arith::XOrIOp>()) {
    std::optional<int64_t> one = pred->operands[1]->getConstInt();
    if (!one || *one != 1 || !pred->type.isInteger(1))
      return std::nullopt;
    negated = !negated;
    pred = pred->operands[0];
  }
  bool isInt = pred->isOp<arith::CmpIOp>();
  if (!isInt && !pred->isOp<arith::CmpFOp>())
    return std::nullopt;
  std::optional<Linear> lhs = linearOf(pred->operands[0], space.I(), space.J());
  std::optional<Linear> rhs = linearOf(pred->operands[1], space.I(), space.J());
  if (!lhs || !rhs)
    return std::nullopt;
  Linear d{lhs->ci - rhs->ci, lhs->cj - rhs->cj, lhs->c - rhs->c};
  // Normalize to g <= 0 over integers.
  Linear g;
  auto le = [&](Linear x) { g = x; };                     // x <= 0
  auto lt = [&](Linear x) { g = {x.ci, x.cj, x.c + 1}; }; // x < 0
  auto neg = [](Linear x) { return Linear{-x.ci, -x.cj, -x.c}; };
  if (isInt) {
    using P = arith::CmpIPredicate;
    P p =
        cast<arith::CmpIPredicateAttr>(pred->attrs.get("predicate")).getValue();
    bool isUnsigned = p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
    if (isUnsigned && (!lhs->nonNegative() || !rhs->nonNegative()))
      return std::nullopt;
    switch (p) {
    case P::sle:
    case P::ule:
      le(d);
      break;
    case P::slt:
    case P::ult:
      lt(d);
      break;
    case P::sge:
    case P::uge:
      le(neg(d));
      break;
    case P::sgt:
    case P::ugt:
      lt(neg(d));
      break;
    default:
      return std::nullopt;
    }
  } else {
    using P = arith::CmpFPredicate;
    P p =
        cast<arith::CmpFPredicateAttr>(pred->attrs.get("predicate")).getValue();
    switch (p) {
    case P::OLE:
    case P::ULE:
      le(d);
      break;
    case P::OLT:
    case P::ULT:
      lt(d);
      break;
    case P::OGE:
    case P::UGE:
      le(neg(d));
      break;
    case P::OGT:
    case P::UGT:
      lt(neg(d));
      break;
    default:
      return std::nullopt;
    }
  }
  if (negated) // !(g <= 0) <=> -g + 1 <= 0
    g = {-g.ci, -g.cj, -g.c + 1};
  // cj * (j - i) + c <= 0 with cj > 0: j <= i + floor(-c / cj).
  if (g.cj <= 0 || g.ci != -g.cj)
    return std::nullopt;
  int64_t num = -g.c, den = g.cj;
  int64_t q = num / den;
  if ((num % den != 0) && ((num < 0) != (den < 0)))
    --q;
  return q;
}

//===----------------------------------------------------------------------===//
// Value ranges
//===----------------------------------------------------------------------===//

std::pair<double, double> raise::valueRange(Evaluator &ev, Expr *e) {
  const std::pair<double, double> unknown{-kInf, kInf};
  switch (e->kind) {
  case ExprKind::Const: {
    if (auto f = e->getConstFloat())
      return {*f, *f};
    if (auto i = e->getConstInt())
      return {static_cast<double>(*i), static_cast<double>(*i)};
    return unknown;
  }
  case ExprKind::Leaf:
    if (auto r = ev.leafRange(e))
      return *r;
    if (auto it = dyn_cast<IntegerType>(e->type)) {
      if (it.getWidth() == 1)
        return {0, 1};
      double m = std::ldexp(1.0, it.getWidth() - 1);
      return {-m, m - 1};
    }
    return unknown;
  case ExprKind::Op:
    break;
  default:
    return unknown;
  }
  auto r = [&](int i) { return valueRange(ev, e->operands[i]); };
  auto clampTo = [&](std::pair<double, double> x) {
    // Overflow of the result type turns into infinities.
    if (auto ft = dyn_cast<FloatType>(e->type)) {
      double max =
          APFloat::getLargest(ft.getFloatSemantics()).convertToDouble();
      if (x.first < -max)
        x.first = -kInf;
      if (x.second > max)
        x.second = kInf;
    }
    return x;
  };
  StringRef name = e->opName->getStringRef();
  if (name == arith::ExtFOp::getOperationName() ||
      name == arith::TruncFOp::getOperationName())
    return clampTo(r(0));
  if (name == arith::UIToFPOp::getOperationName()) {
    if (e->operands[0]->type.isInteger(1))
      return {0, 1};
    auto x = r(0);
    return clampTo({std::max(0.0, x.first), x.second});
  }
  if (name == arith::SIToFPOp::getOperationName()) {
    if (e->operands[0]->type.isInteger(1))
      return {-1, 0};
    return clampTo(r(0));
  }
  if (name == arith::NegFOp::getOperationName()) {
    auto x = r(0);
    return {-x.second, -x.first};
  }
  if (name == arith::AddFOp::getOperationName() ||
      name == arith::SubFOp::getOperationName()) {
    auto a = r(0), b = r(1);
    if (name == arith::SubFOp::getOperationName())
      b = {-b.second, -b.first};
    double lo = a.first + b.first, hi = a.second + b.second;
    if (std::isnan(lo) || std::isnan(hi))
      return unknown;
    return clampTo({lo, hi});
  }
  if (name == arith::MulFOp::getOperationName()) {
    auto a = r(0), b = r(1);
    double c[] = {a.first * b.first, a.first * b.second, a.second * b.first,
                  a.second * b.second};
    if (llvm::any_of(c, [](double v) { return std::isnan(v); }))
      return unknown;
    return clampTo({*std::min_element(c, c + 4), *std::max_element(c, c + 4)});
  }
  if (name == arith::SelectOp::getOperationName()) {
    auto a = r(1), b = r(2);
    return {std::min(a.first, b.first), std::max(a.second, b.second)};
  }
  return unknown;
}
