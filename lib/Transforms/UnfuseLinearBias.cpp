//===- UnfuseLinearBias.cpp - --kb-unfuse-linear-bias ---------------------===//
//
// linear(x, W, b) whose only user is a fusable epilogue becomes
// add(linear(x, W, None), b): the bias add joins the epilogue's kernel (a
// broadcast read of N floats) and cuBLAS runs the bias-free GEMM. The same
// for addmm(b, x, W) with beta = alpha = 1 (HF GPT-2's Conv1D), through the
// view back to the activation's shape that usually follows it.
//
// Why: eager runs linear with a bias as one cuBLASLt call with the BIAS
// epilogue, and for GEMMs whose reduction dim K is at least their output
// width N, cuBLASLt's heuristics pick smaller tiles than cuBLAS picks for the
// same GEMM without the bias. Measured on the H200 (torch 2.11,
// bench/probes/linear_bias.py): ViT's MLP-out projections (6304 x 1536 ->
// 384, 6304 x 3072 -> 768) 1.16-1.26x faster bias-free, a 128 x 4096 ->
// 4096 GEMM 1.60x; with K < N the two forms were within 6% either way
// (0.95x at 32768 x 511 -> 1023), so those stay. torch.compile's inductor
// unfuses the same way (its bias add goes into the Triton epilogue).
//
// Not bit-exact: where the bias-free GEMM is faster it is a different kernel
// whose sums run in another order (where both pick the same kernel the
// results were identical). That is the reordering a fused reduction makes,
// so it takes the same numerics policy: with `before-steps=false` (rewrite's
// setting) a linear whose result reaches a step op, a singular op or a
// convolution keeps eager's GEMM.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace kb {
#define GEN_PASS_DEF_UNFUSELINEARBIAS
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

/// A linear op that the library-epilogue table maps as a whole (linear +
/// relu / gelu-tanh as one cuBLASLt call, chosen by timing at run time):
/// splitting its bias would take that choice away.
bool hasLibraryEpilogue(AtenOp linear, Operation *user) {
  auto aten = cast<AtenOp>(user);
  for (const LibEpilogueInfo &row : libraryEpilogues())
    if (row.anchor == linear.getName() && row.op == aten.getName())
      return true;
  return false;
}

bool isViewOp(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  return aten && !aten.getInplace() && aten.getInfo() &&
         aten.getInfo()->style == OpStyle::View &&
         (aten.getName() == "view" || aten.getName() == "reshape");
}

/// A GEMM with a bias that the pass splits: `linear(x, W, b)`, or
/// `addmm(b, x, W)` with beta = alpha = 1 (HF GPT-2's Conv1D), optionally
/// followed by the view back to the activation's shape that keeps the
/// last dim (the add then goes after the view).
struct BiasedGemm {
  AtenOp op;
  Value bias;
  AtenOp view; // null when the GEMM's user is the epilogue itself
};

std::optional<BiasedGemm> matchBiasedGemm(AtenOp op, bool beforeSteps) {
  bool linear = op.getName() == "linear", addmm = op.getName() == "addmm";
  if ((!linear && !addmm) || op.getInplace() || !op->hasOneUse() ||
      op->getNumResults() != 1 || hasMutatingUse(op->getResult(0)))
    return std::nullopt;
  Value bias = op.getArg(linear ? "bias" : "self");
  Value weight = op.getArg(linear ? "weight" : "mat2");
  if (!bias || !weight || isNone(bias))
    return std::nullopt;
  if (addmm && (getConstantNumber(op.getArg("beta")) != 1.0 ||
                getConstantNumber(op.getArg("alpha")) != 1.0))
    return std::nullopt;
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto w = dyn_cast<RankedTensorType>(weight.getType());
  auto b = dyn_cast<RankedTensorType>(bias.getType());
  if (!out || !w || !b || !out.hasStaticShape() || !w.hasStaticShape() ||
      !b.hasStaticShape() || !out.getElementType().isF32() ||
      b.getElementType() != out.getElementType() || w.getRank() != 2 ||
      b.getRank() != 1 || out.getRank() < 2 ||
      b.getDimSize(0) != out.getShape().back())
    return std::nullopt;
  // linear's W is [N, K], addmm's mat2 [K, N].
  int64_t k = w.getDimSize(linear ? 1 : 0), n = w.getDimSize(linear ? 0 : 1);
  if (k < n)
    return std::nullopt;
  BiasedGemm m{op, bias, nullptr};
  Operation *user = *op->getUsers().begin();
  if (isViewOp(user)) {
    auto view = cast<AtenOp>(user);
    auto vt = dyn_cast<RankedTensorType>(view->getResult(0).getType());
    if (!view->hasOneUse() || !vt || !vt.hasStaticShape() || vt.getRank() < 1 ||
        vt.getShape().back() != n || hasMutatingUse(view->getResult(0)))
      return std::nullopt;
    m.view = view;
    user = *view->getUsers().begin();
  }
  if (!isEpilogueOp(user) || (!m.view && hasLibraryEpilogue(op, user)))
    return std::nullopt;
  if (!beforeSteps &&
      (reachesStepOp(op) || reachesSingularOp(op) || reachesConvolution(op)))
    return std::nullopt;
  return m;
}

struct UnfuseLinearBiasPass
    : kb::impl::UnfuseLinearBiasBase<UnfuseLinearBiasPass> {
  using UnfuseLinearBiasBase::UnfuseLinearBiasBase;

  void runOnOperation() override {
    SmallVector<BiasedGemm> found;
    getOperation()->walk([&](AtenOp op) {
      if (auto m = matchBiasedGemm(op, beforeSteps))
        found.push_back(*m);
    });
    for (BiasedGemm &m : found)
      split(m);
  }

  void split(BiasedGemm m) {
    AtenOp op = m.op;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type out = op->getResult(0).getType();
    Operation *gemm;
    if (op.getName() == "linear") {
      unsigned idx = *op.getInfo()->argIndex("bias");
      SmallVector<Value> args(op.getArgs().begin(), op.getArgs().end());
      args[idx] = makeNone(b, loc);
      gemm =
          AtenOp::create(b, loc, TypeRange{out}, op.getNameAttr(),
                         op.getOverloadAttr(), nullptr, op.getKindAttr(), args);
    } else {
      gemm = AtenOp::create(b, loc, TypeRange{out}, b.getStringAttr("mm"),
                            b.getStringAttr(""), nullptr, op.getKindAttr(),
                            ValueRange{op.getArg("mat1"), op.getArg("mat2")});
    }
    // Reports list these GEMMs: their bits may differ from eager's.
    gemm->setAttr("kb.bias_unfused", b.getUnitAttr());
    Value result = gemm->getResult(0);
    Operation *last = op;
    if (m.view) {
      // view(gemm + b) == view(gemm) + b: the view keeps the last dim.
      b.setInsertionPoint(m.view);
      SmallVector<Value> args(m.view.getArgs().begin(), m.view.getArgs().end());
      args[0] = result;
      result = AtenOp::create(b, m.view.getLoc(), m.view->getResultTypes(),
                              m.view.getNameAttr(), m.view.getOverloadAttr(),
                              nullptr, m.view.getKindAttr(), args)
                   ->getResult(0);
      last = m.view;
    }
    // The bias broadcasts over the leading dims as ATen's add does.
    Value add =
        makeBroadcastAdd(b, loc, last->getResult(0).getType(), result, m.bias);
    last->getResult(0).replaceAllUsesWith(add);
    if (m.view)
      m.view->erase();
    op->erase();
  }
};

} // namespace
