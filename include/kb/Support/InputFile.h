//===- InputFile.h - The one way kb tools read an input file ----*- C++ -*-===//
//
// Graphs, params.json, sources, lock files, stores, transcripts and prompt
// templates are named by users (or by files they did not write). A FIFO or
// a device under such a name would block a run forever or never end, and a
// file of gigabytes would exhaust memory: every input goes through here and
// must be a regular file of bounded size ("-" is standard input where a
// command documents it).
//
//===----------------------------------------------------------------------===//
#ifndef KB_SUPPORT_INPUTFILE_H
#define KB_SUPPORT_INPUTFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace kb {

/// The largest input read: 1 GiB (a traced graph of a large model is a few
/// MB; a transcript of a long session some hundred).
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;

/// The file's contents, or an error naming the path and what to do: it
/// does not exist or cannot be read, it is not a regular file (a FIFO,
/// device, socket or directory), or it is larger than maxBytes. `allowStdin`
/// reads standard input for "-".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, bool allowStdin = false,
              uint64_t maxBytes = kMaxInputBytes);

/// readInputFile's checks without reading: for files another component
/// opens (Clang reads C++ sources itself).
llvm::Error checkInputFile(llvm::StringRef path,
                           uint64_t maxBytes = kMaxInputBytes);

/// readInputFile's contents as a string.
llvm::Expected<std::string> readInputText(llvm::StringRef path,
                                          uint64_t maxBytes = kMaxInputBytes);

} // namespace kb

#endif // KB_SUPPORT_INPUTFILE_H
