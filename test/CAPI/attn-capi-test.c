//===- attn-capi-test.c - a C program on libAttnMLIRCAPI.so ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

// RUN: attn-capi-test 2>&1 | FileCheck %s

// CHECK lines stay whole:
// clang-format off

#include "attn-c/Dialects.h"
#include "attn-c/Passes.h"
#include "attn-c/RegisterEverything.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir-c/Support.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirStringRef str(const char *s) {
  return mlirStringRefCreateFromCString(s);
}

/// Prints every diagnostic as "<severity> at <location>: <message>".
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  static const char *severities[] = {"error", "warning", "note", "remark"};
  printf("%s at ", severities[mlirDiagnosticGetSeverity(diagnostic)]);
  mlirLocationPrint(mlirDiagnosticGetLocation(diagnostic), printToStdout, NULL);
  printf(": ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

/// A context with attn, what its passes need, and LLVM IR translations.
static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirAttnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

static void testDialectHandle(void) {
  printf("@dialect_handle\n");
  MlirStringRef ns =
      mlirDialectHandleGetNamespace(mlirGetDialectHandle__attn__());
  printf("namespace: %.*s\n", (int)ns.length, ns.data);
  // CHECK-LABEL: @dialect_handle
  // CHECK: namespace: attn
}

/// Parses a function with q, k, v and init arguments that returns init, and
/// returns it (the module's only op).
static MlirOperation parseSkeleton(MlirModule module) {
  return mlirBlockGetFirstOperation(mlirModuleGetBody(module));
}

static const char *kSkeleton =
    "func.func @attention(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>,\n"
    "                     %v: tensor<1x2x5x8xf32>, %init: "
    "tensor<1x4x3x8xf32>)\n"
    "    -> tensor<1x4x3x8xf32> {\n"
    "  return %init : tensor<1x4x3x8xf32>\n"
    "}\n";

static void testBuilder(MlirContext ctx) {
  printf("@builder\n");
  MlirModule module = mlirModuleCreateParse(ctx, str(kSkeleton));
  MlirOperation func = parseSkeleton(module);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  MlirOperation ret = mlirBlockGetTerminator(body);

  MlirValue none = {NULL};
  MlirOperation attention = mlirAttnAttentionOpCreate(
      mlirOperationGetLocation(ret), mlirBlockGetArgument(body, 0),
      mlirBlockGetArgument(body, 1), mlirBlockGetArgument(body, 2), none, none,
      mlirBlockGetArgument(body, 3), 0.353553385f, MlirAttnCausalBottomRight);
  mlirBlockInsertOwnedOperationBefore(body, ret, attention);
  mlirOperationSetOperand(ret, 0, mlirOperationGetResult(attention, 0));

  printf("verifies: %d\n", mlirOperationVerify(mlirModuleGetOperation(module)));
  printf("is attention: %d %d\n", mlirOperationIsAAttnAttentionOp(attention),
         mlirOperationIsAAttnAttentionOp(ret));
  printf("scale: %.6f causal: %d\n", mlirAttnAttentionOpGetScale(attention),
         (int)mlirAttnAttentionOpGetCausal(attention));
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirModuleDestroy(module);
  // CHECK-LABEL: @builder
  // CHECK: verifies: 1
  // CHECK: is attention: 1 0
  // CHECK: scale: 0.353553 causal: 2
  // CHECK: %[[R:.*]] = attn.attention ins(%arg0, %arg1, %arg2 : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) outs(%arg3 : tensor<1x4x3x8xf32>) scale = 0.353553385 causal = bottom_right -> tensor<1x4x3x8xf32>
  // CHECK: return %[[R]]
}

static void testBuilderRefusesInvalidOperands(MlirContext ctx) {
  printf("@builder_invalid\n");
  MlirModule module = mlirModuleCreateParse(ctx, str(kSkeleton));
  MlirBlock body =
      mlirRegionGetFirstBlock(mlirOperationGetRegion(parseSkeleton(module), 0));
  // k passed as the query: Hq = 2 heads, init has 4.
  MlirValue none = {NULL};
  MlirOperation attention = mlirAttnAttentionOpCreate(
      mlirOperationGetLocation(mlirBlockGetTerminator(body)),
      mlirBlockGetArgument(body, 1), mlirBlockGetArgument(body, 1),
      mlirBlockGetArgument(body, 2), none, none, mlirBlockGetArgument(body, 3),
      1.0f, MlirAttnCausalNone);
  printf("null: %d\n", mlirOperationIsNull(attention));
  mlirModuleDestroy(module);
  // CHECK-LABEL: @builder_invalid
  // CHECK: error at loc("-":4:3): 'attn.attention' op init dim 1 (Hq) is 4 but q dim 1 is 2
  // CHECK: null: 1
}

static const char *kOnMemrefs =
    "func.func @attention(%q: memref<1x1x3x2xf32>, %k: memref<1x1x2x2xf32>,\n"
    "                     %v: memref<1x1x2x2xf32>, %out: memref<1x1x3x2xf32>)\n"
    "    attributes {llvm.emit_c_interface} {\n"
    "  attn.attention ins(%q, %k, %v : memref<1x1x3x2xf32>, "
    "memref<1x1x2x2xf32>, memref<1x1x2x2xf32>)\n"
    "    outs(%out : memref<1x1x3x2xf32>) scale = 1.0 causal = bottom_right\n"
    "  return\n"
    "}\n";

static const char *kOptionalOperands =
    "func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x5x8xf32>,\n"
    "                     %m: tensor<1x1x4x5xi1>, %b: tensor<1x2x1x5xf32>,\n"
    "                     %o: tensor<1x2x4x8xf32>, %p: index, %c: index)\n"
    "    -> tensor<1x2x4x8xf32> {\n"
    "  %r = attn.attention ins(%q, %k, %k : tensor<1x2x4x8xf32>, "
    "tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>)\n"
    "    mask(%m : tensor<1x1x4x5xi1>) bias(%b : tensor<1x2x1x5xf32>)\n"
    "    outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 causal = bottom_right\n"
    "    causal_period(%p) causal_offset(%c) -> tensor<1x2x4x8xf32>\n"
    "  return %r : tensor<1x2x4x8xf32>\n"
    "}\n";

/// Whether `v` is block argument `i` of `body`.
static int isArgument(MlirValue v, MlirBlock body, int i) {
  return !mlirValueIsNull(v) &&
         mlirValueEqual(v, mlirBlockGetArgument(body, (intptr_t)i));
}

static void testOptionalOperands(MlirContext ctx) {
  printf("@optional_operands\n");
  MlirModule module = mlirModuleCreateParse(ctx, str(kOptionalOperands));
  MlirOperation func = parseSkeleton(module);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  MlirOperation op = mlirBlockGetFirstOperation(body);
  printf("mask: %d bias: %d period: %d offset: %d\n",
         isArgument(mlirAttnAttentionOpGetMask(op), body, 2),
         isArgument(mlirAttnAttentionOpGetBias(op), body, 3),
         isArgument(mlirAttnAttentionOpGetCausalPeriod(op), body, 5),
         isArgument(mlirAttnAttentionOpGetCausalOffset(op), body, 6));
  mlirModuleDestroy(module);

  // An op without them: null values.
  module = mlirModuleCreateParse(ctx, str(kOnMemrefs));
  op = mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(
      mlirOperationGetRegion(parseSkeleton(module), 0)));
  printf("null: %d %d %d %d\n",
         mlirValueIsNull(mlirAttnAttentionOpGetMask(op)),
         mlirValueIsNull(mlirAttnAttentionOpGetBias(op)),
         mlirValueIsNull(mlirAttnAttentionOpGetCausalPeriod(op)),
         mlirValueIsNull(mlirAttnAttentionOpGetCausalOffset(op)));
  mlirModuleDestroy(module);
  // CHECK-LABEL: @optional_operands
  // CHECK: mask: 1 bias: 1 period: 1 offset: 1
  // CHECK: null: 1 1 1 1
}

