//===- OpTemplateTest.cpp - The op table's CUDA templates, expanded -------===//
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace kb;
using namespace kb::codegen;

namespace {

std::string expand(llvm::StringRef tmpl, llvm::ArrayRef<std::string> names,
                   llvm::ArrayRef<std::string> values,
                   std::vector<size_t> *asked = nullptr) {
  auto out =
      expandTemplate(tmpl, names, [&](size_t k) -> llvm::Expected<std::string> {
        if (asked)
          asked->push_back(k);
        return values[k];
      });
  EXPECT_TRUE(bool(out));
  return out ? *out : llvm::toString(out.takeError());
}

TEST(OpTemplate, SubstitutesEveryOccurrenceOnce) {
  std::vector<size_t> asked;
  EXPECT_EQ(expand("kb::clamp({self}, {min}, {max}) + {self}",
                   {"self", "min", "max", "unused"}, {"x", "lo", "hi", "u"},
                   &asked),
            "kb::clamp(x, lo, hi) + x");
  // Only the names the template holds are asked for, in their order.
  EXPECT_EQ(asked, (std::vector<size_t>{0, 1, 2}));
}

TEST(OpTemplate, SubstitutedTextIsNotScannedAgain) {
  // A value holding a placeholder of a later operand stays as it is.
  EXPECT_EQ(expand("f({a}, {b})", {"a", "b"}, {"{b}", "y"}), "f({b}, y)");
  // Braces naming no operand stay (the caller may refuse them).
  EXPECT_EQ(expand("g({a}, {zz})", {"a"}, {"x"}), "g(x, {zz})");
}

TEST(OpTemplate, FirstFailingOperandIsReported) {
  auto out = expandTemplate(
      "h({a}, {b})", {"a", "b"}, [](size_t k) -> llvm::Expected<std::string> {
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "operand " + std::to_string(k));
      });
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()), "operand 0");
}

TEST(OpTemplate, Literals) {
  EXPECT_EQ(floatLiteral(0.5), "0.5f");
  EXPECT_EQ(floatLiteral(3), "3.0f");
  EXPECT_EQ(floatLiteral(1e-5), "1e-05f"); // a float literal: nvcc rounds it
  EXPECT_EQ(floatLiteral(std::numeric_limits<double>::infinity()), "kb::inf()");
  EXPECT_EQ(floatLiteral(-std::numeric_limits<double>::infinity()),
            "(-kb::inf())");
  EXPECT_EQ(floatLiteral(std::nan("")), "__int_as_float(0x7fffffff)");
  EXPECT_EQ(doubleLiteral(0.1), "0.10000000000000001");
  // CUDA parses no "inf" or "nan" (a 1 / N over an empty row once was one).
  EXPECT_EQ(doubleLiteral(std::numeric_limits<double>::infinity()),
            "((double)kb::inf())");
  EXPECT_EQ(doubleLiteral(-std::numeric_limits<double>::infinity()),
            "(-(double)kb::inf())");
  EXPECT_EQ(doubleLiteral(std::nan("")),
            "__longlong_as_double(0x7fffffffffffffffLL)");
}

TEST(OpTemplate, AbsentOperands) {
  EXPECT_EQ(absentOperand({"max", ArgType::Scalar, true}), "kb::inf()");
  EXPECT_EQ(absentOperand({"min", ArgType::Scalar, true}), "(-kb::inf())");
  // An absent string option is its '\0' (div's rounding_mode None).
  EXPECT_EQ(absentOperand({"rounding_mode", ArgType::Str, true}),
            deviceStringOption(std::nullopt));
  EXPECT_EQ(absentOperand({"alpha", ArgType::Scalar, true}), std::nullopt);
}

} // namespace
