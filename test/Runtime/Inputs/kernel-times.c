// Launches kernels through the runtime as generated host code does, against
// the fake driver: with ATTN_CUDA_KERNEL_TIMES set, each launch's time is
// written when its stream is synchronized or destroyed.
#include <stdio.h>

#include "mgpu.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); // in order with the runtime's stderr
  static const char blob[] = "fake cubin";
  void *module = mgpuModuleLoad((void *)blob, sizeof(blob));
  void *function = mgpuModuleGetFunction(module, "k");
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, NULL, NULL, 0);
  mgpuLaunchKernel(function, 2, 1, 1, 128, 1, 1, 0, stream, NULL, NULL, 0);
  mgpuStreamSynchronize(stream);
  printf("synchronized\n");
  // Not synchronized: its time is written when the stream is destroyed.
  mgpuLaunchKernel(function, 3, 1, 1, 128, 1, 1, 0, stream, NULL, NULL, 0);
  mgpuStreamDestroy(stream);
  printf("destroyed\n");
  return 0;
}
