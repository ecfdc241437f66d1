"""attn_mlir.attention / compile_attention: numerics on the CPU against a
float64 reference, and the refusals."""

import math
import re

import numpy as np

import pytest

import attn_mlir
from attn_mlir import MLIRError
from reference import reference_attention

RNG = np.random.default_rng(1234)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# (q shape, k shape, v shape, causal, mask, bias): GQA, MQA, MHA, no batch
# dims and two batch dims, both causal alignments with Lq != Lk.
CASES = {
    "mha": ((2, 4, 6, 8), (2, 4, 6, 8), (2, 4, 6, 8), None, None, None),
    "gqa-bottom-right-bool-mask": (
        (2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 6), "bottom_right",
        RNG.random((2, 1, 1, 7)) > 0.3, None,
    ),
    "mqa-top-left-bias": (
        (1, 4, 7, 16), (1, 1, 5, 16), (1, 1, 5, 16), "top_left",
        None, normal(1, 4, 7, 5),
    ),
    "float-mask-no-batch": (
        (3, 4, 8), (3, 6, 8), (3, 6, 4), None, normal(1, 4, 6), None,
    ),
    "two-batch-dims": (
        (2, 3, 2, 4, 8), (2, 3, 1, 4, 8), (2, 3, 1, 4, 8), "top_left", None, None,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_f32_matches_the_reference(case):
    q_shape, k_shape, v_shape, causal, mask, bias = CASES[case]
    q, k, v = normal(*q_shape), normal(*k_shape), normal(*v_shape)
    out = attn_mlir.attention(q, k, v, mask=mask, bias=bias, causal=causal)
    expected = reference_attention(
        q, k, v, mask, bias, scale=1 / math.sqrt(q_shape[-1]), causal=causal
    )
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_rows_without_a_visible_key_are_zero():
    # Lq > Lk with bottom_right: the first rows see no key.
    q, k, v = normal(1, 1, 4, 8), normal(1, 1, 2, 8), normal(1, 1, 2, 8)
    out = attn_mlir.attention(q, k, v, causal="bottom_right", scale=0.5)
    assert np.all(out[0, 0, :2] == 0)
    np.testing.assert_allclose(
        out, reference_attention(q, k, v, scale=0.5, causal="bottom_right"), atol=1e-6
    )


def test_f16_matches_the_reference():
    q, k, v = (normal(2, 4, 6, 16).astype(np.float16) for _ in range(3))
    bias = normal(1, 1, 6, 6).astype(np.float16)
    out = attn_mlir.attention(q, k, v, bias=bias, causal="top_left", scale=0.25)
    assert out.dtype == np.float16
    expected = reference_attention(q, k, v, bias=bias, scale=0.25, causal="top_left")
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2e-3, atol=2e-3)


def test_bf16_matches_the_reference():
    q, k, v = normal(1, 4, 5, 8), normal(1, 2, 9, 8), normal(1, 2, 9, 8)
    out = attn_mlir.attention(q, k, v, causal="bottom_right", dtype="bf16")
    assert out.dtype == np.float32  # values; raw_bf16=True gives the bits
    rounded = [attn_mlir.bf16_to_f32(attn_mlir.f32_to_bf16(x)) for x in (q, k, v)]
    expected = reference_attention(
        *rounded, scale=1 / math.sqrt(8), causal="bottom_right"
    )
    np.testing.assert_allclose(out, expected, rtol=2e-2, atol=2e-2)


def test_bf16_conversions_round_to_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf], dtype=np.float32)
    bits = attn_mlir.f32_to_bf16(values)
    assert list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80]
    np.testing.assert_array_equal(
        attn_mlir.bf16_to_f32(bits), [1.0, 1.0, 1.015625, -2.5, np.inf]
    )


@pytest.mark.parametrize("threads", [2, 0])
def test_threads_match_the_reference(threads):
    # Several causal tiles of unequal cost per head (Lq 150: 64-row tiles),
    # GQA and a mask: the tiles run as an OpenMP loop.
    q, k, v = normal(2, 4, 150, 16), normal(2, 2, 170, 16), normal(2, 2, 170, 8)
    mask = RNG.random((2, 1, 1, 170)) > 0.2
    kernel = attn_mlir.compile_attention(
        q.shape, k.shape, v.shape, causal="bottom_right", mask_shape=mask.shape,
        threads=threads,
    )
    assert "omp.parallel" in kernel.llvm
    assert ("num_threads" in kernel.llvm) == (threads != 0)
    expected = reference_attention(
        q, k, v, mask, scale=1 / math.sqrt(16), causal="bottom_right"
    )
    for _ in range(2):
        np.testing.assert_allclose(kernel(q, k, v, mask=mask), expected,
                                   rtol=1e-5, atol=1e-5)
    out = attn_mlir.attention(q, k, v, mask=mask, causal="bottom_right",
                              threads=threads)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_the_cpu_kernel_is_the_fused_one():
    # The op on memrefs goes through --attn-tile: no [Lq, Lk] score buffer,
    # neither as a type nor as an allocation's constant size (96 * 96
    # elements or their bytes; SSA names like %9216 are not sizes).
    shape = (1, 2, 96, 16)
    kernel = attn_mlir.compile_attention(shape, shape, shape)
    assert "96x96" not in kernel.llvm
    assert not re.search(r"\b(9216|36864) : ", kernel.llvm)
    q, k, v = normal(*shape), normal(*shape), normal(*shape)
    np.testing.assert_allclose(kernel(q, k, v),
                               reference_attention(q, k, v, scale=0.25),
                               rtol=1e-5, atol=1e-5)


