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

/// Size `d` of `value` (a memref or a tensor), static where its type says.
static OpFoldResult mixedSize(OpBuilder &b, Location loc, Value value,
                              int64_t d) {
  if (isa<MemRefType>(value.getType()))
    return memref::getMixedSize(b, loc, value, d);
  return tensor::getMixedSize(b, loc, value, d);
}

namespace {
/// The reshapes between [B..., Hkv * g, Lq, T] and [B..., Hkv, g * Lq, T]
/// through [B..., Hkv, g, Lq, T]: the heads split, then the group merges
/// into the rows. Hkv and g may be known only at run time.
struct GroupReshape {
  int64_t rank;
  /// Static Hkv and g (or ShapedType::kDynamic).
  int64_t numKVHeads;
  int64_t group;
  /// The same as values where they are dynamic (set by materialize()).
  OpFoldResult numKVHeadsSize, groupSize;

  GroupReshape(AttentionOp op)
      : rank(op.getRank()), numKVHeads(op.getNumKVHeads()),
        group(op.getHeadGroupSize()) {}

  /// Creates the values of the dynamic head counts before `op`.
  void materialize(OpBuilder &b, AttentionOp op) {
    Location loc = op.getLoc();
    numKVHeadsSize = mixedSize(b, loc, op.getKey(), rank - 3);
    if (!ShapedType::isDynamic(group)) {
      groupSize = b.getIndexAttr(group);
      return;
    }
    auto value = [&](OpFoldResult size) {
      return getValueOrCreateConstantIndexOp(b, loc, size);
    };
    groupSize = arith::DivUIOp::create(
                    b, loc, value(mixedSize(b, loc, op.getQuery(), rank - 3)),
                    value(numKVHeadsSize))
                    .getResult();
  }

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

  /// [B..., Hkv, g, Lq, T] from [B..., Hq, Lq, T], or failure where the
  /// expansion cannot be typed: a static head dim with a dynamic Hkv. A
  /// dynamic head dim needs a dynamic dim among the two it splits into: g
  /// is then dynamic even where it is known.
  FailureOr<SmallVector<int64_t>> expanded(ShapedType type) const {
    SmallVector<int64_t> shape(type.getShape());
    int64_t heads = shape[rank - 3];
    int64_t kv = numKVHeads, g = group;
    if (!ShapedType::isDynamic(heads)) {
      if (ShapedType::isDynamic(kv) || kv == 0)
        return failure();
      g = heads / kv;
    } else if (!ShapedType::isDynamic(kv) && !ShapedType::isDynamic(g)) {
      g = ShapedType::kDynamic;
    }
    shape[rank - 3] = kv;
    shape.insert(shape.begin() + rank - 2, g);
    return shape;
  }

  /// The sizes of `value` expanded to `shape` (see expanded()), with the
  /// values of its dynamic dims: the output_shape of its expand_shape.
  SmallVector<OpFoldResult> expandedSizes(OpBuilder &b, Location loc,
                                          Value value,
                                          ArrayRef<int64_t> shape) const {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != rank - 3) {
        sizes.push_back(mixedSize(b, loc, value, d));
        continue;
      }
      for (auto [size, fixed] : {std::pair(numKVHeadsSize, shape[d]),
                                 std::pair(groupSize, shape[d + 1])}) {
        if (!ShapedType::isDynamic(fixed))
          sizes.push_back(b.getIndexAttr(fixed));
        else
          sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
      }
    }
    return sizes;
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

/// The same test on a query length or a group known at run time (g = 1
/// fails it).
static Value emitPackingFillsTiles(OpBuilder &b, Location loc, Value lq,
                                   OpFoldResult group, int64_t blockRows) {
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto times = [&](Value x, OpFoldResult y, int64_t c) -> Value {
    if (std::optional<int64_t> fixed = getConstantIntValue(y))
      return arith::MulIOp::create(b, loc, x, constant(c * *fixed));
    Value product = arith::MulIOp::create(b, loc, x, cast<Value>(y));
    return c == 1 ? product
                  : arith::MulIOp::create(b, loc, product, constant(c));
  };
  Value rows = constant(blockRows);
  Value packedTiles =
      arith::CeilDivUIOp::create(b, loc, times(lq, group, 1), rows);
  Value tiles = arith::CeilDivUIOp::create(b, loc, lq, rows);
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult,
      arith::MulIOp::create(b, loc, packedTiles, constant(10)),
      times(tiles, group, 9));
}

