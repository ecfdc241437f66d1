#!/usr/bin/python3
"""Compiles every GPU kernel variant to PTX and assembles it with ptxas -v.

For each variant of gpu_variants.py: ``attn-opt --attn-gpu-pipeline=
"chip=CHIP format=isa"`` (sm_90a for the wgmma variants, which are skipped
for chips before sm_90), extraction of the PTX, checks that it uses the
tensor-core path (mma.sync m16n8k16 of the variant's type, ldmatrix, its
.trans form, cp.async; or wgmma with its fences and the async-proxy fence,
or, with TMA, cp.async.bulk.tensor loads with their mbarriers instead of
cp.async, and bulk tensor stores of O; warp specialized, also setmaxnreg,
mbarrier arrivals and the consumers' named barrier),
then ``ptxas -v --gpu-name CHIP``. Prints one line per variant (registers,
shared memory, stack, spills; the most of its kernels where split-KV gives
it three, or GQA packing two copies) and exits 1 if any variant spills, has a
stack frame, misses one of the instructions, has its wgmma serialized, or
moves registers between warpgroups (setmaxnreg) with budgets that do not
fit the launch's (a setmaxnreg.inc that would wait forever).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_binary  # noqa: E402
import gpu_variants  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--attn-opt", required=True)
    p.add_argument("--ptxas", required=True)
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--features", default="+ptx80")
    args = p.parse_args()

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'variant':34} {'regs':>5} {'smem(dyn)':>9} {'stack':>6} "
              f"{'spill st':>8} {'spill ld':>8}")
        for v in gpu_variants.all_variants():
            chip = v.chip(args.chip)
            if v.wgmma and not args.chip.startswith("sm_90"):
                continue  # sm_90a kernels do not run on older chips
            src = os.path.join(tmp, v.name + ".mlir")
            with open(src, "w") as f:
                f.write(gpu_variants.module_text(v))
            out = subprocess.run(
                [args.attn_opt, src,
                 f"--attn-gpu-pipeline=chip={chip} "
                 f"features={args.features} format=isa {v.tiles}"],
                capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{v.name}: attn-opt failed\n{out.stderr}")
                failures += 1
                continue
            # One kernel per gpu.binary; split-KV variants have three.
            # GQA packing doubles them: the variants' Lq is dynamic, so the
            # packed op and the op as it was are both compiled; with
            # bottom-right causal masking it triples them, the packed op
            # without causal masking (Lq = 1) being the third.
            objects = gpu_binary.extract(out.stdout)
            copies = 1
            if v.pack_gqa:
                copies = 3 if v.causal == "bottom_right" else 2
            expected = (1 if v.split_kv == 1 else 3) * copies
            if len(objects) != expected:
                print(f"{v.name}: expected {expected} kernel object(s), "
                      f"got {len(objects)}")
                failures += 1
                continue
            ptxs = [obj[3].decode() for obj in objects]
            ptx = "\n".join(ptxs)
            if v.wgmma:
                wanted = (f"wgmma.mma_async.sync.aligned.m64n{v.dv}k16.f32."
                          f"{v.dtype}.{v.dtype}",
                          "wgmma.fence.sync.aligned",
                          "wgmma.commit_group.sync.aligned",
                          "wgmma.wait_group.sync.aligned")
                if v.tma or v.ws:
                    wanted += ("cp.async.bulk.tensor.4d.shared::cluster.global"
                               ".mbarrier::complete_tx::bytes",
                               "mbarrier.init.shared.b64",
                               "fence.mbarrier_init.release.cluster",
                               "mbarrier.arrive.expect_tx.shared.b64",
                               "mbarrier.try_wait.parity.shared.b64",
                               "cp.async.bulk.tensor.4d.global.shared::cta",
                               "cp.async.bulk.wait_group.read")
                else:
                    wanted += ("fence.proxy.async.shared::cta",)
                if v.ws:
                    # The producer's registers go to the consumers, which
                    # release each buffer by arrivals and meet at the end
                    # on a named barrier.
                    wanted += ("setmaxnreg.dec.sync.aligned.u32",
                               "setmaxnreg.inc.sync.aligned.u32",
                               "mbarrier.arrive.shared.b64",
                               "bar.sync \t1,")
                if v.pingpong:
                    # The consumers' turns: a barrier per warpgroup.
                    wanted += ("bar.arrive",)
            elif v.dtype == "f32":  # the TF32 path: no ldmatrix for 32 bits
                wanted = ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
                          "cvt.rna.tf32.f32", "shfl.sync.idx")
            else:
                wanted = (f"mma.sync.aligned.m16n8k16.row.col.f32.{v.dtype}."
                          f"{v.dtype}.f32",
                          "ldmatrix.sync.aligned.m8n8.x4.shared",
                          "ldmatrix.sync.aligned.m8n8.x4.trans")
            wanted += ("shfl.sync.bfly",)
            # The f32 bias and the bool mask are read in pairs where their
            # layout allows it.
            if v.bias:
                wanted += ("ld.global.v2.f32",)
            if v.mask:
                wanted += ("ld.global.b16",)
            # TMA replaces every thread's cp.async.
            copies = ("cp.async.cg.shared.global", "cp.async.wait_group")
            if v.tma or v.ws:
                unwanted = copies
            else:
                wanted += copies
                unwanted = ()
            missing = [s for s in wanted if s not in ptx]
            missing += [f"no {s}" for s in unwanted if s in ptx]
            log, returncode, pool = "", 0, ""
            for n, text in enumerate(ptxs):
                ptx_path = os.path.join(tmp, f"{v.name}.{n}.ptx")
                with open(ptx_path, "w") as f:
                    f.write(text)
                asm = subprocess.run(
                    [args.ptxas, "-v", "--gpu-name", chip, ptx_path, "-o",
                     os.devnull], capture_output=True, text=True)
                log += asm.stdout + asm.stderr
                returncode = returncode or asm.returncode
                # setmaxnreg moves registers within the block's share of
                # the register file: the launch must take the whole share,
                # else the consumers' setmaxnreg.inc waits forever. Per
                # kernel (a split variant's partial kernel may have other
                # warpgroups than its single one).
                text_regs = [int(x) for x in re.findall(
                    r"Used (\d+) registers", asm.stdout + asm.stderr)]
                if text_regs and not pool:
                    pool = register_pool_error(text, max(text_regs))
            # Split-KV variants have three kernels (the single one, the
            # partial one and the merge): the most registers and shared
            # memory of any, and every kernel's stack and spills.
            regs = [int(x) for x in re.findall(r"Used (\d+) registers", log)]
            frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill "
                                r"stores, (\d+) bytes spill loads", log)
            if returncode != 0 or not regs or len(frames) != len(regs):
                print(f"{v.name}: ptxas failed\n{log}")
                failures += 1
                continue
            stack, st, ld = (sum(int(f[i]) for f in frames) for i in range(3))
            smem = launch_smem_bytes(out.stdout)
            kernels = f"  ({len(regs)} kernels)" if len(regs) > 1 else ""
            regs = max(regs)
            # ptxas serializes wgmma (waits after each) where it cannot prove
            # the accumulator registers untouched while one is in flight.
            serialized = "wgmma.mma_async instructions are serialized" in log
            # ptxas drops setmaxnreg where it cannot tell the register count
            # at entry (no .minnctapersm): the consumers keep the launch's.
            if "'setmaxnreg' ignored" in log:
                pool = "ptxas ignored setmaxnreg (C7508)"
            bad = (stack or st or ld or missing or smem < 0 or serialized
                   or pool)
            print(f"{v.name:34} {regs:>5} {smem:>9} {stack:>6} "
                  f"{st:>8} {ld:>8}" + kernels
                  + (f"  FAIL missing {missing}" if missing else "")
                  + ("  FAIL spills/stack" if stack or st or ld else "")
                  + ("  FAIL wgmma serialized" if serialized else "")
                  + (f"  FAIL {pool}" if pool else ""))
            failures += bool(bad)
    print(f"{failures} failing variant(s)")
    return 1 if failures else 0


def register_pool_error(ptx: str, regs: int) -> str:
    """Where the kernel moves registers between warpgroups (setmaxnreg):
    why the budgets do not fit the launch, or ''. The block launches with
    `regs` per thread; a warpgroup's setmaxnreg changes its own 128
    threads' registers from there, and setmaxnreg.inc waits until the block
    has registers to spare: the launch must take the block's whole share
    of the SM's 64K (the rest is not the block's to take), and the
    budgets must fit in it."""
    budgets = re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+);",
                         ptx)
    if not budgets:
        return ""
    threads = re.search(r"\.maxntid (\d+), 1, 1", ptx)
    if not threads:
        return "setmaxnreg without .maxntid"
    groups = int(threads.group(1)) // 128
    # Registers per thread are allocated in units of 8, at most 255.
    launch = min(65536 // (128 * groups) // 8 * 8, 255)
    if regs != launch:
        return (f"setmaxnreg needs the launch to take {launch} registers, "
                f"ptxas gave {regs}")
    dec = [int(n) for kind, n in budgets if kind == "dec"]
    inc = [int(n) for kind, n in budgets if kind == "inc"]
    if len(dec) != 1 or len(inc) != 1:
        return f"expected one setmaxnreg.dec and one .inc, got {budgets}"
    total = 128 * dec[0] + 128 * (groups - 1) * inc[0]
    if total > groups * 128 * launch:
        return (f"setmaxnreg budgets take {total} registers, more than the "
                f"block's {groups * 128 * launch}")
    return ""


def launch_smem_bytes(host: str) -> int:
    """The most dynamic shared memory a launch of the host code requests
    (read from the lowered IR, not recomputed), or -1 if one is not found."""
    uses = re.findall(r"dynamic_shared_memory_size (%[\w]+)", host)
    if not uses:
        return -1
    sizes = []
    for use in uses:
        value = re.search(re.escape(use) +
                          r" = llvm\.mlir\.constant\((\d+) : i32\)", host)
        if not value:
            return -1
        sizes.append(int(value.group(1)))
    return max(sizes)

if __name__ == "__main__":
    sys.exit(main())
