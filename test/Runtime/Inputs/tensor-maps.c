// Encodes TMA tensor maps through the runtime as generated host code does
// (mgpuTensorMapEncodeTiledMemref on a ranked memref descriptor), against
// the fake driver: the encoding's arguments, and one device copy per
// distinct map.
#include <stdio.h>

#include "mgpu.h"

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} MemRef4;

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); // in order with the runtime's stderr
  // bf16 [2, 4, 77, 128] at a fake device address, offset 64 elements.
  MemRef4 k = {(void *)0x10000,
               (void *)0x10000,
               64,
               {2, 4, 77, 128},
               {4 * 77 * 128, 77 * 128, 128, 1}};
  int64_t box[4] = {1, 1, 64, 64};
  void *first = mgpuTensorMapEncodeTiledMemref(4, &k, 9, 0, 3, 2, 0, box);
  void *again = mgpuTensorMapEncodeTiledMemref(4, &k, 9, 0, 3, 2, 0, box);
  printf("same tensor and box: %s\n",
         first && first == again ? "same map" : "new map");
  int64_t rows128[4] = {1, 1, 128, 64};
  void *other = mgpuTensorMapEncodeTiledMemref(4, &k, 9, 0, 3, 2, 0, rows128);
  printf("other box: %s\n", other && other != first ? "new map" : "same map");
  // A non-contiguous innermost dim is refused before the driver is called.
  k.strides[3] = 2;
  void *strided = mgpuTensorMapEncodeTiledMemref(4, &k, 9, 0, 3, 2, 0, box);
  printf("strided: %p\n", strided);
  return 0;
}
