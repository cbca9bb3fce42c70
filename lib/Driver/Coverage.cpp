//===- Coverage.cpp - `kb-rewrite analyze --coverage DIR` -----------------===//
//
// Byte accounting as in analyze (AnalysisReport.cpp): eager traffic, every
// op reading each tensor operand and writing each result once. The graph's
// memory-bound traffic is that of its regions' ops (anchors excluded) plus
// that of the ops left outside every region that move data (copies, opaque
// ops); views, host arithmetic, TorchScript's list and tuple ops,
// allocations and library anchors count nothing.
//
//===----------------------------------------------------------------------===//
#include "kb/Driver/Coverage.h"
#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Driver/NumericsPolicy.h"
#include "kb/Emit/AnalysisReport.h"
#include "kb/IR/KbDialect.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Support/Printable.h"
#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

using namespace llvm;

namespace kb {

StringRef coverageStateName(CoverageState s) {
  switch (s) {
  case CoverageState::Kernel:
    return "kernel";
  case CoverageState::NotGenerated:
    return "not generated";
  case CoverageState::Policy:
    return "numerics policy";
  case CoverageState::Rejected:
    return "rejected by kb-verify";
  case CoverageState::Slower:
    return "not faster";
  case CoverageState::Unfused:
    return "outside regions";
  }
  return "?";
}

namespace {

/// Data an op outside every region moves: none for views, identities and
/// host or 0-d arithmetic; operands and results for anything else that is
/// not a library anchor.
int64_t unfusedBytes(mlir::Operation *op) {
  OpKind kind = getKind(op);
  if (kind == OpKind::Anchor || kind == OpKind::Host)
    return 0;
  // TorchScript's structural ops (lists, tuples) and allocations move
  // nothing themselves.
  if (auto opaque = dyn_cast<OpaqueOp>(op)) {
    StringRef name = opaque.getName();
    if (name.starts_with("prim::") || name == "aten::empty" ||
        name == "aten::new_empty" || name == "aten::empty_like")
      return 0;
  }
  if (auto aten = dyn_cast<AtenOp>(op)) {
    auto overloads = lookupOverloads(aten.getName());
    if (!overloads.empty() && (overloads.front()->style == OpStyle::View ||
                               overloads.front()->style == OpStyle::Identity))
      return 0;
  }
  if (op->getNumResults() == 0 || !hasStaticShape(op->getResult(0).getType()) ||
      cast<mlir::RankedTensorType>(op->getResult(0).getType()).getRank() == 0)
    return 0;
  int64_t bytes = 0;
  for (mlir::Value v : op->getOperands())
    bytes += tensorBytes(v.getType());
  for (mlir::Value v : op->getResults())
    bytes += tensorBytes(v.getType());
  return bytes;
}

/// "kb_region_3: reduction op 'aten::x' is not generated yet" -> the part
/// after the region's name, so that equal reasons group across graphs.
std::string reasonText(StringRef detail) {
  static const Regex prefix("^kb_region_[0-9]+(_cl)?: ");
  std::string text = prefix.sub("", detail);
  StringRef first = StringRef(text).split('\n').first;
  return clipText(first, 160);
}

/// "a norm whose result reaches a step op (aten::ge): ..." -> "a norm whose
/// result reaches a step op": the rule, without this region's particulars.
std::string ruleOf(StringRef detail) {
  return StringRef(reasonText(detail)).split(" (").first.split(':').first.str();
}

CoverageState stateOfStatus(StringRef status) {
  if (status == "verified" || status == "unverified")
    return CoverageState::Kernel;
  if (status == "kept")
    return CoverageState::Policy;
  if (status == "slower")
    return CoverageState::Slower;
  if (status == "rejected" || status == "compile_error")
    return CoverageState::Rejected;
  return CoverageState::NotGenerated;
}

} // namespace

GraphCoverage graphCoverage(mlir::ModuleOp module, StringRef graph,
                            const json::Object *reportJson) {
  GraphCoverage g;
  g.graph = graph.str();
  mlir::PassManager pm(module.getContext());
  // The regions `rewrite` forms by default, so that a report's region names
  // are these regions.
  buildAnalysisPipeline(pm, /*normsBeforeTF32=*/false,
                        /*reductionsBeforeSteps=*/false);
  if (mlir::failed(pm.run(module))) {
    g.error = "the analysis pipeline failed";
    return g;
  }
  AnalysisReport analysis = buildAnalysisReport(module, graph);
  std::map<std::string, int64_t> regionBytes;
  for (const RegionReport &r : analysis.regions)
    regionBytes["kb_region_" + std::to_string(r.id)] = r.bytesUnfused;
  module.walk([&](mlir::Operation *op) {
    if (!op->hasAttr("kb.unfused"))
      return;
    if (int64_t bytes = unfusedBytes(op)) {
      CoverageItem item;
      item.what = displayName(op);
      item.reason = item.what + ": " +
                    op->getAttrOfType<mlir::StringAttr>("kb.unfused").str();
      item.state = CoverageState::Unfused;
      item.bytes = bytes;
      g.items.push_back(std::move(item));
    }
  });

  // Statuses from a rewrite's report, when there is one.
  std::map<std::string, std::pair<std::string, std::string>> reported;
  if (reportJson)
    if (const json::Array *regions = reportJson->getArray("regions"))
      for (const json::Value &v : *regions)
        if (const json::Object *o = v.getAsObject())
          reported[o->getString("name").value_or("").str()] = {
              o->getString("status").value_or("").str(),
              o->getString("detail").value_or("").str()};
  g.fromReport = !reported.empty();

  mlir::PassManager outline(module.getContext());
  buildOutliningPipeline(outline);
  if (mlir::failed(outline.run(module))) {
    g.error = "the outline pass failed";
    return g;
  }
  std::map<std::string, NumericsFacts> numerics = numericsFacts(module);
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    CoverageItem item;
    item.what = kernel.getSymName().str();
    item.bytes = regionBytes[item.what];
    if (auto it = reported.find(item.what); it != reported.end()) {
      item.state = stateOfStatus(it->second.first);
      // Group by the kind of reason, not by each region's figures.
      if (item.state == CoverageState::Slower)
        item.reason = "verified, not measurably faster than its ATen ops";
      else if (item.state == CoverageState::Policy ||
               item.state == CoverageState::Rejected)
        item.reason = ruleOf(it->second.second);
      else if (item.state != CoverageState::Kernel)
        item.reason = reasonText(it->second.second);
    } else if (auto k = emitKernel(kernel)) {
      // As rewrite decides: exact math or ATen's order may pass the policy.
      EmitOptions options;
      if (auto kept = kernelUnderNumericsPolicy(kernel, *k, options,
                                                numerics[item.what],
                                                /*fuseBeforeTF32=*/false)) {
        item.state = CoverageState::Policy;
        item.reason = ruleOf(*kept);
      }
    } else {
      item.state = CoverageState::NotGenerated;
      item.reason = reasonText(toString(k.takeError()));
    }
    if (item.state != CoverageState::Kernel && item.reason.empty())
      item.reason = coverageStateName(item.state).str();
    g.items.push_back(std::move(item));
  }
  return g;
}

