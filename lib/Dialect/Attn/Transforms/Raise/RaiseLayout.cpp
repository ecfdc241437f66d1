//===- RaiseLayout.cpp - trace and rebuild operand layouts ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "RaiseAnalysis.h"

#include "attn/Dialect/Attn/Utils/ConstantScaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

/// Checks that `desc` describes the shape of `v`.
static bool matches(const Space &space, Value v, const DimMap &desc) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != static_cast<int64_t>(desc.size()))
    return false;
  for (auto [size, ref] : llvm::zip(type.getShape(), desc)) {
    int64_t expected = space.size(ref);
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(expected)) {
      if (ref.isUnit() || (space.isFactorRange(ref) && ref.hi - ref.lo != 1))
        return false;
      continue;
    }
    if (size != expected)
      return false;
  }
  return true;
}

/// A linalg op that only moves elements: one input, all loops parallel, the
/// body yields the input element. Returns the input's DimMap given the
/// output's, or nullopt (also when a non-batch dim would be broadcast).
static std::optional<DimMap>
traceCopyLike(const Space &space, linalg::LinalgOp op, const DimMap &desc) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != op.getNumParallelLoops())
    return std::nullopt;
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() < 1 ||
      body->getTerminator()->getOperand(0) != body->getArgument(0))
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  if (!isa<RankedTensorType>(input->get().getType()))
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isPermutation())
    return std::nullopt;
  SmallVector<DimRef> loopRefs(op.getNumLoops());
  for (auto [p, e] : llvm::enumerate(outMap.getResults()))
    loopRefs[cast<AffineDimExpr>(e).getPosition()] = desc[p];
  AffineMap inMap = op.getMatchingIndexingMap(input);
  std::optional<DimMap> inDesc = composeMap(inMap, loopRefs);
  if (!inDesc)
    return std::nullopt;
  // Loops the input does not read are broadcast: only batch dims may be.
  for (unsigned l = 0; l < op.getNumLoops(); ++l)
    if (!inMap.isFunctionOfDim(l) && !loopRefs[l].isUnit() &&
        !space.isFactorRange(loopRefs[l]))
      return std::nullopt;
  return inDesc;
}

static std::optional<DimMap>
traceReshape(const Space &space, RankedTensorType srcType,
             ArrayRef<ReassociationIndices> reassoc, bool expand,
             const DimMap &desc, std::optional<RefineRequest> &refine) {
  DimMap src(srcType.getRank(), DimRef::unit());
  for (auto [g, group] : llvm::enumerate(reassoc)) {
    if (expand) {
      SmallVector<DimRef> refs;
      for (int64_t d : group)
        refs.push_back(desc[d]);
      std::optional<DimRef> merged = space.merge(refs);
      if (!merged)
        return std::nullopt;
      src[g] = *merged;
      continue;
    }
    SmallVector<int64_t> sizes;
    for (int64_t d : group)
      sizes.push_back(srcType.getDimSize(d));
    RefineRequest request;
    std::optional<SmallVector<DimRef>> pieces =
        space.split(desc[g], sizes, request);
    if (!pieces) {
      if (request.factor >= 0)
        refine = request;
      return std::nullopt;
    }
    for (auto [d, piece] : llvm::zip(group, *pieces))
      src[d] = piece;
  }
  return src;
}

