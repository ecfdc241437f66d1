#!/usr/bin/python3
"""The objects (cubin, PTX, fatbin) of the gpu.binary ops in MLIR text.

Part of the attn_mlir package, and standalone (no import of the package
or of the C library) so that test and build scripts can use it too.

``--attn-gpu-pipeline="format=isa"`` leaves the PTX of each kernel module in
a ``gpu.binary`` as an escaped string attribute (``assembly = "..."``);
``format=bin`` leaves the cubin (``bin = "..."``). This writes each object
to ``OUTDIR/<binary name>.<chip>.{ptx,cubin}`` and prints the paths.

Usage: python3 gpu_binary.py INPUT.mlir OUTDIR
"""

from __future__ import annotations

import os
import re
import sys

BINARY = re.compile(r'gpu\.binary @([\w$.]+)\s*(?:<[^>]*>)?\s*\[(.*?)\]\s*$',
                    re.M)
OBJECT = re.compile(
    r'#gpu\.object<#nvvm\.target<[^>]*chip = "(\w+)"[^>]*>'
    r'(?:, properties = \{[^}]*\})?'
    r'(?:, kernels = .*?)?'
    r', (assembly|bin|offload|fatbin) = "((?:[^"\\]|\\.)*)"', re.S)


def unescape(text: str) -> bytes:
    """MLIR's string escapes: \\XX (two hex digits), \\\\ and \\"."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt in '\\"':
                out += nxt.encode()
                i += 2
                continue
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        out += c.encode("utf-8")
        i += 1
    return bytes(out)


def extract(mlir_text: str) -> list[tuple[str, str, str, bytes]]:
    """(binary name, chip, kind, payload) of every object."""
    found = []
    for m in BINARY.finditer(mlir_text):
        for o in OBJECT.finditer(m.group(2)):
            found.append((m.group(1), o.group(1), o.group(2),
                          unescape(o.group(3))))
    return found


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        objects = extract(f.read())
    if not objects:
        print(f"error: no gpu.binary object in {sys.argv[1]}", file=sys.stderr)
        return 1
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, chip, kind, payload in objects:
        ext = {"assembly": "ptx", "bin": "cubin", "fatbin": "fatbin"}.get(
            kind, "bc")
        path = os.path.join(sys.argv[2], f"{name}.{chip}.{ext}")
        with open(path, "wb") as f:
            f.write(payload)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
