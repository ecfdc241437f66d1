"""attn_mlir.Context/Module: parsing, printing, pass pipelines, diagnostics."""

import os

import pytest

import attn_mlir
from attn_mlir import MLIRError

EXAMPLE = os.path.join(
    os.path.dirname(__file__), "..", "..", "examples", "gqa-causal-attention.mlir"
)

ATTENTION = """\
func.func @attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>,
                     %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %init = tensor.empty() : tensor<1x4x8x16xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
         outs(%init : tensor<1x4x8x16xf32>) scale = 0.25 causal = top_left -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
"""


@pytest.fixture(scope="module")
def ctx():
    return attn_mlir.Context()


def test_parse_and_print(ctx):
    text = str(ctx.parse(ATTENTION))
    assert "attn.attention ins(%arg0, %arg1, %arg2" in text
    assert "scale = 2.500000e-01 causal = top_left" in text


def test_run_passes_by_name(ctx):
    module = ctx.parse(ATTENTION)
    assert module.run("attn-raise,canonicalize,attn-decompose") == []
    text = str(module)
    assert "attn.attention" not in text and "linalg.generic" in text


def test_run_takes_a_list_a_pipeline_and_options(ctx):
    module = ctx.parse(ATTENTION)
    module.run(["attn-check-scale", "attn-decompose"])
    module.run("builtin.module(func.func(cse),canonicalize)")
    module.run("attn-cpu-pipeline{fold=false}")
    assert "llvm.func @attention" in str(module)


def test_cpu_pipeline_through_its_builder(ctx):
    module = ctx.parse(ATTENTION)
    module.run_cpu_pipeline()
    assert "llvm.func @attention" in str(module)
    assert "attn." not in str(module)


def test_run_pipeline_one_shot():
    text = attn_mlir.run_pipeline(ATTENTION, "attn-decompose")
    assert "math.exp" in text


def test_warnings_and_remarks_are_returned_with_locations(ctx):
    module = ctx.parse_file(EXAMPLE)
    diagnostics = module.run("canonicalize,attn-check-scale")
    (remark,) = diagnostics
    assert remark.severity == "remark"
    assert "includes factors folded from the inputs (q x 0.353553)" in remark.message
    assert remark.file.endswith("gqa-causal-attention.mlir")
    assert (remark.line, remark.column) == (19, 10)


def test_parse_error_raises_with_the_location(ctx):
    with pytest.raises(MLIRError) as info:
        ctx.parse(
            "func.func @f() {\n  %x = arith.constant 1 : i32\n  return %x : i32\n}\n"
        )
    (error,) = info.value.errors
    assert error.message == (
        "'func.return' op has 1 operands, but enclosing function (@f) returns 0"
    )
    assert (error.file, error.line, error.column) == ("-", 3, 3)
    assert "-:3:3: error: 'func.return' op has 1 operands" in str(info.value)


def test_verifier_error_of_attention_raises(ctx):
    # 4 query heads, 3 key/value heads.
    bad = ATTENTION.replace("1x2x8x16", "1x3x8x16")
    with pytest.raises(MLIRError) as info:
        ctx.parse(bad)
    (error,) = info.value.errors
    assert error.message == (
        "'attn.attention' op q dim 1 (Hq) is 4, not a multiple of k dim 1 (Hkv) 3"
    )
    assert (error.line, error.column) == (4, 8)


def test_pass_failure_reports_the_op_location_and_the_reason(ctx):
    # --attn-to-gpu refuses (cleanly) an op on tensors: its kernel is
    # built on memrefs.
    dynamic = """\
func.func @f(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>,
             %init: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %o = attn.attention ins(%q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
         outs(%init : tensor<1x?x4x8xf32>) scale = 0.35 -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}
"""
    module = ctx.parse(dynamic)
    with pytest.raises(MLIRError) as info:
        module.run("attn-to-gpu")
    (error,) = info.value.errors
    assert (error.line, error.column) == (3, 8)
    assert "cannot be lowered to the GPU kernel" in error.message
    assert "built on memrefs: bufferize first" in error.message


def test_unknown_pass_raises(ctx):
    module = ctx.parse(ATTENTION)
    with pytest.raises(MLIRError) as info:
        module.run("attn-no-such-pass")
    assert "'attn-no-such-pass' does not refer to a registered pass" in str(info.value)


def test_parse_file_missing(ctx, tmp_path):
    with pytest.raises((FileNotFoundError, MLIRError)):
        ctx.parse_file(tmp_path / "missing.mlir")


def test_library_is_the_build_or_install_tree_one():
    assert os.path.basename(attn_mlir.library_path()) == "libAttnMLIRCAPI.so"
