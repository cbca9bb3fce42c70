//===- GemmOperandLayouts.cpp - --kb-gemm-operand-layouts -----------------===//
//
// ResMLP's and MLP-Mixer's residual stream is stored transposed ([B, N, C]
// laid out as [B, C, N]: PatchEmbed's `flatten(2).transpose(1, 2)`), and
// so is every pointwise result computed from it in eager, TensorIterator
// keeping its first operand's layout: the Affine norm before each channel
// MLP. linear then folds [B, N, C] to [B * N, C], which that layout cannot
// view, so ATen copies it to row-major first (12 `direct_copy` kernels, a
// read and a write of the activation each, in resmlp_12's forward). The
// kernel producing it can write row-major in the same pass instead: it
// reads and writes whole 32 x 32 tiles in both layouts (TiledTranspose.cpp).
// Layouts are not values: nothing but speed depends on them, and the
// runtime allocates each output with the strides its job names.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

namespace kb {
#define GEN_PASS_DEF_GEMMOPERANDLAYOUTS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

/// Whether `use` is an operand that ATen folds to a row-major matrix before
/// the GEMM (a copy unless it is row-major): linear's input, and matmul's
/// first operand of rank 3 or more. bmm and mm take transposed matrices as
/// they are.
bool foldedGemmOperand(OpOperand &use) {
  auto a = dyn_cast<AtenOp>(use.getOwner());
  if (!a || a.getInplace())
    return false;
  unsigned k = use.getOperandNumber();
  if (a.getName() == "linear")
    return k == 0;
  if (a.getName() == "matmul")
    return k == 0 && cast<RankedTensorType>(use.get().getType()).getRank() >= 3;
  return false;
}

/// Kernels of pointwise ops only: their outputs are written element by
/// element, so one can change layout without changing the kernel's plan.
bool pointwiseOnly(KernelOp kernel) {
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isa<ConstantOp, ListOp>(op))
      continue;
    auto a = dyn_cast<AtenOp>(op);
    auto kind = a ? a->getAttrOfType<StringAttr>("kind") : StringAttr();
    if (!kind ||
        (kind.getValue() != "elementwise" && kind.getValue() != "broadcast"))
      return false;
  }
  return true;
}

/// A traced layout that is row-major with the last two dims swapped, both
/// long enough for the tiles TiledTranspose.cpp writes it in.
bool tileableTranspose(RankedTensorType t) {
  std::optional<SmallVector<int64_t>> st = encodedStrides(t);
  ArrayRef<int64_t> shape = t.getShape();
  size_t r = shape.size();
  return st && r >= 2 && shape[r - 2] >= kTiledTransposeMinDim &&
         shape[r - 1] >= kTiledTransposeMinDim &&
         isSwappedLastTwoStrides(shape, *st);
}

struct GemmOperandLayoutsPass
    : kb::impl::GemmOperandLayoutsBase<GemmOperandLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<KernelOp> kernels;
    llvm::StringMap<int> launches;
    module.walk([&](KernelOp k) { kernels[k.getSymName()] = k; });
    module.walk([&](LaunchOp l) { ++launches[l.getKernel()]; });
    module.walk([&](LaunchOp launch) {
      auto it = kernels.find(launch.getKernel());
      if (it == kernels.end() || launches[launch.getKernel()] != 1 ||
          !pointwiseOnly(it->second))
        return;
      auto yield = cast<YieldOp>(it->second.getBody().front().getTerminator());
      SmallVector<unsigned> flips;
      bool othersTileable = true;
      for (auto [k, result] : llvm::enumerate(launch.getResults())) {
        auto t = dyn_cast<RankedTensorType>(result.getType());
        if (!t || !t.getEncoding())
          continue;
        Value inner = yield.getValues()[k];
        // A value yielded twice keeps one layout for both results.
        if (!result.use_empty() &&
            llvm::all_of(result.getUses(), foldedGemmOperand) &&
            !isa<BlockArgument>(inner) &&
            llvm::count(yield.getValues(), inner) == 1)
          flips.push_back(k);
        else
          othersTileable &= tileableTranspose(t);
      }
      // Outputs that keep another layout beside a row-major one are only
      // written at full speed as the tiled kernel writes them (the last two
      // dims swapped, TiledTranspose.cpp); any other layout would be stored
      // a float a sector, which can cost more than ATen's copy.
      if (!othersTileable)
        return;
      for (unsigned k : flips) {
        Value result = launch.getResult(k), inner = yield.getValues()[k];
        auto t = cast<RankedTensorType>(result.getType());
        auto rowMajor = RankedTensorType::get(t.getShape(), t.getElementType());
        inner.setType(rowMajor);
        result.setType(rowMajor);
      }
    });
  }
};

} // namespace
