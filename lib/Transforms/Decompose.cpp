//===- Decompose.cpp - --kb-decompose: composites into table ops ----------===//
//
// Losses and distances (the Composite rows of OpSemantics.def) are single
// ops in a trace, but ATen computes each as several kernels: a triplet
// margin loss is two subtractions, two additions and two norms, then a
// clamp and a mean, each a pass over memory. Written out as the table ops
// ATen itself runs, the existing passes fuse them: the elementwise part and
// its reduction become one kernel. (cosine_similarity is a reduction row
// of its own, the "cosine" recipe: its norms and its sum of products are
// three reductions of the same rows, which one kernel computes in one
// pass.)
//
// Attention where ATen runs SDPA's math path (a strided last dim refuses
// every fused kernel) is written out as that path's ops too: its mask's
// add and softmax then fuse into one kernel between the two matmuls.
//
// Each expansion follows ATen's definition op for op (the ATen column of the
// row; aten/src/ATen/native/Loss.cpp and Distance.cpp). Where ATen computes
// the elementwise part of a loss inside one kernel (mse, smooth L1, Huber,
// BCE with logits), the expansion is taken only when the loss is reduced:
// the summation order then already decides the last bits, whereas an
// unreduced result would be compared bit for bit downstream. An op is left
// as it is (ATen runs it) when an operand is not a static float32 tensor,
// the two inputs differ in shape (ATen would broadcast), or it takes weights.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kb {
#define GEN_PASS_DEF_DECOMPOSE
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

/// ATen's at::Reduction.
enum class LossReduction { None = 0, Mean = 1, Sum = 2 };

std::optional<LossReduction> lossReduction(AtenOp op) {
  auto r = getConstantNumber(op.getArg("reduction"));
  if (!r || (*r != 0 && *r != 1 && *r != 2))
    return std::nullopt;
  return static_cast<LossReduction>(static_cast<int>(*r));
}

RankedTensorType staticF32(Value v) {
  auto t = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  if (!t || !t.hasStaticShape() || !t.getElementType().isF32())
    return nullptr;
  return t;
}

/// Builds table ops before `at`, with the result types ATen gives them.
class Expander {
public:
  Expander(PatternRewriter &rewriter, Location loc) : rw(rewriter), loc(loc) {}

  Value number(double v) { return makeF64(rw, loc, v); }
  Value integer(int64_t v) { return makeI64(rw, loc, v); }
  Value boolean(bool v) { return makeBool(rw, loc, v); }
  Value none() { return makeNone(rw, loc); }
  Value dims(ArrayRef<int64_t> ds) { return makeI64List(rw, loc, ds); }

  Value op(StringRef name, StringRef overload, Type result, ValueRange args) {
    return AtenOp::create(rw, loc, TypeRange{result}, rw.getStringAttr(name),
                          rw.getStringAttr(overload), nullptr, nullptr, args)
        ->getResult(0);
  }

  // Shape-preserving pointwise ops take the type of their first operand.
  Value unary(StringRef name, Value x) {
    return op(name, "", x.getType(), {x});
  }
  Value binary(StringRef name, StringRef overload, Value a, Value b) {
    return op(name, overload, a.getType(), {a, b});
  }
  Value sub(Value a, Value b) {
    return op("sub", "Tensor", a.getType(), {a, b, integer(1)});
  }
  Value addScalar(Value a, double s) {
    return op("add", "Scalar", a.getType(), {a, number(s), integer(1)});
  }
  Value subScalar(Value a, double s) {
    return op("sub", "Scalar", a.getType(), {a, number(s), integer(1)});
  }
  Value mulScalar(Value a, double s) {
    return op("mul", "Scalar", a.getType(), {a, number(s)});
  }
  Value where(Value cond, Value a, Value b) {
    return op("where", "self", a.getType(), {cond, a, b});
  }
  Value ltScalar(Value a, double s) {
    auto t = cast<RankedTensorType>(a.getType());
    return op("lt", "Scalar",
              RankedTensorType::get(t.getShape(), rw.getI1Type()),
              {a, number(s)});
  }

