//===- InputFile.cpp - The one way kb tools read an input file ------------===//
#include "kb/Support/InputFile.h"

#include "llvm/Support/FileSystem.h"

using namespace llvm;

namespace kb {

Error checkInputFile(StringRef path, uint64_t maxBytes) {
  // Checked before opening: opening a FIFO for reading blocks until a
  // writer comes, and a device may never end.
  sys::fs::file_status st;
  if (std::error_code ec = sys::fs::status(path, st))
    return createStringError(ec, "cannot read '" + path + "': " + ec.message());
  if (st.type() != sys::fs::file_type::regular_file)
    return createStringError(
        std::make_error_code(std::errc::invalid_argument),
        "cannot read '" + path +
            "': not a regular file (a directory, FIFO, device or socket); "
            "name a file");
  if (st.getSize() > maxBytes)
    return createStringError(
        std::make_error_code(std::errc::file_too_large),
        "cannot read '" + path + "': " + std::to_string(st.getSize()) +
            " bytes, more than the " + std::to_string(maxBytes) +
            " an input may have");
  return Error::success();
}

Expected<std::unique_ptr<MemoryBuffer>>
readInputFile(StringRef path, bool allowStdin, uint64_t maxBytes) {
  if (allowStdin && path == "-") {
    auto buf = MemoryBuffer::getSTDIN();
    if (!buf)
      return createStringError(buf.getError(), "cannot read standard input: " +
                                                   buf.getError().message());
    return std::move(*buf);
  }
  if (Error e = checkInputFile(path, maxBytes))
    return std::move(e);
  auto buf = MemoryBuffer::getFile(path);
  if (!buf)
    return createStringError(buf.getError(), "cannot read '" + path +
                                                 "': " +
                                                 buf.getError().message());
  return std::move(*buf);
}

Expected<std::string> readInputText(StringRef path, uint64_t maxBytes) {
  auto buf = readInputFile(path, /*allowStdin=*/false, maxBytes);
  if (!buf)
    return buf.takeError();
  return (*buf)->getBuffer().str();
}

} // namespace kb
