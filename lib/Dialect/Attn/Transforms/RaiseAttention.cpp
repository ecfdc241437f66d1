//===- RaiseAttention.cpp - --attn-raise ----------------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Recognizes attention in unfused matmul-softmax-matmul graphs. For every
// contraction (a candidate second matmul), the operand holding the
// probabilities is evaluated as an expression over the score space (see
// Raise/RaiseAnalysis.h), matched as a softmax, and its input decomposed into
// scale, additive terms and masks around the first matmul. Q, K and V are
// traced through layout ops. Only when every check passes is the graph
// rewritten; otherwise a remark names the failed check.
//
//===----------------------------------------------------------------------===//

#include "Raise/RaiseAnalysis.h"
#include "Raise/RaiseMatch.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNRAISE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

/// Bound on expression nodes per candidate: keeps the pass linear.
constexpr int kBudget = 4096;
/// Bound on points evaluated for a constant mask.
constexpr int64_t kMaxEvalPoints = int64_t(1) << 22;

std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

bool isSupportedFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// Everything the rewrite needs, produced by the analysis.
struct Plan {
  Space space{{}};
  ContractionInfo second;
  TracedOperand q, k, v;
  DimMap outDesc;
  double scale = 1.0;
  SmallVector<ScoreForm::Term> addends;
  SmallVector<Expr *> predicates; // non-causal visibility
  std::optional<CausalAlignment> causal;
  /// With causal = top_left: key j is visible to query i iff j <= i + offset,
  /// for a diagonal that is neither top_left nor bottom_right.
  std::optional<int64_t> causalOffset;
  Type elementType;
  OpLayout layout;
  SmallVector<bool> kvFull;
};

/// Outcome of one analysis attempt.
enum class Status { Raise, Refuse, Silent, Restart };

class Analysis {
public:
  Analysis(Operation *second, bool strictNan)
      : ec(std::make_unique<ExprContext>(second->getContext())), second(second),
        strictNan(strictNan) {}

  /// Decides whether `second` can be raised; fills `plan` or `why`.
  Status run();

  Plan plan;
  std::string why;
  /// Keeps the expressions of the plan alive.
  std::unique_ptr<ExprContext> ec;

private:
  Status attempt(SmallVector<int64_t> &factors, int pIdx);
  Status refuse(std::string reason) {
    why = std::move(reason);
    return Status::Refuse;
  }
  Status resolveMasks(ScoreForm &form, Evaluator &ev);
  Status checkStrictNan(Evaluator &ev);

  Operation *second;
  bool strictNan;
  std::optional<RefineRequest> refine;
};

Status Analysis::run() {
  std::string firstWhy;
  bool refused = false;
  for (int pIdx = 0; pIdx < 2; ++pIdx) {
    std::optional<ContractionInfo> c2 = classifyContraction(second);
    if (!c2)
      return Status::Silent;
    Value p = pIdx == 0 ? c2->lhs : c2->rhs;
    auto pType = cast<RankedTensorType>(p.getType());
    AffineMap pMap = pIdx == 0 ? c2->lhsMap : c2->rhsMap;
    // Initial factors: P's batch dims, in P's order.
    SmallVector<int64_t> factors;
    for (auto [t, e] : llvm::enumerate(pMap.getResults())) {
      unsigned l = cast<AffineDimExpr>(e).getPosition();
      if (llvm::is_contained(c2->batch, l) && pType.getDimSize(t) != 1)
        factors.push_back(pType.getDimSize(t));
    }
    Status s = Status::Restart;
    for (int round = 0; round < 16 && s == Status::Restart; ++round) {
      ec = std::make_unique<ExprContext>(second->getContext());
      refine.reset();
      why.clear();
      s = attempt(factors, pIdx);
      if (s == Status::Restart) {
        RefineRequest r = *refine;
        factors[r.factor] = r.outer;
        factors.insert(factors.begin() + r.factor + 1, r.inner);
      }
    }
    if (s == Status::Restart)
      s = refuse("the batch dims are reshaped in too many ways");
    if (s == Status::Raise)
      return s;
    if (s == Status::Refuse && !refused) {
      refused = true;
      firstWhy = why;
    }
  }
  if (!refused)
    return Status::Silent;
  why = firstWhy;
  return Status::Refuse;
}

