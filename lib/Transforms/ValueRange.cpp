//===- ValueRange.cpp - Bounds a value's float32 results cannot leave -----===//
//
// Interval arithmetic over the pointwise ops between a reduction and a step
// op. Every bound is a float32 value, rounded outwards from the exact bound
// of the op on the operands' bounds: float32 rounding is monotone, so an
// element computed from operands inside their intervals rounds to a float
// inside the result's (a bound that is itself a float, such as relu's 0 or
// a clamp's limit, is not widened).
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/ValueRange.h"

#include "kb/IR/KbDialect.h"
#include "kb/Transforms/OpUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace kb;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Ops followed back from a step op; beyond, the value is unbounded.
constexpr int kMaxDepth = 24;

/// The largest float32 at most `x`, where `below` says the exact value is
/// below the double `x` (an inexact double operation rounded it up).
double floatDown(double x, bool below = false) {
  if (std::isnan(x))
    return -kInf;
  if (below)
    x = std::nextafter(x, -kInf);
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x)
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}
double floatUp(double x, bool above = false) {
  if (std::isnan(x))
    return kInf;
  if (above)
    x = std::nextafter(x, kInf);
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x)
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

/// a + b rounded down / up to a float, exact through TwoSum's error term.
double addDown(double a, double b) {
  double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
  return floatDown(s, std::isfinite(s) && err < 0);
}
double addUp(double a, double b) {
  double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
  return floatUp(s, std::isfinite(s) && err > 0);
}

Interval add(Interval x, Interval y) {
  return {addDown(x.lo, y.lo), addUp(x.hi, y.hi)};
}
Interval neg(Interval x) { return {-x.hi, -x.lo}; }
/// Products of floats are exact in double: only the float rounding widens.
Interval mul(Interval x, Interval y) {
  double p[4] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
  if (llvm::any_of(p, [](double v) { return std::isnan(v); }))
    return Interval::all(); // 0 * inf
  return {floatDown(*std::min_element(p, p + 4)),
          floatUp(*std::max_element(p, p + 4))};
}
/// `x` (a float, > 0) moved `n` float ulps away from 0.
double ulpsOut(double x, int n) {
  float f = static_cast<float>(x);
  for (int i = 0; i < n; ++i)
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}
/// x / y where y's range excludes 0, each bound two float ulps outside the
/// quotient of the bounds: ATen divides by a scalar as a product with its
/// float reciprocal, two roundings (within an ulp of the quotient) where
/// IEEE division has one. A bound of 0 stays (0 / y and 0 * (1 / y) are 0).
Interval div(Interval x, Interval y) {
  if (!(y.lo > 0 || y.hi < 0))
    return Interval::all();
  double q[4] = {x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi};
  if (llvm::any_of(q, [](double v) { return std::isnan(v); }))
    return Interval::all(); // inf / inf
  double lo = *std::min_element(q, q + 4), hi = *std::max_element(q, q + 4);
  return {lo == 0 ? 0.0 : floatDown(floatDown(lo, true), true),
          hi == 0 ? 0.0 : floatUp(floatUp(hi, true), true)};
}
Interval clampTo(Interval x, double lo, double hi) {
  return {std::clamp(x.lo, lo, hi), std::clamp(x.hi, lo, hi)};
}
/// A scalar operand as the float32 the kernels compute with, or nullopt.
std::optional<double> floatConstant(Value v) {
  if (auto c = getConstantNumber(v))
    return static_cast<double>(static_cast<float>(*c));
  return std::nullopt;
}
bool absent(Operation *op, unsigned i) {
  return op->getNumOperands() <= i || isNone(op->getOperand(i));
}

Interval rangeAt(Value v, int depth);

Interval operandRange(Operation *op, unsigned i, int depth) {
  if (op->getNumOperands() <= i)
    return Interval::all();
  if (auto c = floatConstant(op->getOperand(i)))
    return {*c, *c};
  return rangeAt(op->getOperand(i), depth + 1);
}

/// Scalar operand `i` of `op` as the kernels compute with it, `dflt` when
/// absent or None; nullopt when it is not a constant (a tensor).
std::optional<double> scalarOr(Operation *op, unsigned i, double dflt) {
  if (absent(op, i))
    return dflt;
  return floatConstant(op->getOperand(i));
}

