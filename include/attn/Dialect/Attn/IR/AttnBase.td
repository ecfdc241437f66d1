//===- AttnBase.td - attn dialect definition ---------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNBASE_TD
#define ATTN_DIALECT_ATTN_IR_ATTNBASE_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Scaled dot-product attention as a single, analyzable op";
  let description = [{
    The `attn` dialect models scaled dot-product attention as one operation,
    `attn.attention`, so that a compiler can reason about the scale, the
    masks and the softmax as a whole: fold every scaling into one place,
    diagnose suspicious scales, and lower the computation into fused,
    tiled kernels (online softmax) instead of materializing the score matrix.
  }];
  let hasCanonicalizer = 0;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNBASE_TD
