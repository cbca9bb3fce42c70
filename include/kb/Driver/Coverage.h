//===- Coverage.h - `kb-rewrite analyze --coverage DIR` ---------*- C++ -*-===//
//
// How much of a set of graphs' memory-bound traffic runs in generated
// kernels, and why the rest does not (docs/analyze.md, "Coverage").
//
//===----------------------------------------------------------------------===//
#ifndef KB_DRIVER_COVERAGE_H
#define KB_DRIVER_COVERAGE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace kb {

/// Where a region's or op's traffic goes.
enum class CoverageState {
  Kernel,       // a generated kernel (verified, or unverified without a GPU)
  NotGenerated, // the code generator has no kernel for it
  Policy,       // kept in ATen by the numerics policy
  Rejected,     // kb-verify rejected the kernel
  Slower,       // verified, not measurably faster than its ATen ops
  Unfused,      // a memory-bound op outside every region
};
llvm::StringRef coverageStateName(CoverageState s);

struct CoverageItem {
  std::string what;   // kb_region_N, or the op's name
  std::string reason; // "" for Kernel
  CoverageState state = CoverageState::Kernel;
  int64_t bytes = 0; // eager traffic: operands read and results written once
};

struct GraphCoverage {
  std::string graph;
  std::string error;       // import or pipeline failure ("" = none)
  bool fromReport = false; // statuses read from a rewrite's report.json
  std::vector<CoverageItem> items;
};

/// Regions and unfused memory-bound ops of one imported graph. When
/// `reportJson` (a `kb-rewrite rewrite` report.json of the same graph) is
/// given, the regions' statuses come from it (verification and speed);
/// otherwise from the code generator and the numerics policy.
GraphCoverage graphCoverage(mlir::ModuleOp module, llvm::StringRef graph,
                            const llvm::json::Object *reportJson);

struct CoverageSummary {
  struct Reason {
    CoverageState state;
    int count = 0;
    int64_t bytes = 0;
  };
  int graphs = 0, failed = 0, regions = 0, regionsWithKernel = 0;
  int64_t bytes = 0, bytesInKernels = 0;
  std::map<std::string, Reason> reasons; // reason -> regions/ops and bytes
  /// The reasons, most bytes first.
  std::vector<std::pair<std::string, Reason>> byBytes() const;
};
CoverageSummary summarizeCoverage(const std::vector<GraphCoverage> &graphs);

llvm::json::Value coverageJson(const std::vector<GraphCoverage> &graphs);
void printCoverage(const std::vector<GraphCoverage> &graphs,
                   llvm::raw_ostream &os);

} // namespace kb

#endif // KB_DRIVER_COVERAGE_H
