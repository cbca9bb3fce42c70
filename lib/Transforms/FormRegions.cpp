//===- FormRegions.cpp - --kb-form-regions --------------------------------===//
//
// Greedy, order-preserving grouping in the spirit of TVM's FuseOps and IREE's
// dispatch-region formation (rules in docs/passes.md):
//  * a library anchor (GEMM/conv) opens a group; its elementwise/broadcast
//    consumers join it (the anchor stays in cuBLAS/cuDNN, the rest becomes
//    one epilogue kernel);
//  * elementwise/broadcast ops without a fusable producer open anchorless
//    groups; a consumer joins the group of one of its producers;
//  * a reduction may join a group and starts a new stage; after it only
//    pointwise ops on values of the new stage may follow (a reduction
//    epilogue such as mean -> tanh). Only a window pooling may be followed by
//    another reduction (max_pool -> mean), since each element of its output
//    is computed from a window of the previous stage, and not by a pooling
//    whose windows overlap (it would recompute each pooled value per
//    window); shape-preserving
//    reductions (softmax, norms) keep the previous stage's values usable;
//  * every member of a stage iterates over the same shape;
//  * a consumer never joins a group it also reaches through an op outside
//    the group (that would make the region depend on itself);
//  * nor a group through the int64 indices of an argmax / argmin;
//  * values used outside a region are yielded (multi-use is correct, just
//    less profitable);
//  * with norms-before-tf32=false, a norm whose result reaches a
//    convolution stays outside regions (its consumers start their own);
//  * with reductions-before-steps=false, so does a sum, norm or softmax
//    whose result reaches a step op, and a centring norm whose result
//    reaches a singular op.
// Groups are then materialised as kb.region ops in a topological order of
// the quotient graph, so interleaved unrelated ops keep a valid order.
//
//===----------------------------------------------------------------------===//

#include "RegionFormer.h"

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include <algorithm>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <queue>

