"""Compile attn.attention for given shapes, dtype and flags, and run it.

    import numpy as np, attn_mlir
    out = attn_mlir.attention(q, k, v, causal="bottom_right")      # numpy in, out

    kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                         dtype="f16", causal="top_left")
    out = kernel(q, k, v)

target="cpu" lowers the op with the attn CPU pipeline and runs it with MLIR's
execution engine on numpy buffers. target="cuda" compiles the fused
tensor-core kernel with the attn GPU pipeline and returns it (a cubin or
PTX) with the host code that launches it:

    kernel = attn_mlir.compile_attention((4, 16, 4096, 128), (4, 16, 4096, 128),
                                         (4, 16, 4096, 128), dtype="bf16",
                                         target="cuda", chip="sm_90")
    open("attention.cubin", "wb").write(kernel.binary)
"""

import contextlib
import ctypes
import math
import os
import struct
import threading

import numpy as np

from ._capi import MlirStringRef, lib
from . import gpu_binary
from .cuda import CudaError
from .cuda import runtime as cuda_runtime
from .device_arrays import (
    DeviceOperand,
    element_of,
    is_device_array,
    new_device_array,
    on_device,
)
from .memref import device_descriptor, host_descriptor
from .ir import Context, MLIRError

__all__ = [
    "CompiledAttention",
    "CompiledKernel",
    "attention",
    "bf16_to_f32",
    "compile_attention",
    "f32_to_bf16",
]

_DTYPES = {
    "f32": "f32",
    "float32": "f32",
    "f16": "f16",
    "float16": "f16",
    "bf16": "bf16",
    "bfloat16": "bf16",
}
_CAUSAL = (None, "top_left", "bottom_right")
_FUNCTION = "attention"


def _dtype_name(dtype):
    key = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _DTYPES[key]
    except KeyError:
        raise ValueError(f"dtype must be f32, f16 or bf16, got {dtype!r}") from None


def f32_to_bf16(x):
    """float32 values -> bfloat16 bit patterns (uint16), rounded to nearest
    even (NaN stays NaN)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits + (0x7FFF + ((bits >> 16) & 1))
    rounded = np.where(np.isnan(x), bits | 0x00400000, rounded)
    return (rounded >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    """bfloat16 bit patterns (uint16) -> float32 values."""
    widened = np.asarray(bits, dtype=np.uint16).astype(np.uint32)
    return (widened << 16).view(np.float32)


# How each MLIR element type sits in numpy: storage dtype and conversion.
_STORAGE = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": np.uint16,
    "i1": np.bool_,
}


def _to_storage(array, element, name):
    if element == "bf16":
        array = np.asarray(array)
        if array.dtype != np.uint16:  # values, not bit patterns
            array = f32_to_bf16(array)
        return np.ascontiguousarray(array, dtype=np.uint16)
    if element == "i1":
        array = np.asarray(array)
        if array.dtype != np.bool_:
            raise TypeError(
                f"{name}: a boolean mask must be a bool array, got {array.dtype}"
            )
    return np.ascontiguousarray(array, dtype=_STORAGE[element])


def _memref_type(shape, element):
    return "memref<" + "x".join(str(d) for d in shape) + "x" + element + ">"


def _f32_literal(value):
    """An exact MLIR spelling of `value` rounded to f32 (hex for inf/NaN,
    which the verifier then rejects with a message)."""
    value32 = float(np.float32(value))
    if math.isfinite(value32):
        return repr(value32)
    return "0x%08X" % struct.unpack("<I", struct.pack("<f", value32))[0]


def _operands(signature, q, k, v, mask, bias):
    """(name, value, shape, element type) of each operand the kernel takes;
    raises for one it lacks or does not take."""
    sig = signature
    operands = []
    for name, value, shape, element in (
        ("q", q, sig["q_shape"], sig["dtype"]),
        ("k", k, sig["k_shape"], sig["dtype"]),
        ("v", v, sig["v_shape"], sig["dtype"]),
        ("mask", mask, sig["mask_shape"], sig["mask_dtype"]),
        ("bias", bias, sig["bias_shape"], sig["bias_dtype"]),
    ):
        if shape is None:
            if value is not None:
                raise ValueError(
                    f"{name} given, but this kernel was compiled without one"
                )
            continue
        if value is None:
            raise ValueError(f"this kernel was compiled with a {name}; pass it")
        operands.append((name, value, shape, element))
    return operands


def _host_operand(value, shape, element, name):
    """`value` as a C-contiguous numpy array of the kernel's storage type."""
    if is_device_array(value):
        raise TypeError(
            f"{name} is in device memory: run it with target='cuda'"
        )
    array = _to_storage(value, element, name)
    if array.shape != shape:
        raise ValueError(f"{name} has shape {array.shape}, this kernel takes {shape}")
    return array


