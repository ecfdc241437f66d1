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

def AttnApproximateExp2 : Pass<"attn-approximate-exp2"> {
  let summary = "Expand f32 math.exp2 into a vectorizable polynomial";
  let description = [{
    LLVM lowers `math.exp2` on a vector to one libm call per lane. The fused
    CPU kernel takes an `exp2` of every score, so those calls cost about a
    quarter of its time. This pass rewrites every f32 `math.exp2` (scalar or
    vector) into straight-line arithmetic on the same shape:
    `2^x = 2^f * 2^n` with `n = round(x)`, `f = x - n` in `[-0.5, 0.5]`,
    `2^f` by its degree-7 Taylor polynomial (truncation error below 1e-8,
    relative) and `2^n` built in the exponent bits, as two factors so that
    every `n` from -127 to 128 is exact.

    Within 1 ulp of `exp2` for results in the normal range (0.83 ulp at
    most on the 61k inputs of `test/Integration/CPU/approximate-exp2.test`).
    Special values keep their meaning: `exp2(-inf) = 0`, and so is every
    `exp2(x)` with `x < -127` (a subnormal below 2^-127), so that the masked
    scores of a softmax contribute exactly nothing; `exp2(x) = +inf` for
    `x >= 128`; NaN stays NaN.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
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
    With the head counts known only at run time (so `Hq / Hkv` too), K and
    V are first gathered to the query heads (head `h` reads kv head
    `h / (Hq / Hkv)`), since the contractions' affine maps cannot divide by
    a run-time value.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnRaise : Pass<"attn-raise"> {
  let summary = "Recognize attention in unfused matmul-softmax-matmul graphs";
  let description = [{
    Finds scaled dot-product attention written out as separate ops, as
    frontends emit it, and replaces it by one `attn.attention`. The matcher
    is structural, not a list of fixed patterns: starting at every
    contraction, it walks the dataflow of the operand that holds the
    probabilities back through the softmax to the contraction that computes
    the scores, and classifies every op it passes.

    Accepted forms, in linalg on tensors and in TOSA:

    * contractions: `linalg.matmul` / `linalg.batch_matmul` (also with
      transposing indexing maps), `linalg.generic` contractions with any
      number of batch dims, `tosa.matmul`; batch and head dims may be folded
      by reshapes (`tensor.collapse_shape` / `expand_shape`, `tosa.reshape`)
      around 3-D batch matmuls;
    * layouts: `K^T` as `linalg.transpose`, `tosa.transpose`, a transposing
      indexing map or an already transposed operand; q/k/v in
      `[B, L, H, D]` permuted to `[B, H, L, D]`; K/V broadcast across head
      groups (`linalg.broadcast`, broadcasting `linalg.generic`,
      `tosa.tile`, with reshapes) is raised to grouped-query attention
      (`Hkv < Hq`); a q broadcast along the batch (latent queries, as in
      Perceiver) is broadcast for the op, and K, V and the result keep
      their layout;
    * softmax: `linalg.softmax`, or the decomposed chain (max, subtract,
      exp, sum, divide or multiply by the reciprocal) in `linalg.generic`,
      `linalg.reduce`, named linalg ops, arith/math on tensors or TOSA, with
      or without the max subtraction, with f16/bf16 scores upcast to f32
      around it;
    * scale: multiplication or division by a constant of the scores, of q,
      of k, or of both (arithmetic on constants is folded as the graph
      rounds it, e.g. TOSA's `tosa.reciprocal` of a constant, the form of
      `x / c` in TOSA); no scale at all gives `scale = 1.0`. The op carries
      the scale the graph applies, never an implied default (scalings of q
      and k are recorded in `attn.folded_scale`);
    * masks: additive float terms (any float type, broadcast) go to `bias`;
      `select` against `-inf` or a large negative constant becomes a
      boolean `mask`; predicates on `linalg.index` (iota) and constant
      triangular masks (boolean or additive) that equal a causal mask
      become the `causal` attribute with the matching alignment (another
      diagonal: `top_left` with a `causal_offset`); what else a mask
      conjoins (a sliding window, a padding mask) becomes one boolean
      `mask`, and several additive terms (ALiBi and a padding mask) one
      `bias`, each scaled as the graph scales it. Constant masks are
      evaluated point by point with each op's semantics.

    The rewrite preserves what the program computes up to floating-point
    reassociation, with these documented exceptions:

    * the op accumulates in f32 where the unfused graph may round scores
      or probabilities to f16/bf16 (the raised program is more precise);
    * a masked score is `-inf` in the op; a finite fill `f` counts as
      `-inf` only when it reaches the softmax at `f <= -1000` (then
      `exp(f - m)` is 0 in f32 for every row maximum `m > f + 104`);
    * a row in which every key is masked gives NaN (fill `-inf`) or the
      mean of the values (finite fill) in the unfused graph and 0 in the
      op. `strict-nan=true` refuses to raise wherever such a row is
      possible (a mask that is not a compile-time constant with a visible
      key in every row, a causal diagonal that leaves the first rows
      empty, an additive term that may be `-inf`).

    Everything else is refused and the graph left unchanged: a
    non-constant or per-element scale, nonlinear ops on the scores (e.g.
    `tanh` soft-capping), dropout or any other use of the probabilities, a
    mask fill that is not effectively `-inf`, a softmax or contraction over
    the wrong dim, a non-zero accumulator, q/k/v or a result in another
    element type than f32, f16 or bf16 (e.g. f64, fp8). With
    `report=true` each refusal
    is reported as a remark at the second matmul, e.g.
    `attn-raise: not raised: the scale is not a compile-time constant`;
    the same remarks go to the MLIR remark engine under the category
    `attn-raise` (`--remarks-filter-missed=attn-raise`).

    Dead producers of the raised graph are erased; run `--canonicalize`
    afterwards to fold further. The layout ops the op needs are
    `linalg.transpose`/`tensor` reshapes, also in TOSA graphs: lower the
    remaining TOSA with `tosa-to-linalg-named`, `tosa-to-linalg`,
    `tosa-to-arith` and `tosa-to-tensor` before `--attn-cpu-pipeline`.
    Reshapes of the batch/head dims need static sizes (`Lq`, `Lk` and
    batch dims that are not reshaped may be dynamic). Each candidate
    matmul is analyzed with a bounded number of steps (4096 values around
    it, nested at most 512 deep; a larger or deeper graph is refused), so
    the pass runs in time linear in the size of the input and in bounded
    stack.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark at the second matmul of every attention-like "
           "graph that is not raised, naming the check that failed">,
    Option<"strictNan", "strict-nan", "bool", /*default=*/"false",
           "Refuse to raise where a row could be fully masked (the unfused "
           "softmax gives NaN there, the op gives 0)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::attn::AttnDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnPackGQA : Pass<"attn-pack-gqa"> {
  let summary = "Make each key/value head's group of query heads its query "
                "rows";
  let description = [{
    With grouped-query or multi-query attention (`Hq = g * Hkv`, `g > 1`)
    the `g` query heads of a group read the same keys and values. A kernel
    that gives each block a tile of one head's query rows reads every K/V
    head `g` times, and in decoding (`Lq = 1`) a tile holds one row. This
    pass rewrites such an `attn.attention` into one with `Hkv` heads of
    `g * Lq` rows: the group's queries are the rows. Stored
    `[B..., Hq, Lq, D]`, the group's heads are adjacent, so the query, the
    init and a mask or bias with full head and row dims are reshaped
    (`expand_shape` then `collapse_shape`, views on memrefs), and the
    result is reshaped back. Keys and values do not change. A mask or bias
    that broadcasts over both heads and rows stays as it is.

    FlashAttention-2 does this for decoding and FlashAttention-3 as
    PackGQA, with the test used here: packing happens where it fills
    `block-rows`-row query tiles better, i.e. where the share of tile rows
    that hold a query row grows by more than 10% (for `Lq = 1`: always).

    Causal masking keeps its alignment with a `causal_period` of `Lq`:
    packed row `i` is query `i mod Lq` (FlashAttention-3 does the same in
    its mask). Bottom-right masking of one query hides nothing and is
    dropped.

    Where `Lq` or the head counts are known only at run time, so is the
    choice: an `scf.if` on the tile test (without tiles, `block-rows=0`:
    on `g > 1`) runs the packed op, else the op as it was; with
    bottom-right causal masking and a dynamic `Lq`, an `scf.if` on
    `Lq = 1` before it runs the packed op without causal masking. With
    dynamic head counts the views split the heads into `Hkv` and `g`, both
    dynamic, which upstream `--expand-strided-metadata` cannot lower:
    `--attn-lower-dynamic-expand-shape` rewrites them first (the CPU and
    GPU pipelines run it).

    A kernel may have a faster path for few rows: the CPU's row-major
    kernel, for up to `row-major-rows` static rows and for the run-time
    counts up to that and `block-rows` that are sums of
    `dynamic-row-cases` (see --attn-tile; with the default cases 1, 2, 4
    and 8, every such count). Where the rows are known only at run time,
    the choice then also asks that packing not take that path from the
    op's rows while leaving the packed rows, one tile of at most
    `row-major-rows`, without it (say, one query row, the cases 2, 4 and
    8 and an odd group; when only counts up to 8 had the kernel, decoding
    with a group of more than 8 measured packed 0.24x to 0.41x as fast),
    unless the group has at least half of `block-rows` heads (one tile of
    the kernel for many rows then costs less than that many ops of few
    rows). With a case of 1 row no count loses the path, and no such test
    is emitted.
    With static rows and group the static tile test decides, as before.

    A mask or bias dim broadcasts only where it is a static 1; a dynamic
    one is full size, as everywhere in the op.

    Not packed (left unchanged, with a remark under `remarks=true`): an op
    that already has a `causal_offset` or `causal_period`; a mask or bias
    that broadcasts over only one of the heads and the rows; an operand
    with a static head count while the key/value head count is dynamic (no
    typed view splits it); memrefs whose layout does not make the group
    and the rows one dimension.
  }];
  let options = [
    Option<"blockRows", "block-rows", "int64_t", /*default=*/"128",
           "Query rows per tile of the kernel that follows (0: pack "
           "wherever possible)">,
    Option<"rowMajorRows", "row-major-rows", "int64_t", /*default=*/"0",
           "The kernel that follows has one for at most this many static "
           "query rows (the CPU's row-major kernel; 0: none), and for the "
           "run-time counts of dynamic-row-cases">,
    ListOption<"dynamicRowCases", "dynamic-row-cases", "int64_t",
               "The run-time row counts (up to row-major-rows) that have the "
               "kernel for few rows, as do their sums up to row-major-rows "
               "(as --attn-tile's option)",
               "llvm::cl::list_init<int64_t>({1, 2, 4, 8})">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every grouped-query op that is not packed, "
           "saying why">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnLowerDynamicExpandShape : Pass<"attn-lower-dynamic-expand-shape"> {
  let summary = "Rewrite memref.expand_shape ops that split a dim into "
                "several dynamic dims as memref.reinterpret_cast";
  let description = [{
    Upstream `--expand-strided-metadata` (LLVM 22) lowers a
    `memref.expand_shape` only where each reassociation group has at most
    one dynamic result dim: it computes that dim by dividing the source
    size by the static ones, and crashes on a group with two. `attn-pack-gqa`
    makes such groups when the head counts are known only at run time (the
    query heads split into `[Hkv, g]`, both dynamic).

    This pass rewrites each such op into a `memref.reinterpret_cast` of its
    source's base buffer, with the source's offset, the op's `output_shape`
    as sizes, and the strides an expansion gives: within a group, the
    innermost dim keeps the source dim's stride and each outer dim's stride
    is the next inner one times its size. Other `expand_shape` ops are left
    to `--expand-strided-metadata`. The CPU and GPU pipelines run it before
    that pass.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Tile attn.attention and lower each tile to online softmax";
  let description = [{
    The fused CPU lowering (the FlashAttention algorithm).

    Every `attn.attention` on tensors is tiled through its TilingInterface
    over the batch dims, the query heads and blocks of `q-tile` query rows,
    with an `scf.forall` (the tiles are independent and may run on separate
    threads). A tile of query head `h` reads kv head `h / (Hq / Hkv)`,
    computed at run time where the head counts are dynamic. Each tile then becomes a loop over blocks of `kv-tile` keys on
    vectors, carrying a running row max `m`, a running row sum `l` and an
    f32 accumulator:

    * q is read once per tile and multiplied by `scale * log2(e)`, so the
      exponentials are `exp2` and the scale costs one multiply per q element;
    * per key block: `s = q.k^T (+ (bias + mask) * log2(e))`, masked-out
      keys become -inf, `m' = max(m, rowmax(s))`, `p = exp2(s - m')`,
      `l' = l * exp2(m - m') + rowsum(p)`, `acc' = acc * exp2(m - m') + p.v`;
    * at the end `out = acc / l` (one division per row), and a row that saw
      no visible key is 0: a max of -inf is replaced by 0 before it is
      subtracted, so no `-inf - -inf` NaN arises and `l` stays 0.

    The vectors run along the tile's query rows (padded to a power of two:
    LLVM builds vectors of other lengths element by element): the scores
    are kept keys-major, `s^T [kv-tile, rows]`, so the row-wise max and sum
    are elementwise, and the accumulator transposed, `acc^T [Dv, rows]`.
    Both products are register-blocked: a block of `s^T` (keys) or of
    `acc^T` (output columns), 128 f32 in all, stays in registers over its
    whole loop (over Dqk, or over the block's keys), with the K or V
    elements broadcast from single loads. With `q-tile = 64` that is 2 keys
    or columns of 4 AVX-512 registers each.

    A tile of few query rows (decoding: one row, or a packed GQA group's
    few) would use one to four lanes of those vectors. Tiles of a static
    number of rows up to `row-major-rows` run their vectors along the head
    dims instead, 16 f32 lanes, one row after another: the scores of 16
    keys are a `[16 keys, 16 lanes]` block of partial products summed over
    the chunks of Dqk, then a tree of shuffles sums each key's lanes; the
    max and sum are horizontal; and a block of output columns (128 f32)
    of a group of at most 16 rows stays in registers over the block's keys,
    with each V row loaded once per group (more rows would spill the
    accumulators).

    A tile whose row count is known only at run time (a dynamic Lq, or
    the last tile of one) tests that count: where it is at most
    `row-major-rows` and a sum of the counts listed in
    `dynamic-row-cases` taken largest first, which with a case of 1 is
    any such count, the rows run the row-major kernels of those counts on
    consecutive slices (7 rows: 4, then 2, then 1; 24 rows: 8 three
    times); any other count runs the keys-major kernel, which a tile of
    at most `row-major-rows` rows with a case of 1 then does not have.
    Each slice reads the keys and values again, but the row-major kernel
    on 8 rows at a time is still 1.3x to 3.0x as fast as the keys-major
    kernel on up to 32 (docs/performance.md). Frontends that leave the
    sequence length dynamic so decode with the row-major kernel too, and
    packed GQA groups known only at run time (7 or 16 query heads per KV
    head) take it. A static Lq that q-tile does not divide leaves tiles of
    q-tile rows and one of the remainder, both counts known only at run
    time: those two, where at most `row-major-rows`, are its cases, so
    each tile runs the kernel its count would have if static, and where
    both are, the tiles have no keys-major kernel.

    With causal masking the key loop stops after the last block any row of
    the tile can see, and is split in two: blocks entirely visible to every
    row of the tile run without the element-wise causal and bounds masks;
    only blocks that cross the diagonal or the end of the keys apply them.

    No `[Lq, Lk]` buffer exists: the live state per tile is
    `q-tile x (Dqk + Dv + kv-tile)` f32 values. A boolean mask is first
    turned into an additive f16 mask (0 or -inf) of the same shape, because
    LLVM loads a vector of i1 as packed bits while a memref of i1 holds one
    byte per element; masks are usually broadcast, so this copy is small.
    An op on memrefs becomes the same op on tensor views of its buffers
    (`bufferization.to_tensor`, `restrict`, one per buffer), whose result is
    materialized in its init buffer (`bufferization.materialize_in_destination`),
    and is tiled like an op on tensors; bufferization then writes the tiles
    into the init buffer. Ops whose head dims are not static are left
    unchanged (the CPU pipeline decomposes them afterwards).
  }];
  let options = [
    Option<"qTile", "q-tile", "int64_t", /*default=*/"64",
           "Query rows per tile">,
    Option<"kvTile", "kv-tile", "int64_t", /*default=*/"32",
           "Keys per block of the online-softmax loop">,
    Option<"rowMajorRows", "row-major-rows", "int64_t", /*default=*/"32",
           "Tiles of at most this many query rows (a static number) run "
           "their vectors along the head dims (decoding); 0: never">,
    ListOption<"dynamicRowCases", "dynamic-row-cases", "int64_t",
               "Run-time row counts (each at most row-major-rows) that have "
               "a row-major kernel specialized to them; a tile whose rows "
               "are known only at run time runs those of the counts that "
               "sum to its rows, largest first, where they do and the rows "
               "are at most row-major-rows",
               "llvm::cl::list_init<int64_t>({1, 2, 4, 8})">,
    Option<"onlineSoftmax", "online-softmax", "bool", /*default=*/"true",
           "Lower each tile to the online-softmax loop (false: only tile, "
           "leaving smaller attn.attention ops)">
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnOmpSchedule : Pass<"attn-omp-schedule"> {
  let summary = "Give OpenMP worksharing loops without a schedule one that "
                "balances unequal iterations";
  let description = [{
    `--convert-scf-to-openmp` emits `omp.wsloop` without a `schedule`
    clause, and the OpenMP runtime's default then gives each thread one
    contiguous range of iterations. The fused attention's tiles do not cost
    the same: under causal masking a query tile's keys grow with its row
    index, so the thread with the last tiles does about three quarters of
    the work on two threads.

    This pass sets `schedule(kind)` (default `dynamic`: each thread takes
    the next iteration when it is done with one) on every `omp.wsloop` that
    has no schedule; loops that declare one keep it.
    `--attn-cpu-pipeline="threads=true"` runs it (its `schedule` option).
  }];
  let options = [
    Option<"kind", "kind", "::mlir::omp::ClauseScheduleKind",
           /*default=*/"::mlir::omp::ClauseScheduleKind::Dynamic",
           "The schedule to set", [{::llvm::cl::values(
             clEnumValN(::mlir::omp::ClauseScheduleKind::Static, "static",
                        "one contiguous range of iterations per thread"),
             clEnumValN(::mlir::omp::ClauseScheduleKind::Dynamic, "dynamic",
                        "each thread takes the next iteration"),
             clEnumValN(::mlir::omp::ClauseScheduleKind::Guided, "guided",
                        "each thread takes a shrinking share of what is "
                        "left"))}]>
  ];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def AttnToGPU : Pass<"attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower attn.attention on memrefs to a fused tensor-core GPU kernel";
  let description = [{
    Replaces every `attn.attention` on memrefs in host code by one
    `gpu.launch` of a FlashAttention-2 kernel: a grid of
    (ceil(Lq / block-q), Hq, product of the batch dims) blocks of 4 warps,
    each warp computing block-q / 4 query rows (one or two m16 row tiles)
    with `mma.sync` m16n8k16 tensor-core ops
    (f32 accumulators), `ldmatrix` fragment loads and `cp.async`
    double-buffered K/V blocks in shared memory, and the online softmax in
    registers (quad shuffles, `exp2` with `scale * log2(e)` folded into one
    multiply, one division per row at the end).

    Handled: f16/bf16 query/key/value, and f32 through a slower TF32 path
    (`mma.sync` m16n8k8 on operands rounded to tf32, plain shared-memory
    fragment loads, P moved to the A layout with index shuffles), head dims
    that are multiples of 16 up to 256 (`Dqk != Dv` allowed), any Lq/Lk
    (predicated tails), batch dims, GQA/MQA, both causal alignments and
    `causal_offset` (fully hidden key blocks are skipped), boolean or
    additive masks and bias with broadcasting. Hidden scores (masked out,
    causally hidden, or with an additive -inf) are a finite -1e30 and rows
    without a visible key write 0; a finite additive term, however low,
    leaves its key visible, as in the op's semantics. The operands must be in
    device memory with the identity layout. An output buffer allocated by
    `memref.alloc` (as bufferization of a tensor function creates it)
    becomes a `gpu.alloc`. Anything else is an error at the op.

    With `wgmma=true` (f16/bf16, head dims multiples of 64; the module must
    be compiled for `sm_90a`) the kernel is the Hopper variant: both
    products are warpgroup `wgmma.mma_async` m64nNk16 ops: Q, K and V are
    read from shared memory through matrix descriptors, staged there (by
    `cp.async`) in 64-column panels with the 128-byte swizzle; P stays in
    registers as the A operand of P V. Each 64-row slab of the block is
    one warpgroup tile (warp w owns its rows 16w..16w+15).

    With `tma=true` as well, Q, K and V tiles are not copied by every
    thread with `cp.async` but by the TMA unit: the host encodes one tensor
    map per operand (`nvgpu.tma.create.descriptor`, 64-column boxes with the
    128-byte swizzle, zero fill outside the tensor), one thread issues a
    `cp.async.bulk.tensor` per panel, and each K/V buffer has an mbarrier
    that the block waits on by phase parity. O goes out the same way, from
    swizzled panels in shared memory. Tensors may have at most 5
    dimensions.

    With `warp-specialize=true` (and `wgmma=true`; TMA implied) the kernel
    has FlashAttention-3's structure: warpgroup 0 is a producer, one thread
    of which issues every TMA load into two K and two V buffers, each with
    a full mbarrier (the producer's bytes) and an empty one (an arrival per
    consumer warp once its wgmma have read the buffer); the other
    block-q / 64 warpgroups are consumers, each computing one 64-row slab
    with no block-wide barrier in the K/V loop, and (unless
    `intra-warpgroup-overlap=false`) running each block's softmax while
    the tensor cores compute the previous block's P V. The producer gives
    its registers to the consumers (`setmaxnreg`; the GPU pipeline then
    runs `--attn-gpu-launch-bounds`). Default tiles: 192 x 128 up to
    D = 64, 128 x 176 (128 x 128 causal) up to D = 128, 128 x 64 above and
    with a mask or bias; block-kv may be up to 256.

    With `split-kv=N` (N > 1; 0: chosen on the host at run time from the
    grid's size and `sm-count`, 1 for grids that fill the GPU) the kernel
    is split-KV's (flash-decoding): a grid of N blocks per query block, each
    running a share of its K/V steps and writing the rows' unnormalized O,
    maxima and sums to f32 device buffers, which a second kernel merges
    into the output.

    With `emulate=true` the same per-block program is emitted as CPU code:
    loops over the grid, and the 128 threads of a block as the lanes of
    `vector<128xT>` values, with `ldmatrix`, `mma.sync`, `wgmma` (its
    descriptors decoded, the swizzle applied) and the shuffles modelled by
    their PTX layouts. TMA loads write their swizzled boxes at once; the
    mbarriers are modelled by their phases, byte counts and arrivals, and
    a wait on an incomplete phase aborts with a message. Shared-memory
    accesses, barriers, fences and waits update a race model: an access the
    GPU would not order after a conflicting one (a missing barrier, copy
    wait, proxy fence or wgmma wait) aborts with the instruction and the
    hazard. A warp-specialized
    kernel runs each consumer warpgroup as a program of its own, with the
    producer's loads interleaved where the consumers release buffers; its
    race model orders the warpgroups by what their mbarrier waits and
    named barriers acquire (a clock per warpgroup), so a missing wait for a
    buffer's release or a missing named barrier aborts too. Comparing it
    with a reference
    checks the kernel's lane, fragment and shared-memory layout bookkeeping
    without a GPU.
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "Emit the kernel as CPU code that emulates the block's threads">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per block: 64 or 128 (0: 128 for f16/bf16 with head "
           "dims up to 128 and no mask or bias, else 64)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Keys per step of the K/V loop: a multiple of 16 (TF32: 8) up to "
           "128 (0: 64; 32 for causal D = 128 with 128 rows and for D > 128; "
           "TF32: 32, or 16 for D > 128)">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "The Hopper kernel (sm_90a): wgmma instead of mma.sync (default "
           "tiles as for mma.sync, but 64 keys above D = 128)">,
    Option<"tma", "tma", "bool", /*default=*/"false",
           "With wgmma: Q, K and V tiles arrive by TMA, tracked by "
           "mbarriers, from tensor maps encoded on the host">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"false",
           "With wgmma: warp specialization (FlashAttention-3): a producer "
           "warpgroup loads K and V by TMA into two stages each, for "
           "block-q / 64 consumer warpgroups of one 64-row slab each "
           "(implies tma; block-q 64, 128 or 192, block-kv up to 256)">,
    Option<"intraWarpgroupOverlap", "intra-warpgroup-overlap", "bool",
           /*default=*/"true",
           "With warp-specialize: each consumer runs a K/V block's softmax "
           "while the tensor cores compute the previous block's P V "
           "(FlashAttention-3's intra-warpgroup overlap)">,
    Option<"pingpong", "pingpong", "bool", /*default=*/"false",
           "With warp-specialize: the consumer warpgroups take turns issuing "
           "their wgmma (named barriers, FlashAttention-3's pingpong), so "
           "that one's softmax runs while another's products do; needs two "
           "or three consumers">,
    Option<"rescaleThreshold", "rescale-threshold", "double",
           /*default=*/"8.0",
           "Lazy rescaling: a warp rescales O only when a row maximum rises "
           "more than this (base 2, at most 8); negative: at every K/V "
           "step (FlashAttention-2)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 inputs: one mma.sync on operands rounded to TF32 (10 "
           "mantissa bits, f16's accuracy; faster) instead of the default "
           "3xTF32 (each operand split into two TF32 parts, three mma: "
           "about f32's accuracy)">,
    Option<"splitKV", "split-kv", "int64_t", /*default=*/"1",
           "Split the keys of each query block over this many blocks of the "
           "grid, each writing an unnormalized partial O and its row maxima "
           "and sums, merged by a second kernel (flash-decoding): 1 (the "
           "default) never splits; 0 chooses the count at run time from the "
           "grid's size and sm-count (1 for grids that fill the GPU); N > 1 "
           "always uses N splits (at most 128)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Streaming multiprocessors of the GPU, for split-kv=0 (0: from "
           "chip: 108 for sm_80, 132 for sm_90/sm_90a, else 132)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "The GPU the kernel is for (sm_80, sm_90a, ...; the GPU pipeline "
           "passes its own): the tiles' shared memory is checked against "
           "its limit and wgmma against sm_90a (empty: sm_90's 227 KB, no "
           "wgmma check)">,
    Option<"emulationFault", "emulation-fault", "std::string",
           /*default=*/"\"\"",
           "Test only, with emulate: leave the N-th (from 0, in the order "
           "the kernel emits them) synchronization of one kind out of each "
           "emulated kernel: barrier:N, copy-wait:N, proxy-fence:N, "
           "mbarrier-wait:N, wgmma-wait:N, named-barrier:N or "
           "named-arrive:N, to show that the emulation's checks catch it">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnGPULaunchBounds : Pass<"attn-gpu-launch-bounds",
                               "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare one block per SM on kernels that trade registers "
                "between warpgroups";
  let description = [{
    `setmaxnreg` moves registers between the warpgroups of a block within
    the block's share of the register file, so ptxas must know the
    register count at kernel entry. It knows it from `.maxntid` with
    `.minnctapersm`: 65536 / (threads x blocks per SM), in units of 8.
    With `.maxntid` alone ptxas may choose fewer registers for the entry,
    and then drops every `setmaxnreg` (its note C7508: "'setmaxnreg'
    ignored; unable to determine register count at entry"), which leaves
    the consumer warpgroups of a warp-specialized kernel without the
    registers they were compiled for.

    This pass sets `nvvm.minctasm = 1` on every `gpu.func` kernel that
    contains `nvvm.setmaxregister` (kernel outlining does not carry
    attributes from `gpu.launch`); `--attn-gpu-pipeline` runs it after
    outlining. Kernels that already declare a minimum keep it.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def AttnLLVMBF16AsI16 : Pass<"attn-llvm-bf16-as-i16", "::mlir::ModuleOp"> {
  let summary = "Carry bf16 values of LLVM dialect code as i16 bits";
  let description = [{
    On a host without native bf16 arithmetic (x86 without AVX-512 BF16),
    LLVM's code generator treats every `bfloat` value as a float to be
    promoted: vectors of it passed to functions, selected or shuffled
    become per-element calls to `__truncsfbf2`, a soft-float function that
    only compiler-rt or MLIR's `libmlir_float16_utils` defines. The CPU
    pipeline's kernels only move bf16 data (`arith-expand` turns their
    conversions into integer ops), so the calls cost compile time and run
    time and need that library at link time for nothing.

    This pass rewrites a module in which bf16 appears only in ops that move
    bits (loads, stores, masked loads and stores, calls and branches
    between the module's own functions, selects, shuffles, element and
    aggregate inserts and extracts, constants, globals, GEPs and allocas)
    to use `i16` in its place: types, constants (bit for bit) and
    signatures. Bitcasts between bf16 and i16 become no-ops and are
    removed. A module where any other op mentions bf16 (float arithmetic,
    a conversion, a function that is not local to the module) is left
    unchanged: its meaning or ABI would change. `--attn-cpu-pipeline` runs
    it last.
  }];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
