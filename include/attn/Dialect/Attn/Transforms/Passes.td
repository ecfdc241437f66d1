//===- Passes.td - attn dialect passes ---------------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCheckScale : Pass<"attn-check-scale"> {
  let summary = "Warn where the attention scale looks wrong";
  let description = [{
    Scaling bugs in attention are silent: the model still runs, it just
    attends more or less sharply than intended. This pass compares the
    `scale` of every `attn.attention` with the values such bugs produce and
    emits a warning, with the numbers, where it matches one:

    * `1/Dqk`: `1/sqrt(Dqk)` applied twice (once in the graph, once in the
      kernel);
    * `1/sqrt(Hq * Dqk)`: the model dimension used instead of the head
      dimension;
    * `1.0` with `Dqk > 1`: no scaling at all.

    It also emits a remark naming the scale where part of it was folded from
    a scaling of the query or the key (see the `attn.folded_scale` attribute
    that canonicalization leaves), so the origin of the number is visible.
    The pass never changes the IR.
  }];
}

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Lower attn.attention to unfused linalg (the reference)";
  let description = [{
    Rewrites every `attn.attention` into the unfused computation on linalg
    ops: the `q . k^T` contraction in f32, one elementwise step applying
    scale, bias, mask and causal masking, a max-subtracted softmax along
    `Lk` (rows with no visible key give 0, not NaN), the `p . v` contraction
    in f32 and the conversion to the result type.

    This materializes the `[B..., Hq, Lq, Lk]` score matrix and is meant as
    the semantic reference that fused lowerings are tested against, not as a
    fast path. Ops on memrefs are handled by wrapping them in
    `bufferization.to_tensor` / `bufferization.materialize_in_destination`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