/// Whether packing at run time would take the kernel for few rows (the
/// CPU's row-major kernel, for up to `rowMajorRows` static rows or a
/// run-time count up to that and the tile's `blockRows` that is a sum of
/// `rowCases`) from rows that have it and leave the packed rows, still in
/// one tile of at most `rowMajorRows`, on the kernel for many rows, mostly
/// idle: packed decoding rows of a group that was no case measured 0.24x to
/// 0.41x (docs/performance.md). Null where that is known here to be false,
/// as with a case of 1 row, where every such count has the kernel. A group
/// of at least half the kernel's `blockRows` lanes still packs: the
/// keys-major tile cost about as much as that many row-major ops of one row
/// (g = 32 packed 1.46x faster, g = 16 0.64x as fast). More packed rows
/// are left to the tile test.
static Value emitLosesRowMajorKernel(OpBuilder &b, Location loc, AttentionOp op,
                                     Value lq, OpFoldResult group,
                                     int64_t blockRows, int64_t rowMajorRows,
                                     ArrayRef<int64_t> rowCases) {
  int64_t staticLq = op.getQuerySeqLen();
  bool dynamicLq = ShapedType::isDynamic(staticLq);
  if (rowMajorRows <= 0 || (!dynamicLq && staticLq > rowMajorRows))
    return Value();
  std::optional<int64_t> staticGroup = getConstantIntValue(group);
  if (staticGroup && blockRows > 0 && 2 * *staticGroup >= blockRows)
    return Value();
  int64_t caseRows =
      blockRows > 0 ? std::min(rowMajorRows, blockRows) : rowMajorRows;
  SmallVector<int64_t> cases =
      getRowMajorRowCases(rowCases, rowMajorRows, caseRows);
  if (rowCasesCoverEveryCount(cases))
    return Value();
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Packed rows that fit a tile of cases without the kernel: not a sum of
  // cases (any count, without cases).
  Value packedRows = arith::MulIOp::create(
      b, loc, lq, getValueOrCreateConstantIndexOp(b, loc, group));
  Value loses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                      packedRows, constant(caseRows));
  if (!cases.empty())
    loses = arith::AndIOp::create(
        b, loc, loses,
        arith::XOrIOp::create(
            b, loc, emitIsGreedySumOfRowCases(b, loc, packedRows, cases),
            arith::ConstantIntOp::create(b, loc, 1, 1)));
  if (!staticGroup && blockRows > 0)
    loses = arith::AndIOp::create(
        b, loc, loses,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult,
            arith::MulIOp::create(b, loc, constant(2), cast<Value>(group)),
            constant(blockRows)));
  // Static rows up to rowMajorRows have the kernel; run-time ones if a sum
  // of cases.
  if (dynamicLq)
    loses = arith::AndIOp::create(
        b, loc, emitHasRowMajorKernels(b, loc, lq, cases, caseRows), loses);
  return loses;
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
  // A group or a query length known only at run time is tested there (see
  // packQueryHeadGroups).
  int64_t group = op.getHeadGroupSize();
  if (!ShapedType::isDynamic(group) && group <= 1)
    return "every query head has a key/value head of its own";
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
    // A dim broadcasts only where it is a static 1 (a dynamic one is full),
    // and a 1 is full where the op's dim is 1 too.
    auto type = cast<ShapedType>(operand.getType());
    bool fullHeads =
        type.getDimSize(rank - 3) != 1 || op.getNumQueryHeads() == 1;
    bool fullRows = type.getDimSize(rank - 2) != 1 || lq == 1;
    if (!fullHeads || !fullRows)
      return "a mask or bias broadcasts over only one of the query heads and "
             "the query rows";
  }
  GroupReshape reshape(op);
  for (Value operand :
       {op.getQuery(), op.getInit(), op.getMask(), op.getBias()}) {
    if (!operand || ((operand == op.getMask() || operand == op.getBias()) &&
                     broadcastsOverGroup(op, operand)))
      continue;
    auto type = cast<ShapedType>(operand.getType());
    FailureOr<SmallVector<int64_t>> shape = reshape.expanded(type);
    if (failed(shape))
      return "an operand has a static head count and the key/value head "
             "count is not static";
    // A memref view of the packed shape exists only where the group and the
    // rows are contiguous.
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      continue;
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        memref, *shape, reshape.heads());
    if (failed(expanded) || !memref::CollapseShapeOp::isGuaranteedCollapsible(
                                *expanded, reshape.rows()))
      return "an operand's layout does not make the group and the rows one "
             "dim";
  }
  if (!dynamicLq && !ShapedType::isDynamic(group) && blockRows > 0 &&
      !packingFillsTiles(lq, group, blockRows))
    return "its " + std::to_string(blockRows) +
           "-row tiles are filled as well unpacked";
  return "";
}

