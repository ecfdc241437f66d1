//===- LLVMBF16AsI16.cpp - bf16 data carried as i16 in LLVM code ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// LLVM promotes `bfloat` values to float on targets without bf16 arithmetic,
// so code that only moves bf16 bits (the CPU kernels, the GPU emulation)
// gets per-element soft-float conversions. As i16 the same bits move as
// integers. The rewrite is all or nothing per module: one op that reads the
// values as floats, or a signature other code calls, keeps them bf16.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-llvm-bf16-as-i16"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLLVMBF16ASI16
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

// A type or attribute with bf16 in it.
template <typename TypeOrAttr> bool mentionsBF16(TypeOrAttr element) {
  return element.walk([](BFloat16Type) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

bool mentionsBF16(Operation *op) {
  auto isBF16 = [](Type type) { return mentionsBF16(type); };
  if (llvm::any_of(op->getResultTypes(), isBF16) ||
      llvm::any_of(op->getOperandTypes(), isBF16))
    return true;
  // An entry block's arguments are the op's to define (a function's are its
  // type, an attribute); other blocks' come from branches, checked as ops.
  if (!isa<LLVM::LLVMFuncOp>(op))
    for (Region &region : op->getRegions())
      if (!region.empty() &&
          llvm::any_of(region.front().getArgumentTypes(), isBF16))
        return true;
  return mentionsBF16(op->getAttrDictionary());
}

// Identified structs are named, possibly recursive types that the replacer
// cannot rebuild.
bool hasIdentifiedStruct(Type type) {
  return type
      .walk([](LLVM::LLVMStructType s) {
        return s.isIdentified() ? WalkResult::interrupt()
                                : WalkResult::advance();
      })
      .wasInterrupted();
}

// A constant's or global's value the rewrite can reinterpret bit for bit.
bool isReinterpretableValue(Attribute value) {
  return !value || !mentionsBF16(value) ||
         isa<FloatAttr, DenseIntOrFPElementsAttr>(value);
}

// The symbols that `module` refers to other than as a call's callee (a
// function's address taken, for one); none where an op's uses are unknown.
using SymbolNames = std::optional<DenseSet<StringAttr>>;
SymbolNames symbolsUsedBesidesCalls(ModuleOp module) {
  auto uses = SymbolTable::getSymbolUses(&module.getBodyRegion());
  if (!uses)
    return std::nullopt;
  DenseSet<StringAttr> names;
  for (const SymbolTable::SymbolUse &use : *uses)
    if (!isa<LLVM::CallOp>(use.getUser()))
      names.insert(use.getSymbolRef().getRootReference());
  return names;
}

// Why `op`, which mentions bf16, keeps the module's bf16 values floats, or
// null if it does not. `usedBesidesCalls` computes the module's
// symbolsUsedBesidesCalls on first use.
const char *blocker(Operation *op,
                    function_ref<const SymbolNames &()> usedBesidesCalls) {
  for (Type type : op->getResultTypes())
    if (hasIdentifiedStruct(type))
      return "a named struct type";
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
    LLVM::Linkage linkage = func.getLinkage();
    if (func.isExternal() || (linkage != LLVM::Linkage::Internal &&
                              linkage != LLVM::Linkage::Private))
      return "a function signature visible outside the module";
    // Every use a call: the address reaches no code that expects bf16.
    const SymbolNames &used = usedBesidesCalls();
    if (!used)
      return "an unknown use of a function";
    return used->contains(func.getSymNameAttr())
               ? "a function whose address is taken"
               : nullptr;
  }
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    // Callees are checked as functions; an indirect call's is unknown.
    return call.getCallee() ? nullptr : "an indirect call";
  }
  if (auto constant = dyn_cast<LLVM::ConstantOp>(op))
    return isReinterpretableValue(constant.getValue())
               ? nullptr
               : "a constant of an unsupported attribute kind";
  if (auto global = dyn_cast<LLVM::GlobalOp>(op))
    return isReinterpretableValue(global.getValueOrNull())
               ? nullptr
               : "a global of an unsupported attribute kind";
  // Ops that move bits without reading them as floats.
  if (isa<LLVM::ReturnOp, LLVM::BrOp, LLVM::CondBrOp, LLVM::SwitchOp,
          LLVM::LoadOp, LLVM::StoreOp, LLVM::MaskedLoadOp, LLVM::MaskedStoreOp,
          LLVM::masked_gather, LLVM::masked_scatter, LLVM::GEPOp,
          LLVM::AllocaOp, LLVM::BitcastOp, LLVM::ExtractValueOp,
          LLVM::InsertValueOp, LLVM::ExtractElementOp, LLVM::InsertElementOp,
          LLVM::ShuffleVectorOp, LLVM::SelectOp, LLVM::PoisonOp, LLVM::UndefOp,
          LLVM::ZeroOp, LLVM::FreezeOp>(op))
    return nullptr;
  return "an op that reads bf16 values as floats";
}

struct AttnLLVMBF16AsI16Pass
    : public attn::impl::AttnLLVMBF16AsI16Base<AttnLLVMBF16AsI16Pass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<SymbolNames> usedBesidesCalls;
    auto getUsedBesidesCalls = [&]() -> const SymbolNames & {
      if (!usedBesidesCalls)
        usedBesidesCalls = symbolsUsedBesidesCalls(module);
      return *usedBesidesCalls;
    };
    bool any = false;
    WalkResult check = module.walk([&](Operation *op) {
      if (op == module.getOperation() || !mentionsBF16(op))
        return WalkResult::advance();
      any = true;
      if (const char *why = blocker(op, getUsedBesidesCalls)) {
        (void)why; // Only read in debug builds.
        LLVM_DEBUG(llvm::dbgs() << "bf16 kept: " << why << ": " << *op << "\n");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (check.wasInterrupted() || !any)
      return markAllAnalysesPreserved();

    MLIRContext *context = &getContext();
    Type i16 = IntegerType::get(context, 16);
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](BFloat16Type) -> Type { return i16; });
    replacer.addReplacement(
        [&](FloatAttr attr) -> std::optional<std::pair<Attribute, WalkResult>> {
          if (!attr.getType().isBF16())
            return std::nullopt;
          return std::make_pair(
              IntegerAttr::get(i16, attr.getValue().bitcastToAPInt()),
              WalkResult::skip());
        });
    replacer.addReplacement(
        [&](DenseIntOrFPElementsAttr attr)
            -> std::optional<std::pair<Attribute, WalkResult>> {
          if (!attr.getElementType().isBF16())
            return std::nullopt;
          return std::make_pair(Attribute(attr.bitcast(i16)),
                                WalkResult::skip());
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    // Bitcasts between bf16 and i16 now cast i16 to itself.
    module.walk([](LLVM::BitcastOp cast) {
      if (cast.getArg().getType() == cast.getType()) {
        cast.replaceAllUsesWith(cast.getArg());
        cast.erase();
      }
    });
  }
};
} // namespace
