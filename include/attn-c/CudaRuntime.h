/*===-- attn-c/CudaRuntime.h - libattn_cuda_runtime's own API -----*- C -*-===*\
|*                                                                            *|
|* Part of the attn-mlir project.                                             *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* libattn_cuda_runtime.so defines the mgpu* functions that generated host    *|
|* code calls (docs/runtime.md). Those return nothing or NULL on failure, as  *|
|* upstream's do, and print the error on stderr; this is how a caller learns  *|
|* that the call it made failed.                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_CUDARUNTIME_H
#define ATTN_C_CUDARUNTIME_H

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif

#endif // ATTN_C_CUDARUNTIME_H
