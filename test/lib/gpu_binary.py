#!/usr/bin/python3
"""Command-line entry of python/attn_mlir/gpu_binary.py for tests and
scripts: ``gpu_binary.py INPUT.mlir OUTDIR`` writes each gpu.binary object
to OUTDIR and prints its path. Loaded by path: importing the attn_mlir
package would load its C library, which these tools do not need."""

import importlib.util
import os
import sys

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "python", "attn_mlir", "gpu_binary.py")
_spec = importlib.util.spec_from_file_location("attn_gpu_binary", _path)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
extract = _module.extract
unescape = _module.unescape

if __name__ == "__main__":
    sys.exit(_module.main())
