//===- Simplify.cpp - --kb-simplify: bit-exact algebra --------------------===//
//
// Every rewrite here must leave every result bit unchanged for every input,
// NaN, infinities and signed zeros included, under ATen's definitions. Each
// pattern states its proof. Rewrites are skipped when a value involved is
// mutated in place, because replacing a fresh tensor by an existing one would
// then alias the two.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace kb {
#define GEN_PASS_DEF_SIMPLIFY
#include "kb/Transforms/Passes.h.inc"
} // namespace kb

using namespace mlir;
using namespace kb;

namespace {

bool isFloatTensor(Type t) {
  auto tt = dyn_cast<TensorType>(t);
  return tt && (tt.getElementType().isF32() || tt.getElementType().isF64());
}

/// Plain (non-inplace) aten op `name` with one result, no in-place users.
AtenOp matchPure(Value v, llvm::StringRef name) {
  auto op = v ? v.getDefiningOp<AtenOp>() : nullptr;
  if (!op || op.getName() != name || op.getInplace() ||
      op->getNumResults() != 1 || hasMutatingUse(op->getResult(0)))
    return nullptr;
  return op;
}

bool safeToForward(AtenOp op, Value replacement) {
  return !op.getInplace() && op->getNumResults() == 1 &&
         op->getResult(0).getType() == replacement.getType() &&
         !hasMutatingUse(op->getResult(0)) && !hasMutatingUse(replacement);
}

/// The constant scalar operand of a binary op: a Scalar or a 0-d tensor
/// literal such as `{2}` (the tracer wraps Python numbers that way).
std::optional<double> scalarOperand(AtenOp op, llvm::StringRef arg) {
  return getConstantNumber(op.getArg(arg));
}

void eraseIfDead(PatternRewriter &rewriter, Operation *op) {
  if (op && op->use_empty())
    rewriter.eraseOp(op);
}

/// Identities. Proofs:
///  - dropout(x, p=0 or train=False) is x: ATen returns the input unchanged
///    when nothing is dropped (scale 1/(1-0) = 1, mask all ones).
///  - detach(x) has x's values.
///  - x * 1 and x / 1 are x for every IEEE value (NaN, +-0, +-inf included).
///  - x - alpha*c with alpha*c == +0 is x: x - (+0) == x for every x,
///    including -0 (-0 - +0 = -0). x + alpha*c with alpha*c == -0 likewise.
///    x + (+0) is NOT x: -0 + +0 = +0, so it is left alone.
///  - JIT autocast's casts (_autocast_to_full_precision,
///    _autocast_to_reduced_precision) return `self` itself when they do not
///    cast, which is when their result's type is the operand's (a weight
///    already cast to bfloat16 by the aten::to before it).
struct FoldIdentity : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getArgs().empty())
      return failure();
    Value x = op.getArgs()[0];
    if (!safeToForward(op, x))
      return failure();
    llvm::StringRef name = op.getName();
    bool identity = false;
    if (op.getInfo()->style == OpStyle::Dropout)
      identity = computeKind(op) == OpKind::Injective;
    else if (name == "detach")
      identity = true;
    else if (name == "_autocast_to_full_precision" ||
             name == "_autocast_to_reduced_precision")
      identity = op->getResult(0).getType() == x.getType();
    else if ((name == "mul" || name == "div") && isFloatTensor(x.getType()))
      identity = scalarOperand(op, "other") == 1.0;
    else if ((name == "sub" || name == "add") && isFloatTensor(x.getType())) {
      auto other = scalarOperand(op, "other");
      auto alpha = getConstantNumber(op.getArg("alpha"));
      if (other && alpha && std::isfinite(*alpha)) {
        double product = *alpha * *other;
        bool negZero = std::signbit(product);
        identity = product == 0.0 && (name == "sub" ? !negZero : negZero);
      }
    }
    if (!identity)
      return failure();
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// A reduction over dims of size 1 whose result keeps them (the mean over
/// [2, 3] of an adaptive pool's [N, C, 1, 1] output; seed 20261238 task 4
/// kept a block per output of a mean of one element, 0.70x torch.compile).
/// Proofs: amax and amin of one element x start from -inf / +inf and return
/// x for every IEEE value (NaN propagates, -0 stays -0). sum and mean start
/// from +0 (ATen's reduce identity) and add x, then mean scales by 1/1:
/// the result is +0 + x, which is x except that -0 becomes +0, so they
/// become add(x, +0.0), the same bits.
struct FoldUnitReduction : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    llvm::StringRef name = op.getName();
    bool extremum = name == "amax" || name == "amin";
    if (!extremum && name != "sum" && name != "mean")
      return failure();
    if (op.getArgs().empty() || getKind(op) != OpKind::Reduction)
      return failure();
    Value x = op.getArgs()[0];
    auto type = dyn_cast<RankedTensorType>(x.getType());
    if (!type || !type.hasStaticShape() || !isFloatTensor(type) ||
        !safeToForward(op, x))
      return failure();
    if (Value dtype = op.getArg("dtype"); dtype && !isNone(dtype))
      return failure();
    // The same type keeps the rank: every reduced dim is one of size 1.
    if (extremum) {
      rewriter.replaceOp(op, x);
      return success();
    }
    Location loc = op.getLoc();
    Value zero = makeF64(rewriter, loc, 0.0);
    Value one = makeI64(rewriter, loc, 1);
    Value add =
        AtenOp::create(rewriter, loc, TypeRange{type},
                       rewriter.getStringAttr("add"),
                       rewriter.getStringAttr("Scalar"), nullptr,
                       rewriter.getStringAttr(kindName(OpKind::Elementwise)),
                       ValueRange{x, zero, one})
            ->getResult(0);
    rewriter.replaceOp(op, add);
    return success();
  }
};

