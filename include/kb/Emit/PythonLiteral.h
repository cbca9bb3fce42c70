//===- PythonLiteral.h - Python source text for untrusted strings -*- C++ -*-===//
//
// Names reach generated Python from files a user may not control: a graph's
// file name, params.json's "name" and "source", an output directory. One
// escaper for all of them, so no quote, backslash, newline or undecodable
// byte in a name can end a literal early (and run what follows on import).
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_PYTHONLITERAL_H
#define KB_EMIT_PYTHONLITERAL_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kb {

/// The body of a Python string literal (no quotes) whose value is `s`:
/// backslash and double quote escaped, control characters as \xNN, valid
/// UTF-8 kept as it is, and each byte that is not valid UTF-8 as the lone
/// surrogate \udcNN that os.fsdecode gives it, so a path round-trips through
/// os.fsencode. Also safe inside a """docstring""".
std::string pyEscaped(llvm::StringRef s);

/// A double-quoted Python string literal whose value is `s` (pyEscaped).
std::string pyStringLiteral(llvm::StringRef s);

} // namespace kb

#endif // KB_EMIT_PYTHONLITERAL_H
