//===- RegionViews.cpp - kb-form-regions' index maps inside groups --------===//
//
// A view, permute, roll, slice, select or constant pad of a value a
// group's pointwise stage computes joins the group (joinView, rule 2a of
// docs/passes.md): the kernel reads through it, so eager's copies (Swin's
// window reverse) and the kernel boundaries at views (Swin's shifted-window
// scores) are gone. Maps no later member reads leave again
// (dropTrailingViews).
//
//===----------------------------------------------------------------------===//

#include "RegionFormer.h"

#include "kb/Transforms/OpUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kb;
using namespace kb::formregions;

/// The operands after an index-map op's tensor as constants, or false. A
/// size, end, length or pad the host computed from the input's sizes
/// (Swin's views, crop and pad take theirs from its input's shape) becomes
/// the value the traced shapes imply, so the region needs no scalar input.
static bool pinIndexMapOperands(AtenOp op) {
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(op.getArgs()[0].getType()).getShape();
  ArrayRef<int64_t> out = resultShape(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto list = [&](ArrayRef<int64_t> values) -> Value {
    SmallVector<Value> elements;
    for (int64_t v : values)
      elements.push_back(makeI64(b, loc, v));
    return ListOp::create(b, loc, ListType::get(b.getContext(), b.getI64Type()),
                          elements);
  };
  auto number = [&](StringRef name) -> std::optional<int64_t> {
    Value a = op.getArg(name);
    std::optional<double> v = a ? getConstantNumber(a) : std::nullopt;
    return v ? std::optional<int64_t>((int64_t)*v) : std::nullopt;
  };
  for (unsigned k = 1; k < op.getArgs().size(); ++k) {
    Value a = op.getArgs()[k];
    if (isConstantLike(a) || isNone(a))
      continue;
    StringRef name = op.getInfo()->args[k].name;
    Value pinned;
    if (name == "size" || name == "shape") {
      pinned = list(out);
    } else if (name == "end" || name == "length") {
      std::optional<int64_t> d = number("dim");
      std::optional<int64_t> start = number("start");
      std::optional<int64_t> step =
          name == "end" ? number("step") : std::optional<int64_t>(1);
      if (!d || !start || !step || *start < 0 || *d < 0 ||
          *d >= (int64_t)out.size())
        return false;
      int64_t len = out[*d];
      pinned = makeI64(b, loc,
                       name == "length" ? len : *start + (len - 1) * *step + 1);
    } else if (name == "pad") {
      // Each (before, after) pair grows its dim by out - in: one constant
      // half gives the other.
      auto l = a.getDefiningOp<ListOp>();
      if (!l || l.getElements().size() % 2 ||
          l.getElements().size() > 2 * out.size())
        return false;
      SmallVector<int64_t> pads;
      for (size_t j = 0; j < l.getElements().size(); j += 2) {
        size_t d = out.size() - 1 - j / 2;
        std::optional<double> x = getConstantNumber(l.getElements()[j]);
        std::optional<double> y = getConstantNumber(l.getElements()[j + 1]);
        int64_t grow = out[d] - in[d];
        if (!x && !y)
          return false;
        int64_t before = x ? (int64_t)*x : grow - (int64_t)*y;
        pads.push_back(before);
        pads.push_back(grow - before);
      }
      pinned = list(pads);
    } else {
      return false;
    }
    op->setOperand(k, pinned);
  }
  return true;
}

bool RegionFormer::joinView(Operation *op) {
  // kb-sink-views' row-major copies are pointwise members already.
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->indexMap == IndexMap::None ||
      op->getNumResults() != 1 || !isStaticF32(op->getResult(0)) ||
      op->hasAttr(kRowMajorCopyAttr))
    return false;
  Operation *p = aten.getArgs()[0].getDefiningOp();
  auto gi = p ? groupOf.find(p) : groupOf.end();
  if (gi == groupOf.end())
    return false;
  Group &g = groups[gi->second];
  if (g.lastReduction || g.rebroadcast || !g.stage.count(p) ||
      g.ops.size() >= maxOps + (g.anchor ? 1 : 0))
    return false;
  // Nothing outside the group may read its values so far (the anchor's
  // result aside, which the GEMM writes anyway): the kernel would write
  // them in their shape beside the values after the map, and the row and
  // pointwise kernels write outputs of one shape (`y = x * 3; return y,
  // tanh(y[:, 5])` stays two kernels).
  for (Operation *m : g.ops)
    if (m != g.anchor)
      for (Operation *u : m->getUsers())
        if (u != op) {
          auto ui = groupOf.find(u);
          if (ui == groupOf.end() || ui->second != g.id)
            return false;
        }
  // The op must lead, through further index maps each read once, to one
  // op that can join (a pointwise op or a reduction): a value a GEMM or
  // another region reads would be written by the kernel, where eager's
  // view writes nothing (the q, k, v selects of one qkv permute; a
  // patch embedding's transposed output that two blocks read).
  SmallVector<Operation *> chain{op};
  while (true) {
    Operation *m = chain.back();
    if (!m->hasOneUse())
      return false;
    Operation *u = *m->getUsers().begin();
    auto ua = dyn_cast<AtenOp>(u);
    if (!ua || !ua.getInfo())
      return false;
    if (ua.getInfo()->indexMap != IndexMap::None &&
        !u->hasAttr(kRowMajorCopyAttr)) {
      chain.push_back(u);
      continue;
    }
    OpKind k = getKind(u);
    if (k != OpKind::Elementwise && k != OpKind::Broadcast &&
        k != OpKind::Reduction)
      return false;
    break;
  }
  // Views of the anchor's result that copy nothing in eager stay out: the
  // region reads the result through their strides either way, and a stage
  // over an argument takes the row kernels' forms that load it directly
  // (float4 quads of a split batch norm: LeViT's
  // `bn(linear(x).flatten(0, 1))`). Where the chain copies (a roll, a pad,
  // a reshape of a permuted tensor: Swin's window reverse), the kernel
  // reads the anchor's result where the copies would have put it.
  auto copies = [](Operation *m) {
    std::optional<IndexMapParams> k = indexMapOf(m);
    if (!k)
      return true; // a roll or pad whose operands pinIndexMapOperands fixes
    if (k->map == IndexMap::Roll || k->map == IndexMap::Pad)
      return true;
    if (k->map != IndexMap::Flat)
      return false;
    return hasStridedLayout(cast<RankedTensorType>(m->getOperand(0).getType()));
  };
  Operation *root = p;
  while (root != g.anchor && mapped.count(root)) {
    chain.push_back(root);
    root = root->getOperand(0).getDefiningOp();
  }
  if (root == g.anchor && llvm::none_of(chain, copies))
    return false;
  if (!pinIndexMapOperands(aten) || !indexMapOf(op))
    return false;
  g.ops.push_back(op);
  g.stage.insert(op);
  g.shape = resultShape(op);
  groupOf[op] = g.id;
  mapped.insert(op);
  return true;
}

void RegionFormer::dropTrailingViews() {
  for (Group &g : groups) {
    bool dropped = true;
    while (dropped) {
      dropped = false;
      for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it) {
        Operation *m = *it;
        if (!mapped.count(m) || llvm::any_of(m->getUsers(), [&](Operation *u) {
              auto ui = groupOf.find(u);
              return ui != groupOf.end() && ui->second == g.id;
            }))
          continue;
        g.stage.erase(m);
        groupOf.erase(m);
        g.ops.erase(std::next(it).base());
        unfused.push_back({m, unfusedReason(m, OpKind::Injective)});
        dropped = true;
        break;
      }
    }
  }
}
