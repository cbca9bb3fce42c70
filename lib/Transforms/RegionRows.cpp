//===- RegionRows.cpp - The groups FormRegions builds and their rows -----===//

#include "RegionRows.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;

namespace kb::formregions {

/// Softmax rows shorter than this do not take a cross-row statistics
/// phase (crossRow).
constexpr int64_t kCrossRowSoftmaxMinRow = 4096;

ArrayRef<int64_t> resultShape(Operation *op) {
  if (op->getNumResults() == 0)
    return {};
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return rt ? rt.getShape() : ArrayRef<int64_t>();
}

bool allResultsStatic(Operation *op) {
  if (op->getNumResults() == 0)
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return hasStaticShape(t); });
}

/// Tensor operand a reduction reduces (its first tensor operand).
Value reducedInput(Operation *op) {
  for (Value v : op->getOperands())
    if (isa<TensorType>(v.getType()))
      return v;
  return {};
}

/// A tensor constant of rank >= 1 (a plain tensor attribute the tracer
/// baked in): kernels render constants as literals, so an op reading one
/// stays in ATen and its result reaches a region as an input.
bool readsTensorConstant(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() > 0 && v.getDefiningOp<ConstantOp>();
  });
}

std::string unfusedReason(Operation *op, OpKind kind) {
  if (readsTensorConstant(op))
    return "reads a tensor constant: no kernel operand";
  switch (kind) {
  case OpKind::Anchor:
    return "anchor without a fusable consumer: stays in cuBLAS/cuDNN";
  case OpKind::Injective: {
    auto aten = cast<AtenOp>(op);
    OpStyle style = aten.getInfo()->style;
    if (style == OpStyle::View || style == OpStyle::Identity ||
        style == OpStyle::Dropout)
      return "view/identity: no data to fuse";
    return "data movement (copy/concat/pad) is not fused";
  }
  case OpKind::Host:
    return "host-side shape or scalar arithmetic";
  case OpKind::Opaque:
    if (auto aten = dyn_cast<AtenOp>(op))
      if (aten.getInfo()->style == OpStyle::Dropout)
        return "random dropout (p > 0 in training) is not fused";
    if (isa<OpaqueOp>(op) && op->getNumRegions() > 0)
      return "control flow (prim::If/prim::Loop) is kept as is";
    if (auto opaque = dyn_cast<OpaqueOp>(op);
        opaque && opaque.getName().starts_with("prim::"))
      return "TorchScript structural or scalar op, kept as is";
    return "not in the op-semantics table";
  default:
    if (op->getNumResults() && hasStaticShape(op->getResult(0).getType()) &&
        cast<RankedTensorType>(op->getResult(0).getType()).getRank() == 0)
      return "0-d tensor arithmetic: not worth a kernel";
    return "shape or dtype not static";
  }
}

/// `op` reads `first`'s result, directly or through pointwise ops of the
/// group, and every other reader of those values is a member of `g`: a
/// row kernel writes only values computed after its final stage, so a
/// value of the first stage read elsewhere would leave the region without
/// a kernel.
bool onlyFeeds(Operation *first, Operation *op, const Group &g) {
  bool reached = false;
  SmallVector<Operation *> work{first};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *p = work.pop_back_val();
    if (!seen.insert(p).second)
      continue;
    for (Operation *u : p->getUsers()) {
      if (u == op) {
        reached = true;
        continue;
      }
      if (!llvm::is_contained(g.ops, u))
        return false;
      OpKind k = getKind(u);
      if (k == OpKind::Elementwise || k == OpKind::Broadcast)
        work.push_back(u);
    }
  }
  return reached;
}

