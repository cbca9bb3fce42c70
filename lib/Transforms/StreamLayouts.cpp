//===- StreamLayouts.cpp - --kb-stream-layouts ----------------------------===//
//
// MLP-Mixer's residual stream keeps PatchEmbed's transposed layout ([B, N,
// C] stored [B, C, N]) because eager's adds keep their first operand's
// layout. Between the blocks' LayerNorm regions the stream is written by
// one kernel and read by the next, and nothing else sees it: its layout is
// free. A row kernel over the last dim (the LayerNorm) writes and reads it
// best row-major, and a row kernel stages only one output stored
// transposed through shared memory (TransposedStores.cpp): with the stream
// row-major, that one can be the token MLP's operand, which
// kb-gemm-operand-layouts then stores so that linear needs no copy.
//
// A value only kernels read is written row-major where every reader is a
// kernel with a reduction over the last dim. Each kernel here is launched
// once, so its argument's type is the value's. The runtime guards each
// launch on its inputs' strides; where the producer ran its ATen ops (its
// kernel dropped as no faster, or its own guard failed), eager's layout
// reaches the reader, which copies such an input (marked `kb.relaid`,
// manifest "relaid") to row-major rather than run its ATen ops too.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

namespace kb {
#define GEN_PASS_DEF_STREAMLAYOUTS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

struct StreamLayoutsPass : kb::impl::StreamLayoutsBase<StreamLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<KernelOp> kernels = kernelsLaunchedOnce(module);
    auto once = [&](LaunchOp l) { return kernels.lookup(l.getKernel()); };
    // A reader whose argument is what it yields would change its own
    // output's layout with it.
    auto readsOnly = [&](OpOperand &use) {
      auto reader = dyn_cast<LaunchOp>(use.getOwner());
      KernelOp k = reader ? once(reader) : KernelOp();
      if (!k || !isLastDimRowKernel(k))
        return false;
      BlockArgument arg = k.getBody().getArgument(use.getOperandNumber());
      return llvm::none_of(arg.getUsers(),
                           [](Operation *u) { return isa<YieldOp>(u); });
    };
    module.walk([&](LaunchOp launch) {
      KernelOp producer = once(launch);
      if (!producer)
        return;
      auto yield = cast<YieldOp>(producer.getBody().front().getTerminator());
      for (auto [k, result] : llvm::enumerate(launch.getResults())) {
        auto t = dyn_cast<RankedTensorType>(result.getType());
        Value inner = yield.getValues()[k];
        if (!t || !isTileableTranspose(t) || result.use_empty() ||
            isa<BlockArgument>(inner) ||
            llvm::count(yield.getValues(), inner) != 1 ||
            !llvm::all_of(result.getUses(), readsOnly))
          continue;
        RankedTensorType rowMajor = rowMajorType(t);
        for (OpOperand &use : result.getUses()) {
          KernelOp reader = once(cast<LaunchOp>(use.getOwner()));
          unsigned n = use.getOperandNumber();
          reader.getBody().getArgument(n).setType(rowMajor);
          SmallVector<int64_t> relaid;
          if (auto a = reader->getAttrOfType<ArrayAttr>(kRelaidInputsAttr))
            for (Attribute i : a)
              relaid.push_back(cast<IntegerAttr>(i).getInt());
          relaid.push_back(n);
          reader->setAttr(kRelaidInputsAttr,
                          Builder(reader.getContext()).getI64ArrayAttr(relaid));
        }
        inner.setType(rowMajor);
        result.setType(rowMajor);
      }
    });
  }
};

} // namespace
