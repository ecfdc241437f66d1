#!/usr/bin/python3
"""Writes the attn-fuzz seed corpus: every .mlir file under test/,
examples/ and fuzz/seeds/ (extra seeds for the fuzzer only), split into its ``// -----`` chunks (the way --split-input-file
reads them), one chunk per file, named by a hash of its content so that
reruns do not duplicate seeds.

Usage: make_corpus.py OUT_DIR [SRC_ROOT]
"""

from __future__ import annotations

import hashlib
import os
import re
import sys

SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)


def chunks(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for chunk in SPLIT.split(text):
        # RUN/CHECK comments are noise to the parser; the fuzzer mutates code.
        lines = [ln for ln in chunk.splitlines()
                 if not ln.lstrip().startswith("//")]
        body = "\n".join(lines).strip()
        if body:
            out.append(body + "\n")
    return out


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    for top in ("test", "examples", os.path.join("fuzz", "seeds")):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".mlir"):
                    continue
                for body in chunks(os.path.join(dirpath, name)):
                    digest = hashlib.sha1(body.encode()).hexdigest()[:16]
                    with open(os.path.join(out_dir, digest), "w") as f:
                        f.write(body)
                    count += 1
    print(f"make_corpus: {count} seeds in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
