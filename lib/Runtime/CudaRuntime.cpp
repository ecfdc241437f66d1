//===- CudaRuntime.cpp - mgpu* runtime on the CUDA driver API -------------===//
//
// libattn_cuda_runtime.so: the functions that MLIR's GPU lowering
// (gpu-to-llvm, the gpu.launch_func translation, nvgpu-to-nvvm) calls
// (mgpuModuleLoad, mgpuLaunchKernel, mgpuMemAlloc, ...), implemented on the
// CUDA driver API.
//
// The driver (libcuda.so.1, or $ATTN_CUDA_DRIVER) is opened with dlopen on
// the first call, not linked: the library loads on machines without a
// driver, and the first call there reports that no driver was found instead
// of the program failing to start. Every failing driver call is reported on
// stderr with the call's text and CUDA's error name and string, and kept for
// attnCudaRuntimeTakeErrors (attn-c/CudaRuntime.h), so that callers without
// a terminal (Python, a server) can fail the call that met it.
//
//===----------------------------------------------------------------------===//

#include "attn-c/CudaRuntime.h"

#include <cuda.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#define ATTN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The driver functions used, by their cuda.h names. cuda.h maps some names
// to versioned symbols (cuMemAlloc -> cuMemAlloc_v2); the macros below
// expand the names before use, so the table holds the versioned functions
// and looks them up under their versioned symbol names.
#define ATTN_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamDestroy)                                                           \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemPoolCreate)                                                           \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemAllocFromPoolAsync)                                                   \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpy)                                                                  \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuPointerGetAttribute)                                                     \
  X(cuTensorMapEncodeTiled)

#define ATTN_STR2(x) #x
#define ATTN_STR(x) ATTN_STR2(x)

struct Driver {
#define ATTN_DECLARE(fn) decltype(&::fn) fn = nullptr;
  ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_DECLARE)
#undef ATTN_DECLARE
};

Driver driver;

// The errors reported on this thread since attnCudaRuntimeTakeErrors last
// took them, one per line (bounded: a runaway loop of failures must not
// grow it without end).
thread_local std::string pendingErrors;
constexpr size_t kMaxPendingErrors = 16 * 1024;

void keepError(const std::string &line) {
  if (pendingErrors.size() >= kMaxPendingErrors)
    return;
  if (!pendingErrors.empty())
    pendingErrors += '\n';
  pendingErrors.append(line, 0, kMaxPendingErrors - pendingErrors.size());
}

std::string formatLine(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length <= 0)
    return std::string();
  std::string line(size_t(length) + 1, '\0');
  std::vsnprintf(line.data(), line.size(), format, args);
  line.resize(size_t(length));
  return line;
}

// Prints one error line on stderr, prefixed with the library's name, and
// keeps it for attnCudaRuntimeTakeErrors. Returns the line.
__attribute__((format(printf, 1, 2))) std::string
reportError(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string line = formatLine(format, args);
  va_end(args);
  std::fprintf(stderr, "attn_cuda_runtime: %s\n", line.c_str());
  keepError(line);
  return line;
}

// Reports that CALL, made in WHERE, failed with RESULT: the error's name and
// text from the driver, or, where the driver cannot say (the toolkit's stub
// libcuda, for one), from a few known codes. Returns the lines reported.
std::string report(const char *where, const char *call, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName && driver.cuGetErrorName(result, &name) != 0)
    name = nullptr;
  if (driver.cuGetErrorString && driver.cuGetErrorString(result, &text) != 0)
    text = nullptr;
  if (!name) {
    switch (result) {
    case CUDA_ERROR_STUB_LIBRARY:
      name = "CUDA_ERROR_STUB_LIBRARY";
      text = "the CUDA driver is a stub library, not the real driver";
      break;
    case CUDA_ERROR_NO_DEVICE:
      name = "CUDA_ERROR_NO_DEVICE";
      text = "no CUDA-capable device is detected";
      break;
    default:
      break;
    }
  }
  std::string lines = reportError("%s: %s failed: %s (%s)", where, call,
                                  name ? name : "unknown CUresult",
                                  text ? text : "no description");
  if (!name)
    lines += "\n" + reportError("(CUresult %d)", int(result));
  return lines;
}

// Why the driver cannot be used (empty: it can), set once by initDriver.
std::string driverFailure;

