//===- Store.h - Verified kernels, by region signature ----------*- C++ -*-===//
//
// Kernels kb-verify accepted, keyed by the region's signature (its ops with
// their attributes, the shapes, the dtype) and the GPU they were verified
// on. A rewrite offers a stored kernel for the same signature as a candidate
// (verified again, never trusted blindly) and stores every newly accepted
// model kernel. One JSON file per entry under the store directory
// ($KB_CACHE_DIR/store, default ~/.cache/kb-rewrite/store).
//
//===----------------------------------------------------------------------===//
#ifndef KB_MODEL_STORE_H
#define KB_MODEL_STORE_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kb::model {

struct StoreEntry {
  std::string signature; // sha256 of the canonical region text + gpu
  std::string region;    // kb_region_N where it was first verified
  std::string kind, ops, gpu, origin, source;
  double kernelMs = 0;
  int64_t storedAt = 0; // unix seconds
};

class KernelStore {
public:
  explicit KernelStore(std::string dir) : dir(std::move(dir)) {}
  static std::string defaultDir();
  /// sha256 over the kb IR of the region (shapes, dtypes and attributes
  /// included, symbol name excluded) and the GPU name.
  static std::string signature(const std::string &kbIR, const std::string &gpu);

  llvm::Error put(const StoreEntry &e);
  std::optional<StoreEntry> get(const std::string &signature) const;
  llvm::Expected<std::vector<StoreEntry>> list() const;
  /// Entries like a region (the agent's retrieval step), most similar first:
  /// op overlap (Jaccard over the op multisets of "a -> b -> c" chains),
  /// plus the same kind and the same GPU; entries sharing neither an op nor
  /// the kind are left out, as is `exclude` (the region's own signature).
  /// Ties: the faster kernel, then the signature (deterministic prompts).
  llvm::Expected<std::vector<StoreEntry>>
  similar(const std::string &kind, const std::string &ops,
          const std::string &gpu, const std::string &exclude,
          size_t limit) const;
  static double similarity(const std::string &opsA, const std::string &opsB);
  /// Removes entries stored before `olderThan` (unix seconds); all when 0.
  llvm::Expected<int> prune(int64_t olderThan) const;
  const std::string &path() const { return dir; }

private:
  std::string dir;
};

} // namespace kb::model

#endif // KB_MODEL_STORE_H
