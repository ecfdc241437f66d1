// --attn-omp-schedule: worksharing loops without a schedule get one (dynamic
// by default), so that tiles of unequal cost (causal) balance over threads.
// (test/Transforms/attn-cpu-pipeline-threads.mlir: through the pipeline.)
// RUN: attn-opt %s --split-input-file --attn-omp-schedule | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-omp-schedule=kind=guided | FileCheck %s --check-prefix=GUIDED
// RUN: attn-opt %s --split-input-file --attn-omp-schedule=kind=static | FileCheck %s --check-prefix=STATIC
// RUN: not attn-opt %s --attn-omp-schedule=kind=runtime 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --kind option: Cannot find option named 'runtime'!

// CHECK-LABEL: func.func @unscheduled
// CHECK: omp.wsloop schedule(dynamic) {
// GUIDED-LABEL: func.func @unscheduled
// GUIDED: omp.wsloop schedule(guided) {
// STATIC-LABEL: func.func @unscheduled
// STATIC: omp.wsloop schedule(static) {
func.func @unscheduled(%n: i32, %buf: memref<?xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i32 = (%c0) to (%n) step (%c1) {
        %j = arith.index_cast %i : i32 to index
        memref.store %x, %buf[%j] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A schedule the loop declares stays, chunk included.
// CHECK-LABEL: func.func @scheduled
// CHECK: omp.wsloop schedule(static = %{{.*}} : i32) {
// GUIDED-LABEL: func.func @scheduled
// GUIDED: omp.wsloop schedule(static = %{{.*}} : i32) {
func.func @scheduled(%n: i32, %buf: memref<?xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %x = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static = %c4 : i32) {
      omp.loop_nest (%i) : i32 = (%c0) to (%n) step (%c1) {
        %j = arith.index_cast %i : i32 to index
        memref.store %x, %buf[%j] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
