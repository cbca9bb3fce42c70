//===- Printable.cpp - Untrusted text made safe to print ------------------===//
#include "kb/Support/Printable.h"

#include "llvm/ADT/StringExtras.h"
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

std::string clipText(llvm::StringRef text, size_t maxBytes) {
  if (text.size() <= maxBytes)
    return text.str();
  size_t cut = maxBytes;
  // A UTF-8 continuation byte (10xxxxxx) is the middle of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  // Back to the last space when the cut is inside a word, unless that
  // would drop more than half of what fits.
  if (!llvm::isSpace(text[cut])) {
    size_t space = text.take_front(cut).find_last_of(" \t\n");
    if (space != llvm::StringRef::npos && space >= maxBytes / 2)
      cut = space;
  }
  return text.take_front(cut).rtrim(" \t\n,;:").str() + " ...";
}

} // namespace kb
