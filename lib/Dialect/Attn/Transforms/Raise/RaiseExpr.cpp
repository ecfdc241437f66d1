//===- RaiseExpr.cpp - space, contractions and score expressions ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "RaiseAnalysis.h"

#include "attn/Dialect/Attn/Utils/ConstantScaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

//===----------------------------------------------------------------------===//
// Space
//===----------------------------------------------------------------------===//

int64_t Space::size(DimRef r) const {
  if (r.isUnit())
    return 1;
  if (r.lo == I())
    return lq;
  if (r.lo == J())
    return lk;
  if (r.lo == D())
    return dqk;
  if (r.lo == E())
    return dv;
  int64_t p = 1;
  for (int f = r.lo; f < r.hi; ++f) {
    if (ShapedType::isDynamic(factors[f]))
      return ShapedType::kDynamic;
    p *= factors[f];
  }
  return p;
}

std::string Space::str(DimRef r) const {
  if (r.isUnit())
    return "a unit dim";
  if (r.lo == I())
    return "the query dim";
  if (r.lo == J())
    return "the key dim";
  if (r.lo == D())
    return "the qk feature dim";
  if (r.lo == E())
    return "the value feature dim";
  return "a batch dim";
}

std::optional<SmallVector<DimRef>>
Space::split(DimRef r, ArrayRef<int64_t> sizes, RefineRequest &refine) const {
  SmallVector<DimRef> pieces;
  if (r.isUnit()) {
    for (int64_t s : sizes)
      if (s != 1)
        return std::nullopt;
    pieces.assign(sizes.size(), DimRef::unit());
    return pieces;
  }
  if (!isFactorRange(r)) {
    // A row or feature dim cannot be split; it may only gain unit dims.
    int nonUnit = llvm::count_if(sizes, [](int64_t s) { return s != 1; });
    if (nonUnit > 1)
      return std::nullopt;
    bool given = false;
    for (int64_t s : sizes) {
      if ((s != 1 || nonUnit == 0) && !given) {
        pieces.push_back(r);
        given = true;
      } else {
        pieces.push_back(DimRef::unit());
      }
    }
    return pieces;
  }
  int cursor = r.lo;
  for (int64_t s : sizes) {
    if (s == 1) {
      pieces.push_back(DimRef::unit());
      continue;
    }
    if (ShapedType::isDynamic(s)) {
      if (cursor >= r.hi || !ShapedType::isDynamic(factors[cursor]))
        return std::nullopt;
      pieces.push_back({cursor, cursor + 1});
      ++cursor;
      continue;
    }
    int start = cursor;
    int64_t prod = 1;
    while (cursor < r.hi && prod < s) {
      int64_t f = factors[cursor];
      if (ShapedType::isDynamic(f))
        return std::nullopt;
      if (s % (prod * f) == 0) {
        prod *= f;
        ++cursor;
        continue;
      }
      // Only the leading part of this factor belongs to the piece.
      if (s % prod != 0 || f % (s / prod) != 0)
        return std::nullopt;
      refine = {cursor, s / prod, f / (s / prod)};
      return std::nullopt;
    }
    if (prod != s)
      return std::nullopt;
    pieces.push_back({start, cursor});
  }
  if (cursor != r.hi)
    return std::nullopt;
  return pieces;
}

std::optional<DimRef> Space::merge(ArrayRef<DimRef> refs) const {
  SmallVector<DimRef> nonUnit;
  for (DimRef r : refs)
    if (!r.isUnit())
      nonUnit.push_back(r);
  if (nonUnit.empty())
    return DimRef::unit();
  if (nonUnit.size() == 1)
    return nonUnit.front();
  for (size_t i = 0; i < nonUnit.size(); ++i) {
    if (!isFactorRange(nonUnit[i]))
      return std::nullopt;
    if (i > 0 && nonUnit[i - 1].hi != nonUnit[i].lo)
      return std::nullopt;
  }
  return DimRef{nonUnit.front().lo, nonUnit.back().hi};
}

std::optional<DimMap> raise::composeMap(AffineMap map, ArrayRef<DimRef> refs) {
  DimMap result;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      result.push_back(refs[d.getPosition()]);
      continue;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0) {
      result.push_back(DimRef::unit());
      continue;
    }
    return std::nullopt;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// The body of a linalg contraction must be exactly