/// `op`, a norm or softmax, may follow `g`'s only reduction, a training
/// batch norm or a softmax, over other rows: the kernel computes the
/// first's statistics in a first phase and evaluates it per element in
/// the second (CrossRow.cpp), instead of writing it for `op` to read
/// back.
bool crossRow(Operation *op, const Group &g) {
  auto aten = dyn_cast<AtenOp>(op);
  auto isTrainingBN = [](Operation *o) {
    return isCrossRowFirst(o) &&
           cast<AtenOp>(o).getInfo()->recipe == Recipe::BatchNorm;
  };
  if (!aten || !aten.getInfo() || isTrainingBN(op) || g.reductions != 1 ||
      g.rebroadcast)
    return false;
  int64_t heldRow = sameRowFirstRow(g.lastReduction);
  if (!isCrossRowFirst(g.lastReduction) && !heldRow)
    return false;
  // A stage whose result reaches a step or singular op must round as
  // ATen's own kernel does (rewrite generates it in ATen's order, alone in
  // its region, or keeps it in ATen): the two phases round in the code
  // generator's order.
  for (Operation *stage : {g.lastReduction, op})
    if (reachesStepOp(stage) || reachesSingularOp(stage))
      return false;
  Recipe r = aten.getInfo()->recipe;
  // A layer norm over the last dim, then a softmax, a layer norm or a
  // reduction over the same rows: the lane group holding a row computes
  // the norm's statistics from it (RowKernels.cpp, emitHeldRowStats) and
  // the final stage reads the normalised row from registers, instead of
  // the norm's kernel writing it for the next to read back (seed 20261364
  // task 31: layer_norm -> log_softmax over 150048 rows of 257). Rows a
  // lane group holds only: a block's longer rows would be read again for
  // the statistics. A softmax over rows of up to 16 gives its staged tile
  // up for the lane groups the norm's own kernel uses there.
  if (heldRow)
    return (isSoftmaxRecipe(r) || r == Recipe::LayerNorm ||
            rowReduction(aten)) &&
           heldRow > 1 && heldRow <= kLaneGroupRowMax &&
           overLastDim(aten, heldRow) && onlyFeeds(g.lastReduction, op, g);
  if (!(r == Recipe::LayerNorm || r == Recipe::GroupNorm ||
        r == Recipe::InstanceNorm || isSoftmaxRecipe(r) || rowReduction(aten)))
    return false;
  // The statistics phase runs split items of one row a block: a softmax
  // over short contiguous rows leaves most of the block idle and pays two
  // block-wide combines a row (kl_div's log_softmax over 305k rows of
  // 1023 and its sum: 3.99 ms against ATen's 3.21, run67). Such a softmax
  // joins a final stage over its own rows only, which computes the row's
  // statistics in the block or lane group holding it (CrossRow.cpp).
  int64_t len = lastDimSoftmaxRow(g.lastReduction);
  // After an anchor or pointwise ops (the reduction opened neither the
  // group nor a new shape) only a stage over the same rows a lane group
  // holds in registers, whose statistics come from the held row
  // (RowKernels.cpp, emitHeldRowStats): elsewhere the statistics
  // re-read the row and re-evaluate the epilogue before it in each pass
  // (seed 20261313 task 2, rows of 66 before the held statistics: 0.124 ms
  // merged against 0.070 + 0.048 split, run102). Rows a softmax alone
  // stages through shared memory (lane groups lost there) stay split too.
  // A training batch norm's statistics are one read of its input however
  // its group began, and the next stage reads the anchor's output as many
  // times as it would read the norm's written result (seed 20261331 task
  // 2: conv_transpose2d -> batch_norm -> softmax over dim 2 in two
  // regions, 0.063 + 0.049 ms, run129).
  if (g.lastReduction != g.firstReduction && !isTrainingBN(g.lastReduction))
    return len > kStagedSoftmaxRowMax && len <= kLaneGroupRowMax &&
           overLastDim(aten, len);
  return len == 0 || len >= kCrossRowSoftmaxMinRow || overLastDim(aten, len);
}

/// The row length of a softmax over the last dim of a static input; 0 for
/// anything else.
int64_t lastDimSoftmaxRow(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->style != OpStyle::Softmax ||
      aten.getArgs().size() < 2)
    return 0;
  auto type = dyn_cast<RankedTensorType>(aten.getArgs()[0].getType());
  auto dim = getConstantNumber(aten.getArgs()[1]);
  if (!type || !type.hasStaticShape() || type.getRank() == 0 || !dim)
    return 0;
  int64_t rank = type.getRank(), d = int64_t(*dim);
  if (d < 0)
    d += rank;
  return d == rank - 1 ? type.getDimSize(d) : 0;
}

/// Whether `a` normalises or reduces over the last dim alone, of `len`
/// elements: a softmax over it, a layer norm of that normalized shape, or
/// a plain reduction over that dim.
bool overLastDim(AtenOp a, int64_t len) {
  if (lastDimSoftmaxRow(a) == len)
    return true;
  auto type = dyn_cast<RankedTensorType>(a.getArgs()[0].getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      type.getShape().back() != len)
    return false;
  int64_t rank = type.getRank();
  if (a.getInfo()->recipe == Recipe::LayerNorm) {
    auto shape = getConstantIntList(a.getArg("normalized_shape"));
    return shape && shape->size() == 1 && (*shape)[0] == len;
  }
  if (a.getInfo()->style != OpStyle::Reduce)
    return false;
  // Every dim (an absent dim or an empty list) is not the last alone.
  Value d = a.getArg("dim");
  auto list = d ? getConstantIntList(d) : std::nullopt;
  if (!d || isNone(d) || (list && list->empty()))
    return false;
  auto dims = reducedDims(a, rank);
  return dims && dims->size() == 1 && dims->front() == rank - 1;
}

