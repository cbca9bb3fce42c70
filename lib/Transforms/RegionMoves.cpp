//===- RegionMoves.cpp - kb-form-regions' moves after grouping ------------===//
//
// After every op has found its group (FormRegions.cpp), two moves shorten
// what regions write and read: an anchor's pointwise epilogue moves into the
// row reduction of its value (a residual add into the RMS norm that reads
// it), and a pointwise op whose users sit in 2-4 other groups is copied into
// each of them (a convolution's bias add read by `v.mean(0)` and `v - mean`),
// so its result is never written.
//
//===----------------------------------------------------------------------===//

#include "RegionFormer.h"

#include "kb/Transforms/OpUtils.h"

#include <algorithm>

using namespace mlir;
using namespace kb;
using namespace kb::formregions;

void RegionFormer::moveEpiloguesIntoReductions() {
  for (Group &g : groups) {
    if (!g.anchor || g.ops.size() < 2 || g.ops.size() > maxOps)
      continue;
    SmallVector<Operation *> epilogue;
    llvm::SmallPtrSet<Operation *, 8> inEpilogue;
    ArrayRef<int64_t> shape = resultShape(g.anchor);
    bool pointwise = true;
    for (Operation *op : g.ops) {
      if (op == g.anchor)
        continue;
      OpKind k = getKind(op);
      pointwise &= op->getNumResults() == 1 &&
                   (k == OpKind::Elementwise || k == OpKind::Broadcast) &&
                   resultShape(op) == shape;
      epilogue.push_back(op);
      inEpilogue.insert(op);
    }
    if (!pointwise)
      continue;
    int target = epilogueTarget(g, epilogue, inEpilogue);
    if (target < 0)
      continue;
    Group &t = groups[target];
    for (Operation *op : epilogue) {
      groupOf[op] = target;
      t.ops.push_back(op);
    }
    g.ops.assign({g.anchor});
    g.stage.clear();
    g.stage.insert(g.anchor);
  }
}

int RegionFormer::epilogueTarget(
    const Group &g, ArrayRef<Operation *> epilogue,
    const llvm::SmallPtrSetImpl<Operation *> &inEpilogue) {
  int target = -1;
  for (Operation *op : epilogue)
    for (Operation *u : op->getResult(0).getUsers()) {
      auto ui = groupOf.find(u);
      if (target >= 0 || ui == groupOf.end() || ui->second == g.id)
        continue;
      const Group &t = groups[ui->second];
      if (u == t.firstReduction && t.ops.front() == u && !t.anchor &&
          reducedInput(u) == op->getResult(0) && reducesLastDim(u))
        target = ui->second;
    }
  if (target < 0 || mayStayInAten(groups[target]) ||
      groups[target].ops.size() + epilogue.size() > maxOps + 1)
    return -1;
  SmallVector<Operation *> others;
  for (Operation *op : epilogue)
    for (Operation *u : op->getResult(0).getUsers()) {
      if (inEpilogue.count(u))
        continue;
      auto ui = groupOf.find(u);
      if (ui == groupOf.end() || ui->second != target)
        others.push_back(u);
      else if (u != groups[target].firstReduction &&
               (!isa<AtenOp>(u) || getKind(u) == OpKind::Reduction ||
                resultShape(u) != resultShape(op)))
        return -1;
    }
  // The region then writes the epilogue's values: every value it writes
  // must have their shape (a kernel writes outputs of one shape; rows too
  // long to be broadcast back leave the reduction's result an output).
  for (Operation *op : groups[target].ops)
    for (Value r : op->getResults())
      if (resultShape(op) != resultShape(epilogue.front()) &&
          llvm::any_of(r.getUsers(), [&](Operation *u) {
            auto ui = groupOf.find(u);
            return ui == groupOf.end() || ui->second != target;
          }))
        return -1;
  return reachesGroup(others, target, inEpilogue) ? -1 : target;
}

