"""Device memory and errors of libattn_cuda_runtime, through ctypes.

The host code of compile_attention(target="cuda") calls the runtime's mgpu*
functions (docs/runtime.md); the package calls the same library, loaded
once per process, to move numpy arrays to and from the device and to learn
whether a call failed (attnCudaRuntimeTakeErrors): the mgpu* functions
return nothing or NULL and print their errors, which a Python caller must
not miss.

The library is looked up in this order:
  1. the path in the environment variable ATTN_MLIR_CUDA_RUNTIME;
  2. lib/libattn_cuda_runtime.so two levels above this package (the build
     tree's python_packages/ and an installed prefix's both have it there).
"""

import ctypes
import os
import threading

__all__ = ["CudaError", "Runtime", "runtime", "runtime_library_path"]

_LIBRARY_NAME = "libattn_cuda_runtime.so"
# The runtime keeps at most 16 KiB of errors per thread.
_ERROR_BUFFER_SIZE = 16 * 1024 + 1


class CudaError(RuntimeError):
    """A call into the CUDA runtime failed. `errors` holds the runtime's
    reports, one line each (the failing driver call, CUDA's error name and
    text)."""

    def __init__(self, doing, errors):
        self.errors = list(errors)
        super().__init__(f"{doing} failed: " + "; ".join(self.errors))


def runtime_library_path():
    """The libattn_cuda_runtime.so the package uses (which may not exist:
    the library is built only where the CUDA toolkit's cuda.h is found)."""
    path = os.environ.get("ATTN_MLIR_CUDA_RUNTIME")
    if path:
        return path
    package = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(package, "..", "..", "lib",
                                         _LIBRARY_NAME))


class Runtime:
    """libattn_cuda_runtime.so: streams, device memory and copies, each
    call checked. Device pointers and streams are ints."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise RuntimeError(
                f"the CUDA runtime library is not at {path!r}: build "
                f"attn-mlir where the CUDA toolkit's cuda.h is found "
                f"(docs/runtime.md), or set ATTN_MLIR_CUDA_RUNTIME")
        self.path = os.path.realpath(path)
        lib = ctypes.CDLL(self.path)
        vp, u64 = ctypes.c_void_p, ctypes.c_uint64
        for name, restype, argtypes in (
            ("mgpuStreamCreate", vp, []),
            ("mgpuStreamSynchronize", None, [vp]),
            ("mgpuStreamDestroy", None, [vp]),
            ("mgpuMemAlloc", vp, [u64, vp, ctypes.c_bool]),
            ("mgpuMemFree", None, [vp, vp]),
            ("mgpuMemcpy", None, [vp, vp, ctypes.c_size_t, vp]),
            ("attnCudaRuntimeTakeErrors", ctypes.c_size_t,
             [ctypes.c_char_p, ctypes.c_size_t]),
            ("attnCudaRuntimeSetThreadDevice", ctypes.c_int32,
             [ctypes.c_int32]),
            ("attnCudaRuntimePointerDevice", ctypes.c_int32, [vp]),
        ):
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        self._lib = lib

    def take_errors(self):
        """The errors reported on this thread since the last take."""
        buffer = ctypes.create_string_buffer(_ERROR_BUFFER_SIZE)
        length = self._lib.attnCudaRuntimeTakeErrors(buffer, len(buffer))
        if not length:
            return []
        return buffer.value.decode(errors="replace").split("\n")

    def check(self, doing):
        """Raises CudaError if the runtime reported an error on this thread
        since the last check (or take)."""
        errors = self.take_errors()
        if errors:
            raise CudaError(doing, errors)

    def set_thread_device(self, device):
        """Makes `device` (an ordinal; -1: the process's default) the one
        this thread's later runtime calls use; returns the previous one."""
        return self._lib.attnCudaRuntimeSetThreadDevice(device)

    def pointer_device(self, pointer):
        """The ordinal of the device whose memory holds `pointer`, or None
        where the driver does not know it (not device memory)."""
        device = self._lib.attnCudaRuntimePointerDevice(pointer)
        errors = self.take_errors()
        if device >= 0:
            return device
        if all("cuPointerGetAttribute" in error for error in errors):
            return None
        raise CudaError("finding the device of an operand", errors)

    def stream_create(self):
        stream = self._lib.mgpuStreamCreate()
        self.check("creating a stream")
        return stream

    def stream_synchronize(self, stream):
        self._lib.mgpuStreamSynchronize(stream)
        self.check("synchronizing a stream")

    def alloc(self, size, stream):
        """`size` bytes of device memory, ordered on `stream` (0 for none)."""
        if size == 0:
            return 0
        pointer = self._lib.mgpuMemAlloc(size, stream, False)
        self.check(f"allocating {size} bytes of device memory")
        return pointer

    def release(self, pointers, stream):
        """Frees `pointers` (0 for none) on `stream`, then destroys it; all
        of them, even if one fails."""
        for pointer in pointers:
            if pointer:
                self._lib.mgpuMemFree(pointer, stream)
        self._lib.mgpuStreamDestroy(stream)
        self.check("freeing device memory")

    def memcpy(self, destination, source, size, stream):
        self._lib.mgpuMemcpy(destination, source, size, stream)
        self.check(f"copying {size} bytes")


_runtime = None
_lock = threading.Lock()


def runtime():
    """The process's Runtime (the library is loaded once)."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = Runtime(runtime_library_path())
        return _runtime
