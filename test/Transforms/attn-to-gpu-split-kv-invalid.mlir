// What split-KV (--attn-to-gpu="split-kv=N") does not take: a located
// error at the op.
// RUN: not attn-opt %s --attn-to-gpu="split-kv=129" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not attn-opt %s --attn-to-gpu="split-kv=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-to-gpu="split-kv=0 sm-count=-4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMS
// Requested tiles hold for the partial kernel too (no smaller default):
// too many for sm_86's 99 KB.
// RUN: not attn-opt %s --attn-to-gpu="split-kv=0 chip=sm_86 block-q=128 block-kv=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMEM

// MANY: attn-to-gpu-split-kv-invalid.mlir:[[@LINE+6]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: split-kv must be 0 (chosen at run time), 1 (no split) or a number of splits up to 128, got 129
// NEGATIVE: attn-to-gpu-split-kv-invalid.mlir:[[@LINE+5]]:3: error: {{.*}} split-kv must be 0 (chosen at run time), 1 (no split) or a number of splits up to 128, got -1
// SMS: attn-to-gpu-split-kv-invalid.mlir:[[@LINE+4]]:3: error: {{.*}} sm-count must be positive (0: from the chip), got -4
// SMEM: attn-to-gpu-split-kv-invalid.mlir:[[@LINE+3]]:3: error: {{.*}} the tiles need {{[0-9]+}} bytes of shared memory, more than a block's {{[0-9]+}} on sm_86
func.func @d128(%q: memref<1x4x?x128xbf16>, %k: memref<1x4x?x128xbf16>,
                %v: memref<1x4x?x128xbf16>, %o: memref<1x4x?x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x?x128xbf16>, memref<1x4x?x128xbf16>, memref<1x4x?x128xbf16>)
      outs(%o : memref<1x4x?x128xbf16>) scale = 0.088388347648
  return
}
