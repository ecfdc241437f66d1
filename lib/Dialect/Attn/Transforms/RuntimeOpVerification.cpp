//===- RuntimeOpVerification.cpp - run-time checks of attn.attention ------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The verifier checks the operands' shapes where they are static; a dynamic
// size can only be checked when the program runs. This model of
// RuntimeVerifiableOpInterface (upstream's --generate-runtime-verification)
// asserts each shape rule of the op that involves a dynamic size, the rules
// the lowerings rely on: a wrong size there reads out of bounds.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/RuntimeVerifiableOpInterface.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttentionOpVerification
    : RuntimeVerifiableOpInterface::ExternalModel<AttentionOpVerification,
                                                  AttentionOp> {
  void
  generateRuntimeVerification(Operation *operation, OpBuilder &b, Location loc,
                              function_ref<std::string(Operation *, StringRef)>
                                  generateErrorMessage) const {
    auto op = cast<AttentionOp>(operation);
    int64_t rank = op.getRank(), head = op.getHeadDim(), seq = op.getSeqDim(),
            feature = op.getFeatureDim();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
          init = op.getInit();

    auto isDynamic = [](Value x, int64_t d) {
      return cast<ShapedType>(x.getType()).isDynamicDim(d);
    };
    auto size = [&](Value x, int64_t d) -> Value {
      return getValueOrCreateConstantIndexOp(
          b, loc, linalg::createFoldedDimOp(b, loc, x, d));
    };
    auto check = [&](Value ok, const Twine &what) {
      cf::AssertOp::create(b, loc, ok, generateErrorMessage(op, what.str()));
    };
    auto eq = [&](Value x, Value y) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
    };
    // Dim `da` of `a` equals dim `dx` of `x` (the verifier checked it where
    // both are static).
    auto checkSame = [&](Value a, int64_t da, Value x, int64_t dx,
                         const Twine &what) {
      if (isDynamic(a, da) || isDynamic(x, dx))
        check(eq(size(a, da), size(x, dx)), what);
    };

    for (int64_t d = 0; d < head; ++d) {
      checkSame(q, d, k, d, "k's batch dim " + Twine(d) + " differs from q's");
      checkSame(q, d, v, d, "v's batch dim " + Twine(d) + " differs from q's");
      checkSame(q, d, init, d,
                "init's batch dim " + Twine(d) + " differs from q's");
    }
    checkSame(k, head, v, head, "v's head count differs from k's (Hkv)");
    checkSame(q, head, init, head, "init's head count differs from q's (Hq)");
    if (isDynamic(q, head) || isDynamic(k, head)) {
      // Hkv != 0 and Hq % Hkv == 0 (the remainder by 1 where Hkv is 0).
      Value hq = size(q, head), hkv = size(k, head);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value some =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, hkv, zero);
      Value divisor = arith::MaxUIOp::create(b, loc, hkv, one);
      Value whole = eq(arith::RemUIOp::create(b, loc, hq, divisor), zero);
      Value ok = arith::AndIOp::create(b, loc, some, whole);
      check(ok, "the query head count (Hq) is not a multiple of the "
                "key/value head count (Hkv)");
    }
    checkSame(q, seq, init, seq, "init's Lq differs from q's");
    checkSame(k, seq, v, seq, "v's Lk differs from k's");
    checkSame(q, feature, k, feature, "k's Dqk differs from q's");
    checkSame(v, feature, init, feature, "init's Dv differs from v's");

    // The mask and bias broadcast to the scores, [B..., Hq, Lq, Lk], where
    // a dim is a static 1; the lowerings read any other dim, a dynamic one
    // too, as the full size.
    for (auto [name, term] : {std::pair<StringRef, Value>{"mask", op.getMask()},
                              {"bias", op.getBias()}}) {
      if (!term)
        continue;
      for (int64_t d = 0; d < rank; ++d) {
        Value scores = d == rank - 1 ? k : q;
        int64_t scoresDim = d == rank - 1 ? seq : d;
        int64_t termSize = cast<ShapedType>(term.getType()).getDimSize(d);
        if (termSize == 1 ||
            (!ShapedType::isDynamic(termSize) && !isDynamic(scores, scoresDim)))
          continue;
        check(eq(size(term, d), size(scores, scoresDim)),
              name + " dim " + Twine(d) +
                  " differs from the scores' (only a static 1 broadcasts)");
      }
    }

    if (Value period = op.getCausalPeriod()) {
      Value ok =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, period,
                                arith::ConstantIndexOp::create(b, loc, 0));
      check(ok, "causal_period is not positive");
      if (Value offset = op.getCausalOffset()) {
        Value ok =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset,
                                  arith::ConstantIndexOp::create(b, loc, 0));
        check(ok, "causal_offset is negative with a causal_period");
      }
    }
  }
};
} // namespace

void mlir::attn::registerRuntimeVerifiableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    AttentionOp::attachInterface<AttentionOpVerification>(*ctx);
    // The checks are written in these dialects.
    ctx->loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                     linalg::LinalgDialect>();
  });
}
