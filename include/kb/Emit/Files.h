//===- Files.h - Files written whole or not at all --------------*- C++ -*-===//
#ifndef KB_EMIT_FILES_H
#define KB_EMIT_FILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kb {

/// "cannot <verb> '<path>': <reason>".
llvm::Error ioError(const llvm::Twine &path, const llvm::Twine &verb,
                    const llvm::Twine &reason = "");

/// Writes `path` and checks that every byte reached the file (a full disk
/// shows at close); on failure the partial file is removed.
llvm::Error writeWholeFile(llvm::StringRef path, llvm::StringRef text);

/// Writes `dir`/`name` through a temporary file and a rename: a failed run
/// never leaves a half-written file behind.
llvm::Error writeFileAtomic(llvm::StringRef dir, llvm::StringRef name,
                            llvm::StringRef text);

/// The whole of `path`.
llvm::Expected<std::string> readTextFile(llvm::StringRef path);

} // namespace kb

#endif // KB_EMIT_FILES_H
