// Calls the runtime the way generated host code does, on a machine where
// the driver cannot be used: every call must return (NULL where it returns
// a handle) after a clean report, never crash.
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
void *mgpuMemAlloc(uint64_t size, void *stream, _Bool hostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuModuleUnload(void *module);

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