static void testPasses(MlirContext ctx) {
  printf("@passes\n");
  MlirModule module = mlirModuleCreateParse(ctx, str(kOnMemrefs));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  // A textual pipeline (by the names mlirAttnRegisterAllPasses registered),
  // a pass object, and pipeline elements appended by name.
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, str("builtin.module(attn-check-scale)"), printToStdout, NULL);
  mlirOpPassManagerAddOwnedPass(opm, mlirCreateAttnAttnDecompose());
  MlirLogicalResult added = mlirOpPassManagerAddPipeline(
      opm, str("canonicalize"), printToStdout, NULL);
  printf("parsed: %d %d\n", mlirLogicalResultIsSuccess(parsed),
         mlirLogicalResultIsSuccess(added));
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("ran: %d\n", mlirLogicalResultIsSuccess(ran));
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  // CHECK-LABEL: @passes
  // CHECK: parsed: 1 1
  // CHECK: warning at loc("-":4:3): suspicious attention scale 1: scores are not scaled although Dqk = 2
  // CHECK: ran: 1
  // CHECK-NOT: attn.attention
  // CHECK: linalg.generic
  // CHECK: bufferization.materialize_in_destination
}

/// A ranked memref descriptor of rank 4, as the LLVM lowering lays it out.
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
} MemRef4xF32;