  /// linalg_vector_norm(x, ord, [dim], keepdim, None).
  Value norm(Value x, double ord, int64_t dim, bool keepdim) {
    return op("linalg_vector_norm", "", reducedType(x, dim, keepdim),
              {x, number(ord), dims({dim}), boolean(keepdim), none()});
  }
  /// ATen's apply_loss_reduction: mean() or sum() of every element.
  Value reduce(Value x, LossReduction r) {
    if (r == LossReduction::None)
      return x;
    auto t = cast<RankedTensorType>(x.getType());
    Type scalar = RankedTensorType::get({}, t.getElementType());
    return op(r == LossReduction::Mean ? "mean" : "sum", "", scalar,
              {x, none()});
  }

  /// logsumexp(x, 1) - x[t] where t != ignore_index, else 0 (ATen's nll
  /// loss of an ignored target); mean divides the sum by the kept targets'
  /// count (0 / 0 = NaN when none is, as in ATen).
  Value crossEntropy(Value x, Value target, int64_t classes, int64_t ignore,
                     LossReduction r) {
    auto tt = cast<RankedTensorType>(target.getType());
    auto rowsF32 = RankedTensorType::get(tt.getShape(), rw.getF32Type());
    auto rowsI1 = RankedTensorType::get(tt.getShape(), rw.getI1Type());
    SmallVector<int64_t> one(tt.getShape());
    one.insert(one.begin() + 1, 1);
    // Ignored targets (-100 by default) index class 0 instead: gathered,
    // then masked out.
    Value idx = op("clamp", "", tt, {target, integer(0), integer(classes - 1)});
    Value idx1 =
        op("unsqueeze", "", RankedTensorType::get(one, tt.getElementType()),
           {idx, integer(1)});
    Value picked = op("gather", "", RankedTensorType::get(one, rw.getF32Type()),
                      {x, integer(1), idx1, boolean(false)});
    Value xt = op("squeeze", "dim", rowsF32, {picked, integer(1)});
    Value kept = op("ne", "Scalar", rowsI1, {target, integer(ignore)});
    Value keptF = op("to", "dtype", rowsF32,
                     {kept, integer(kFloat32ScalarType), boolean(false),
                      boolean(false), none()});
    Value lse = op("logsumexp", "", rowsF32, {x, dims({1}), boolean(false)});
    Value nll = sub(lse, xt);
    // masked_fill reads nll first, so it joins logsumexp's region (and the
    // comparison, a pointwise op of a value in memory, sinks into it).
    Value ignored = op("eq", "Scalar", rowsI1, {keptF, number(0)});
    Value loss =
        op("masked_fill", "Scalar", rowsF32, {nll, ignored, number(0)});
    if (r != LossReduction::Mean)
      return reduce(loss, r);
    Value total = reduce(loss, LossReduction::Sum);
    return op("div", "Tensor", total.getType(),
              {total, reduce(keptF, LossReduction::Sum)});
  }

  /// at::pairwise_distance: norm(x1 - x2 + eps, p, last dim, keepdim).
  Value pairwiseDistance(Value x1, Value x2, double p, double eps,
                         bool keepdim) {
    int64_t last = cast<RankedTensorType>(x1.getType()).getRank() - 1;
    return norm(addScalar(sub(x1, x2), eps), p, last, keepdim);
  }

private:
  RankedTensorType reducedType(Value x, int64_t dim, bool keepdim) {
    auto t = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape;
    for (auto [i, s] : llvm::enumerate(t.getShape()))
      if ((int64_t)i != dim)
        shape.push_back(s);
      else if (keepdim)
        shape.push_back(1);
    return RankedTensorType::get(shape, t.getElementType());
  }

  PatternRewriter &rw;
  Location loc;
};

/// The composite's tensor operands named `names`, when all are static
/// float32 tensors of one shape; empty otherwise.
SmallVector<Value> sameShapeOperands(AtenOp op, ArrayRef<StringRef> names) {
  SmallVector<Value> out;
  RankedTensorType first;
  for (StringRef n : names) {
    Value v = op.getArg(n);
    RankedTensorType t = staticF32(v);
    if (!t || (first && t.getShape() != first.getShape()))
      return {};
    first = first ? first : t;
    out.push_back(v);
  }
  return out;
}

