// A compiler that embeds attn-mlir through its installed CMake package:
// it registers the attn dialect next to the upstream dialects it needs,
// parses a module, and runs attn passes by name or a pipeline through its
// C++ builder.
//
//   attn-consumer FILE [PASSES]   runs PASSES, e.g. canonicalize,attn-decompose
//                                 (default: attn-check-scale)
//   attn-consumer FILE --cpu      runs buildAttnCPUPipeline
#include "attn/InitAllAttn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: attn-consumer FILE [PASSES | --cpu]\n";
    return 2;
  }
  llvm::StringRef passes = argc > 2 ? argv[2] : "attn-check-scale";

  // The attn dialect with what its passes need (arith, func, linalg,
  // tensor, ...), the attn passes and pipelines by name, and the upstream
  // passes this compiler wants to name (canonicalize, cse, ...).
  mlir::DialectRegistry registry;
  mlir::attn::registerAllAttnDialects(registry);
  mlir::attn::registerAllAttnPasses();
  mlir::registerTransformsPasses();
  mlir::MLIRContext context(registry);

  // Diagnostics (errors, warnings, remarks) print with their source line.
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(argv[1], &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  auto pm = mlir::PassManager::on<mlir::ModuleOp>(&context);
  if (passes == "--cpu")
    mlir::attn::buildAttnCPUPipeline(pm, mlir::attn::AttnCPUPipelineOptions());
  else if (mlir::failed(mlir::parsePassPipeline(passes, pm)))
    return 1;
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
