//===- PackGQA.cpp - query-head groups as query rows ----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// With grouped-query attention the Hq / Hkv query heads of a group read the
// same keys and values. Stored [B..., Hq, Lq, D], the group's heads are
// adjacent, so [B..., Hkv, g * Lq, D] is the same buffer: one attention per
// key/value head whose query rows are the group's rows. A kernel whose
// blocks own query rows then reads each K/V head once per block of rows
// instead of once per query head, which is what decoding (Lq = 1) needs.
// Causal rows are then groups of Lq queries: the op's causal period.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPACKGQA
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The reshapes between [B..., Hkv * g, Lq, T] and [B..., Hkv, g * Lq, T]
/// through [B..., Hkv, g, Lq, T]: the heads split, then the group merges
/// into the rows.
struct GroupReshape {
  int64_t rank;
  int64_t numKVHeads;
  int64_t group;

  /// Reassociation from the 5-d shape to a 4-d one in which the 5-d dims
  /// `first` and `first + 1` are one.
  SmallVector<ReassociationIndices> merging(int64_t first) const {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d <= rank; ++d) {
      if (d == first + 1)
        groups.back().push_back(d);
      else
        groups.push_back({d});
    }
    return groups;
  }
  SmallVector<ReassociationIndices> heads() const { return merging(rank - 3); }
  SmallVector<ReassociationIndices> rows() const { return merging(rank - 2); }

  /// [B..., Hkv, g, Lq, T] from [B..., Hq, Lq, T].
  SmallVector<int64_t> expanded(ShapedType type) const {
    SmallVector<int64_t> shape(type.getShape());
    shape[rank - 3] = numKVHeads;
    shape.insert(shape.begin() + rank - 2, group);
    return shape;
  }
};
} // namespace

/// Whether a kernel that tiles the query rows by `blockRows` fills its
/// tiles better packed (FlashAttention-3's test): the share of tile rows
/// that hold a query row, n / (ceil(n / M) * M), grows by more than 10%.
/// Divided by Lq / M, that is 10 ceil(g Lq / M) < 9 g ceil(Lq / M).
static bool packingFillsTiles(int64_t lq, int64_t group, int64_t blockRows) {
  return 10 * llvm::divideCeil(group * lq, blockRows) <
         9 * group * llvm::divideCeil(lq, blockRows);
}

/// The same test on a query length known at run time.
static Value emitPackingFillsTiles(OpBuilder &b, Location loc, Value lq,
                                   int64_t group, int64_t blockRows) {
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value rows = constant(blockRows);
  Value packedTiles = arith::CeilDivUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, lq, constant(group)), rows);
  Value tiles = arith::CeilDivUIOp::create(b, loc, lq, rows);
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult,
      arith::MulIOp::create(b, loc, packedTiles, constant(10)),
      arith::MulIOp::create(b, loc, tiles, constant(9 * group)));
}

/// Whether `operand` (a mask or bias) broadcasts over both the query heads
/// and the rows, and so stays as it is.
static bool broadcastsOverGroup(AttentionOp op, Value operand) {
  auto type = cast<ShapedType>(operand.getType());
  int64_t rank = op.getRank();
  return type.getDimSize(rank - 3) == 1 && type.getDimSize(rank - 2) == 1;
}