bool RegionFormer::reducesLastDim(Operation *red) {
  auto aten = dyn_cast<AtenOp>(red);
  if (!aten || aten.getArgs().size() < 2)
    return false;
  auto list = aten.getArgs()[1].getDefiningOp<ListOp>();
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(reducedInput(red).getType()).getShape();
  if (!list || list.getElements().size() != 1 || in.empty())
    return false;
  auto d = getConstantNumber(list.getElements()[0]);
  SmallVector<int64_t> kept(in.drop_back()), keptDim(kept);
  keptDim.push_back(1);
  ArrayRef<int64_t> out = resultShape(red);
  return d && (*d == -1 || *d == (double)in.size() - 1) &&
         (out == ArrayRef<int64_t>(kept) || out == ArrayRef<int64_t>(keptDim));
}

bool RegionFormer::reachesGroup(
    ArrayRef<Operation *> from, int target,
    const llvm::SmallPtrSetImpl<Operation *> &moving) {
  llvm::SmallPtrSet<Operation *, 32> seen;
  llvm::DenseSet<int> expanded;
  SmallVector<Operation *> work(from.begin(), from.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    auto gi = groupOf.find(op);
    if (moving.count(op) || (gi != groupOf.end() && gi->second == target))
      return true;
    if (gi != groupOf.end() && expanded.insert(gi->second).second)
      llvm::append_range(work, groups[gi->second].ops);
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers())
        if (u->getBlock() == &block)
          work.push_back(u);
  }
  return false;
}

void RegionFormer::sinkIntoConsumers() {
  for (Group &g : groups)
    for (Operation *op : SmallVector<Operation *>(g.ops)) {
      SmallVector<int, 4> targets = sinkTargets(op, g);
      if (targets.empty() || llvm::any_of(targets, [&](int t) {
            const Group &h = groups[t];
            return h.ops.size() >= maxOps + (h.anchor ? 1 : 0);
          }))
        continue;
      llvm::erase(g.ops, op);
      g.stage.erase(op);
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      for (int t : llvm::drop_begin(targets)) {
        Operation *copy = b.clone(*op);
        op->getResult(0).replaceUsesWithIf(
            copy->getResult(0), [&](OpOperand &use) {
              auto ui = groupOf.find(use.getOwner());
              return ui != groupOf.end() && ui->second == t;
            });
        groups[t].ops.push_back(copy);
        groupOf[copy] = t;
      }
      groups[targets.front()].ops.push_back(op);
      groupOf[op] = targets.front();
    }
}

SmallVector<int, 4> RegionFormer::sinkTargets(Operation *op, const Group &g) {
  OpKind kind = getKind(op);
  if (op == g.anchor || op->getNumResults() != 1 ||
      (kind != OpKind::Elementwise && kind != OpKind::Broadcast))
    return {};
  ArrayRef<int64_t> shape = resultShape(op);
  int64_t n = ShapedType::getNumElements(shape);
  SmallVector<int, 4> targets;
  for (Operation *user : op->getResult(0).getUsers()) {
    auto ui = groupOf.find(user);
    if (ui == groupOf.end() || ui->second == g.id ||
        user == groups[ui->second].anchor)
      return {};
    if (!llvm::is_contained(targets, ui->second)) {
      if (targets.size() == 4 || mayStayInAten(groups[ui->second]))
        return {};
      targets.push_back(ui->second);
    }
    // Evaluated at its user's index: the reduced input of a reduction,
    // or an operand of a pointwise op over the same shape.
    bool sameSpace = getKind(user) == OpKind::Reduction
                         ? reducedInput(user) == op->getResult(0)
                         : resultShape(user) == shape;
    if (!sameSpace)
      return {};
  }
  // Its operands: read from memory by the consumers instead of its
  // result, at most one of them as large as the result.
  int full = 0;
  for (Value v : op->getOperands()) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    Operation *p = v.getDefiningOp();
    if (p && p->getBlock() == &block && p != g.anchor) {
      auto pi = groupOf.find(p);
      if (pi != groupOf.end() && pi->second == g.id)
        return {};
    }
    full += isFullSize(v, n);
  }
  if (full > 1)
    return {};
  return targets;
}

bool RegionFormer::mayStayInAten(const Group &g) {
  return !normsBeforeTF32 && llvm::any_of(g.ops, [](Operation *op) {
    return getKind(op) == OpKind::Reduction && reachesConvolution(op);
  });
}

bool RegionFormer::isFullSize(Value v, int64_t n) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getNumElements() * 8 > n;
}
