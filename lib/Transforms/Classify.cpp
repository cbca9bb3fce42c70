//===- Classify.cpp - --kb-classify ---------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace kb {
#define GEN_PASS_DEF_CLASSIFY
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {
struct ClassifyPass : kb::impl::ClassifyBase<ClassifyPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation()->walk([&](AtenOp op) {
      op.setKindAttr(b.getStringAttr(kindName(computeKind(op))));
    });
  }
};
} // namespace