namespace kb {
#define GEN_PASS_DEF_FORMREGIONS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;
using namespace kb::formregions;

bool RegionFormer::isIndexResult(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isInteger(64) && v.getDefiningOp() &&
         getKind(v.getDefiningOp()) == OpKind::Reduction;
}

bool RegionFormer::isCandidate(Operation *op, OpKind kind) {
  // 0-d tensors are host-style scalar arithmetic (traced size math),
  // unless a reduction makes one of a real tensor (a loss's mean).
  if (!allResultsStatic(op) || readsTensorConstant(op))
    return false;
  if (resultShape(op).empty()) {
    Value in = kind == OpKind::Reduction ? reducedInput(op) : Value();
    return in && hasStaticShape(in.getType()) &&
           !cast<RankedTensorType>(in.getType()).getShape().empty();
  }
  return kind == OpKind::Elementwise || kind == OpKind::Broadcast ||
         kind == OpKind::Reduction || kind == OpKind::Anchor;
}

bool RegionFormer::readsOrMakesNonKernelValue(Operation *op, OpKind kind) {
  auto elementOf = [](Value v) -> Type {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t ? t.getElementType() : Type();
  };
  bool readsMask = false;
  for (Value v : op->getOperands()) {
    Type el = elementOf(v);
    if (!el || !isa<IntegerType>(el))
      continue;
    if (!el.isInteger(1))
      return true;
    Operation *p = v.getDefiningOp();
    if (p && groupOf.count(p))
      continue;
    // A mask from outside the group is a kernel input of a static shape;
    // not a 0-d one (rewrite makes a 0-d factory result a CPU scalar,
    // which a kernel's guard refuses: the whole region would fall back).
    if (!hasStaticShape(v.getType()) ||
        cast<RankedTensorType>(v.getType()).getRank() == 0)
      return true;
    readsMask = true;
  }
  if (kind == OpKind::Reduction)
    return false;
  // Bool logic over masks (GPT-NeoX's `mask.to(bool) & causal`) makes a
  // bool a region would have to write: kernels write floats and indices.
  return llvm::any_of(op->getResults(), [&](Value r) {
    Type el = elementOf(r);
    return el && isa<IntegerType>(el) && (!el.isInteger(1) || readsMask);
  });
}

void RegionFormer::computeDeps(Operation *op) {
  llvm::BitVector d(groups.size());
  for (Value v : op->getOperands()) {
    Operation *p = v.getDefiningOp();
    if (!p || p->getBlock() != &block)
      continue;
    auto it = deps.find(p);
    if (it != deps.end()) {
      if (it->second.size() > d.size())
        d.resize(it->second.size());
      d |= it->second;
    }
    auto g = groupOf.find(p);
    if (g != groupOf.end()) {
      if ((unsigned)g->second >= d.size())
        d.resize(g->second + 1);
      d.set(g->second);
    }
  }
  deps[op] = d;
}

void RegionFormer::visit(Operation *op) {
  computeDeps(op);

  if (!isa<AtenOp>(op)) {
    if (isa<OpaqueOp>(op))
      unfused.push_back({op, unfusedReason(op, OpKind::Opaque)});
    return;
  }
  OpKind kind = getKind(op);
  if (ListOp list = fusableCat(op)) {
    openCatGroup(op, list);
    return;
  }
  if (joinView(op))
    return;
  if (!isCandidate(op, kind)) {
    unfused.push_back({op, unfusedReason(op, kind)});
    return;
  }
  if (readsOrMakesNonKernelValue(op, kind)) {
    unfused.push_back({op, "integer tensors, and bools computed from masks, "
                           "stay in ATen (kernels read float and bool "
                           "tensors and write floats)"});
    return;
  }
  // No norm but cuDNN's own passes 1e-4 before a TF32 convolution (even a
  // correctly rounded one moved ResNet-50's output by 1.6e-2: bench/
  // NOTES.md, session 15), so the norm stays in ATen and its pointwise
  // consumers (a residual add and relu) form an exact region of their own.
  // A layer norm the code generator computes in ATen's own order joins:
  // rewrite keeps its kernel only if no bit differs from eager (the same
  // rule as before a step op below), so the convolution sees eager's
  // input (SegFormer's and Swin's norms before their convolutions).
  if (!normsBeforeTF32 && isCentringNorm(op) && reachesConvolution(op) &&
      !hasAtenOrder(op)) {
    keptForNumerics(op, "a norm whose result feeds a TF32 convolution "
                        "stays in ATen; its consumers are fused");
    return;
  }
  // A last-bit difference of a sum, norm or softmax can flip a comparison
  // or round to another integer downstream, and after a centring norm it
  // is an absolute error near 0, where log or rsqrt magnify it: such a
  // reduction keeps ATen's result, exact consumers are fused after it.
  // A layer norm or softmax the code generator computes in ATen's own
  // order rounds as ATen's does: its kernel must then show no bit
  // differing from eager (rewrite keeps the ATen ops otherwise).
  if (!reductionsBeforeSteps && isInexactReduction(op) && !hasAtenOrder(op)) {
    if (reachesStepOp(op)) {
      keptForNumerics(op, "a reduction whose result reaches a step op "
                          "stays in ATen; its consumers are fused");
      return;
    }
    if (isCentringNorm(op) && reachesSingularOp(op)) {
      keptForNumerics(op, "a norm whose result reaches a singular op "
                          "stays in ATen; its consumers are fused");
      return;
    }
  }
  if (kind == OpKind::Reduction && recomputeProducers(op))
    computeDeps(op);
  if (kind != OpKind::Anchor) {
    // The operands' groups, those with an anchor or a reduction first:
    // absorbSiblings can then take a pointwise sibling into them, never
    // the reverse (kl_div's `xlogy(t, t) - t * log_softmax(x)` joined
    // xlogy's group and left the log_softmax's without its sum: 1.25 GB
    // written and read back, seed 20261234 task 6).
    SmallVector<int, 4> gids;
    for (Value v : op->getOperands())
      if (Operation *p = v.getDefiningOp(); p && !isIndexResult(v))
        if (auto g = groupOf.find(p); g != groupOf.end())
          gids.push_back(g->second);
    std::stable_partition(gids.begin(), gids.end(), [&](int gid) {
      return groups[gid].anchor || groups[gid].lastReduction;
    });
    for (int gid : gids)
      if (tryJoin(op, kind, groups[gid])) {
        absorbSiblings(op, groups[gid]);
        return;
      }
  }
  Group g;
  g.id = groups.size();
  g.ops.push_back(op);
  g.shape = resultShape(op);
  g.stage.insert(op);
  if (kind == OpKind::Anchor)
    g.anchor = op;
  else if (kind == OpKind::Reduction) {
    g.lastReduction = g.firstReduction = op;
    g.reductions = 1;
  }
  groupOf[op] = g.id;
  groups.push_back(std::move(g));
  // A parameter's few-element chain that only this op broadcasts
  // (`x / (p.abs() + 1)` with x an input) comes along as it does when
  // `op` joins a group: one launch and no [C, 1] tensor written.
  if (kind == OpKind::Elementwise || kind == OpKind::Broadcast)
    absorbSiblings(op, groups.back(), /*leavesOnly=*/true);
}

ListOp RegionFormer::fusableCat(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || aten.getName() != "cat" || aten.getArgs().size() != 2 ||
      !allResultsStatic(op) || !isStaticF32(op->getResult(0)))
    return {};
  auto list = aten.getArgs()[0].getDefiningOp<ListOp>();
  auto dim = getConstantNumber(aten.getArgs()[1]);
  if (!list || !dim || !list->hasOneUse() ||
      list->getBlock() != op->getBlock() || list.getElements().size() < 2 ||
      list.getElements().size() > 8)
    return {};
  int64_t rank = resultShape(op).size();
  // A tensor constant (GPT-2's empty one) has no kernel operand.
  for (Value e : list.getElements())
    if (!isStaticF32(e) || e.getDefiningOp<ConstantOp>() ||
        (int64_t)cast<RankedTensorType>(e.getType()).getRank() != rank)
      return {};
  return list;
}

