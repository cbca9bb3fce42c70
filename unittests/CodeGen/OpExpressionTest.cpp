//===- OpExpressionTest.cpp - Pointwise kb ops as CUDA expressions --------===//
//
// Both frontends' element expressions come from OpExpression.h: the graph
// emitter names an op's tensor operands by its loads, the C++ rewriter by
// its element function's parameters (scalars too). These tests fix what
// each operand becomes, from IR as either importer writes it.
//
//===----------------------------------------------------------------------===//

#include "kb/CodeGen/OpExpression.h"
#include "../TaggedFunction.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

/// A function of `body` over %x : tensor<*xf32>, %y : tensor<*xf32> and
/// %s : f64 (a C++ chain's shape-less tensors and a run-time scalar); ops
/// found by their `tag` attribute.
class Ops {
public:
  explicit Ops(const std::string &body)
      : f("%x: tensor<*xf32>, %y: tensor<*xf32>, %s: f64",
          "  %none = kb.constant {value} : none\n" + body) {
    if (!f.ok())
      return;
    names[f.fn().getArgument(0)] = "x";
    names[f.fn().getArgument(1)] = "v1";
    names[f.fn().getArgument(2)] = "s2";
  }
  bool ok() const { return f.ok(); }
  std::string expr(const std::string &tag) {
    auto e = pointwiseExpression(cast<AtenOp>(f.op(tag)), names);
    if (!e)
      return "error: " + llvm::toString(e.takeError());
    return *e;
  }
  OperandNames names;

private:
  kb::testing::TaggedFunction f;
};

TEST(OpExpression, OperandsByNameConstantAndAbsence) {
  Ops f(R"(
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %a = kb.aten "mul"(%x, %y) {overload = "Tensor", tag = "a"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %b = kb.aten "mul"(%x, %half) {overload = "Scalar", tag = "b"} : (tensor<*xf32>, f64) -> tensor<*xf32>
  %c = kb.aten "mul"(%x, %s) {overload = "Scalar", tag = "c"} : (tensor<*xf32>, f64) -> tensor<*xf32>
  %d = kb.aten "clamp"(%x, %half, %none) {tag = "d"} : (tensor<*xf32>, f64, none) -> tensor<*xf32>
)");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.expr("a"), "__fmul_rn(x, v1)");
  // A literal is the float the kernel computes with; a run-time scalar (a
  // C++ variable) its parameter's name.
  EXPECT_EQ(f.expr("b"), "__fmul_rn(x, 0.5f)");
  EXPECT_EQ(f.expr("c"), "__fmul_rn(x, s2)");
  // An absent upper bound: unbounded above.
  EXPECT_EQ(f.expr("d"), "kb::clamp(x, 0.5f, kb::inf())");
}

TEST(OpExpression, ConstantDivisorTakesTheScalarRow) {
  // ATen's TensorIterator takes a constant `other` as a CPU scalar, so a
  // division by one multiplies by the float reciprocal (div.Scalar's
  // template); a tensor divisor divides.
  Ops f(R"(
  %two = kb.constant {value = 2.000000e+00 : f64} : f64
  %q = kb.aten "div"(%x, %two) {overload = "Tensor", tag = "q"} : (tensor<*xf32>, f64) -> tensor<*xf32>
  %r = kb.aten "div"(%x, %y) {overload = "Tensor", tag = "r"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
)");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.expr("q"), "__fmul_rn(x, 1.f / 2.0f)");
  EXPECT_EQ(f.expr("r"), "(x / v1)");
}

TEST(OpExpression, UnnamedOperandIsAnError) {
  Ops f(R"(
  %a = kb.aten "mul"(%x, %y) {overload = "Tensor", tag = "a"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
)");
  ASSERT_TRUE(f.ok());
  f.names.clear(); // a graph value the emitter did not load
  std::string e = f.expr("a");
  EXPECT_NE(e.find("error: operand 'self' of 'aten::mul"), std::string::npos)
      << e;
}

} // namespace