/// `yield(acc + ext(a) * ext(b))`: anything else is not a matmul.
static bool isPlainContractionBody(Block &body) {
  if (body.getNumArguments() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value prod;
  if (add.getLhs() == acc)
    prod = add.getRhs();
  else if (add.getRhs() == acc)
    prod = add.getLhs();
  else
    return false;
  auto mul = prod.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  auto stripExt = [](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return v;
  };
  Value x = stripExt(mul.getLhs()), y = stripExt(mul.getRhs());
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (x == a && y == b) || (x == b && y == a);
}

std::optional<ContractionInfo> raise::classifyContraction(Operation *op) {
  MLIRContext *ctx = op->getContext();
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    auto isZero = [](Value v) {
      std::optional<Attribute> a = getSplatValue(v);
      if (!a)
        return false;
      if (auto f = dyn_cast<FloatAttr>(*a))
        return f.getValue().isZero();
      if (auto i = dyn_cast<IntegerAttr>(*a))
        return i.getValue().isZero();
      return false;
    };
    if (!isZero(mm.getAZp()) || !isZero(mm.getBZp()))
      return std::nullopt;
    Type ta = getElementTypeOrSelf(mm.getA().getType());
    Type tc = getElementTypeOrSelf(mm.getType());
    if (!isa<FloatType>(ta) || !isa<FloatType>(tc))
      return std::nullopt;
    ContractionInfo info;
    info.op = op;
    info.lhs = mm.getA();
    info.rhs = mm.getB();
    info.result = mm.getResult();
    AffineExpr b = getAffineDimExpr(0, ctx), m = getAffineDimExpr(1, ctx),
               n = getAffineDimExpr(2, ctx), k = getAffineDimExpr(3, ctx);
    info.lhsMap = AffineMap::get(4, 0, {b, m, k}, ctx);
    info.rhsMap = AffineMap::get(4, 0, {b, k, n}, ctx);
    info.outMap = AffineMap::get(4, 0, {b, m, n}, ctx);
    info.batch = {0};
    info.m = 1;
    info.n = 2;
    info.k = 3;
    info.numLoops = 4;
    return info;
  }

  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      op->getNumResults() != 1)
    return std::nullopt;
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (maps.size() != 3 || !llvm::all_of(maps, [](AffineMap m) {
        return m.isProjectedPermutation();
      }))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  unsigned numLoops = linalgOp.getNumLoops();
  if (dims->batch.size() + 3 != numLoops)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  for (unsigned l = 0; l < numLoops; ++l) {
    bool isK = l == dims->k.front();
    if ((iterators[l] == utils::IteratorType::reduction) != isK)
      return std::nullopt;
  }
  Block *body = linalgOp.getBlock();
  if (!body || !isPlainContractionBody(*body))
    return std::nullopt;
  Value init = linalgOp.getDpsInitOperand(0)->get();
  std::optional<double> initValue = getSplatFloat(init);
  if (!initValue || *initValue != 0.0)
    return std::nullopt;
  for (Value v : {linalgOp.getDpsInputOperand(0)->get(),
                  linalgOp.getDpsInputOperand(1)->get(), init})
    if (!isa<FloatType>(getElementTypeOrSelf(v.getType())))
      return std::nullopt;

  ContractionInfo info;
  info.op = op;
  info.lhs = linalgOp.getDpsInputOperand(0)->get();
  info.rhs = linalgOp.getDpsInputOperand(1)->get();
  info.init = init;
  info.result = op->getResult(0);
  info.lhsMap = maps[0];
  info.rhsMap = maps[1];
  info.outMap = maps[2];
  info.batch.assign(dims->batch.begin(), dims->batch.end());
  info.m = dims->m.front();
  info.n = dims->n.front();
  info.k = dims->k.front();
  info.numLoops = numLoops;
  return info;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<double> Expr::getConstFloat() const {
  if (kind != ExprKind::Const)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(value))
    return f.getValueAsDouble();
  return std::nullopt;
}

std::optional<int64_t> Expr::getConstInt() const {
  if (kind != ExprKind::Const)
    return std::nullopt;
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    if (i.getType().isInteger(1))
      return i.getValue().getZExtValue();
    return i.getValue().getSExtValue();
  }
  return std::nullopt;
}

