// The target chip of --attn-to-gpu="chip=" (the GPU pipeline passes its
// own): default tiles shrink to fit the chip's shared memory, requested
// tiles that do not fit are a located error, and wgmma needs sm_90a.
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90" --canonicalize | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-to-gpu="chip=sm_86" --canonicalize | FileCheck %s --check-prefix=SM86
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_80 block-q=128 block-kv=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not attn-opt %s --attn-to-gpu="chip=sm_90 wgmma" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a wgmma" --canonicalize | FileCheck %s --check-prefix=SM90A

// D = 128: 128 x 64 tiles (104448 bytes) on sm_90; sm_86 has 99 KB
// (101376 bytes) per block, so 128 x 32 (69632 bytes).
// SM90-LABEL: func.func @bf16_d128
// SM90: dynamic_shared_memory_size %c104448_i32
// SM86-LABEL: func.func @bf16_d128
// SM86: dynamic_shared_memory_size %c69632_i32
// SM90A-LABEL: func.func @bf16_d128
// SM90A: dynamic_shared_memory_size %c99328_i32
// WGMMA: attn-to-gpu-chip.mlir:[[@LINE+3]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the wgmma kernel needs chip=sm_90a, got sm_90
func.func @bf16_d128(%q: memref<1x4x100x128xbf16>, %k: memref<1x4x100x128xbf16>,
                     %v: memref<1x4x100x128xbf16>, %o: memref<1x4x100x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x100x128xbf16>, memref<1x4x100x128xbf16>, memref<1x4x100x128xbf16>)
      outs(%o : memref<1x4x100x128xbf16>) scale = 0.088388347648
  return
}

// D = 256: 64 x 32 tiles (101376 bytes) fit both; asked for 128 x 64
// (202752 bytes), they exceed sm_80's 163 KB (166912 bytes).
// SM90-LABEL: func.func @bf16_d256
// SM90: dynamic_shared_memory_size %c101376_i32
// SM86-LABEL: func.func @bf16_d256
// SM86: dynamic_shared_memory_size %c101376_i32
// SM90A-LABEL: func.func @bf16_d256
// SM90A: dynamic_shared_memory_size %c164864_i32
// SM80: attn-to-gpu-chip.mlir:[[@LINE+3]]:3: error: 'attn.attention' op cannot be lowered to the GPU kernel: the tiles need 202752 bytes of shared memory, more than a block's 166912 on sm_80; use smaller block-q/block-kv
func.func @bf16_d256(%q: memref<1x4x100x256xbf16>, %k: memref<1x4x100x256xbf16>,
                     %v: memref<1x4x100x256xbf16>, %o: memref<1x4x100x256xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x100x256xbf16>, memref<1x4x100x256xbf16>, memref<1x4x100x256xbf16>)
      outs(%o : memref<1x4x100x256xbf16>) scale = 0.0625
  return
}
