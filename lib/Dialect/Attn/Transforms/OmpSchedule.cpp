//===- OmpSchedule.cpp - a schedule for OpenMP loops without one ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNOMPSCHEDULE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct AttnOmpSchedulePass
    : public attn::impl::AttnOmpScheduleBase<AttnOmpSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    // A loop without a schedule clause gets the runtime's default (static,
    // one contiguous range per thread); one with a clause chose it.
    getOperation()->walk([&](omp::WsloopOp loop) {
      if (!loop.getScheduleKind())
        loop.setScheduleKind(kind.getValue());
    });
  }
};
} // namespace
