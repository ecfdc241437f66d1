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
import ctypes
import numpy as np, attn_mlir
from attn_mlir import cuda
from attn_mlir.cuda import CudaError

class FakeDeviceArray:
    # A copy of `array` in the fake driver's memory of `device` (host memory
    # it allocated, and knows the device of).
    def __init__(self, array, stream=None, device=0):
        rt = cuda.runtime()
        previous = rt.set_thread_device(device)
        self.pointer = rt.alloc(array.nbytes, 0)
        rt.set_thread_device(previous)
        ctypes.memmove(self.pointer, array.ctypes.data, array.nbytes)
        self.__cuda_array_interface__ = dict(
            shape=array.shape, typestr=array.dtype.str, strides=None,
            data=(self.pointer, False), version=3, stream=stream)

class HostArray:
    # Host memory that claims to be device memory.
    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = dict(
            shape=array.shape, typestr=array.dtype.str, strides=None,
            data=(array.ctypes.data, False), version=3, stream=None)

rng = np.random.default_rng(0)
q = rng.standard_normal((2, 4, 100, 64)).astype(np.float16)
k = rng.standard_normal((2, 2, 80, 64)).astype(np.float16)
v = rng.standard_normal((2, 2, 80, 64)).astype(np.float16)
o = np.zeros((2, 4, 100, 64), np.float16)

def f16_kernel():
    return attn_mlir.compile_attention(q.shape, k.shape, v.shape,
                                       dtype="f16", target="cuda")
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
        kernel = f16_kernel()
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
        kernel = f16_kernel()
        args = [FakeDeviceArray(a, stream=7) for a in (q, k, v)]
        result = FakeDeviceArray(o)
        print("pointers", *[hex(a.pointer) for a in args + [result]])
        returned = kernel(*args, out=result)
        print("returned out", returned is result)
    """, FAKE_CUDA_LAUNCH_PARAMS="44")
    pointers = re.search(r"pointers (.*)", out).group(1).split()
    out = out.split("pointers")[1]
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
    kernel = f16_kernel()
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
        kernel = f16_kernel()
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


# Two devices (FAKE_CUDA_DEVICES=2): the fake driver refuses a launch of a
# function or on a stream of another device's context, so a kernel loaded
# on one device only, or memory on the wrong one, shows.

def test_numpy_operands_run_on_the_device_given():
    out, _ = run("""
        kernel = f16_kernel()
        kernel(q, k, v, device=1)
        print("called on 1")
        kernel(q, k, v)
        print("called on the default")
        attn_mlir.attention(q, k, v, target="cuda", device=1)
    """, FAKE_CUDA_DEVICES="2")
    first, second, third = out.split("called on ")
    # The module is loaded on device 1 at the first call; everything of
    # that call is device 1's.
    assert "cuModuleLoadData device=1" in first, first
    assert re.findall(r"cuMemAllocFromPoolAsync \d+ stream=\d+ device=(\d)",
                      first) == ["1"] * 4, first
    assert re.search(r"cuLaunchKernel .* device=1", first), first
    # On device 0 the same kernel is loaded again, once.
    assert second.count("cuModuleLoadData device=0") == 1, second
    assert re.search(r"cuLaunchKernel .* device=0", second), second
    assert "device=1" not in second, second
    assert re.search(r"cuLaunchKernel .* device=1", third), third


def test_device_operands_run_on_their_device():
    out, _ = run("""
        kernel = f16_kernel()
        args = [FakeDeviceArray(a, device=1) for a in (q, k, v)]
        print("calling")
        kernel(*args, out=FakeDeviceArray(o, device=1))
        print("called")
        for name, call in (
                ("mixed", lambda: kernel(args[0], FakeDeviceArray(k), args[2],
                                         out=FakeDeviceArray(o, device=1))),
                ("device=0", lambda: kernel(*args, device=0,
                                            out=FakeDeviceArray(o, device=1))),
                ("host", lambda: kernel(HostArray(q), *args[1:],
                                        out=FakeDeviceArray(o, device=1)))):
            try:
                call()
            except ValueError as error:
                print(name, "refused:", error)
    """, FAKE_CUDA_DEVICES="2")
    call = out.split("calling")[1].split("called")[0]
    assert "cuModuleLoadData device=1" in call
    assert re.search(r"cuLaunchKernel .* device=1", call), call
    assert ("mixed refused: the operands are on different devices: "
            "q on cuda:1, k on cuda:0") in out, out
    assert "device=0 refused: device=0, but the operands are on cuda:1" in out
    assert "host refused: q is not in CUDA device memory (the driver does " \
        "not know its address 0x" in out, out
    assert out.count("cuLaunchKernel") == 1, out
