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


# The OpenMP runtime, for programs lowered with threads=true.
OPENMP_LIB = f"{LLVM}/lib/libomp.so"


# LLVM's optimization level for the JIT. mlir-runner's own default runs no
# LLVM IR optimization (the same as -O0), which no compiled program ships
# with: the Python package's engine uses 2, as does an AOT build with
# clang or llc -O2. Tables before 2026-12-07 used the runner's default.
DEFAULT_OPT_LEVEL = 2


def add_opt_level_argument(parser):
    """The benchmarks' --opt-level option."""
    parser.add_argument("--opt-level", type=int, choices=(0, 1, 2, 3),
                        default=DEFAULT_OPT_LEVEL,
                        help="LLVM optimization level of the JIT "
                        f"(mlir-runner -O<n>; default {DEFAULT_OPT_LEVEL}; "
                        "0 is mlir-runner's own default)")


def lower_and_run(opt, pipeline, src, extra_cmd=(), libs=(), env=None,
                  opt_level=DEFAULT_OPT_LEVEL):
    """Lowers `src` with attn-opt `pipeline` and runs its @main with
    mlir-runner -O`opt_level` (after `extra_cmd`, e.g. /usr/bin/time; with
    the shared libraries `libs` too, and environment `env`); returns the
    completed process."""
    low = src + ".ll.mlir"
    subprocess.run([opt, pipeline, src, "-o", low], check=True)
    return run_lowered(low, extra_cmd, libs, env, opt_level)


def run_lowered(low, extra_cmd=(), libs=(), env=None,
                opt_level=DEFAULT_OPT_LEVEL):
    """Runs @main of the lowered program `low` as lower_and_run does."""
    shared = ",".join((RUNNER_LIBS, *libs))
    return subprocess.run(
        [*extra_cmd, f"{LLVM}/bin/mlir-runner", low, "-e", "main",
         "-entry-point-result=void", f"-O{opt_level}",
         f"-shared-libs={shared}"],
        check=True, capture_output=True, text=True, env=env)


def dynamic_leading_dims(tensor_type, n):
    """`tensor_type` ("tensor<AxBx...xf32>") with its first n dims dynamic."""
    dims = tensor_type[len("tensor<"):-1].split("x")
    return "tensor<" + "x".join(["?"] * n + dims[n:]) + ">"


def timing_module(tq, tk, attrs, fills, reps, dynamic_dims=0, tb=None,
                  storage=None):
    """A module whose @main fills q ([tq]), k and v ([tk]) with `fills`,
    calls attention (attn.attention with `attrs`: scale, causal) `reps`
    times and prints each call's time (rtclock around the call), then the
    sum of the last call's output (which also keeps the calls alive).
    dynamic_dims=n: @attention takes and returns its tensors with the
    first n dims dynamic (2: batch and heads, 3: also the sequence
    lengths, as a frontend with dynamic shapes writes them), and @main
    casts to and from them. tb: the op also takes a bias of that type,
    %bias (which `fills` defines; static shapes only). storage="bf16" (or
    "f16"): @attention takes and returns that type, and @main truncates
    the f32 fills to it and extends the result (static shapes, no
    bias)."""
    if tb and dynamic_dims:
        raise ValueError("a bias needs static shapes")
    if storage and (tb or dynamic_dims):
        raise ValueError("a storage type needs static shapes and no bias")
    aq = dynamic_leading_dims(tq, dynamic_dims)
    ak = dynamic_leading_dims(tk, dynamic_dims)
    sizes = "".join(f"  %c{i}_ = arith.constant {i} : index\n"
                    f"  %s{i} = tensor.dim %q, %c{i}_ : {aq}\n"
                    for i in range(dynamic_dims))
    empty_args = ", ".join(f"%s{i}" for i in range(dynamic_dims))
    call = f"func.call @attention(%q, %k, %v) : ({tq}, {tk}, {tk}) -> {tq}"
    bias_arg = bias = ""
    if tb:
        call = (f"func.call @attention(%q, %k, %v, %bias) : ({tq}, {tk}, {tk}, "
                f"{tb}) -> {tq}")
        bias_arg, bias = f", %bias: {tb}", f" bias(%bias : {tb})"
    casts = result = ""
    if dynamic_dims:
        call = (f"func.call @attention(%qd, %kd, %vd) : ({aq}, {ak}, {ak}) "
                f"-> {aq}")
        casts = (f"  %qd = tensor.cast %q : {tq} to {aq}\n"
                 f"  %kd = tensor.cast %k : {tk} to {ak}\n"
                 f"  %vd = tensor.cast %v : {tk} to {ak}\n")
        result = f"    %r = tensor.cast %rd : {aq} to {tq}\n"
    if storage:
        aq, ak = (t.replace("xf32>", f"x{storage}>") for t in (tq, tk))
        call = (f"func.call @attention(%qd, %kd, %vd) : ({aq}, {ak}, {ak}) "
                f"-> {aq}")
        casts = (f"  %qd = arith.truncf %q : {tq} to {aq}\n"
                 f"  %kd = arith.truncf %k : {tk} to {ak}\n"
                 f"  %vd = arith.truncf %v : {tk} to {ak}\n")
        result = f"    %r = arith.extf %rd : {aq} to {tq}\n"
    return f"""
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()

func.func @attention(%q: {aq}, %k: {ak}, %v: {ak}{bias_arg}) -> {aq} {{
{sizes}  %init = tensor.empty({empty_args}) : {aq}
  %r = attn.attention ins(%q, %k, %v : {aq}, {ak}, {ak}){bias} outs(%init : {aq})
         {attrs} -> {aq}
  return %r : {aq}
}}

func.func @main() {{
{fills}
{casts}  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {reps} : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %last = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {{
    %t0 = func.call @rtclock() : () -> f64
    %{"rd" if dynamic_dims or storage else "r"} = {call}
{result}    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    func.call @printF64(%dt) : (f64) -> ()
    func.call @printNewline() : () -> ()
    %s = linalg.reduce ins(%r : {tq}) outs(%init : tensor<f32>) dimensions = [0, 1, 2, 3]
      (%x: f32, %y: f32) {{
        %z = arith.addf %x, %y : f32
        linalg.yield %z : f32
      }}
    %sum = tensor.extract %s[] : tensor<f32>
    scf.yield %sum : f32
  }}
  %s64 = arith.extf %last : f32 to f64
  func.call @printF64(%s64) : (f64) -> ()
  func.call @printNewline() : () -> ()
  return
}}
"""
