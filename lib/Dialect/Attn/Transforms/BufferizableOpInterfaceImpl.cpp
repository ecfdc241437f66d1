//===- BufferizableOpInterfaceImpl.cpp - bufferization of attention -------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::bufferization;

namespace {
struct AttentionOpInterface
    : DstBufferizableOpInterfaceExternalModel<AttentionOpInterface,
                                              AttentionOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &opOperand,
                              const AnalysisState &state) const {
    // Every element of init is overwritten and never read, so its buffer
    // may be a fresh allocation without a copy of the old contents.
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&opOperand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<AttentionOp>(op);
    if (!attn.hasPureTensorSemantics())
      return success();
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<TensorType>(operand.get().getType())) {
        buffers.push_back(operand.get()); // the causal offset
        continue;
      }
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    mlir::clone(rewriter, op, /*newResultTypes=*/{}, buffers);
    Value initBuffer = buffers[attn.getInitMutable().getOperandNumber()];
    replaceOpWithBufferizedValues(rewriter, op, initBuffer);
    return success();
  }
};
} // namespace

void mlir::attn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    AttentionOp::attachInterface<AttentionOpInterface>(*ctx);
  });
}