/// A softmax or log_softmax whose dim has size 1 in its input.
bool overUnitDim(AtenOp op) {
  auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<double> dim = getConstantNumber(op->getOperand(1));
  if (!t || !t.hasStaticShape() || !dim)
    return false;
  int64_t r = t.getRank(), d = static_cast<int64_t>(*dim);
  d = d < 0 ? d + r : d;
  return d >= 0 && d < r && t.getDimSize(d) == 1;
}

Interval rangeAt(Value v, int depth) {
  auto aten = v.getDefiningOp<AtenOp>();
  if (!aten || depth > kMaxDepth || aten->getNumResults() != 1)
    return Interval::all();
  Operation *op = aten;
  StringRef name = aten.getName();
  auto x = [&] { return operandRange(op, 0, depth); };
  auto y = [&] { return operandRange(op, 1, depth); };
  if (name == "relu")
    return clampTo(x(), 0, kInf);
  if (name == "relu6")
    return clampTo(x(), 0, 6);
  // Bounded activations: their whole range, whatever the input's (they are
  // not clamps of it), 4 ulps outside +-1 (an approximate division in
  // --fast-math's sigmoid may round past 1; their 0 is exact).
  if (name == "sigmoid" || name == "hardsigmoid")
    return {0, ulpsOut(1, 4)};
  if (name == "tanh")
    return {-ulpsOut(1, 4), ulpsOut(1, 4)};
  // Activations bounded below whatever their input, each floor a little
  // below the function's minimum (gelu's -0.16997 at -0.752, silu's
  // -0.27846 at -1.278, mish's -0.30884 at -1.19, hardswish's -0.375 at
  // -1.5, selu's -scale * alpha), so approximate exp and division
  // (--fast-math) stay above it.
  static const std::pair<llvm::StringLiteral, double> floors[] = {
      {"gelu", -0.1701},      {"silu", -0.2785}, {"mish", -0.3089},
      {"hardswish", -0.3751}, {"selu", -1.7582}, {"square", 0.0}};
  for (const auto &[fn, lo] : floors)
    if (name == fn)
      return {lo, kInf};
  // sqrt of a negative is NaN, which compares false: only inputs that
  // cannot be negative (a last bit could move one below 0) bound it.
  if (name == "sqrt")
    return x().lo >= 0 ? Interval{0, kInf} : Interval::all();
  if (name == "elu") {
    // alpha * scale * (exp(x) - 1) above -alpha * scale.
    std::optional<double> alpha = scalarOr(op, 1, 1.0),
                          sc = scalarOr(op, 2, 1.0);
    if (!alpha || !sc || *alpha < 0 || *sc < 0)
      return Interval::all();
    return {floatDown(-*alpha * *sc * (1 + 1e-5) - 1e-6), kInf};
  }
  if (name == "softplus") {
    // log1p(exp(beta x)) / beta >= 0, or x itself past the threshold.
    std::optional<double> beta = scalarOr(op, 1, 1.0),
                          th = scalarOr(op, 2, 20.0);
    if (!beta || !th || *beta <= 0 || *th < 0)
      return Interval::all();
    return {0, kInf};
  }
  if (name == "pow" && aten.getOverload() == "Tensor_Scalar") {
    std::optional<double> e = floatConstant(op->getOperand(1));
    return e && *e == 2 ? Interval{0, kInf} : Interval::all();
  }
  // Over a dim of size 1 each row is one element: softmax is exp(x - x)
  // over itself, exactly 1, and log_softmax exactly 0, whatever x rounded
  // to (an infinite or NaN x gives NaN in either implementation). A
  // generated task's `std(..., keepdim=True) -> softmax(dim=0)` is one.
  if ((name == "softmax" || name == "log_softmax") && overUnitDim(aten))
    return name == "softmax" ? Interval{floatDown(1 - 1e-6), ulpsOut(1, 4)}
                             : Interval{-1e-6, 1e-6};
  if (name == "log_sigmoid" || name == "log_softmax")
    return {-kInf, 0};
  if (name == "softmax")
    return {0, ulpsOut(1, 4)};
  if (name == "where") {
    Interval a = operandRange(op, 1, depth), b = operandRange(op, 2, depth);
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  if (name == "exp") {
    Interval a = x();
    return {a.lo == -kInf ? 0.0 : floatDown(std::exp(a.lo) * (1 - 1e-6)),
            floatUp(std::exp(a.hi) * (1 + 1e-6))};
  }
  if (name == "hardtanh" || name == "clamp" || name == "clamp_min" ||
      name == "clamp_max") {
    bool onlyMax = name == "clamp_max";
    std::optional<double> lo = onlyMax ? -kInf : scalarOr(op, 1, -kInf);
    std::optional<double> hi =
        name == "clamp_min" ? kInf : scalarOr(op, onlyMax ? 1 : 2, kInf);
    if (!lo || !hi)
      return Interval::all(); // a tensor bound
    if (*lo > *hi)            // ATen: every element becomes max
      return {*hi, *hi};
    return clampTo(x(), *lo, *hi);
  }
  if (name == "abs") {
    Interval a = x();
    if (a.lo >= 0)
      return a;
    if (a.hi <= 0)
      return neg(a);
    return {0, std::max(-a.lo, a.hi)};
  }
  if (name == "neg")
    return neg(x());
  if (name == "add" || name == "sub" || name == "rsub") {
    std::optional<double> alpha = scalarOr(op, 2, 1.0);
    if (!alpha)
      return Interval::all();
    Interval a = x(), b = y();
    if (name == "rsub")
      std::swap(a, b); // other - alpha * self
    Interval sb = *alpha == 1 ? b : mul(b, {*alpha, *alpha});
    return add(a, name == "sub" || name == "rsub" ? neg(sb) : sb);
  }
  if (name == "mul")
    return mul(x(), y());
  if (name == "div" && absent(op, 2))
    return div(x(), y());
  return Interval::all();
}

/// Whether `f` (monotone) is constant over [lo, hi].
template <typename F> bool constantOver(Interval a, F f) {
  return std::isfinite(a.lo) && std::isfinite(a.hi) && f(a.lo) == f(a.hi);
}

/// A quotient's range as a rounding division sees it (div's bounds allow
/// for a product with the float reciprocal already).
Interval roundingQuotient(Operation *op, int depth) {
  return div(operandRange(op, 0, depth), operandRange(op, 1, depth));
}

double truncOf(double v) { return std::trunc(v); }
double floorOf(double v) { return std::floor(v); }

} // namespace

