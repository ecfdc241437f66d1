//===- RegisterEverything.cpp - register all of attn from C ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn-c/RegisterEverything.h"

#include "attn/InitAllAttn.h"

#include "mlir/CAPI/IR.h"

void mlirAttnRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::attn::registerAllAttnDialects(*unwrap(registry));
}

void mlirAttnRegisterAllPasses(void) { mlir::attn::registerAllAttnPasses(); }
