//===- ValueRangeTest.cpp - Bounds of values before step ops --------------===//
//
// The bounds decide whether a reduction may leave ATen before a step op, so
// each must hold for every float32 the kernels can compute: the tests check
// the bounds against the float computations themselves.

#include "kb/Transforms/ValueRange.h"
#include "../TaggedFunction.h"
#include "kb/IR/KbDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mlir;
using namespace kb;

namespace {

/// A function of the given body over %x : tensor<8xf32> and %p :
/// tensor<8xf32>; the ops named by their `tag` attribute.
class Ranges {
public:
  explicit Ranges(const std::string &body)
      : f("%x: tensor<8xf32>, %p: tensor<8xf32>",
          "  %none = kb.constant {value} : none\n"
          "  %one = kb.constant {value = 1 : i64} : i64\n" +
              body) {}
  Interval range(const std::string &tag) {
    return valueRange(f.op(tag)->getResult(0));
  }
  bool cannotFlip(const std::string &tag) { return stepCannotFlip(f.op(tag)); }
  bool ok() const { return f.ok(); }

private:
  kb::testing::TaggedFunction f;
};

const char *kClampedQuotient = R"(
  %lo = kb.constant {value = -1.128000e+00 : f64} : f64
  %hi = kb.constant {value = 5.420000e-01 : f64} : f64
  %trunc = kb.constant {value = "trunc"} : !kb.str
  %floor = kb.constant {value = "floor"} : !kb.str
  %r = kb.aten "relu"(%x) {tag = "relu"} : (tensor<8xf32>) -> tensor<8xf32>
  %h = kb.aten "hardtanh"(%r, %lo, %hi) {tag = "ht"} : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %a = kb.aten "abs"(%p) {tag = "abs"} : (tensor<8xf32>) -> tensor<8xf32>
  %d = kb.aten "add"(%a, %one, %one) {overload = "Scalar", tag = "den"} : (tensor<8xf32>, i64, i64) -> tensor<8xf32>
  %q = kb.aten "div"(%h, %d) {overload = "Tensor", tag = "q"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t = kb.aten "div"(%h, %d, %trunc) {overload = "Tensor_mode", tag = "trunc"} : (tensor<8xf32>, tensor<8xf32>, !kb.str) -> tensor<8xf32>
  %f = kb.aten "div"(%r, %d, %floor) {overload = "Tensor_mode", tag = "floor"} : (tensor<8xf32>, tensor<8xf32>, !kb.str) -> tensor<8xf32>
  %g = kb.aten "floor_divide"(%h, %d) {tag = "floordiv"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %z = kb.aten "eq"(%r, %one) {overload = "Scalar", tag = "eq"} : (tensor<8xf32>, i64) -> tensor<8xi1>
)";

} // namespace

TEST(ValueRange, ClampsAndActivationsGiveExactFloatBounds) {
  Ranges r(kClampedQuotient);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.range("relu").lo, 0.0);
  EXPECT_TRUE(std::isinf(r.range("relu").hi));
  // hardtanh's limits are the float32 constants the kernels compare with.
  EXPECT_EQ(r.range("ht").lo, 0.0);
  EXPECT_EQ(r.range("ht").hi, static_cast<double>(0.542f));
  EXPECT_EQ(r.range("abs").lo, 0.0);
  EXPECT_EQ(r.range("den").lo, 1.0);
  // A quotient of [0, 0.542] by [1, inf): 0 stays exact, the top bound is
  // the float above 0.542f / 1 (division rounds).
  Interval q = r.range("q");
  EXPECT_EQ(q.lo, 0.0);
  EXPECT_GE(q.hi, static_cast<double>(0.542f));
  EXPECT_LT(q.hi, 0.543);
}

TEST(ValueRange, StepsConstantOverTheirRangesCannotFlip) {
  Ranges r(kClampedQuotient);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.cannotFlip("trunc"));    // trunc of [0, 0.542] is 0
  EXPECT_FALSE(r.cannotFlip("floor"));   // floor of [0, inf) jumps at 1
  EXPECT_TRUE(r.cannotFlip("floordiv")); // floor of [0, 0.542] is 0
  EXPECT_FALSE(r.cannotFlip("eq"));      // relu can be 1
}