Status Analysis::attempt(SmallVector<int64_t> &factors, int pIdx) {
  ContractionInfo c2 = *classifyContraction(second);
  plan = Plan();
  plan.second = c2;
  Space &space = plan.space;
  space = Space(factors);

  Value p = pIdx == 0 ? c2.lhs : c2.rhs;
  Value v = pIdx == 0 ? c2.rhs : c2.lhs;
  AffineMap pMap = pIdx == 0 ? c2.lhsMap : c2.rhsMap;
  AffineMap vMap = pIdx == 0 ? c2.rhsMap : c2.lhsMap;
  unsigned pOwn = pIdx == 0 ? c2.m : c2.n;
  unsigned vOwn = pIdx == 0 ? c2.n : c2.m;
  auto pType = cast<RankedTensorType>(p.getType());
  auto vType = cast<RankedTensorType>(v.getType());

  // Loops of the second matmul in the space.
  SmallVector<DimRef> loops(c2.numLoops);
  int cursor = 0;
  for (auto [t, e] : llvm::enumerate(pMap.getResults())) {
    unsigned l = cast<AffineDimExpr>(e).getPosition();
    int64_t size = pType.getDimSize(t);
    if (l == pOwn) {
      loops[l] = DimRef::of(space.I());
      space.lq = size;
    } else if (l == c2.k) {
      loops[l] = DimRef::of(space.J());
      space.lk = size;
    } else if (size == 1) {
      loops[l] = DimRef::unit();
    } else {
      int start = cursor;
      int64_t prod = 1;
      while (cursor < space.numFactors() && prod != size &&
             !ShapedType::isDynamic(size)) {
        prod *= space.factorSize(cursor++);
      }
      if (ShapedType::isDynamic(size))
        ++cursor;
      loops[l] = {start, cursor};
    }
  }
  for (auto [t, e] : llvm::enumerate(vMap.getResults()))
    if (cast<AffineDimExpr>(e).getPosition() == vOwn)
      space.dv = vType.getDimSize(t);
  loops[vOwn] = DimRef::of(space.E());
  DimMap pDesc = *composeMap(pMap, loops);
  DimMap vDesc = *composeMap(vMap, loops);
  plan.outDesc = *composeMap(c2.outMap, loops);

  // The probabilities, as a softmax of the scores.
  ExprBuilder eb(*ec, space, kBudget);
  Expr *probs = eb.build(p, pDesc);
  if (eb.refine) {
    refine = eb.refine;
    return Status::Restart;
  }
  if (!containsSoftmaxLike(probs))
    return Status::Silent;
  if (eb.overBudget)
    return refuse("the graph around the second matmul is too large to "
                  "analyze");
  if (eb.tooDeep)
    return refuse("the graph around the second matmul nests more than " +
                  std::to_string(ExprBuilder::kMaxDepth) +
                  " ops deep, too deep to analyze");
  Expr *x = matchSoftmax(probs, why);
  if (!x)
    return Status::Refuse;

  ScoreForm form;
  if (failed(classifyScores(*ec, x, form, why)))
    return Status::Refuse;
  if (eb.refine) {
    refine = eb.refine;
    return Status::Restart;
  }

  // Nothing but the second matmul may read the scores or probabilities.
  for (Operation *op : eb.scoreOps)
    for (Operation *user : op->getUsers())
      if (user != second && !eb.scoreOps.contains(user))
        return refuse("the scores or probabilities are also used by '" +
                      user->getName().getStringRef().str() + "'");

  // The first matmul, seen from the scores.
  Operation *firstOp = form.score->tensor.getDefiningOp();
  std::optional<ContractionInfo> c1 = classifyContraction(firstOp);
  SmallVector<std::optional<DimRef>> loops1(c1->numLoops);
  for (auto [p1, e] : llvm::enumerate(c1->outMap.getResults()))
    loops1[cast<AffineDimExpr>(e).getPosition()] = form.score->map[p1];
  loops1[c1->k] = DimRef::of(space.D());
  DimRef own1 = *loops1[c1->m], own2 = *loops1[c1->n];
  bool lhsIsQ = own1 == DimRef::of(space.I()) && own2 == DimRef::of(space.J());
  bool rhsIsQ = own2 == DimRef::of(space.I()) && own1 == DimRef::of(space.J());
  if (!lhsIsQ && !rhsIsQ)
    return refuse("the first matmul's output dims are not the query and key "
                  "dims of the scores");
  SmallVector<DimRef> refs1;
  for (unsigned l : c1->batch)
    if (!loops1[l]->isUnit() && !space.isFactorRange(*loops1[l]))
      return refuse("the first matmul's batch dims are not the batch dims "
                    "of the second");
  for (std::optional<DimRef> r : loops1)
    refs1.push_back(*r);
  Value qv = lhsIsQ ? c1->lhs : c1->rhs, kv = lhsIsQ ? c1->rhs : c1->lhs;
  AffineMap qMap = lhsIsQ ? c1->lhsMap : c1->rhsMap;
  AffineMap kMap = lhsIsQ ? c1->rhsMap : c1->lhsMap;
  for (auto [t, e] : llvm::enumerate(qMap.getResults()))
    if (cast<AffineDimExpr>(e).getPosition() == c1->k)
      space.dqk = cast<RankedTensorType>(qv.getType()).getDimSize(t);

  // Q, K and V through their layout ops.
  plan.q = traceOperand(space, qv, *composeMap(qMap, refs1), refine);
  if (!refine)
    plan.k = traceOperand(space, kv, *composeMap(kMap, refs1), refine);
  if (!refine)
    plan.v = traceOperand(space, v, vDesc, refine);
  if (refine)
    return Status::Restart;

  // Element types: the widest of q, k, v and the result.
  Type types[] = {getElementTypeOrSelf(plan.q.source.getType()),
                  getElementTypeOrSelf(plan.k.source.getType()),
                  getElementTypeOrSelf(plan.v.source.getType()),
                  getElementTypeOrSelf(c2.result.getType())};
  for (Type t : types)
    if (!isSupportedFloat(t)) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "element type " << t
         << " is not supported by attn.attention (f32, f16 or bf16)";
      return refuse(s);
    }
  Type elt = types[0];
  for (Type t : types)
    if (t != elt)
      elt = Float32Type::get(t.getContext());
  plan.elementType = elt;

  // Scale.
  double scale = form.scale * plan.q.scale * plan.k.scale;
  if (!std::isfinite(static_cast<float>(scale)) ||
      static_cast<float>(scale) == 0.0f)
    return refuse("the total scale " + fmt(scale) +
                  " is not a finite non-zero f32");
  plan.scale = scale;

  Evaluator ev(space);
  Status s = resolveMasks(form, ev);
  if (s != Status::Raise)
    return s;
  if (strictNan && (s = checkStrictNan(ev)) != Status::Raise)
    return s;

  // Layout: factors K/V do not have become the trailing head dim.
  int n = space.numFactors();
  SmallVector<bool> common(n);
  for (int f = 0; f < n; ++f)
    common[f] = !plan.k.present[f] && !plan.v.present[f];
  SmallVector<int> full, shared;
  for (int f = 0; f < n; ++f)
    (common[f] ? shared : full).push_back(f);
  // Op batch dims follow q's dims (so q needs no reshape), one per factor,
  // except that the factors K/V are broadcast along form the head dim, last.
  // Where q holds them in one dim with the last factor K/V do have (the kv
  // head), that factor joins the head: GQA with Hkv < Hq. Otherwise (MQA:
  // q [B, H], k [B]) the broadcast factors are the head on their own.
  OpLayout &layout = plan.layout;
  int lastFull = full.empty() ? -1 : full.back();
  bool fuse = false;
  if (lastFull >= 0 && !shared.empty())
    for (DimRef r : plan.q.desc)
      if (space.isFactorRange(r) && r.contains(lastFull) &&
          llvm::all_of(shared, [&](int f) { return r.contains(f); }))
        fuse = true;
  SmallVector<int> head, placed;
  for (DimRef r : plan.q.desc) {
    if (r.isUnit()) {
      layout.groups.push_back({});
      continue;
    }
    if (!space.isFactorRange(r))
      continue;
    for (int f = r.lo; f < r.hi; ++f) {
      placed.push_back(f);
      if (common[f] || (fuse && f == lastFull))
        continue;
      layout.groups.push_back({f});
    }
  }
  // Factors q is broadcast along (latent queries shared by the batch) go
  // where the scores have them among q's, so that K, V and the result,
  // the large tensors, keep their order instead of being transposed.
  for (int f : full) {
    if (llvm::is_contained(placed, f))
      continue;
    auto *pos = llvm::find_if(layout.groups, [&](const SmallVector<int> &g) {
      return !g.empty() && g.front() > f;
    });
    layout.groups.insert(pos, {f});
  }
  if (fuse)
    head.push_back(lastFull);
  llvm::append_range(head, shared);
  if (!head.empty())
    layout.groups.push_back(head);
  if (layout.groups.empty())
    layout.groups.push_back({});
  for (const SmallVector<int> &g : layout.groups)
    llvm::append_range(layout.perm, g);
  plan.kvFull.assign(n, true);
  for (int f = 0; f < n; ++f)
    plan.kvFull[f] = !common[f];
  return Status::Raise;
}

