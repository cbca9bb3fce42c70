//===- SinkViews.cpp - --kb-sink-views ------------------------------------===//
//
// f(view(a), ...) becomes view(f(a, ...)) for a pointwise f, where the view
// keeps the row-major order of its elements (view, reshape, flatten,
// unflatten, squeeze, unsqueeze, view_as, reshape_as of a contiguous
// tensor): element i of f's result is f of element i of a either way, so
// the rewrite is exact. The view then follows f, and f sits next to the op
// that made a, whose region it can join.
//
// Why: a region ends at a view (views run in ATen, where they cost
// nothing), so a pointwise consumer behind one started a kernel of its own.
// timm's LeViT writes every batch norm as `bn(x.flatten(0, 1)).reshape_as(x)`
// (its LinearNorm), and the hardswish or residual add after it became one of
// 49 single-op regions (run104, H100: levit_128's 31 hardswish and 18 adds,
// 0.56 ms of ATen time, none of them faster than ATen alone).
//
// A reshape (flatten, reshape_as) of a tensor whose traced strides are not
// row-major is a copy into row-major order; f(reshape(x)) becomes
// reshape(f(x)) too: f's kernel reads x through its strides and writes
// row-major, so the reshape after it is a view and the copy is gone
// (LeViT's `(attn @ v).transpose(1, 2).reshape(B, N, C)` before its
// projection's hardswish). The copy stays as contiguous(f(x)), pointwise
// in f's region (kRowMajorCopyAttr): an identity in the kernel, ATen's
// copy of f's strided result in the region's reference ops, so the
// region's eager time counts the copy it replaces.
//
// f's other tensor operands follow it to a's shape: one of the view's
// output shape is viewed back (a view of it whose input has a's shape is
// read directly); a broadcast operand is kept where the view leaves the
// dims it spans alone (a per-channel [C] after a flatten of the leading
// dims); anything else, and an operand of the view's shape that a fusable
// op makes for f alone (f would rather join that op's region), leaves f
// where it is.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kb {
#define GEN_PASS_DEF_SINKVIEWS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

RankedTensorType staticTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

/// `v`'s defining op where it is one of the view ops `names`, not in
/// place, between static tensors of one element type and count, neither
/// of them mutated.
AtenOp plainView(Value v, ArrayRef<StringRef> names) {
  auto view = v.getDefiningOp<AtenOp>();
  if (!view || view.getInplace() || !view.getInfo() ||
      view.getInfo()->style != OpStyle::View ||
      !llvm::is_contained(names, view.getName()) ||
      view->getNumResults() != 1 || view.getArgs().empty())
    return nullptr;
  Value in = view.getArgs()[0];
  RankedTensorType it = staticTensor(in), ot = staticTensor(v);
  if (!it || !ot || it.getElementType() != ot.getElementType() ||
      it.getNumElements() != ot.getNumElements() || hasMutatingUse(in) ||
      hasMutatingUse(v))
    return nullptr;
  return view;
}

/// A view that keeps the row-major order of its elements: its input and
/// result are row-major.
AtenOp orderKeepingView(Value v) {
  AtenOp view = plainView(v, {"view", "reshape", "flatten", "unflatten",
                              "squeeze", "unsqueeze", "view_as", "reshape_as"});
  return view && isRowMajorType(staticTensor(view.getArgs()[0])) &&
                 isRowMajorType(staticTensor(v))
             ? view
             : nullptr;
}

/// Strides that lay `shape` out densely in some order of its dims (a
/// permutation of a row-major layout: no element twice, no gap), as a
/// transpose or permute makes; not an expand's zero strides.
bool isDensePermutation(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  SmallVector<std::pair<int64_t, int64_t>> dims; // (stride, size)
  for (auto [size, stride] : llvm::zip(shape, strides))
    if (size != 1)
      dims.push_back({stride, size});
  llvm::sort(dims);
  int64_t expect = 1;
  for (auto [stride, size] : dims) {
    if (stride != expect)
      return false;
    expect *= size;
  }
  return true;
}

/// A reshape that copies: its input has traced strides that are not
/// row-major, so ATen copies it into row-major order first. Only the ops
/// that copy when they must (a `view` of such a tensor either fails in
/// eager or stays a view).
AtenOp copyingReshape(Value v) {
  AtenOp view = plainView(v, {"reshape", "flatten", "reshape_as"});
  if (!view)
    return nullptr;
  RankedTensorType it = staticTensor(view.getArgs()[0]);
  auto strides = encodedStrides(it);
  return hasStridedLayout(it) && isRowMajorType(staticTensor(v)) &&
                 isDensePermutation(it.getShape(), *strides)
             ? view
             : nullptr;
}

/// A value a region can end with: made by an anchor, pointwise op or
/// reduction, possibly behind order-keeping views.
bool madeByFusableOp(Value v) {
  while (AtenOp view = orderKeepingView(v))
    v = view.getArgs()[0];
  Operation *def = v.getDefiningOp();
  return def && isa<AtenOp>(def) &&
         (isEpilogueOp(def) || getKind(def) == OpKind::Anchor);
}

/// A pointwise op of the table with numpy broadcasting (style None: not
/// a cast, dropout or a norm's per-channel affine, whose channel dim is
/// not the last).
bool isPlainPointwise(AtenOp op) {
  if (op.getInplace() || !op.getInfo() ||
      op.getInfo()->style != OpStyle::None || op->getNumResults() != 1)
    return false;
  OpKind kind = getKind(op);
  if (kind != OpKind::Elementwise && kind != OpKind::Broadcast)
    return false;
  RankedTensorType t = staticTensor(op->getResult(0));
  return t && isRowMajorType(t) && !hasMutatingUse(op->getResult(0));
}