def test_one_buffer_for_q_k_and_v():
    x = normal(1, 2, 70, 16)
    kernel = attn_mlir.compile_attention(x.shape, x.shape, x.shape,
                                         causal="top_left")
    np.testing.assert_allclose(
        kernel(x, x, x),
        reference_attention(x, x, x, scale=0.25, causal="top_left"),
        rtol=1e-5, atol=1e-5)


def test_out_overlapping_an_input_is_refused():
    x = normal(1, 1, 8, 8)
    kernel = attn_mlir.compile_attention(x.shape, x.shape, x.shape)
    with pytest.raises(ValueError, match="out must not overlap"):
        kernel(x, x.copy(), x.copy(), out=x)


def test_one_thread_uses_no_openmp():
    shape = (1, 2, 130, 8)
    kernel = attn_mlir.compile_attention(shape, shape, shape)
    assert "omp." not in kernel.llvm


@pytest.mark.parametrize("threads", [-1, True, 1.5, "2"])
def test_bad_thread_counts_are_refused(threads):
    with pytest.raises(ValueError, match="threads must be an int >= 0"):
        attn_mlir.compile_attention((1, 1, 4, 8), (1, 1, 4, 8), (1, 1, 4, 8),
                                    threads=threads)


def test_threads_are_for_the_cpu():
    with pytest.raises(ValueError, match="threads is for target='cpu'"):
        attn_mlir.compile_attention((1, 1, 64, 64), (1, 1, 64, 64),
                                    (1, 1, 64, 64), dtype="bf16",
                                    target="cuda", threads=4)


def test_threads_without_the_openmp_runtime_say_so(monkeypatch, tmp_path):
    missing = str(tmp_path / "libomp.so")
    monkeypatch.setenv("ATTN_MLIR_OPENMP_LIBRARY", missing)
    with pytest.raises(RuntimeError, match="OpenMP runtime.*ATTN_MLIR_OPENMP_LIBRARY"):
        attn_mlir.compile_attention((1, 1, 4, 8), (1, 1, 4, 8), (1, 1, 4, 8),
                                    threads=2)


def test_a_compiled_kernel_runs_many_times():
    shape = (1, 2, 4, 8)
    kernel = attn_mlir.compile_attention(shape, shape, shape, scale=0.125)
    assert "attn.attention" in kernel.mlir and "scale = 0.125" in kernel.mlir
    assert "llvm.func @_mlir_ciface_attention" in kernel.llvm
    for _ in range(3):
        q, k, v = normal(1, 2, 4, 8), normal(1, 2, 4, 8), normal(1, 2, 4, 8)
        out = np.zeros((1, 2, 4, 8), dtype=np.float32)
        assert kernel(q, k, v, out=out) is out
        expected = reference_attention(q, k, v, scale=0.125)
        np.testing.assert_allclose(out, expected, atol=1e-5)


def test_wrong_arguments_are_refused():
    kernel = attn_mlir.compile_attention((1, 1, 2, 4), (1, 1, 2, 4), (1, 1, 2, 4))
    with pytest.raises(ValueError, match="q has shape"):
        kernel(normal(1, 1, 3, 4), normal(1, 1, 2, 4), normal(1, 1, 2, 4))
    with pytest.raises(ValueError, match="compiled without one"):
        kernel(
            normal(1, 1, 2, 4),
            normal(1, 1, 2, 4),
            normal(1, 1, 2, 4),
            mask=np.ones((1, 1, 1, 2), bool),
        )


def test_invalid_shapes_raise_the_verifier_error():
    with pytest.raises(MLIRError) as info:
        attn_mlir.compile_attention((1, 4, 2, 8), (1, 3, 2, 8), (1, 3, 2, 8))
    assert "(Hq) is 4, not a multiple of k dim 1 (Hkv) 3" in str(info.value)