/// relu(relu(x)) = relu(x): relu is idempotent (its output is >= 0, +0 or
/// NaN, all fixed points). leaky_relu(relu(x), s) = relu(x) for 0 <= s < inf:
/// y = relu(x) is NaN, +0 or positive; y > 0 returns y; +0 * s = +0 for
/// finite s >= 0 (a negative s would give -0); NaN * s = NaN.
struct FoldAfterRelu : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getArgs().empty())
      return failure();
    AtenOp inner = matchPure(op.getArgs()[0], "relu");
    if (!inner || !safeToForward(op, inner->getResult(0)))
      return failure();
    if (op.getName() == "relu") {
      rewriter.replaceOp(op, inner->getResult(0));
      return success();
    }
    if (op.getName() == "leaky_relu") {
      auto s = getConstantNumber(op.getArg("negative_slope"));
      if (s && *s >= 0.0 && std::isfinite(*s)) {
        rewriter.replaceOp(op, inner->getResult(0));
        return success();
      }
    }
    return failure();
  }
};

/// Bounds of a clamp-family op; nullopt members mean "absent".
struct Bounds {
  std::optional<double> lo, hi;
};

std::optional<Bounds> clampBounds(AtenOp op) {
  auto bound = [&](llvm::StringRef arg, std::optional<double> &out) {
    Value v = op.getArg(arg);
    if (!v || isNone(v))
      return true;
    out = getConstantNumber(v);
    return out.has_value() && !std::isnan(*out);
  };
  Bounds b;
  llvm::StringRef n = op.getName();
  bool ok = false;
  if (n == "clamp" && op.getOverload().empty())
    ok = bound("min", b.lo) && bound("max", b.hi);
  else if (n == "hardtanh")
    ok = bound("min_val", b.lo) && bound("max_val", b.hi);
  else if (n == "clamp_min")
    ok = bound("min", b.lo);
  else if (n == "clamp_max")
    ok = bound("max", b.hi);
  // ATen clamps to max when min > max; only well-formed intervals compose.
  if (!ok || (b.lo && b.hi && *b.lo > *b.hi))
    return std::nullopt;
  return b;
}

Value makeNumber(PatternRewriter &rewriter, Location loc,
                 std::optional<double> v) {
  return v ? makeF64(rewriter, loc, *v) : makeNone(rewriter, loc);
}

Value makeClamp(PatternRewriter &rewriter, Location loc, Value x, Bounds b,
                Type resultType) {
  Value lo = makeNumber(rewriter, loc, b.lo);
  Value hi = makeNumber(rewriter, loc, b.hi);
  return AtenOp::create(rewriter, loc, TypeRange{resultType},
                        rewriter.getStringAttr("clamp"),
                        rewriter.getStringAttr(""), nullptr,
                        rewriter.getStringAttr(kindName(OpKind::Elementwise)),
                        ValueRange{x, lo, hi})
      ->getResult(0);
}

/// max and min in which -0 < +0, as fmax/fmin order zeros.
double orderedMax(double a, double b) {
  return a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
}
double orderedMin(double a, double b) {
  return a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
}

