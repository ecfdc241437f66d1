// `mlir-opt --canonicalize` of MLIR 22.1 crashes (SIGSEGV in
// arith::ConstantIntOp::create) on `arith.cmpf true` or `false` whose
// operands are an integer-to-float conversion and a float constant; other
// predicates are fine. Found by the differential tester's random masks
// (test/lib/mask_grammar.py), which no longer draw those predicates.
// Not a test: run it to see whether an LLVM update fixed it.
func.func @f(%a: index, %b: index) -> i1 {
  %c = arith.cmpi sge, %a, %b : index
  %f = arith.uitofp %c : i1 to f32
  %k = arith.constant 3.0 : f32
  %r = arith.cmpf false, %f, %k : f32
  return %r : i1
}