def _host_out(out, shape, element):
    storage = _STORAGE[element]
    if out is None:
        return np.empty(shape, dtype=storage)
    if (
        not isinstance(out, np.ndarray)
        or out.shape != shape
        or out.dtype != storage
        or not out.flags.c_contiguous
        or not out.flags.writeable
    ):
        raise ValueError(
            f"out must be a writable C-contiguous {np.dtype(storage).name} "
            f"array of shape {shape}"
        )
    return out


def _invoke(engine, descriptors):
    """Calls @attention through the engine's packed interface: a pointer to
    each descriptor pointer (the C interface takes a pointer to each
    descriptor)."""
    pointers = [ctypes.pointer(d) for d in descriptors]
    packed = (ctypes.c_void_p * len(pointers))(
        *[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in pointers]
    )
    result = lib.mlirExecutionEngineInvokePacked(
        engine, MlirStringRef.of(_FUNCTION), packed
    )
    if not result.succeeded():
        raise RuntimeError("the execution engine could not run @attention")


def _create_engine(module, context, opt_level, libraries):
    # The array holds copies of the refs: `refs` keeps their bytes alive.
    refs = [MlirStringRef.of(path) for path in libraries]
    paths = (MlirStringRef * len(refs))(*refs)
    engine = lib.mlirExecutionEngineCreate(
        module._module, opt_level, len(libraries), paths, False, False
    )
    if not engine:
        raise MLIRError(
            "the execution engine could not compile the module",
            context._take_diagnostics(),
        )
    return engine


def _check_shapes(q_shape, k_shape, v_shape):
    q_shape, k_shape, v_shape = (
        tuple(int(d) for d in s) for s in (q_shape, k_shape, v_shape)
    )
    if len(q_shape) < 3:
        raise ValueError(
            f"q must have rank >= 3 ([B..., Hq, Lq, Dqk]), got shape {q_shape}"
        )
    return q_shape, k_shape, v_shape


class _EngineOwner:
    """Destroys its execution engine (`_engine`) on close or collection."""

    _engine = None

    def close(self):
        if self._engine is not None:
            lib.mlirExecutionEngineDestroy(self._engine)
            self._engine = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class CompiledAttention(_EngineOwner):
    """attn.attention compiled for one signature.

    `mlir` is the module that was compiled (a function @attention on memrefs:
    q, k, v, [mask], [bias], out), `llvm` the module after the pipeline.
    Call it with numpy arrays; it returns the output array (float32 values
    for bf16, whose storage numpy lacks, unless raw_bf16=True).
    """

    def __init__(self, signature, mlir, llvm, context, engine):
        self.signature = signature
        self.mlir = mlir
        self.llvm = llvm
        self._context = context
        self._engine = engine

    @property
    def out_shape(self):
        return self.signature["out_shape"]

    def __call__(self, q, k, v, mask=None, bias=None, out=None, raw_bf16=False):
        sig = self.signature
        element = sig["dtype"]
        arrays = [
            _host_operand(value, shape, elt, name)
            for name, value, shape, elt in _operands(sig, q, k, v, mask, bias)
        ]
        out = _host_out(out, self.out_shape, element)
        # The kernel writes tiles of out while other tiles still read the
        # inputs.
        if any(np.may_share_memory(out, a) for a in arrays):
            raise ValueError("out must not overlap q, k, v, mask or bias")
        arrays.append(out)
        _invoke(self._engine, [host_descriptor(a) for a in arrays])
        if element == "bf16" and not raw_bf16:
            return bf16_to_f32(out)
        return out



