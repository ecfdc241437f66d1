//===- CheckScale.cpp - diagnose suspicious attention scales --------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCHECKSCALE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Shortest readable form, as printf's %g (6 significant digits).
std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

struct AttnCheckScalePass : attn::impl::AttnCheckScaleBase<AttnCheckScalePass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](AttentionOp op) { check(op); });
    markAllAnalysesPreserved();
  }

  void check(AttentionOp op) {
    double scale = op.getScaleValue();
    int64_t d = op.getQKHeadDim(), h = op.getNumQueryHeads();
    // Relative comparison: the scale is stored in f32.
    auto near = [](double a, double b) {
      return std::abs(a - b) <= 1e-4 * std::abs(b);
    };

    if (auto folded = op->getAttrOfType<DictionaryAttr>("attn.folded_scale")) {
      std::string parts;
      for (NamedAttribute entry : folded) {
        auto factor = dyn_cast<FloatAttr>(entry.getValue());
        if (!factor)
          continue;
        parts += (parts.empty() ? "" : ", ") + entry.getName().str() + " x " +
                 fmt(factor.getValueAsDouble());
      }
      op.emitRemark() << "scale " << fmt(scale)
                      << " includes factors folded from the inputs (" << parts
                      << ")";
    }

    if (ShapedType::isDynamic(d) || d <= 1)
      return;
    double expected = 1.0 / std::sqrt(static_cast<double>(d));
    std::string expectation =
        " (expected 1/sqrt(" + std::to_string(d) + ") = " + fmt(expected) + ")";

    SmallVector<std::string> findings;
    if (near(scale, 1.0 / d))
      findings.push_back("it equals 1/Dqk = 1/" + std::to_string(d) +
                         ": 1/sqrt(Dqk) applied twice?");
    if (!ShapedType::isDynamic(h) && h > 1 &&
        near(scale, 1.0 / std::sqrt(static_cast<double>(h * d))))
      findings.push_back("it equals 1/sqrt(Hq*Dqk) = 1/sqrt(" +
                         std::to_string(h * d) +
                         "): the model dim used instead of the head dim?");
    if (scale == 1.0)
      findings.push_back("scores are not scaled although Dqk = " +
                         std::to_string(d));
    if (findings.empty())
      return;
    op.emitWarning() << "suspicious attention scale " << fmt(scale) << ": "
                     << llvm::join(findings, "; ") << expectation;
  }
};
} // namespace
