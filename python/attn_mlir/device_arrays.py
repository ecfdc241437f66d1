"""Arrays in CUDA device memory as operands of the GPU kernels: objects
with __cuda_array_interface__ (CuPy, Numba, torch), and torch tensors read
directly, since torch's interface has no bf16 (and, before torch 2, no
bool) tensors."""

import math

from .memref import contiguous_strides

__all__ = ["DeviceOperand", "element_of", "is_device_array",
           "new_device_array", "on_device"]

# The typestr of each element type's storage: bf16 as 16-bit integers
# (numpy and the interface have no bfloat16; torch: `t.view(torch.int16)`).
TYPESTRS = {
    "f32": ("<f4",),
    "f16": ("<f2",),
    "bf16": ("<u2", "<i2"),
    "i1": ("|b1",),
}
_ELEMENT_OF_TYPESTR = {"<f4": "f32", "<f2": "f16", "|b1": "i1"}
# CUDA's handle of the legacy default stream.
CU_STREAM_LEGACY = 1
_TORCH_TYPESTRS = {"float32": "<f4", "float16": "<f2", "bfloat16": "<u2",
                   "bool": "|b1"}
_TORCH_ELEMENTS = {"float32": "f32", "float16": "f16", "bfloat16": "bf16",
                   "bool": "i1"}


def _is_torch_tensor(value):
    return type(value).__module__.split(".")[0] == "torch" and hasattr(
        value, "data_ptr")


def _is_cupy_array(value):
    return type(value).__module__.split(".")[0] == "cupy"


def is_device_array(value):
    if _is_torch_tensor(value):
        return value.device.type == "cuda"
    return hasattr(value, "__cuda_array_interface__")


def on_device(*values):
    return any(is_device_array(x) for x in values)


def _interface(value, name):
    """`value`'s __cuda_array_interface__; for a torch tensor, built here,
    with torch's current stream on its device."""
    if not _is_torch_tensor(value):
        return value.__cuda_array_interface__
    import torch

    dtype = str(value.dtype).split(".")[-1]
    if dtype not in _TORCH_TYPESTRS:
        raise TypeError(f"{name}: the kernels take float32, float16, bfloat16 "
                        f"and bool tensors, not {value.dtype}")
    size = value.element_size()
    return {
        "typestr": _TORCH_TYPESTRS[dtype],
        "shape": tuple(value.shape),
        "strides": tuple(stride * size for stride in value.stride()),
        "data": (value.data_ptr() if value.numel() else 0, False),
        "stream": torch.cuda.current_stream(value.device).cuda_stream,
        "version": 3,
    }


def _known_device(value):
    """The device ordinal that `value` says it is on (torch tensors, CuPy
    arrays), or None: then the driver is asked where its pointer is."""
    if _is_torch_tensor(value):
        return value.device.index
    if _is_cupy_array(value):
        return value.device.id
    return None


def element_of(value, name):
    """(shape, element type) of a device array; the element type is None
    for 16-bit integers (bf16 bit patterns, or not: the caller says)."""
    if _is_torch_tensor(value):
        dtype = str(value.dtype).split(".")[-1]
        return tuple(value.shape), _TORCH_ELEMENTS.get(dtype)
    interface = _interface(value, name)
    return tuple(interface["shape"]), _ELEMENT_OF_TYPESTR.get(interface["typestr"])


class DeviceOperand:
    """A device array checked against the shape and element type a kernel
    takes: its address, size and the stream its producer may still be
    writing it on."""

    def __init__(self, value, shape, element, name, writable=False):
        interface = _interface(value, name)
        typestr = interface["typestr"]
        if typestr not in TYPESTRS[element]:
            raise TypeError(
                f"{name}: this kernel takes {element} "
                f"(typestr {' or '.join(TYPESTRS[element])}), got {typestr}"
            )
        if tuple(interface["shape"]) != shape:
            raise ValueError(
                f"{name} has shape {tuple(interface['shape'])}, this kernel "
                f"takes {shape}"
            )
        itemsize = int(typestr[2:])
        strides = interface.get("strides")
        if strides is not None and any(
            size > 1 and stride != expected
            for size, stride, expected in zip(
                shape, strides, contiguous_strides(shape, itemsize))
        ):
            raise ValueError(f"{name} must be C-contiguous, has strides {strides}")
        pointer, readonly = interface["data"]
        if writable and readonly:
            raise ValueError(f"{name} is read-only")
        self.pointer = pointer or 0
        self.name = name
        self.shape = shape
        #: The device ordinal, where the array says (None: ask the driver).
        self.device = _known_device(value)
        self.nbytes = itemsize * math.prod(shape)
        # Version 3 names the stream (None: nothing pending); without it
        # (version 2), the legacy default stream, where work that does not
        # say is.
        self.stream = interface.get("stream", CU_STREAM_LEGACY)

    def overlaps(self, other):
        return bool(
            self.nbytes
            and other.nbytes
            and self.pointer < other.pointer + other.nbytes
            and other.pointer < self.pointer + self.nbytes
        )


def new_device_array(like, shape):
    """An uninitialized array of `like`'s kind (torch tensor or CuPy array)
    and element type, of `shape`, on its device."""
    if _is_torch_tensor(like):
        return like.new_empty(shape)
    if _is_cupy_array(like):
        import cupy

        with like.device:
            return cupy.empty(shape, dtype=like.dtype)
    raise TypeError(
        f"attention() makes outputs for torch tensors and CuPy arrays; for "
        f"a {type(like).__name__}, call compile_attention(..., "
        f"target='cuda') with out="
    )

