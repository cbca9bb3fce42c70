//===- Outline.cpp - --kb-outline -----------------------------------------===//
//
// Each kb.region becomes a kernel spec: the anchor (if any) is hoisted in
// front of the region because it runs in cuBLAS/cuDNN, and the memory-bound
// ops move into an isolated kb.kernel. Constants are cloned into the kernel
// (they become immediates); every other value becomes an input whose role and
// broadcast pattern against the kernel's iteration space are recorded.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace kb {
#define GEN_PASS_DEF_OUTLINE
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

/// Per dim of `space`: 1 when `input` is broadcast along it (numpy rules,
/// aligned to the right).
SmallVector<int64_t> broadcastPattern(Type input, ArrayRef<int64_t> space) {
  SmallVector<int64_t> pattern(space.size(), 1);
  auto rt = dyn_cast<RankedTensorType>(input);
  if (!rt)
    return pattern;
  ArrayRef<int64_t> shape = rt.getShape();
  for (size_t i = 0; i < space.size(); ++i) {
    int64_t d = (int64_t)i - (int64_t)(space.size() - shape.size());
    pattern[i] = (d < 0 || (shape[d] == 1 && space[i] != 1)) ? 1 : 0;
  }
  return pattern;
}

std::string roleOf(Value v, Operation *anchor) {
  if (anchor && v.getDefiningOp() == anchor)
    return "anchor-output";
  if (v.getDefiningOp<ParameterOp>())
    return "parameter";
  auto rt = dyn_cast<RankedTensorType>(v.getType());
  if (!rt)
    return "scalar";
  return rt.getRank() == 0 ? "scalar" : "activation";
}

struct OutlinePass : kb::impl::OutlineBase<OutlinePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<RegionOp> regions;
    module.walk([&](RegionOp r) { regions.push_back(r); });
    for (RegionOp region : regions)
      outline(region, symbols);
  }

  /// Appends `op` after the constants it is built from (a kb.list of
  /// kb.constant), each once.
  static void collectConstant(Operation *op,
                              llvm::SmallPtrSetImpl<Operation *> &seen,
                              SmallVectorImpl<Operation *> &out) {
    if (!seen.insert(op).second)
      return;
    for (Value operand : op->getOperands())
      collectConstant(operand.getDefiningOp(), seen, out);
    out.push_back(op);
  }

  void outline(RegionOp region, SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    Block &body = region.getBody().front();
    Operation *anchor = nullptr;
    if (region.getAnchor()) {
      anchor = &body.front();
      anchor->moveBefore(region);
    }
    // Inputs: values defined outside the region, except constants.
    SetVector<Value> inputs;
    SmallVector<Operation *> constants;
    llvm::SmallPtrSet<Operation *, 8> seenConstants;
    region.walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        if (region->isAncestor(v.getParentBlock()->getParentOp()))
          continue;
        if (isConstantLike(v)) {
          collectConstant(v.getDefiningOp(), seenConstants, constants);
          continue;
        }
        inputs.insert(v);
      }
    });

    // Iteration space: the (pre-reduction) shape of the first fused op.
    ArrayRef<int64_t> space;
    for (Operation &op : body.without_terminator())
      if (op.getNumResults())
        if (auto rt = dyn_cast<RankedTensorType>(op.getResult(0).getType())) {
          if (getKind(&op) == OpKind::Reduction)
            for (Value v : op.getOperands())
              if (auto it = dyn_cast<RankedTensorType>(v.getType())) {
                space = it.getShape();
                break;
              }
          if (space.empty())
            space = rt.getShape();
          break;
        }

    OpBuilder b(region->getParentOfType<func::FuncOp>());
    std::string name = "kb_region_" + std::to_string(region.getId());
    SmallVector<Attribute> inputAttrs;
    for (Value v : inputs) {
      NamedAttrList attrs;
      attrs.append("role", b.getStringAttr(roleOf(v, anchor)));
      attrs.append("broadcast", b.getDenseI64ArrayAttr(
                                    broadcastPattern(v.getType(), space)));
      if (auto p = v.getDefiningOp<ParameterOp>())
        attrs.append("name", p.getNameAttr());
      inputAttrs.push_back(attrs.getDictionary(ctx));
    }
    auto kernel = KernelOp::create(
        b, region.getLoc(), b.getStringAttr(name), region.getIdAttr(),
        region.getAnchorAttr(), b.getArrayAttr(inputAttrs));
    symbols.insert(kernel);
    Block *kbody = b.createBlock(&kernel.getBody());
    IRMapping map;
    for (Value v : inputs)
      map.map(v, kbody->addArgument(v.getType(), v.getLoc()));
    b.setInsertionPointToEnd(kbody);
    for (Operation *c : constants)
      b.clone(*c, map);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    // The anchor's own result, when used outside too, is read from the
    // anchor directly: the kernel only yields what it computes.
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> kept;
    SmallVector<unsigned> keptIndex;
    for (auto [k, v] : llvm::enumerate(yield.getValues())) {
      if (anchor && v.getDefiningOp() == anchor)
        continue;
      kept.push_back(map.lookup(v));
      keptIndex.push_back(k);
    }
    YieldOp::create(b, yield.getLoc(), kept);

    b.setInsertionPoint(region);
    auto launch = LaunchOp::create(b, region.getLoc(),
                                   ValueRange(kept).getTypes(),
                                   SymbolRefAttr::get(kernel.getSymNameAttr()),
                                   inputs.getArrayRef());
    for (auto [k, v] : llvm::enumerate(yield.getValues()))
      if (anchor && v.getDefiningOp() == anchor)
        region.getResult(k).replaceAllUsesWith(v);
    for (auto [slot, k] : llvm::enumerate(keptIndex))
      region.getResult(k).replaceAllUsesWith(launch.getResult(slot));
    region.erase();
  }
};

} // namespace
