// --attn-llvm-bf16-as-i16: bf16 data that LLVM code only moves becomes i16
// bits; a module where anything reads it as a float, or where code outside
// the module could see a bf16 signature, is left as it is.
// RUN: attn-opt %s --split-input-file --attn-llvm-bf16-as-i16 | FileCheck %s
// The CPU pipeline runs it last (and so does the GPU emulation's; with
// threads, bf16 values cross the blocks of OpenMP loop bodies): the
// lowered program of a bf16 op has no bf16 value left (the emulation's
// helpers name their MLIR signatures in a string, removed here).
// RUN: attn-opt %S/Inputs/bf16-attention.mlir --attn-cpu-pipeline | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %S/Inputs/bf16-attention.mlir --attn-cpu-pipeline=threads=true | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %S/Inputs/bf16-attention.mlir --attn-gpu-emulation-pipeline | sed 's/attn.emulation_helper = "[^"]*"//' | FileCheck %s --check-prefix=CPU
// CPU-NOT: {{vector<[0-9]+xbf16>|x bf16>|[:(,] bf16}}
// CPU: llvm.func @attention(
// CPU-NOT: {{vector<[0-9]+xbf16>|x bf16>|[:(,] bf16}}

// Types of results, block arguments, signatures and GEP/alloca element types;
// constants keep their bits (bf16 1.0 is 0x3F80 = 16256, -2.0 is 0xC000 =
// 49152 = -16384); the bitcast from i16 goes.
// CHECK-LABEL: llvm.mlir.global private constant @table(dense<[16256, -16384]> : tensor<2xi16>) {{.*}} : !llvm.array<2 x i16>
// CHECK-LABEL: llvm.func internal @pick(
// CHECK-SAME: %[[A:.*]]: vector<4xi16>, %[[B:.*]]: vector<4xi16>, %[[M:.*]]: vector<4xi1>) -> vector<4xi16>
// CHECK: %[[S:.*]] = llvm.select %[[M]], %[[A]], %[[B]] : vector<4xi1>, vector<4xi16>
// CHECK: %[[R:.*]] = llvm.shufflevector %[[S]], %[[S]] [3, 2, 1, 0] : vector<4xi16>
// CHECK: llvm.return %[[R]] : vector<4xi16>
// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[Q:.*]]: !llvm.ptr, %[[BITS:.*]]: i16)
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(16256 : i16) : i16
// CHECK-DAG: %[[SPLAT:.*]] = llvm.mlir.constant(dense<-16384> : vector<4xi16>) : vector<4xi16>
// CHECK: %[[X:.*]] = llvm.load %[[P]] : !llvm.ptr -> vector<4xi16>
// CHECK: %[[Y:.*]] = llvm.intr.masked.load %[[P]], %{{.*}}, %[[SPLAT]] {alignment = 2 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xi16>) -> vector<4xi16>
// CHECK: llvm.call @pick(%[[X]], %[[Y]], %{{.*}}) : (vector<4xi16>, vector<4xi16>, vector<4xi1>) -> vector<4xi16>
// CHECK: llvm.insertelement %[[BITS]], %{{.*}} : vector<4xi16>
// CHECK: llvm.br ^bb1(%{{.*}} : vector<4xi16>)
// CHECK: ^bb1(%[[Z:.*]]: vector<4xi16>):
// CHECK: llvm.getelementptr %[[Q]][1] : (!llvm.ptr) -> !llvm.ptr, i16
// CHECK: llvm.store %[[ONE]], %{{.*}} : i16, !llvm.ptr
// CHECK: llvm.store %[[Z]], %[[Q]] : vector<4xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.mlir.global private constant @table(dense<[1.0, -2.0]> : tensor<2xbf16>) {addr_space = 0 : i32} : !llvm.array<2 x bf16>
llvm.func internal @pick(%a: vector<4xbf16>, %b: vector<4xbf16>, %m: vector<4xi1>) -> vector<4xbf16> {
  %s = llvm.select %m, %a, %b : vector<4xi1>, vector<4xbf16>
  %r = llvm.shufflevector %s, %s [3, 2, 1, 0] : vector<4xbf16>
  llvm.return %r : vector<4xbf16>
}
llvm.func @copy(%p: !llvm.ptr, %q: !llvm.ptr, %bits: i16) {
  %one = llvm.mlir.constant(1.0 : bf16) : bf16
  %splat = llvm.mlir.constant(dense<-2.0> : vector<4xbf16>) : vector<4xbf16>
  %mask = llvm.mlir.constant(dense<[true, true, false, false]> : vector<4xi1>) : vector<4xi1>
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %x = llvm.load %p : !llvm.ptr -> vector<4xbf16>
  %y = llvm.intr.masked.load %p, %mask, %splat {alignment = 2 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xbf16>) -> vector<4xbf16>
  %z = llvm.call @pick(%x, %y, %mask) : (vector<4xbf16>, vector<4xbf16>, vector<4xi1>) -> vector<4xbf16>
  %e = llvm.bitcast %bits : i16 to bf16
  %w = llvm.insertelement %e, %z[%c0 : i32] : vector<4xbf16>
  llvm.br ^bb1(%w : vector<4xbf16>)
^bb1(%v: vector<4xbf16>):
  %g = llvm.getelementptr %q[1] : (!llvm.ptr) -> !llvm.ptr, bf16
  llvm.store %one, %g : bf16, !llvm.ptr
  llvm.store %v, %q : vector<4xbf16>, !llvm.ptr
  llvm.return
}