TEST(ValueRange, ComparisonsOutsideARange) {
  Ranges r(R"(
  %big = kb.constant {value = 1.500000e+00 : f64} : f64
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %zero = kb.constant {value = 0.000000e+00 : f64} : f64
  %s = kb.aten "sigmoid"(%x) {tag = "sig"} : (tensor<8xf32>) -> tensor<8xf32>
  %a = kb.aten "gt"(%s, %big) {overload = "Scalar", tag = "gt_big"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %b = kb.aten "lt"(%s, %half) {overload = "Scalar", tag = "lt_half"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %c = kb.aten "ge"(%s, %zero) {overload = "Scalar", tag = "ge_zero"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %d = kb.aten "gt"(%s, %zero) {overload = "Scalar", tag = "gt_zero"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %e = kb.aten "le"(%s, %big) {overload = "Scalar", tag = "le_big"} : (tensor<8xf32>, f64) -> tensor<8xi1>
)");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.cannotFlip("gt_big"));   // never
  EXPECT_FALSE(r.cannotFlip("lt_half")); // either way
  EXPECT_TRUE(r.cannotFlip("ge_zero"));  // always: sigmoid >= 0
  EXPECT_FALSE(r.cannotFlip("gt_zero")); // sigmoid can underflow to 0
  EXPECT_TRUE(r.cannotFlip("le_big"));   // always
}

TEST(ValueRange, ArithmeticBoundsHoldForTheFloatResults) {
  Ranges r(R"(
  %c = kb.constant {value = 1.000000e-01 : f64} : f64
  %d = kb.constant {value = 3.000000e-01 : f64} : f64
  %s = kb.aten "sigmoid"(%x) {tag = "sig"} : (tensor<8xf32>) -> tensor<8xf32>
  %m = kb.aten "mul"(%s, %c) {overload = "Scalar", tag = "mul"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %a = kb.aten "add"(%m, %d, %one) {overload = "Scalar", tag = "add"} : (tensor<8xf32>, f64, i64) -> tensor<8xf32>
  %n = kb.aten "rsub"(%a, %one, %one) {overload = "Scalar", tag = "rsub"} : (tensor<8xf32>, i64, i64) -> tensor<8xf32>
  %t = kb.aten "tanh"(%x) {tag = "tanh"} : (tensor<8xf32>) -> tensor<8xf32>
  %q = kb.aten "div"(%a, %t) {overload = "Tensor", tag = "unbounded"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
)");
  ASSERT_TRUE(r.ok());
  Interval mul = r.range("mul"), add = r.range("add"), rsub = r.range("rsub");
  // Every float the kernels compute from sigmoid values in [0, 1] lies
  // inside: step through sigmoid's range and round as float32 does.
  for (int k = 0; k <= 4096; ++k) {
    float s = k / 4096.0f;
    float m = s * 0.1f, a = m + 0.3f, n = 1.0f - a;
    EXPECT_LE(mul.lo, m);
    EXPECT_GE(mul.hi, m);
    EXPECT_LE(add.lo, a);
    EXPECT_GE(add.hi, a);
    EXPECT_LE(rsub.lo, n);
    EXPECT_GE(rsub.hi, n);
  }
  // Bounds are float32 values.
  for (double b : {mul.lo, mul.hi, add.lo, add.hi, rsub.lo, rsub.hi})
    EXPECT_EQ(b, static_cast<double>(static_cast<float>(b)));
  EXPECT_EQ(add.lo, static_cast<double>(0.3f));
  // A divisor whose range holds 0 bounds nothing.
  EXPECT_TRUE(r.range("unbounded").isAll());
}

TEST(ValueRange, BoundedActivationsIgnoreTheirInputsRange) {
  // sigmoid and tanh are not clamps of their input: sigmoid of [5, 10] is
  // about [0.9933, 0.99995], not [1, 1].
  Ranges r(R"(
  %five = kb.constant {value = 5.000000e+00 : f64} : f64
  %ten = kb.constant {value = 1.000000e+01 : f64} : f64
  %one_f = kb.constant {value = 1.000000e+00 : f64} : f64
  %h = kb.aten "hardtanh"(%x, %five, %ten) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %s = kb.aten "sigmoid"(%h) {tag = "sig"} : (tensor<8xf32>) -> tensor<8xf32>
  %t = kb.aten "tanh"(%h) {tag = "tanh"} : (tensor<8xf32>) -> tensor<8xf32>
  %g = kb.aten "ge"(%s, %one_f) {overload = "Scalar", tag = "ge_one"} : (tensor<8xf32>, f64) -> tensor<8xi1>
)");
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r.range("sig").lo, 1.0f / (1.0f + std::exp(-5.0f)));
  EXPECT_GT(r.range("sig").hi, 1.0); // an approximate division may pass 1
  EXPECT_LE(r.range("tanh").lo, -1.0);
  // sigmoid >= 1 may hold for some inputs (it rounds to 1): not constant.
  EXPECT_FALSE(r.cannotFlip("ge_one"));
}

TEST(ValueRange, ScalarDivisionByItsReciprocal) {
  // ATen divides by a scalar as a product with the float reciprocal:
  // 6.9999995f * (1 / 7.0f) rounds to 1.0f, where 6.9999995f / 7 is
  // 0.99999994f. The bound must cover it, so trunc of the quotient is not
  // constant.
  Ranges r(R"(
  %zero = kb.constant {value = 0.000000e+00 : f64} : f64
  %top = kb.constant {value = 6.9999995 : f64} : f64
  %three = kb.constant {value = 7.000000e+00 : f64} : f64
  %trunc = kb.constant {value = "trunc"} : !kb.str
  %h = kb.aten "hardtanh"(%x, %zero, %top) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %q = kb.aten "div"(%h, %three) {overload = "Scalar", tag = "q"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %t = kb.aten "div"(%h, %three, %trunc) {overload = "Scalar_mode", tag = "trunc"} : (tensor<8xf32>, f64, !kb.str) -> tensor<8xf32>
)");
  ASSERT_TRUE(r.ok());
  float top = 6.9999995f, recip = 1.0f / 7.0f;
  float viaReciprocal = top * recip, divided = top / 7.0f;
  ASSERT_EQ(viaReciprocal, 1.0f);
  ASSERT_LT(divided, 1.0f);
  EXPECT_GE(r.range("q").hi, viaReciprocal);
  EXPECT_GE(r.range("q").hi, divided);
  EXPECT_EQ(r.range("q").lo, 0.0);
  EXPECT_FALSE(r.cannotFlip("trunc"));
}

TEST(ValueRange, ActivationsBoundedBelow) {
  Ranges r(R"(
  %m4 = kb.constant {value = -4.020000e-01 : f64} : f64
  %m1 = kb.constant {value = -1.000000e-01 : f64} : f64
  %two = kb.constant {value = 2.000000e+00 : f64} : f64
  %g = kb.aten "silu"(%x) {tag = "silu"} : (tensor<8xf32>) -> tensor<8xf32>
  %a = kb.aten "le"(%g, %m4) {overload = "Scalar", tag = "silu_le"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %b = kb.aten "le"(%g, %m1) {overload = "Scalar", tag = "silu_le_small"} : (tensor<8xf32>, f64) -> tensor<8xi1>
  %s = kb.aten "sqrt"(%x) {tag = "sqrt_any"} : (tensor<8xf32>) -> tensor<8xf32>
  %q = kb.aten "pow"(%x, %two) {overload = "Tensor_Scalar", tag = "sq"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %t = kb.aten "sqrt"(%q) {tag = "sqrt_sq"} : (tensor<8xf32>) -> tensor<8xf32>
  %w = kb.aten "where"(%a, %g, %q) {overload = "self", tag = "where"} : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %l = kb.aten "log_sigmoid"(%x) {tag = "logsig"} : (tensor<8xf32>) -> tensor<8xf32>
)");
  ASSERT_TRUE(r.ok());
  // silu's minimum is -0.27846: below -0.402 never, below -0.1 sometimes.
  EXPECT_TRUE(r.cannotFlip("silu_le"));
  EXPECT_FALSE(r.cannotFlip("silu_le_small"));
  EXPECT_LE(r.range("silu").lo, -0.27846454);
  // sqrt of a value that may be negative may be NaN: no bound.
  EXPECT_TRUE(r.range("sqrt_any").isAll());
  EXPECT_EQ(r.range("sq").lo, 0.0);
  EXPECT_EQ(r.range("sqrt_sq").lo, 0.0);
  // where: the union of its two values' ranges.
  EXPECT_EQ(r.range("where").lo, r.range("silu").lo);
  EXPECT_EQ(r.range("logsig").hi, 0.0);
}