static MemRef4xF32 memref(float *data, int64_t lq, int64_t d) {
  MemRef4xF32 m = {data, data, 0, {1, 1, lq, d}, {lq * d, lq * d, d, 1}};
  return m;
}

static void testExecute(MlirContext ctx) {
  printf("@execute\n");
  MlirModule module = mlirModuleCreateParse(ctx, str(kOnMemrefs));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirAttnBuildCPUPipeline(mlirPassManagerGetAsOpPassManager(pm),
                           /*fold=*/true);
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    printf("pipeline failed\n");
    exit(1);
  }
  mlirPassManagerDestroy(pm);

  MlirExecutionEngine jit = mlirExecutionEngineCreate(
      module, /*optLevel=*/2, 0, NULL, /*enableObjectDump=*/false,
      /*enablePIC=*/false);
  if (mlirExecutionEngineIsNull(jit)) {
    printf("no execution engine\n");
    exit(1);
  }
  mlirExecutionEngineInitialize(jit);

  // The worked example of the README: row 0 sees no key, row 1 key 0, row 2
  // both keys with equal scores.
  float q[] = {1, 0, 0, 1, 1, 1}, k[] = {1, 0, 0, 1}, v[] = {1, 2, 3, 4};
  float out[6];
  memset(out, 0xff, sizeof(out));
  MemRef4xF32 mq = memref(q, 3, 2), mk = memref(k, 2, 2), mv = memref(v, 2, 2),
              mo = memref(out, 3, 2);
  // The C interface of @attention (llvm.emit_c_interface) takes pointers to
  // descriptors; the packed call takes a pointer to each of those.
  MemRef4xF32 *pq = &mq, *pk = &mk, *pv = &mv, *po = &mo;
  void *args[] = {&pq, &pk, &pv, &po};
  MlirLogicalResult invoked =
      mlirExecutionEngineInvokePacked(jit, str("attention"), args);
  printf("invoked: %d\n", mlirLogicalResultIsSuccess(invoked));
  for (int i = 0; i < 3; ++i)
    printf("row %d: %g %g\n", i, out[2 * i], out[2 * i + 1]);
  mlirExecutionEngineDestroy(jit);
  mlirModuleDestroy(module);
  // CHECK-LABEL: @execute
  // CHECK: invoked: 1
  // CHECK-NEXT: row 0: 0 0
  // CHECK-NEXT: row 1: 1 2
  // CHECK-NEXT: row 2: 2 3
}

int main(void) {
  // Pass names: attn's, and upstream's (canonicalize, ...).
  mlirAttnRegisterAllPasses();
  mlirRegisterAllPasses();
  MlirContext ctx = createContext();
  testDialectHandle();
  testBuilder(ctx);
  testBuilderRefusesInvalidOperands(ctx);
  testOptionalOperands(ctx);
  testPasses(ctx);
  testExecute(ctx);
  mlirContextDestroy(ctx);
  return 0;
}
