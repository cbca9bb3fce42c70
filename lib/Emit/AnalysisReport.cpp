//===- AnalysisReport.cpp - `kb-rewrite analyze` output -------------------===//
//
// Byte accounting (documented in docs/analyze.md): the anchor's own traffic is
// identical fused or not and is left out of both numbers.
//  unfused: every fused op reads each tensor operand and writes each result
//           once, as eager PyTorch does;
//  fused:   the region reads each distinct outside tensor once and writes
//           each value used outside once (the anchor's result, written by
//           the library either way, is not counted).
//
//===----------------------------------------------------------------------===//

#include "kb/Emit/AnalysisReport.h"
#include "kb/IR/KbDialect.h"
#include "kb/Transforms/OpUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace kb;

std::pair<std::string, std::string> kb::describeLocation(Location loc) {
  std::string graphLoc, srcLoc;
  auto fmt = [](FileLineColLoc f) {
    return (f.getFilename().getValue() + ":" + llvm::Twine(f.getLine())).str();
  };
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return {fmt(f), ""};
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      auto f = dyn_cast<FileLineColLoc>(l);
      if (!f)
        continue;
      if (graphLoc.empty())
        graphLoc = fmt(f);
      else
        srcLoc = fmt(f);
    }
  }
  return {graphLoc, srcLoc};
}

namespace {

std::string dtypeName(Type t) {
  auto rt = dyn_cast<TensorType>(t);
  if (!rt)
    return "";
  Type e = rt.getElementType();
  if (e.isF32()) return "float32";
  if (e.isF64()) return "float64";
  if (e.isF16()) return "float16";
  if (e.isBF16()) return "bfloat16";
  if (e.isInteger(1)) return "bool";
  if (e.isInteger(64)) return "int64";
  if (e.isInteger(32)) return "int32";
  if (e.isUnsignedInteger(8)) return "uint8";
  if (e.isInteger(8)) return "int8";
  return "unknown";
}

RegionReport reportRegion(RegionOp region) {
  RegionReport r;
  r.id = region.getId();
  if (auto a = region.getAnchor())
    r.anchor = a->str();
  Block &body = region.getBody().front();
  Operation *anchor = region.getAnchor() ? &body.front() : nullptr;
  llvm::SmallPtrSet<Value, 8> external;
  for (Operation &op : body.without_terminator()) {
    if (&op == anchor)
      continue;
    r.ops.push_back(displayName(&op));
    // A flat view of a row-major tensor moves no data in eager either (of
    // a strided one it is a copy).
    bool moves =
        !isFlatView(&op) ||
        hasStridedLayout(cast<RankedTensorType>(op.getOperand(0).getType()));
    for (Value v : op.getOperands()) {
      if (moves)
        r.bytesUnfused += tensorBytes(v.getType());
      bool inside = v.getDefiningOp() && v.getDefiningOp() != anchor &&
                    v.getDefiningOp()->getBlock() == &body;
      if (!inside && external.insert(v).second)
        r.bytesFused += tensorBytes(v.getType());
    }
    for (Value res : op.getResults())
      if (moves)
        r.bytesUnfused += tensorBytes(res.getType());
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  for (Value v : yield.getValues()) {
    if (anchor && v.getDefiningOp() == anchor)
      continue;
    r.bytesFused += tensorBytes(v.getType());
    if (auto rt = dyn_cast<RankedTensorType>(v.getType())) {
      r.outputShapes.emplace_back(rt.getShape().begin(), rt.getShape().end());
      if (r.dtype.empty())
        r.dtype = dtypeName(rt);
    }
  }
  // The graph line of the first op; the Python line of the first op written
  // in the user's code rather than inside torch itself.
  Operation *first = anchor ? anchor : &body.front();
  std::tie(r.location, r.sourceLocation) = describeLocation(first->getLoc());
  for (Operation &op : body.without_terminator()) {
    std::string src = describeLocation(op.getLoc()).second;
    if (!src.empty() && !llvm::StringRef(src).contains("/torch/")) {
      r.sourceLocation = src;
      break;
    }
  }
  return r;
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "x" : "") + std::to_string(s[i]);
  return s.empty() ? "scalar" : out;
}

std::string humanBytes(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= 1000000000)
    os << llvm::format("%.2f GB", bytes / 1.0e9);
  else if (bytes >= 1000000)
    os << llvm::format("%.1f MB", bytes / 1.0e6);
  else if (bytes >= 1000)
    os << llvm::format("%.1f KB", bytes / 1.0e3);
  else
    os << bytes << " B";
  return s;
}

} // namespace

int64_t kb::countOps(ModuleOp module) {
  int64_t n = 0;
  module.walk([&](Operation *op) { n += isa<AtenOp, OpaqueOp>(op); });
  return n;
}

