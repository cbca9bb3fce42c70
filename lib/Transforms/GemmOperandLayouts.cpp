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

/// A transpose of the last two dims whose every user folds it into a GEMM
/// (MLP-Mixer's `norm1(x).transpose(1, 2)` before the token MLP): the
/// value it views is best stored so that the view is row-major.
bool transposedGemmOperand(OpOperand &use) {
  auto a = dyn_cast<AtenOp>(use.getOwner());
  if (!a || a.getName() != "transpose" || use.getOperandNumber() != 0 ||
      a->getNumResults() != 1 || a->getResult(0).use_empty())
    return false;
  int64_t r = cast<RankedTensorType>(use.get().getType()).getRank();
  auto d0 = getConstantNumber(a.getArgs()[1]),
       d1 = getConstantNumber(a.getArgs()[2]);
  if (r < 2 || !d0 || !d1)
    return false;
  int64_t x = (int64_t)*d0 < 0 ? (int64_t)*d0 + r : (int64_t)*d0,
          y = (int64_t)*d1 < 0 ? (int64_t)*d1 + r : (int64_t)*d1;
  if (std::min(x, y) != r - 2 || std::max(x, y) != r - 1)
    return false;
  return llvm::all_of(a->getResult(0).getUses(), foldedGemmOperand);
}

struct GemmOperandLayoutsPass
    : kb::impl::GemmOperandLayoutsBase<GemmOperandLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<KernelOp> kernels = kernelsLaunchedOnce(module);
    module.walk([&](LaunchOp launch) {
      auto it = kernels.find(launch.getKernel());
      if (it == kernels.end())
        return;
      bool pointwise = pointwiseOnly(it->second),
           rows = !pointwise && isLastDimRowKernel(it->second);
      if (!pointwise && !rows)
        return;
      auto yield = cast<YieldOp>(it->second.getBody().front().getTerminator());
      // The layout each output gets: row-major for a GEMM operand, the
      // last two dims swapped for one read through a transpose.
      SmallVector<std::pair<unsigned, RankedTensorType>> flips;
      SmallVector<RankedTensorType> after;
      for (auto [k, result] : llvm::enumerate(launch.getResults())) {
        auto t = dyn_cast<RankedTensorType>(result.getType());
        if (!t)
          continue;
        Value inner = yield.getValues()[k];
        // A value yielded twice keeps one layout for both results.
        bool own = !result.use_empty() && !isa<BlockArgument>(inner) &&
                   llvm::count(yield.getValues(), inner) == 1;
        if (own && t.getEncoding() && !isRowMajorType(t) &&
            llvm::all_of(result.getUses(), foldedGemmOperand))
          flips.push_back({(unsigned)k, rowMajorType(t)});
        else if (own && isRowMajorType(t) && t.getRank() >= 2 &&
                 llvm::all_of(result.getUses(), transposedGemmOperand))
          flips.push_back({(unsigned)k, swappedLastTwoType(t)});
        after.push_back(
            flips.empty() || flips.back().first != k ? t : flips.back().second);
      }
      if (flips.empty())
        return;
      // Layouts that the kernel writes at full speed: a pointwise kernel
      // walks row-major and last-two-swapped outputs together in tiles
      // (TiledTranspose.cpp), any other layout beside a row-major one a
      // float a sector, which can cost more than ATen's copy; a row kernel
      // stages one transposed output through shared memory.
      unsigned transposed = 0;
      bool fast = true;
      for (RankedTensorType t : after) {
        if (isRowMajorType(t))
          continue;
        ++transposed;
        fast &= isTileableTranspose(t);
      }
      // The tiles take only inputs of those two layouts too (inputs of the
      // outputs' shape; broadcast ones are read as they come).
      if (pointwise && transposed > 0 && transposed < after.size())
        for (BlockArgument arg : it->second.getBody().getArguments()) {
          auto t = dyn_cast<RankedTensorType>(arg.getType());
          fast &= !t || t.getShape() != after.front().getShape() ||
                  isRowMajorType(t) || isTileableTranspose(t);
        }
      if (!fast || (rows && transposed > 1))
        return;
      for (auto [k, type] : flips) {
        Value result = launch.getResult(k), inner = yield.getValues()[k];
        inner.setType(type);
        result.setType(type);
        // The transpose of the swapped layout is the row-major view.
        for (Operation *user : result.getUsers())
          if (auto a = dyn_cast<AtenOp>(user); a && a.getName() == "transpose")
            a->getResult(0).setType(rowMajorType(
                cast<RankedTensorType>(a->getResult(0).getType())));
      }
    });
  }
};

} // namespace