def attention_module(
    q_shape,
    k_shape,
    v_shape,
    dtype="f32",
    scale=None,
    causal=None,
    mask_shape=None,
    mask_dtype="i1",
    bias_shape=None,
    bias_dtype=None,
):
    """The MLIR text of a function @attention(q, k, v, [mask], [bias], out)
    on memrefs that runs one attn.attention, and its signature."""
    element = _dtype_name(dtype)
    q_shape, k_shape, v_shape = _check_shapes(q_shape, k_shape, v_shape)
    if causal not in _CAUSAL:
        raise ValueError(f"causal must be one of {_CAUSAL}, got {causal!r}")
    if scale is None:
        scale = 1.0 / math.sqrt(q_shape[-1])  # the conventional 1/sqrt(Dqk)
    if mask_dtype in ("i1", "bool", bool, np.bool_):
        mask_dtype = "i1"
    else:
        mask_dtype = _dtype_name(mask_dtype)
    bias_dtype = element if bias_dtype is None else _dtype_name(bias_dtype)
    out_shape = q_shape[:-1] + (v_shape[-1],)

    args = [("q", q_shape, element), ("k", k_shape, element), ("v", v_shape, element)]
    if mask_shape is not None:
        mask_shape = tuple(int(d) for d in mask_shape)
        args.append(("mask", mask_shape, mask_dtype))
    if bias_shape is not None:
        bias_shape = tuple(int(d) for d in bias_shape)
        args.append(("bias", bias_shape, bias_dtype))
    args.append(("out", out_shape, element))
    types = {name: _memref_type(shape, elt) for name, shape, elt in args}

    params = ", ".join(f"%{name}: {types[name]}" for name, _, _ in args)
    op = (
        f"  attn.attention ins(%q, %k, %v : {types['q']}, {types['k']}, {types['v']})"
        + (f" mask(%mask : {types['mask']})" if mask_shape is not None else "")
        + (f" bias(%bias : {types['bias']})" if bias_shape is not None else "")
        + f" outs(%out : {types['out']}) scale = {_f32_literal(scale)}"
        + (f" causal = {causal}" if causal else "")
    )
    text = (
        f"func.func @{_FUNCTION}({params}) attributes {{llvm.emit_c_interface}} {{\n"
        f"{op}\n"
        f"  return\n"
        f"}}\n"
    )
    signature = dict(
        dtype=element,
        q_shape=q_shape,
        k_shape=k_shape,
        v_shape=v_shape,
        mask_shape=mask_shape,
        mask_dtype=mask_dtype,
        bias_shape=bias_shape,
        bias_dtype=bias_dtype,
        out_shape=out_shape,
        scale=float(np.float32(scale)),
        causal=causal,
    )
    return text, signature


@contextlib.contextmanager
def _thread_device(rt, device):
    """Runs the block with `device` (None: the runtime's default) as this
    thread's CUDA device, then restores the thread's previous one. The
    runtime loads a kernel's module on each device at its first launch
    there, so one compiled kernel serves every device."""
    previous = rt.set_thread_device(-1 if device is None else device)
    try:
        yield
    finally:
        rt.set_thread_device(previous)


def _device_holding(rt, operands):
    """The one device whose memory holds every operand (None when none holds
    any: all empty). Raises ValueError for memory the driver does not know
    or operands on different devices: a kernel on one device would fault
    reading the other's."""
    holders = {}
    for operand in operands:
        if not operand.nbytes:
            continue
        device = operand.device
        if device is None:
            device = rt.pointer_device(operand.pointer)
        if device is None:
            raise ValueError(
                f"{operand.name} is not in CUDA device memory (the driver "
                f"does not know its address {operand.pointer:#x})")
        holders.setdefault(device, operand.name)
    if len(holders) > 1:
        raise ValueError("the operands are on different devices: " + ", ".join(
            f"{name} on cuda:{device}" for device, name in holders.items()))
    return next(iter(holders), None)