// Loads the driver and calls cuInit. Reports failure and records it in
// driverFailure.
bool initDriver() {
  const char *path = std::getenv("ATTN_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    driverFailure = reportError("cuInit failed: no CUDA driver (%s not "
                                "found: %s)",
                                path, why ? why : "dlopen failed");
    return false;
  }
#define ATTN_RESOLVE(fn)                                                       \
  driver.fn =                                                                  \
      reinterpret_cast<decltype(driver.fn)>(dlsym(handle, ATTN_STR(fn)));      \
  if (!driver.fn && driverFailure.empty())                                     \
    driverFailure = reportError("the CUDA driver %s lacks %s (driver too "     \
                                "old?)",                                       \
                                path, ATTN_STR(fn));
  ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_RESOLVE)
#undef ATTN_RESOLVE
  if (!driverFailure.empty())
    return false;
  CUresult result = driver.cuInit(0);
  if (result != CUDA_SUCCESS) {
    driverFailure = report("initialization", "cuInit(0)", result);
    return false;
  }
  return true;
}

// Loads and initializes the driver on the first call (thread-safe: a static
// local's initialization); later calls return the outcome. A failure is
// printed once, and kept for every later call (on any thread) that it fails.
bool ensureDriver() {
  static thread_local bool initializing = false;
  static const bool ready = [] {
    initializing = true;
    return initDriver();
  }();
  if (!ready && !initializing)
    keepError(driverFailure);
  initializing = false;
  return ready;
}