/// clamp(clamp(x, a, b), c, d) = clamp(x, max(a, c), min(b, d)) when both
/// intervals are well formed and overlap. ATen's clamp is
/// isnan(v) ? v : fmin(fmax(v, lo), hi), which orders -0 below +0 (measured
/// on the H200: relu6(-0) = +0), so for ordered x both sides are the
/// projection onto the intersection in that total order, and the merged
/// bounds are taken in it too (orderedMax/orderedMin). Bounds are rounded to
/// the tensor dtype by ATen in both forms, and rounding is monotone, so
/// max/min commute with it.
struct MergeClamps : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    auto outer = clampBounds(op);
    if (!outer || op.getInplace() || op.getArgs().empty())
      return failure();
    auto inner = op.getArgs()[0].getDefiningOp<AtenOp>();
    if (!inner || inner.getInplace() || !inner->hasOneUse() ||
        !isFloatTensor(inner->getResult(0).getType()))
      return failure();
    auto in = clampBounds(inner);
    if (!in || hasMutatingUse(op->getResult(0)))
      return failure();
    Bounds merged;
    merged.lo = !in->lo ? outer->lo
                : !outer->lo
                    ? in->lo
                    : std::optional<double>(orderedMax(*in->lo, *outer->lo));
    merged.hi = !in->hi ? outer->hi
                : !outer->hi
                    ? in->hi
                    : std::optional<double>(orderedMin(*in->hi, *outer->hi));
    if (merged.lo && merged.hi && *merged.lo > *merged.hi)
      return failure(); // disjoint: the result is a constant, leave it
    Value x = inner.getArgs()[0];
    Value merged_ =
        makeClamp(rewriter, op.getLoc(), x, merged, op->getResult(0).getType());
    rewriter.replaceOp(op, merged_);
    eraseIfDead(rewriter, inner);
    return success();
  }
};

/// x / 2 or x * 0.5: both are the correctly rounded x/2 (0.5 is a power of
/// two), so the two spellings are the same function.
bool isHalving(AtenOp op) {
  if (op.getInplace())
    return false;
  if (op.getName() == "div" && op.getOverload() != "Tensor_mode")
    return scalarOperand(op, "other") == 2.0;
  if (op.getName() == "mul")
    return scalarOperand(op, "other") == 0.5;
  return false;
}

/// Bound b halved exactly in the tensor's float type, or nullopt.
std::optional<double> halveExactly(double b, Type elem) {
  if (!std::isfinite(b))
    return std::nullopt;
  if (elem.isF32()) {
    float f = static_cast<float>(b), h = f / 2.0f;
    if (h * 2.0f != f)
      return std::nullopt;
    return static_cast<double>(h);
  }
  double h = b / 2.0;
  if (h * 2.0 != b)
    return std::nullopt;
  return h;
}

/// clamp(y * 2, lo, hi) / 2 = clamp(y, lo/2, hi/2) for finite lo <= hi whose
/// halves are exact. Proof: when 2y does not overflow it is exact (doubling
/// only changes the exponent, subnormals included) and scaling by 2 is
/// monotone, so clamp(2y, lo, hi) = 2 * clamp(y, lo/2, hi/2) and the final
/// halving of a doubled value is exact. When 2y overflows to +-inf, |y| >
/// FLT_MAX/2 >= |hi/2|, |lo/2|, so both sides give the same bound. NaN
/// propagates through every step. Signed zero: 2*(-0) = -0 and the clamp
/// keeps it on ties as above.
struct CancelScaleAroundClamp : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    if (!isHalving(op) || !isFloatTensor(op->getResult(0).getType()) ||
        hasMutatingUse(op->getResult(0)))
      return failure();
    auto clamp = op.getArgs()[0].getDefiningOp<AtenOp>();
    if (!clamp || clamp.getInplace() || !clamp->hasOneUse())
      return failure();
    auto b = clampBounds(clamp);
    if (!b || !b->lo || !b->hi)
      return failure();
    auto mul = clamp.getArgs()[0].getDefiningOp<AtenOp>();
    if (!mul || mul.getName() != "mul" || mul.getInplace() ||
        !mul->hasOneUse() || scalarOperand(mul, "other") != 2.0)
      return failure();
    Value y = mul.getArgs()[0];
    Type elem = cast<TensorType>(y.getType()).getElementType();
    if (y.getType() != op->getResult(0).getType())
      return failure();
    auto lo = halveExactly(*b->lo, elem), hi = halveExactly(*b->hi, elem);
    if (!lo || !hi)
      return failure();
    Value result = makeClamp(rewriter, op.getLoc(), y, Bounds{lo, hi},
                             op->getResult(0).getType());
    rewriter.replaceOp(op, result);
    eraseIfDead(rewriter, clamp);
    eraseIfDead(rewriter, mul);
    return success();
  }
};

