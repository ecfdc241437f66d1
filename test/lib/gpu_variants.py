#!/usr/bin/python3
"""The GPU kernel variants that are compiled, assembled and benchmarked.

Each variant is a host function on memrefs in device memory with dynamic
batch and sequence lengths (one kernel serves every B, Lq, Lk), and head
counts too in the ``dynheads`` variants:

    func.func @attn_<name>(%q: memref<?xHx?xD>, %k, %v[, %mask][, %bias], %out)

``python3 gpu_variants.py OUTDIR [REGEX]`` writes one ``<name>.mlir`` per
variant (those whose name matches REGEX) with its tile options in
``<name>.tiles``, the chip it needs in ``<name>.chip`` (if not the
default), ``variants.json`` (name -> dtype, heads, head dims,
causal, mask, bias, tiles, base name) and ``variants.inc`` (the table of
bench/gpu/driver.c).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict, dataclass

HEADS = 16


@dataclass(frozen=True)
class Variant:
    dtype: str          # f16 | bf16 | f32 (the TF32 path, 3xTF32)
    d: int              # Dqk
    dv: int             # Dv
    causal: str = ""    # "" | top_left | bottom_right
    mask: bool = False  # bool key-padding mask [B, 1, 1, Lk]
    bias: bool = False  # f32 bias [1, H, Lq, Lk]
    hkv: int = HEADS
    # Kernel tiles (--attn-gpu-pipeline="block-q= block-kv="); 0: the
    # compiler's default. Variants with explicit tiles are the alternatives
    # that the device check times next to the defaults.
    block_q: int = 0
    block_kv: int = 0
    # The Hopper kernel (--attn-gpu-pipeline="wgmma=1", chip sm_90a only).
    wgmma: bool = False
    # With wgmma: Q, K and V tiles by TMA and mbarriers ("tma=1").
    tma: bool = False
    # With wgmma: the warp-specialized kernel, a TMA producer warpgroup and
    # consumer warpgroups ("warp-specialize=1", which implies TMA).
    ws: bool = False
    # Warp specialized: FlashAttention-3's intra-warpgroup overlap, and
    # its pingpong between the consumer warpgroups.
    overlap: bool = True
    pingpong: bool = False
    # Lazy rescaling threshold (base 2); negative: rescale at every step.
    rescale: float = 8.0
    # Split-KV: 1 never, 0 chosen at run time, N splits ("split-kv=N").
    split_kv: int = 1
    # GQA: each key/value head's query heads as one kernel's query rows
    # where that fills the blocks better ("pack-gqa=1", --attn-pack-gqa).
    pack_gqa: bool = False
    # Hq and Hkv dynamic in the function's types: the kernel reads them,
    # and Hq / Hkv, at run time.
    dynamic_heads: bool = False
    # f32: one TF32 mma per product ("tf32=1") instead of 3xTF32.
    tf32: bool = False

    @property
    def tiles(self) -> str:
        """The pipeline options that select the kernel ('' for defaults)."""
        opts = []
        if self.block_q:
            opts.append(f"block-q={self.block_q}")
        if self.block_kv:
            opts.append(f"block-kv={self.block_kv}")
        if self.wgmma:
            opts.append("wgmma=1")
        if self.tma:
            opts.append("tma=1")
        if self.ws:
            opts.append("warp-specialize=1")
            if not self.overlap:
                opts.append("intra-warpgroup-overlap=0")
            if self.pingpong:
                opts.append("pingpong=1")
        if self.rescale != 8.0:
            opts.append(f"rescale-threshold={self.rescale:g}")
        if self.split_kv != 1:
            opts.append(f"split-kv={self.split_kv}")
        if self.pack_gqa:
            opts.append("pack-gqa=1")
        if self.tf32:
            opts.append("tf32=1")
        return " ".join(opts)

    def chip(self, default: str) -> str:
        """The chip to compile for: wgmma needs sm_90a's features."""
        return "sm_90a" if self.wgmma else default

    @property
    def name(self) -> str:
        parts = [self.dtype, f"d{self.d}"]
        if self.dv != self.d:
            parts.append(f"dv{self.dv}")
        if self.hkv != HEADS:
            parts.append(f"hkv{self.hkv}")
        if self.causal:
            parts.append({"top_left": "causal", "bottom_right": "causalbr"}[
                self.causal])
        if self.mask:
            parts.append("mask")
        if self.bias:
            parts.append("bias")
        if self.wgmma:
            parts.append("wgmma")
        if self.tma:
            parts.append("tma")
        if self.ws:
            parts.append("ws" if self.overlap else "ws_serial")
            if self.pingpong:
                parts.append("pingpong")
        if self.rescale < 0:
            parts.append("eager")
        elif self.rescale != 8.0:
            parts.append(f"rescale{self.rescale:g}")
        if self.split_kv != 1:
            parts.append(f"splitkv{self.split_kv or ''}")
        if self.pack_gqa:
            parts.append("packgqa")
        if self.dynamic_heads:
            parts.append("dynheads")
        if self.tf32:
            parts.append("tf32")
        if self.block_q or self.block_kv:
            parts.append(f"q{self.block_q or 'def'}kv{self.block_kv or 'def'}")
        return "_".join(parts)

    @property
    def base_name(self) -> str:
        """The name without the tile suffix: what the variant computes."""
        return Variant(self.dtype, self.d, self.dv, self.causal, self.mask,
                       self.bias, self.hkv).name