// Calls driver function FN with the remaining arguments; on failure reports
// the call's text and the error, and evaluates to false.
#define CU(fn, ...)                                                            \
  checkResult(driver.fn(__VA_ARGS__), __func__, #fn "(" #__VA_ARGS__ ")")
// The same, reported for WHERE (helpers report for the mgpu* function that
// called them).
#define CU_AT(where, fn, ...)                                                  \
  checkResult(driver.fn(__VA_ARGS__), where, #fn "(" #__VA_ARGS__ ")")

bool checkResult(CUresult result, const char *where, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  report(where, call, result);
  return false;
}

// The device whose primary context the functions use: the calling thread's
// own (attnCudaRuntimeSetThreadDevice), or else the process's default
// (mgpuSetDefaultDevice); and the primary contexts retained so far.
constexpr int kMaxDevices = 64;
std::atomic<int32_t> defaultDevice{0};
thread_local int32_t threadDevice = -1; // -1: the default device
std::atomic<CUcontext> primaryContexts[kMaxDevices];
std::mutex contextMutex;

int32_t currentDevice() {
  return threadDevice >= 0 ? threadDevice
                           : defaultDevice.load(std::memory_order_relaxed);
}

// Device ORDINAL's primary context, retained on first use; null, after
// reporting, on failure.
CUcontext primaryContext(int32_t ordinal, const char *where) {
  if (ordinal < 0 || ordinal >= kMaxDevices) {
    reportError("%s: invalid device %d", where, ordinal);
    return nullptr;
  }
  CUcontext context = primaryContexts[ordinal].load(std::memory_order_acquire);
  if (context)
    return context;
  std::lock_guard<std::mutex> lock(contextMutex);
  context = primaryContexts[ordinal].load(std::memory_order_acquire);
  if (!context) {
    CUdevice device;
    if (!CU_AT(where, cuDeviceGet, &device, ordinal) ||
        !CU_AT(where, cuDevicePrimaryCtxRetain, &context, device))
      return nullptr;
    primaryContexts[ordinal].store(context, std::memory_order_release);
  }
  return context;
}

// Makes CONTEXT current on this thread if it is not. Returns false, after
// reporting, on failure.
bool makeCurrent(CUcontext context, const char *where) {
  CUcontext current = nullptr;
  if (!CU_AT(where, cuCtxGetCurrent, &current))
    return false;
  return current == context || CU_AT(where, cuCtxSetCurrent, context);
}

// Makes the current device's primary context current on this thread
// (retaining it on first use). Returns false, after reporting, on failure.
bool ensureContext(const char *where) {
  if (!ensureDriver())
    return false;
  CUcontext context = primaryContext(currentDevice(), where);
  return context && makeCurrent(context, where);
}

// A module as generated code holds it (mgpuModuleLoad's handle): its image,
// loaded into a device's primary context on the first lookup there. Host
// code loads its modules once, in a global constructor, on whichever device
// is current then; a thread that runs it on another device
// (attnCudaRuntimeSetThreadDevice) gets the kernels loaded there.
struct Module {
  const void *image;
  int jitOptLevel; // -1: a binary (cubin, fatbin), no PTX JIT
  CUmodule loaded[kMaxDevices] = {};
};

// Function lookups, cached per (module, device, name), and the dynamic
// shared memory limit raised so far per function.
struct FunctionCache {
  std::mutex mutex;
  std::map<std::tuple<Module *, int32_t, std::string>, CUfunction> functions;
  std::unordered_map<CUfunction, int32_t> sharedMemoryLimit;
};
FunctionCache &functionCache() {
  static FunctionCache *cache = new FunctionCache; // never destroyed
  return *cache;
}

constexpr int32_t kDefaultSharedMemoryLimit = 48 * 1024;

// Raises FUNCTION's dynamic shared memory limit to SMEM bytes when SMEM is
// over the 48 KB a launch gets without opting in.
bool ensureSharedMemory(CUfunction function, int32_t smem, const char *where) {
  if (smem <= kDefaultSharedMemoryLimit)
    return true;
  FunctionCache &cache = functionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  int32_t &limit = cache.sharedMemoryLimit[function];
  if (limit >= smem)
    return true;
  if (!checkResult(
          driver.cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
          where,
          "cuFuncSetAttribute(function, "
          "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)")) {
    CUdevice device;
    int optin = 0;
    if (driver.cuDeviceGet(&device, currentDevice()) == CUDA_SUCCESS &&
        driver.cuDeviceGetAttribute(
            &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            device) == CUDA_SUCCESS)
      reportError("%s: the kernel asks for %d bytes of dynamic shared "
                  "memory; the device allows %d",
                  where, smem, optin);
    return false;
  }
  limit = smem;
  return true;
}

// A handle or pointer as a key type of this file's own: the hash
// containers' code for it then has internal linkage and stays out of the
// library's exports (for a plain pointer or integer key it would not).
template <typename T> struct LocalKey {
  T value;
  bool operator==(const LocalKey &other) const { return value == other.value; }
};
struct LocalKeyHash {
  template <typename T> size_t operator()(const LocalKey<T> &key) const {
    return std::hash<T>()(key.value);
  }
};

// The head of a ranked memref descriptor: the sizes and then the strides
// follow the offset.
struct MemRefDescriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

// The start and the byte extent of the elements a memref spans.
std::pair<char *, uint64_t> memrefSpan(int64_t rank,
                                       const MemRefDescriptor *descriptor,
                                       int64_t elementSize) {
  char *start = descriptor->aligned + descriptor->offset * elementSize;
  const int64_t *sizes = descriptor->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  int64_t lastElement = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return {start, 0};
    lastElement += (sizes[i] - 1) * strides[i];
  }
  return {start, uint64_t(lastElement + 1) * uint64_t(elementSize)};
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

namespace {
// Loads SOURCE's image into the current device's context (current on this
// thread), with the function cache's lock held. Null, after reporting, on
// failure.
CUmodule loadOnCurrentDevice(Module &source, const char *where) {
  CUmodule &module = source.loaded[currentDevice()];
  if (module)
    return module;
  void *data = const_cast<void *>(source.image);
  if (source.jitOptLevel < 0) {
    CU_AT(where, cuModuleLoadData, &module, data);
    return module;
  }
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(intptr_t(source.jitOptLevel))};
  if (!CU_AT(where, cuModuleLoadDataEx, &module, data, 3, options, values) &&
      log[0])
    reportError("PTX JIT log:\n%s", log);
  return module;
}

// A new module for IMAGE, loaded on the current device (to fail at load
// time where it cannot load, as upstream's runtime does); null on failure.
CUmodule loadModule(const void *image, int jitOptLevel, const char *where) {
  if (!ensureContext(where))
    return nullptr;
  auto *module = new Module{image, jitOptLevel};
  FunctionCache &cache = functionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (!loadOnCurrentDevice(*module, where)) {
    delete module;
    return nullptr;
  }
  return reinterpret_cast<CUmodule>(module);
}
} // namespace

ATTN_EXPORT CUmodule mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  return loadModule(data, -1, __func__);
}

