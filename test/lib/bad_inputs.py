#!/usr/bin/python3
"""Bad input never crashes attn-opt (docs/reliability.md).

Runs ``attn-opt`` on

* every ``// -----`` chunk of the hand-written corpus (malformed syntax,
  malformed attn.attention ops, attributes of the wrong kind, absurd
  shapes, IR that verifies but that a pass refuses), each of which must be
  rejected: exit status 1 and an ``error:`` with a ``file:line:col``
  location on stderr;
* mutants of the seed corpus (every ``// -----`` chunk of the .mlir files
  under test/ and examples/): truncated, tokens deleted or duplicated,
  numbers and types replaced, lines swapped. A mutant may still be valid:
  it must then be accepted (exit status 0); if it is rejected, with a
  located error.

each under several pass pipelines. A crash (a signal, an LLVM fatal error,
a stack dump, a sanitizer report), a timeout, a rejection without a located
error, or a hand-written input that is accepted fails. Prints the counts of
inputs and outcomes.

    bad_inputs.py --attn-opt build/bin/attn-opt CORPUS.mlir --mutants 200
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "fuzz"))
import make_corpus  # noqa: E402

PIPELINES = [
    [],
    ["--canonicalize", "--attn-check-scale", "--attn-raise=report=true",
     "--attn-tile=q-tile=3 kv-tile=2", "--attn-decompose"],
    ["--attn-cpu-pipeline"],
]
LOCATED_ERROR = re.compile(r"^\S+:\d+:\d+: error: ", re.MULTILINE)
CRASH = re.compile(r"PLEASE submit a bug report|Stack dump|LLVM ERROR|"
                   r"AddressSanitizer|UndefinedBehaviorSanitizer|"
                   r"LeakSanitizer|runtime error:|Assertion .* failed")
TIMEOUT_S = 60

# Replacements a mutant draws from: near-miss types, absurd numbers.
SWAPS = [("f32", "f64"), ("f32", "i32"), ("f16", "f32"), ("xf32>", "xi1>"),
         ("tensor<", "memref<"), ("memref<", "tensor<"), ("ins(", "outs("),
         ("top_left", "bottom_right"), ("causal = top_left", "causal = 1"),
         ("scale = ", "scale = -"), ("x", "x0x"), ("x", "x?x"),
         ("%", "%%"), ("->", ""), (":", ""), ("(", ""), (")", ""),
         ("<", "<<"), ("]", ""), ("dense<", "dense<["), ("{", ""), ("}", "")]
NUMBERS = ["0", "-1", "1", "3", "65536", "2147483648",
           "9223372036854775807", "99999999999999999999999", "1e400",
           "nan", "0x7FC00000", "-0.0"]


def mutate(text: str, rng: np.random.Generator) -> str:
    kind = int(rng.integers(6))
    if kind == 0 and len(text) > 1:  # truncate
        return text[:int(rng.integers(1, len(text)))]
    if kind == 1:  # delete a token
        toks = re.split(r"(\s+)", text)
        if len(toks) > 2:
            i = int(rng.integers(len(toks)))
            toks[i] = ""
        return "".join(toks)
    if kind == 2:  # replace one occurrence of a near-miss
        a, b = SWAPS[int(rng.integers(len(SWAPS)))]
        hits = [m.start() for m in re.finditer(re.escape(a), text)]
        if hits:
            i = hits[int(rng.integers(len(hits)))]
            return text[:i] + b + text[i + len(a):]
        return text + b
    if kind == 3:  # replace a number
        hits = list(re.finditer(r"\b\d+(\.\d+)?\b", text))
        if hits:
            m = hits[int(rng.integers(len(hits)))]
            return (text[:m.start()] + NUMBERS[int(rng.integers(len(NUMBERS)))]
                    + text[m.end():])
        return text
    lines = text.splitlines(keepends=True)
    if kind == 4 and len(lines) > 1:  # duplicate a line
        i = int(rng.integers(len(lines)))
        lines.insert(int(rng.integers(len(lines))), lines[i])
        return "".join(lines)
    if len(lines) > 1:  # swap two lines
        i, j = (int(x) for x in rng.integers(len(lines), size=2))
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def split_chunks(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [c.strip("\n") + "\n" for c in make_corpus.SPLIT.split(f.read())
                if c.strip()]


FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (.*)$", re.MULTILINE)


def in_project_code(err: str) -> bool:
    """Whether a crash's stack has a frame in attn-mlir's code (the attn
    libraries are linked into attn-opt; libMLIR.so is upstream's). A crash
    with no such frame, such as one in an upstream op's parser, is recorded
    as upstream's, and does not fail the run."""
    frames = FRAME.findall(err)
    if not frames:
        return True  # No stack to tell: count it against the project.
    for f in frames:
        f = f.removeprefix("in ")  # ASan's frame format
        if re.match(r"(main|_start|__libc\w*|_+interceptor_\w+|__sanitizer\w*|__asan\w*) ", f):
            continue
        if "attn" in f and "libMLIR.so" not in f:
            return True
    return False


def run_one(attn_opt: str, workdir: str, name: str, text: str,
            pipeline: list[str]) -> tuple[str, str]:
    """Returns (outcome, detail): outcome is accepted, rejected,
    rejected-without-location, crash or timeout."""
    path = os.path.join(workdir, name + ".mlir")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    try:
        proc = subprocess.run([attn_opt, path, *pipeline, "-o", os.devnull],
                              capture_output=True, text=True,
                              errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "timeout", f"over {TIMEOUT_S} s"
    err = proc.stderr
    if proc.returncode < 0 or CRASH.search(err):
        kind = "crash" if in_project_code(err) else "upstream-crash"
        return kind, f"exit status {proc.returncode}\n{err[-3000:]}"
    if proc.returncode == 0:
        return "accepted", ""
    if proc.returncode == 1 and LOCATED_ERROR.search(err):
        return "rejected", ""
    return "rejected-without-location", (f"exit status {proc.returncode}\n"
                                         f"{err[-3000:]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("corpus", help="hand-written bad inputs, split on "
                                   "'// -----'; every one must be rejected")
    ap.add_argument("--src-root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--mutants", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    cases = [(f"bad{i}", text, True)
             for i, text in enumerate(split_chunks(args.corpus))]
    seeds = []
    for top in ("test", "examples"):
        for dirpath, dirnames, filenames in os.walk(
                os.path.join(args.src_root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".mlir") and "bad-inputs" not in name:
                    seeds += make_corpus.chunks(os.path.join(dirpath, name))
    rng = np.random.default_rng(args.seed)
    for i in range(args.mutants):
        text = seeds[int(rng.integers(len(seeds)))]
        for _ in range(int(rng.integers(1, 4))):
            text = mutate(text, rng)
        cases.append((f"mutant{i}", text, False))

    jobs = [(name, text, must_reject, n, pipeline)
            for name, text, must_reject in cases
            for n, pipeline in enumerate(PIPELINES)]

    def work(job):
        name, text, must_reject, n, pipeline = job
        outcome, detail = run_one(args.attn_opt, args.workdir, f"{name}.{n}",
                                  text, pipeline)
        return job, outcome, detail

    counts: Counter = Counter()
    failures, upstream = [], []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (name, text, must_reject, n, pipeline), outcome, detail in \
                pool.map(work, jobs):
            group = "mutant" if name.startswith("mutant") else "hand-written"
            counts[(group, outcome)] += 1
            bad = outcome in ("crash", "timeout", "rejected-without-location")
            if outcome == "upstream-crash":
                named = [f for f in FRAME.findall(detail) if "::" in f]
                first = "\n  ".join(f[:160] for f in named[:3])
                upstream.append(f"UPSTREAM {name} [{' '.join(pipeline)}]: "
                                f"{first}\n--- input ---\n{text}")
            if must_reject and outcome == "accepted":
                bad, detail = True, "accepted, but it is a bad input"
            if bad:
                failures.append(f"FAIL {name} [{' '.join(pipeline)}]: "
                                f"{outcome}: {detail}\n--- input ---\n{text}")
    for f in upstream + failures:
        print(f)
    n_hand = sum(1 for c in cases if not c[0].startswith("mutant"))
    print(f"bad_inputs: {n_hand} hand-written and {args.mutants} mutated "
          f"inputs, {len(PIPELINES)} pipelines each, {len(jobs)} runs")
    for group in ("hand-written", "mutant"):
        parts = [f"{counts[(group, o)]} {o}" for o in
                 ("rejected", "accepted", "rejected-without-location",
                  "crash", "upstream-crash", "timeout")]
        print(f"bad_inputs: {group}: {', '.join(parts)}")
    print(f"bad_inputs: {len(upstream)} upstream crashes, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