void RegionFormer::openCatGroup(Operation *cat, ListOp list) {
  Group g;
  g.id = groups.size();
  g.shape = resultShape(cat);
  for (Operation *m : {list.getOperation(), cat}) {
    g.ops.push_back(m);
    g.stage.insert(m);
    groupOf[m] = g.id;
  }
  groups.push_back(std::move(g));
  for (Value e : list.getElements()) {
    Operation *p = e.getDefiningOp();
    auto it = p ? groupOf.find(p) : groupOf.end();
    if (it == groupOf.end() || it->second == (int)groups.size() - 1)
      continue;
    int sid = it->second;
    Group &s = groups[sid];
    Group &c = groups.back();
    if (s.anchor || s.lastReduction || s.shape != resultShape(p) ||
        c.ops.size() + s.ops.size() > maxOps)
      continue;
    // Every value of the group stays inside it or feeds this list only.
    bool private_ = llvm::all_of(s.ops, [&](Operation *m) {
      return llvm::all_of(m->getUsers(), [&](Operation *u) {
        auto ui = groupOf.find(u);
        return u == list.getOperation() ||
               (ui != groupOf.end() && ui->second == sid);
      });
    });
    // No other listed tensor is computed from it outside the groups.
    bool independent = llvm::none_of(list.getElements(), [&](Value w) {
      Operation *q = w.getDefiningOp();
      auto qi = q ? groupOf.find(q) : groupOf.end();
      return q && (qi == groupOf.end() || qi->second != sid) &&
             dependsOn(q, sid);
    });
    if (!private_ || !independent)
      continue;
    for (Operation *y : s.ops) {
      groupOf[y] = c.id;
      c.ops.push_back(y);
    }
    s.ops.clear();
  }
}