ATTN_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, optLevel, __func__);
}

ATTN_EXPORT void mgpuModuleUnload(CUmodule handle) {
  if (!handle || !ensureContext(__func__))
    return;
  auto *module = reinterpret_cast<Module *>(handle);
  FunctionCache &cache = functionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.functions.lower_bound({module, INT32_MIN, std::string()});
  while (it != cache.functions.end() && std::get<0>(it->first) == module) {
    cache.sharedMemoryLimit.erase(it->second);
    it = cache.functions.erase(it);
  }
  // Each device's copy is unloaded in its own context; then this thread's
  // context is its device's again.
  for (int32_t ordinal = 0; ordinal < kMaxDevices; ++ordinal) {
    if (!module->loaded[ordinal])
      continue;
    CUcontext context = primaryContexts[ordinal].load();
    if (makeCurrent(context, __func__))
      CU(cuModuleUnload, module->loaded[ordinal]);
  }
  delete module;
  ensureContext(__func__);
}

ATTN_EXPORT CUfunction mgpuModuleGetFunction(CUmodule handle,
                                             const char *name) {
  if (!handle || !name || !ensureContext(__func__))
    return nullptr;
  auto *module = reinterpret_cast<Module *>(handle);
  FunctionCache &cache = functionCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto key = std::make_tuple(module, currentDevice(), std::string(name));
  auto it = cache.functions.find(key);
  if (it != cache.functions.end())
    return it->second;
  CUmodule loaded = loadOnCurrentDevice(*module, __func__);
  CUfunction function = nullptr;
  if (!loaded || !CU(cuModuleGetFunction, &function, loaded, name)) {
    reportError("(kernel '%s')", name);
    return nullptr;
  }
  cache.functions.emplace(std::move(key), function);
  return function;
}

namespace {
// Kernel times, with ATTN_CUDA_KERNEL_TIMES=FILE: each launch is bracketed
// by two events on its stream, and when the stream is synchronized (or
// destroyed) the elapsed time of each of its launches is appended to FILE,
// one line in milliseconds per launch, in launch order. This is the GPU
// time of the kernel alone, as CUDA events measure other libraries'
// kernels; a program's own timer also counts the launch, the stream and
// the host.
struct TimedLaunch {
  CUevent start, stop;
  int32_t device; // whose context made the events
};
struct KernelTimer {
  std::mutex mutex;
  FILE *file = nullptr; // null: not timing
  std::unordered_map<CUstream, std::vector<TimedLaunch>> pending;
  // Events whose times were written, for reuse, per device (an event is
  // recorded only on streams of its own context): making two events per
  // launch would add to the host time of every timed call.
  std::vector<CUevent> idle[kMaxDevices];
};
KernelTimer &kernelTimer() {
  static KernelTimer *timer = [] {
    auto *t = new KernelTimer; // never destroyed
    const char *path = std::getenv("ATTN_CUDA_KERNEL_TIMES");
    if (path && *path) {
      t->file = std::fopen(path, "a");
      if (!t->file)
        std::fprintf(stderr,
                     "attn_cuda_runtime: cannot open ATTN_CUDA_KERNEL_TIMES "
                     "file %s; kernels are not timed\n",
                     path);
    }
    return t;
  }();
  return *timer;
}

// A timing event recorded on STREAM, reused or made; null on failure.
CUevent recordTimingEvent(CUstream stream) {
  KernelTimer &timer = kernelTimer();
  CUevent event = nullptr;
  {
    std::lock_guard<std::mutex> lock(timer.mutex);
    std::vector<CUevent> &idle = timer.idle[currentDevice()];
    if (!idle.empty()) {
      event = idle.back();
      idle.pop_back();
    }
  }
  if (!event && !CU(cuEventCreate, &event, CU_EVENT_DEFAULT))
    return nullptr;
  if (!CU(cuEventRecord, event, stream)) {
    CU(cuEventDestroy, event);
    return nullptr;
  }
  return event;
}

// Records the event that starts a timed launch on STREAM, or returns null
// when kernels are not timed (or the event cannot be made).
CUevent startKernelTimer(CUstream stream) {
  if (!kernelTimer().file)
    return nullptr;
  return recordTimingEvent(stream);
}

// Records the end of the launch that START began on STREAM.
void stopKernelTimer(CUevent start, CUstream stream) {
  if (!start)
    return;
  CUevent stop = recordTimingEvent(stream);
  if (!stop) {
    CU(cuEventDestroy, start);
    return;
  }
  KernelTimer &timer = kernelTimer();
  std::lock_guard<std::mutex> lock(timer.mutex);
  timer.pending[stream].push_back({start, stop, currentDevice()});
}

// Writes the times of STREAM's launches, which have completed.
void flushKernelTimes(CUstream stream) {
  KernelTimer &timer = kernelTimer();
  if (!timer.file)
    return;
  std::lock_guard<std::mutex> lock(timer.mutex);
  auto it = timer.pending.find(stream);
  if (it == timer.pending.end())
    return;
  for (const TimedLaunch &launch : it->second) {
    float ms = 0;
    if (CU(cuEventElapsedTime, &ms, launch.start, launch.stop))
      std::fprintf(timer.file, "%.6f\n", double(ms));
    timer.idle[launch.device].push_back(launch.start);
    timer.idle[launch.device].push_back(launch.stop);
  }
  std::fflush(timer.file);
  timer.pending.erase(it);
}
} // namespace

