// A fake CUDA driver for testing libattn_cuda_runtime.so without a GPU:
// contexts and device memory on the host, and the calls that matter to the
// test printed with their arguments. Everything else fails with
// CUDA_ERROR_NOT_SUPPORTED. Names are those the runtime resolves (cuda.h's
// _v2 versions); only the argument types the runtime passes matter here.
// FAKE_CUDA_FAIL=NAME makes the function NAME (cuLaunchKernel, cuMemcpyAsync,
// cuStreamSynchronize) fail as an illegal address would, or cuModuleLoadData
// as a binary for another GPU. FAKE_CUDA_DEVICES=N (at most 8) gives N
// devices, each with its own context, modules and streams: module loads,
// allocations and launches then print the current context's device, and a
// launch of a function or on a stream of another device's context fails,
// as the driver refuses it.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_SUPPORTED 801
#define ILLEGAL_ADDRESS 700
#define NO_BINARY_FOR_GPU 209
#define INVALID_VALUE 1
#define INVALID_DEVICE 101
#define INVALID_CONTEXT 201
#define MAX_DEVICES 8
#define STREAM_NUMBER(stream) ((int)((uintptr_t)(stream)&0xfff))

static int failing(const char *name) {
  const char *fail = getenv("FAKE_CUDA_FAIL");
  return fail && strcmp(fail, name) == 0;
}

// Line-buffered, so that its lines interleave with the caller's.
__attribute__((constructor)) static void lineBuffered(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
}

int cuInit(unsigned flags) { return 0; }
int cuGetErrorName(int error, const char **name) {
  *name = error == NOT_SUPPORTED       ? "CUDA_ERROR_NOT_SUPPORTED"
          : error == ILLEGAL_ADDRESS   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : error == NO_BINARY_FOR_GPU ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
          : error == INVALID_VALUE     ? "CUDA_ERROR_INVALID_VALUE"
          : error == INVALID_DEVICE    ? "CUDA_ERROR_INVALID_DEVICE"
          : error == INVALID_CONTEXT   ? "CUDA_ERROR_INVALID_CONTEXT"
                                       : "FAKE_ERROR";
  return 0;
}
int cuGetErrorString(int error, const char **text) {
  *text = "fake driver";
  return 0;
}
static int deviceCount(void) {
  const char *count = getenv("FAKE_CUDA_DEVICES");
  return count ? atoi(count) : 1;
}
int cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount() || ordinal >= MAX_DEVICES)
    return INVALID_DEVICE;
  *device = ordinal;
  return 0;
}
int cuDeviceGetCount(int *count) {
  *count = deviceCount();
  return 0;
}
static int contexts[MAX_DEVICES];
static int *current;
int cuDevicePrimaryCtxRetain(void **context, int device) {
  *context = &contexts[device];
  return 0;
}
// The current context's device; -1 without one.
static int currentDevice(void) { return current ? current - contexts : -1; }
// " device=N" with FAKE_CUDA_DEVICES, else nothing: the tests of one device
// see the lines they always saw.
static void printDevice(void) {
  if (getenv("FAKE_CUDA_DEVICES"))
    printf(" device=%d", currentDevice());
}
int cuCtxGetCurrent(void **context) {
  *context = current;
  return 0;
}
int cuCtxSetCurrent(void *context) {
  current = (int *)context;
  return 0;
}
int cuCtxSynchronize(void) {
  printf("cuCtxSynchronize\n");
  return 0;
}
// Memory pools are supported unless FAKE_CUDA_NO_MEMORY_POOLS is set; no
// other attribute is known.
#define MEMORY_POOLS_SUPPORTED 115
int cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (attribute != MEMORY_POOLS_SUPPORTED)
    return NOT_SUPPORTED;
  *value = getenv("FAKE_CUDA_NO_MEMORY_POOLS") ? 0 : 1;
  return 0;
}

static void printList(const char *name, const void *values, unsigned n,
                      int wide) {
  printf(" %s=", name);
  for (unsigned i = 0; i < n; ++i)
    printf("%s%llu", i ? "," : "",
           wide ? (unsigned long long)((const uint64_t *)values)[i]
                : (unsigned long long)((const uint32_t *)values)[i]);
}