class CompiledKernel(_EngineOwner):
    """The result of compile_attention(target="cuda").

    Calling it runs the kernel on a CUDA device (the host code is compiled
    by MLIR's execution engine on first call, with libattn_cuda_runtime: see
    attn_mlir.cuda). With numpy arrays, they are copied to the memory of
    device `device` (an ordinal; None: the runtime's default, 0 unless
    mgpuSetDefaultDevice said otherwise) and the output is copied back and
    returned (float32 values for bf16 unless raw_bf16=True). With arrays
    already in device memory (objects with __cuda_array_interface__: torch
    CUDA tensors, CuPy arrays; bf16 as 16-bit integers,
    `t.view(torch.int16)`), all on one device, they are used in place on
    that device and `out`, there too, is required and returned. Either way
    the call returns when the output is complete. A failing CUDA call
    raises attn_mlir.cuda.CudaError.
    """

    def __init__(self, signature, source, host_llvm, objects, chip, fmt,
                 opt_level=2):
        self.signature = signature
        #: The attn.attention function on memrefs that was compiled.
        self.source = source
        #: Host code in the LLVM dialect, with the kernel embedded.
        self.host_llvm = host_llvm
        #: [(kernel module name, chip, kind, bytes)] of the gpu.binary ops.
        self.objects = objects
        self.chip = chip
        self.format = fmt
        self._opt_level = opt_level
        self._engine = None
        self._context = None
        self._engine_lock = threading.Lock()

    @property
    def out_shape(self):
        return self.signature["out_shape"]

    def _ensure_engine(self, rt):
        with self._engine_lock:
            if self._engine is None:
                self._context, self._engine = self._load_engine(rt)
            return self._engine

    def _load_engine(self, rt):
        context = Context()
        module = context.parse(self.host_llvm)
        engine = _create_engine(module, context, self._opt_level, [rt.path])
        # Initialization loads the kernel's module (a global constructor of
        # the host code): the driver's first call.
        lib.mlirExecutionEngineInitialize(engine)
        errors = rt.take_errors()
        if errors:
            lib.mlirExecutionEngineDestroy(engine)
            rt.take_errors()  # the unload of a module that did not load
            raise CudaError("loading the kernel", errors)
        return context, engine

    def __call__(self, q, k, v, mask=None, bias=None, out=None, raw_bf16=False,
                 device=None):
        sig = self.signature
        if device is not None and (not isinstance(device, int) or device < 0):
            raise ValueError(f"device must be a device ordinal (0, 1, ...), "
                             f"got {device!r}")
        operands = _operands(sig, q, k, v, mask, bias)
        rt = cuda_runtime()
        # Errors reported before this call are not this call's.
        rt.take_errors()
        if on_device(q, k, v, mask, bias, out):
            return self._run_on_device(rt, operands, out, device)
        arrays = [_host_operand(value, shape, element, name)
                  for name, value, shape, element in operands]
        out = _host_out(out, self.out_shape, sig["dtype"])
        with _thread_device(rt, device):
            self._run_from_host(rt, arrays, out)
        if sig["dtype"] == "bf16" and not raw_bf16:
            return bf16_to_f32(out)
        return out

    def _run_on_device(self, rt, operands, out, device):
        inputs = []
        for name, value, shape, element in operands:
            if not is_device_array(value):
                raise TypeError(
                    f"{name} is not in device memory, but other operands are: "
                    f"pass all of them (and out) on the device, or all as "
                    f"numpy arrays"
                )
            inputs.append(DeviceOperand(value, shape, element, name))
        if out is None or not is_device_array(out):
            raise TypeError(
                "with operands in device memory, out (of shape "
                f"{self.out_shape}) must be given in device memory too"
            )
        result = DeviceOperand(out, self.out_shape, self.signature["dtype"],
                                "out", writable=True)
        if any(result.overlaps(a) for a in inputs):
            raise ValueError("out must not overlap q, k, v, mask or bias")
        held = _device_holding(rt, inputs + [result])
        if device is not None and held is not None and device != held:
            raise ValueError(f"device={device}, but the operands are on "
                             f"cuda:{held}")
        with _thread_device(rt, device if held is None else held):
            engine = self._ensure_engine(rt)
            # The host code runs on a stream of its own: wait for the work
            # the producers of the operands may still have pending (their
            # streams).
            for stream in {a.stream for a in inputs + [result]} - {None}:
                rt.stream_synchronize(stream)
            _invoke(engine, [device_descriptor(a.pointer, a.shape)
                             for a in inputs + [result]])
            rt.check("running the kernel")
        return out

    def _run_from_host(self, rt, arrays, out):
        engine = self._ensure_engine(rt)
        stream = rt.stream_create()
        buffers = []
        try:
            for array in arrays + [out]:
                buffers.append(rt.alloc(array.nbytes, stream))
            for buffer, array in zip(buffers, arrays):
                rt.memcpy(buffer, array.ctypes.data, array.nbytes, stream)
            # The host code's launches are on a stream of their own.
            rt.stream_synchronize(stream)
            _invoke(engine, [device_descriptor(b, a.shape)
                             for b, a in zip(buffers, arrays + [out])])
            rt.check("running the kernel")
            rt.memcpy(out.ctypes.data, buffers[-1], out.nbytes, stream)
            rt.stream_synchronize(stream)
        except BaseException:
            try:
                rt.release(buffers, stream)
            except CudaError:
                pass  # the error raised is the first one
            raise
        rt.release(buffers, stream)

    @property
    def binary(self):
        """The kernel object: cubin bytes, PTX text (as bytes) or fatbin;
        the first of them where there are several (split-KV)."""
        return self.objects[0][3]

    @property
    def ptx(self):
        """The PTX text, for binary_format="isa"."""
        if self.format != "isa":
            raise ValueError("compile with binary_format='isa' for PTX")
        return self.binary.decode()


