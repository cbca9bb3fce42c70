//===- Printable.h - Untrusted text made safe to print ----------*- C++ -*-===//
//
// Text from a model server, a kernel store entry or a lock file reaches the
// user's terminal and JSON files: as valid UTF-8 (invalid bytes as U+FFFD),
// with control characters (terminal escape sequences) as spaces.
//
//===----------------------------------------------------------------------===//
#ifndef KB_SUPPORT_PRINTABLE_H
#define KB_SUPPORT_PRINTABLE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kb {

/// `text` as valid UTF-8 whose control characters (ESC included) are
/// spaces; with `keepLines`, newlines and tabs stay (a kernel's source).
std::string printable(llvm::StringRef text, bool keepLines = false);

/// `text` when it has at most `maxBytes` bytes, else its longest prefix
/// that ends at a word's end (or, in one long word, at a UTF-8 character's
/// end) within `maxBytes`, followed by " ...": reports shorten messages,
/// and a cut mid-word or mid-character reads as a different word.
std::string clipText(llvm::StringRef text, size_t maxBytes);

} // namespace kb

#endif // KB_SUPPORT_PRINTABLE_H