// -----

// Arithmetic reads the bits as a float: nothing changes.
// CHECK-LABEL: llvm.func @arithmetic(
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> bf16
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : bf16
llvm.func @arithmetic(%p: !llvm.ptr) {
  %x = llvm.load %p : !llvm.ptr -> bf16
  %y = llvm.fadd %x, %x : bf16
  llvm.store %y, %p : bf16, !llvm.ptr
  llvm.return
}

// -----

// So does a conversion, even one the module only moves the result of.
// CHECK-LABEL: llvm.func @conversion(
// CHECK: llvm.fpext %{{.*}} : bf16 to f32
llvm.func @conversion(%p: !llvm.ptr) -> f32 {
  %x = llvm.load %p : !llvm.ptr -> bf16
  %y = llvm.fpext %x : bf16 to f32
  llvm.return %y : f32
}

// -----

// A bf16 argument of a function other code can call (its ABI register
// would change from xmm0 to a general-purpose one on x86-64).
// CHECK-LABEL: llvm.func @public(
// CHECK-SAME: bf16
llvm.func @public(%x: bf16, %p: !llvm.ptr) {
  llvm.store %x, %p : bf16, !llvm.ptr
  llvm.return
}

// -----

// A declaration is defined elsewhere, with bf16.
// CHECK-LABEL: llvm.func @external(bf16)
// CHECK-LABEL: llvm.func @caller(
// CHECK: llvm.call @external(%{{.*}}) : (bf16) -> ()
llvm.func @external(bf16)
llvm.func @caller(%p: !llvm.ptr) {
  %x = llvm.load %p : !llvm.ptr -> bf16
  llvm.call @external(%x) : (bf16) -> ()
  llvm.return
}

// -----

// A local function whose address is taken may be called by code that
// expects bf16.
// CHECK-LABEL: llvm.func internal @callback(
// CHECK-SAME: bf16
// CHECK-LABEL: llvm.func @address(
llvm.func internal @callback(%x: bf16) {
  llvm.return
}
llvm.func @address() -> !llvm.ptr {
  %f = llvm.mlir.addressof @callback : !llvm.ptr
  llvm.return %f : !llvm.ptr
}

// -----

// A module without bf16 is left alone.
// CHECK-LABEL: llvm.func @f16(
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f16
llvm.func @f16(%p: !llvm.ptr) -> f16 {
  %x = llvm.load %p : !llvm.ptr -> f16
  llvm.return %x : f16
}
