// A program that goes on after its kernel's module failed to load, as
// generated host code does (the load is a global constructor): every launch
// of the missing kernel is an error of its own, for the caller to take.
#include <stdio.h>

#include "attn-c/CudaRuntime.h"
#include "mgpu.h"

static void printErrors(const char *after) {
  char errors[512];
  size_t length = attnCudaRuntimeTakeErrors(errors, sizeof(errors));
  printf("after %s: [%s]\n", after, length ? errors : "");
}

int main(void) {
  static const char blob[] = "a cubin for another GPU";
  void *module = mgpuModuleLoad((void *)blob, sizeof(blob));
  printErrors("the load");
  void *function = mgpuModuleGetFunction(module, "k");
  void *stream = mgpuStreamCreate();
  for (int i = 0; i < 2; ++i) {
    mgpuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, NULL, NULL, 0);
    printErrors("a launch");
  }
  mgpuStreamDestroy(stream);
  return 0;
}
