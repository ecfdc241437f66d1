"""CompiledKernel called from Python (target="cuda"), without a GPU: the
host code runs against test/Runtime/Inputs/fake-driver.c (device memory on
the host, every driver call printed), so these check what reaches the
driver (allocations, copies, the launch and its pointers, the frees) and
that a failing driver call raises. What the kernel computes is checked by
the emulation tests and the device check (docs/gpu.md)."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np

import pytest

import attn_mlir
from attn_mlir import cuda

FAKE_DRIVER = os.environ.get("ATTN_TEST_FAKE_CUDA_DRIVER")

needs_runtime = pytest.mark.skipif(
    not os.path.isfile(cuda.runtime_library_path()),
    reason="libattn_cuda_runtime.so is not built (no cuda.h)",
)
needs_fake_driver = pytest.mark.skipif(
    not FAKE_DRIVER, reason="ATTN_TEST_FAKE_CUDA_DRIVER not set (pytest.test sets it)"
)

# Runs in a fresh process: the runtime opens its driver once per process.
PRELUDE = """
import numpy as np, attn_mlir
from attn_mlir.cuda import CudaError

class FakeDeviceArray:
    # An array "in device memory" for the fake driver, whose device
    # memory is host memory.
    def __init__(self, array, stream=None):
        self.array = array
        self.__cuda_array_interface__ = dict(
            shape=array.shape, typestr=array.dtype.str, strides=None,
            data=(array.ctypes.data, False), version=3, stream=stream)

rng = np.random.default_rng(0)
q = rng.standard_normal((2, 4, 100, 64)).astype(np.float16)
k = rng.standard_normal((2, 2, 80, 64)).astype(np.float16)
v = rng.standard_normal((2, 2, 80, 64)).astype(np.float16)
"""


def run(code, **env):
    full_env = dict(os.environ, ATTN_CUDA_DRIVER=FAKE_DRIVER or "")
    full_env.update(env)
    result = subprocess.run(
        [sys.executable, "-u", "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True, text=True, env=full_env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, result.stderr


pytestmark = [needs_runtime, needs_fake_driver]


def test_numpy_operands_go_to_the_device_and_the_output_comes_back():
    out, _ = run("""
        kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                             dtype="f16", target="cuda")
        o = kernel(q, k, v)
        print("result", o.shape, o.dtype)
        kernel(q, k, v)
        print("second call")
    """)
    first, second = out.split("second call")[0].split("result")
    # q, k, v and out allocated on one stream and q, k, v copied there;
    # the launch (grid: 1 block of 128 rows, 4 heads, 2 batches) on the
    # host code's stream; out copied back; everything freed.
    calls = [line.split()[0] + " " + line.split()[1]
             for line in first.splitlines()
             if re.match(r"cuMem(AllocFromPool|cpy|Free)Async", line)]
    assert calls == [
        "cuMemAllocFromPoolAsync 102400", "cuMemAllocFromPoolAsync 40960",
        "cuMemAllocFromPoolAsync 40960", "cuMemAllocFromPoolAsync 102400",
        "cuMemcpyAsync 102400", "cuMemcpyAsync 40960", "cuMemcpyAsync 40960",
        "cuMemcpyAsync 102400",
        "cuMemFreeAsync stream=1", "cuMemFreeAsync stream=1",
        "cuMemFreeAsync stream=1", "cuMemFreeAsync stream=1",
    ], first
    order = [line for line in first.splitlines()
             if re.match(r"cu(LaunchKernel|StreamSynchronize|MemcpyAsync)", line)]
    assert order[3] == "cuStreamSynchronize", order  # inputs in place
    assert order[4].startswith("cuLaunchKernel grid=1,4,2 block=128"), order
    assert order[5:8] == ["cuStreamSynchronize", "cuMemcpyAsync 102400 stream=1",
                          "cuStreamSynchronize"], order
    assert "(2, 4, 100, 64) float16" in second
    # The second call reuses the engine (the module is loaded once) and
    # the streams.
    after = out.split("second call")[0].split("result")[1]
    assert after.count("cuLaunchKernel") == 1
    assert "cuStreamCreate" not in after


def test_device_operands_are_used_in_place():
    # A kernel's parameters begin with the memrefs' descriptors, in the
    # order of the launch's operands; the pointers of all four are there.
    out, _ = run("""
        kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                             dtype="f16", target="cuda")
        o = np.zeros((2, 4, 100, 64), np.float16)
        args = [FakeDeviceArray(a, stream=7) for a in (q, k, v)]
        result = FakeDeviceArray(o)
        print("pointers", *[hex(a.ctypes.data) for a in (q, k, v, o)])
        returned = kernel(*args, out=result)
        print("returned out", returned is result)
    """, FAKE_CUDA_LAUNCH_PARAMS="44")
    pointers = re.search(r"pointers (.*)", out).group(1).split()
    launch = re.search(r"cuLaunchKernel .* params=(\S+)", out).group(1)
    params = launch.split(",")
    for pointer in pointers:
        assert pointer in params, (pointer, params)
    assert "returned out True" in out
    # No copies, no allocations; the producers' stream (7) waited for.
    assert "cuMem" not in out
    assert out.index("cuStreamSynchronize") < out.index("cuLaunchKernel")


def test_attention_runs_on_the_device_with_numpy_arrays():
    out, _ = run("""
        o = attn_mlir.attention(q, k, v, causal="bottom_right", target="cuda")
        print("result", o.shape, o.dtype)
        b = attn_mlir.attention(q.astype(np.float32), k.astype(np.float32),
                                v.astype(np.float32), dtype="bf16",
                                mask=rng.random((2, 1, 1, 80)) > 0.5,
                                target="cuda")
        print("bf16", b.shape, b.dtype)
    """)
    assert "result (2, 4, 100, 64) float16" in out
    # bf16 comes back as float32 values; the bool mask is one byte a key.
    assert "bf16 (2, 4, 100, 64) float32" in out
    assert "cuMemAllocFromPoolAsync 160 " in out


CALL_TWICE = """
    kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                         dtype="f16", target="cuda")
    for attempt in range(2):
        try:
            kernel(q, k, v)
            print("no error")
        except CudaError as error:
            print("raised:", error)