/// `value`, a tensor, expanded to `sizes` (of static shape `shape`) by
/// `expandBy`, then collapsed by `collapseBy`.
static Value reshapeTensor(RewriterBase &rewriter, Location loc, Value value,
                           ArrayRef<int64_t> shape,
                           ArrayRef<OpFoldResult> sizes,
                           ArrayRef<ReassociationIndices> expandBy,
                           ArrayRef<ReassociationIndices> collapseBy) {
  auto type = RankedTensorType::get(
      shape, cast<ShapedType>(value.getType()).getElementType());
  Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, type, value,
                                                 expandBy, sizes);
  return tensor::CollapseShapeOp::create(rewriter, loc, expanded, collapseBy);
}

/// `value` ([B..., Hq, Lq, T]) as [B..., Hkv, g * Lq, T].
static Value packRows(RewriterBase &rewriter, Location loc,
                      const GroupReshape &reshape, Value value) {
  // (whyNotPacked checked that the expansion can be typed.)
  SmallVector<int64_t> shape =
      *reshape.expanded(cast<ShapedType>(value.getType()));
  SmallVector<OpFoldResult> sizes =
      reshape.expandedSizes(rewriter, loc, value, shape);
  if (isa<MemRefType>(value.getType())) {
    Value expanded = memref::ExpandShapeOp::create(rewriter, loc, shape, value,
                                                   reshape.heads(), sizes);
    return memref::CollapseShapeOp::create(rewriter, loc, expanded,
                                           reshape.rows());
  }
  return reshapeTensor(rewriter, loc, value, shape, sizes, reshape.heads(),
                       reshape.rows());
}

/// The inverse of packRows: `packed` back to the shape of `unpacked`.
static Value unpackRows(RewriterBase &rewriter, Location loc,
                        const GroupReshape &reshape, Value packed,
                        Value unpacked) {
  SmallVector<int64_t> shape =
      *reshape.expanded(cast<ShapedType>(unpacked.getType()));
  return reshapeTensor(rewriter, loc, packed, shape,
                       reshape.expandedSizes(rewriter, loc, unpacked, shape),
                       reshape.rows(), reshape.heads());
}

/// Creates the packed op (and, on tensors, its result reshaped back) at the
/// rewriter's insertion point: causal with `period` (index) if it is set,
/// else not causal. Returns the packed op and the values that replace
/// `op`.
static std::pair<AttentionOp, SmallVector<Value>>
createPacked(RewriterBase &rewriter, AttentionOp op,
             const GroupReshape &reshape, Value period) {
  Location loc = op.getLoc();
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
        unpackRows(rewriter, loc, reshape, packed->getResult(0), op.getInit()));
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