bool RegionFormer::recomputeProducers(Operation *op) {
  Value in = reducedInput(op);
  Operation *p = in ? in.getDefiningOp() : nullptr;
  auto gi = p ? groupOf.find(p) : groupOf.end();
  if (gi == groupOf.end() || resultShape(op) == resultShape(p))
    return false;
  Group &g = groups[gi->second];
  if (g.anchor || g.lastReduction)
    return false;
  // rewrite keeps a reduction feeding a TF32 convolution in ATen (a
  // squeeze-excitation's mean before its 1x1 convolutions): a copy of the
  // chain would then run in ATen too.
  if (!normsBeforeTF32 && reachesConvolution(op))
    return false;
  bool usedOutside = llvm::any_of(g.ops, [&](Operation *m) {
    return llvm::any_of(m->getUsers(), [&](Operation *u) {
      auto ui = groupOf.find(u);
      return u != op && (ui == groupOf.end() || ui->second != g.id) &&
             !rejoins(u, op);
    });
  });
  if (!usedOutside)
    return false;
  // The chain's ops `in` depends on, in block order.
  llvm::SmallPtrSet<Operation *, 8> slice;
  SmallVector<Operation *> work{p};
  while (!work.empty()) {
    Operation *m = work.pop_back_val();
    if (!slice.insert(m).second)
      continue;
    if (slice.size() > 8 || m->getNumResults() != 1)
      return false;
    for (Value v : m->getOperands())
      if (Operation *q = v.getDefiningOp())
        if (auto qi = groupOf.find(q);
            qi != groupOf.end() && qi->second == g.id)
          work.push_back(q);
  }
  // The copy reads values no group computes (inputs, parameters, ATen
  // results): a copy joining another group could make that group write
  // the copy's value.
  for (Operation *m : slice)
    for (Value v : m->getOperands())
      if (Operation *q = v.getDefiningOp();
          q && !slice.count(q) && groupOf.count(q))
        return false;
  int64_t n = ShapedType::getNumElements(resultShape(p));
  llvm::SmallPtrSet<Value, 4> full;
  for (Operation *m : slice)
    for (Value v : m->getOperands()) {
      Operation *q = v.getDefiningOp();
      if (isFullSize(v, n) && !(q && slice.count(q)))
        full.insert(v);
    }
  if (full.size() > 2)
    return false;
  // Every other user of the chain's values can join the chain, so none
  // of them needs it in memory (a returned value or a convolution's input
  // is written anyway: recomputing it would only add reads).
  for (Operation *m : slice)
    for (Operation *u : m->getUsers()) {
      auto ui = groupOf.find(u);
      if (u == op || (ui != groupOf.end() && ui->second == g.id))
        continue;
      OpKind k = isa<AtenOp>(u) ? getKind(u) : OpKind::Opaque;
      if (k != OpKind::Elementwise && k != OpKind::Broadcast)
        return false;
    }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  IRMapping map;
  OpBuilder b(op);
  SmallVector<Operation *> clones;
  for (Operation *m : ordered) {
    Operation *c = b.clone(*m, map);
    c->removeAttr("kb.unfused");
    clones.push_back(c);
  }
  op->replaceUsesOfWith(in, map.lookup(in));
  for (Operation *c : clones)
    visit(c);
  return true;
}

void RegionFormer::keptForNumerics(Operation *op, const char *reason) {
  unfused.push_back({op, reason});
  op->setAttr("kb.numerics", UnitAttr::get(op->getContext()));
}