// Prints the encoding and fills the 128-byte map with its arguments, so
// that different arguments give different maps.
int cuTensorMapEncodeTiled(void *map, int dataType, unsigned rank,
                           void *address, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box,
                           const uint32_t *elementStrides, int interleave,
                           int swizzle, int l2Promotion, int oobFill) {
  printf("cuTensorMapEncodeTiled type=%d rank=%u address=%p", dataType, rank,
         address);
  printList("dims", dims, rank, 1);
  printList("strides", strides, rank - 1, 1);
  printList("box", box, rank, 0);
  printList("elementStrides", elementStrides, rank, 0);
  printf(" interleave=%d swizzle=%d l2=%d oob=%d\n", interleave, swizzle,
         l2Promotion, oobFill);
  uint64_t words[16] = {(uint64_t)(uintptr_t)address,
                        (uint64_t)dataType | (uint64_t)swizzle << 8 |
                            (uint64_t)l2Promotion << 16 |
                            (uint64_t)oobFill << 24};
  for (unsigned i = 0; i < rank; ++i) {
    words[2 + i] = dims[i];
    words[7 + i] = (uint64_t)box[i] << 32 | (i ? strides[i - 1] : 0);
  }
  memcpy(map, words, sizeof(words));
  return 0;
}

// The device of each live allocation, for cuPointerGetAttribute.
static struct {
  uint64_t ptr;
  int device;
} allocations[256];
static uint64_t allocate(size_t bytes) {
  uint64_t ptr = (uint64_t)(uintptr_t)malloc(bytes);
  for (int i = 0; i < 256; ++i)
    if (!allocations[i].ptr) {
      allocations[i].ptr = ptr;
      allocations[i].device = currentDevice();
      break;
    }
  return ptr;
}
static void release(uint64_t ptr) {
  for (int i = 0; i < 256; ++i)
    if (allocations[i].ptr == ptr)
      allocations[i].ptr = 0;
  free((void *)(uintptr_t)ptr);
}
#define POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
int cuPointerGetAttribute(void *data, int attribute, uint64_t ptr) {
  for (int i = 0; i < 256; ++i)
    if (ptr && allocations[i].ptr == ptr &&
        attribute == POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
      *(int *)data = allocations[i].device;
      return 0;
    }
  return INVALID_VALUE;
}