namespace {
// Whether a launch of FUNCTION can go ahead. A null FUNCTION is a module or
// lookup that failed before (reported then): reported again, as the launch
// that did not happen, unless the driver itself is missing (kept, printed
// once).
bool readyToLaunch(CUfunction function, int32_t smem, const char *where) {
  if (!ensureContext(where))
    return false;
  if (!function) {
    reportError("%s: no kernel to launch (its module did not load)", where);
    return false;
  }
  return ensureSharedMemory(function, smem, where);
}
} // namespace

ATTN_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                  intptr_t gridY, intptr_t gridZ,
                                  intptr_t blockX, intptr_t blockY,
                                  intptr_t blockZ, int32_t smem,
                                  CUstream stream, void **params, void **extra,
                                  size_t /*paramsCount*/) {
  if (!readyToLaunch(function, smem, __func__))
    return;
  CUevent timer = startKernelTimer(stream);
  CU(cuLaunchKernel, function, unsigned(gridX), unsigned(gridY),
     unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
     unsigned(smem), stream, params, extra);
  stopKernelTimer(timer, stream);
}

ATTN_EXPORT void mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                                         intptr_t clusterY, intptr_t clusterZ,
                                         intptr_t gridX, intptr_t gridY,
                                         intptr_t gridZ, intptr_t blockX,
                                         intptr_t blockY, intptr_t blockZ,
                                         int32_t smem, CUstream stream,
                                         void **params, void **extra) {
  if (!readyToLaunch(function, smem, __func__))
    return;
  // Clusters of more than 8 blocks are "non-portable" and need opting in.
  if (clusterX * clusterY * clusterZ > 8)
    CU(cuFuncSetAttribute, function,
       CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  CUlaunchAttribute attribute;
  std::memset(&attribute, 0, sizeof(attribute));
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = unsigned(clusterX);
  attribute.value.clusterDim.y = unsigned(clusterY);
  attribute.value.clusterDim.z = unsigned(clusterZ);
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = unsigned(gridX);
  config.gridDimY = unsigned(gridY);
  config.gridDimZ = unsigned(gridZ);
  config.blockDimX = unsigned(blockX);
  config.blockDimY = unsigned(blockY);
  config.blockDimZ = unsigned(blockZ);
  config.sharedMemBytes = unsigned(smem);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUevent timer = startKernelTimer(stream);
  CU(cuLaunchKernelEx, &config, function, params, extra);
  stopKernelTimer(timer, stream);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

namespace {
// Streams are reused. Generated host code makes a stream for each host-side
// wait (`gpu.wait async`, then `gpu.wait` synchronizes and destroys it):
// one stream per call of an attention function, created and destroyed at
// a cost of microseconds each, as much as a decoding kernel takes. A
// destroyed stream goes to its device's idle list (up to kMaxIdleStreams)
// and the next mgpuStreamCreate there takes it. Reusing a stream whose work
// has not finished only orders the new work after it.
constexpr size_t kMaxIdleStreams = 32;
struct StreamPool {
  std::mutex mutex;
  std::vector<CUstream> idle[kMaxDevices];
  // The device of each stream made here, idle or in use.
  std::unordered_map<LocalKey<CUstream>, int32_t, LocalKeyHash> devices;
};
StreamPool &streamPool() {
  static StreamPool *pool = new StreamPool; // never destroyed
  return *pool;
}
} // namespace

ATTN_EXPORT CUstream mgpuStreamCreate() {
  if (!ensureContext(__func__))
    return nullptr;
  int32_t ordinal = currentDevice();
  StreamPool &pool = streamPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.idle[ordinal].empty()) {
      CUstream stream = pool.idle[ordinal].back();
      pool.idle[ordinal].pop_back();
      return stream;
    }
  }
  CUstream stream = nullptr;
  if (!CU(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING))
    return nullptr;
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.devices[{stream}] = ordinal;
  return stream;
}