struct ExpandComposite : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    const OpInfo *info = op.getInfo();
    if (!info || info->style != OpStyle::Composite || op.getInplace() ||
        op->getNumResults() != 1 || !staticF32(op->getResult(0)))
      return failure();
    rewriter.setInsertionPoint(op);
    Operation *before = op->getPrevNode();
    Expander e(rewriter, op.getLoc());
    Value result = expand(op, info->name, e);
    if (result && result.getType() == op->getResult(0).getType()) {
      rewriter.replaceOp(op, result);
      return success();
    }
    // A pattern that fails must leave the IR as it found it: the ops built
    // before the expansion gave up go again, last first.
    while (op->getPrevNode() != before)
      rewriter.eraseOp(op->getPrevNode());
    return failure();
  }

private:
  static Value expand(AtenOp op, StringRef name, Expander &e) {
    if (name == "pairwise_distance")
      return pairwiseDistance(op, e);
    if (name == "cross_entropy_loss")
      return crossEntropy(op, e);
    if (name == "triplet_margin_loss")
      return tripletMarginLoss(op, e);
    return pointwiseLoss(op, name, e);
  }

  static Value pairwiseDistance(AtenOp op, Expander &e) {
    auto xs = sameShapeOperands(op, {"x1", "x2"});
    auto p = getConstantNumber(op.getArg("p"));
    auto eps = getConstantNumber(op.getArg("eps"));
    auto keepdim = getConstantBool(op.getArg("keepdim"));
    if (xs.empty() || !p || !eps || !keepdim ||
        cast<RankedTensorType>(xs[0].getType()).getRank() == 0)
      return {};
    return e.pairwiseDistance(xs[0], xs[1], *p, *eps, *keepdim);
  }

  static Value tripletMarginLoss(AtenOp op, Expander &e) {
    auto xs = sameShapeOperands(op, {"anchor", "positive", "negative"});
    auto margin = getConstantNumber(op.getArg("margin"));
    auto p = getConstantNumber(op.getArg("p"));
    auto eps = getConstantNumber(op.getArg("eps"));
    auto swap = getConstantBool(op.getArg("swap"));
    auto r = lossReduction(op);
    if (xs.empty() || !margin || !p || !eps || !swap || !r ||
        cast<RankedTensorType>(xs[0].getType()).getRank() == 0)
      return {};
    Value pos = e.pairwiseDistance(xs[0], xs[1], *p, *eps, false);
    Value neg = e.pairwiseDistance(xs[0], xs[2], *p, *eps, false);
    if (*swap)
      neg = e.binary("min", "other", neg,
                     e.pairwiseDistance(xs[1], xs[2], *p, *eps, false));
    // `margin + dist_pos - dist_neg` in C++: add(dist_pos, margin), then sub.
    Value gap = e.sub(e.addScalar(pos, *margin), neg);
    return e.reduce(e.binary("clamp_min", "", gap, e.number(0)), *r);
  }

  /// at::cross_entropy_loss with class indices: nll_loss(log_softmax(self,
  /// 1), target), whose value at a kept target t is logsumexp(self, 1) -
  /// self[t] (ATen writes the whole log_softmax, then reads one element a
  /// row of it). logsumexp is a row reduction the code generator fuses with
  /// the difference and the masking of ignored targets; the gather of one
  /// element a row and the integer ops on the targets stay in ATen. Taken
  /// without class weights or label smoothing (ATen's other formulas).
  static Value crossEntropy(AtenOp op, Expander &e) {
    Value x = op.getArg("self"), target = op.getArg("target");
    auto xt = staticF32(x);
    auto tt = target ? dyn_cast<RankedTensorType>(target.getType()) : nullptr;
    auto r = lossReduction(op);
    auto ignore = getConstantNumber(op.getArg("ignore_index"));
    auto smoothing = getConstantNumber(op.getArg("label_smoothing"));
    if (!xt || xt.getRank() < 2 || !tt || !tt.hasStaticShape() ||
        !tt.getElementType().isInteger(64) || !r || !ignore || !smoothing ||
        *smoothing != 0 || !isNone(op.getArg("weight")))
      return {};
    SmallVector<int64_t> rows(xt.getShape());
    int64_t classes = rows[1];
    rows.erase(rows.begin() + 1);
    if (tt.getShape() != ArrayRef<int64_t>(rows) || classes < 1)
      return {};
    return e.crossEntropy(x, target, classes, (int64_t)*ignore, *r);
  }

  /// The losses over (self, target) whose unreduced value is elementwise.
  static Value pointwiseLoss(AtenOp op, StringRef name, Expander &e) {
    auto xs = sameShapeOperands(op, {"self", "target"});
    auto r = lossReduction(op);
    if (xs.empty() || !r)
      return {};
    Value x = xs[0], t = xs[1];
    bool reduced = *r != LossReduction::None;
    if (name == "l1_loss")
      return e.reduce(e.unary("abs", e.sub(x, t)), *r);
    if (name == "kl_div") {
      auto logTarget = getConstantBool(op.getArg("log_target"));
      if (!logTarget)
        return {};
      // One op per statement: argument evaluation order would otherwise
      // decide the order of the ops in the output.
      Value v;
      if (*logTarget) {
        Value et = e.unary("exp", t);
        v = e.binary("mul", "Tensor", et, e.sub(t, x));
      } else {
        Value xl = e.binary("xlogy", "Tensor", t, t);
        v = e.sub(xl, e.binary("mul", "Tensor", t, x));
      }
      return e.reduce(v, *r);
    }
    if (!reduced)
      return {};
    if (name == "mse_loss") {
      Value d = e.sub(x, t);
      return e.reduce(e.binary("mul", "Tensor", d, d), *r);
    }
    if (name == "smooth_l1_loss" || name == "huber_loss") {
      bool huber = name == "huber_loss";
      auto k = getConstantNumber(op.getArg(huber ? "delta" : "beta"));
      // ATen rejects a negative beta and a delta <= 0.
      if (!k || *k < 0 || (huber && *k == 0))
        return {};
      Value z = e.unary("abs", e.sub(x, t));
      if (*k == 0) // ATen: smooth L1 with beta 0 is the L1 loss
        return e.reduce(z, *r);
      Value half = e.binary("mul", "Tensor", e.mulScalar(z, 0.5), z);
      Value quad =
          huber ? half
                : e.op("div", "Scalar", half.getType(), {half, e.number(*k)});
      Value lin = e.subScalar(z, 0.5 * *k);
      if (huber)
        lin = e.mulScalar(lin, *k);
      return e.reduce(e.where(e.ltScalar(z, *k), quad, lin), *r);
    }
    if (name == "binary_cross_entropy_with_logits") {
      if (!isNone(op.getArg("weight")) || !isNone(op.getArg("pos_weight")))
        return {};
      Value oneMinus =
          e.op("rsub", "Scalar", t.getType(), {t, e.number(1), e.integer(1)});
      Value m = e.binary("mul", "Tensor", oneMinus, x);
      return e.reduce(e.sub(m, e.unary("log_sigmoid", x)), *r);
    }
    return {};
  }
};

