//===- AnalysisReport.h - `kb-rewrite analyze` output -----------*- C++ -*-===//
#ifndef KB_EMIT_ANALYSISREPORT_H
#define KB_EMIT_ANALYSISREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace kb {

struct RegionReport {
  int64_t id;
  std::optional<std::string> anchor;
  std::vector<std::string> ops;
  std::vector<std::vector<int64_t>> outputShapes;
  std::string dtype;
  int64_t bytesUnfused = 0, bytesFused = 0;
  std::string location, sourceLocation;
};

struct UnfusedReport {
  std::string op, reason, location, sourceLocation;
};

struct AnalysisReport {
  std::string graph;
  int64_t numOps = 0;              // as imported
  int64_t numOpsAfterSimplify = 0; // what regions were formed from
  int64_t numAnchors = 0;
  std::vector<RegionReport> regions;
  std::vector<UnfusedReport> unfused;

  llvm::json::Value toJSON() const;
  void printTable(llvm::raw_ostream &os) const;
};

/// kb.aten and kb.opaque ops in `module`.
int64_t countOps(mlir::ModuleOp module);

/// Reads kb.region ops (after --kb-form-regions) and kb.unfused notes.
/// `numOps` is filled in by the caller from the module before the passes.
AnalysisReport buildAnalysisReport(mlir::ModuleOp module,
                                   llvm::StringRef graphName);

/// "file:line" of the graph op, and the Python source line if recorded.
std::pair<std::string, std::string> describeLocation(mlir::Location loc);

} // namespace kb

#endif // KB_EMIT_ANALYSISREPORT_H
