#!/usr/bin/python3
"""Sorts attn-fuzz's crash artifacts into attn-mlir's and upstream's.

Reruns each artifact (crash-*, leak-*, timeout-*, oom-*, slow-unit-*) with
the fuzzer, reads the first stack trace, and classifies it:

  OURS      a frame in attn-mlir's libraries (a source path under lib/ or
            include/ of SRC_ROOT, or an ``attn::`` function), the harness's
            own report that a pass broke the IR, or a crash whose top frame
            is the harness itself;
  UPSTREAM  only frames in LLVM/MLIR (libMLIR.so, headers under
            /usr/lib/llvm-22) below the harness's call into them;
  NOREPRO   the artifact no longer fails (fixed, or filtered by the harness).

Artifacts with the same top frames are one finding; prints one line per
finding with its count and an example, then the totals. Exit status 1 when a
finding is OURS, else 0.

Usage: triage.py FUZZER ARTIFACT_DIR [SRC_ROOT]
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys

FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in )?(.*)$", re.MULTILINE)
# Frames of the sanitizer runtimes, libFuzzer, libc and LLVM's signal
# handling: never where a bug is.
RUNTIME = re.compile(
    r"^(__sanitizer|__asan|__ubsan|__interceptor|__interception|__lsan|"
    r"fuzzer::|main |_start|__libc|libc\.so|abort|raise|gsignal|"
    r"pthread_kill|__pthread_kill|__restore_rt|\(/lib/|\(/usr/lib/x86_64|"
    r"llvm::sys::|SignalHandler|llvm::report_fatal_error|"
    r"llvm::llvm_unreachable_internal|__assert|__GI_|__cxa_|std::terminate)")
UNNAMED = re.compile(r"^\([^()]*\+0x[0-9a-f]+\)$")
KINDS = ("crash-", "leak-", "timeout-", "oom-", "slow-unit-")


def frames(log: str) -> list[str]:
    """The first stack trace's frames, runtime frames and frames without a
    function name (in a library without symbols) dropped."""
    out = []
    for m in FRAME.finditer(log):
        f = m.group(1)
        if out and re.match(r"^\s*#0 ", m.group(0)):
            break  # A second trace (e.g. where memory was freed).
        if not RUNTIME.match(f) and not UNNAMED.match(f):
            out.append(f)
    return out


def function(frame: str) -> str:
    """The frame's function, without its arguments and location."""
    name = re.sub(r" (/|\().*$", "", frame)
    depth, short = 0, []
    for c in name:  # Drop argument lists and template arguments.
        if c in "(<":
            depth += 1
        elif c in ")>":
            depth -= 1
        elif depth == 0:
            short.append(c)
    return "".join(short).strip() or frame


def classify(log: str, src: str) -> tuple[str, list[str]]:
    fs = frames(log)
    ours_dirs = (os.path.join(src, "lib") + "/",
                 os.path.join(src, "include") + "/")
    harness = os.path.join(src, "tools", "attn-fuzz") + "/"
    if "produced IR that does not verify" in log:
        return "OURS", ["a pass broke the IR"] + [function(f) for f in fs[:3]]
    for f in fs:
        if any(d in f for d in ours_dirs) or "attn::" in function(f):
            return "OURS", [function(f) for f in fs[:3]]
    if fs and (harness in fs[0] or "LLVMFuzzerTestOneInput" in fs[0]):
        return "OURS", [function(f) for f in fs[:3]]
    return "UPSTREAM", [function(f) for f in fs[:3]]


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    fuzzer, adir = sys.argv[1], sys.argv[2]
    src = os.path.realpath(sys.argv[3] if len(sys.argv) == 4 else
                           os.path.dirname(os.path.dirname(
                               os.path.abspath(__file__))))
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "halt_on_error=1:detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("ASAN_SYMBOLIZER_PATH",
                   "/usr/lib/llvm-22/bin/llvm-symbolizer")
    findings: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    names = sorted(n for n in os.listdir(adir) if n.startswith(KINDS))
    for name in names:
        path = os.path.join(adir, name)
        try:
            proc = subprocess.run([fuzzer, "-timeout=60", path],
                                  capture_output=True, text=True,
                                  errors="replace", timeout=300, env=env)
            log, failed = proc.stdout + proc.stderr, proc.returncode != 0
        except subprocess.TimeoutExpired:
            log, failed = "timeout", True
        if not failed:
            kind, top = "NOREPRO", []
        elif log == "timeout" or "ERROR: libFuzzer: timeout" in log:
            kind, top = classify(log, src)
            top = ["timeout"] + top
        else:
            kind, top = classify(log, src)
        findings[(kind, " <- ".join(top))].append(name)
    counts = collections.Counter()
    for (kind, top), arts in sorted(findings.items()):
        counts[kind] += len(arts)
        print(f"{kind} x{len(arts)}: {top or '-'}\n    e.g. {arts[0]}")
    print(f"triage: {len(names)} artifacts: " +
          ", ".join(f"{counts[k]} {k}" for k in ("OURS", "UPSTREAM", "NOREPRO")))
    return 1 if counts["OURS"] else 0


if __name__ == "__main__":
    sys.exit(main())