def all_variants(only: str = "") -> list[Variant]:
    """Every variant, or those whose name matches the regex `only`."""
    return [v for v in _variants() if not only or re.search(only, v.name)]


def _variants() -> list[Variant]:
    out = []
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            out.append(Variant(dtype, d, d))
            out.append(Variant(dtype, d, d, causal="top_left"))
            out.append(Variant(dtype, d, d, mask=True, bias=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4))
    out.append(Variant("bf16", 256, 256))
    out.append(Variant("f16", 64, 128, causal="top_left", mask=True))
    out.append(Variant("f32", 64, 64, causal="top_left"))
    out.append(Variant("f32", 64, 64, causal="top_left", tf32=True))
    out.append(Variant("f32", 128, 128, mask=True, bias=True))
    # Head dims that are not a multiple of 64 (rows of other than whole
    # 128-byte lines, whose copies go to shared memory by phase).
    out.append(Variant("bf16", 96, 96, causal="top_left"))
    out.append(Variant("f16", 32, 80))
    # Tile alternatives at the benchmark's bf16 shapes: one row tile per
    # warp (the defaults before two row tiles), and 32-key blocks at D=128.
    for d in (64, 128):
        for causal in ("", "top_left"):
            out.append(Variant("bf16", d, d, causal=causal, block_q=64,
                               block_kv=64))
    out.append(Variant("bf16", 128, 128, block_q=128, block_kv=32))
    # The Hopper (wgmma) kernel at the benchmark's shapes, D=128 also with
    # one 64-row slab and with 32-key blocks; and, for correctness, with
    # mask and bias, GQA with bottom-right causal, and D=256.
    for d in (64, 128):
        for causal in ("", "top_left"):
            out.append(Variant("bf16", d, d, causal=causal, wgmma=True))
    out.append(Variant("bf16", 128, 128, block_q=64, block_kv=64, wgmma=True))
    out.append(Variant("bf16", 128, 128, block_q=128, block_kv=32,
                       wgmma=True))
    out.append(Variant("f16", 128, 128, mask=True, bias=True, wgmma=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       wgmma=True))
    out.append(Variant("bf16", 256, 256, wgmma=True))
    # The same with TMA loads: at the benchmark's shapes, and for
    # correctness with mask and bias and with GQA and batch coordinates.
    for d in (64, 128):
        for causal in ("", "top_left"):
            out.append(Variant("bf16", d, d, causal=causal, wgmma=True,
                               tma=True))
    out.append(Variant("f16", 128, 128, mask=True, bias=True, wgmma=True,
                       tma=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       wgmma=True, tma=True))
    # The warp-specialized kernel (FlashAttention-3's structure) at the
    # benchmark's shapes, also with two consumer warpgroups at D=64,
    # 128-key steps at D=128, without the intra-warpgroup overlap at
    # D=128, and with pingpong; and, for correctness, with mask and bias, GQA
    # with bottom-right causal, D=256, and Dv > Dqk (O's TMA store panels
    # reach into the K buffers).
    for d in (64, 128):
        for causal in ("", "top_left"):
            out.append(Variant("bf16", d, d, causal=causal, wgmma=True,
                               ws=True))
    out.append(Variant("bf16", 64, 64, block_q=128, block_kv=128, wgmma=True,
                       ws=True))
    out.append(Variant("bf16", 128, 128, block_q=128, block_kv=128,
                       wgmma=True, ws=True))
    out.append(Variant("bf16", 128, 128, wgmma=True, ws=True, overlap=False))
    for d in (64, 128):
        out.append(Variant("bf16", d, d, wgmma=True, ws=True, pingpong=True))
    out.append(Variant("f16", 128, 128, mask=True, bias=True, wgmma=True,
                       ws=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       wgmma=True, ws=True))
    out.append(Variant("bf16", 256, 256, wgmma=True, ws=True))
    out.append(Variant("f16", 64, 128, causal="top_left", mask=True,
                       wgmma=True, ws=True))
    # Rescaling at every step (FlashAttention-2) instead of lazily, timed
    # next to the lazy kernels at D=128.
    out.append(Variant("bf16", 128, 128, rescale=-1.0))
    out.append(Variant("bf16", 128, 128, wgmma=True, tma=True, rescale=-1.0))
    # Split-KV chosen at run time (flash-decoding), timed at decoding shapes
    # next to the single kernel; with GQA as decoding runs it, and on the
    # wgmma kernel with TMA loads, and warp specialized.
    for d in (64, 128):
        out.append(Variant("bf16", d, d, split_kv=0))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       split_kv=0))
    out.append(Variant("bf16", 128, 128, wgmma=True, tma=True, split_kv=0))
    out.append(Variant("bf16", 128, 128, wgmma=True, ws=True, split_kv=0))
    # GQA decoding with the group's 4 query heads packed into the rows of
    # one kernel (K/V read once per group), chosen at run time from Lq
    # (the variants' Lq is dynamic), with and without split-KV.
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       pack_gqa=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       split_kv=0, pack_gqa=True))
    # Head counts known only at run time (a raised dynamic-shape graph),
    # on the mma.sync and the warp-specialized kernels.
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       dynamic_heads=True))
    out.append(Variant("bf16", 128, 128, causal="bottom_right", hkv=4,
                       wgmma=True, ws=True, dynamic_heads=True))
    return out


