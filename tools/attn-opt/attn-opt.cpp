//===- attn-opt.cpp - attn-mlir optimizer driver ----------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with the attn dialect, passes and pipelines registered next to
// every upstream dialect and pass, and the test-only passes of test/lib.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAllAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::attn::test {
void registerTestSplitCountPass();
} // namespace mlir::attn::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllAttnPasses();
  mlir::attn::test::registerTestSplitCountPass();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerAllAttnDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn-mlir optimizer driver\n", registry));
}