ATTN_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  if (ensureContext(__func__) && CU(cuStreamSynchronize, stream))
    flushKernelTimes(stream);
}

ATTN_EXPORT void mgpuStreamDestroy(CUstream stream) {
  if (!ensureContext(__func__))
    return;
  // Timed launches not yet synchronized: their times are kept.
  if (kernelTimer().file && CU(cuStreamSynchronize, stream))
    flushKernelTimes(stream);
  StreamPool &pool = streamPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    auto it = pool.devices.find({stream});
    if (it != pool.devices.end()) {
      std::vector<CUstream> &idle = pool.idle[it->second];
      if (idle.size() < kMaxIdleStreams) {
        idle.push_back(stream);
        return;
      }
      pool.devices.erase(it);
    }
  }
  CU(cuStreamDestroy, stream);
}

ATTN_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (ensureContext(__func__))
    CU(cuStreamWaitEvent, stream, event, 0);
}

ATTN_EXPORT CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  if (ensureContext(__func__))
    CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
  return event;
}

ATTN_EXPORT void mgpuEventDestroy(CUevent event) {
  if (ensureContext(__func__))
    CU(cuEventDestroy, event);
}

ATTN_EXPORT void mgpuEventSynchronize(CUevent event) {
  if (ensureContext(__func__))
    CU(cuEventSynchronize, event);
}

ATTN_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  if (ensureContext(__func__))
    CU(cuEventRecord, event, stream);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {
// Device memory for gpu.alloc and gpu.dealloc on a stream comes from a
// memory pool of this library's own (one per device), allocated and freed
// in stream order. cuMemAlloc and cuMemFree are synchronous, and cuMemFree
// waits for the whole device: a call that allocates a workspace around its
// kernels (split-KV) would wait for the GPU at each. The pool keeps what is
// freed (its release threshold is the maximum), so the next call's
// allocation reuses it without the OS. Off with ATTN_CUDA_MEMORY_POOL=0 and
// on devices without memory pools: then cuMemAlloc and cuMemFree.
struct MemoryPools {
  std::mutex mutex;
  CUmemoryPool pools[kMaxDevices] = {};
  bool tried[kMaxDevices] = {};
  // The allocations made from a pool.
  std::unordered_set<LocalKey<CUdeviceptr>, LocalKeyHash> allocations;
};
MemoryPools &memoryPools() {
  static MemoryPools *pools = new MemoryPools; // never destroyed
  return *pools;
}

bool memoryPoolsEnabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("ATTN_CUDA_MEMORY_POOL");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

// The default device's pool, made on first use; null where there is none
// (disabled, unsupported, or its creation failed, which is reported once).
CUmemoryPool memoryPool(const char *where) {
  if (!memoryPoolsEnabled())
    return nullptr;
  int32_t ordinal = currentDevice();
  MemoryPools &pools = memoryPools();
  std::lock_guard<std::mutex> lock(pools.mutex);
  if (pools.tried[ordinal])
    return pools.pools[ordinal];
  pools.tried[ordinal] = true;
  CUdevice device;
  int supported = 0;
  if (!checkResult(driver.cuDeviceGet(&device, ordinal), where,
                   "cuDeviceGet(&device, ordinal)") ||
      driver.cuDeviceGetAttribute(&supported,
                                  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                  device) != CUDA_SUCCESS ||
      !supported)
    return nullptr;
  CUmemPoolProps props;
  std::memset(&props, 0, sizeof(props));
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  if (!CU(cuMemPoolCreate, &pool, &props))
    return nullptr;
  cuuint64_t threshold = UINT64_MAX;
  if (!CU(cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
          &threshold))
    reportError("(the memory pool returns freed memory to the OS at each "
                "synchronization)");
  pools.pools[ordinal] = pool;
  return pool;
}
} // namespace

