/*===- host_runtime.c - driver.c's memory functions on the host ----------===//
 *
 * Part of the attn-mlir project.
 *
 * For the emulated artifacts (ATTN_GPU_EMULATE=1 scripts/gpu-artifacts.sh):
 * the variants compiled by --attn-gpu-emulation-pipeline run on the CPU, so
 * "device" memory is host memory. This lets bench/gpu/device_check.py run
 * end to end here (driver ABI, file formats, reference, tolerances) before a
 * GPU session spends its minutes on it.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int isHostShared) {
  (void)stream, (void)isHostShared;
  return malloc(sizeBytes ? sizeBytes : 1);
}
void mgpuMemFree(void *ptr, void *stream) {
  (void)stream;
  free(ptr);
}
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  (void)stream;
  memcpy(dst, src, sizeBytes);
}
void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  void *stream) {
  (void)stream;
  unsigned short *p = (unsigned short *)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
}
/* The emulation aborts on an error, with its message, instead of reporting
 * it. */
size_t attnCudaRuntimeTakeErrors(char *buffer, size_t size) {
  if (buffer && size)
    buffer[0] = '\0';
  return 0;
}