def _compile_cuda(text, signature, chip, fmt, block_q, block_kv, wgmma, tma,
                  warp_specialize, intra_warpgroup_overlap, pingpong,
                  rescale_threshold, split_kv, sm_count, pack_gqa, tf32,
                  context, opt_level):
    if fmt not in ("bin", "isa", "fatbin"):
        raise ValueError(
            f"binary_format must be 'bin', 'isa' or 'fatbin', got {fmt!r}")
    module = context.parse(text)
    module.verify()
    module.run(f"attn-gpu-pipeline{{chip={chip} format={fmt} "
               f"block-q={int(block_q)} block-kv={int(block_kv)} "
               f"wgmma={int(bool(wgmma))} tma={int(bool(tma))} "
               f"warp-specialize={int(bool(warp_specialize))} "
               f"intra-warpgroup-overlap={int(bool(intra_warpgroup_overlap))} "
               f"pingpong={int(bool(pingpong))} "
               f"rescale-threshold={float(rescale_threshold)!r} "
               f"split-kv={int(split_kv)} sm-count={int(sm_count)} "
               f"pack-gqa={int(bool(pack_gqa))} tf32={int(bool(tf32))}}}")
    host = str(module)
    objects = gpu_binary.extract(host)
    if not objects:
        raise MLIRError("the GPU pipeline produced no gpu.binary", [])
    return CompiledKernel(signature, text, host, objects, chip, fmt,
                          opt_level)


