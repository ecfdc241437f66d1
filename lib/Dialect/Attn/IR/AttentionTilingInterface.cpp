//===- AttentionTilingInterface.cpp - TilingInterface for attention -------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The iteration domain of attn.attention is its parallel dims: the batch
// dims, the query heads and the query rows ([B..., Hq, Lq]). Lk is a
// reduction that the fused lowerings handle inside a tile (online softmax),
// so it is not part of the domain, and every tile reads all of K and V.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<utils::IteratorType> AttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(getRank() - 1,
                                          utils::IteratorType::parallel);
}

SmallVector<Range> AttentionOp::getIterationDomain(OpBuilder &b) {
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(*this);
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Range> domain;
  for (int64_t d = 0, e = getRank() - 1; d < e; ++d)
    domain.push_back(
        Range{zero, linalg::createFoldedDimOp(b, loc, getInit(), d), one});
  return domain;
}

static Value extractSlice(OpBuilder &b, Location loc, Value source,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  if (isa<RankedTensorType>(source.getType()))
    return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                          strides);
  return memref::SubViewOp::create(b, loc, source, offsets, sizes, strides);
}

/// Maps a tile [offset, offset + size) of query heads to the key/value heads
/// it reads. Query head h reads kv head h / g. The tile is expressible as a
/// smaller attention op only if it covers whole groups (size a multiple of g)
/// or lies inside one group (g a multiple of size). With g known only at run
/// time (dynamic head counts, as frontends with dynamic shapes write even
/// plain multi-head attention), a tile of one query head reads kv head
/// h / (Hq / Hkv), computed then.
static FailureOr<std::pair<OpFoldResult, OpFoldResult>>
getKVHeadTile(OpBuilder &b, Location loc, AttentionOp op, OpFoldResult offset,
              OpFoldResult size) {
  int64_t hq = op.getNumQueryHeads(), hkv = op.getNumKVHeads();
  if (!ShapedType::isDynamic(hq) && hq == hkv)
    return std::make_pair(offset, size);
  int64_t g = op.getHeadGroupSize();
  if (ShapedType::isDynamic(g)) {
    if (!isConstantIntValue(size, 1))
      return op.emitOpError("cannot tile query heads of grouped-query "
                            "attention whose head group size is not static "
                            "into tiles of more than one head");
    Value kvHead = arith::DivUIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, offset),
        op.createHeadGroupSize(b, loc));
    return std::make_pair(OpFoldResult(kvHead),
                          OpFoldResult(b.getIndexAttr(1)));
  }
  // A tile size that does not divide Hq leaves a last tile of run-time size.
  std::optional<int64_t> s = getConstantIntValue(size);
  if (!s)
    return op.emitOpError("cannot tile query heads of grouped-query attention "
                          "into tiles of run-time size (a head tile size that "
                          "does not divide the number of query heads, ")
           << hq << ", leaves a partial last tile)";
  AffineExpr d0;
  bindDims(b.getContext(), d0);
  OpFoldResult kvOffset =
      affine::makeComposedFoldedAffineApply(b, loc, d0.floorDiv(g), {offset});
  if (*s % g == 0)
    return std::make_pair(kvOffset, OpFoldResult(b.getIndexAttr(*s / g)));
  if (g % *s == 0)
    return std::make_pair(kvOffset, OpFoldResult(b.getIndexAttr(1)));
  return op.emitOpError() << "head tile size " << *s
                          << " must be a multiple or a divisor of the query "
                             "head group size "
                          << g;
}

/// The causal offset of the tile whose first query row is `rowOffset`, or
/// null if not causal: top_left's (key j visible to query i iff
/// j <= i + offset), or, with a causal period, the rows' (which keeps the
/// alignment).
static Value getTileCausalOffset(OpBuilder &b, Location loc, AttentionOp op,
                                 OpFoldResult rowOffset) {
  std::optional<CausalAlignment> causal = op.getCausal();
  if (!causal)
    return Value();
  AffineExpr d0, d1, d2;
  bindDims(b.getContext(), d0, d1, d2);
  OpFoldResult tileOffset;
  if (*causal == CausalAlignment::BottomRight && !op.getCausalPeriod()) {
    // i0 + Lk - Lq
    OpFoldResult lk =
        linalg::createFoldedDimOp(b, loc, op.getKey(), op.getSeqDim());
    OpFoldResult lq =
        linalg::createFoldedDimOp(b, loc, op.getQuery(), op.getSeqDim());
    tileOffset = affine::makeComposedFoldedAffineApply(b, loc, d0 + d1 - d2,
                                                       {rowOffset, lk, lq});
  } else {
    OpFoldResult base = op.getCausalOffset()
                            ? OpFoldResult(op.getCausalOffset())
                            : OpFoldResult(b.getIndexAttr(0));
    tileOffset = affine::makeComposedFoldedAffineApply(b, loc, d0 + d1,
                                                       {rowOffset, base});
  }
  return getValueOrCreateConstantIndexOp(b, loc, tileOffset);
}

