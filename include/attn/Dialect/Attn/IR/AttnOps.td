//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnBase.td"
include "attn/Dialect/Attn/IR/AttnEnums.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"
include "mlir/IR/OpBase.td"

def Attn_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef],
                                     "ranked tensor or memref">;

def Attn_AttentionOp : Attn_Op<"attention", [
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<TilingInterface, [
      "getLoopIteratorTypes",
      "getIterationDomain",
      "getTiledImplementation",
      "getResultTilePosition",
      "getIterationDomainTileFromResultTile",
      "generateResultTileValue"]>]> {
  let summary = "scaled dot-product attention";
  let description = [{
    Computes scaled dot-product attention in destination-passing style.

    Shapes (`B...` is zero or more leading batch dims, shared by all operands):

    | operand | shape                  |
    |---------|------------------------|
    | query   | `[B..., Hq, Lq, Dqk]`  |
    | key     | `[B..., Hkv, Lk, Dqk]` |
    | value   | `[B..., Hkv, Lk, Dv]`  |
    | mask    | broadcasts to `[B..., Hq, Lq, Lk]` (every dim is the full size or 1) |
    | bias    | broadcasts to `[B..., Hq, Lq, Lk]` |
    | init    | `[B..., Hq, Lq, Dv]`   |

    `Hq` must be a multiple of `Hkv`: query head `h` reads key/value head
    `h / (Hq / Hkv)`, which covers multi-head (`Hq == Hkv`), grouped-query and
    multi-query (`Hkv == 1`) attention. `Dv` may differ from `Dqk`. Any dim
    may be dynamic; sizes known only at run time must then agree as the
    table says (with `Hq` or `Hkv` dynamic, `Hq` a multiple of `Hkv`), which
    the verifier cannot check: upstream's `--generate-runtime-verification`
    asserts them at run time (the op implements
    `RuntimeVerifiableOpInterface`).

    Query, key and value share one element type, `f32`, `f16` or `bf16`;
    the init and the result have the value's element type. All arithmetic
    (both contractions and the softmax) accumulates in `f32`.

    Semantics, in this order, for every batch/head index and query row `i`:

    1. `s[i, j] = scale * (q[i] . k[j]) + bias[i, j]`
    2. a float mask is added to `s`; where a boolean mask is `false`, or the
       causal alignment hides key `j` from query `i`, `s[i, j] = -inf`;
    3. `p = softmax(s[i, :])` along `Lk`, computed with the row maximum
       subtracted;
    4. `out[i] = p . v`.

    A row in which no key is visible produces `0`, never NaN.

    `scale` is required: there is no implied `1/sqrt(Dqk)` default, so the
    whole scaling is explicit and lives in exactly one place (the
    canonicalizer folds scalings of `query` or `key` by constants into it).

    `causal` is optional; when present it names the alignment of the causal
    mask, which matters when `Lq != Lk`:
    `top_left` (key `j` visible to query `i` iff `j <= i`) or `bottom_right`
    (iff `j <= i + Lk - Lq`).

    `causal_offset(%c)` (an `index`, only with `causal = top_left`) shifts the
    diagonal: key `j` is visible to query `i` iff `j <= i + %c`. It is what
    tiling along `Lq` produces: a tile of rows starting at row `i0` of a
    causal problem is a causal problem with its diagonal moved by `i0`.

    `causal_period(%p)` (an `index`, only with `causal`) says that the rows
    are groups of `P = %p` queries, as in grouped-query attention with a
    group's query heads packed into the rows: row `i` is query
    `(i + c) mod P`, where `c` is the causal offset (0 when absent), and
    the alignment places the diagonal for `P` queries. Key `j` is visible
    to row `i` iff `j <= (i + c) mod P` (`top_left`) or
    `j <= (i + c) mod P + Lk - P` (`bottom_right`). With a period the
    offset moves the rows, not the diagonal, so it is allowed with either
    alignment: a tile of rows starting at row `i0` has the offset `c + i0`
    and keeps its alignment and period. `P` must be positive and below
    2^31 and `c` not negative (checked where they are constants; other
    values are undefined behavior).

    On tensors the op returns the result; on memrefs it writes `init` and has
    no result.

    Example:

    ```mlir
    %0 = attn.attention ins(%q, %k, %v : tensor<2x8x128x64xf16>,
                            tensor<2x2x128x64xf16>, tensor<2x2x128x64xf16>)
           mask(%m : tensor<2x1x1x128xi1>)
           outs(%init : tensor<2x8x128x64xf16>)
           scale = 0.125 causal = bottom_right -> tensor<2x8x128x64xf16>
    ```
  }];

  let arguments = (ins
    Attn_TensorOrMemRef:$query,
    Attn_TensorOrMemRef:$key,
    Attn_TensorOrMemRef:$value,
    Optional<Attn_TensorOrMemRef>:$mask,
    Optional<Attn_TensorOrMemRef>:$bias,
    Attn_TensorOrMemRef:$init,
    Optional<Index>:$causal_offset,
    Optional<Index>:$causal_period,
    F32Attr:$scale,
    OptionalAttr<Attn_CausalAlignmentAttr>:$causal
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
      type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale
    (`causal` `=` $causal^)?
    (`causal_period` `(` $causal_period^ `)`)?
    (`causal_offset` `(` $causal_offset^ `)`)?
    attr-dict (`->` type($results)^)?
  }];

  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask,
                   "::mlir::Value":$bias, "::mlir::Value":$init,
                   "float":$scale,
                   "std::optional<::mlir::attn::CausalAlignment>":$causal,
                   CArg<"::mlir::Value", "{}">:$causalOffset,
                   CArg<"::mlir::Value", "{}">:$causalPeriod)>
  ];

  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }

    ::mlir::ShapedType getQueryType() {
      return ::llvm::cast<::mlir::ShapedType>(getQuery().getType());
    }
    ::mlir::ShapedType getKeyType() {
      return ::llvm::cast<::mlir::ShapedType>(getKey().getType());
    }
    ::mlir::ShapedType getValueType() {
      return ::llvm::cast<::mlir::ShapedType>(getValue().getType());
    }
    ::mlir::ShapedType getInitType() {
      return ::llvm::cast<::mlir::ShapedType>(getInit().getType());
    }

    /// Rank shared by query, key, value and init.
    int64_t getRank() { return getQueryType().getRank(); }
    /// Number of leading batch dims (rank - 3).
    int64_t getNumBatchDims() { return getRank() - 3; }
    int64_t getHeadDim() { return getRank() - 3; }
    int64_t getSeqDim() { return getRank() - 2; }
    int64_t getFeatureDim() { return getRank() - 1; }

    /// Static sizes, or ShapedType::kDynamic.
    int64_t getNumQueryHeads() { return getQueryType().getDimSize(getHeadDim()); }
    int64_t getNumKVHeads() { return getKeyType().getDimSize(getHeadDim()); }
    int64_t getQuerySeqLen() { return getQueryType().getDimSize(getSeqDim()); }
    int64_t getKVSeqLen() { return getKeyType().getDimSize(getSeqDim()); }
    int64_t getQKHeadDim() { return getQueryType().getDimSize(getFeatureDim()); }
    int64_t getVHeadDim() { return getValueType().getDimSize(getFeatureDim()); }

    /// Query heads per key/value head (Hq / Hkv), or kDynamic when unknown.
    int64_t getHeadGroupSize();
    /// Hq / Hkv as an index value, read from q and k where not static.
    ::mlir::Value createHeadGroupSize(::mlir::OpBuilder &b,
                                      ::mlir::Location loc);

    /// Shape of the score matrix, [B..., Hq, Lq, Lk], with kDynamic where
    /// unknown. Mask and bias broadcast to it.
    ::llvm::SmallVector<int64_t> getScoreShape();

    float getScaleValue() { return getScale().convertToFloat(); }
  }];

  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