/// Splits a conjunction of predicates.
static void splitAnd(Expr *pred, SmallVectorImpl<Expr *> &out) {
  if (pred->isOp<arith::AndIOp>() && pred->type.isInteger(1)) {
    splitAnd(pred->operands[0], out);
    splitAnd(pred->operands[1], out);
    return;
  }
  out.push_back(pred);
}

/// The causal alignment with key j visible to query i iff j <= i + offset.
static std::optional<CausalAlignment> alignmentOf(const Space &space,
                                                  int64_t offset) {
  if (offset == 0)
    return CausalAlignment::TopLeft;
  if (!ShapedType::isDynamic(space.lq) && !ShapedType::isDynamic(space.lk) &&
      offset == space.lk - space.lq)
    return CausalAlignment::BottomRight;
  return std::nullopt;
}

/// Whether a constant expression (over I, J only) equals a causal mask:
/// visible where `visibleValue`, hidden where `hidden` holds.
static std::optional<int64_t>
matchCausalTable(const Space &space, Evaluator &ev, Expr *e,
                 function_ref<bool(double)> visible,
                 function_ref<bool(double)> hidden) {
  if (ShapedType::isDynamic(space.lq) || ShapedType::isDynamic(space.lk) ||
      space.lq * space.lk > kMaxEvalPoints || !ev.isConstant(e))
    return std::nullopt;
  SmallVector<bool> used(space.E() + 1, false);
  DenseSet<Expr *> seen;
  collectUsedDims(e, used, seen);
  for (int d = 0; d < space.numFactors(); ++d)
    if (used[d])
      return std::nullopt;
  // Classify every (i, j), take the diagonal from the first row that sees a
  // key (its last visible key), then check the whole table against it.
  std::vector<int8_t> table(space.lq * space.lk);
  SmallVector<int64_t> point(space.J() + 1, 0);
  for (int64_t i = 0; i < space.lq; ++i) {
    for (int64_t j = 0; j < space.lk; ++j) {
      point[space.I()] = i;
      point[space.J()] = j;
      std::optional<double> val = ev.eval(e, point);
      if (!val)
        return std::nullopt;
      int8_t state = visible(*val) ? 1 : hidden(*val) ? 0 : -1;
      if (state < 0)
        return std::nullopt;
      table[i * space.lk + j] = state;
    }
  }
  std::optional<int64_t> offset;
  for (int64_t i = 0; i < space.lq; ++i) {
    int64_t last = -1;
    for (int64_t j = 0; j < space.lk; ++j)
      if (table[i * space.lk + j])
        last = j;
    if (last >= 0) {
      offset = last - i;
      break;
    }
  }
  if (!offset)
    return std::nullopt;
  for (int64_t i = 0; i < space.lq; ++i)
    for (int64_t j = 0; j < space.lk; ++j)
      if ((j <= i + *offset) != (table[i * space.lk + j] == 1))
        return std::nullopt;
  return offset;
}

