//===- PythonLiteral.cpp - Python source text for untrusted strings -------===//
#include "kb/Emit/PythonLiteral.h"

#include "llvm/Support/ConvertUTF.h"

using namespace llvm;

namespace kb {

namespace {

void hexEscape(std::string &out, const char *prefix, unsigned char c) {
  static const char digits[] = "0123456789abcdef";
  out += prefix;
  out += digits[c >> 4];
  out += digits[c & 15];
}

} // namespace

std::string pyEscaped(StringRef s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c < 0x80) {
      if (c == '\\' || c == '"')
        (out += '\\') += char(c);
      else if (c < 0x20 || c == 0x7f)
        hexEscape(out, "\\x", c);
      else
        out += char(c);
      ++i;
      continue;
    }
    unsigned len = getNumBytesForUTF8(c);
    const UTF8 *p = reinterpret_cast<const UTF8 *>(s.data() + i);
    if (i + len <= s.size() && isLegalUTF8Sequence(p, p + len)) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      hexEscape(out, "\\udc", c);
      ++i;
    }
  }
  return out;
}

std::string pyStringLiteral(StringRef s) { return "\"" + pyEscaped(s) + "\""; }

} // namespace kb
