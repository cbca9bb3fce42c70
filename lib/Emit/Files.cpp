//===- Files.cpp - Files written whole or not at all ----------------------===//
#include "kb/Emit/Files.h"
#include "kb/Support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace kb {

Error ioError(const Twine &path, const Twine &verb, const Twine &reason) {
  std::string r = reason.str();
  return createStringError(inconvertibleErrorCode(),
                           "cannot " + verb + " '" + path + "'" +
                               (r.empty() ? "" : ": " + r));
}

Error writeWholeFile(StringRef path, StringRef text) {
  std::error_code ec;
  raw_fd_ostream f(path, ec);
  if (ec)
    return ioError(path, "write", ec.message());
  f << text;
  f.close();
  // A full disk shows here, not at `<<`.
  if (f.has_error()) {
    std::string reason = f.error().message();
    f.clear_error();
    sys::fs::remove(path);
    return ioError(path, "write", reason);
  }
  return Error::success();
}

Error writeFileAtomic(StringRef dir, StringRef name, StringRef text) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  SmallString<256> tmp(path);
  tmp += ".tmp";
  if (Error err = writeWholeFile(tmp, text)) // the target stays as it was
    return err;
  if (auto ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return ioError(path, "write", ec.message());
  }
  return Error::success();
}

Expected<std::string> readTextFile(StringRef path) {
  return readInputText(path);
}

} // namespace kb
