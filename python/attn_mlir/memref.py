"""Memref descriptors, as the LLVM lowering lays them out, for calling
compiled functions through their C interface."""

import ctypes

__all__ = ["contiguous_strides", "descriptor_type", "device_descriptor",
           "host_descriptor"]


def descriptor_type(rank):
    """The ctypes structure of a ranked memref descriptor."""

    class MemRefDescriptor(ctypes.Structure):
        _fields_ = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
            ("sizes", ctypes.c_int64 * rank),
            ("strides", ctypes.c_int64 * rank),
        ]

    return MemRefDescriptor


def contiguous_strides(shape, itemsize=1):
    """The strides (in units of `itemsize`) of a C-contiguous array."""
    strides, stride = [], itemsize
    for size in reversed(shape):
        strides.append(stride)
        stride *= max(size, 1)
    return tuple(reversed(strides))


def _filled(pointer, shape, strides):
    descriptor = descriptor_type(len(shape))()
    descriptor.allocated = pointer
    descriptor.aligned = pointer
    descriptor.offset = 0
    for i, (size, stride) in enumerate(zip(shape, strides)):
        descriptor.sizes[i] = size
        descriptor.strides[i] = stride
    return descriptor


def host_descriptor(array):
    """The descriptor of a numpy array (strides in elements)."""
    return _filled(array.ctypes.data, array.shape,
                   [stride // array.itemsize for stride in array.strides])


def device_descriptor(pointer, shape):
    """The descriptor of a C-contiguous array at device address `pointer`."""
    return _filled(pointer, shape, contiguous_strides(shape))