Expr *ExprContext::intern(Expr proto) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << static_cast<int>(proto.kind) << '|' << proto.type.getAsOpaquePointer()
     << '|';
  for (Expr *o : proto.operands)
    os << static_cast<void *>(o) << ',';
  os << '|' << (proto.opName ? proto.opName->getAsOpaquePointer() : nullptr)
     << '|' << proto.attrs.getAsOpaquePointer() << '|'
     << proto.value.getAsOpaquePointer() << '|'
     << proto.tensor.getAsOpaquePointer() << '|';
  for (DimRef r : proto.map)
    os << r.lo << ':' << r.hi << ',';
  os << '|' << proto.dim.lo << ':' << proto.dim.hi << '|' << proto.note;
  auto it = uniq.find(key);
  if (it != uniq.end())
    return it->second;
  proto.dependsOnScore =
      proto.kind == ExprKind::Score ||
      llvm::any_of(proto.operands, [](Expr *o) { return o->dependsOnScore; });
  storage.push_back(std::make_unique<Expr>(std::move(proto)));
  Expr *e = storage.back().get();
  uniq.emplace(std::move(key), e);
  return e;
}

Expr *ExprContext::constant(TypedAttr value) {
  Expr e{ExprKind::Const, value.getType()};
  e.value = value;
  return intern(std::move(e));
}

Expr *ExprContext::constFloat(Type type, double v) {
  return constant(FloatAttr::get(type, v));
}

/// Float arithmetic on constants, rounded as the graph rounds it (in the
/// result type): frontends leave e.g. `x / c` as TOSA's reciprocal of a
/// constant times `x`, whose scale must read as a constant.
static std::optional<APFloat> foldFloatOp(StringRef name, Type type,
                                          ArrayRef<Expr *> operands) {
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType || operands.empty())
    return std::nullopt;
  SmallVector<APFloat, 2> args;
  for (Expr *o : operands) {
    auto attr = o->kind == ExprKind::Const
                    ? dyn_cast_or_null<FloatAttr>(o->value)
                    : FloatAttr();
    if (!attr)
      return std::nullopt;
    APFloat v = attr.getValue();
    bool losesInfo;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &losesInfo);
    args.push_back(v);
  }
  const APFloat::roundingMode rm = APFloat::rmNearestTiesToEven;
  if (args.size() == 1) {
    if (name == arith::NegFOp::getOperationName())
      return -args[0];
    if (name == arith::ExtFOp::getOperationName() ||
        name == arith::TruncFOp::getOperationName())
      return args[0];
    return std::nullopt;
  }
  if (args.size() != 2)
    return std::nullopt;
  APFloat r = args[0];
  if (name == arith::AddFOp::getOperationName())
    r.add(args[1], rm);
  else if (name == arith::SubFOp::getOperationName())
    r.subtract(args[1], rm);
  else if (name == arith::MulFOp::getOperationName())
    r.multiply(args[1], rm);
  else if (name == arith::DivFOp::getOperationName())
    r.divide(args[1], rm);
  else
    return std::nullopt;
  return r;
}

Expr *ExprContext::op(StringRef name, Type type, ArrayRef<Expr *> operands,
                      DictionaryAttr attrs) {
  if (std::optional<APFloat> folded = foldFloatOp(name, type, operands))
    return constant(FloatAttr::get(type, *folded));
  Expr e{ExprKind::Op, type};
  e.opName = OperationName(name, ctx);
  e.operands.assign(operands.begin(), operands.end());
  e.attrs = attrs ? attrs : DictionaryAttr::get(ctx, {});
  return intern(std::move(e));
}

static bool isFloatCast(Expr *e) {
  return (e->isOp<arith::ExtFOp>() || e->isOp<arith::TruncFOp>()) &&
         isa<FloatType>(e->operands[0]->type);
}

Expr *raise::stripCasts(Expr *e) {
  while (isFloatCast(e))
    e = e->operands[0];
  return e;
}

bool raise::equivModCasts(Expr *a, Expr *b) {
  a = stripCasts(a);
  b = stripCasts(b);
  if (a == b)
    return true;
  if (a->kind != b->kind || a->operands.size() != b->operands.size())
    return false;
  if (a->kind == ExprKind::Op &&
      (a->opName != b->opName || a->attrs != b->attrs))
    return false;
  if (a->kind != ExprKind::Op && a->kind != ExprKind::RSum &&
      a->kind != ExprKind::RMax && a->kind != ExprKind::Softmax)
    return false;
  for (auto [x, y] : llvm::zip(a->operands, b->operands))
    if (!equivModCasts(x, y))
      return false;
  return true;
}

