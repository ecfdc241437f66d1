// The test-only emulation-fault option of --attn-to-gpu (see
// test/Integration/GPU/emulation-races.test, which uses it): a malformed
// spec, a fault without the emulation, and a fault that matches no
// synchronization of the kernel (a test that would check nothing) are
// errors.
// RUN: attn-opt %s --attn-to-gpu="emulate emulation-fault=barrier:2" | FileCheck %s
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=fence:1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=barrier:x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not attn-opt %s --attn-to-gpu="emulation-fault=barrier:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-EMULATE
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=barrier:3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTHING
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=mbarrier-wait:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTHING-TMA
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=named-barrier:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTHING-NAMED
// RUN: not attn-opt %s --attn-to-gpu="emulate emulation-fault=named-arrive:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTHING-ARRIVE

// The mma.sync kernel has three block barriers: after the prologue's
// copies, after each step's, and at the end of each step.
// CHECK-LABEL: func.func @f16_d64
// KIND: error: attn-to-gpu: emulation-fault must be empty or <barrier|copy-wait|proxy-fence|mbarrier-wait|wgmma-wait|named-barrier|named-arrive>:<N>, with emulate, got 'fence:1'
// INDEX: error: attn-to-gpu: emulation-fault must be empty {{.*}}, got 'barrier:x'
// NO-EMULATE: error: attn-to-gpu: emulation-fault must be empty {{.*}}, with emulate, got 'barrier:0'
// NOTHING: error: attn-to-gpu: emulation-fault 'barrier:3' left nothing out: no emulated kernel has that many synchronizations of its kind
// NOTHING-TMA: error: attn-to-gpu: emulation-fault 'mbarrier-wait:0' left nothing out
// NOTHING-NAMED: error: attn-to-gpu: emulation-fault 'named-barrier:0' left nothing out
// NOTHING-ARRIVE: error: attn-to-gpu: emulation-fault 'named-arrive:0' left nothing out
func.func @f16_d64(%q: memref<1x2x100x64xf16>, %k: memref<1x2x100x64xf16>,
                   %v: memref<1x2x100x64xf16>, %o: memref<1x2x100x64xf16>) {
  attn.attention ins(%q, %k, %v : memref<1x2x100x64xf16>, memref<1x2x100x64xf16>, memref<1x2x100x64xf16>)
      outs(%o : memref<1x2x100x64xf16>) scale = 0.125
  return
}
