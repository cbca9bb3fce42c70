//===- PtxCheck.cpp - What the compiled kernel may not do -----------------===//
//
// The source's spelling can hide a construct (inline PTX in a string,
// macros, token pasting); NVRTC's PTX cannot. Checked here: clock and
// timer reads, calls to the device heap, printf and device-side launches,
// and state kept between launches in module-scope global variables.
//
//===----------------------------------------------------------------------===//

#include "kb/Verify/Checks.h"

#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <vector>

using namespace kb::verify;

namespace {

/// One PTX statement (an instruction or a directive, without its ';'), and
/// the function body it is in (0: module scope).
struct Statement {
  std::string text;
  int scope;
};

/// Splits PTX into statements. Braces open a scope when a statement is
/// empty (an inline-asm block) or is a function's header; inside an
/// instruction (vector operands `{%r1, %r2}`) or after '=' (an
/// initializer) they belong to the statement. Comments are dropped and
/// leading labels stripped; .version, .target, .address_size, .file, .loc
/// and .section end at their line's end.
std::vector<Statement> statements(const std::string &ptx) {
  std::vector<Statement> out;
  std::string cur;
  int depth = 0, scope = 0, nextScope = 0, inner = 0;
  auto trimmed = [](const std::string &s) {
    size_t a = s.find_first_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a);
  };
  // The statement without the labels before it ($L__BB0_5: { ...).
  auto unlabelled = [&](const std::string &text) {
    static const std::regex label(R"(^\s*[$A-Za-z_][\w$]*\s*:)");
    std::string t = trimmed(text);
    std::smatch m;
    while (std::regex_search(t, m, label))
      t = trimmed(t.substr(m.length()));
    return t;
  };
  auto emit = [&] {
    std::string t = unlabelled(cur);
    if (!t.empty())
      out.push_back({t, scope});
    cur.clear();
  };
  for (size_t i = 0; i < ptx.size(); ++i) {
    char c = ptx[i];
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '/') {
      // To the line's end, whose newline is read next: it may end a
      // directive (`.target sm_90 // ...`).
      i = ptx.find('\n', i);
      if (i == std::string::npos)
        break;
      --i;
      continue;
    }
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '*') {
      size_t e = ptx.find("*/", i + 2);
      if (e == std::string::npos)
        break;
      i = e + 1;
      cur += ' ';
      continue;
    }
    // Directives that end at the line's end, not at a ';'.
    if (c == '\n' && !inner) {
      static const std::regex lineDirective(
          R"(^\s*\.(version|target|address_size|file|loc|section)\b)");
      if (std::regex_search(cur, lineDirective)) {
        emit();
        continue;
      }
    }
    if (c == '{' && !inner) {
      std::string t = unlabelled(cur);
      if (t.empty() || (t[0] == '.' && t.find('=') == std::string::npos)) {
        emit();
        if (depth++ == 0)
          scope = ++nextScope;
        continue;
      }
    }
    if (c == '{') {
      ++inner;
    } else if (c == '}' && inner) {
      --inner;
    } else if (c == '}') {
      emit();
      if (depth > 0 && --depth == 0)
        scope = 0;
      continue;
    } else if (c == ';' && !inner) {
      emit();
      continue;
    }
    cur += c;
  }
  emit();
  return out;
}

bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

/// Whether `text` names `name` as a whole identifier.
bool names(const std::string &text, const std::string &name) {
  for (size_t at = text.find(name); at != std::string::npos;
       at = text.find(name, at + 1))
    if ((at == 0 || !identChar(text[at - 1])) &&
        (at + name.size() >= text.size() || !identChar(text[at + name.size()])))
      return true;
  return false;
}