/// Looks for the ingredients of a softmax: a softmax op, or exp together
/// with a row reduction (so that SiLU, with exp but no reduction, and layer
/// norm, with reductions but no exp, do not look like attention).
static void scanSoftmaxParts(Expr *e, int depth, bool &softmax, bool &exp,
                             bool &reduction, DenseSet<Expr *> &seen) {
  if (!seen.insert(e).second)
    return;
  if (e->kind == ExprKind::Softmax ||
      (e->kind == ExprKind::BadReduce &&
       StringRef(e->note).starts_with("the softmax")))
    softmax = true;
  if (e->kind == ExprKind::RSum || e->kind == ExprKind::RMax ||
      e->kind == ExprKind::BadReduce)
    reduction = true;
  if (e->isOp<math::ExpOp>())
    exp = true;
  if (depth == 0)
    return;
  for (Expr *o : e->operands)
    scanSoftmaxParts(o, depth - 1, softmax, exp, reduction, seen);
}

bool raise::containsSoftmaxLike(Expr *e, int depth) {
  bool softmax = false, exp = false, reduction = false;
  DenseSet<Expr *> seen;
  scanSoftmaxParts(e, depth, softmax, exp, reduction, seen);
  return softmax || (exp && reduction);
}

void raise::collectUsedDims(Expr *e, SmallVectorImpl<bool> &used,
                            DenseSet<Expr *> &seen) {
  if (!seen.insert(e).second)
    return;
  auto mark = [&](DimRef r) {
    for (int d = r.lo; d < r.hi; ++d)
      used[d] = true;
  };
  if (e->kind == ExprKind::Leaf || e->kind == ExprKind::Score)
    for (DimRef r : e->map)
      mark(r);
  if (e->kind == ExprKind::Index)
    mark(e->dim);
  for (Expr *o : e->operands)
    collectUsedDims(o, used, seen);
}

void raise::collectLeaves(Expr *e, SmallVectorImpl<Expr *> &leaves,
                          DenseSet<Expr *> &seen) {
  if (!seen.insert(e).second)
    return;
  if (e->kind == ExprKind::Leaf)
    leaves.push_back(e);
  for (Expr *o : e->operands)
    collectLeaves(o, leaves, seen);
}

//===----------------------------------------------------------------------===//
// ExprBuilder
//===----------------------------------------------------------------------===//

Expr *ExprBuilder::build(Value v, const DimMap &map) {
  std::vector<int> flat;
  for (DimRef r : map) {
    flat.push_back(r.lo);
    flat.push_back(r.hi);
  }
  auto key = std::make_pair(v.getAsOpaquePointer(), std::move(flat));
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  if (depth >= kMaxDepth) {
    tooDeep = true;
    return leaf(v, map);
  }
  ++depth;
  Expr *e = buildUncached(v, map);
  --depth;
  memo.emplace(std::move(key), e);
  if (e->dependsOnScore)
    if (Operation *def = v.getDefiningOp())
      scoreOps.insert(def);
  return e;
}

Expr *ExprBuilder::leaf(Value v, const DimMap &map) {
  Expr e{ExprKind::Leaf, getElementTypeOrSelf(v.getType())};
  e.tensor = v;
  e.map = map;
  return ec.intern(std::move(e));
}

bool ExprBuilder::checkShape(Value v, const DimMap &map) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != static_cast<int64_t>(map.size()))
    return false;
  for (auto [size, ref] : llvm::zip(type.getShape(), map)) {
    if (ref.isUnit()) {
      if (size != 1)
        return false;
      continue;
    }
    int64_t expected = space.size(ref);
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(expected)) {
      // Unknown sizes are only trusted for one whole dim.
      if (space.isFactorRange(ref) && ref.hi - ref.lo != 1)
        return false;
      continue;
    }
    if (size != expected)
      return false;
  }
  return true;
}

DimMap ExprBuilder::broadcastOperand(Value operand, Value result,
                                     const DimMap &map) {
  auto ot = cast<RankedTensorType>(operand.getType());
  auto rt = cast<RankedTensorType>(result.getType());
  DimMap m;
  for (int64_t d = 0; d < rt.getRank(); ++d)
    m.push_back(ot.getDimSize(d) == 1 && rt.getDimSize(d) != 1 ? DimRef::unit()
                                                               : map[d]);
  return m;
}

Expr *ExprBuilder::reduction(ExprKind kind, Expr *inner, Type type) {
  Expr e{kind, type};
  e.operands = {inner};
  return ec.intern(std::move(e));
}

static Expr *badReduce(ExprContext &ec, Type type, std::string note) {
  Expr e{ExprKind::BadReduce, type};
  e.note = std::move(note);
  return ec.intern(std::move(e));
}