def compile_attention(
    q_shape,
    k_shape,
    v_shape,
    dtype="f32",
    scale=None,
    causal=None,
    mask_shape=None,
    mask_dtype="i1",
    bias_shape=None,
    bias_dtype=None,
    target="cpu",
    opt_level=2,
    context=None,
    chip="sm_90",
    binary_format="bin",
    block_q=0,
    block_kv=0,
    wgmma=False,
    tma=False,
    warp_specialize=False,
    intra_warpgroup_overlap=True,
    pingpong=False,
    rescale_threshold=8.0,
    split_kv=1,
    sm_count=0,
    pack_gqa=False,
    tf32=False,
    threads=1,
):
    """Compiles attn.attention for the given shapes ([B..., H, L, D]),
    element type ("f32", "f16", "bf16"), scale (default 1/sqrt(Dqk)), causal
    alignment (None, "top_left", "bottom_right"), optional mask (bool, "i1",
    or a float type added to the scores) and bias, for `target`.

    target="cpu": returns a CompiledAttention that runs on numpy arrays,
    on `threads` threads (1: this one; N > 1: N OpenMP threads; 0: the
    OpenMP runtime's default, OMP_NUM_THREADS or one per core). Threads
    need LLVM's OpenMP runtime: the libomp.so of the LLVM the package was
    built against, or the one ATTN_MLIR_OPENMP_LIBRARY names.
    target="cuda": returns a CompiledKernel: the fused tensor-core kernel
    (--attn-gpu-pipeline) for `chip` as a cubin (binary_format="bin"), PTX
    ("isa") or fatbin, plus the host code (LLVM dialect) that launches it
    through the mgpu* runtime (libattn_cuda_runtime). f16/bf16 inputs run
    on mma.sync m16n8k16, f32 on the slower TF32 path: 3xTF32 (each
    operand split into two TF32 parts, three mma.sync per product, about
    f32's accuracy), or with tf32=True one mma.sync on operands rounded to
    TF32 (10 mantissa bits, f16's accuracy; faster). block_q (64 or 128
    query rows per block) and block_kv (keys per step) override the
    kernel's default tiles; 0 keeps them (docs/gpu.md). wgmma=True
    selects the Hopper kernel (wgmma tensor-core ops; chip="sm_90a",
    f16/bf16, head dims multiples of 64); tma=True with it loads Q, K and
    V tiles by TMA (tensor maps encoded by the runtime at launch), and
    warp_specialize=True (implies tma) builds FlashAttention-3's structure:
    a producer warpgroup issues the loads for block_q / 64 consumer
    warpgroups (block_q 64, 128 or 192; block_kv up to 256), each running
    a block's softmax while the tensor cores compute the previous block's
    P V unless intra_warpgroup_overlap=False; pingpong=True makes the
    consumer warpgroups take turns issuing their matmuls.
    rescale_threshold (base 2, at most 8) is the lazy rescaling rule's:
    O is rescaled only when a row maximum rises more than that; negative
    rescales at every step (FlashAttention-2).
    split_kv splits each query block's keys over several grid blocks whose
    partial results a second kernel merges (flash-decoding, for grids too
    small to fill the GPU): 1 never, N always N splits, 0 chooses at run
    time from the grid and sm_count (0: from the chip). The kernel then
    has three objects (the single kernel, the partial one and the merge).
    pack_gqa=True makes each key/value head's group of query heads the
    query rows of one kernel (--attn-pack-gqa) where that fills the
    blocks' rows better, as in decoding: K and V are then read once per
    group instead of once per query head.
    Invalid shapes or flags raise MLIRError with the op verifier's message.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(
            f"threads must be an int >= 0 (1: one thread, 0: the OpenMP "
            f"runtime's default), got {threads!r}"
        )
    if target == "cuda" and threads != 1:
        raise ValueError("threads is for target='cpu' (the host's threads)")
    text, signature = attention_module(
        q_shape,
        k_shape,
        v_shape,
        dtype,
        scale,
        causal,
        mask_shape,
        mask_dtype,
        bias_shape,
        bias_dtype,
    )
    if target == "cuda":
        return _compile_cuda(text, signature, chip, binary_format, block_q,
                             block_kv, wgmma, tma, warp_specialize,
                             intra_warpgroup_overlap, pingpong,
                             rescale_threshold, split_kv, sm_count,
                             pack_gqa, tf32, context or Context(), opt_level)
    context = context or Context()
    module = context.parse(text)
    module.verify()
    libraries = _float16_libraries()
    if threads == 1:
        module.run_cpu_pipeline()
    else:
        libraries.append(_openmp_library())
        module.run(f"attn-cpu-pipeline{{threads=true num-threads={threads}}}")
    llvm = str(module)
    engine = _create_engine(module, context, opt_level, libraries)
    lib.mlirExecutionEngineInitialize(engine)
    return CompiledAttention(signature, text, llvm, context, engine)


def _openmp_library():
    """The OpenMP runtime that code compiled with threads calls: LLVM's
    libomp.so, of the LLVM the package was built against (a system
    libomp.so may be an older LLVM's, without the entry points the OpenMP
    translation of this one emits)."""
    path = os.environ.get("ATTN_MLIR_OPENMP_LIBRARY")
    if not path:
        try:
            from ._build_config import OPENMP_LIBRARY as path
        except ImportError:
            path = None
    if not path or not os.path.isfile(path):
        raise RuntimeError(
            f"threads need LLVM's OpenMP runtime (libomp.so), not found at "
            f"{path!r}: install it (Debian: libomp-22-dev) or set "
            f"ATTN_MLIR_OPENMP_LIBRARY"
        )
    return path


def _float16_libraries():
    """MLIR's bf16 conversion functions (`__truncsfbf2`), which LLVM calls
    for bf16 values on hosts without bf16 instructions (AVX2): what
    mlir-runner gets from libmlir_c_runner_utils.so. The CPU pipeline's
    kernels carry bf16 as i16 (`--attn-llvm-bf16-as-i16`), so only a module
    that pass leaves unchanged needs them. Empty where the library is
    missing."""
    try:
        from ._build_config import FLOAT16_UTILS_LIBRARY as path
    except ImportError:
        return []
    return [path] if path and os.path.isfile(path) else []


_cache = {}


def _shape_and_element(value, name, device):
    """(shape, element type) of an operand; the element type is None for
    16-bit integers (bf16 bit patterns, which dtype="bf16" must say)."""
    if device:
        return element_of(value, name)
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return array.shape, "i1"
    if array.dtype in (np.uint16, np.int16):
        return array.shape, None
    return array.shape, _dtype_name(array.dtype)


def _bf16_bits_need_dtype(name):
    return ValueError(
        f"{name} holds 16-bit integers: pass dtype='bf16' if they are "
        f"bfloat16 bit patterns"
    )


def attention(q, k, v, mask=None, bias=None, scale=None, causal=None, dtype=None,
              threads=1, target="cpu", chip="sm_90", device=None):
    """Runs attention and returns the output.

    target="cpu": on numpy arrays, on `threads` threads as in
    compile_attention (1: this thread; 0: one per core). target="cuda": on
    a CUDA device, with the kernel built for `chip`: numpy arrays are
    copied to device `device` (None: the default, 0) and back; arrays in
    device memory (torch CUDA tensors, CuPy arrays) are used in place, on
    their device, and the output is a new array of the same kind there
    (CompiledKernel says how).

    The element type is `dtype`, or q's (float32 or float16; bfloat16 needs
    dtype="bf16", with float inputs rounded to it or 16-bit bit patterns).
    A bool mask says where a query may attend; a float mask is added to the
    scores. Kernels are compiled once per signature and cached.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if device is not None and target != "cuda":
        raise ValueError("device is a CUDA device: use target='cuda'")
    on_gpu = on_device(q, k, v, mask, bias)
    if on_gpu and target != "cuda":
        raise TypeError("the operands are in device memory: use target='cuda'")
    if on_gpu:
        for name, value in (("q", q), ("k", k), ("v", v), ("mask", mask),
                            ("bias", bias)):
            if value is not None and not is_device_array(value):
                raise TypeError(
                    f"{name} is not in device memory, but other operands are"
                )
    if not on_gpu:
        q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
        mask = None if mask is None else np.asarray(mask)
        bias = None if bias is None else np.asarray(bias)
    q_shape, q_element = _shape_and_element(q, "q", on_gpu)
    k_shape, _ = _shape_and_element(k, "k", on_gpu)
    v_shape, _ = _shape_and_element(v, "v", on_gpu)
    if dtype is not None:
        element = _dtype_name(dtype)
    elif q_element is None:
        raise _bf16_bits_need_dtype("q")
    else:
        element = q_element
    mask_shape = mask_dtype = bias_shape = bias_dtype = None
    if mask is not None:
        mask_shape, mask_dtype = _shape_and_element(mask, "mask", on_gpu)
        if mask_dtype is None:
            if element != "bf16":
                raise _bf16_bits_need_dtype("mask")
            mask_dtype = "bf16"
    if bias is not None:
        bias_shape, bias_dtype = _shape_and_element(bias, "bias", on_gpu)
        if element == "bf16":
            bias_dtype = "bf16"
        elif bias_dtype is None:
            raise _bf16_bits_need_dtype("bias")
    key = (
        q_shape,
        k_shape,
        v_shape,
        element,
        None if scale is None else float(scale),
        causal,
        mask_shape,
        mask_dtype,
        bias_shape,
        bias_dtype,
        threads,
        target,
        chip if target == "cuda" else None,
    )
    kernel = _cache.get(key)
    if kernel is None:
        kernel = compile_attention(
            q_shape,
            k_shape,
            v_shape,
            element,
            scale,
            causal,
            mask_shape,
            mask_dtype or "i1",
            bias_shape,
            bias_dtype,
            threads=threads,
            target=target,
            chip=chip,
        )
        _cache[key] = kernel
    if target == "cpu":
        return kernel(q, k, v, mask=mask, bias=bias)
    out = new_device_array(q, kernel.out_shape) if on_gpu else None
    return kernel(q, k, v, mask=mask, bias=bias, out=out, device=device)