def test_non_finite_scale_raises_the_verifier_error():
    shape = (1, 1, 2, 4)
    with pytest.raises(MLIRError, match="scale must be finite, got NaN"):
        attn_mlir.compile_attention(shape, shape, shape, scale=float("nan"))


def test_cuda_target_compiles_the_tensor_core_kernel():
    shape = (1, 8, 128, 64)
    kernel = attn_mlir.compile_attention(
        shape, shape, shape, dtype="bf16", causal="top_left", target="cuda",
        binary_format="isa")
    assert isinstance(kernel, attn_mlir.CompiledKernel)
    assert kernel.chip == "sm_90" and len(kernel.objects) == 1
    ptx = kernel.ptx
    assert ".target sm_90" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans" in ptx
    assert "cp.async.cg.shared.global" in ptx
    # Host code in the LLVM dialect; the launch becomes mgpu* calls when it
    # is translated to LLVM IR.
    assert "llvm.func @attention" in kernel.host_llvm
    assert "gpu.launch_func" in kernel.host_llvm
    assert "llvm.emit_c_interface" in kernel.source


def test_cuda_target_takes_f32_through_tf32():
    # 3xTF32 by default: three times the mma.sync of plain TF32 (tf32=True).
    shape = (1, 2, 64, 64)
    mma = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    split, plain = (
        attn_mlir.compile_attention(shape, shape, shape, dtype="f32",
                                    target="cuda", binary_format="isa",
                                    tf32=tf32).ptx.count(mma)
        for tf32 in (False, True))
    assert plain > 0 and split == 3 * plain, (split, plain)


def test_cuda_target_takes_tile_sizes():
    shape = (1, 2, 100, 64)
    default = attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                          target="cuda", binary_format="isa")
    small = attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                        target="cuda", binary_format="isa",
                                        block_q=64, block_kv=32)
    # Dynamic shared memory of the launch: Q + 2 K + 2 V blocks, rows of
    # 64 + 8 f16 elements: 128 x 64 tiles by default, 64 x 32 asked for.
    assert "llvm.mlir.constant(55296 : i32)" in default.host_llvm
    assert "llvm.mlir.constant(27648 : i32)" in small.host_llvm
    with pytest.raises(MLIRError, match="block-q must be 64 or 128"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                    target="cuda", block_q=96)


def test_cuda_target_takes_split_kv():
    # Decoding: one query row per sequence, 4096 keys.
    q, kv = (2, 8, 1, 128), (2, 8, 4096, 128)
    auto = attn_mlir.compile_attention(q, kv, kv, dtype="bf16", target="cuda",
                                       binary_format="isa", split_kv=0)
    # The single kernel, the partial kernel and the merge, with the f32
    # partials in device memory for as long as the call.
    assert len(auto.objects) == 3
    assert auto.host_llvm.count("gpu.launch_func") == 3
    assert auto.host_llvm.count("llvm.call @mgpuMemAlloc") == 2
    assert auto.host_llvm.count("llvm.call @mgpuMemFree") == 2
    forced = attn_mlir.compile_attention(q, kv, kv, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         split_kv=8)
    assert len(forced.objects) == 2
    single = attn_mlir.compile_attention(q, kv, kv, dtype="bf16",
                                         target="cuda", binary_format="isa")
    assert len(single.objects) == 1
    with pytest.raises(MLIRError, match="split-kv must be 0"):
        attn_mlir.compile_attention(q, kv, kv, dtype="bf16", target="cuda",
                                    split_kv=500)
    # The warp-specialized kernel splits too: its partial kernel is the
    # producer and one consumer warpgroup (256 threads, no setmaxnreg).
    ws = attn_mlir.compile_attention(q, kv, kv, dtype="bf16", target="cuda",
                                     binary_format="isa", chip="sm_90a",
                                     wgmma=True, warp_specialize=True,
                                     split_kv=0)
    assert len(ws.objects) == 3
    ptx = [obj[3].decode() for obj in ws.objects]
    assert sum(".maxntid 256, 1, 1" in p for p in ptx) == 1
    assert sum("setmaxnreg" in p for p in ptx) == 1


def test_cuda_target_takes_pack_gqa():
    # Decoding with 16 query heads on 4 key/value heads: packed, the grid
    # has one block per key/value head (y = 4), else one per query head.
    q, kv = (2, 16, 1, 128), (2, 4, 4096, 128)
    packed = attn_mlir.compile_attention(q, kv, kv, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         pack_gqa=True)
    plain = attn_mlir.compile_attention(q, kv, kv, dtype="bf16",
                                        target="cuda", binary_format="isa")

    def grid_heads(kernel):
        # The launch's grid y, a constant of the host function.
        y = re.search(r"gpu.launch_func .* blocks in \(%\w+, %(\w+),",
                      kernel.host_llvm).group(1)
        return int(re.search(rf"%{y} = llvm.mlir.constant\((\d+) : index\)",
                             kernel.host_llvm).group(1))
    assert grid_heads(packed) == 4
    assert grid_heads(plain) == 16