Expr *ExprBuilder::buildUncached(Value v, const DimMap &map) {
  if (--budget < 0) {
    overBudget = true;
    return leaf(v, map);
  }
  if (!isa<RankedTensorType>(v.getType())) {
    Attribute attr;
    if (matchPattern(v, m_Constant(&attr)))
      if (auto typed = dyn_cast<TypedAttr>(attr))
        return ec.constant(typed);
    return leaf(v, {});
  }
  if (!checkShape(v, map))
    return leaf(v, map);
  Operation *def = v.getDefiningOp();
  if (!def)
    return leaf(v, map);

  if (std::optional<Attribute> splat = getSplatValue(v)) {
    if (auto typed = dyn_cast<TypedAttr>(*splat))
      return ec.constant(typed);
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return build(fill.getInputs()[0], {});
  if (classifyContraction(def)) {
    Expr e{ExprKind::Score, getElementTypeOrSelf(v.getType())};
    e.tensor = v;
    e.map = map;
    return ec.intern(std::move(e));
  }
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(def)) {
    if (!softmax.hasPureTensorSemantics())
      return leaf(v, map);
    Type type = getElementTypeOrSelf(v.getType());
    DimRef along = map[softmax.getDimension()];
    if (along != DimRef::of(space.J()))
      return badReduce(ec, type,
                       "the softmax normalizes along " + space.str(along) +
                           ", not along the dim the second matmul contracts");
    Expr e{ExprKind::Softmax, type};
    e.operands = {build(softmax.getInput(), map)};
    return ec.intern(std::move(e));
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def))
    return buildLinalg(def, cast<OpResult>(v).getResultNumber(), map);
  if (isa<tosa::TosaDialect>(def->getDialect())) {
    Expr *e = buildTosa(def, map);
    // Remarks name the op the user wrote (tosa.tanh), not its arith or
    // math form, unless an equal expression was built from another op.
    if (e && e->kind == ExprKind::Op && !e->source &&
        *e->opName != def->getName())
      e->source = def->getName();
    return e;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
    return buildReshape(expand.getSrc(), v, expand.getReassociationIndices(),
                        /*expand=*/true, map);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
    return buildReshape(collapse.getSrc(), v,
                        collapse.getReassociationIndices(),
                        /*expand=*/false, map);
  if (def->hasTrait<OpTrait::Elementwise>() &&
      isa<arith::ArithDialect, math::MathDialect>(def->getDialect()))
    return buildTensorArith(def, map);
  return leaf(v, map);
}

Expr *ExprBuilder::buildReshape(Value src, Value result,
                                ArrayRef<ReassociationIndices> reassoc,
                                bool expand, const DimMap &map) {
  auto srcType = cast<RankedTensorType>(src.getType());
  DimMap srcMap(srcType.getRank(), DimRef::unit());
  for (auto [g, group] : llvm::enumerate(reassoc)) {
    if (expand) {
      // src dim g became the result dims in `group`.
      SmallVector<DimRef> refs;
      for (int64_t d : group)
        refs.push_back(map[d]);
      std::optional<DimRef> merged = space.merge(refs);
      if (!merged)
        return leaf(result, map);
      srcMap[g] = *merged;
    } else {
      // result dim g fuses the src dims in `group`.
      SmallVector<int64_t> sizes;
      for (int64_t d : group)
        sizes.push_back(srcType.getDimSize(d));
      RefineRequest request;
      std::optional<SmallVector<DimRef>> pieces =
          space.split(map[g], sizes, request);
      if (!pieces) {
        if (request.factor >= 0)
          refine = request;
        return leaf(result, map);
      }
      for (auto [d, piece] : llvm::zip(group, *pieces))
        srcMap[d] = piece;
    }
  }
  return build(src, srcMap);
}

Expr *ExprBuilder::buildTensorArith(Operation *op, const DimMap &map) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 || !isPure(op))
    return leaf(op->getResult(0), map);
  SmallVector<Expr *> operands;
  for (Value operand : op->getOperands()) {
    if (isa<RankedTensorType>(operand.getType()))
      operands.push_back(build(operand, map));
    else
      operands.push_back(build(operand, {}));
  }
  return ec.op(op->getName().getStringRef(),
               getElementTypeOrSelf(op->getResult(0).getType()), operands,
               op->getAttrDictionary());
}