Status Analysis::resolveMasks(ScoreForm &form, Evaluator &ev) {
  Space &space = plan.space;
  // Every fill must be effectively -inf where it reaches the softmax.
  for (const ScoreForm::Masking &m : form.masks) {
    double fill = m.fill;
    if (std::isnan(fill) || (fill > kEffectivelyNegInf))
      return refuse("the mask fill " + fmt(fill) +
                    " is not effectively -inf (it must reach the softmax at "
                    "-inf or <= " +
                    fmt(kEffectivelyNegInf) + ")");
    if (std::isinf(fill))
      continue;
    for (const ScoreForm::Term &t : form.addends) {
      if (!t.afterMask)
        continue;
      auto [lo, hi] = valueRange(ev, t.expr);
      double top = t.coeff >= 0 ? hi * t.coeff : lo * t.coeff;
      if (!(fill + std::max(top, 0.0) <= kEffectivelyNegInf))
        return refuse("an additive term after the mask could lift masked "
                      "scores above " +
                      fmt(kEffectivelyNegInf));
    }
  }

  // Causal predicates become the attribute; the rest the boolean mask.
  std::optional<int64_t> causalOffset;
  auto takeCausal = [&](int64_t offset) {
    // A diagonal at or past the last key hides nothing (e.g. a conjunct
    // that is constant true): no mask at all.
    if (!ShapedType::isDynamic(space.lk) && offset >= space.lk - 1)
      return true;
    if (causalOffset && *causalOffset != offset)
      return false;
    causalOffset = offset;
    return true;
  };
  for (const ScoreForm::Masking &m : form.masks) {
    SmallVector<Expr *> preds;
    splitAnd(m.visible, preds);
    for (Expr *pred : preds) {
      std::optional<int64_t> offset = matchCausalPredicate(space, pred);
      if (!offset)
        offset = matchCausalTable(
            space, ev, pred, [](double v) { return v != 0; },
            [](double v) { return v == 0; });
      if (offset && takeCausal(*offset))
        continue;
      plan.predicates.push_back(pred);
    }
  }
  // Additive constant triangles (0 / -inf) are causal masks too.
  for (const ScoreForm::Term &t : form.addends) {
    double c = t.coeff;
    std::optional<int64_t> offset = matchCausalTable(
        space, ev, t.expr, [&](double v) { return v * c == 0; },
        [&](double v) { return v * c <= kEffectivelyNegInf; });
    if (offset && takeCausal(*offset))
      continue;
    if (!isSupportedFloat(t.expr->type))
      return refuse("an additive term has unsupported type");
    plan.addends.push_back(t);
  }
  if (causalOffset) {
    plan.causal = alignmentOf(space, *causalOffset);
    if (!plan.causal) {
      plan.causal = CausalAlignment::TopLeft;
      plan.causalOffset = causalOffset;
    }
  }
  return Status::Raise;
}