FailureOr<TilingResult>
AttentionOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  int64_t rank = getRank();
  int64_t hDim = getHeadDim();
  OpFoldResult zero = b.getIndexAttr(0);
  auto dimOf = [&](Value v, int64_t d) {
    return linalg::createFoldedDimOp(b, loc, v, d);
  };

  FailureOr<std::pair<OpFoldResult, OpFoldResult>> kvHeads =
      getKVHeadTile(b, loc, *this, offsets[hDim], sizes[hDim]);
  if (failed(kvHeads))
    return failure();

  // q and init: the tile in the domain dims, all of the feature dim.
  auto domainSlice = [&](Value v) {
    SmallVector<OpFoldResult> offs(offsets), szs(sizes);
    offs.push_back(zero);
    szs.push_back(dimOf(v, rank - 1));
    return extractSlice(b, loc, v, offs, szs);
  };
  // k and v: the batch tile, the kv heads of the query-head tile, all keys.
  auto kvSlice = [&](Value v) {
    SmallVector<OpFoldResult> offs(offsets.take_front(hDim)),
        szs(sizes.take_front(hDim));
    offs.append({kvHeads->first, zero, zero});
    szs.append({kvHeads->second, dimOf(v, rank - 2), dimOf(v, rank - 1)});
    return extractSlice(b, loc, v, offs, szs);
  };
  // mask and bias: broadcast (size-1) dims stay whole, Lk is whole.
  auto broadcastSlice = [&](Value v) -> Value {
    if (!v)
      return v;
    auto ty = cast<ShapedType>(v.getType());
    SmallVector<OpFoldResult> offs, szs;
    for (int64_t d = 0; d < rank - 1; ++d) {
      bool broadcast = ty.getDimSize(d) == 1;
      offs.push_back(broadcast ? zero : offsets[d]);
      szs.push_back(broadcast ? b.getIndexAttr(1) : sizes[d]);
    }
    offs.push_back(zero);
    szs.push_back(dimOf(v, rank - 1));
    return extractSlice(b, loc, v, offs, szs);
  };

  SmallVector<Value> operands = {domainSlice(getQuery()), kvSlice(getKey()),
                                 kvSlice(getValue())};
  if (Value m = broadcastSlice(getMask()))
    operands.push_back(m);
  if (Value bb = broadcastSlice(getBias()))
    operands.push_back(bb);
  Value initSlice = domainSlice(getInit());
  operands.push_back(initSlice);
  // A tile of query rows starting at i0 sees the diagonal moved by i0.
  Value tileOffset = getTileCausalOffset(b, loc, *this, offsets[getSeqDim()]);
  if (tileOffset)
    operands.push_back(tileOffset);
  if (Value period = getCausalPeriod())
    operands.push_back(period);

  SmallVector<Type> resultTypes;
  if (hasPureTensorSemantics())
    resultTypes.push_back(initSlice.getType());
  Operation *tiled = mlir::clone(b, getOperation(), resultTypes, operands);
  // The tile has an explicit offset, and is top_left whatever the alignment
  // was unless a period keeps it.
  if (getCausal()) {
    auto tiledOp = cast<AttentionOp>(tiled);
    if (!getCausalPeriod())
      tiledOp.setCausal(CausalAlignment::TopLeft);
    tiledOp->setAttr(
        tiledOp.getOperandSegmentSizesAttrName(),
        b.getDenseI32ArrayAttr({1, 1, 1, getMask() ? 1 : 0, getBias() ? 1 : 0,
                                1, 1, getCausalPeriod() ? 1 : 0}));
  }

  SmallVector<Operation *> slices;
  for (Value v : operands)
    if (isa_and_nonnull<tensor::ExtractSliceOp, memref::SubViewOp>(
            v.getDefiningOp()))
      slices.push_back(v.getDefiningOp());
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()), slices};
}

LogicalResult AttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  resultOffsets.push_back(b.getIndexAttr(0));
  resultSizes.push_back(
      linalg::createFoldedDimOp(b, getLoc(), getInit(), getRank() - 1));
  return success();
}

LogicalResult AttentionOp::getIterationDomainTileFromResultTile(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes,
    SmallVectorImpl<OpFoldResult> &iterDomainOffsets,
    SmallVectorImpl<OpFoldResult> &iterDomainSizes) {
  // Each output row needs all of Dv: only whole rows are expressible.
  OpFoldResult fullDv =
      linalg::createFoldedDimOp(b, getLoc(), getInit(), getRank() - 1);
  if (!isZeroInteger(offsets.back()) ||
      !isEqualConstantIntOrValue(sizes.back(), fullDv))
    return failure();
  iterDomainOffsets.assign(offsets.begin(), offsets.end() - 1);
  iterDomainSizes.assign(sizes.begin(), sizes.end() - 1);
  return success();
}

FailureOr<TilingResult>
AttentionOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                     ArrayRef<OpFoldResult> offsets,
                                     ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> domainOffsets, domainSizes;
  if (failed(getIterationDomainTileFromResultTile(
          b, resultNumber, offsets, sizes, domainOffsets, domainSizes)))
    return failure();
  return getTiledImplementation(b, domainOffsets, domainSizes);
}
