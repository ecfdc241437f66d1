#!/usr/bin/python3
"""Runs a program with and without ``--attn-raise`` and compares the outputs.

The program's ``@main`` prints tensors with ``printMemrefF32``. It is lowered
twice with ``attn-opt`` and run with ``mlir-runner``:

* reference: ``[--lower-first PIPELINE] --attn-cpu-pipeline`` (the unfused
  graph as written);
* raised: ``--attn-raise --canonicalize [--lower-first PIPELINE]
  --attn-cpu-pipeline``.

The raised IR must contain ``--expect-raised`` ``attn.attention`` ops (so a
test cannot pass by raising nothing), and every printed number must agree
within ``|a - b| <= atol + rtol * |b|``. Any NaN or inf fails, as does a
different number of printed values.

Exit status: 0 on agreement, 1 on a mismatch, 2 when a tool fails.

Run with ``/usr/bin/python3`` (Debian's numpy).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_check import runner_command  # noqa: E402

NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)",
                    re.IGNORECASE)


def run(cmd: list[str], stdin: str | None = None) -> str:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"error: command failed ({proc.returncode}): "
                         f"{' '.join(cmd)}\n{proc.stderr}")
        sys.exit(2)
    return proc.stdout


def printed_values(output: str) -> list[np.ndarray]:
    """The data of every printMemrefF32 call, flattened."""
    arrays = []
    for chunk in output.split("Unranked Memref")[1:]:
        data = chunk.split("data =", 1)[1]
        arrays.append(np.array([float(x) for x in NUMBER.findall(data)]))
    return arrays


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--mlir-runner", required=True)
    ap.add_argument("--shared-libs", required=True)
    ap.add_argument("--lower-first", default="",
                    help="a --pass-pipeline run before --attn-cpu-pipeline "
                         "(e.g. tosa-to-linalg), after --attn-raise")
    ap.add_argument("--raise-options", default="",
                    help="options of --attn-raise, e.g. 'strict-nan=true'")
    ap.add_argument("--expect-raised", type=int, required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()

    opt = args.attn_opt
    raise_flag = "--attn-raise"
    if args.raise_options:
        raise_flag = f"--attn-raise={args.raise_options}"

    def lower(ir: str) -> str:
        if args.lower_first:
            ir = run([opt, f"--pass-pipeline={args.lower_first}"], ir)
        return run([opt, "--attn-cpu-pipeline"], ir)

    def execute(llvm_ir: str) -> list[np.ndarray]:
        out = run(runner_command(args.mlir_runner, args.shared_libs), llvm_ir)
        return printed_values(out)

    source = open(args.input).read()
    raised = run([opt, raise_flag, "--canonicalize"], source)
    count = raised.count("attn.attention")
    if count != args.expect_raised:
        sys.stderr.write(f"error: expected {args.expect_raised} raised "
                         f"attn.attention ops, got {count}\n{raised}")
        return 1

    reference = execute(lower(source))
    result = execute(lower(raised))
    if not reference or len(reference) != len(result):
        sys.stderr.write(f"error: printed {len(reference)} tensors without "
                         f"raising and {len(result)} with\n")
        return 1
    ok = True
    for n, (ref, got) in enumerate(zip(reference, result)):
        if ref.shape != got.shape:
            sys.stderr.write(f"tensor {n}: {ref.size} values without raising, "
                             f"{got.size} with\n")
            ok = False
            continue
        if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(got))):
            sys.stderr.write(f"tensor {n}: non-finite values\n")
            ok = False
            continue
        err = np.abs(got - ref)
        bound = args.atol + args.rtol * np.abs(ref)
        worst = float(np.max(err - bound)) if err.size else 0.0
        print(f"tensor {n}: {ref.size} values, max |diff| "
              f"{float(np.max(err)) if err.size else 0.0:.3g}")
        if worst > 0:
            i = int(np.argmax(err - bound))
            sys.stderr.write(f"tensor {n}: mismatch at {i}: {got[i]} vs "
                             f"{ref[i]} (raised vs unfused)\n")
            ok = False
    if not ok:
        return 1
    print(f"OK: {count} raised, {len(reference)} tensors agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