bool RegionFormer::tryJoin(Operation *op, OpKind kind, Group &g) {
  if (g.ops.size() >= maxOps + (g.anchor ? 1 : 0))
    return false;
  // Joining must not create a cycle through an op outside the group.
  for (Value v : op->getOperands()) {
    Operation *p = v.getDefiningOp();
    if (!p || p->getBlock() != &block)
      continue;
    auto gi = groupOf.find(p);
    if (gi != groupOf.end() && gi->second == g.id)
      continue;
    if (dependsOn(p, g.id))
      return false;
  }
  ArrayRef<int64_t> shape = resultShape(op);
  bool rebroadcast = kind != OpKind::Reduction && shape != g.shape &&
                     broadcastsBack(op, shape, g);
  // Operands from inside the group must belong to its current stage (or,
  // broadcasting a row's result back, to the stage of the rows).
  for (Value v : op->getOperands()) {
    Operation *p = v.getDefiningOp();
    if (!p)
      continue;
    auto gi = groupOf.find(p);
    if (gi != groupOf.end() && gi->second == g.id && !g.stage.count(p) &&
        !(rebroadcast && g.rowStage.count(p)))
      return false;
  }
  if (rebroadcast) {
    g.reducedShape = g.shape;
    for (Operation *m : g.rowStage)
      g.stage.insert(m);
    g.rowStage.clear();
    g.shape = shape;
    g.rebroadcast = true;
  } else if (g.rebroadcast && kind != OpKind::Reduction &&
             shape == g.reducedShape) {
    // Another op of the result's shape (`m + 1` of `(u - m) / (m + 1)`).
    if (!rejoins(op, g.lastReduction))
      return false;
  } else if (kind == OpKind::Reduction) {
    Value in = reducedInput(op);
    Operation *p = in ? in.getDefiningOp() : nullptr;
    auto gi = p ? groupOf.find(p) : groupOf.end();
    bool afterPool =
        g.lastReduction &&
        cast<AtenOp>(g.lastReduction).getInfo()->style == OpStyle::Pool;
    // A pooling whose windows overlap would evaluate each element of the
    // earlier pooling once per window holding it (a 3x3 max over a 3x3
    // max: 81 reads an output); the earlier pooling's output is written
    // and read back instead (GoogLeNet's pool -> pool regions took 2.5x
    // ATen's time, session 40).
    if (afterPool && poolWindowsOverlap(op))
      return false;
    if ((g.lastReduction && !afterPool && !crossRow(op, g)) ||
        gi == groupOf.end() || gi->second != g.id ||
        cast<RankedTensorType>(in.getType()).getShape() != g.shape)
      return false;
    // A value of the stage used outside the group would be an output of
    // the stage's shape beside the reduction's, which only the kernels of
    // shape-preserving reductions (norms, softmax: they write every
    // element) can write: the reduction then starts a group of its own
    // and reads the value from memory, instead of the whole region
    // staying in ATen ("outputs of different shapes").
    // A pointwise op that will broadcast the result back over the rows
    // (rejoins) joins too, after the group's first reduction only.
    if (shape != g.shape)
      for (Operation *member : g.stage)
        if (member != g.anchor)
          for (Operation *user : member->getUsers())
            if (user != op && (g.lastReduction || !rejoins(user, op))) {
              auto ui = groupOf.find(user);
              if (ui == groupOf.end() || ui->second != g.id)
                return false;
            }
    if (shape != g.shape && !g.lastReduction) {
      g.rowStage = g.stage;
      g.firstReduction = op;
    }
    g.lastReduction = op;
    ++g.reductions;
    // A shape-preserving reduction (softmax, a norm) keeps the previous
    // stage's values addressable at the same index.
    if (shape != g.shape)
      g.stage.clear();
    g.shape = shape;
  } else if (shape != g.shape) {
    return false;
  }
  g.stage.insert(op);
  g.ops.push_back(op);
  groupOf[op] = g.id;
  return true;
}

bool RegionFormer::broadcastsBack(Operation *op, ArrayRef<int64_t> shape,
                                  Group &g) {
  Operation *red = g.lastReduction;
  if (!red || red != g.firstReduction || g.rebroadcast || !keepdimRows(red) ||
      shape != cast<RankedTensorType>(reducedInput(red).getType()).getShape() ||
      feedsReduction(op))
    return false;
  for (Operation *m : g.stage)
    for (Operation *u : m->getUsers())
      if (u != op && !g.stage.count(u) && !rejoins(u, g.lastReduction))
        return false;
  return true;
}

bool RegionFormer::dependsOn(Operation *op, int gid) {
  auto it = deps.find(op);
  return it != deps.end() && (unsigned)gid < it->second.size() &&
         it->second.test(gid);
}

