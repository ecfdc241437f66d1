// Calls the runtime the way generated host code does, on a machine where
// the driver cannot be used: every call must return (NULL where it returns
// a handle) after a clean report, never crash.
#include <stdio.h>

#include "mgpu.h"

int main(void) {
  static const char blob[] = "not a cubin";
  void *module = mgpuModuleLoad((void *)blob, sizeof(blob));
  void *function = mgpuModuleGetFunction(module, "k");
  void *stream = mgpuStreamCreate();
  void *ptr = mgpuMemAlloc(1024, stream, 0);
  mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 64 * 1024, stream, NULL, NULL,
                   0);
  mgpuStreamSynchronize(stream);
  mgpuMemFree(ptr, stream);
  mgpuStreamDestroy(stream);
  mgpuModuleUnload(module);
  printf("module=%p function=%p stream=%p ptr=%p\n", module, function, stream,
         ptr);
  return 0;
}