Expr *ExprBuilder::buildLinalg(Operation *op, unsigned resultIdx,
                               const DimMap &map) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  Value result = op->getResult(resultIdx);
  if (!linalgOp.hasPureTensorSemantics() || !linalgOp.getBlock())
    return leaf(result, map);
  unsigned numLoops = linalgOp.getNumLoops();
  unsigned numInputs = linalgOp.getNumDpsInputs();
  OpOperand *init = linalgOp.getDpsInitOperand(resultIdx);
  AffineMap outMap = linalgOp.getMatchingIndexingMap(init);
  SmallVector<std::optional<DimRef>> loopRefs(numLoops);
  for (auto [p, e] : llvm::enumerate(outMap.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || loopRefs[d.getPosition()])
      return leaf(result, map);
    loopRefs[d.getPosition()] = map[p];
  }
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  int reductionLoop = -1;
  for (unsigned l = 0; l < numLoops; ++l) {
    if (iterators[l] == utils::IteratorType::parallel) {
      if (!loopRefs[l])
        return leaf(result, map);
      continue;
    }
    if (reductionLoop >= 0 || loopRefs[l])
      return leaf(result, map);
    reductionLoop = l;
  }
  Type type = getElementTypeOrSelf(result.getType());
  if (reductionLoop >= 0) {
    // Only single-input reductions can be part of a softmax.
    if (linalgOp.getNumDpsInputs() != 1)
      return leaf(result, map);
    // A row reduction binds J; it cannot be one if J is still free.
    for (DimRef r : map)
      if (r.contains(space.J()))
        return badReduce(ec, type,
                         "a reduction runs along a dim other than the key "
                         "dim the second matmul contracts");
    loopRefs[reductionLoop] = DimRef::of(space.J());
  }
  SmallVector<DimRef> refs;
  for (std::optional<DimRef> r : loopRefs)
    refs.push_back(*r);

  Block &body = *linalgOp.getBlock();
  Value outArg;
  if (body.getNumArguments() > numInputs + resultIdx)
    outArg = body.getArgument(numInputs + resultIdx);
  DenseMap<Value, Expr *> scalars;
  bool bad = false, readsOut = false;
  std::function<Expr *(Value)> eval;
  auto evalScalar = [&](Value s) -> Expr * {
    if (bad)
      return nullptr;
    auto it = scalars.find(s);
    if (it != scalars.end())
      return it->second;
    Expr *e = nullptr;
    if (auto arg = dyn_cast<BlockArgument>(s); arg && arg.getOwner() == &body) {
      unsigned idx = arg.getArgNumber();
      if (reductionLoop >= 0 && s == outArg) {
        readsOut = true;
        return nullptr;
      }
      OpOperand *operand = idx < numInputs
                               ? linalgOp.getDpsInputOperand(idx)
                               : linalgOp.getDpsInitOperand(idx - numInputs);
      if (!isa<RankedTensorType>(operand->get().getType())) {
        e = build(operand->get(), {});
      } else {
        std::optional<DimMap> m =
            composeMap(linalgOp.getMatchingIndexingMap(operand), refs);
        if (!m) {
          bad = true;
          return nullptr;
        }
        e = build(operand->get(), *m);
      }
    } else if (Operation *def = s.getDefiningOp();
               !def || def->getBlock() != &body) {
      e = build(s, {});
    } else if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      DimRef r = refs[index.getDim()];
      if (r.isUnit()) {
        e = ec.constant(IntegerAttr::get(s.getType(), 0));
      } else if (space.isFactorRange(r) && r.hi - r.lo != 1) {
        bad = true; // a linearized index over several factors
        return nullptr;
      } else {
        Expr proto{ExprKind::Index, s.getType()};
        proto.dim = r;
        e = ec.intern(std::move(proto));
      }
    } else {
      Attribute attr;
      if (matchPattern(s, m_Constant(&attr)) && isa<TypedAttr>(attr)) {
        e = ec.constant(cast<TypedAttr>(attr));
      } else if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
                 !isPure(def)) {
        bad = true;
        return nullptr;
      } else {
        SmallVector<Expr *> operands;
        for (Value o : def->getOperands()) {
          Expr *x = eval(o);
          if (!x)
            return nullptr;
          operands.push_back(x);
        }
        e = ec.op(def->getName().getStringRef(), s.getType(), operands,
                  def->getAttrDictionary());
      }
    }
    if (e)
      scalars[s] = e;
    return e;
  };
  // One level per scalar op of the body, counted with the tensors'.
  eval = [&](Value s) -> Expr * {
    if (depth >= kMaxDepth) {
      tooDeep = bad = true;
      return nullptr;
    }
    ++depth;
    Expr *e = evalScalar(s);
    --depth;
    return e;
  };

  Value yielded = body.getTerminator()->getOperand(resultIdx);
  if (reductionLoop < 0) {
    Expr *e = eval(yielded);
    return e ? e : leaf(result, map);
  }

  // yield(combine(out, f(inputs))) with a neutral start value.
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getBlock() != &body ||
      combine->getNumOperands() != 2)
    return leaf(result, map);
  ExprKind kind;
  if (isa<arith::AddFOp>(combine))
    kind = ExprKind::RSum;
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    kind = ExprKind::RMax;
  else
    return leaf(result, map);
  Value other;
  if (combine->getOperand(0) == outArg)
    other = combine->getOperand(1);
  else if (combine->getOperand(1) == outArg)
    other = combine->getOperand(0);
  else
    return leaf(result, map);
  Expr *inner = eval(other);
  if (!inner || readsOut)
    return leaf(result, map);
  std::optional<double> start = getSplatFloat(init->get());
  if (!start)
    return leaf(result, map);
  if (kind == ExprKind::RSum && *start != 0.0)
    return badReduce(ec, type, "the row sum does not start from 0");
  // A max that starts above every value of the type could exceed the row's
  // true maximum: the graph would then compute something else.
  auto floatType = dyn_cast<FloatType>(type);
  if (kind == ExprKind::RMax &&
      (!floatType ||
       *start > -APFloat::getLargest(floatType.getFloatSemantics())
                     .convertToDouble()))
    return badReduce(ec, type,
                     "the row maximum does not start from -inf or the "
                     "lowest finite value");
  return reduction(kind, inner, type);
}

