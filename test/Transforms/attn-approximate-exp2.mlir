// RUN: attn-opt %s --attn-approximate-exp2 --split-input-file | FileCheck %s

// A vector exp2 becomes the polynomial on the same shape: x clamped to
// [-127, 128] (ordered compares, so NaN passes through), n = floor(x + 0.5),
// seven fmas on x - n, 2^n as two exponent-bit powers, and 0 below -127.

// CHECK-LABEL: func @vector
// CHECK-SAME: (%[[X:.*]]: vector<4x16xf32>)
// CHECK-DAG: %[[LO:.*]] = arith.constant dense<-1.270000e+02> : vector<4x16xf32>
// CHECK-DAG: %[[HI:.*]] = arith.constant dense<1.280000e+02> : vector<4x16xf32>
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[X]], %[[LO]] : vector<4x16xf32>
// CHECK: %[[X1:.*]] = arith.select %[[BELOW]], %[[LO]], %[[X]]
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %[[X1]], %[[HI]]
// CHECK: %[[XC:.*]] = arith.select %[[ABOVE]], %[[HI]], %[[X1]]
// CHECK: %[[HALF:.*]] = arith.addf %[[XC]], %{{.*}} : vector<4x16xf32>
// CHECK: %[[FLOOR:.*]] = math.floor %[[HALF]] : vector<4x16xf32>
// CHECK: %[[DEFINED:.*]] = arith.cmpf oge, %[[FLOOR]], %[[LO]]
// CHECK: %[[N:.*]] = arith.select %[[DEFINED]], %[[FLOOR]], %[[LO]]
// CHECK: %[[R:.*]] = arith.subf %[[XC]], %[[N]] : vector<4x16xf32>
// CHECK-COUNT-7: math.fma %{{.*}}, %[[R]], %{{.*}} : vector<4x16xf32>
// CHECK: %[[NI:.*]] = arith.fptosi %[[N]] : vector<4x16xf32> to vector<4x16xi32>
// CHECK: %[[N1:.*]] = arith.shrsi %[[NI]], %{{.*}} : vector<4x16xi32>
// CHECK: %[[N2:.*]] = arith.subi %[[NI]], %[[N1]] : vector<4x16xi32>
// CHECK: arith.addi %[[N1]]
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<4x16xi32> to vector<4x16xf32>
// CHECK: arith.mulf
// CHECK: arith.addi %[[N2]]
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<4x16xi32> to vector<4x16xf32>
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: %[[OUT:.*]] = arith.select %[[BELOW]], %{{.*}}, %[[P]]
// CHECK-NOT: math.exp2
// CHECK: return %[[OUT]]
func.func @vector(%x: vector<4x16xf32>) -> vector<4x16xf32> {
  %y = math.exp2 %x : vector<4x16xf32>
  return %y : vector<4x16xf32>
}

// -----

// Scalars too.

// CHECK-LABEL: func @scalar
// CHECK: math.floor %{{.*}} : f32
// CHECK-COUNT-7: math.fma {{.*}} : f32
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK-NOT: math.exp2
func.func @scalar(%x: f32) -> f32 {
  %y = math.exp2 %x : f32
  return %y : f32
}

// -----

// Other element types are left to their own lowering, and nothing else in
// the function changes (no folding).

// CHECK-LABEL: func @other_types
// CHECK: math.exp2 %{{.*}} : vector<8xf16>
// CHECK: math.exp2 %{{.*}} : f64
// CHECK: math.exp2 %{{.*}} : vector<[4]xf32>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: arith.addf %[[ONE]], %[[ONE]] : f64
func.func @other_types(%h: vector<8xf16>, %d: f64, %s: vector<[4]xf32>) -> (vector<8xf16>, f64, vector<[4]xf32>, f64) {
  %a = math.exp2 %h : vector<8xf16>
  %b = math.exp2 %d : f64
  %c = math.exp2 %s : vector<[4]xf32>
  %one = arith.constant 1.0 : f64
  %two = arith.addf %one, %one : f64
  return %a, %b, %c, %two : vector<8xf16>, f64, vector<[4]xf32>, f64
}
