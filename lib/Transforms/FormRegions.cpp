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

#include "RegionRows.h"

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include <algorithm>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <queue>

namespace kb {
#define GEN_PASS_DEF_FORMREGIONS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;
using namespace kb::formregions;

namespace {

class RegionFormer {
public:
  RegionFormer(Block &block, unsigned maxOps, bool normsBeforeTF32,
               bool reductionsBeforeSteps, int &nextId)
      : block(block), maxOps(maxOps), normsBeforeTF32(normsBeforeTF32),
        reductionsBeforeSteps(reductionsBeforeSteps), nextId(nextId) {}

  void run() {
    for (Operation &op : block.without_terminator())
      visit(&op);
    moveEpiloguesIntoReductions();
    sinkIntoConsumers();
    materialize();
  }

private:
  /// The int64 result of a reduction (argmax / argmin indices): kernels
  /// write it, but only float values flow between a region's ops, so its
  /// consumers do not join the reduction's group.
  static bool isIndexResult(Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getElementType().isInteger(64) && v.getDefiningOp() &&
           getKind(v.getDefiningOp()) == OpKind::Reduction;
  }

  bool isCandidate(Operation *op, OpKind kind) {
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

  /// Kernels read float32 and bool operands (a bool mask computed in ATen
  /// or passed in: T5's and CLIP's attention masks, read as 0 or 1) and
  /// compute bools inside a region (a comparison feeding where): an op over
  /// integer tensors (token ids, positions, class indices) would make its
  /// whole region fail code generation, taking the float ops it joined down
  /// with it (LLaMA's mask arithmetic: six regions not generated). Such ops
  /// stay in ATen; argmax / argmin still write their int64 indices.
  bool readsOrMakesNonKernelValue(Operation *op, OpKind kind) {
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

  /// Dependencies of `op` on groups, through any path.
  void computeDeps(Operation *op) {
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

  void visit(Operation *op) {
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
    }
    groupOf[op] = g.id;
    groups.push_back(std::move(g));
    // A parameter's few-element chain that only this op broadcasts
    // (`x / (p.abs() + 1)` with x an input) comes along as it does when
    // `op` joins a group: one launch and no [C, 1] tensor written.
    if (kind == OpKind::Elementwise || kind == OpKind::Broadcast)
      absorbSiblings(op, groups.back(), /*leavesOnly=*/true);
  }

  /// `cat` of 2-8 static float32 tensors of one rank along a constant dim,
  /// whose list nothing else reads: a kernel evaluates the input its index
  /// falls in (GPT-NeoX's and LLaMA's rotate_half, `cat(-x2, x1)`, inside
  /// `q * cos + rotate_half(q) * sin`). Its list, or null.
  ListOp fusableCat(Operation *op) {
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

  /// The cat and its list open an anchorless group over the cat's shape,
  /// which its pointwise consumers join. A pointwise group computing a
  /// listed tensor and used by nothing else comes along: evaluated at the
  /// index the cat maps to it, its result is never written.
  void openCatGroup(Operation *cat, ListOp list) {
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

  /// A reduction that changes the shape cannot join a group whose values
  /// are also used outside it (the region would write outputs of two
  /// shapes), and would read its input from memory. When that group is a
  /// short pointwise chain over at most two full-size tensors whose other
  /// users are pointwise ops (`v = x * tanh(softplus(x)); v - v.mean(0)`,
  /// a squeeze-excitation's `y * sigmoid(fc(y.mean((2, 3))))`), the
  /// reduction gets its own copy of the chain instead, computed from the
  /// chain's inputs: `v` is then written by no one (its other users join the
  /// original chain, which no longer reaches the reduction), and every op
  /// rounds as before.
  bool recomputeProducers(Operation *op) {
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
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
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

  /// Left out by a numerics rule (rewrite's reports list these: the op
  /// could be fused, and is not, on purpose).
  void keptForNumerics(Operation *op, const char *reason) {
    unfused.push_back({op, reason});
    op->setAttr("kb.numerics", UnitAttr::get(op->getContext()));
  }

  bool tryJoin(Operation *op, OpKind kind, Group &g) {
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

  /// `op` (of shape `shape`) combines the keepdim result of `g`'s only
  /// reduction, a plain one over adjacent dims, with values of the rows it
  /// reduced: the row kernel evaluates it per element after the row's
  /// result. Nothing else may read the reduced stage's values, which the
  /// kernel then never writes (a region writes outputs of one shape). After
  /// a pooling the last reduction's rows are pooled values: no row kernel
  /// holds the pooling's input.
  bool broadcastsBack(Operation *op, ArrayRef<int64_t> shape, Group &g) {
    Operation *red = g.lastReduction;
    if (!red || red != g.firstReduction || g.rebroadcast || !keepdimRows(red) ||
        shape !=
            cast<RankedTensorType>(reducedInput(red).getType()).getShape() ||
        feedsReduction(op))
      return false;
    for (Operation *m : g.stage)
      for (Operation *u : m->getUsers())
        if (u != op && !g.stage.count(u) && !rejoins(u, g.lastReduction))
          return false;
    return true;
  }

  bool dependsOn(Operation *op, int gid) {
    auto it = deps.find(op);
    return it != deps.end() && (unsigned)gid < it->second.size() &&
           it->second.test(gid);
  }

  /// `op` just joined `g`; its other operands' anchorless pointwise groups
  /// over the same shape (`where(x < t, x, -x)`: the mask and the negation
  /// start groups of their own when their producer stays outside, e.g. a
  /// norm kept in ATen) join `g` too, when neither group reaches the other
  /// and `op` reaches them only directly. With `leavesOnly` (`op` opened
  /// `g`), only smaller broadcast leaves do (broadcastLeaf).
  void absorbSiblings(Operation *op, Group &g, bool leavesOnly = false) {
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
      bool independent = llvm::none_of(g.ops,
                                       [&](Operation *x) {
                                         return x != op && dependsOn(x, s.id);
                                       }) &&
                         llvm::none_of(s.ops, [&](Operation *y) {
                           return dependsOn(y, g.id);
                         });
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

  /// A smaller group `s` whose values `op` broadcasts into `g` joins `g`
  /// too when it is a leaf (it reads only values from outside every group:
  /// parameters, inputs, constants) used by nothing else: `where(p > 0, y,
  /// q)` with a per-channel mask of a parameter (gen task 79 left the mask
  /// in a region of its own, whose bool output no kernel writes, and so
  /// the `where` region had a bool input and no kernel either). The kernel
  /// evaluates its ops at the broadcast index, as it reads a broadcast
  /// input.
  bool broadcastLeaf(const Group &s, const Group &g, Operation *op) {
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

  /// An anchor's pointwise epilogue whose value is also used by a later
  /// region and reduced by a row reduction in a group of its own (T5's and
  /// LLaMA's `h = x + o_proj(a)`, then `h * rsqrt(h.pow(2).mean(-1) +
  /// eps)`, h read again by the next residual add) moves into the
  /// reduction's group: that kernel computes h from the anchor's result,
  /// writes it for the later users, and reduces it, where the epilogue
  /// wrote h and h^2 and the row kernel read both back (7 element passes
  /// become 4). The anchor then runs alone. The reduction could not join
  /// the anchor's group (it changes the shape while h is used outside).
  void moveEpiloguesIntoReductions() {
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

  /// The anchorless group whose first op is a last-dim row reduction of an
  /// epilogue value, every other epilogue user in it over the epilogue's
  /// shape, whose values used outside it all have that shape, and that no
  /// other user of the epilogue reaches (they read its values from that
  /// group after the move); or -1.
  int epilogueTarget(const Group &g, ArrayRef<Operation *> epilogue,
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

  /// A reduction over the input's last dim only (keepdim or not): its
  /// dim list names that dim, and its result is the input's shape without
  /// it or with it 1 (a layer norm's normalized_shape is no dim list).
  static bool reducesLastDim(Operation *red) {
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
           (out == ArrayRef<int64_t>(kept) ||
            out == ArrayRef<int64_t>(keptDim));
  }

  /// Whether any path from the ops `from` reaches group `target`, a group
  /// counted as one unit (its results depend on all its inputs) and the
  /// ops of `moving` as members of `target`.
  bool reachesGroup(ArrayRef<Operation *> from, int target,
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

  /// A pointwise op of a group whose operands are all in memory anyway
  /// (inputs, parameters, the group's anchor's result, other units'
  /// results) and whose users all belong to other groups moves into them:
  /// each consumer's kernel evaluates it from the same operand bytes, and
  /// its result is never written. gen-20261207 task 13's `v1.clamp(-1, 1)`
  /// of a convolution's output joined the convolution's epilogue, which
  /// wrote 205 MB that the next kernel read back. With users in several
  /// groups, each gets a copy: a convolution's bias add read by both
  /// `v.mean(0)` and `v - mean` (gen-20261306 task 1) was a pass of its
  /// own, 1 GB moved for an add (0.34 ms of 2.2 on an H100); the copies
  /// round as the op does, and each reads the operand its result replaced.
  void sinkIntoConsumers() {
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

  /// The groups `op` (a member of `g`) can move into, none if it stays.
  /// Copies into more than a few would read its operands that many times.
  SmallVector<int, 4> sinkTargets(Operation *op, const Group &g) {
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

  /// Whether rewrite's numerics policy may keep `g`'s ATen ops: a reduction
  /// whose result reaches a TF32 convolution (a squeeze-excitation's mean
  /// before its 1x1 convolutions). An op moved or copied into it would
  /// then run in ATen too: EfficientNet-B0's SiLU, copied into its 16
  /// excitation means, was computed twice (154 MB of memory-bound traffic
  /// where 136 were).
  bool mayStayInAten(const Group &g) {
    return !normsBeforeTF32 && llvm::any_of(g.ops, [](Operation *op) {
      return getKind(op) == OpKind::Reduction && reachesConvolution(op);
    });
  }

  /// A static tensor of more than an eighth of `n` elements: moving a read
  /// of it into another kernel costs about as much as the value it feeds.
  static bool isFullSize(Value v, int64_t n) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() && t.getNumElements() * 8 > n;
  }

  /// Kahn's algorithm over units (a group or a lone op), preferring original
  /// order, then rebuilds the block in that order with kb.region ops.
  void materialize() {
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
      auto aten = g.ops.size() == 1 && !g.anchor
                      ? dyn_cast<AtenOp>(g.ops.front())
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
      if (llvm::none_of(anchor->getOperands(), [&](Value v) {
            return before.count(v.getDefiningOp());
          }))
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

  void buildRegion(OpBuilder &b, Group &g, ArrayRef<Operation *> ops,
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

  void annotateUnfused() {
    for (auto &[op, reason] : unfused)
      op->setAttr("kb.unfused", StringAttr::get(op->getContext(), reason));
  }

  Block &block;
  unsigned maxOps;
  bool normsBeforeTF32;
  bool reductionsBeforeSteps;
  int &nextId;
  std::vector<Group> groups;
  DenseMap<Operation *, int> groupOf;
  DenseMap<Operation *, llvm::BitVector> deps;
  SmallVector<std::pair<Operation *, std::string>> unfused;
};

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
