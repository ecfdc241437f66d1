// Streams through the runtime as generated host code makes them (one per
// host-side wait, destroyed after it), against the fake driver.
#include <stdio.h>

#include "mgpu.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); // in order with the runtime's stderr
  void *a = mgpuStreamCreate();
  void *b = mgpuStreamCreate();
  mgpuStreamDestroy(a);
  printf("destroyed a\n");
  void *c = mgpuStreamCreate();
  printf("reused a: %d\n", c == a);
  mgpuStreamDestroy(b);
  mgpuStreamDestroy(c);
  // More streams alive at once than are kept idle: the excess is destroyed.
  void *many[40];
  for (int i = 0; i < 40; ++i)
    many[i] = mgpuStreamCreate();
  printf("made 40\n");
  for (int i = 0; i < 40; ++i)
    mgpuStreamDestroy(many[i]);
  printf("destroyed 40\n");
  return 0;
}