void RegionFormer::absorbSiblings(Operation *op, Group &g, bool leavesOnly) {
  for (Value v : op->getOperands()) {
    Operation *p = v.getDefiningOp();
    auto it = p ? groupOf.find(p) : groupOf.end();
    if (it == groupOf.end() || it->second == g.id)
      continue;
    Group &s = groups[it->second];
    if (s.anchor || s.lastReduction || (leavesOnly && s.shape == g.shape) ||
        (s.shape != g.shape && !broadcastLeaf(s, g, op)) ||
        g.ops.size() + s.ops.size() > maxOps + (g.anchor ? 1 : 0))
      continue;
    bool independent =
        llvm::none_of(
            g.ops,
            [&](Operation *x) { return x != op && dependsOn(x, s.id); }) &&
        llvm::none_of(s.ops, [&](Operation *y) { return dependsOn(y, g.id); });
    for (Value w : op->getOperands()) {
      Operation *q = w.getDefiningOp();
      auto qi = q ? groupOf.find(q) : groupOf.end();
      bool member =
          qi != groupOf.end() && (qi->second == g.id || qi->second == s.id);
      if (q && !member && dependsOn(q, s.id))
        independent = false;
    }
    if (!independent)
      continue;
    for (Operation *y : s.ops) {
      groupOf[y] = g.id;
      g.stage.insert(y);
      g.ops.push_back(y);
    }
    s.ops.clear();
    s.stage.clear();
    for (auto &[x, bits] : deps)
      if ((unsigned)s.id < bits.size() && bits.test(s.id)) {
        if ((unsigned)g.id >= bits.size())
          bits.resize(g.id + 1);
        bits.set(g.id);
      }
  }
}

bool RegionFormer::broadcastLeaf(const Group &s, const Group &g,
                                 Operation *op) {
  // Its ops run once per element of `g`: a few ALU ops at most.
  if (s.shape.size() > g.shape.size() || s.ops.size() > 4)
    return false;
  size_t lead = g.shape.size() - s.shape.size();
  for (size_t d = 0; d < s.shape.size(); ++d)
    if (s.shape[d] != 1 && s.shape[d] != g.shape[lead + d])
      return false;
  for (Operation *y : s.ops) {
    auto it = deps.find(y);
    if (it != deps.end())
      for (unsigned b : it->second.set_bits())
        if ((int)b != s.id)
          return false;
    for (Value r : y->getResults())
      for (Operation *u : r.getUsers()) {
        auto ui = groupOf.find(u);
        if (u != op && (ui == groupOf.end() || ui->second != s.id))
          return false;
      }
  }
  return true;
}

