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

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <set>

using namespace kb::verify;

namespace {

/// What the literals of a source become in its scanned view.
enum class Literals { Keep, Blank };

/// The source as the compiler's translation phases 1-3 see it: lines
/// spliced at backslash-newlines, comments replaced by a space (newlines
/// kept: a directive ends at its line's end), string and character
/// literals, raw strings (R"d(...)d") included, kept (an include names its
/// file in one) or blanked to "" so that words in them neither trigger nor
/// hide a rule. One scanner for the directive and the code rules: a second
/// one that missed raw strings or splices let `R"(")" __host__ ... "(")"`
/// or `__ho\<newline>st__` past the code rules.
std::string scannedView(const std::string &src, Literals literals) {
  std::string s;
  s.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\\' && i + 1 < src.size() &&
        (src[i + 1] == '\n' ||
         (src[i + 1] == '\r' && i + 2 < src.size() && src[i + 2] == '\n'))) {
      i += src[i + 1] == '\r' ? 2 : 1;
      continue;
    }
    s += src[i];
  }
  bool keep = literals == Literals::Keep;
  auto identChar = [](char c) {
    return std::isalnum((unsigned char)c) || c == '_';
  };
  // R"delim( at i (after an optional u8, u, U or L prefix): the index
  // just past the raw string's closing quote, or npos.
  auto rawEnd = [&](size_t i) -> size_t {
    size_t r = i;
    if (s.compare(r, 2, "u8") == 0)
      r += 2;
    else if (s[r] == 'u' || s[r] == 'U' || s[r] == 'L')
      r += 1;
    if (r + 1 >= s.size() || s[r] != 'R' || s[r + 1] != '"' ||
        (i > 0 && identChar(s[i - 1])))
      return std::string::npos;
    size_t open = s.find('(', r + 2);
    if (open == std::string::npos || open - (r + 2) > 16)
      return std::string::npos;
    std::string close = ")" + s.substr(r + 2, open - (r + 2)) + "\"";
    size_t e = s.find(close, open + 1);
    return e == std::string::npos ? s.size() : e + close.size();
  };
  // Whether the quote at i continues a preprocessing number (a digit
  // separator): `1'0; __host__ ...; '0'` must not read as one literal.
  auto inNumber = [&](size_t i) {
    size_t b = i;
    while (b > 0 &&
           (identChar(s[b - 1]) || s[b - 1] == '.' || s[b - 1] == '\''))
      --b;
    return b < i && std::isdigit((unsigned char)s[b]);
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n')
        ++i;
      out += '\n';
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      for (i += 2; i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/'); ++i)
        if (s[i] == '\n')
          out += '\n';
      ++i;
      out += ' ';
    } else if (size_t e = rawEnd(i); e != std::string::npos) {
      std::string lit = s.substr(i, e - i);
      if (keep)
        out += lit;
      else
        out += "\"\"" +
               std::string(std::count(lit.begin(), lit.end(), '\n'), '\n');
      i = e - 1;
    } else if (s[i] == '\'' && inNumber(i)) {
      out += s[i]; // a digit separator (1'000), not a character literal
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i];
      std::string lit(1, s[i++]);
      for (; i < s.size() && s[i] != q && s[i] != '\n'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size())
          lit += s[i++];
        lit += s[i];
      }
      if (i < s.size() && s[i] == q)
        lit += s[i];
      else if (i < s.size())
        --i; // an unterminated literal ends at its line
      out += keep ? lit : std::string(2, q);
    } else {
      out += s[i];
    }
  }
  return out;
}

/// The first include-like directive outside the allow-list, if any. Every
/// directive is read after line splicing and comments, with `%:` (the
/// digraph of `#`): #include, #include_next, #import and #embed must name
/// an allowed header literally (`#include P` with P a macro, or a path that
/// only a comment separates from the directive, got through the pattern
/// this replaces), and __has_include may not probe the host's files.
std::optional<std::string> forbiddenInclude(const std::string &source) {
  const std::set<std::string> &allowed = allowedHeaders();
  std::string view = scannedView(source, Literals::Keep);
  if (view.find("__has_include") != std::string::npos)
    return std::string("__has_include");
  size_t pos = 0;
  while (pos < view.size()) {
    size_t eol = view.find('\n', pos);
    if (eol == std::string::npos)
      eol = view.size();
    std::string line = view.substr(pos, eol - pos);
    pos = eol + 1;
    size_t i = line.find_first_not_of(" \t\f\v\r");
    if (i == std::string::npos)
      continue;
    if (line[i] == '#')
      i += 1;
    else if (line.compare(i, 2, "%:") == 0)
      i += 2;
    else
      continue;
    i = line.find_first_not_of(" \t\f\v\r", i);
    if (i == std::string::npos)
      continue;
    size_t e = i;
    while (e < line.size() &&
           (std::isalnum((unsigned char)line[e]) || line[e] == '_'))
      ++e;
    std::string name = line.substr(i, e - i);
    if (name != "include" && name != "include_next" && name != "import" &&
        name != "embed")
      continue;
    size_t a = line.find_first_not_of(" \t\f\v\r", e);
    size_t b = line.find_last_not_of(" \t\f\v\r");
    std::string arg = a == std::string::npos ? "" : line.substr(a, b - a + 1);
    bool literal = name == "include" && arg.size() > 2 &&
                   ((arg.front() == '<' && arg.back() == '>') ||
                    (arg.front() == '"' && arg.back() == '"'));
    if (!literal || !allowed.count(arg.substr(1, arg.size() - 2)))
      return "#" + name + " " + arg;
  }
  return std::nullopt;
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
  if (auto bad = forbiddenInclude(source))
    return Rejection{VerdictStatus::ForbiddenConstruct,
                     *bad + " is outside the include allow-list (cuda_fp16.h, "
                            "cuda_bf16.h, cuda/std/{cstdint,limits,cmath,"
                            "type_traits}, named literally)"};
  std::string code = scannedView(source, Literals::Blank);
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

const std::set<std::string> &kb::verify::allowedHeaders() {
  static const std::set<std::string> allowed = {
      "cuda_fp16.h",     "cuda_bf16.h",    "cuda/std/cstdint",
      "cuda/std/limits", "cuda/std/cmath", "cuda/std/type_traits"};
  return allowed;
}
