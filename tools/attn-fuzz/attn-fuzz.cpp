//===- attn-fuzz.cpp - libFuzzer target for the attn passes ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Parses the input as an MLIR module with the attn dialect (and the dialects
// attention is written in) registered. On a module that verifies, runs each
// attn pass chain on its own clone and checks that every pass that succeeds
// leaves verifying IR. A crash, a sanitizer report or IR that a pass broke
// is a finding; parse errors, verifier errors and pass failures (with their
// diagnostics) are the expected outcome for bad input. See
// docs/reliability.md and scripts/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAllAttn.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <functional>

using namespace mlir;

namespace {
using PassFactory = std::function<std::unique_ptr<Pass>()>;

struct Chain {
  const char *name;
  std::vector<PassFactory> passes;
};

/// The pass chains each input goes through, each on a fresh clone.
std::vector<Chain> buildChains() {
  auto canonicalize = [] { return createCanonicalizerPass(); };
  auto raise = [] {
    attn::AttnRaiseOptions options;
    options.report = true;
    return attn::createAttnRaise(options);
  };
  auto smallTiles = [] {
    // Tiles smaller than most inputs' dims: exercises remainders.
    attn::AttnTileOptions options;
    options.qTile = 3;
    options.kvTile = 2;
    return attn::createAttnTile(options);
  };
  return {
      {"canonicalize,attn-check-scale",
       {canonicalize, [] { return attn::createAttnCheckScale(); }}},
      {"attn-raise,canonicalize", {raise, canonicalize}},
      {"attn-decompose", {[] { return attn::createAttnDecompose(); }}},
      {"attn-tile,attn-approximate-exp2",
       {[] { return attn::createAttnTile(); },
        [] { return attn::createAttnApproximateExp2(); }}},
      {"attn-tile{q-tile=3 kv-tile=2},attn-decompose",
       {smallTiles, [] { return attn::createAttnDecompose(); }}},
      // Act on attn ops on memrefs only; anything they do not handle must
      // be an error at the op.
      {"attn-to-gpu", {[] { return attn::createAttnToGPU(); }}},
      {"attn-to-gpu{emulate=true}", {[] {
         attn::AttnToGPUOptions options;
         options.emulate = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true emulate=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         options.emulate = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true tma=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         options.tma = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true tma=true emulate=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         options.tma = true;
         options.emulate = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true warp-specialize=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         options.warpSpecialize = true;
         return attn::createAttnToGPU(options);
       }}},
      {"attn-to-gpu{wgmma=true warp-specialize=true emulate=true}", {[] {
         attn::AttnToGPUOptions options;
         options.wgmma = true;
         options.warpSpecialize = true;
         options.emulate = true;
         return attn::createAttnToGPU(options);
       }}},
  };
}

/// Runs `chain` pass by pass on `module` and aborts when a pass reports
/// success but leaves IR that does not verify: that is a bug in the pass.
void runChain(MLIRContext &context, ModuleOp module, const Chain &chain) {
  for (const PassFactory &factory : chain.passes) {
    PassManager pm(&context);
    // Verified by hand below, so a broken IR is told apart from a refusal.
    pm.enableVerifier(false);
    pm.addPass(factory());
    if (failed(pm.run(module)))
      return; // A pass failure with a diagnostic is a valid outcome.
    if (failed(verify(module))) {
      llvm::errs() << "attn-fuzz: chain '" << chain.name
                   << "' produced IR that does not verify:\n";
      module->print(llvm::errs(), OpPrintingFlags().printGenericOpForm());
      llvm::report_fatal_error("a pass broke the IR");
    }
  }
}

} // namespace

/// Whether the integer list at the front of `text` is exactly what
/// DenseI64ArrayAttr parses without error: `[`, then plain decimal integers
/// of at most 18 digits (no sign, so no overflow) separated by commas, then
/// `]`, with spaces, tabs and newlines between the tokens.
static bool isPlainIntegerList(StringRef text) {
  auto skipSpace = [&] { text = text.ltrim(" \t\r\n"); };
  if (!text.consume_front("["))
    return false;
  skipSpace();
  if (text.consume_front("]"))
    return true;
  while (true) {
    size_t digits = text.find_if_not(llvm::isDigit);
    if (digits == 0 || digits == StringRef::npos || digits > 18)
      return false;
    text = text.drop_front(digits);
    skipSpace();
    if (text.consume_front("]"))
      return true;
    if (!text.consume_front(","))
      return false;
    skipSpace();
  }
}

/// Whether `text` may reach upstream's crash in the custom parsers of
/// linalg.transpose, linalg.broadcast and linalg.reduce (LLVM 22.1.8): after
/// the `permutation =` or `dimensions =` keyword they store the result of
/// DenseI64ArrayAttr::parse without checking it, so any list that fails to
/// parse (`[0, -0.0, 1]`, `xbf16>[0, 2, 1]`, an integer past int64, ...)
/// leaves a null attribute that a segfault in libMLIR.so follows. Debian's
/// mlir-opt crashes the same way; attn-mlir cannot fix it, so the fuzzer
/// does not feed such inputs. To stay ahead of every spelling (comments or
/// odd whitespace before `=`, the keyword inside another token, a generic
/// form), every occurrence of either word must be followed by `=` and a
/// plain integer list; anything else is skipped. What that skips besides
/// the crash (a list with a sign, a generic-form `array<i64: ...>`) builds
/// the same ops as a spelling the fuzzer keeps, and the attn passes only
/// ever see verified ops. docs/reliability.md.
static bool mayReachUpstreamListParserCrash(StringRef text) {
  for (StringRef key : {"permutation", "dimensions"}) {
    for (size_t pos = text.find(key); pos != StringRef::npos;
         pos = text.find(key, pos)) {
      pos += key.size();
      StringRef rest = text.drop_front(pos).ltrim(" \t\r\n");
      if (!rest.consume_front("="))
        return true;
      if (!isPlainIntegerList(rest.ltrim(" \t\r\n")))
        return true;
    }
  }
  return false;
}

namespace {
struct FuzzState {
  DialectRegistry registry;
  std::vector<Chain> chains;

  FuzzState() {
    attn::registerAllAttnDialects(registry);
    registry.insert<tosa::TosaDialect>();
    chains = buildChains();
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FuzzState *state = new FuzzState();

  // A context per input: nothing (interned attributes, loaded dialects, a
  // half-built op) carries over from one input to the next. No threads, so
  // that findings reproduce and the fuzzer is fast.
  MLIRContext context(state->registry, MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected output on bad input; keep the log readable.
  // ATTN_FUZZ_VERBOSE=1 prints them (when reproducing a finding), and says
  // when an input is skipped.
  static const bool verbose = getenv("ATTN_FUZZ_VERBOSE") != nullptr;
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &diag) {
    if (verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });

  // The MLIR lexer reads one character past the end of its buffer: the input
  // must be null-terminated, which libFuzzer's data is not (the first run
  // of the fuzzer found the heap-buffer-overflow). std::string is.
  std::string buffer(reinterpret_cast<const char *>(data), size);
  StringRef text(buffer);
  if (mayReachUpstreamListParserCrash(text)) {
    if (verbose)
      llvm::errs() << "attn-fuzz: skipped: may reach upstream's linalg "
                      "integer-list parser crash\n";
    return -1; // Not added to the corpus.
  }
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  // parseSourceString verifies; the passes only ever see valid IR.
  for (const Chain &chain : state->chains) {
    OwningOpRef<ModuleOp> clone = module->clone();
    runChain(context, *clone, chain);
  }
  return 0;
}