FailureOr<AttentionOp>
mlir::attn::packQueryHeadGroups(RewriterBase &rewriter, AttentionOp op,
                                int64_t blockRows, int64_t rowMajorRows,
                                ArrayRef<int64_t> rowCases) {
  if (!whyNotPacked(op, blockRows).empty())
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  GroupReshape reshape(op);
  reshape.materialize(rewriter, op);
  bool dynamicGroup = ShapedType::isDynamic(reshape.group);
  int64_t staticLq = op.getQuerySeqLen();
  bool dynamicLq = ShapedType::isDynamic(staticLq);
  std::optional<CausalAlignment> causal = op.getCausal();
  bool bottomRight = causal && *causal == CausalAlignment::BottomRight;

  // Causal rows are packed with a period of Lq, except that bottom-right
  // alignment hides no key from one query: the packed op is then not
  // causal (the faster kernel). With Lq or the group known only at run
  // time, both are decided there: Lq = 1 (bottom-right), then the tile test
  // (without tiles: g > 1), each unless packing loses the kernel for few
  // rows; the op stays as it is on the last branch.
  bool periodic = causal && !(bottomRight && staticLq == 1);
  bool runTimeRows = dynamicLq || dynamicGroup;
  Value lq, fills, single, losesKernel;
  if (dynamicLq || periodic ||
      (dynamicGroup && (blockRows > 0 || rowMajorRows > 0)))
    lq = getValueOrCreateConstantIndexOp(
        rewriter, loc, mixedSize(rewriter, loc, op.getQuery(), op.getSeqDim()));
  if (runTimeRows && blockRows > 0)
    fills =
        emitPackingFillsTiles(rewriter, loc, lq, reshape.groupSize, blockRows);
  else if (dynamicGroup)
    fills =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                              cast<Value>(reshape.groupSize),
                              arith::ConstantIndexOp::create(rewriter, loc, 1));
  if (runTimeRows)
    losesKernel =
        emitLosesRowMajorKernel(rewriter, loc, op, lq, reshape.groupSize,
                                blockRows, rowMajorRows, rowCases);
  Value keepsKernel;
  if (losesKernel) {
    keepsKernel = arith::XOrIOp::create(
        rewriter, loc, losesKernel,
        arith::ConstantIntOp::create(rewriter, loc, 1, 1));
    fills = fills ? arith::AndIOp::create(rewriter, loc, fills, keepsKernel)
                        .getResult()
                  : keepsKernel;
  }
  if (dynamicLq && bottomRight)
    single =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lq,
                              arith::ConstantIndexOp::create(rewriter, loc, 1));
  Value period = periodic ? lq : Value();

  AttentionOp packed;
  auto packedWith = [&](Value p) {
    auto [newOp, results] = createPacked(rewriter, op, reshape, p);
    packed = newOp;
    return results;
  };
  auto unpacked = [&]() -> SmallVector<Value> {
    return rewriter.clone(*op)->getResults();
  };
  // `condition` (true where null) ? packed with period `p` : unpacked.
  auto packedIf = [&](Value condition, Value p) -> SmallVector<Value> {
    if (!condition)
      return packedWith(p);
    return emitChoice(
        rewriter, op, condition, [&] { return packedWith(p); }, unpacked);
  };
  SmallVector<Value> results =
      single ? emitChoice(
                   rewriter, op, single,
                   [&] { return packedIf(keepsKernel, Value()); },
                   [&] { return packedIf(fills, period); })
             : packedIf(fills, period);
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
        (void)packQueryHeadGroups(rewriter, op, blockRows, rowMajorRows,
                                  dynamicRowCases);
      else if (remarks && op.getHeadGroupSize() != 1)
        op.emitRemark() << "query heads not packed: " << why;
    }
  }
};
} // namespace
