// One process, two devices (the fake driver's FAKE_CUDA_DEVICES=2): a module
// loaded once, as generated host code loads it in a global constructor, runs
// on whichever device a thread selects with attnCudaRuntimeSetThreadDevice;
// other threads keep the default device.
#include <pthread.h>
#include <stdio.h>

#include "attn-c/CudaRuntime.h"
#include "mgpu.h"

static void printErrors(const char *after) {
  char errors[512];
  size_t length = attnCudaRuntimeTakeErrors(errors, sizeof(errors));
  printf("after %s: [%s]\n", after, length ? errors : "");
}

static void *module;

// Allocates and launches on a stream of the thread's device.
static void *launch(void *what) {
  void *stream = mgpuStreamCreate();
  void *ptr = mgpuMemAlloc(64, stream, 0);
  mgpuLaunchKernel(mgpuModuleGetFunction(module, "k"), 1, 1, 1, 128, 1, 1, 0,
                   stream, NULL, NULL, 0);
  mgpuStreamSynchronize(stream);
  printf("%s: pointer on device %d\n", (const char *)what,
         attnCudaRuntimePointerDevice(ptr));
  printErrors((const char *)what);
  mgpuMemFree(ptr, stream);
  mgpuStreamDestroy(stream);
  return NULL;
}

int main(void) {
  static const char blob[] = "a cubin";
  module = mgpuModuleLoad((void *)blob, sizeof(blob));
  printErrors("the load");
  launch("device 0");
  printf("previous: %d\n", attnCudaRuntimeSetThreadDevice(1));
  launch("device 1");
  launch("device 1 again");

  // Another thread is on the default device, whatever this one selected.
  pthread_t thread;
  pthread_create(&thread, NULL, launch, "another thread");
  pthread_join(thread, NULL);

  printf("previous: %d\n", attnCudaRuntimeSetThreadDevice(2));
  mgpuStreamCreate();
  printErrors("selecting a device that is not there");
  printf("pointer on device %d\n", attnCudaRuntimePointerDevice(blob));
  printErrors("asking for a host pointer");

  printf("previous: %d\n", attnCudaRuntimeSetThreadDevice(-1));
  mgpuModuleUnload(module);
  printErrors("the unload");
  void *ptr = mgpuMemAlloc(64, NULL, 0);
  printf("after the unload: pointer on device %d\n",
         attnCudaRuntimePointerDevice(ptr));
  mgpuMemFree(ptr, NULL);
  printErrors("the unload and an allocation");
  return 0;
}
