// The runtime functions that generated host code calls, as the test
// programs in this folder call them.
#ifndef ATTN_TEST_RUNTIME_MGPU_H
#define ATTN_TEST_RUNTIME_MGPU_H

#include <stddef.h>
#include <stdint.h>

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
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor,
                                     int64_t dataType, int64_t interleave,
                                     int64_t swizzle, int64_t l2Promotion,
                                     int64_t oobFill, int64_t *boxDims);

#endif // ATTN_TEST_RUNTIME_MGPU_H