/// The registers (%name) in `text`.
std::vector<std::string> registers(const std::string &text) {
  static const std::regex reg(R"(%[A-Za-z_$][\w$]*)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), reg);
       it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

/// A statement as the address tracking reads it, parsed once.
struct Instruction {
  const Statement *stmt;
  std::string text;       // without its guard predicate (@%p1, @!%p1)
  bool directive;         // starts with '.'
  std::string op;         // the opcode up to its first '.'
  bool split;             // its operands hold a ','
  std::string dest, srcs; // the operands before and after the first ','
  std::vector<std::string> regs, destRegs, srcRegs;
};

std::vector<Instruction> instructions(const std::vector<Statement> &stmts) {
  // A guard predicate is a condition, never an address.
  static const std::regex guard(R"(^@!?%[\w$]+\s+)");
  std::vector<Instruction> out;
  for (const Statement &s : stmts) {
    Instruction in;
    in.stmt = &s;
    in.text = s.text;
    std::smatch gm;
    if (std::regex_search(in.text, gm, guard))
      in.text = in.text.substr(gm.length());
    in.directive = in.text[0] == '.';
    in.regs = registers(in.text);
    size_t sp = in.text.find_first_of(" \t\r\n");
    std::string opcode = in.text.substr(0, sp);
    in.op = opcode.substr(0, opcode.find('.'));
    std::string operands = sp == std::string::npos ? "" : in.text.substr(sp);
    size_t comma = operands.find(',');
    in.split = comma != std::string::npos;
    if (in.split) {
      in.dest = operands.substr(0, comma);
      in.srcs = operands.substr(comma + 1);
      in.destRegs = registers(in.dest);
      in.srcRegs = registers(in.srcs);
    }
    out.push_back(std::move(in));
  }
  return out;
}

/// Where the address of module-scope variable `name` may go. Its address
/// (a register holding it, or anything computed from such a register) may
/// be moved, converted and offset, and loaded from; it may not be stored
/// to, updated atomically, stored as a value, passed to a call or named by
/// another declaration: through any of those the variable could hold state
/// between launches. The math library's tables (`__cudart_i2opi_f`, read
/// by sinf/cosf's argument reduction through a pointer it increments) are
/// only loaded from. Returns the offending statement.
std::optional<std::string> escapes(const std::vector<Instruction> &code,
                                   const std::string &name,
                                   const std::string &declaration) {
  // Per function body: registers holding the address or one derived from
  // it (flow-insensitive, so a superset).
  std::map<int, std::set<std::string>> tainted;
  static const std::set<std::string> pure = {
      "mov", "cvta", "cvt", "add", "sub", "mul", "mad", "shl",
      "shr", "and",  "or",  "xor", "min", "max", "selp"};
  auto anyOf = [](const std::vector<std::string> &regs,
                  const std::set<std::string> &t) {
    for (const std::string &r : regs)
      if (t.count(r))
        return true;
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const Instruction &in : code) {
      if (in.stmt->text == declaration)
        continue;
      std::set<std::string> &t = tainted[in.stmt->scope];
      if (!names(in.text, name) && !anyOf(in.regs, t))
        continue;
      if (in.directive)
        return in.stmt->text; // another declaration names it
      if (in.op == "ld")
        continue; // loads from it; the loaded value is data
      if (in.op == "setp")
        continue; // a predicate from it (a loop's end)
      if (!pure.count(in.op) || !in.split)
        return in.stmt->text;
      // The destination (one register or a vector of them) is derived when
      // a source is.
      if (!names(in.srcs, name) && !anyOf(in.srcRegs, t))
        continue;
      if (names(in.dest, name))
        return in.stmt->text;
      for (const std::string &r : in.destRegs)
        changed = t.insert(r).second || changed;
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<Rejection> kb::verify::ptxCheck(const std::string &ptx) {
  static const std::regex timer(R"(%(globaltimer(_lo|_hi)?|clock(64|_hi)?)\b)");
  static const std::regex calls(
      R"(\.extern\s+\.func[^;]*?\b(malloc|free|vprintf|cudaLaunchDevice\w*|)"
      R"(cudaGetParameterBuffer\w*|cudaMalloc\w*|cudaFree\w*|)"
      R"(cudaDeviceSynchronize\w*|cudaStream\w*|cudaGraph\w*)\b)");
  // A module-scope variable in global memory outlives the launch: the one
  // place a kernel could keep a launch counter or results to replay (the
  // workspace is zeroed before every launch; out-of-bounds slack is
  // guarded). One that is only read is no state (a header's helper that
  // -default-device made a device variable, the math library's tables);
  // one whose address reaches a store, an atomic, a call or memory is.
  // `__constant__` tables (.const) cannot be written by kernels.
  static const std::regex moduleGlobal(
      R"(^(\.(visible|weak|extern|common)\s+)*\.global\s[^=]*?([A-Za-z_$%][\w$]*)\s*(\[[^\]]*\])?\s*(=|$))");
  std::vector<Statement> stmts = statements(ptx);
  std::vector<Instruction> code = instructions(stmts);
  for (const Statement &s : stmts) {
    std::smatch m;
    if (s.scope != 0 || !std::regex_search(s.text, m, moduleGlobal))
      continue;
    std::string name = m[3].str();
    if (auto bad = escapes(code, name, s.text))
      return Rejection{
          VerdictStatus::ForbiddenConstruct,
          "the compiled kernel writes, or lets escape the address of, '" +
              name + "', a variable in global memory at module scope (`" +
              bad->substr(0, 80) +
              "`): state kept between launches is not allowed (launch "
              "counters, cached results); use __constant__ for constant "
              "tables"};
  }
  std::smatch m;
  if (std::regex_search(ptx, m, timer))
    return Rejection{VerdictStatus::ForbiddenConstruct,
                     "the compiled kernel reads " + m[0].str() +
                         " (clocks and timers are not allowed)"};
  if (std::regex_search(ptx, m, calls))
    return Rejection{VerdictStatus::ForbiddenConstruct,
                     "the compiled kernel calls " + m[1].str() +
                         " (device heap, printf and device-side launches are "
                         "not allowed)"};
  return std::nullopt;
}