/// conv(x, w, b) followed by an elementwise op, a pooling or a reduction =
/// add(conv(x, w, None), b viewed as [C, 1, ...]): the bias add moves into
/// the epilogue, which then reads the convolution's output once instead of
/// twice (ATen's cuDNN path adds the bias in a separate in-place pass over
/// the whole output; a pooling's window reads evaluate the add per tap).
/// Exact: ATen's cuDNN convolutions compute the bias-free result and then
/// `output.add_(bias.reshape(...))`, the same single fp32 addition; grouped
/// convolutions too (cuDNN's, the bias added alike: seed 20261221 task 5
/// spent 0.12 ms of 0.58 on that pass), but not depthwise ones, which ATen
/// runs in its own kernels (conv_depthwise2d/3d), their sums starting from
/// the bias, which rounds differently. Transposed convolutions add theirs
/// alike (cuDNN's dgrad, then ATen's add_).
struct SplitConvBias : OpRewritePattern<AtenOp> {
  /// ATen's is_depthwise (ConvUtils.h): not transposed, 3- to 5-d input
  /// (1-d is viewed as 2-d first), groups == input channels > 1, output
  /// channels a multiple of them.
  static bool atenDepthwise(AtenOp op, double groups) {
    auto in = dyn_cast<RankedTensorType>(op.getArgs()[0].getType());
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    Value t = op.getArg("transposed");
    bool transposed = op.getName().contains("transpose") ||
                      (t && getConstantBool(t).value_or(true));
    if (transposed)
      return false;
    if (!in || !out || !in.hasStaticShape() || in.getRank() < 3 ||
        in.getRank() > 5)
      return true; // unknown: as if depthwise
    int64_t c = in.getDimSize(1);
    return groups == (double)c && out.getDimSize(1) % c == 0;
  }

  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    const OpInfo *info = op.getInfo();
    if (!info || info->style != OpStyle::Conv || op.getInplace() ||
        op->use_empty() || op->getNumResults() != 1)
      return failure();
    Value bias = op.getArg("bias");
    auto idx = info->argIndex("bias");
    std::optional<double> groups = getConstantNumber(op.getArg("groups"));
    if (!bias || !idx || isNone(bias) || !groups ||
        (*groups != 1.0 && atenDepthwise(op, *groups)))
      return failure();
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto b = dyn_cast<RankedTensorType>(bias.getType());
    if (!out || !b || b.getRank() != 1 || out.getRank() < 3 ||
        !out.getElementType().isF32() ||
        b.getElementType() != out.getElementType() ||
        b.getDimSize(0) != out.getDimSize(1) ||
        ShapedType::isDynamic(b.getDimSize(0)))
      return failure();
    // Every use in the epilogue: `x * sigmoid(x)` reads the output twice,
    // both through the one add (seed 20261224 tasks 1 and 5 left ATen's
    // bias pass at 0.07 ms of 0.48 because of the second read).
    if (!llvm::all_of(op->getUsers(), isEpilogueOp))
      return failure();

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<Value> args(op.getArgs().begin(), op.getArgs().end());
    args[*idx] = makeNone(rewriter, loc);
    auto conv =
        AtenOp::create(rewriter, loc, TypeRange{out}, op.getNameAttr(),
                       op.getOverloadAttr(), nullptr, op.getKindAttr(), args);
    SmallVector<int64_t> shape(out.getRank() - 1, 1);
    shape[0] = b.getDimSize(0);
    Value list = makeI64List(rewriter, loc, shape);
    auto viewType = RankedTensorType::get(shape, out.getElementType());
    Value view =
        AtenOp::create(rewriter, loc, TypeRange{viewType},
                       rewriter.getStringAttr("view"),
                       rewriter.getStringAttr(""), nullptr,
                       rewriter.getStringAttr(kindName(OpKind::Injective)),
                       ValueRange{bias, list})
            ->getResult(0);
    rewriter.replaceOp(
        op, makeBroadcastAdd(rewriter, loc, out, conv->getResult(0), view));
    return success();
  }
};

/// aten::size(t, d) of a dim the trace recorded as static is that number:
/// the graph is specialised to its traced shapes (kernels are compiled for
/// them and ModelNew runs the original forward on any other shape). Left as
/// a use, the size kept its tensor alive: kl_div's `batchmean` reads
/// `input.size(0)`, which made the log_softmax an output of its region
/// (1.25 GB written for nothing) and cut the loss's sum off into a region
/// of its own (seed 20261234 task 6).
struct FoldStaticSize : OpRewritePattern<AtenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getName() != "size" || op.getArgs().size() != 2 ||
        op->getNumResults() != 1 || !op->getResult(0).getType().isInteger(64))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op.getArgs()[0].getType());
    std::optional<double> dim = getConstantNumber(op.getArgs()[1]);
    if (!type || !dim || type.getRank() == 0)
      return failure();
    int64_t rank = type.getRank(), d = int64_t(*dim);
    if (double(d) != *dim || d < -rank || d >= rank)
      return failure();
    if (d < 0)
      d += rank;
    if (ShapedType::isDynamic(type.getDimSize(d)))
      return failure();
    rewriter.replaceOp(op, makeI64(rewriter, op.getLoc(), type.getDimSize(d)));
    return success();
  }
};

struct SimplifyPass : kb::impl::SimplifyBase<SimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIdentity, FoldUnitReduction, FoldAfterRelu, MergeClamps,
                 CancelScaleAroundClamp, SplitConvBias, FoldStaticSize>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
