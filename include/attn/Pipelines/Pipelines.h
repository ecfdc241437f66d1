//===- Pipelines.h - attn pass pipelines ------------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Dialect/OpenMP/OpenMPOpsEnums.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace attn {

struct AttnCPUPipelineOptions
    : public PassPipelineOptions<AttnCPUPipelineOptions> {
  PassOptions::Option<bool> fold{
      *this, "fold",
      llvm::cl::desc("Canonicalize attn ops first, so that scalings of q and "
                     "k fold into the scale attribute"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fused{
      *this, "fused",
      llvm::cl::desc("Lower attention with --attn-tile (tiled online softmax "
                     "on vectors); false: the unfused --attn-decompose "
                     "reference, which materializes the score matrix"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> qTile{
      *this, "q-tile", llvm::cl::desc("Query rows per tile (fused)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> kvTile{
      *this, "kv-tile", llvm::cl::desc("Keys per online-softmax block (fused)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> rowMajorRows{
      *this, "row-major-rows",
      llvm::cl::desc("Fused: tiles of at most this many query rows run their "
                     "vectors along the head dims (decoding; see --attn-tile)"
                     "; 0: never"),
      llvm::cl::init(32)};
  PassOptions::ListOption<int64_t> dynamicRowCases{
      *this, "dynamic-row-cases",
      llvm::cl::desc("Fused: run-time row counts (each at most "
                     "row-major-rows) that have a row-major kernel of their "
                     "own; a tile of rows known only at run time runs those "
                     "that sum to its rows, largest first, where they do "
                     "and the rows are at most row-major-rows"),
      llvm::cl::list_init<int64_t>({1, 2, 4, 8})};
  PassOptions::Option<bool> packGQA{
      *this, "pack-gqa",
      llvm::cl::desc("Fused: make each key/value head's group of query heads "
                     "the query rows of one op first (--attn-pack-gqa, for "
                     "q-tile rows), so that a tile reads K/V once per group, "
                     "where that fills tiles better (decoding)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approximateExp2{
      *this, "approximate-exp2",
      llvm::cl::desc("Expand f32 math.exp2 into a vectorizable polynomial "
                     "(--attn-approximate-exp2, within 1 ulp); false: one "
                     "libm call per vector lane"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the tiles in parallel with OpenMP (the program then "
                     "needs libomp at run time); false: one thread"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("With threads: the number of threads; 0: the OpenMP "
                     "runtime's default (OMP_NUM_THREADS, else one per core)"),
      llvm::cl::init(0)};
  PassOptions::Option<omp::ClauseScheduleKind> schedule{
      *this, "schedule",
      llvm::cl::desc("With threads: how the tiles are shared out "
                     "(--attn-omp-schedule); causal tiles differ in cost"),
      llvm::cl::init(omp::ClauseScheduleKind::Dynamic),
      llvm::cl::values(
          clEnumValN(omp::ClauseScheduleKind::Static, "static",
                     "one contiguous range of tiles per thread"),
          clEnumValN(omp::ClauseScheduleKind::Dynamic, "dynamic",
                     "each thread takes the next tile"),
          clEnumValN(omp::ClauseScheduleKind::Guided, "guided",
                     "each thread takes a shrinking share of what is left"))};
};

/// Lowers a module of functions on tensors (func, arith, math, tensor,
/// linalg and attn ops) to the LLVM dialect, ready for mlir-runner or
/// mlir-translate. attn.attention goes through --attn-tile (fused, the
/// default) or --attn-decompose.
void buildAttnCPUPipeline(OpPassManager &pm,
                          const AttnCPUPipelineOptions &options);

/// The kernel options of --attn-to-gpu (tiles, wgmma, tma, warp
/// specialization and its overlap and pingpong, rescaling), shared by the
/// GPU pipelines.
template <typename Derived>
struct AttnGPUTileOptions : public PassPipelineOptions<Derived> {
  using PassOptions = ::mlir::detail::PassOptions;
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("Query rows per kernel block: 64 or 128 (64, 128 or "
                     "192 with warp-specialize; 0: default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per step of the kernel's K/V loop (0: default)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("The Hopper kernel on wgmma (needs chip=sm_90a on the "
                     "GPU pipeline)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("With wgmma: Q, K and V tiles by TMA and mbarriers "
                     "instead of cp.async"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("With wgmma: a TMA producer warpgroup and block-q / 64 "
                     "consumer warpgroups (implies tma)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> intraWarpgroupOverlap{
      *this, "intra-warpgroup-overlap",
      llvm::cl::desc("With warp-specialize: a block's softmax overlaps the "
                     "previous block's P V"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> pingpong{
      *this, "pingpong",
      llvm::cl::desc("With warp-specialize: the consumer warpgroups take "
                     "turns issuing their wgmma"),
      llvm::cl::init(false)};
  PassOptions::Option<double> rescaleThreshold{
      *this, "rescale-threshold",
      llvm::cl::desc("Lazy rescaling threshold (base 2, at most 8; "
                     "negative: rescale at every step)"),
      llvm::cl::init(8.0)};
  PassOptions::Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 inputs: one TF32 mma (f16's accuracy, faster) "
                     "instead of 3xTF32 (about f32's)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> splitKV{
      *this, "split-kv",
      llvm::cl::desc("Split each query block's keys over this many grid "
                     "blocks, merged by a second kernel (1: never; 0: "
                     "chosen at run time from the grid and sm-count)"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> packGQA{
      *this, "pack-gqa",
      llvm::cl::desc("Make each key/value head's group of query heads the "
                     "query rows of one kernel (--attn-pack-gqa), where that "
                     "fills the blocks' rows better, as in decoding"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("Streaming multiprocessors, for split-kv=0 (0: from "
                     "the chip)"),
      llvm::cl::init(0)};
};

struct AttnGPUPipelineOptions
    : public AttnGPUTileOptions<AttnGPUPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU: sm_80, sm_86, sm_89, sm_90, sm_90a, ..."),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (the PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu.binary holds: bin (a cubin), isa (PTX text), "
                     "fatbin or llvm"),
      llvm::cl::init("bin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimization level of the kernel"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Extra options for ptxas (e.g. -v)"), llvm::cl::init("")};
  PassOptions::Option<bool> shortPointers{
      *this, "short-pointers",
      llvm::cl::desc("32-bit shared/local/const pointers in the kernels: "
                     "turns on LLVM's process-wide -nvptx-short-ptr, as "
                     "clang's -fcuda-short-ptr does (false leaves LLVM's "
                     "setting as it is)"),
      llvm::cl::init(true)};
};

/// Lowers a module of host functions (on tensors or on memrefs in device
/// memory) with attn ops to host LLVM dialect plus one gpu.binary: the
/// attention ops become fused tensor-core kernels (--attn-to-gpu), then
/// MLIR's NVVM pipeline compiles them for `chip`.
void buildAttnGPUPipeline(OpPassManager &pm,
                          const AttnGPUPipelineOptions &options);

struct AttnGPUEmulationPipelineOptions
    : public AttnGPUTileOptions<AttnGPUEmulationPipelineOptions> {
  PassOptions::Option<std::string> emulationFault{
      *this, "emulation-fault",
      llvm::cl::desc("Test only: a synchronization to leave out of each "
                     "emulated kernel (see --attn-to-gpu)"),
      llvm::cl::init("")};
};

/// The GPU kernels' per-block programs emulated on the CPU
/// (--attn-to-gpu=emulate), lowered to LLVM like --attn-cpu-pipeline: for
/// testing the kernels without a GPU.
void buildAttnGPUEmulationPipeline(
    OpPassManager &pm, const AttnGPUEmulationPipelineOptions &options = {});

/// Registers --attn-cpu-pipeline, --attn-gpu-pipeline and
/// --attn-gpu-emulation-pipeline.
void registerAttnPipelines();

/// Adds the dialects and the external interface models that the attn
/// pipelines need on their input and along the way (the bufferization and
/// buffer-deallocation models of arith, cf, func, linalg, scf, tensor,
/// vector, ...).
/// attn-opt gets them from registerAllDialects/registerAllExtensions; a
/// compiler that registers only what it uses gets them through
/// registerAllAttnDialects, which calls this.
void registerAttnPipelineDependencies(DialectRegistry &registry);

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
