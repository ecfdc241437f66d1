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
      {"attn-tile", {[] { return attn::createAttnTile(); }}},
      {"attn-tile{q-tile=3 kv-tile=2},attn-decompose",
       {smallTiles, [] { return attn::createAttnDecompose(); }}},
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

/// Whether `text` has a `permutation = [...]` or `dimensions = [...]` list
/// that is not all integers. Upstream's linalg.transpose (and the other ops
/// that share its integer-list parser) dereferences a null attribute after
/// reporting such a list (LLVM 22.1.8; Debian's mlir-opt segfaults on
/// `permutation = [0, -0.0, 1]` too): a crash in libMLIR.so that attn-mlir
/// cannot fix, so the fuzzer does not feed it. docs/reliability.md.
bool hitsUpstreamListParserCrash(StringRef text) {
  for (StringRef key : {"permutation", "dimensions"}) {
    size_t pos = 0;
    while ((pos = text.find(key, pos)) != StringRef::npos) {
      pos += key.size();
      StringRef rest = text.drop_front(pos).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        continue;
      StringRef list = rest.take_until([](char c) { return c == ']'; });
      if (list.size() == rest.size())
        return true; // Unterminated: the parser's error path again.
      // Exactly `int (, int)*` or empty; anything else takes the error path.
      enum { Expect, InNumber, AfterNumber } state = Expect;
      bool sawComma = false;
      for (char c : list) {
        if (llvm::isDigit(c)) {
          if (state == AfterNumber)
            return true;
          state = InNumber;
        } else if (c == ' ' || c == '\n') {
          if (state == InNumber)
            state = AfterNumber;
        } else if (c == ',' && state != Expect) {
          state = Expect;
          sawComma = true;
        } else {
          return true;
        }
      }
      if (state == Expect && sawComma)
        return true;
    }
  }
  return false;
}

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
  // ATTN_FUZZ_VERBOSE=1 prints them (when reproducing a finding).
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
  if (hitsUpstreamListParserCrash(text))
    return -1; // Not added to the corpus.
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