/// Why `op` is not packed for tiles of `blockRows` query rows (0: any), or
/// empty.
static std::string whyNotPacked(AttentionOp op, int64_t blockRows) {
  int64_t group = op.getHeadGroupSize();
  if (ShapedType::isDynamic(group))
    return "the head counts are not static";
  if (group <= 1)
    return "every query head has a key/value head of its own";
  // A query length known only at run time is tested there (see
  // packQueryHeadGroups).
  int64_t lq = op.getQuerySeqLen();
  bool dynamicLq = ShapedType::isDynamic(lq);
  if (lq == 0)
    return "it has no query rows";
  // Packed causal rows are g groups of Lq queries: a causal period of Lq.
  // Rows that already are groups, or shifted, are left alone.
  if (op.getCausalOffset())
    return "it has a causal offset";
  if (op.getCausalPeriod())
    return "it has a causal period";
  int64_t rank = op.getRank();
  for (Value operand : {op.getMask(), op.getBias()}) {
    if (!operand || broadcastsOverGroup(op, operand))
      continue;
    auto type = cast<ShapedType>(operand.getType());
    int64_t heads = type.getDimSize(rank - 3), rows = type.getDimSize(rank - 2);
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(rows))
      return "a mask or bias has a head or row dim that is not static";
    if (heads != op.getNumQueryHeads() || rows != lq)
      return "a mask or bias broadcasts over only one of the query heads and "
             "the query rows";
  }
  // A memref view of the packed shape exists only where the group and the
  // rows are contiguous.
  GroupReshape reshape{rank, op.getNumKVHeads(), group};
  for (Value operand :
       {op.getQuery(), op.getInit(), op.getMask(), op.getBias()}) {
    if (!operand || ((operand == op.getMask() || operand == op.getBias()) &&
                     broadcastsOverGroup(op, operand)))
      continue;
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type)
      continue;
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        type, reshape.expanded(type), reshape.heads());
    if (failed(expanded) || !memref::CollapseShapeOp::isGuaranteedCollapsible(
                                *expanded, reshape.rows()))
      return "an operand's layout does not make the group and the rows one "
             "dim";
  }
  if (!dynamicLq && blockRows > 0 && !packingFillsTiles(lq, group, blockRows))
    return "its " + std::to_string(blockRows) +
           "-row tiles are filled as well unpacked";
  return "";
}

/// `value`, a tensor, expanded to `expandedShape` by `expandBy`, then
/// collapsed by `collapseBy`.
static Value reshapeTensor(RewriterBase &rewriter, Location loc, Value value,
                           ArrayRef<int64_t> expandedShape,
                           ArrayRef<ReassociationIndices> expandBy,
                           ArrayRef<ReassociationIndices> collapseBy) {
  auto type = RankedTensorType::get(
      expandedShape, cast<ShapedType>(value.getType()).getElementType());
  Value expanded =
      tensor::ExpandShapeOp::create(rewriter, loc, type, value, expandBy);
  return tensor::CollapseShapeOp::create(rewriter, loc, expanded, collapseBy);
}

/// `value` ([B..., Hq, Lq, T]) as [B..., Hkv, g * Lq, T].
static Value packRows(RewriterBase &rewriter, Location loc,
                      const GroupReshape &reshape, Value value) {
  auto type = cast<ShapedType>(value.getType());
  if (isa<MemRefType>(type)) {
    Value expanded = memref::ExpandShapeOp::create(
        rewriter, loc, reshape.expanded(type), value, reshape.heads());
    return memref::CollapseShapeOp::create(rewriter, loc, expanded,
                                           reshape.rows());
  }
  return reshapeTensor(rewriter, loc, value, reshape.expanded(type),
                       reshape.heads(), reshape.rows());
}

/// The inverse of packRows, to a tensor of type `type`.
static Value unpackRows(RewriterBase &rewriter, Location loc,
                        const GroupReshape &reshape, Value packed,
                        RankedTensorType type) {
  return reshapeTensor(rewriter, loc, packed, reshape.expanded(type),
                       reshape.rows(), reshape.heads());
}

/// Creates the packed op (and, on tensors, its result reshaped back) at the
/// rewriter's insertion point: causal with `period` (index) if it is set,
/// else not causal. Returns the packed op and the values that replace
/// `op`.
static std::pair<AttentionOp, SmallVector<Value>>
createPacked(RewriterBase &rewriter, AttentionOp op, Value period) {
  Location loc = op.getLoc();
  GroupReshape reshape{op.getRank(), op.getNumKVHeads(), op.getHeadGroupSize()};
  auto pack = [&](Value operand) -> Value {
    if (!operand || ((operand == op.getMask() || operand == op.getBias()) &&
                     broadcastsOverGroup(op, operand)))
      return operand;
    return packRows(rewriter, loc, reshape, operand);
  };
  std::optional<CausalAlignment> causal =
      period ? op.getCausal() : std::nullopt;
  auto packed = AttentionOp::create(
      rewriter, loc, pack(op.getQuery()), op.getKey(), op.getValue(),
      pack(op.getMask()), pack(op.getBias()), pack(op.getInit()),
      op.getScaleValue(), causal, /*causalOffset=*/Value(), period);
  packed->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  SmallVector<Value> results;
  if (op->getNumResults() == 1)
    results.push_back(
        unpackRows(rewriter, loc, reshape, packed->getResult(0),
                   cast<RankedTensorType>(op->getResult(0).getType())));
  return {packed, results};
}