struct SinkViewsPass : kb::impl::SinkViewsBase<SinkViewsPass> {
  void runOnOperation() override {
    SmallVector<AtenOp> ops;
    getOperation()->walk([&](AtenOp op) { ops.push_back(op); });
    // In program order: a sunk view is met again at its next user.
    for (AtenOp op : ops)
      while (op)
        op = sink(op);
  }

  /// Sinks one view past `op`; returns the new pointwise op (to sink the
  /// next view of its operands), or null when nothing moved.
  AtenOp sink(AtenOp op) {
    if (!isPlainPointwise(op))
      return nullptr;
    RankedTensorType outT = staticTensor(op->getResult(0));
    ArrayRef<int64_t> from = outT.getShape();
    // The view to sink: one of the result's shape over a value an op that
    // a region can hold made.
    AtenOp view;
    bool copies = false;
    for (Value v : op.getArgs())
      if (staticTensor(v) && staticTensor(v).getShape() == from) {
        if (AtenOp w = orderKeepingView(v);
            w && madeByFusableOp(w.getArgs()[0])) {
          view = w;
          break;
        }
        // A copy into row-major order that the op's kernel can make
        // instead, reading the strided tensor: f(x) is written row-major,
        // and the reshape of it is a view.
        if (AtenOp w = copyingReshape(v)) {
          view = w;
          copies = true;
          break;
        }
      }
    if (!view)
      return nullptr;
    Value base = view.getArgs()[0];
    ArrayRef<int64_t> to = staticTensor(base).getShape();

    // Each tensor operand at `to`: the view's input, a view back, or a
    // broadcast operand as it is.
    struct Move {
      unsigned index;
      Value value;   // the operand at `to`, or
      bool viewBack; // view it to `to` first
    };
    SmallVector<Move> moves;
    // Views of other operands read through: erased once unused (a dead
    // view would keep its input a region output).
    llvm::SmallSetVector<Operation *, 4> bypassed;
    bypassed.insert(view);
    auto args = op.getArgs();
    for (unsigned i = 0; i < args.size(); ++i) {
      Value v = args[i];
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t)
        continue;
      if (v == view->getResult(0)) {
        moves.push_back({i, base, false});
        continue;
      }
      if (!t.hasStaticShape())
        return nullptr;
      if (t.getShape() == from) {
        AtenOp w = orderKeepingView(v);
        if (w && staticTensor(w.getArgs()[0]).getShape() == to) {
          moves.push_back({i, w.getArgs()[0], false});
          bypassed.insert(w);
          continue;
        }
        // Made for op alone by an op whose region op would join.
        if (v.hasOneUse() && !w && madeByFusableOp(v))
          return nullptr;
        if (!isRowMajorType(t) || hasMutatingUse(v))
          return nullptr;
        moves.push_back({i, v, true});
        continue;
      }
      if (t.getRank() > (int64_t)to.size() ||
          !broadcastsAlike(t.getShape(), from, to))
        return nullptr;
    }

    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> newArgs(args.begin(), args.end());
    for (const Move &m : moves) {
      Value v = m.value;
      if (m.viewBack) {
        auto vt = cast<RankedTensorType>(v.getType());
        v = AtenOp::create(
                b, loc,
                TypeRange{RankedTensorType::get(to, vt.getElementType())},
                b.getStringAttr("reshape"), b.getStringAttr(""), nullptr,
                b.getStringAttr(kindName(OpKind::Injective)),
                ValueRange{v, makeI64List(b, loc, to)})
                ->getResult(0);
      }
      newArgs[m.index] = v;
    }
    Operation *moved = b.clone(*op);
    moved->setOperands(newArgs);
    moved->getResult(0).setType(
        RankedTensorType::get(to, outT.getElementType()));
    Value result = moved->getResult(0);
    if (copies) {
      // The copy stays in f's region as `contiguous`: an identity in the
      // kernel (it writes row-major), ATen's copy of f's strided result in
      // the region's reference ops, so kb-verify times eager with the copy
      // the reshape made and the fallback hands the reshape a row-major
      // tensor.
      Operation *copy = AtenOp::create(
          b, loc, TypeRange{result.getType()}, b.getStringAttr("contiguous"),
          b.getStringAttr(""), nullptr,
          b.getStringAttr(kindName(OpKind::Elementwise)),
          ValueRange{result, makeI64(b, loc, 0)});
      copy->setAttr(kRowMajorCopyAttr, b.getUnitAttr());
      result = copy->getResult(0);
    }
    IRMapping map;
    map.map(base, result);
    Operation *after = b.clone(*view, map);
    op->getResult(0).replaceAllUsesWith(after->getResult(0));
    op->erase();
    for (Operation *w : bypassed)
      if (w->use_empty())
        w->erase();
    return cast<AtenOp>(moved);
  }

  /// A broadcast operand of shape `s` against `from` reads the same
  /// elements against `to`: the dims it spans (past its leading 1s) are
  /// trailing dims the view leaves alone.
  static bool broadcastsAlike(ArrayRef<int64_t> s, ArrayRef<int64_t> from,
                              ArrayRef<int64_t> to) {
    while (!s.empty() && s.front() == 1)
      s = s.drop_front();
    size_t r = s.size();
    if (r > to.size() || r > from.size())
      return false;
    return from.take_back(r) == to.take_back(r);
  }
};

} // namespace
