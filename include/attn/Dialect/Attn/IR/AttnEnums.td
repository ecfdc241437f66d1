//===- AttnEnums.td - attn dialect enums -------------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD

include "mlir/IR/EnumAttr.td"

def Attn_CausalTopLeft : I32EnumAttrCase<"TopLeft", 0, "top_left">;
def Attn_CausalBottomRight : I32EnumAttrCase<"BottomRight", 1, "bottom_right">;

def Attn_CausalAlignmentAttr : I32EnumAttr<"CausalAlignment",
    "alignment of the causal mask when Lq != Lk",
    [Attn_CausalTopLeft, Attn_CausalBottomRight]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `top_left`: key j is visible to query i iff j <= i.
    `bottom_right`: key j is visible to query i iff j <= i + Lk - Lq, i.e. the
    last query sees every key (the usual alignment for decoding with a KV
    cache). The two coincide when Lq == Lk.
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
