//===- AttnMLIRPlugin.cpp - attn-mlir as an mlir-opt plugin ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// One shared library that is both a dialect plugin and a pass plugin for the
// stock mlir-opt:
//
//   mlir-opt --load-dialect-plugin=AttnMLIRPlugin.so \
//            --load-pass-plugin=AttnMLIRPlugin.so --attn-decompose in.mlir
//
// Both entry points live in the same file so that loading both never puts
// two copies of the attn dialect (two TypeIDs for one op) in one process.
// The library links libMLIR.so, the copy of MLIR that mlir-opt itself uses.
//
// Pass flags. mlir-opt creates one command-line flag per registered pass
// before it parses the command line, and loads plugins while parsing it, so
// passes that a plugin registers are reachable through --pass-pipeline only
// (llvm/llvm-project#78020): `--attn-decompose` would be an unknown argument.
// The plugin closes that gap: once loaded, it takes the arguments that no
// other option claims, and where one names a pass or pipeline registered by
// now (`--attn-cpu-pipeline`, `--attn-cpu-pipeline=fold=false`) appends it
// to the textual pipeline, in command-line order. Anything else is reported
// as the unknown argument it is. The flags must follow --load-*-plugin.
// mlir-opt does not let a textual pipeline be mixed with flags of built-in
// passes (`--canonicalize`); for such mixes, write the whole pipeline with
// --pass-pipeline.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAllAttn.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
/// Appends passes named by plain flags, which mlir-opt does not know because
/// a plugin registered them, to mlir-opt's --pass-pipeline.
class PassFlagShim {
public:
  /// Installs the shim in the host's command line, once, if the host has the
  /// --pass-pipeline option of mlir-opt.
  static void install() {
    static bool installed = [] {
      cl::Option *pipeline = cl::getRegisteredOptions().lookup("pass-pipeline");
      if (pipeline)
        new PassFlagShim(*pipeline); // Lives as long as the command line.
      return true;
    }();
    (void)installed;
  }

private:
  explicit PassFlagShim(cl::Option &pipeline)
      : pipeline(pipeline),
        unclaimed(cl::Sink, cl::Hidden,
                  cl::desc("attn passes named by flags (AttnMLIRPlugin)")) {
    unclaimed.setCallback([this](const std::string &arg) { handle(arg); });
  }

  void handle(StringRef arg) {
    StringRef flag = arg;
    flag.consume_front("-");
    flag.consume_front("-");
    auto [name, options] = flag.split('=');
    // Passes known when mlir-opt built its flags never get here: a name in
    // the registry now was registered by a plugin.
    if (!PassInfo::lookup(name) && !PassPipelineInfo::lookup(name))
      fail(Twine("Unknown command line argument '") + arg + "'.  Try: '" +
           programName() + " --help'");

    // The textual pipeline belongs to the user when they set it.
    if (pipeline.getNumOccurrences() != static_cast<int>(numAppended))
      fail(Twine("'") + arg +
           "' cannot be combined with --pass-pipeline; name every pass in "
           "--pass-pipeline instead");
    if (cl::Option *passList =
            cl::getRegisteredOptions().lookup("canonicalize");
        passList && passList->getNumOccurrences())
      fail(Twine("'") + arg +
           "' (a pass from a plugin) cannot be combined with flags of "
           "built-in passes in mlir-opt; write the whole pipeline with "
           "--pass-pipeline='builtin.module(...)'");

    if (!elements.empty())
      elements += ",";
    elements += name.str();
    if (!options.empty())
      elements += ("{" + options + "}").str();
    ++numAppended;
    pipeline.addOccurrence(/*pos=*/0, "pass-pipeline",
                           "builtin.module(" + elements + ")");
  }

  [[noreturn]] static void fail(const Twine &message) {
    llvm::errs() << programName() << ": " << message << "\n";
    std::exit(1);
  }

  static std::string programName() {
    return llvm::sys::path::filename(
               llvm::sys::fs::getMainExecutable(nullptr, nullptr))
        .str();
  }

  cl::Option &pipeline;
  cl::list<std::string> unclaimed;
  std::string elements;
  unsigned numAppended = 0;
};
} // namespace

/// Registers the attn dialect, its external interface models, and the attn
/// passes and pipelines (so that a dialect plugin alone is enough).
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnMLIR", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            attn::registerAllAttnDialects(*registry);
            attn::registerAllAttnPasses();
            PassFlagShim::install();
          }};
}

/// Registers the attn passes and pipelines.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnMLIRPasses", LLVM_VERSION_STRING, []() {
            attn::registerAllAttnPasses();
            PassFlagShim::install();
          }};
}
