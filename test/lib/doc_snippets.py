#!/usr/bin/env python3
"""Extracts the tested snippets of a Markdown document.

A snippet is a fenced code block right after a line
`<!-- snippet: NAME -->`; it is written to OUTDIR/NAME. Where NAME is also a
file of the repository (--repo), the snippet must be that file, verbatim:
the document shows the real file and cannot drift from it.

    doc_snippets.py docs/integration.md OUTDIR --repo .
"""

import argparse
import difflib
import os
import re
import sys

MARKER = re.compile(r"^<!--\s*snippet:\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")


def snippets(lines):
    """Yields (name, text, line number) for each marked fenced block."""
    i = 0
    while i < len(lines):
        marker = MARKER.match(lines[i])
        i += 1
        if not marker:
            continue
        if i >= len(lines) or not FENCE.match(lines[i]):
            raise SystemExit(f"line {i}: snippet {marker.group(1)} has no code block")
        fence = FENCE.match(lines[i]).group(1)
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        if end == len(lines):
            raise SystemExit(f"line {i + 1}: unterminated code block")
        yield marker.group(1), "".join(lines[start:end]), start
        i = end + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("document")
    parser.add_argument("outdir")
    parser.add_argument("--repo", help="check snippets named after repo files")
    args = parser.parse_args()

    with open(args.document) as f:
        lines = f.readlines()
    failed = False
    names = []
    for name, text, line in snippets(lines):
        names.append(name)
        path = os.path.join(args.outdir, name)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        original = os.path.join(args.repo, name) if args.repo else None
        if original and os.path.isfile(original):
            with open(original) as f:
                expected = f.read()
            if text != expected:
                failed = True
                sys.stderr.write(
                    f"{args.document}:{line}: snippet {name} differs from the file:\n"
                )
                sys.stderr.writelines(
                    difflib.unified_diff(
                        expected.splitlines(True), text.splitlines(True),
                        name, f"{args.document} snippet",
                    )
                )
    print("snippets:", " ".join(names))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
