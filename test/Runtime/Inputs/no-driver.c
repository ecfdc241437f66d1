// Calls the runtime the way generated host code does, on a machine where
// the driver cannot be used: every call must return (NULL where it returns
// a handle) after a clean report, never crash, and a caller that asks
// (attnCudaRuntimeTakeErrors) learns why each call it made failed.
#include <stdio.h>

#include "attn-c/CudaRuntime.h"
#include "mgpu.h"

static void printErrors(const char *after) {
  char errors[512];
  size_t length = attnCudaRuntimeTakeErrors(errors, sizeof(errors));
  printf("errors after %s: %zu [%s]\n", after, length, length ? errors : "");
}

int main(void) {
  static const char blob[] = "not a cubin";
  void *module = mgpuModuleLoad((void *)blob, sizeof(blob));
  printErrors("the first call");
  void *function = mgpuModuleGetFunction(module, "k");
  void *stream = mgpuStreamCreate();
  printErrors("a later call");
  printErrors("nothing");
  void *ptr = mgpuMemAlloc(1024, stream, 0);
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 64 * 1024, stream, NULL, NULL,
                   0);
  mgpuStreamSynchronize(stream);
  mgpuMemFree(ptr, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  printf("module=%p function=%p stream=%p ptr=%p\n", module, function, stream,
         ptr);
  // A one-byte buffer takes the length and an empty string.
  char tiny[1] = {'x'};
  size_t length = mgpuStreamCreate() ? 0 : attnCudaRuntimeTakeErrors(tiny, 1);
  printf("truncated: %d %d\n", length > 0, tiny[0] == '\0');
  return 0;
}
