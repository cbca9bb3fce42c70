//===- OpTemplate.cpp - The op table's CUDA templates, expanded -----------===//
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace kb;

std::string codegen::floatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "kb::inf()" : "(-kb::inf())";
  if (std::isnan(v))
    return "__int_as_float(0x7fffffff)";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.9g", v);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string codegen::doubleLiteral(double v) {
  // "%.17g" prints inf and nan, which CUDA does not parse (a 1 / N of an
  // empty row's N = 0, a reciprocal eps).
  if (std::isinf(v))
    return v > 0 ? "((double)kb::inf())" : "(-(double)kb::inf())";
  if (std::isnan(v))
    return "__longlong_as_double(0x7fffffffffffffffLL)";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.17g", v);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

llvm::Expected<std::string> codegen::expandTemplate(
    llvm::StringRef tmpl, llvm::ArrayRef<std::string> names,
    llvm::function_ref<llvm::Expected<std::string>(size_t)> valueOf) {
  std::vector<std::optional<std::string>> values(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    if (!tmpl.contains("{" + names[k] + "}"))
      continue;
    llvm::Expected<std::string> v = valueOf(k);
    if (!v)
      return v.takeError();
    values[k] = std::move(*v);
  }
  std::string out;
  out.reserve(tmpl.size());
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl[i] == '{') {
      size_t close = tmpl.find('}', i);
      if (close != llvm::StringRef::npos) {
        llvm::StringRef name = tmpl.slice(i + 1, close);
        const std::string *hit = llvm::find(names, name);
        if (hit != names.end() && values[hit - names.begin()]) {
          out += *values[hit - names.begin()];
          i = close + 1;
          continue;
        }
      }
    }
    out += tmpl[i++];
  }
  return out;
}

llvm::Expected<std::string> codegen::expandTemplate(
    const OpInfo &row,
    llvm::function_ref<llvm::Expected<std::string>(size_t)> valueOf) {
  std::vector<std::string> names;
  for (const ArgSpec &a : row.args)
    names.push_back(a.name);
  return expandTemplate(row.cuda, names, valueOf);
}

std::optional<std::string> codegen::absentOperand(const ArgSpec &arg) {
  if (arg.type == ArgType::Str && arg.optional)
    return deviceStringOption(std::nullopt);
  if (llvm::StringRef(arg.name).contains("max"))
    return std::string("kb::inf()");
  if (llvm::StringRef(arg.name).contains("min"))
    return std::string("(-kb::inf())");
  return std::nullopt;
}
