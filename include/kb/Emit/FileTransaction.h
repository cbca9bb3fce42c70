//===- FileTransaction.h - Several files replaced together ------*- C++ -*-===//
//
// A C++ rewrite replaces sources and writes kb_kernels.h/.cu: a source that
// includes a header never written, or half of a two-file run applied, is a
// broken build. POSIX renames one file at a time, so the transaction keeps
// each replaced file aside until every rename has succeeded, and a journal
// lets the next run undo one that was killed between renames.
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_FILETRANSACTION_H
#define KB_EMIT_FILETRANSACTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kb {

class FileTransaction {
public:
  /// `journal`: where commit() records its renames (a file beside the
  /// outputs, the same path every run).
  explicit FileTransaction(std::string journal) : journal(std::move(journal)) {}
  /// The journal of the outputs written into `dir` (every writer of a
  /// directory uses this one, so a later run finds it).
  static std::string journalIn(llvm::StringRef dir);
  ~FileTransaction(); // an uncommitted transaction leaves nothing behind
  FileTransaction(const FileTransaction &) = delete;
  FileTransaction &operator=(const FileTransaction &) = delete;

  /// Writes `text` beside `path` (nothing else changes yet), with the
  /// permissions of the file it replaces.
  llvm::Error stage(llvm::StringRef path, llvm::StringRef text);

  /// Every staged file over its target, or, when one rename fails, every
  /// target as it was before.
  llvm::Error commit();

  /// Undoes a commit that was interrupted (the journal is still there):
  /// the replaced files back, the new ones removed. Returns whether there
  /// was one.
  static llvm::Expected<bool> recover(llvm::StringRef journal);

private:
  struct Entry {
    std::string target, staged, saved; // saved: "" when target was new
  };
  std::string journal;
  std::vector<Entry> entries;
  bool committed = false;
};

} // namespace kb

#endif // KB_EMIT_FILETRANSACTION_H