ATTN_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                               bool isHostShared) {
  CUdeviceptr ptr = 0;
  if (sizeBytes == 0 || !ensureContext(__func__))
    return nullptr;
  if (isHostShared) {
    CU(cuMemAllocManaged, &ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL);
    return reinterpret_cast<void *>(ptr);
  }
  if (CUmemoryPool pool = stream ? memoryPool(__func__) : nullptr) {
    if (!CU(cuMemAllocFromPoolAsync, &ptr, sizeBytes, pool, stream))
      return nullptr;
    MemoryPools &pools = memoryPools();
    std::lock_guard<std::mutex> lock(pools.mutex);
    pools.allocations.insert({ptr});
    return reinterpret_cast<void *>(ptr);
  }
  CU(cuMemAlloc, &ptr, sizeBytes);
  return reinterpret_cast<void *>(ptr);
}

ATTN_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr || !ensureContext(__func__))
    return;
  auto devicePtr = reinterpret_cast<CUdeviceptr>(ptr);
  bool fromPool;
  {
    MemoryPools &pools = memoryPools();
    std::lock_guard<std::mutex> lock(pools.mutex);
    fromPool = pools.allocations.erase({devicePtr}) != 0;
  }
  if (!fromPool) {
    CU(cuMemFree, devicePtr);
    return;
  }
  // Without a stream, as cuMemFree: after all work on the device (the
  // legacy stream does not wait for the non-blocking streams used here).
  if (!stream &&
      !checkResult(driver.cuCtxSynchronize(), __func__, "cuCtxSynchronize()"))
    return;
  CU(cuMemFreeAsync, devicePtr, stream);
}

ATTN_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                            CUstream stream) {
  if (sizeBytes && ensureContext(__func__))
    CU(cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(dst),
       reinterpret_cast<CUdeviceptr>(src), sizeBytes, stream);
}

ATTN_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                              CUstream stream) {
  if (count && ensureContext(__func__))
    CU(cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(dst), value, count,
       stream);
}

ATTN_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                              CUstream stream) {
  if (count && ensureContext(__func__))
    CU(cuMemsetD16Async, reinterpret_cast<CUdeviceptr>(dst), value, count,
       stream);
}

ATTN_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  if (ptr && sizeBytes && ensureContext(__func__))
    CU(cuMemHostRegister, ptr, sizeBytes, 0);
}

ATTN_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (ptr && ensureContext(__func__))
    CU(cuMemHostUnregister, ptr);
}

// DESCRIPTOR points to a ranked memref descriptor of rank RANK; the span of
// memory its elements occupy is registered (strided memrefs included).
ATTN_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                           int64_t elementSizeBytes) {
  auto span =
      memrefSpan(rank, static_cast<const MemRefDescriptor *>(descriptor),
                 elementSizeBytes);
  mgpuMemHostRegister(span.first, span.second);
}

ATTN_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                             int64_t elementSizeBytes) {
  auto span =
      memrefSpan(rank, static_cast<const MemRefDescriptor *>(descriptor),
                 elementSizeBytes);
  if (span.second)
    mgpuMemHostUnregister(span.first);
}

ATTN_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice.store(device, std::memory_order_relaxed);
}

ATTN_EXPORT int32_t attnCudaRuntimeSetThreadDevice(int32_t device) {
  int32_t previous = threadDevice;
  threadDevice = device < 0 ? -1 : device;
  return previous;
}

ATTN_EXPORT int32_t attnCudaRuntimePointerDevice(const void *pointer) {
  if (!ensureDriver())
    return -1;
  int ordinal = -1;
  if (!CU(cuPointerGetAttribute, &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
          reinterpret_cast<CUdeviceptr>(pointer)))
    return -1;
  return ordinal;
}

//===----------------------------------------------------------------------===//
// TMA descriptors
//===----------------------------------------------------------------------===//

