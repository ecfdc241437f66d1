"""What the CPU benchmarks share: the inputs' deterministic fill (as MLIR
and as numpy) and the runner."""

import subprocess

import numpy as np

LLVM = "/usr/lib/llvm-22"
RUNNER_LIBS = ",".join(
    f"{LLVM}/lib/{lib}"
    for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))

# Element (.., h, i, d) of a filled tensor: ((i m + d + 3 h) mod 17) / 17
# - 1/2, small values with a pattern per tensor (multiplier m) and head.
_FILL = """
  %e{name} = tensor.empty() : {type}
  %{name} = linalg.generic {{indexing_maps = [affine_map<(a, h, i, d) -> (a, h, i, d)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      outs(%e{name} : {type}) {{
  ^bb0(%unused: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %d = linalg.index 3 : index
    %m = arith.constant {m} : index
    %three = arith.constant 3 : index
    %c17 = arith.constant 17 : index
    %im = arith.muli %i, %m : index
    %hm = arith.muli %h, %three : index
    %s0 = arith.addi %im, %d : index
    %s = arith.addi %s0, %hm : index
    %r = arith.remui %s, %c17 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %c = arith.constant 0.0588235 : f32
    %half = arith.constant 0.5 : f32
    %x = arith.mulf %rf, %c : f32
    %y = arith.subf %x, %half : f32
    linalg.yield %y : f32
  }} -> {type}
"""


def mlir_fill(name, m, type):
    """MLIR that defines %name, a rank-4 f32 tensor of `type`, filled."""
    return _FILL.format(name=name, m=m, type=type)


def numpy_fill(shape, m):
    """The same fill as a float32 numpy array of `shape` (rank 4)."""
    _, h, i, d = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    return (((i * m + d + 3 * h) % 17) * np.float32(0.0588235)
            - np.float32(0.5)).astype(np.float32)


def lower_and_run(opt, pipeline, src, extra_cmd=()):
    """Lowers `src` with attn-opt `pipeline` and runs its @main with
    mlir-runner (after `extra_cmd`, e.g. /usr/bin/time); returns the
    completed process."""
    low = src + ".ll.mlir"
    subprocess.run([opt, pipeline, src, "-o", low], check=True)
    return subprocess.run(
        [*extra_cmd, f"{LLVM}/bin/mlir-runner", low, "-e", "main",
         "-entry-point-result=void", f"-shared-libs={RUNNER_LIBS}"],
        check=True, capture_output=True, text=True)
