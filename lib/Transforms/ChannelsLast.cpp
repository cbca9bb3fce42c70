//===- ChannelsLast.cpp - Channels-last variants of convolution epilogues -===//
//
// An IR transform: the variant is a clone of the outlined kb.kernel with
// permuted types (and permutes around channel norms), which the emitter
// then generates like any kernel (include/kb/Transforms/ChannelsLast.h).
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/ChannelsLast.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"

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

/// `aten::permute(v, dims)` of type `type`, built at `b`'s insertion point.
Value createPermute(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims,
                    RankedTensorType type) {
  SmallVector<Value> consts;
  for (int64_t d : dims)
    consts.push_back(
        ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(d)));
  Value list = ListOp::create(
      b, loc, ListType::get(b.getContext(), b.getI64Type()), consts);
  return AtenOp::create(b, loc, TypeRange{type}, b.getStringAttr("permute"),
                        b.getStringAttr(""), nullptr,
                        b.getStringAttr("injective"), ValueRange{v, list})
      ->getResult(0);
}

std::vector<int64_t> inversePerm(ArrayRef<int64_t> perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    inverse[perm[d]] = d;
  return inverse;
}

/// In the variant, each such norm sees NCHW again: its input through
/// permute(inverse), its result NCHW-typed and permuted back for its users;
/// its per-channel operands keep their [C] types. The kernel's index math
/// goes through the two permutes, the reference runs the same ops.
void wrapChannelNorms(Block &cb, ArrayRef<int64_t> perm) {
  std::vector<int64_t> inverse = inversePerm(perm);
  SmallVector<AtenOp> norms;
  for (Operation &op : cb.without_terminator())
    if (indexesChannelDim(op))
      norms.push_back(cast<AtenOp>(op));
  for (AtenOp norm : norms) {
    Value input = norm.getArg("input");
    auto permuted = cast<RankedTensorType>(norm->getResult(0).getType());
    SmallVector<int64_t> nchw(permuted.getRank());
    for (size_t d = 0; d < perm.size(); ++d)
      nchw[perm[d]] = permuted.getShape()[d];
    auto nchwType = RankedTensorType::get(nchw, permuted.getElementType());
    OpBuilder b(norm);
    Value in = createPermute(b, norm.getLoc(), input, inverse, nchwType);
    norm->replaceUsesOfWith(input, in);
    norm->getResult(0).setType(nchwType);
    b.setInsertionPointAfter(norm);
    Value out =
        createPermute(b, norm.getLoc(), norm->getResult(0), perm, permuted);
    norm->getResult(0).replaceAllUsesExcept(out, out.getDefiningOp());
  }
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
  OpBuilder b = OpBuilder::atBlockBegin(&cb);
  Value view =
      createPermute(b, clone.getLoc(), in0, inversePerm(v.perm), first);
  in0.replaceAllUsesExcept(view, view.getDefiningOp());
  v.kernel = clone;
  return v;
}

} // namespace

// Over the permuted [N, H, W, C] types of a variant such a norm would take H
// for the channel, and so would the reference's ATen ops (agreeing with it
// where H == C).
bool indexesChannelDim(Operation &op) {
  auto aten = dyn_cast<AtenOp>(op);
  return aten && aten.getInfo() && aten.getInfo()->style == OpStyle::Norm;
}

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
  if (llvm::any_of(body.getArgumentTypes(), [](Type t) {
        auto rt = dyn_cast<RankedTensorType>(t);
        return rt && rt.getElementType().isInteger(1);
      }))
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
  // Inputs a channel norm indexes by channel keep their layout; one that
  // something else also broadcasts would need both.
  llvm::SmallDenseSet<unsigned> perChannel;
  for (BlockArgument a : body.getArguments()) {
    bool byNorm = false, other = false;
    for (OpOperand &use : a.getUses()) {
      Operation *user = use.getOwner();
      bool channelOperand =
          indexesChannelDim(*user) && cast<AtenOp>(user).getArg("input") != a;
      (channelOperand ? byNorm : other) = true;
    }
    if (byNorm && other)
      return std::nullopt;
    if (byNorm)
      perChannel.insert(a.getArgNumber());
  }

  ChannelsLastVariant v;
  v.perm = toLastPerm(first.getRank());
  KernelOp clone = cloneVariant(kernel, scratch);
  Block &cb = clone.getBody().front();
  for (BlockArgument a : cb.getArguments()) {
    auto shape = cast<RankedTensorType>(a.getType()).getShape();
    v.inputShapes.emplace_back(shape.begin(), shape.end());
    if (!perChannel.count(a.getArgNumber()))
      a.setType(permuteType(a.getType(), v.perm));
    auto p = cast<RankedTensorType>(a.getType()).getShape();
    v.permutedShapes.emplace_back(p.begin(), p.end());
  }
  for (Operation &op : cb.without_terminator())
    for (OpResult r : op.getResults())
      r.setType(permuteType(r.getType(), v.perm));
  wrapChannelNorms(cb, v.perm);
  v.kernel = clone;
  return v;
}

} // namespace kb
