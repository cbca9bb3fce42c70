//===- StaticCheck.cpp - What a candidate kernel may not contain ----------===//
//
// Candidates are device code only: kb-verify never runs host code from a
// candidate (NVRTC compiles device code; there is no host compiler). These
// checks reject, before compiling, the constructs that would escape the
// verifier's control or its timing: device-side launches onto other streams,
// the device heap, host runtime calls, and includes outside an allow-list.
//
//===----------------------------------------------------------------------===//

#include "kb/Verify/Checks.h"

#include <regex>
#include <set>

using namespace kb::verify;

namespace {

/// Strips // and /* */ comments and string literals so that words in them do
/// not trigger (or hide) a rule.
std::string stripCommentsAndStrings(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n')
        ++i;
      out += '\n';
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/'))
        ++i;
      ++i;
      out += ' ';
    } else if (s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\')
          ++i;
        ++i;
      }
      out += "\"\"";
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Rule {
  const char *pattern;
  const char *why;
};

const Rule kRules[] = {
    {R"(<<<)", "device-side kernel launch (dynamic parallelism) is not allowed"},
    {R"(\bcudaStream\w*|\bcudaLaunch\w*|\bcudaGraph\w*)",
     "stream, launch and graph APIs are not allowed in a candidate"},
    {R"(\bcudaMalloc\w*|\bcudaFree\w*|\bcudaMemcpy\w*|\bcudaMemset\w*|\bcudaDeviceSynchronize\b)",
     "host/device runtime memory and synchronisation calls are not allowed"},
    {R"(\bmalloc\s*\(|\bfree\s*\(|\bnew\b|\bdelete\b)",
     "device heap allocation (malloc/free/new/delete) is not allowed"},
    {R"(\bint\s+main\s*\()", "host code (main) is not allowed"},
    {R"(\bcooperative_groups\b|\bgrid_group\b|this_grid\s*\()",
     "grid-wide synchronisation is not allowed"},
    {R"(__host__)", "host functions are not allowed: candidates are device code"},
    {R"(\bclock64\s*\(|\bclock\s*\(|%globaltimer)",
     "reading clocks is not allowed (timing-dependent behaviour)"},
};

} // namespace

std::optional<Rejection> kb::verify::staticCheck(const std::string &source,
                                                 const std::string &entry) {
  // Includes: only the CUDA headers NVRTC provides without a host toolchain.
  static const std::regex include(R"(#\s*include\s*[<"]([^>"]+)[>"])");
  static const std::set<std::string> allowed = {
      "cuda_fp16.h", "cuda_bf16.h", "cuda/std/cstdint", "cuda/std/limits",
      "cuda/std/cmath", "cuda/std/type_traits"};
  for (std::sregex_iterator it(source.begin(), source.end(), include), end;
       it != end; ++it)
    if (!allowed.count((*it)[1].str()))
      return Rejection{VerdictStatus::ForbiddenConstruct,
                       "include <" + (*it)[1].str() +
                           "> is outside the allow-list (cuda_fp16.h, "
                           "cuda_bf16.h, cuda/std/{cstdint,limits,cmath,"
                           "type_traits})"};
  std::string code = stripCommentsAndStrings(source);
  for (const Rule &r : kRules)
    if (std::regex_search(code, std::regex(r.pattern)))
      return Rejection{VerdictStatus::ForbiddenConstruct, r.why};
  static const std::regex ident(R"(^[A-Za-z_][A-Za-z0-9_]*$)");
  if (!std::regex_match(entry, ident))
    return Rejection{VerdictStatus::EntryPointMissing,
                     "entry point '" + entry + "' is not an identifier"};
  // The declarator between __global__ and the body may hold attributes
  // such as __launch_bounds__(256) before the name.
  static const std::regex global(R"(__global__[^;{]*)");
  const std::regex name("\\b" + entry + "\\s*\\(");
  for (std::sregex_iterator it(code.begin(), code.end(), global), end;
       it != end; ++it) {
    std::string decl = it->str();
    if (std::regex_search(decl, name))
      return std::nullopt;
  }
  return Rejection{VerdictStatus::EntryPointMissing,
                   "the source defines no __global__ function named '" + entry +
                       "'"};
  return std::nullopt;
}
