//===- Expr.cpp - Launch-rule expressions ---------------------------------===//

#include "kb/Verify/Checks.h"

#include <cctype>

using namespace kb::verify;

namespace {

class ExprParser {
public:
  ExprParser(const std::string &text, const std::map<std::string, int64_t> &vars)
      : s(text), vars(vars) {}

  int64_t parse() {
    int64_t v = sum();
    skip();
    if (pos != s.size())
      fail("unexpected '" + s.substr(pos, 1) + "'");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string &why) {
    throw JobError("launch expression '" + s + "': " + why);
  }
  void skip() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos])))
      ++pos;
  }
  bool eat(char c) {
    skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  int64_t sum() {
    int64_t v = product();
    while (true) {
      if (eat('+'))
        v += product();
      else if (eat('-'))
        v -= product();
      else
        return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    while (true) {
      if (eat('*')) {
        v *= unary();
      } else if (eat('/')) {
        int64_t d = unary();
        if (d == 0)
          fail("division by zero");
        v /= d;
      } else if (eat('%')) {
        int64_t d = unary();
        if (d == 0)
          fail("division by zero");
        v %= d;
      } else {
        return v;
      }
    }
  }
  int64_t unary() {
    if (eat('-'))
      return -unary();
    return primary();
  }
  int64_t primary() {
    if (++depth > 64)
      fail("nested too deeply");
    skip();
    int64_t v;
    if (eat('(')) {
      v = sum();
      if (!eat(')'))
        fail("expected ')'");
    } else if (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      size_t start = pos;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))
        ++pos;
      v = std::stoll(s.substr(start, pos - start));
    } else if (pos < s.size() &&
               (std::isalpha(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) {
      size_t start = pos;
      while (pos < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_'))
        ++pos;
      std::string name = s.substr(start, pos - start);
      if (eat('(')) {
        int64_t a = sum();
        if (!eat(','))
          fail("expected ',' in " + name + "(a, b)");
        int64_t b = sum();
        if (!eat(')'))
          fail("expected ')' after " + name + "(a, b");
        if (name == "ceil_div") {
          if (b <= 0)
            fail("ceil_div by a non-positive number");
          v = (a + b - 1) / b;
        } else if (name == "min") {
          v = std::min(a, b);
        } else if (name == "max") {
          v = std::max(a, b);
        } else {
          fail("unknown function '" + name + "' (ceil_div, min, max)");
        }
      } else {
        auto it = vars.find(name);
        if (it == vars.end())
          fail("unknown variable '" + name + "'");
        v = it->second;
      }
    } else {
      fail("expected a number, a variable or '('");
    }
    --depth;
    return v;
  }

  const std::string &s;
  const std::map<std::string, int64_t> &vars;
  size_t pos = 0;
  int depth = 0;
};

} // namespace

int64_t kb::verify::evalExpr(const std::string &expr,
                             const std::map<std::string, int64_t> &vars) {
  return ExprParser(expr, vars).parse();
}

std::map<std::string, int64_t>
kb::verify::sizeVariables(const std::vector<TensorSpec> &tensors,
                          int64_t smCount) {
  std::map<std::string, int64_t> vars;
  for (const TensorSpec &t : tensors) {
    vars["numel_" + t.name] = numel(t.shape);
    vars["rank_" + t.name] = static_cast<int64_t>(t.shape.size());
    for (size_t k = 0; k < t.shape.size(); ++k)
      vars[t.name + "_" + std::to_string(k)] = t.shape[k];
  }
  vars["sm_count"] = smCount;
  return vars;
}

int64_t kb::verify::numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t kb::verify::stridedSpan(const std::vector<int64_t> &shape,
                                const std::vector<int64_t> &strides) {
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return 0;
    last += (shape[d] - 1) * strides[d];
  }
  return last + 1;
}