Interval Interval::all() { return {-kInf, kInf}; }
bool Interval::isAll() const { return lo == -kInf && hi == kInf; }

Interval kb::valueRange(Value v) { return rangeAt(v, 0); }

bool kb::stepCannotFlip(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten)
    return false;
  StringRef name = aten.getName();
  if (name == "floor_divide")
    return constantOver(roundingQuotient(op, 0), floorOf);
  if (name == "div" && !absent(op, 2)) {
    auto mode = op->getOperand(2).getDefiningOp<ConstantOp>();
    auto s = mode ? dyn_cast<StringAttr>(mode.getValue()) : nullptr;
    if (!s || (s.getValue() != "trunc" && s.getValue() != "floor"))
      return false;
    return constantOver(roundingQuotient(op, 0),
                        s.getValue() == "trunc" ? truncOf : floorOf);
  }
  bool gt = name == "gt", ge = name == "ge", lt = name == "lt",
       le = name == "le", eq = name == "eq" || name == "ne";
  if (gt || ge || lt || le || eq) {
    Interval a = operandRange(op, 0, 0), b = operandRange(op, 1, 0);
    if (lt || le) {
      std::swap(a, b); // b > a, b >= a
      gt = lt;
      ge = le;
    }
    if (eq) // never equal, or both one and the same value
      return a.hi < b.lo || a.lo > b.hi ||
             (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo);
    if (gt) // a > b always or never
      return a.lo > b.hi || a.hi <= b.lo;
    return a.lo >= b.hi || a.hi < b.lo; // ge
  }
  return false;
}