/// Emits `scf.if condition` with the values (for `op`'s results) that
/// `thenBranch` and `elseBranch` create in its regions, and returns its
/// results.
static SmallVector<Value>
emitChoice(RewriterBase &rewriter, AttentionOp op, Value condition,
           function_ref<SmallVector<Value>()> thenBranch,
           function_ref<SmallVector<Value>()> elseBranch) {
  OpBuilder::InsertionGuard guard(rewriter);
  Location loc = op.getLoc();
  // (Without results the builder adds the yields.)
  auto ifOp = scf::IfOp::create(rewriter, loc, op->getResultTypes(), condition,
                                /*withElseRegion=*/true);
  bool yields = op->getNumResults() != 0;
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  SmallVector<Value> thenValues = thenBranch();
  if (yields)
    scf::YieldOp::create(rewriter, loc, thenValues);
  rewriter.setInsertionPointToStart(ifOp.elseBlock());
  SmallVector<Value> elseValues = elseBranch();
  if (yields)
    scf::YieldOp::create(rewriter, loc, elseValues);
  return ifOp.getResults();
}

FailureOr<AttentionOp> mlir::attn::packQueryHeadGroups(RewriterBase &rewriter,
                                                       AttentionOp op,
                                                       int64_t blockRows) {
  if (!whyNotPacked(op, blockRows).empty())
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  int64_t group = op.getHeadGroupSize();
  int64_t staticLq = op.getQuerySeqLen();
  std::optional<CausalAlignment> causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlignment::BottomRight;

  // Causal rows are packed with a period of Lq, except that bottom-right
  // alignment hides no key from one query: the packed op is then not
  // causal (the faster kernel). With Lq known only at run time, both are
  // decided there: Lq = 1 (bottom-right), then the tile test; the op stays
  // as it is on the last branch.
  Value lq, fills, single;
  if (ShapedType::isDynamic(staticLq)) {
    lq = isa<MemRefType>(op.getQuery().getType())
             ? Value(memref::DimOp::create(rewriter, loc, op.getQuery(),
                                           op.getSeqDim()))
             : Value(tensor::DimOp::create(rewriter, loc, op.getQuery(),
                                           op.getSeqDim()));
    if (blockRows > 0)
      fills = emitPackingFillsTiles(rewriter, loc, lq, group, blockRows);
    if (bottomRight)
      single = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, lq,
          arith::ConstantIndexOp::create(rewriter, loc, 1));
  } else if (causal && !(bottomRight && staticLq == 1)) {
    lq = arith::ConstantIndexOp::create(rewriter, loc, staticLq);
  }
  Value period = causal ? lq : Value();

  AttentionOp packed;
  auto packedWith = [&](Value p) {
    auto [newOp, results] = createPacked(rewriter, op, p);
    packed = newOp;
    return results;
  };
  auto packedOrNot = [&]() -> SmallVector<Value> {
    if (!fills)
      return packedWith(period);
    return emitChoice(
        rewriter, op, fills, [&] { return packedWith(period); },
        [&]() -> SmallVector<Value> {
          return rewriter.clone(*op)->getResults();
        });
  };
  SmallVector<Value> results =
      single ? emitChoice(
                   rewriter, op, single, [&] { return packedWith(Value()); },
                   packedOrNot)
             : packedOrNot();
  rewriter.replaceOp(op, results);
  return packed;
}

namespace {
struct AttnPackGQAPass : attn::impl::AttnPackGQABase<AttnPackGQAPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      std::string why = whyNotPacked(op, blockRows);
      if (why.empty())
        (void)packQueryHeadGroups(rewriter, op, blockRows);
      else if (remarks && op.getHeadGroupSize() != 1)
        op.emitRemark() << "query heads not packed: " << why;
    }
  }
};
} // namespace