Expr *ExprBuilder::buildTosa(Operation *op, const DimMap &map) {
  Value result = op->getResult(0);
  Type type = getElementTypeOrSelf(result.getType());
  bool isFloat = isa<FloatType>(type);
  auto operand = [&](Value x) {
    return build(x, broadcastOperand(x, result, map));
  };
  auto binary = [&](StringRef floatName, StringRef intName) -> Expr * {
    Value a = op->getOperand(0), b = op->getOperand(1);
    Type operandType = getElementTypeOrSelf(a.getType());
    StringRef name = isa<FloatType>(operandType) ? floatName : intName;
    if (name.empty())
      return leaf(result, map);
    return ec.op(name, type, {operand(a), operand(b)});
  };
  auto compare = [&](arith::CmpFPredicate fp,
                     arith::CmpIPredicate ip) -> Expr * {
    Value a = op->getOperand(0), b = op->getOperand(1);
    MLIRContext *ctx = op->getContext();
    bool floatOperands = isa<FloatType>(getElementTypeOrSelf(a.getType()));
    NamedAttribute pred(
        StringAttr::get(ctx, "predicate"),
        floatOperands
            ? static_cast<Attribute>(arith::CmpFPredicateAttr::get(ctx, fp))
            : static_cast<Attribute>(arith::CmpIPredicateAttr::get(ctx, ip)));
    return ec.op(floatOperands ? arith::CmpFOp::getOperationName()
                               : arith::CmpIOp::getOperationName(),
                 type, {operand(a), operand(b)},
                 DictionaryAttr::get(ctx, {pred}));
  };

  if (isa<tosa::AddOp>(op))
    return binary(arith::AddFOp::getOperationName(),
                  arith::AddIOp::getOperationName());
  if (isa<tosa::SubOp>(op))
    return binary(arith::SubFOp::getOperationName(),
                  arith::SubIOp::getOperationName());
  if (isa<tosa::MulOp>(op))
    return binary(arith::MulFOp::getOperationName(), "");
  if (isa<tosa::MaximumOp>(op))
    return binary(arith::MaximumFOp::getOperationName(), "");
  if (isa<tosa::MinimumOp>(op))
    return binary(arith::MinimumFOp::getOperationName(), "");
  if (isa<tosa::LogicalAndOp>(op))
    return binary("", arith::AndIOp::getOperationName());
  if (isa<tosa::LogicalOrOp>(op))
    return binary("", arith::OrIOp::getOperationName());
  if (isa<tosa::GreaterOp>(op))
    return compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt);
  if (isa<tosa::GreaterEqualOp>(op))
    return compare(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge);
  if (isa<tosa::EqualOp>(op))
    return compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq);
  if (isa<tosa::LogicalNotOp>(op))
    return ec.op(
        arith::XOrIOp::getOperationName(), type,
        {operand(op->getOperand(0)), ec.constant(IntegerAttr::get(type, 1))});
  if (isa<tosa::SelectOp>(op))
    return ec.op(arith::SelectOp::getOperationName(), type,
                 {operand(op->getOperand(0)), operand(op->getOperand(1)),
                  operand(op->getOperand(2))});
  if (isFloat && isa<tosa::ExpOp>(op))
    return ec.op(math::ExpOp::getOperationName(), type,
                 {operand(op->getOperand(0))});
  if (isFloat && isa<tosa::TanhOp>(op))
    return ec.op(math::TanhOp::getOperationName(), type,
                 {operand(op->getOperand(0))});
  if (isFloat && isa<tosa::ReciprocalOp>(op))
    return ec.op(arith::DivFOp::getOperationName(), type,
                 {ec.constFloat(type, 1.0), operand(op->getOperand(0))});
  if (isFloat && isa<tosa::NegateOp>(op))
    return ec.op(arith::NegFOp::getOperationName(), type,
                 {operand(op->getOperand(0))});
  if (auto castOp = dyn_cast<tosa::CastOp>(op)) {
    Type from = getElementTypeOrSelf(castOp.getInput().getType());
    Expr *x = operand(castOp.getInput());
    if (auto ff = dyn_cast<FloatType>(from); ff && isFloat) {
      if (from == type)
        return x;
      unsigned fw = ff.getWidth(), tw = cast<FloatType>(type).getWidth();
      if (fw < tw)
        return ec.op(arith::ExtFOp::getOperationName(), type, {x});
      if (fw > tw)
        return ec.op(arith::TruncFOp::getOperationName(), type, {x});
      return leaf(result, map); // f16 <-> bf16
    }
    if (from.isInteger(1) && isFloat)
      return ec.op(arith::UIToFPOp::getOperationName(), type, {x});
    if (from.isSignlessInteger() && isFloat)
      return ec.op(arith::SIToFPOp::getOperationName(), type, {x});
    return leaf(result, map);
  }
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op)) {
    int64_t axis = isa<tosa::ReduceSumOp>(op)
                       ? cast<tosa::ReduceSumOp>(op).getAxis()
                       : cast<tosa::ReduceMaxOp>(op).getAxis();
    // TOSA keeps the reduced axis. With one key (Lk = 1) a use may index
    // the result by the key dim, at the axis or at another unit dim (which
    // of a reshape's unit dims is which is a guess): any size-1 reduction
    // is then the reduction over that key, kept where the use has it so
    // that the reduced expression is the one the use sees.
    DimRef key = DimRef::of(space.J());
    bool oneKey =
        cast<ShapedType>(op->getOperand(0).getType()).getDimSize(axis) == 1 &&
        space.size(key) == 1 && (map[axis].isUnit() || map[axis] == key);
    DimMap inner = map;
    if (oneKey) {
      if (!llvm::is_contained(map, key))
        inner[axis] = key;
    } else {
      for (DimRef r : map)
        if (r.contains(space.J()))
          return badReduce(ec, type,
                           "a reduction runs along a dim other than the key "
                           "dim the second matmul contracts");
      if (!map[axis].isUnit())
        return leaf(result, map);
      inner[axis] = key;
    }
    return reduction(isa<tosa::ReduceSumOp>(op) ? ExprKind::RSum
                                                : ExprKind::RMax,
                     build(op->getOperand(0), inner), type);
  }
  if (auto transpose = dyn_cast<tosa::TransposeOp>(op)) {
    ArrayRef<int32_t> perms = transpose.getPerms();
    DimMap inner(map.size());
    for (auto [i, p] : llvm::enumerate(perms))
      inner[p] = map[i];
    return build(transpose.getInput1(), inner);
  }
  if (auto reshape = dyn_cast<tosa::ReshapeOp>(op)) {
    auto srcType = cast<RankedTensorType>(reshape.getInput1().getType());
    auto resType = cast<RankedTensorType>(result.getType());
    std::optional<SmallVector<ReassociationIndices>> reassoc =
        getReassociationIndicesForReshape(srcType, resType);
    if (!reassoc)
      return leaf(result, map);
    return buildReshape(reshape.getInput1(), result, *reassoc,
                        /*expand=*/resType.getRank() > srcType.getRank(), map);
  }
  return leaf(result, map);
}