AnalysisReport kb::buildAnalysisReport(ModuleOp module,
                                       llvm::StringRef graphName) {
  AnalysisReport rep;
  rep.graph = graphName.str();
  rep.numOpsAfterSimplify = countOps(module);
  module.walk([&](Operation *op) {
    if (isa<AtenOp, OpaqueOp>(op) && getKind(op) == OpKind::Anchor)
      ++rep.numAnchors;
    if (auto region = dyn_cast<RegionOp>(op))
      rep.regions.push_back(reportRegion(region));
    if (auto note = op->getAttrOfType<StringAttr>("kb.unfused")) {
      UnfusedReport u;
      u.op = displayName(op);
      u.reason = note.str();
      std::tie(u.location, u.sourceLocation) = describeLocation(op->getLoc());
      rep.unfused.push_back(std::move(u));
    }
  });
  llvm::sort(rep.regions, [](const RegionReport &a, const RegionReport &b) {
    return a.id < b.id;
  });
  return rep;
}

llvm::json::Value AnalysisReport::toJSON() const {
  llvm::json::Array regs;
  int64_t totalUnfused = 0, totalFused = 0;
  for (const RegionReport &r : regions) {
    llvm::json::Array shapes;
    for (const auto &s : r.outputShapes)
      shapes.push_back(llvm::json::Array(s));
    llvm::json::Array ops;
    for (const std::string &o : r.ops)
      ops.push_back(o);
    regs.push_back(llvm::json::Object{
        {"id", r.id},
        {"anchor", r.anchor ? llvm::json::Value(*r.anchor) : nullptr},
        {"ops", std::move(ops)},
        {"output_shapes", std::move(shapes)},
        {"dtype", r.dtype},
        {"bytes_unfused", r.bytesUnfused},
        {"bytes_fused", r.bytesFused},
        {"location", r.location},
        {"source_location", r.sourceLocation},
    });
    totalUnfused += r.bytesUnfused;
    totalFused += r.bytesFused;
  }
  llvm::json::Array unf;
  for (const UnfusedReport &u : unfused)
    unf.push_back(llvm::json::Object{{"op", u.op},
                                     {"reason", u.reason},
                                     {"location", u.location},
                                     {"source_location", u.sourceLocation}});
  return llvm::json::Object{
      {"schema_version", 1},
      {"graph", graph},
      {"ops", numOps},
      {"ops_after_simplify", numOpsAfterSimplify},
      {"anchors", numAnchors},
      {"regions", std::move(regs)},
      {"unfused", std::move(unf)},
      {"bytes_unfused", totalUnfused},
      {"bytes_fused", totalFused},
  };
}

void AnalysisReport::printTable(llvm::raw_ostream &os) const {
  os << "kb-rewrite analyze: " << graph << "\n"
     << numOps << " ops";
  if (numOpsAfterSimplify != numOps)
    os << " (" << numOpsAfterSimplify
       << " after exact simplification and recomputed chains)";
  os << ", " << numAnchors << " library anchors, "
     << regions.size() << " fusion regions\n\n";
  int64_t totalUnfused = 0, totalFused = 0;
  if (!regions.empty()) {
    os << llvm::format("%-4s %-26s %-40s %-22s %12s %10s\n", "id",
                       "anchor (cuBLAS/cuDNN)", "fused ops", "output shape",
                       "unfused", "fused");
    for (const RegionReport &r : regions) {
      std::string ops;
      for (size_t i = 0; i < r.ops.size(); ++i) {
        llvm::StringRef o = r.ops[i];
        o.consume_front("aten::");
        ops += (i ? " -> " : "") + o.str();
      }
      std::string shape =
          r.outputShapes.empty() ? "-" : shapeStr(r.outputShapes.front());
      if (r.outputShapes.size() > 1)
        shape += " (+" + std::to_string(r.outputShapes.size() - 1) + ")";
      os << llvm::format("%-4s %-26s %-40s %-22s %12s %10s\n",
                         ("r" + std::to_string(r.id)).c_str(),
                         r.anchor ? r.anchor->c_str() : "-", ops.c_str(),
                         shape.c_str(), humanBytes(r.bytesUnfused).c_str(),
                         humanBytes(r.bytesFused).c_str());
      totalUnfused += r.bytesUnfused;
      totalFused += r.bytesFused;
    }
    os << "\nmemory traffic of fused ops: " << humanBytes(totalUnfused)
       << " unfused -> " << humanBytes(totalFused) << " fused";
    if (totalUnfused > 0)
      os << llvm::format(" (%.0f%% saved)",
                         100.0 * (totalUnfused - totalFused) / totalUnfused);
    os << "\n";
  }
  if (!unfused.empty()) {
    os << "\nleft unfused:\n";
    for (const UnfusedReport &u : unfused)
      os << "  " << u.location << "  " << u.op << ": " << u.reason << "\n";
  }
}
