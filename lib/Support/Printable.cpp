//===- Printable.cpp - Untrusted text made safe to print ------------------===//
#include "kb/Support/Printable.h"

#include "llvm/Support/JSON.h"

namespace kb {

std::string printable(llvm::StringRef text, bool keepLines) {
  std::string s = llvm::json::fixUTF8(text);
  for (char &c : s) {
    unsigned char u = c;
    if ((u < 0x20 || u == 0x7f) && !(keepLines && (c == '\n' || c == '\t')))
      c = ' ';
  }
  return s;
}

} // namespace kb