CoverageSummary summarizeCoverage(const std::vector<GraphCoverage> &graphs) {
  CoverageSummary s;
  for (const GraphCoverage &g : graphs) {
    ++s.graphs;
    if (!g.error.empty()) {
      ++s.failed;
      continue;
    }
    for (const CoverageItem &i : g.items) {
      bool region = i.state != CoverageState::Unfused;
      s.regions += region;
      s.bytes += i.bytes;
      if (i.state == CoverageState::Kernel) {
        ++s.regionsWithKernel;
        s.bytesInKernels += i.bytes;
        continue;
      }
      CoverageSummary::Reason &r = s.reasons[i.reason];
      r.state = i.state;
      ++r.count;
      r.bytes += i.bytes;
    }
  }
  return s;
}

std::vector<std::pair<std::string, CoverageSummary::Reason>>
CoverageSummary::byBytes() const {
  std::vector<std::pair<std::string, Reason>> sorted(reasons.begin(),
                                                     reasons.end());
  llvm::stable_sort(sorted, [](const auto &a, const auto &b) {
    return a.second.bytes > b.second.bytes;
  });
  return sorted;
}

json::Value coverageJson(const std::vector<GraphCoverage> &graphs) {
  CoverageSummary s = summarizeCoverage(graphs);
  json::Array reasons, perGraph;
  for (const auto &[reason, r] : s.byBytes())
    reasons.push_back(json::Object{{"reason", reason},
                                   {"state", coverageStateName(r.state)},
                                   {"count", r.count},
                                   {"bytes", r.bytes}});
  for (const GraphCoverage &g : graphs) {
    json::Array items;
    for (const CoverageItem &i : g.items)
      items.push_back(json::Object{{"what", i.what},
                                   {"state", coverageStateName(i.state)},
                                   {"reason", i.reason},
                                   {"bytes", i.bytes}});
    json::Object o{{"graph", g.graph},
                   {"from_report", g.fromReport},
                   {"items", std::move(items)}};
    if (!g.error.empty())
      o["error"] = g.error;
    perGraph.push_back(std::move(o));
  }
  return json::Object{
      {"schema_version", 1},
      {"graphs", s.graphs},
      {"failed", s.failed},
      {"regions", s.regions},
      {"regions_with_kernel", s.regionsWithKernel},
      {"memory_bound_bytes", s.bytes},
      {"bytes_in_kernels", s.bytesInKernels},
      {"share_in_kernels",
       s.bytes ? (double)s.bytesInKernels / (double)s.bytes : 0.0},
      {"no_kernel", std::move(reasons)},
      {"per_graph", std::move(perGraph)}};
}

void printCoverage(const std::vector<GraphCoverage> &graphs, raw_ostream &os) {
  CoverageSummary s = summarizeCoverage(graphs);
  os << formatv("kb-rewrite analyze --coverage: {0} graphs ({1} failed to "
                "import or analyze), {2} regions, {3} with a kernel\n",
                s.graphs, s.failed, s.regions, s.regionsWithKernel);
  auto size = [](int64_t b) {
    return b >= 1000000000 ? formatv("{0:F2} GB", b / 1e9).str()
                           : formatv("{0:F2} MB", b / 1e6).str();
  };
  os << formatv("memory-bound traffic: {0}, {1} of it ({2:F1}%) in generated "
                "kernels\n\n",
                size(s.bytes), size(s.bytesInKernels),
                s.bytes ? 100.0 * s.bytesInKernels / s.bytes : 0.0);
  auto sorted = s.byBytes();
  if (sorted.empty())
    return;
  os << format("%-7s %-8s %-22s %s\n", "count", "share", "state",
               "reason (no kernel)");
  for (const auto &[reason, r] : sorted)
    os << format("%-7d %6.1f%%  %-22s %s\n", r.count,
                 s.bytes ? 100.0 * r.bytes / s.bytes : 0.0,
                 coverageStateName(r.state).str().c_str(), reason.c_str());
  for (const GraphCoverage &g : graphs)
    if (!g.error.empty())
      os << "failed: " << g.graph << ": " << g.error << "\n";
}

} // namespace kb
