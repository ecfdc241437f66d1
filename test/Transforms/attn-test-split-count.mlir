// RUN: attn-opt %s --attn-test-split-count --split-input-file | FileCheck %s

// The test-only pass defines each declaration that carries the wave and the
// cap as the split-count host code of --attn-to-gpu="split-kv=0": the best
// eligible efficiency, then the fewest eligible splits within 85% of it,
// and 1 for grids of at least 80% of a wave (5 x blocks >= 4 x 264).
// CHECK-LABEL: func.func private @count(
// CHECK-SAME: %[[BLOCKS:[a-z0-9]+]]: index, %[[KV:[a-z0-9]+]]: index) -> index
// CHECK: %[[MOST:.*]] = arith.minui {{.*}}, %c128
// CHECK: %[[BEST:.*]] = scf.for {{.*}} -> (f32) {
// CHECK: arith.ceildivui %[[KV]]
// CHECK: scf.yield
// CHECK: %[[GOOD:.*]] = arith.mulf %[[BEST]], %{{.*}} : f32
// CHECK: %[[PICK:.*]] = scf.for {{.*}} to %[[MOST]] {{.*}} -> (index) {
// CHECK: arith.cmpf oge, %{{.*}}, %[[GOOD]]
// CHECK: scf.yield
// CHECK: %[[FIVE:.*]] = arith.muli %[[BLOCKS]], %c5
// CHECK: %[[FULL:.*]] = arith.cmpi uge, %[[FIVE]], %c1056
// CHECK: %[[SPLITS:.*]] = arith.select %[[FULL]], %c1{{.*}}, %[[PICK]]
// CHECK: return %[[SPLITS]] : index
func.func private @count(index, index) -> index
    attributes {attn.test.wave_blocks = 264 : i64, attn.test.max_splits = 128 : i64}

// A function without the attributes is left alone.
// CHECK-LABEL: func.func private @other(index, index) -> index
// CHECK-NOT: scf.for
func.func private @other(index, index) -> index