Status Analysis::checkStrictNan(Evaluator &ev) {
  Space &space = plan.space;
  if (plan.causal == CausalAlignment::BottomRight && space.lq > space.lk)
    return refuse("strict-nan: with bottom_right causality and Lq > Lk the "
                  "first rows see no key");
  if (plan.causalOffset && *plan.causalOffset < 0)
    return refuse("strict-nan: with a causal diagonal below the main one the "
                  "first rows see no key");
  for (const ScoreForm::Term &t : plan.addends) {
    auto [lo, hi] = valueRange(ev, t.expr);
    double low = t.coeff >= 0 ? lo * t.coeff : hi * t.coeff;
    if (std::isinf(low) || std::isnan(low))
      return refuse("strict-nan: an additive term may be -inf, so a row "
                    "could be fully masked");
  }
  if (plan.predicates.empty())
    return Status::Raise;
  // Every row must keep a visible key under all predicates together.
  int64_t points = 1;
  for (int64_t f : space.factors)
    points = ShapedType::isDynamic(f) ? kMaxEvalPoints + 1 : points * f;
  if (ShapedType::isDynamic(space.lq) || ShapedType::isDynamic(space.lk))
    points = kMaxEvalPoints + 1;
  else
    points *= space.lq * space.lk;
  for (Expr *pred : plan.predicates)
    if (!ev.isConstant(pred) || points > kMaxEvalPoints)
      return refuse("strict-nan: the mask is not a compile-time constant, "
                    "so a row could be fully masked");
  int n = space.numFactors();
  SmallVector<int64_t> point(space.J() + 1, 0);
  std::function<bool(int)> rows = [&](int d) -> bool {
    if (d < n) {
      for (int64_t x = 0; x < space.factorSize(d); ++x) {
        point[d] = x;
        if (!rows(d + 1))
          return false;
      }
      return true;
    }
    for (int64_t i = 0; i < space.lq; ++i) {
      point[space.I()] = i;
      bool any = false;
      for (int64_t j = 0; j < space.lk && !any; ++j) {
        point[space.J()] = j;
        if (plan.causal) {
          int64_t off = plan.causalOffset ? *plan.causalOffset
                        : *plan.causal == CausalAlignment::TopLeft
                            ? 0
                            : space.lk - space.lq;
          if (j > i + off)
            continue;
        }
        any = llvm::all_of(plan.predicates, [&](Expr *p) {
          std::optional<double> v = ev.eval(p, point);
          return v && *v != 0;
        });
      }
      if (!any)
        return false;
    }
    return true;
  };
  if (!rows(0))
    return refuse("strict-nan: the mask hides every key of some row");
  return Status::Raise;
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

class Rewriter {
public:
  Rewriter(OpBuilder &b, Location loc, Plan &plan, ExprContext &ec)
      : b(b), loc(loc), plan(plan), ec(ec), space(plan.space) {}

  /// Builds the op and the result in the second matmul's layout.
  FailureOr<Value> build(AttentionOp &op);

private:
  Value materialize(Expr *e, Value qc, Value kc);
  Value emit(Expr *e, DenseMap<Expr *, Value> &values,
             DenseMap<Expr *, unsigned> &leafArgs, Block &body,
             ArrayRef<int> loopOf);
  Value convert(Value x, Type elt);

  OpBuilder &b;
  Location loc;
  Plan &plan;
  ExprContext &ec;
  const Space &space;
};

Value Rewriter::convert(Value x, Type elt) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() == elt)
    return x;
  auto to = type.clone(elt);
  if (cast<FloatType>(elt).getWidth() >
      cast<FloatType>(type.getElementType()).getWidth())
    return arith::ExtFOp::create(b, loc, to, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

Value Rewriter::emit(Expr *e, DenseMap<Expr *, Value> &values,
                     DenseMap<Expr *, unsigned> &leafArgs, Block &body,
                     ArrayRef<int> loopOf) {
  auto it = values.find(e);
  if (it != values.end())
    return it->second;
  Value result;
  switch (e->kind) {
  case ExprKind::Const:
    result = arith::ConstantOp::create(b, loc, e->value);
    break;
  case ExprKind::Leaf:
    if (isa<RankedTensorType>(e->tensor.getType()))
      result = body.getArgument(leafArgs.lookup(e));
    else
      result = e->tensor;
    break;
  case ExprKind::Index: {
    result = linalg::IndexOp::create(b, loc, loopOf[e->dim.lo]);
    break;
  }
  case ExprKind::Op: {
    OperationState state(loc, *e->opName);
    for (Expr *o : e->operands)
      state.addOperands(emit(o, values, leafArgs, body, loopOf));
    state.addTypes(e->type);
    state.addAttributes(e->attrs.getValue());
    result = b.create(state)->getResult(0);
    break;
  }
  default:
    llvm_unreachable("score-dependent expression in a mask");
  }
  values[e] = result;
  return result;
}

/// A mask or bias in op layout [groups..., Lq, Lk] (unit dims where the
/// expression does not vary).
Value Rewriter::materialize(Expr *e, Value qc, Value kc) {
  int n = space.numFactors();
  SmallVector<bool> used(space.E() + 1, false);
  {
    DenseSet<Expr *> seen;
    collectUsedDims(e, used, seen);
  }
  // A fused op dim must be all unit or all full.
  SmallVector<bool> full(n, false);
  for (const SmallVector<int> &g : plan.layout.groups)
    if (llvm::any_of(g, [&](int f) { return used[f]; }))
      for (int f : g)
        full[f] = true;

  // A leaf already holding the values: reshape it only.
  if (e->kind == ExprKind::Leaf && isa<RankedTensorType>(e->tensor.getType()))
    return toOpLayout(b, loc, space, e->tensor, e->map, {space.I(), space.J()},
                      plan.layout, full);

  // Otherwise compute it with a linalg.generic over [perm..., I, J].
  SmallVector<int> loopOf(space.E() + 1, -1);
  for (auto [i, f] : llvm::enumerate(plan.layout.perm))
    loopOf[f] = i;
  loopOf[space.I()] = n;
  loopOf[space.J()] = n + 1;
  SmallVector<OpFoldResult> sizes;
  DimMap outDesc;
  for (int f : plan.layout.perm) {
    sizes.push_back(b.getIndexAttr(full[f] ? space.factorSize(f) : 1));
    outDesc.push_back(full[f] ? DimRef::of(f) : DimRef::unit());
  }
  int rank = plan.layout.rank();
  sizes.push_back(used[space.I()] ? tensor::getMixedSize(b, loc, qc, rank - 2)
                                  : b.getIndexAttr(1));
  sizes.push_back(used[space.J()] ? tensor::getMixedSize(b, loc, kc, rank - 2)
                                  : b.getIndexAttr(1));
  outDesc.push_back(used[space.I()] ? DimRef::of(space.I()) : DimRef::unit());
  outDesc.push_back(used[space.J()] ? DimRef::of(space.J()) : DimRef::unit());

  SmallVector<Expr *> leaves;
  {
    DenseSet<Expr *> seen;
    collectLeaves(e, leaves, seen);
  }
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  DenseMap<Expr *, unsigned> leafArgs;
  MLIRContext *ctx = b.getContext();
  for (Expr *leaf : leaves) {
    if (!isa<RankedTensorType>(leaf->tensor.getType()))
      continue;
    // One dim per factor, so that every dim is one loop.
    Value t = leaf->tensor;
    DimMap d = leaf->map;
    t = raise::splitIntoFactors(b, loc, space, t, d);
    SmallVector<AffineExpr> exprs;
    for (DimRef r : d)
      exprs.push_back(r.isUnit() ? getAffineConstantExpr(0, ctx)
                                 : getAffineDimExpr(loopOf[r.lo], ctx));
    leafArgs[leaf] = inputs.size();
    inputs.push_back(t);
    maps.push_back(AffineMap::get(n + 2, 0, exprs, ctx));
  }
  Value init = tensor::EmptyOp::create(b, loc, sizes, e->type);
  maps.push_back(b.getMultiDimIdentityMap(n + 2));
  SmallVector<utils::IteratorType> iterators(n + 2,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        DenseMap<Expr *, Value> values;
        Value r = emit(e, values, leafArgs, *nb.getInsertionBlock(), loopOf);
        linalg::YieldOp::create(b, l, r);
      });
  return toOpLayout(b, loc, space, generic.getResult(0), outDesc,
                    {space.I(), space.J()}, plan.layout, full);
}