/// The strides of a tensor type: the importer's encoding (a traced
/// non-contiguous layout), else row-major.
SmallVector<int64_t> stridesOf(RankedTensorType t) {
  if (auto traced = encodedStrides(t))
    return *traced;
  SmallVector<int64_t> strides(t.getRank(), 1);
  for (int64_t d = t.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * t.getDimSize(d + 1);
  return strides;
}

/// ATen's fused attention kernels (flash, memory-efficient, cuDNN) all
/// refuse an input or mask whose last dim is strided
/// (check_last_dim_stride_equals_1_dense in sdp_utils: "All fused kernels
/// require the last dimension of the input to have stride 1"); SDPA then
/// runs its math path.
bool stridedLastDim(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0 || t.getShape().back() == 1)
    return false;
  return stridesOf(t).back() != 1;
}

/// scaled_dot_product_attention where ATen computes it with its math path
/// (at::_scaled_dot_product_attention_math in
/// aten/src/ATen/native/transformers/attention.cpp), written out as that
/// path's own ops: q and k^T each times sqrt(scale), matmul, the mask added
/// in place, _safe_softmax (torch >= 2.5, whose SDPA has enable_gqa;
/// softmax before), matmul. The matmuls stay cuBLAS's; the mask's add and
/// the softmax become one kernel instead of ATen's five (t5_encoder's
/// position bias is a permuted view: ~0.12 ms a layer in ATen). Taken only
/// where the fused kernels are certain to refuse (a strided last dim), for
/// static float32 4-d operands without dropout, causal masking or grouped
/// heads, with a float mask that is not a guarded constant (those the
/// runtime trades for is_causal or drops, so SDPA runs fused).
struct ExpandMathAttention : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    const OpInfo *info = op.getInfo();
    if (!info || info->style != OpStyle::Attention || op.getInplace() ||
        info->name != "scaled_dot_product_attention" ||
        op->getNumResults() != 1)
      return failure();
    Value q = op.getArg("query"), k = op.getArg("key"), v = op.getArg("value");
    Value mask = op.getArg("attn_mask");
    auto qt = staticF32(q), kt = staticF32(k), vt = staticF32(v);
    // The math path's result is its matmul's, row-major: a traced result
    // with other strides came from a fused kernel, and its readers expect
    // that layout.
    auto out = staticF32(op->getResult(0));
    if (!qt || !kt || !vt || !out || out.getEncoding() || qt.getRank() != 4 ||
        kt.getRank() != 4 || vt.getRank() != 4 ||
        qt.getShape().take_front(2) != kt.getShape().take_front(2) ||
        kt.getShape().take_front(3) != vt.getShape().take_front(3) ||
        qt.getShape().back() != kt.getShape().back())
      return failure();
    bool masked = mask && !isNone(mask);
    SmallVector<int64_t> scoreShape(qt.getShape());
    scoreShape.back() = kt.getShape()[2];
    if (masked) {
      // A float mask that broadcasts to the scores without growing them.
      auto mt = staticF32(mask);
      if (!mt || mt.getRank() > 4 || isGuardedConstant(mask))
        return failure();
      for (auto [i, d] : llvm::enumerate(llvm::reverse(mt.getShape())))
        if (d != 1 && d != scoreShape[3 - i])
          return failure();
    }
    auto dropout = getConstantNumber(op.getArg("dropout_p"));
    auto causal = getConstantBool(op.getArg("is_causal"));
    Value scaleArg = op.getArg("scale"), gqaArg = op.getArg("enable_gqa");
    std::optional<double> scale;
    if (scaleArg && !isNone(scaleArg) && !(scale = getConstantNumber(scaleArg)))
      return failure();
    auto gqa = gqaArg ? getConstantBool(gqaArg) : std::optional<bool>(false);
    if (!dropout || *dropout != 0 || !causal || *causal || !gqa || *gqa)
      return failure();
    if (!stridedLastDim(q) && !stridedLastDim(k) && !stridedLastDim(v) &&
        !(masked && stridedLastDim(mask)))
      return failure();

    // sdp::calculate_scale, then its square root, in double as SymFloat.
    double s = scale ? *scale : 1.0 / std::sqrt((double)qt.getShape().back());
    double root = std::sqrt(std::abs(s));
    double qFactor = s < 0 ? 0.0 - root : root;
    rewriter.setInsertionPoint(op);
    Expander e(rewriter, op.getLoc());
    // Multiplying by 1 changes no bit (NaN stays NaN): those are skipped.
    Value qs = qFactor == 1.0 ? q : e.mulScalar(q, qFactor);
    SmallVector<int64_t> kShape(kt.getShape()), kStrides = stridesOf(kt);
    std::swap(kShape[2], kShape[3]);
    std::swap(kStrides[2], kStrides[3]);
    auto ktType = RankedTensorType::get(kShape, kt.getElementType(),
                                        rewriter.getI64ArrayAttr(kStrides));
    Value kT =
        e.op("transpose", "int", ktType, {k, e.integer(-2), e.integer(-1)});
    Value ks = root == 1.0 ? kT : e.mulScalar(kT, root);
    auto scoreType = RankedTensorType::get(scoreShape, qt.getElementType());
    Value scores = e.op("matmul", "", scoreType, {qs, ks});
    if (masked)
      scores = e.op("add", "Tensor", scoreType, {scores, mask, e.integer(1)});
    StringRef softmax = gqaArg ? "_safe_softmax" : "softmax";
    Value probs = e.op(softmax, softmax == "softmax" ? "int" : "", scoreType,
                       {scores, e.integer(-1), e.none()});
    Value result = e.op("matmul", "", out, {probs, v});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DecomposePass : kb::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandComposite, ExpandMathAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
