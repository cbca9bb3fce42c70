//===- Store.cpp - Verified kernels, by region signature ------------------===//

#include "kb/Model/Store.h"
#include "kb/Support/InputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <regex>

using namespace llvm;
using njson = nlohmann::json;

namespace kb::model {
namespace {

njson toJson(const StoreEntry &e) {
  return {{"signature", e.signature}, {"region", e.region}, {"kind", e.kind},
          {"ops", e.ops},             {"gpu", e.gpu},       {"origin", e.origin},
          {"source", e.source},       {"kernel_ms", e.kernelMs},
          {"stored_at", e.storedAt}};
}

bool isSignature(StringRef s) {
  return s.size() == 64 && llvm::all_of(s, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<StoreEntry> fromFile(StringRef path) {
  auto buf = readInputFile(path);
  if (!buf) {
    consumeError(buf.takeError());
    return std::nullopt;
  }
  njson j = njson::parse((*buf)->getBuffer().str(), nullptr, false);
  if (!j.is_object() || !j.contains("signature") || !j.contains("source") ||
      !j["signature"].is_string())
    return std::nullopt;
  StoreEntry e;
  e.signature = j.value("signature", "");
  // The store's files are anyone's to edit: an entry is its own file's
  // (<signature>.json, a SHA-256 in hex), so paths built from it (get,
  // prune) never leave the store.
  if (!isSignature(e.signature) || sys::path::stem(path) != e.signature)
    return std::nullopt;
  e.region = j.value("region", "");
  e.kind = j.value("kind", "");
  e.ops = j.value("ops", "");
  e.gpu = j.value("gpu", "");
  e.origin = j.value("origin", "");
  e.source = j.value("source", "");
  e.kernelMs = j.value("kernel_ms", 0.0);
  e.storedAt = j.value("stored_at", (int64_t)0);
  return e;
}

} // namespace

std::string KernelStore::defaultDir() {
  SmallString<256> p;
  if (const char *c = getenv("KB_CACHE_DIR"); c && *c)
    p = c;
  else if (const char *h = getenv("HOME"); h && *h) {
    p = h;
    sys::path::append(p, ".cache", "kb-rewrite");
  } else {
    p = ".kb-cache";
  }
  sys::path::append(p, "store");
  return p.str().str();
}

std::string KernelStore::signature(const std::string &kbIR,
                                   const std::string &gpu) {
  // The symbol name and the region id differ between graphs with the same
  // region: leave them out.
  static const std::regex names(R"(@kb_region_[0-9]+|id = [0-9]+ : i64)");
  std::string canonical = std::regex_replace(kbIR, names, "");
  SHA256 h;
  h.update(canonical);
  h.update(StringRef("\0gpu:", 5));
  h.update(gpu);
  return toHex(h.final(), /*LowerCase=*/true);
}

Error KernelStore::put(const StoreEntry &e) {
  if (auto ec = sys::fs::create_directories(dir))
    return createStringError(ec, "cannot create the kernel store '" + dir + "'");
  SmallString<256> path(dir), tmp;
  sys::path::append(path, e.signature + ".json");
  tmp = path;
  tmp += ".tmp";
  StoreEntry stamped = e;
  if (!stamped.storedAt)
    stamped.storedAt = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  {
    std::error_code ec;
    raw_fd_ostream f(tmp, ec);
    if (ec)
      return createStringError(ec, "cannot write '" + tmp + "'");
    f << toJson(stamped).dump(1) << "\n";
  }
  if (auto ec = sys::fs::rename(tmp, path))
    return createStringError(ec, "cannot write '" + path + "'");
  return Error::success();
}

std::optional<StoreEntry> KernelStore::get(const std::string &sig) const {
  if (!isSignature(sig))
    return std::nullopt;
  SmallString<256> path(dir);
  sys::path::append(path, sig + ".json");
  return fromFile(path);
}

Expected<std::vector<StoreEntry>> KernelStore::list() const {
  std::vector<StoreEntry> out;
  if (!sys::fs::exists(dir))
    return out;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (StringRef(it->path()).ends_with(".json"))
      if (auto e = fromFile(it->path()))
        out.push_back(*e);
  if (ec)
    return createStringError(ec, "cannot list the kernel store '" + dir + "'");
  std::sort(out.begin(), out.end(), [](const StoreEntry &a, const StoreEntry &b) {
    return a.storedAt > b.storedAt;
  });
  return out;
}

double KernelStore::similarity(const std::string &opsA,
                               const std::string &opsB) {
  auto bag = [](StringRef chain) {
    std::map<std::string, int> counts;
    SmallVector<StringRef> parts;
    chain.split(parts, "->", -1, /*KeepEmpty=*/false);
    for (StringRef p : parts)
      if (!p.trim().empty())
        ++counts[p.trim().str()];
    return counts;
  };
  auto a = bag(opsA), b = bag(opsB);
  int shared = 0, total = 0;
  for (auto &[op, n] : a) {
    auto it = b.find(op);
    int m = it == b.end() ? 0 : it->second;
    shared += std::min(n, m);
    total += std::max(n, m);
  }
  for (auto &[op, m] : b)
    if (!a.count(op))
      total += m;
  return total ? double(shared) / total : 0.0;
}

Expected<std::vector<StoreEntry>>
KernelStore::similar(const std::string &kind, const std::string &ops,
                     const std::string &gpu, const std::string &exclude,
                     size_t limit) const {
  auto entries = list();
  if (!entries)
    return entries.takeError();
  std::vector<std::pair<double, StoreEntry>> scored;
  for (StoreEntry &e : *entries) {
    if (e.signature == exclude)
      continue;
    double overlap = similarity(ops, e.ops);
    if (overlap == 0 && e.kind != kind)
      continue;
    double score = overlap + (e.kind == kind ? 0.5 : 0) + (e.gpu == gpu ? 0.25 : 0);
    scored.push_back({score, std::move(e)});
  }
  std::sort(scored.begin(), scored.end(), [](const auto &x, const auto &y) {
    if (x.first != y.first)
      return x.first > y.first;
    if (x.second.kernelMs != y.second.kernelMs)
      return x.second.kernelMs < y.second.kernelMs;
    return x.second.signature < y.second.signature;
  });
  std::vector<StoreEntry> out;
  for (auto &[score, e] : scored) {
    if (out.size() == limit)
      break;
    out.push_back(std::move(e));
  }
  return out;
}

Expected<int> KernelStore::prune(int64_t olderThan) const {
  auto entries = list();
  if (!entries)
    return entries.takeError();
  int removed = 0;
  for (const StoreEntry &e : *entries)
    if (olderThan == 0 || e.storedAt < olderThan) {
      SmallString<256> path(dir);
      sys::path::append(path, e.signature + ".json");
      if (!sys::fs::remove(path))
        ++removed;
    }
  return removed;
}

} // namespace kb::model