FailureOr<Value> Rewriter::build(AttentionOp &op) {
  int n = space.numFactors();
  SmallVector<bool> all(n, true);
  Value qc = toOpLayout(b, loc, space, plan.q.source, plan.q.desc,
                        {space.I(), space.D()}, plan.layout, all);
  Value kc = toOpLayout(b, loc, space, plan.k.source, plan.k.desc,
                        {space.J(), space.D()}, plan.layout, plan.kvFull);
  Value vc = toOpLayout(b, loc, space, plan.v.source, plan.v.desc,
                        {space.J(), space.E()}, plan.layout, plan.kvFull);
  qc = convert(qc, plan.elementType);
  kc = convert(kc, plan.elementType);
  vc = convert(vc, plan.elementType);

  Value mask, bias;
  if (!plan.predicates.empty()) {
    Expr *all = plan.predicates.front();
    for (Expr *p : ArrayRef(plan.predicates).drop_front())
      all = ec.op(arith::AndIOp::getOperationName(), all->type, {all, p});
    mask = materialize(all, qc, kc);
  }
  if (!plan.addends.empty()) {
    Expr *sum = nullptr;
    if (plan.addends.size() == 1 && plan.addends.front().coeff == 1.0) {
      sum = plan.addends.front().expr;
    } else {
      Type f32 = Float32Type::get(b.getContext());
      for (const ScoreForm::Term &t : plan.addends) {
        Expr *x = t.expr;
        if (x->type != f32)
          x = ec.op(arith::ExtFOp::getOperationName(), f32, {x});
        if (t.coeff != 1.0)
          x = ec.op(arith::MulFOp::getOperationName(), f32,
                    {x, ec.constFloat(f32, t.coeff)});
        sum = sum ? ec.op(arith::AddFOp::getOperationName(), f32, {sum, x}) : x;
      }
    }
    bias = materialize(sum, qc, kc);
  }

  int rank = plan.layout.rank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, qc);
  sizes.back() = tensor::getMixedSize(b, loc, vc, rank - 1);
  Value init = tensor::EmptyOp::create(b, loc, sizes, plan.elementType);
  // The convenience builder: stable across additions to the op's operands.
  Value offset;
  if (plan.causalOffset)
    offset = arith::ConstantIndexOp::create(b, loc, *plan.causalOffset);
  op = AttentionOp::create(b, loc, qc, kc, vc, mask, bias, init,
                           static_cast<float>(plan.scale), plan.causal, offset);
  if (plan.q.scale != 1.0 || plan.k.scale != 1.0) {
    NamedAttrList folded;
    if (plan.q.scale != 1.0)
      folded.set("q", b.getF32FloatAttr(plan.q.scale));
    if (plan.k.scale != 1.0)
      folded.set("k", b.getF32FloatAttr(plan.k.scale));
    op->setAttr("attn.folded_scale", folded.getDictionary(b.getContext()));
  }
  Value result = convert(op.getResult(0),
                         getElementTypeOrSelf(plan.second.result.getType()));
  result = fromOpLayout(b, loc, space, result, plan.outDesc,
                        {space.I(), space.E()}, plan.layout);
  Type expected = plan.second.result.getType();
  if (result.getType() != expected) {
    if (!tensor::CastOp::areCastCompatible(result.getType(), expected))
      return failure();
    result = tensor::CastOp::create(b, loc, expected, result);
  }
  return result;
}