TracedOperand raise::traceOperand(const Space &space, Value v, DimMap desc,
                                  std::optional<RefineRequest> &refine) {
  TracedOperand t;
  t.source = v;
  t.desc = desc;
  for (int step = 0; step < 64 && !refine; ++step) {
    if (std::optional<ScaledValue> scaled = matchConstantScaling(v)) {
      t.scale *= scaled->factor;
      v = scaled->unscaled;
      t.source = v;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      break;
    std::optional<DimMap> next;
    Value src;
    if (auto tr = dyn_cast<tosa::TransposeOp>(def)) {
      next = DimMap(desc.size());
      for (auto [i, p] : llvm::enumerate(tr.getPerms()))
        (*next)[p] = desc[i];
      src = tr.getInput1();
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
      next = traceCopyLike(space, linalgOp, desc);
      if (next)
        src = linalgOp.getDpsInputOperand(0)->get();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      src = collapse.getSrc();
      next = traceReshape(space, collapse.getSrcType(),
                          collapse.getReassociationIndices(),
                          /*expand=*/false, desc, refine);
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      src = expand.getSrc();
      next = traceReshape(space, expand.getSrcType(),
                          expand.getReassociationIndices(),
                          /*expand=*/true, desc, refine);
    } else if (auto reshape = dyn_cast<tosa::ReshapeOp>(def)) {
      src = reshape.getInput1();
      auto srcType = cast<RankedTensorType>(src.getType());
      auto resType = cast<RankedTensorType>(reshape.getType());
      if (std::optional<SmallVector<ReassociationIndices>> reassoc =
              getReassociationIndicesForReshape(srcType, resType))
        next =
            traceReshape(space, srcType, *reassoc,
                         resType.getRank() > srcType.getRank(), desc, refine);
    } else if (auto tile = dyn_cast<tosa::TileOp>(def)) {
      // Tiling a dim of size s by m is a broadcast along an outer factor m.
      SmallVector<int64_t> multiples;
      src = tile.getInput1();
      auto srcType = cast<RankedTensorType>(src.getType());
      if (succeeded(tile.getConstantMultiples(multiples))) {
        next = desc;
        for (auto [d, m] : llvm::enumerate(multiples)) {
          if (m == 1)
            continue;
          RefineRequest request;
          std::optional<SmallVector<DimRef>> pieces;
          if (space.isFactorRange(desc[d]))
            pieces = space.split(desc[d], {m, srcType.getDimSize(d)}, request);
          if (!pieces) {
            if (request.factor >= 0)
              refine = request;
            next.reset();
            break;
          }
          (*next)[d] = (*pieces)[1];
        }
      }
    }
    if (!next || !matches(space, src, *next))
      break;
    v = src;
    desc = *next;
    t.source = v;
    t.desc = desc;
  }
  t.present.assign(space.numFactors(), false);
  for (DimRef r : t.desc)
    if (space.isFactorRange(r))
      for (int f = r.lo; f < r.hi; ++f)
        t.present[f] = true;
  return t;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> shapeOf(Value v) {
  return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
}

static Value transposeOf(OpBuilder &b, Location loc, Value x,
                         ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return x;
  // Reuse a transpose the graph already has.
  Block *block = b.getInsertionBlock();
  auto dominates = [&](Operation *op) {
    return op->getBlock() == block && b.getInsertionPoint() != block->end() &&
           op->isBeforeInBlock(&*b.getInsertionPoint());
  };
  for (Operation *user : x.getUsers()) {
    if (auto tr = dyn_cast<linalg::TransposeOp>(user);
        tr && tr.hasPureTensorSemantics() && tr.getInput() == x &&
        tr.getPermutation() == perm && dominates(tr))
      return tr.getResult()[0];
    if (auto tr = dyn_cast<tosa::TransposeOp>(user);
        tr && llvm::equal(tr.getPerms(), perm) && dominates(tr))
      return tr.getResult();
  }
  // Compose with a transpose that produced x: no transpose of a transpose.
  if (auto tr = x.getDefiningOp<linalg::TransposeOp>();
      tr && tr.hasPureTensorSemantics()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(tr.getPermutation()[p]);
    return transposeOf(b, loc, tr.getInput(), composed);
  }
  if (auto tr = x.getDefiningOp<tosa::TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(tr.getPerms()[p]);
    return transposeOf(b, loc, tr.getInput1(), composed);
  }
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Value init = tensor::EmptyOp::create(b, loc, permuted,
                                       getElementTypeOrSelf(x.getType()));
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

/// Reassociation that maps `from` dims onto `to` dims where `to` is `from`
/// with unit dims inserted (keep[i] = position in `to` of from-dim i). A unit
/// dim joins the group of the kept dim before it (leading ones the first).
static SmallVector<ReassociationIndices> unitInsertion(int64_t toRank,
                                                       ArrayRef<int64_t> keep) {
  SmallVector<ReassociationIndices> groups;
  if (keep.empty())
    return groups;
  for (size_t i = 0; i < keep.size(); ++i) {
    int64_t first = i == 0 ? 0 : keep[i];
    int64_t last = i + 1 == keep.size() ? toRank - 1 : keep[i + 1] - 1;
    ReassociationIndices group;
    for (int64_t d = first; d <= last; ++d)
      group.push_back(d);
    groups.push_back(group);
  }
  return groups;
}

/// The size of `group`'s dims of `shape` collapsed into one: dynamic where
/// any of them is.
static int64_t groupSize(ArrayRef<int64_t> shape,
                         const ReassociationIndices &group) {
  int64_t size = 1;
  for (int64_t d : group) {
    if (ShapedType::isDynamic(shape[d]))
      return ShapedType::kDynamic;
    size *= shape[d];
  }
  return size;
}

static Value expandTo(OpBuilder &b, Location loc, Value x,
                      ArrayRef<int64_t> shape,
                      ArrayRef<ReassociationIndices> reassoc) {
  Type elementType = getElementTypeOrSelf(x.getType());
  auto type = RankedTensorType::get(shape, elementType);
  // Undo a collapse rather than stacking an expand on it.
  if (auto collapse = x.getDefiningOp<tensor::CollapseShapeOp>())
    if (collapse.getSrcType() == type &&
        collapse.getReassociationIndices() ==
            SmallVector<ReassociationIndices>(reassoc))
      return collapse.getSrc();
  // A group whose dims are all static needs a static source dim: the sizes
  // may be known from another operand of the graph than `x` (q with a
  // dynamic batch, k with it static), so cast `x` to them first.
  SmallVector<int64_t> source = shapeOf(x);
  for (auto [d, group] : llvm::enumerate(reassoc))
    if (int64_t size = groupSize(shape, group); !ShapedType::isDynamic(size))
      source[d] = size;
  if (source != shapeOf(x))
    x = tensor::CastOp::create(b, loc,
                               RankedTensorType::get(source, elementType), x);
  if (source == ArrayRef<int64_t>(shape) && reassoc.size() == shape.size())
    return x;
  return tensor::ExpandShapeOp::create(b, loc, type, x, reassoc);
}

static Value collapseTo(OpBuilder &b, Location loc, Value x,
                        ArrayRef<ReassociationIndices> reassoc) {
  if (reassoc.size() == shapeOf(x).size())
    return x;
  if (auto expand = x.getDefiningOp<tensor::ExpandShapeOp>()) {
    // The expand of a 0-d tensor has no groups: its dims, and so the
    // collapse's, are all units.
    if (expand.getSrcType().getRank() == 0)
      return expandTo(b, loc, expand.getSrc(),
                      SmallVector<int64_t>(reassoc.size(), 1), {});
    SmallVector<ReassociationIndices> split = expand.getReassociationIndices();
    if (split == SmallVector<ReassociationIndices>(reassoc))
      return expand.getSrc();
    // Collapsing whole groups of an expand is one collapse of its source.
    SmallVector<int64_t> groupOf(shapeOf(x).size());
    for (auto [g, group] : llvm::enumerate(split))
      for (int64_t d : group)
        groupOf[d] = g;
    SmallVector<ReassociationIndices> composed;
    bool whole = true;
    for (const ReassociationIndices &group : reassoc) {
      ReassociationIndices src;
      for (int64_t d : group) {
        int64_t g = groupOf[d];
        if (src.empty() || src.back() != g)
          src.push_back(g);
      }
      int64_t count = 0;
      for (int64_t g : src)
        count += split[g].size();
      whole &= count == static_cast<int64_t>(group.size());
      composed.push_back(src);
    }
    if (whole)
      return collapseTo(b, loc, expand.getSrc(), composed);
    // Collapsing within the groups of an expand is a smaller expand.
    SmallVector<ReassociationIndices> inner(split.size());
    bool within = true;
    for (auto [c, group] : llvm::enumerate(reassoc)) {
      int64_t g = groupOf[group.front()];
      within &= llvm::all_of(group, [&](int64_t d) { return groupOf[d] == g; });
      inner[g].push_back(c);
    }
    if (within) {
      SmallVector<int64_t> shape = shapeOf(x), out;
      for (const ReassociationIndices &group : reassoc)
        out.push_back(groupSize(shape, group));
      return expandTo(b, loc, expand.getSrc(), out, inner);
    }
  }
  return tensor::CollapseShapeOp::create(b, loc, x, reassoc);
}

Value raise::splitIntoFactors(OpBuilder &b, Location loc, const Space &space,
                              Value x, DimMap &desc) {
  if (llvm::none_of(desc, [&](DimRef r) {
        return space.isFactorRange(r) && r.hi - r.lo > 1;
      }))
    return x;
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  DimMap split;
  SmallVector<int64_t> cur = shapeOf(x);
  for (auto [i, r] : llvm::enumerate(desc)) {
    ReassociationIndices group;
    if (space.isFactorRange(r)) {
      for (int f = r.lo; f < r.hi; ++f) {
        group.push_back(shape.size());
        shape.push_back(space.factorSize(f));
        split.push_back(DimRef::of(f));
      }
    } else {
      group.push_back(shape.size());
      shape.push_back(cur[i]);
      split.push_back(r);
    }
    groups.push_back(group);
  }
  desc = split;
  return expandTo(b, loc, x, shape, groups);
}

Value raise::toOpLayout(OpBuilder &b, Location loc, const Space &space,
                        Value source, const DimMap &desc, ArrayRef<int> tail,
                        const OpLayout &layout, ArrayRef<bool> full) {
  // Already in op layout: nothing to do.
  if (desc.size() == layout.groups.size() + tail.size()) {
    bool same = true;
    for (auto [i, g] : llvm::enumerate(layout.groups)) {
      DimRef r = desc[i];
      // r must cover a run of g in order; g's other factors must be unit
      // dims that are not materialized.
      if (!r.isUnit() && !space.isFactorRange(r)) {
        same = false;
        continue;
      }
      SmallVector<int> in;
      for (auto [k, f] : llvm::enumerate(g)) {
        if (r.contains(f))
          in.push_back(k);
        else if (full[f])
          same = false;
      }
      if (static_cast<int>(in.size()) != r.hi - r.lo)
        same = false;
      for (auto [t, k] : llvm::enumerate(in))
        if (k != in.front() + static_cast<int>(t) || g[k] != r.lo + int(t))
          same = false;
    }
    for (auto [j, role] : llvm::enumerate(tail)) {
      DimRef r = desc[layout.groups.size() + j];
      if (!r.isUnit() && r != DimRef::of(role))
        same = false;
    }
    if (same)
      return source;
  }

  Value x = source;
  DimMap d = desc;

  // (a) Drop unit dims.
  if (llvm::any_of(d, [](DimRef r) { return r.isUnit(); })) {
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    DimMap kept;
    for (auto [i, r] : llvm::enumerate(d)) {
      pending.push_back(i);
      if (!r.isUnit()) {
        groups.push_back(pending);
        pending.clear();
        kept.push_back(r);
      }
    }
    if (!groups.empty())
      llvm::append_range(groups.back(), pending);
    x = collapseTo(b, loc, x, groups);
    d = kept;
  }

  // (b) One dim per factor.
  x = splitIntoFactors(b, loc, space, x, d);

  // (c) Order: factors as in the layout, then the tail roles.
  SmallVector<int> position(space.numFactors());
  for (auto [i, f] : llvm::enumerate(layout.perm))
    position[f] = i;
  auto key = [&](DimRef r) -> int {
    if (space.isFactorRange(r))
      return position[r.lo];
    auto it = llvm::find(tail, r.lo);
    assert(it != tail.end() && "operand dim is neither a factor nor tail");
    return space.numFactors() + (it - tail.begin());
  };
  SmallVector<int64_t> perm(d.size());
  std::iota(perm.begin(), perm.end(), 0);
  llvm::sort(perm, [&](int64_t a, int64_t c) {
    return std::make_pair(key(d[a]), a) < std::make_pair(key(d[c]), c);
  });
  x = transposeOf(b, loc, x, perm);
  DimMap ordered;
  for (int64_t p : perm)
    ordered.push_back(d[p]);
  d = ordered;

  // (d) Absent factors and tail roles: unit dims, or broadcast ones.
  SmallVector<int64_t> finalShape, unitShape, keep, broadcastDims;
  SmallVector<int64_t> cur = shapeOf(x);
  size_t next = 0;
  auto place = [&](int role, int64_t fullSize, bool materialize) {
    if (next < d.size() && d[next].lo == role) {
      keep.push_back(unitShape.size());
      unitShape.push_back(cur[next]);
      finalShape.push_back(cur[next]);
      ++next;
    } else if (materialize) {
      broadcastDims.push_back(finalShape.size());
      finalShape.push_back(fullSize);
    } else {
      unitShape.push_back(1);
      finalShape.push_back(1);
    }
  };
  for (int f : layout.perm)
    place(f, space.factorSize(f), full[f]);
  for (int role : tail)
    place(role, 1, false);
  x = expandTo(b, loc, x, unitShape, unitInsertion(unitShape.size(), keep));
  if (!broadcastDims.empty()) {
    SmallVector<OpFoldResult> sizes;
    SmallVector<OpFoldResult> unitSizes = tensor::getMixedSizes(b, loc, x);
    size_t u = 0;
    for (auto [i, s] : llvm::enumerate(finalShape)) {
      if (llvm::is_contained(broadcastDims, static_cast<int64_t>(i)))
        sizes.push_back(b.getIndexAttr(s));
      else
        sizes.push_back(unitSizes[u++]);
    }
    Value init = tensor::EmptyOp::create(b, loc, sizes,
                                         getElementTypeOrSelf(x.getType()));
    x = linalg::BroadcastOp::create(b, loc, x, init, broadcastDims)
            .getResult()[0];
  }

  // (e) Fuse the factors of each op batch dim; empty groups are unit dims.
  SmallVector<ReassociationIndices> fuse;
  SmallVector<int64_t> kept;
  int64_t pos = 0, outPos = 0;
  for (const SmallVector<int> &g : layout.groups) {
    if (g.empty()) {
      ++outPos;
      continue;
    }
    ReassociationIndices group;
    for (size_t i = 0; i < g.size(); ++i)
      group.push_back(pos++);
    fuse.push_back(group);
    kept.push_back(outPos++);
  }
  for (size_t i = 0; i < tail.size(); ++i) {
    fuse.push_back({pos++});
    kept.push_back(outPos++);
  }
  x = collapseTo(b, loc, x, fuse);
  if (static_cast<int64_t>(kept.size()) != outPos) {
    SmallVector<int64_t> fused = shapeOf(x), shape(outPos, 1);
    for (auto [k, p] : llvm::enumerate(kept))
      shape[p] = fused[k];
    x = expandTo(b, loc, x, shape, unitInsertion(outPos, kept));
  }
  return x;
}

Value raise::fromOpLayout(OpBuilder &b, Location loc, const Space &space,
                          Value value, const DimMap &desc, ArrayRef<int> tail,
                          const OpLayout &layout) {
  Value x = value;
  SmallVector<int64_t> cur = shapeOf(x);
  // Drop the unit dims of empty groups, then split groups into factors:
  // [perm..., tail...].
  SmallVector<ReassociationIndices> drop;
  ReassociationIndices pending;
  SmallVector<int64_t> kept;
  int64_t ng = layout.groups.size();
  for (int64_t i = 0; i < ng + static_cast<int64_t>(tail.size()); ++i) {
    pending.push_back(i);
    if (i >= ng || !layout.groups[i].empty()) {
      drop.push_back(pending);
      pending.clear();
      kept.push_back(cur[i]);
    }
  }
  x = collapseTo(b, loc, x, drop);
  SmallVector<ReassociationIndices> reassoc;
  SmallVector<int64_t> shape;
  size_t numFused = 0;
  for (const SmallVector<int> &g : layout.groups) {
    if (g.empty())
      continue;
    ReassociationIndices group;
    for (int f : g) {
      group.push_back(shape.size());
      shape.push_back(space.factorSize(f));
    }
    reassoc.push_back(group);
    ++numFused;
  }
  for (size_t i = 0; i < tail.size(); ++i) {
    reassoc.push_back({static_cast<int64_t>(shape.size())});
    shape.push_back(kept[numFused + i]);
  }
  x = expandTo(b, loc, x, shape, reassoc);
  // Roles of the current dims.
  SmallVector<int> roles(layout.perm.begin(), layout.perm.end());
  llvm::append_range(roles, tail);

  // Transpose into the target's order (ranges spelled out as factors).
  SmallVector<int64_t> perm;
  for (DimRef r : desc)
    for (int role = r.lo; role < r.hi; ++role)
      perm.push_back(llvm::find(roles, role) - roles.begin());
  assert(perm.size() == roles.size() && "target must cover every dim");
  x = transposeOf(b, loc, x, perm);

  // Fuse ranges, then insert the target's unit dims.
  SmallVector<ReassociationIndices> fuse;
  SmallVector<int64_t> keep;
  int64_t pos = 0, outPos = 0;
  for (DimRef r : desc) {
    if (r.isUnit()) {
      ++outPos;
      continue;
    }
    ReassociationIndices group;
    for (int role = r.lo; role < r.hi; ++role)
      group.push_back(pos++);
    fuse.push_back(group);
    keep.push_back(outPos++);
  }
  x = collapseTo(b, loc, x, fuse);
  SmallVector<int64_t> targetShape;
  SmallVector<int64_t> fused = shapeOf(x);
  size_t k = 0;
  for (DimRef r : desc)
    targetShape.push_back(r.isUnit() ? 1 : fused[k++]);
  return expandTo(b, loc, x, targetShape,
                  unitInsertion(targetShape.size(), keep));
}