namespace {
// The tensor maps copied to device memory so far, per device and encoded
// map. A map is a pure function of the tensor's address, shape, strides and
// the box, so a program that launches on the same tensors again (every
// step of a model, every timed call of a benchmark) reuses its copy instead
// of allocating and synchronously copying 128 bytes before each launch.
// The copies are never freed: a kernel in flight may still read one.
struct TensorMapKey {
  int32_t device;
  std::string map; // the encoded CUtensorMap
  bool operator<(const TensorMapKey &other) const {
    return std::tie(device, map) < std::tie(other.device, other.map);
  }
};
// (A key type of this file's own keeps the map's code out of the exports.)
struct TensorMapCache {
  std::mutex mutex;
  std::map<TensorMapKey, CUdeviceptr> maps;
};
TensorMapCache &tensorMapCache() {
  static TensorMapCache *cache = new TensorMapCache; // never destroyed
  return *cache;
}
} // namespace

// Encodes a tiled TMA descriptor for the ranked memref DESCRIPTOR (rank 1 to
// 5) with box BOXDIMS (in memref order, outermost first) and returns it in
// device memory, where the kernel reads it from (one copy per distinct map:
// see TensorMapCache). The enum operands come as i64 from nvgpu-to-nvvm.
ATTN_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *boxDims) {
  static const int kElementSize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (rank < 1 || rank > 5 || dataType < 0 ||
      dataType >= int64_t(sizeof(kElementSize) / sizeof(kElementSize[0]))) {
    reportError("%s: unsupported rank %lld or data type %lld", __func__,
                (long long)rank, (long long)dataType);
    return nullptr;
  }
  if (!ensureContext(__func__))
    return nullptr;
  const auto *memref = static_cast<const MemRefDescriptor *>(descriptor);
  const int64_t *sizes = memref->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  int64_t elementSize = kElementSize[dataType];
  if (strides[rank - 1] != 1) {
    reportError("%s: the innermost dimension must be contiguous (stride "
                "%lld)",
                __func__, (long long)strides[rank - 1]);
    return nullptr;
  }
  // CUDA orders dimensions innermost first; its strides (in bytes) are those
  // of dimensions 1..rank-1.
  cuuint64_t globalDim[5] = {0}, globalStrides[5] = {0};
  cuuint32_t box[5] = {0}, elementStrides[5] = {0};
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = rank - 1 - i;
    globalDim[i] = cuuint64_t(sizes[d]);
    box[i] = cuuint32_t(boxDims[d]);
    elementStrides[i] = 1;
    if (i > 0)
      globalStrides[i - 1] = cuuint64_t(strides[d] * elementSize);
  }
  void *address = memref->aligned + memref->offset * elementSize;
  CUtensorMap map;
  if (!CU(cuTensorMapEncodeTiled, &map, CUtensorMapDataType(dataType),
          cuuint32_t(rank), address, globalDim, globalStrides, box,
          elementStrides, CUtensorMapInterleave(interleave),
          CUtensorMapSwizzle(swizzle), CUtensorMapL2promotion(l2Promotion),
          CUtensorMapFloatOOBfill(oobFill)))
    return nullptr;
  TensorMapCache &cache = tensorMapCache();
  TensorMapKey key{
      currentDevice(),
      std::string(reinterpret_cast<const char *>(&map), sizeof(map))};
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.maps.find(key);
  if (it != cache.maps.end())
    return reinterpret_cast<void *>(it->second);
  CUdeviceptr deviceMap = 0;
  if (!CU(cuMemAlloc, &deviceMap, sizeof(map)))
    return nullptr;
  if (!CU(cuMemcpy, deviceMap, reinterpret_cast<CUdeviceptr>(&map),
          sizeof(map))) {
    CU(cuMemFree, deviceMap);
    return nullptr;
  }
  cache.maps.emplace(std::move(key), deviceMap);
  return reinterpret_cast<void *>(deviceMap);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

ATTN_EXPORT size_t attnCudaRuntimeTakeErrors(char *buffer, size_t size) {
  size_t length = pendingErrors.size();
  if (buffer && size) {
    size_t copied = std::min(length, size - 1);
    std::memcpy(buffer, pendingErrors.data(), copied);
    buffer[copied] = '\0';
  }
  pendingErrors.clear();
  return length;
}