/// Erases `ops` and whatever becomes dead above them (including values
/// captured by their regions).
/// `erased` collects them (the pass skips candidates that were erased).
void eraseDead(SmallVector<Operation *> worklist,
               DenseSet<Operation *> &erased) {
  // Only ops erased here are known to be gone: addresses in `erased` from
  // earlier rewrites may have been reused by new ops.
  DenseSet<Operation *> gone;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (gone.contains(op) || !isOpTriviallyDead(op))
      continue;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (!op->isAncestor(def))
            worklist.push_back(def);
    });
    gone.insert(op);
    erased.insert(op);
    op->erase();
  }
}

struct AttnRaisePass : attn::impl::AttnRaiseBase<AttnRaisePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (classifyContraction(op))
        candidates.push_back(op);
    });
    DenseSet<Operation *> erased;
    for (Operation *op : candidates)
      if (!erased.contains(op))
        tryRaise(op, erased);
  }

  void missed(Operation *op, StringRef reason) {
    std::string text = ("attn-raise: not raised: " + reason).str();
    if (report)
      op->emitRemark(text);
    StringRef fn;
    if (auto func = op->getParentOfType<FunctionOpInterface>())
      fn = func.getName();
    remark::missed(op->getLoc(), remark::RemarkOpts::name("AttnRaise")
                                     .category("attn-raise")
                                     .function(fn))
        << text;
  }

  void tryRaise(Operation *second, DenseSet<Operation *> &erased) {
    Analysis analysis(second, strictNan);
    Status status = analysis.run();
    if (status == Status::Silent)
      return;
    if (status != Status::Raise) {
      missed(second, analysis.why);
      return;
    }
    // Records what the rewrite creates: peepholes may leave some unused.
    // Only ops next to `second`: nested ones go away with their parents.
    struct Recorder : OpBuilder::Listener {
      Block *block;
      SmallVector<Operation *> ops;
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        if (op->getBlock() == block)
          ops.push_back(op);
      }
    } recorder;
    recorder.block = second->getBlock();
    OpBuilder b(second, &recorder);
    AttentionOp op;
    Rewriter rewriter(b, second->getLoc(), analysis.plan, *analysis.ec);
    FailureOr<Value> result = rewriter.build(op);
    bool valid = succeeded(result) && op;
    if (valid) {
      ScopedDiagnosticHandler silence(&getContext(),
                                      [](Diagnostic &) { return success(); });
      valid = succeeded(verify(op));
    }
    if (!valid) {
      // Roll back: everything created is unused once the op is gone.
      eraseDead(recorder.ops, erased);
      missed(second, "internal: the raised op does not verify");
      return;
    }
    second->getResult(0).replaceAllUsesWith(*result);
    // A reshape the graph applied to the result may just undo ours.
    SmallVector<Operation *> dead = {second};
    if (auto collapse = result->getDefiningOp<tensor::CollapseShapeOp>()) {
      for (Operation *user : llvm::make_early_inc_range(result->getUsers()))
        if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
            expand && expand.getType() == collapse.getSrcType() &&
            expand.getReassociationIndices() ==
                collapse.getReassociationIndices()) {
          expand.getResult().replaceAllUsesWith(collapse.getSrc());
          dead.push_back(expand);
        }
      dead.push_back(collapse);
    }
    llvm::append_range(dead, recorder.ops);
    eraseDead(dead, erased);
  }
};

} // namespace
