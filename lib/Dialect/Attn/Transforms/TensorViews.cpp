//===- TensorViews.cpp - attn.attention on memrefs as an op on tensors ----===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<AttentionOp>
mlir::attn::convertAttentionToTensors(RewriterBase &rewriter, AttentionOp op) {
  if (!op.hasPureBufferSemantics())
    return rewriter.notifyMatchFailure(op, "not on memrefs");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();

  // One view per buffer, even where q, k and v are the same one: a
  // `restrict` view must be the only tensor of its buffer. The init's view
  // is writable; bufferization copies where writing it in place would
  // clobber an input that is the same buffer.
  Value init = op.getInit();
  DenseMap<Value, Value> views;
  auto view = [&](Value memref) -> Value {
    if (!memref)
      return memref;
    auto [it, inserted] = views.try_emplace(memref);
    if (inserted) {
      auto type = cast<MemRefType>(memref.getType());
      it->second = bufferization::ToTensorOp::create(
          rewriter, loc,
          RankedTensorType::get(type.getShape(), type.getElementType()), memref,
          /*restrict=*/true, /*writable=*/memref == init);
    }
    return it->second;
  };
  // The init first, so that its view is the writable one.
  Value initView = view(init);
  auto tensorOp = AttentionOp::create(
      rewriter, loc, TypeRange{initView.getType()}, view(op.getQuery()),
      view(op.getKey()), view(op.getValue()), view(op.getMask()),
      view(op.getBias()), initView, op.getCausalOffset(), op.getCausalPeriod(),
      op.getScaleAttr(), op.getCausalAttr());
  for (NamedAttribute attr : op->getDiscardableAttrs())
    tensorOp->setAttr(attr.getName(), attr.getValue());
  auto store = bufferization::MaterializeInDestinationOp::create(
      rewriter, loc, tensorOp->getResult(0), init);
  store.setWritable(true);
  rewriter.eraseOp(op);
  return tensorOp;
}