/// A plain reduction (sum, mean, var, amax, argmax, ...) over one run of
/// adjacent dims of more than 16 elements: the row kernels take it
/// (trailing rows, or columns), which evaluate a cross-row first stage
/// from its statistics; fewer elements per output go to one thread per
/// output, which does not.
bool rowReduction(AtenOp a) {
  if (a.getInfo()->style != OpStyle::Reduce || a.getInfo()->cuda.empty() ||
      a.getInfo()->recipe == Recipe::Cosine || a.getArgs().empty())
    return false;
  auto type = dyn_cast<RankedTensorType>(a.getArgs()[0].getType());
  if (!type || !type.hasStaticShape())
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  auto reduced = reducedDims(a, shape.size());
  if (!reduced)
    return false;
  SmallVector<int64_t> dims = *reduced;
  int64_t count = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k && dims[k] != dims[k - 1] + 1)
      return false;
    count *= shape[dims[k]];
  }
  return count > 16;
}

/// A plain float reduction over adjacent dims whose result keeps them as
/// size-1 dims: its value at any element of a row is the row's.
bool keepdimRows(Operation *red) {
  auto aten = dyn_cast<AtenOp>(red);
  Value in = reducedInput(red);
  auto type = dyn_cast<RankedTensorType>(red->getResult(0).getType());
  if (!aten || aten.getInfo()->style != OpStyle::Reduce || !in || !type ||
      !type.getElementType().isF32())
    return false;
  ArrayRef<int64_t> rows = cast<RankedTensorType>(in.getType()).getShape(),
                    out = type.getShape();
  if (rows.size() != out.size())
    return false;
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < rows.size(); ++d) {
    if (out[d] == rows[d])
      continue;
    if (out[d] != 1 || (last >= 0 && last + 1 != (int64_t)d))
      return false;
    first = first < 0 ? d : first;
    last = d;
  }
  if (first < 0)
    return false;
  // Few long rows: the kernel would split each row over blocks and wait
  // at a grid barrier before the element pass. Measured (H200, session
  // 27): v - v.mean(0) of 14112 x 4096 0.298 ms as one such kernel, 0.272
  // as the mean's kernel and a pointwise one; s - s.amax(1) of 4 x 2^20
  // 0.030 where ATen's two kernels take 0.028.
  int64_t kept = ShapedType::getNumElements(out),
          length =
              ShapedType::getNumElements(rows) / std::max<int64_t>(kept, 1);
  return !(kept < kFewRows && length >= kLongRow);
}

/// `op`'s value reaches a reduction through pointwise ops of its shape
/// (`div -> xlogy -> group_norm`): broadcast back into the first
/// reduction's region, the chain could not take the second and would be
/// written for it; left to the second's region, the first reduction's
/// small result is all that is written.
bool feedsReduction(Operation *op) {
  SmallVector<Operation *> work{op};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty() && seen.size() < 16) {
    Operation *p = work.pop_back_val();
    if (!seen.insert(p).second)
      continue;
    for (Operation *u : p->getUsers()) {
      if (!isa<AtenOp>(u))
        continue;
      OpKind k = getKind(u);
      if (k == OpKind::Reduction)
        return true;
      if ((k == OpKind::Elementwise || k == OpKind::Broadcast) &&
          resultShape(u) == resultShape(op))
        work.push_back(u);
    }
  }
  return false;
}

/// `u` is a pointwise op that reads `red`'s result, directly or through
/// pointwise ops of its shape, and is either over the rows of `red` or of
/// the result's shape with only such users: it will join `red`'s group
/// (broadcastsBack, then as a member of the result's stage).
bool rejoins(Operation *u, Operation *red, int depth) {
  Value in = reducedInput(red);
  if (!in || !isa<AtenOp>(u) || !keepdimRows(red) || depth > 4)
    return false;
  OpKind k = getKind(u);
  if (k != OpKind::Elementwise && k != OpKind::Broadcast)
    return false;
  if (resultShape(u) == resultShape(red)) {
    if (u->getResult(0).use_empty())
      return false;
    for (Operation *w : u->getUsers())
      if (!rejoins(w, red, depth + 1))
        return false;
  } else if (resultShape(u) !=
                 cast<RankedTensorType>(in.getType()).getShape() ||
             feedsReduction(u)) {
    return false;
  }
  SmallVector<Operation *> work;
  llvm::SmallPtrSet<Operation *, 8> seen;
  for (Value v : u->getOperands())
    if (Operation *p = v.getDefiningOp())
      work.push_back(p);
  while (!work.empty() && seen.size() < 16) {
    Operation *p = work.pop_back_val();
    if (p == red)
      return true;
    if (!seen.insert(p).second || !isa<AtenOp>(p) ||
        resultShape(p) != resultShape(red))
      continue;
    OpKind pk = getKind(p);
    if (pk != OpKind::Elementwise && pk != OpKind::Broadcast)
      continue;
    for (Value v : p->getOperands())
      if (Operation *q = v.getDefiningOp())
        work.push_back(q);
  }
  return false;
}

} // namespace kb::formregions
