//===- FileTransaction.cpp - Several files replaced together --------------===//
#include "kb/Emit/FileTransaction.h"
#include "kb/Emit/Files.h"
#include "kb/Support/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace kb {

namespace {

/// Puts back what a (partial) commit replaced, last rename first.
void rollBack(const std::vector<std::pair<std::string, std::string>> &done) {
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    const auto &[target, saved] = *it;
    if (saved.empty())
      sys::fs::remove(target);
    else
      sys::fs::rename(saved, target);
  }
}

} // namespace

std::string FileTransaction::journalIn(StringRef dir) {
  SmallString<256> p(dir);
  sys::path::append(p, ".kb-rewrite-journal");
  return p.str().str();
}

FileTransaction::~FileTransaction() {
  if (!committed)
    for (const Entry &e : entries)
      sys::fs::remove(e.staged);
}

Error FileTransaction::stage(StringRef path, StringRef text) {
  sys::fs::file_status st;
  bool exists = !sys::fs::status(path, st) && sys::fs::exists(st);
  if (exists && st.type() != sys::fs::file_type::regular_file)
    return ioError(path, "replace",
                   "not a regular file; nothing was changed");
  std::string staged = (path + ".kb-new").str();
  if (Error err = writeWholeFile(staged, text))
    return err;
  Entry e{path.str(), staged, ""};
  if (exists) {
    e.saved = (path + ".kb-prev").str();
    sys::fs::setPermissions(staged, st.permissions());
  }
  entries.push_back(std::move(e));
  return Error::success();
}

Error FileTransaction::commit() {
  json::Array list;
  for (const Entry &e : entries)
    list.push_back(json::Object{
        {"target", e.target}, {"staged", e.staged}, {"saved", e.saved}});
  std::string text;
  raw_string_ostream(text) << json::Value(std::move(list));
  if (Error err = writeFileAtomic(sys::path::parent_path(journal),
                                  sys::path::filename(journal), text))
    return err;
  std::vector<std::pair<std::string, std::string>> done;
  for (const Entry &e : entries) {
    std::error_code ec;
    if (!e.saved.empty())
      ec = sys::fs::rename(e.target, e.saved);
    if (!ec) {
      ec = sys::fs::rename(e.staged, e.target);
      if (ec && !e.saved.empty())
        sys::fs::rename(e.saved, e.target);
    }
    if (ec) {
      rollBack(done);
      for (const Entry &x : entries)
        sys::fs::remove(x.staged);
      sys::fs::remove(journal);
      committed = true;
      return ioError(e.target, "replace",
                     ec.message() + "; every file was put back as it was");
    }
    done.push_back({e.target, e.saved});
  }
  for (const Entry &e : entries)
    if (!e.saved.empty())
      sys::fs::remove(e.saved);
  sys::fs::remove(journal);
  committed = true;
  return Error::success();
}

Expected<bool> FileTransaction::recover(StringRef journal) {
  if (!sys::fs::exists(journal))
    return false;
  auto text = readInputText(journal);
  if (!text)
    return text.takeError();
  auto parsed = json::parse(*text);
  const json::Array *list = parsed ? parsed->getAsArray() : nullptr;
  if (!list) {
    if (!parsed)
      consumeError(parsed.takeError());
    return ioError(journal, "recover from",
                   "not a kb-rewrite journal; remove it after checking the "
                   "files it names");
  }
  std::vector<std::pair<std::string, std::string>> done;
  for (const json::Value &v : *list) {
    const json::Object *o = v.getAsObject();
    if (!o)
      continue;
    std::string target = o->getString("target").value_or("").str();
    std::string staged = o->getString("staged").value_or("").str();
    std::string saved = o->getString("saved").value_or("").str();
    // A target the commit got to: its old file is aside (saved exists), or
    // it was new and its staged file is gone into it. Any other target is
    // still the file it was.
    bool replaced = saved.empty()
                        ? !sys::fs::exists(staged) && sys::fs::exists(target)
                        : sys::fs::exists(saved);
    sys::fs::remove(staged);
    if (replaced)
      done.push_back({target, saved});
  }
  rollBack(done);
  sys::fs::remove(journal);
  return true;
}

} // namespace kb
