"""attn_mlir: attn-mlir from Python, on its C API through ctypes.

No compiled extension: the package loads libAttnMLIRCAPI.so (the attn C API
and MLIR's C API, on libMLIR.so) and needs only numpy.

    import attn_mlir

    ctx = attn_mlir.Context()
    module = ctx.parse(text)                 # or ctx.parse_file(path)
    warnings = module.run("canonicalize,attn-check-scale,attn-decompose")
    print(module)

    out = attn_mlir.attention(q, k, v, causal="bottom_right")   # numpy, CPU
    out = attn_mlir.attention(q, k, v, target="cuda")   # on the GPU

Failures raise attn_mlir.MLIRError, whose `diagnostics` carry the message,
the severity and the location (file, line, column) of each diagnostic; a
failing CUDA call raises attn_mlir.CudaError.
"""

from .attention import (
    CompiledAttention,
    CompiledKernel,
    attention,
    attention_module,
    bf16_to_f32,
    compile_attention,
    f32_to_bf16,
)
from .cuda import CudaError
from .ir import Context, Diagnostic, MLIRError, Module, run_pipeline
from ._capi import library_path

__all__ = [
    "CompiledAttention",
    "Context",
    "CudaError",
    "Diagnostic",
    "MLIRError",
    "Module",
    "CompiledKernel",
    "attention",
    "attention_module",
    "bf16_to_f32",
    "compile_attention",
    "f32_to_bf16",
    "library_path",
    "run_pipeline",
]
