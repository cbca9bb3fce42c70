//===- UnfuseLinearBias.cpp - --kb-unfuse-linear-bias ---------------------===//
//
// linear(x, W, b) whose only user is a fusable epilogue becomes
// add(linear(x, W, None), b): the bias add joins the epilogue's kernel (a
// broadcast read of N floats) and cuBLAS runs the bias-free GEMM.
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

bool isFusableUser(Operation *user) {
  if (!isa<AtenOp>(user))
    return false;
  OpKind kind = getKind(user);
  return kind == OpKind::Elementwise || kind == OpKind::Broadcast ||
         kind == OpKind::Reduction;
}

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

/// The bias of `op` when the split applies, else nullptr.
Value splittableBias(AtenOp op, bool beforeSteps) {
  if (op.getName() != "linear" || op.getInplace() || !op->hasOneUse() ||
      op->getNumResults() != 1)
    return nullptr;
  Value bias = op.getArg("bias");
  Value weight = op.getArg("weight");
  if (!bias || !weight || isNone(bias) || hasMutatingUse(op->getResult(0)))
    return nullptr;
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto w = dyn_cast<RankedTensorType>(weight.getType());
  auto b = dyn_cast<RankedTensorType>(bias.getType());
  if (!out || !w || !b || !out.hasStaticShape() || !w.hasStaticShape() ||
      !b.hasStaticShape() || !out.getElementType().isF32() ||
      b.getElementType() != out.getElementType() || w.getRank() != 2 ||
      b.getRank() != 1 || out.getRank() < 2 ||
      b.getDimSize(0) != out.getShape().back())
    return nullptr;
  // W is [N, K].
  if (w.getDimSize(1) < w.getDimSize(0))
    return nullptr;
  Operation *user = *op->getUsers().begin();
  if (!isFusableUser(user) || hasLibraryEpilogue(op, user))
    return nullptr;
  if (!beforeSteps && (reachesStepOp(op) || reachesSingularOp(op) ||
                       reachesConvolution(op)))
    return nullptr;
  return bias;
}

struct UnfuseLinearBiasPass
    : kb::impl::UnfuseLinearBiasBase<UnfuseLinearBiasPass> {
  using UnfuseLinearBiasBase::UnfuseLinearBiasBase;

  void runOnOperation() override {
    SmallVector<AtenOp> linears;
    getOperation()->walk([&](AtenOp op) {
      if (splittableBias(op, beforeSteps))
        linears.push_back(op);
    });
    for (AtenOp op : linears)
      split(op);
  }

  void split(AtenOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    const OpInfo *info = op.getInfo();
    unsigned idx = *info->argIndex("bias");
    Value bias = op.getArgs()[idx];
    SmallVector<Value> args(op.getArgs().begin(), op.getArgs().end());
    args[idx] = makeNone(b, loc);
    Type out = op->getResult(0).getType();
    auto gemm = AtenOp::create(b, loc, TypeRange{out}, op.getNameAttr(),
                               op.getOverloadAttr(), nullptr,
                               op.getKindAttr(), args);
    // The bias broadcasts over the leading dims as ATen's add does.
    Value one = makeI64(b, loc, 1);
    Value add = AtenOp::create(
                    b, loc, TypeRange{out}, b.getStringAttr("add"),
                    b.getStringAttr("Tensor"), nullptr,
                    b.getStringAttr(kindName(OpKind::Broadcast)),
                    ValueRange{gemm->getResult(0), bias, one})
                    ->getResult(0);
    op->getResult(0).replaceAllUsesWith(add);
    op->erase();
  }
};

} // namespace
