// Device memory through the runtime as generated host code allocates it
// (gpu.alloc / gpu.dealloc on a stream), against the fake driver.
#include <stdio.h>

#include "mgpu.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); // in order with the runtime's stderr
  void *stream = mgpuStreamCreate();
  void *a = mgpuMemAlloc(256, stream, 0);
  void *b = mgpuMemAlloc(512, stream, 0);
  printf("allocated\n");
  mgpuMemFree(a, stream);
  printf("freed on the stream\n");
  // Freed without a stream: after all the device's work.
  mgpuMemFree(b, NULL);
  printf("freed without a stream\n");
  // Without a stream, not stream-ordered: cuMemAlloc, and cuMemFree.
  void *c = mgpuMemAlloc(64, NULL, 0);
  mgpuMemFree(c, stream);
  printf("unordered\n");
  void *d = mgpuMemAlloc(128, stream, 0);
  mgpuMemFree(d, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  printf("done\n");
  return 0;
}