void RegionFormer::materialize() {
  dropTrailingViews();
  SmallVector<Operation *> order;
  for (Operation &op : block.without_terminator())
    order.push_back(&op);
  DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(order))
    index[op] = i;

  // Unit ids: groups with at least one non-anchor op are units of their
  // own; every other op is its own unit.
  // A dtype cast alone (autocast's per-call weight casts: ResNet-50 has
  // 56) moves each byte once in ATen's copy kernel too: a kernel of its
  // own only costs a verification (run74: all 56 measured no faster).
  auto loneCast = [&](int gid) {
    const Group &g = groups[gid];
    auto aten = g.ops.size() == 1 && !g.anchor ? dyn_cast<AtenOp>(g.ops.front())
                                               : AtenOp();
    return aten && aten.getInfo() && aten.getInfo()->style == OpStyle::Cast;
  };
  auto isRegion = [&](int gid) {
    return groups[gid].ops.size() > (groups[gid].anchor ? 1u : 0u) &&
           !loneCast(gid);
  };
  DenseMap<Operation *, unsigned> unitOf;
  SmallVector<SmallVector<Operation *>> units;
  DenseMap<int, unsigned> unitOfGroup;
  for (Operation *op : order) {
    auto g = groupOf.find(op);
    if (g != groupOf.end() && isRegion(g->second)) {
      auto [it, inserted] = unitOfGroup.try_emplace(g->second, units.size());
      if (inserted)
        units.emplace_back();
      units[it->second].push_back(op);
      unitOf[op] = it->second;
      continue;
    }
    if (g != groupOf.end())
      unfused.push_back(
          {op, loneCast(g->second)
                   ? std::string("a lone dtype cast: ATen's copy moves each "
                                 "byte once, nothing to fuse")
                   : unfusedReason(op, OpKind::Anchor)});
    unitOf[op] = units.size();
    units.push_back({op});
  }
  if (unitOfGroup.empty())
    return annotateUnfused();
  // The outline hoists a region's first op as its anchor. A sibling chain
  // absorbed into an anchored group (another convolution's bias add that
  // meets this one's output, as in NF-ResNet's shortcut) may come earlier
  // in the block; it never feeds the anchor (absorbSiblings keeps the
  // groups independent), so the anchor goes first.
  for (auto [gid, u] : unitOfGroup) {
    Operation *anchor = groups[gid].anchor;
    SmallVector<Operation *> &ops = units[u];
    auto at = llvm::find(ops, anchor);
    if (!anchor || at == ops.begin() || at == ops.end())
      continue;
    llvm::SmallPtrSet<Operation *, 8> before(ops.begin(), at);
    if (llvm::none_of(anchor->getOperands(),
                      [&](Value v) { return before.count(v.getDefiningOp()); }))
      std::rotate(ops.begin(), at, std::next(at));
  }

  SmallVector<unsigned> indegree(units.size(), 0);
  SmallVector<SmallVector<unsigned>> succ(units.size());
  for (auto [u, ops] : llvm::enumerate(units)) {
    llvm::SmallDenseSet<unsigned, 8> preds;
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          Operation *p = v.getDefiningOp();
          if (!p || p->getBlock() != &block)
            continue;
          unsigned pu = unitOf[p];
          if (pu != u && preds.insert(pu).second) {
            succ[pu].push_back(u);
            ++indegree[u];
          }
        }
      });
  }
  using Item = std::pair<unsigned, unsigned>; // (first op index, unit)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (unsigned u = 0; u < units.size(); ++u)
    if (indegree[u] == 0)
      ready.push({index[units[u].front()], u});
  Operation *terminator = block.getTerminator();
  OpBuilder b(terminator);
  DenseMap<unsigned, int> groupOfUnit;
  for (auto [gid, u] : unitOfGroup)
    groupOfUnit[u] = gid;
  while (!ready.empty()) {
    unsigned u = ready.top().second;
    ready.pop();
    auto gi = groupOfUnit.find(u);
    if (gi == groupOfUnit.end())
      units[u].front()->moveBefore(terminator);
    else
      buildRegion(b, groups[gi->second], units[u], terminator);
    for (unsigned s : succ[u])
      if (--indegree[s] == 0)
        ready.push({index[units[s].front()], s});
  }
  annotateUnfused();
}

void RegionFormer::buildRegion(OpBuilder &b, Group &g,
                               ArrayRef<Operation *> ops,
                               Operation *terminator) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  SmallVector<Value> escaping;
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            Operation *owner = block.findAncestorOpInBlock(*user);
            return !owner || !members.count(owner);
          }))
        escaping.push_back(r);
  b.setInsertionPoint(terminator);
  Location loc = ops.front()->getLoc();
  auto region = RegionOp::create(
      b, loc, ValueRange(escaping).getTypes(), b.getI64IntegerAttr(nextId++),
      g.anchor ? b.getStringAttr(displayName(g.anchor)) : StringAttr());
  Block *body = b.createBlock(&region.getBody());
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  b.setInsertionPointToEnd(body);
  YieldOp::create(b, loc, escaping);
  for (auto [v, r] : llvm::zip(escaping, region.getResults()))
    v.replaceUsesWithIf(r, [&](OpOperand &use) {
      return !region->isProperAncestor(use.getOwner());
    });
}

void RegionFormer::annotateUnfused() {
  for (auto &[op, reason] : unfused)
    op->setAttr("kb.unfused", StringAttr::get(op->getContext(), reason));
}

namespace {
struct FormRegionsPass : kb::impl::FormRegionsBase<FormRegionsPass> {
  using FormRegionsBase::FormRegionsBase;
  void runOnOperation() override {
    int nextId = 0;
    getOperation()->walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      RegionFormer(func.getBody().front(), maxOps, normsBeforeTF32,
                   reductionsBeforeSteps, nextId)
          .run();
      // Ops inside control flow are never fused; say so.
      func.walk([&](OpaqueOp opaque) {
        for (Region &r : opaque.getBlocks())
          r.walk([&](AtenOp nested) {
            nested->setAttr(
                "kb.unfused",
                StringAttr::get(&getContext(), "inside control flow"));
          });
      });
    });
  }
};

} // namespace