"""


@pytest.mark.parametrize("call", ["cuLaunchKernel", "cuStreamSynchronize",
                                  "cuMemcpyAsync"])
def test_a_failing_driver_call_raises(call):
    out, err = run(CALL_TWICE, FAKE_CUDA_FAIL=call)
    raised = re.findall(r"raised: (.*)", out)
    assert len(raised) == 2, out
    assert call in raised[0] and "CUDA_ERROR_ILLEGAL_ADDRESS" in raised[0]
    assert "no error" not in out
    # The device memory is freed after a failure too.
    assert out.count("cuMemFreeAsync") == 8
    assert "attn_cuda_runtime: " in err  # and reported on stderr


def test_no_driver_raises_on_every_call():
    out, err = run(CALL_TWICE, ATTN_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    raised = re.findall(r"raised: (.*)", out)
    assert len(raised) == 2, out + err
    for line in raised:
        assert line.startswith("loading the kernel failed: cuInit failed: "
                               "no CUDA driver (/nonexistent/libcuda.so.1"), line
    # Printed once.
    assert err.count("no CUDA driver") == 1, err


def test_a_kernel_that_does_not_load_raises():
    out, _ = run("""
        kernel = attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                             dtype="f16", target="cuda")
        try:
            kernel(q, k, v)
        except CudaError as error:
            print("raised:", error)
    """, FAKE_CUDA_FAIL="cuModuleLoadData")
    assert ("raised: loading the kernel failed: mgpuModuleLoad: "
            "cuModuleLoadData") in out, out
    assert "CUDA_ERROR_NO_BINARY_FOR_GPU" in out
    assert "cuLaunchKernel" not in out and "cuMem" not in out


# The refusals, checked before the driver is used (in this process).

class DeviceArray:
    def __init__(self, shape, typestr="<f2", strides=None, pointer=4096,
                 readonly=False):
        self.__cuda_array_interface__ = dict(
            shape=shape, typestr=typestr, strides=strides,
            data=(pointer, readonly), version=2)


SHAPE = (1, 2, 16, 64)


@pytest.fixture(scope="module")
def kernel():
    return attn_mlir.compile_attention(SHAPE, SHAPE, SHAPE, dtype="f16",
                                       target="cuda")


def nbytes(shape):
    return 2 * int(np.prod(shape))


@pytest.mark.parametrize("arguments,error,message", [
    (dict(q=np.zeros(SHAPE, np.float16)), TypeError,
     "q is not in device memory, but other operands are"),
    (dict(out=None), TypeError, "out .* must be given in device memory"),
    (dict(k=DeviceArray(SHAPE, "<f4")), TypeError,
     r"k: this kernel takes f16 \(typestr <f2\), got <f4"),
    (dict(v=DeviceArray((1, 2, 8, 64))), ValueError,
     r"v has shape \(1, 2, 8, 64\), this kernel takes \(1, 2, 16, 64\)"),
    (dict(q=DeviceArray(SHAPE, strides=(4096, 2048, 256, 2))), ValueError,
     "q must be C-contiguous"),
    (dict(out=DeviceArray(SHAPE, readonly=True, pointer=1 << 30)), ValueError,
     "out is read-only"),
    (dict(out=DeviceArray(SHAPE, pointer=4096 + nbytes(SHAPE) - 2)), ValueError,
     "out must not overlap"),
    (dict(mask=DeviceArray((1, 1, 1, 16), "|b1")), ValueError,
     "mask given, but this kernel was compiled without one"),
])
def test_bad_device_arguments_are_refused(kernel, arguments, error, message):
    args = dict(q=DeviceArray(SHAPE), k=DeviceArray(SHAPE, pointer=1 << 20),
                v=DeviceArray(SHAPE, pointer=1 << 21),
                out=DeviceArray(SHAPE, pointer=1 << 22))
    args.update(arguments)
    with pytest.raises(error, match=message):
        kernel(**args)


def test_device_arrays_need_the_cuda_target():
    q = DeviceArray(SHAPE)
    with pytest.raises(TypeError, match="device memory: use target='cuda'"):
        attn_mlir.attention(q, q, q)
    with pytest.raises(TypeError, match="k is not in device memory, but "
                       "other operands are"):
        attn_mlir.attention(q, np.zeros(SHAPE, np.float16), q, target="cuda")
    with pytest.raises(ValueError, match="pass dtype='bf16'"):
        attn_mlir.attention(*[np.zeros(SHAPE, np.uint16)] * 3, target="cuda")
