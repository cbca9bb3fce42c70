//===- ChannelsLast.cpp - Pointwise kernels over channels-last data -------===//

#include "kb/CodeGen/ChannelsLast.h"

#include "EmitterSupport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace kb {
namespace {

/// Right-aligns `shape` to `rank` (broadcasting's alignment), permutes it,
/// and drops the leading 1s again, so [C, 1, 1] becomes [C].
std::vector<int64_t> permuteShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> perm) {
  size_t rank = perm.size();
  std::vector<int64_t> padded(rank - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  std::vector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(padded[p]);
  if (shape.size() == rank)
    return out;
  size_t lead = 0;
  while (lead + 1 < out.size() && out[lead] == 1)
    ++lead;
  if (shape.empty())
    return {};
  return std::vector<int64_t>(out.begin() + lead, out.end());
}

Type permuteType(Type t, ArrayRef<int64_t> perm) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked)
    return t;
  return RankedTensorType::get(permuteShape(ranked.getShape(), perm),
                               ranked.getElementType());
}

std::vector<int64_t> toLastPerm(int64_t rank) {
  return rank == 4 ? std::vector<int64_t>{0, 2, 3, 1}
                   : std::vector<int64_t>{0, 2, 3, 4, 1};
}

/// A copy of `kernel` named <name>_cl at the end of `scratch`.
KernelOp cloneVariant(KernelOp kernel, ModuleOp scratch) {
  OpBuilder b(scratch.getBodyRegion());
  b.setInsertionPointToEnd(scratch.getBody());
  auto clone = cast<KernelOp>(b.clone(*kernel.getOperation()));
  clone.setSymName((kernel.getSymName() + "_cl").str());
  return clone;
}

/// Input 0 arrives channels-last and a permute restores the NCHW view the
/// region's ops index; everything else is unchanged.
std::optional<ChannelsLastVariant>
makeReadsVariant(KernelOp kernel, ModuleOp scratch, RankedTensorType first) {
  ChannelsLastVariant v;
  v.readsOnly = true;
  v.perm = toLastPerm(first.getRank());
  KernelOp clone = cloneVariant(kernel, scratch);
  Block &cb = clone.getBody().front();
  for (BlockArgument a : cb.getArguments()) {
    auto shape = cast<RankedTensorType>(a.getType()).getShape();
    v.inputShapes.emplace_back(shape.begin(), shape.end());
    v.permutedShapes.emplace_back(shape.begin(), shape.end());
  }
  BlockArgument in0 = cb.getArgument(0);
  in0.setType(permuteType(first, v.perm));
  v.permutedShapes[0] = permuteShape(first.getShape(), v.perm);
  // permute(x, inverse): [N, H, W, C] -> [N, C, H, W].
  std::vector<int64_t> inverse(v.perm.size());
  for (size_t d = 0; d < v.perm.size(); ++d)
    inverse[v.perm[d]] = d;
  OpBuilder b = OpBuilder::atBlockBegin(&cb);
  Location loc = clone.getLoc();
  SmallVector<Value> dims;
  for (int64_t d : inverse)
    dims.push_back(
        ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(d)));
  Value list = ListOp::create(
      b, loc, ListType::get(b.getContext(), b.getI64Type()), dims);
  Value view =
      AtenOp::create(b, loc, TypeRange{first}, b.getStringAttr("permute"),
                     b.getStringAttr(""), nullptr, b.getStringAttr("injective"),
                     ValueRange{in0, list})
          ->getResult(0);
  in0.replaceAllUsesExcept(view, view.getDefiningOp());
  v.kernel = clone;
  return v;
}

} // namespace

std::optional<ChannelsLastVariant> makeChannelsLastVariant(KernelOp kernel,
                                                           ModuleOp scratch) {
  if (!kernel.getAnchor() || *kernel.getAnchor() != "aten::_convolution")
    return std::nullopt;
  Block &body = kernel.getBody().front();
  if (body.getNumArguments() == 0)
    return std::nullopt;
  auto first = dyn_cast<RankedTensorType>(body.getArgument(0).getType());
  if (!first || (first.getRank() != 4 && first.getRank() != 5) ||
      !first.hasStaticShape())
    return std::nullopt;
  // The runtime's channels-last copies are of floats: a mask keeps NCHW.
  if (llvm::any_of(body.getArgumentTypes(),
                   [](Type t) { return codegen::isBoolTensor(t); }))
    return std::nullopt;
  bool pointwise = true;
  for (Operation &op : body.without_terminator()) {
    if (isa<ConstantOp>(op)) {
      // Scalars, also as 0-d tensors (`x * 0.5` traces a 0-d double tensor).
      auto t = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!t || t.getRank() == 0)
        continue;
      return std::nullopt;
    }
    auto aten = dyn_cast<AtenOp>(op);
    if (aten && aten.getKind() && *aten.getKind() == "reduction") {
      pointwise = false;
      continue;
    }
    if (isa<ListOp>(op))
      continue;
    if (!aten || !aten.getKind() ||
        (*aten.getKind() != "elementwise" && *aten.getKind() != "broadcast"))
      return std::nullopt;
  }
  if (!pointwise)
    return makeReadsVariant(kernel, scratch, first);
  for (Value v : body.getTerminator()->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getShape() != first.getShape())
      return std::nullopt;
  }
  for (Value a : body.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(a.getType());
    if (!t || t.getRank() > first.getRank())
      return std::nullopt;
  }

  ChannelsLastVariant v;
  v.perm = toLastPerm(first.getRank());
  KernelOp clone = cloneVariant(kernel, scratch);
  Block &cb = clone.getBody().front();
  for (BlockArgument a : cb.getArguments()) {
    auto shape = cast<RankedTensorType>(a.getType()).getShape();
    v.inputShapes.emplace_back(shape.begin(), shape.end());
    a.setType(permuteType(a.getType(), v.perm));
    auto p = cast<RankedTensorType>(a.getType()).getShape();
    v.permutedShapes.emplace_back(p.begin(), p.end());
  }
  for (Operation &op : cb.without_terminator())
    for (OpResult r : op.getResults())
      r.setType(permuteType(r.getType(), v.perm));
  v.kernel = clone;
  return v;
}

} // namespace kb
