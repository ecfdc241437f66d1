// Launches kernels through the runtime as generated host code does, against
// the fake driver: with ATTN_CUDA_KERNEL_TIMES set, each launch's time is
// written when its stream is synchronized or destroyed.
#include <stdint.h>
#include <stdio.h>

void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra, size_t n);
void *mgpuStreamCreate(void);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);

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