def module_text(v: Variant) -> str:
    def ty(heads: int, dim: str) -> str:
        count = "?" if v.dynamic_heads else heads
        return f"memref<?x{count}x?x{dim}x{v.dtype}>"
    q, k, vv = ty(HEADS, str(v.d)), ty(v.hkv, str(v.d)), ty(v.hkv, str(v.dv))
    o = ty(HEADS, str(v.dv))
    args = [f"%q: {q}", f"%k: {k}", f"%v: {vv}"]
    extra = ""
    if v.mask:
        args.append("%mask: memref<?x1x1x?xi1>")
        extra += " mask(%mask : memref<?x1x1x?xi1>)"
    if v.bias:
        args.append(f"%bias: memref<1x{HEADS}x?x?xf32>")
        extra += f" bias(%bias : memref<1x{HEADS}x?x?xf32>)"
    args.append(f"%out: {o}")
    scale = 1.0 / (v.d ** 0.5)
    causal = f" causal = {v.causal}" if v.causal else ""
    return (
        f"func.func @attn_{v.name}({', '.join(args)})"
        " attributes {llvm.emit_c_interface} {\n"
        f"  attn.attention ins(%q, %k, %v : {q}, {k}, {vv}){extra}\n"
        f"      outs(%out : {o}) scale = {scale!r}{causal}\n"
        "  return\n}\n")


def c_table(variants: list[Variant]) -> str:
    """The variant table of bench/gpu/driver.c (its variants.inc)."""
    lines = []
    for v in variants:
        n = 4 + v.mask + v.bias
        params = ", ".join(["MemRef4 *"] * n)
        call = ", ".join(f"a[{i}]" for i in range(n))
        lines.append(f"void _mlir_ciface_attn_{v.name}({params});")
        lines.append(f"static void call_{v.name}(MemRef4 **a) "
                     f"{{ _mlir_ciface_attn_{v.name}({call}); }}")
    lines.append("static const Variant kVariants[] = {")
    for v in variants:
        lines.append(f'  {{"{v.name}", call_{v.name}, {v.d}, {v.dv}, {HEADS}, '
                     f"{v.hkv}, {int(v.mask)}, {int(v.bias)}, "
                     f"{4 if v.dtype == 'f32' else 2}}},")
    lines.append("};")
    lines.append("static const int kNumVariants = "
                 "sizeof(kVariants) / sizeof(kVariants[0]);")
    return "\n".join(lines) + "\n"


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    variants = all_variants(sys.argv[2] if len(sys.argv) == 3 else "")
    os.makedirs(out, exist_ok=True)
    manifest = {}
    for v in variants:
        with open(os.path.join(out, v.name + ".mlir"), "w") as f:
            f.write(module_text(v))
        with open(os.path.join(out, v.name + ".tiles"), "w") as f:
            f.write(v.tiles + "\n")
        if v.chip(""):
            with open(os.path.join(out, v.name + ".chip"), "w") as f:
                f.write(v.chip("") + "\n")
        manifest[v.name] = dict(asdict(v), heads=HEADS, base=v.base_name)
    with open(os.path.join(out, "variants.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(out, "variants.inc"), "w") as f:
        f.write(c_table(variants))
    for name in manifest:
        print(os.path.join(out, name + ".mlir"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