int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  printf("cuMemAlloc %zu", bytes);
  printDevice();
  printf("\n");
  *ptr = allocate(bytes);
  return 0;
}
int cuMemcpy(uint64_t dst, uint64_t src, size_t bytes) {
  printf("cuMemcpy %zu\n", bytes);
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  printf("cuMemcpyAsync %zu stream=%d\n", bytes, STREAM_NUMBER(stream));
  if (failing("cuMemcpyAsync"))
    return ILLEGAL_ADDRESS;
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
int cuMemsetD16Async(uint64_t dst, unsigned short value, size_t count,
                     void *stream) {
  printf("cuMemsetD16Async %zu stream=%d\n", count, STREAM_NUMBER(stream));
  for (size_t i = 0; i < count; ++i)
    ((unsigned short *)(uintptr_t)dst)[i] = value;
  return 0;
}
int cuMemFree_v2(uint64_t ptr) {
  printf("cuMemFree\n");
  release(ptr);
  return 0;
}

// Stream-ordered allocation: printed with the stream's number.
static int pool;
int cuMemPoolCreate(void **out, const void *props) {
  printf("cuMemPoolCreate\n");
  *out = &pool;
  return 0;
}
int cuMemPoolSetAttribute(void *p, int attribute, const uint64_t *value) {
  printf("cuMemPoolSetAttribute %d %llu\n", attribute,
         (unsigned long long)*value);
  return 0;
}
int cuMemAllocFromPoolAsync(uint64_t *ptr, size_t bytes, void *p,
                            void *stream) {
  printf("cuMemAllocFromPoolAsync %zu stream=%d", bytes, STREAM_NUMBER(stream));
  printDevice();
  printf("\n");
  *ptr = allocate(bytes);
  return 0;
}
int cuMemFreeAsync(uint64_t ptr, void *stream) {
  printf("cuMemFreeAsync stream=%d\n", STREAM_NUMBER(stream));
  release(ptr);
  return 0;
}

// Modules, functions and streams are fake handles, each of the device whose
// context made it; launches are printed.
static int modules[MAX_DEVICES], functions[MAX_DEVICES], streams;
static int streamDevices[0x1000];
// Whether STREAM is one of the streams made here (not the legacy stream).
static int isFakeStream(void *stream) {
  return (uintptr_t)stream > 0x1000 && (uintptr_t)stream <= 0x1fff;
}
int cuModuleLoadData(void **out, const void *image) {
  if (getenv("FAKE_CUDA_DEVICES")) {
    printf("cuModuleLoadData");
    printDevice();
    printf("\n");
  }
  if (failing("cuModuleLoadData"))
    return NO_BINARY_FOR_GPU;
  *out = &modules[currentDevice()];
  return 0;
}
int cuModuleUnload(void *mod) {
  if (getenv("FAKE_CUDA_DEVICES")) {
    printf("cuModuleUnload");
    printDevice();
    printf("\n");
  }
  return (int *)mod - modules == currentDevice() ? 0 : INVALID_CONTEXT;
}
int cuModuleGetFunction(void **out, void *mod, const char *name) {
  *out = &functions[(int *)mod - modules];
  return 0;
}
int cuFuncSetAttribute(void *f, int attribute, int value) {
  printf("cuFuncSetAttribute %d %d\n", attribute, value);
  return 0;
}
int cuStreamCreate(void **stream, unsigned flags) {
  *stream = (void *)(uintptr_t)(0x1000 + ++streams);
  streamDevices[streams & 0xfff] = currentDevice();
  printf("cuStreamCreate stream=%d\n", STREAM_NUMBER(*stream));
  return 0;
}
int cuStreamSynchronize(void *stream) {
  printf("cuStreamSynchronize\n");
  return failing("cuStreamSynchronize") ? ILLEGAL_ADDRESS : 0;
}
int cuStreamDestroy_v2(void *stream) {
  printf("cuStreamDestroy\n");
  return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned smem, void *stream,
                   void **params, void **extra) {
  printf("cuLaunchKernel grid=%u,%u,%u block=%u smem=%u stream=%d", gx, gy, gz,
         bx, smem, STREAM_NUMBER(stream));
  printDevice();
  // FAKE_CUDA_LAUNCH_PARAMS=N: the first N parameters, as 64-bit words.
  const char *count = getenv("FAKE_CUDA_LAUNCH_PARAMS");
  for (int i = 0, n = count ? atoi(count) : 0; i < n; ++i)
    printf("%s%#llx", i ? "," : " params=",
           (unsigned long long)*(const uint64_t *)params[i]);
  printf("\n");
  // The function and the stream must be the current context's.
  if ((int *)f - functions != currentDevice() ||
      (isFakeStream(stream) &&
       streamDevices[STREAM_NUMBER(stream)] != currentDevice()))
    return INVALID_CONTEXT;
  return failing("cuLaunchKernel") ? ILLEGAL_ADDRESS : 0;
}
// Events are numbered in creation order, and the time up to an event is a
// quarter of a millisecond per number: each launch's time says which it was.
static uintptr_t events;
static int eventDevices[0x1000];
int cuEventCreate(void **event, unsigned flags) {
  printf("cuEventCreate flags=%u", flags);
  printDevice();
  printf("\n");
  *event = (void *)++events;
  eventDevices[events & 0xfff] = currentDevice();
  return 0;
}
// The event and the stream must be of one context.
int cuEventRecord(void *event, void *stream) {
  return isFakeStream(stream) && eventDevices[(uintptr_t)event & 0xfff] !=
                                     streamDevices[STREAM_NUMBER(stream)]
             ? INVALID_CONTEXT
             : 0;
}
int cuEventDestroy_v2(void *event) { return 0; }
int cuEventElapsedTime_v2(float *ms, void *start, void *stop) {
  *ms = 0.25f * (float)(uintptr_t)stop;
  return 0;
}

#define UNSUPPORTED(fn)                                                        \
  int fn(void) { return NOT_SUPPORTED; }
UNSUPPORTED(cuModuleLoadDataEx)
UNSUPPORTED(cuLaunchKernelEx)
UNSUPPORTED(cuStreamWaitEvent)
UNSUPPORTED(cuEventSynchronize)
UNSUPPORTED(cuMemAllocManaged)
UNSUPPORTED(cuMemsetD32Async)
UNSUPPORTED(cuMemHostRegister_v2)
UNSUPPORTED(cuMemHostUnregister)