def test_cuda_target_takes_wgmma():
    shape = (1, 2, 100, 64)
    kernel = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         chip="sm_90a", wgmma=True)
    assert kernel.chip == "sm_90a"
    # 128 rows x 64 keys: S on m64n64k16, P V on m64n64k16 (B transposed).
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in kernel.ptx
    assert "fence.proxy.async.shared::cta" in kernel.ptx
    assert "mma.sync" not in kernel.ptx
    with pytest.raises(MLIRError, match="multiples of 64"):
        odd = (1, 2, 100, 48)
        attn_mlir.compile_attention(odd, odd, odd, dtype="bf16",
                                    target="cuda", chip="sm_90a", wgmma=True)


def test_cuda_target_takes_tma():
    shape = (1, 2, 100, 64)
    kernel = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         chip="sm_90a", wgmma=True, tma=True)
    assert ("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier"
            "::complete_tx::bytes") in kernel.ptx
    assert "mbarrier.try_wait.parity.shared.b64" in kernel.ptx
    assert "cp.async.cg" not in kernel.ptx
    assert "cp.async.bulk.tensor.4d.global.shared::cta" in kernel.ptx
    # The host encodes the tensor maps of Q, K, V and O before the launch.
    assert kernel.host_llvm.count("llvm.call @mgpuTensorMapEncodeTiledMemref") == 4
    with pytest.raises(MLIRError, match="add wgmma=1"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                    target="cuda", chip="sm_90a", tma=True)


def test_cuda_target_takes_warp_specialize():
    # Three 176-key steps.
    shape = (1, 2, 400, 128)
    kernel = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         chip="sm_90a", wgmma=True,
                                         warp_specialize=True)
    # A producer warpgroup and two consumer warpgroups (the default 128
    # rows), trading registers; the consumers release buffers by arrival.
    assert ".maxntid 384, 1, 1" in kernel.ptx
    assert "setmaxnreg.dec.sync.aligned.u32 \t24;" in kernel.ptx
    assert "setmaxnreg.inc.sync.aligned.u32 \t240;" in kernel.ptx
    assert "mbarrier.arrive.shared.b64" in kernel.ptx
    assert "bar.sync \t1, 256;" in kernel.ptx
    assert ("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier"
            "::complete_tx::bytes") in kernel.ptx
    rows = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                       target="cuda", binary_format="isa",
                                       chip="sm_90a", wgmma=True,
                                       warp_specialize=True, block_q=192)
    assert ".maxntid 512, 1, 1" in rows.ptx
    # The overlap waits for S with the previous block's P V in flight.
    assert "wgmma.wait_group.sync.aligned \t1;" in kernel.ptx
    serial = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                         target="cuda", binary_format="isa",
                                         chip="sm_90a", wgmma=True,
                                         warp_specialize=True,
                                         intra_warpgroup_overlap=False)
    assert "wgmma.wait_group.sync.aligned \t1;" not in serial.ptx
    turns = attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                        target="cuda", binary_format="isa",
                                        chip="sm_90a", wgmma=True,
                                        warp_specialize=True, pingpong=True)
    assert "bar.arrive" in turns.ptx and "bar.arrive" not in kernel.ptx
    with pytest.raises(MLIRError, match="add wgmma=1"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                    target="cuda", chip="sm_90a",
                                    warp_specialize=True)
    with pytest.raises(MLIRError, match="block-q must be 64, 128 or 192"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="bf16",
                                    target="cuda", chip="sm_90a", wgmma=True,
                                    warp_specialize=True, block_q=256)


def test_cuda_target_takes_rescale_threshold():
    shape = (1, 2, 100, 64)
    lazy = attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                       target="cuda", binary_format="isa")
    eager = attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                        target="cuda", binary_format="isa",
                                        rescale_threshold=-1)
    assert "vote.sync.any.pred" in lazy.ptx
    assert "vote.sync" not in eager.ptx
    with pytest.raises(MLIRError, match="rescale-threshold must be at most 8"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                    target="cuda", rescale_threshold=9)


def test_cuda_target_reports_unsupported_head_dims():
    shape = (1, 2, 64, 40)
    with pytest.raises(MLIRError, match="multiples of 16"):
        attn_mlir.compile_attention(shape, shape, shape, dtype="f16",
                                    target="cuda")
