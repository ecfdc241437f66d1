// Hand-written bad inputs for test/Reliability/bad-inputs.test: each chunk
// must make attn-opt exit with status 1 and an error with a file:line:col
// location, under every pipeline test/lib/bad_inputs.py runs. The verifier
// rules of attn.attention are one by one in test/Dialect/Attn/invalid.mlir;
// these are the inputs around them.

// Truncated in the middle of the op.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>

// -----
// No outs.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// No scale.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Two operands in ins.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Four operands in ins.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Scale of the wrong kind.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = "one" -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Scale that does not fit an f32.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0e400 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Unknown causal alignment.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 causal = middle -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Causal given twice.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 causal = top_left causal = top_left -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Mask given twice.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xi1>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<1x1x4x4xi1>) mask(%m : tensor<1x1x4x4xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Bias before mask (the assembly format's order is mask, bias).
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xi1>, %b: tensor<1x1x4x4xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) bias(%b : tensor<1x1x4x4xf32>) mask(%m : tensor<1x1x4x4xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Mask of an integer type other than i1.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xi8>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<1x1x4x4xi8>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Unranked operands.
func.func @f(%q: tensor<*xf32>, %k: tensor<*xf32>, %v: tensor<*xf32>, %o: tensor<*xf32>) -> tensor<*xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) outs(%o : tensor<*xf32>) scale = 1.0 -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----
// Vectors instead of tensors.
func.func @f(%q: vector<1x2x4x8xf32>, %k: vector<1x2x4x8xf32>, %v: vector<1x2x4x8xf32>, %o: vector<1x2x4x8xf32>) -> vector<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : vector<1x2x4x8xf32>, vector<1x2x4x8xf32>, vector<1x2x4x8xf32>) outs(%o : vector<1x2x4x8xf32>) scale = 1.0 -> vector<1x2x4x8xf32>
  return %r : vector<1x2x4x8xf32>
}

// -----
// A negative dim.
func.func @f(%q: tensor<1x-2x4x8xf32>) {
  return
}

// -----
// A dim that does not fit in 64 bits.
func.func @f(%q: tensor<1x2x99999999999999999999x8xf32>) {
  return
}

// -----
// The type of an operand differs from its definition.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf16>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// An undefined value.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %nothing : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with no operand segment sizes.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) {scale = 1.0 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with operand segment sizes that do not add up.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>, scale = 1.0 : f32}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with negative operand segment sizes.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, -1, 1, 1>, scale = 1.0 : f32}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with a scale of the wrong type.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1>, scale = 1 : i32}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with a causal attribute of the wrong kind.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1>, scale = 1.0 : f32, causal = 7 : i64}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The generic form with two results.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r:2 = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1>, scale = 1.0 : f32}> : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return %r#0 : tensor<1x2x4x8xf32>
}

// -----
// The generic form with a region.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1>, scale = 1.0 : f32}> ({
  ^bb0:
  }) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// The head dims of q and k differ, hugely.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x9223372036854775807xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x9223372036854775807xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// A mask with more dims than the scores.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x1x4x4xi1>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<1x1x1x4x4xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Memref operands with a tensor result.
func.func @f(%q: memref<1x2x4x8xf32>, %k: memref<1x2x4x8xf32>, %v: memref<1x2x4x8xf32>, %o: memref<1x2x4x8xf32>) {
  %r = attn.attention ins(%q, %k, %v : memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>) outs(%o : memref<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return
}

// -----
// A function that uses its result before defining it.
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%r : tensor<1x2x4x8xf32>) scale = 1.0 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----
// Not UTF-8 inside a string attribute, and an unterminated string.
func.func @f() attributes {x = "caf\E9
}

// -----
// Unbalanced braces.
func.func @f() {
  return
}}

// -----
// Deep nesting of an attribute.
func.func @f() attributes {x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
}
