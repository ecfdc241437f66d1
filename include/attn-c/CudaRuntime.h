/*===-- attn-c/CudaRuntime.h - libattn_cuda_runtime's own API -----*- C -*-===*\
|*                                                                            *|
|* Part of the attn-mlir project.                                             *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* libattn_cuda_runtime.so defines the mgpu* functions that generated host    *|
|* code calls (docs/runtime.md). Those return nothing or NULL on failure, as  *|
|* upstream's do, and print the error on stderr; this is how a caller learns  *|
|* that the call it made failed, and how it chooses the device its thread's   *|
|* calls run on.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_CUDARUNTIME_H
#define ATTN_C_CUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Takes the errors the runtime reported on the calling thread since the
/// last call: copies them (one per line, without the "attn_cuda_runtime: "
/// prefix, at most `size` - 1 bytes and a NUL) into `buffer` and forgets
/// them. Returns their length in bytes; 0 when nothing failed. After a
/// failed initialization (no driver) every later call that could not run
/// keeps that reason again. At most 16 KiB of errors are kept.
size_t attnCudaRuntimeTakeErrors(char *buffer, size_t size);

/// Makes `device` (an ordinal) the device of the calling thread's later
/// calls into the runtime: their primary context, streams, stream-ordered
/// memory, TMA descriptors and kernels (a module that generated code loaded
/// on another device is loaded on this one at its first launch here). -1
/// returns the thread to the process's default device (mgpuSetDefaultDevice,
/// 0 unless set). Returns the previous setting, for the caller to restore.
/// An invalid ordinal is reported by the next call that uses it.
int32_t attnCudaRuntimeSetThreadDevice(int32_t device);

/// The ordinal of the device whose memory holds `pointer` (device memory
/// from any allocator: the runtime's, torch's, CuPy's), or -1, with the
/// driver's error kept, when the driver does not know the pointer.
int32_t attnCudaRuntimePointerDevice(const void *pointer);

#ifdef __cplusplus
}
#endif

#endif // ATTN_C_CUDARUNTIME_H
