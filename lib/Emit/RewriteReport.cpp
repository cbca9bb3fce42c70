//===- RewriteReport.cpp - report.{json,md,html} of a rewrite -------------===//
//
// The HTML report is one self-contained file (inline SVG, no scripts, no
// network assets): a per-region time chart (kernel vs eager ATen ops, as
// kb-verify measured them) and a bandwidth roofline (achieved GB/s of each
// kernel against the device-to-device copy bandwidth measured in the same
// kb-verify run).
//
//===----------------------------------------------------------------------===//
#include "kb/Emit/RewriteOutput.h"
#include "kb/Support/Printable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace kb {
namespace {

std::string html(StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// The regions' records, in order.
auto records(const RewriteResult &res) {
  return llvm::map_range(
      res.regions,
      [](const RegionPlan &p) -> const RegionRecord & { return p.record; });
}

std::optional<double> achievedGBs(const RegionRecord &r) {
  if (!r.kernelMs || *r.kernelMs <= 0)
    return std::nullopt;
  return r.bytes / (*r.kernelMs * 1e-3) / 1e9;
}

std::string headline(const RewriteResult &res) {
  unsigned verified = 0, unverified = 0, slower = 0, other = 0;
  for (const RegionPlan &p : res.regions)
    (p.record.status == RegionStatus::Verified     ? verified
     : p.record.status == RegionStatus::Unverified ? unverified
     : p.record.status == RegionStatus::Slower     ? slower
                                                   : other)++;
  std::string s =
      formatv("{0} regions: {1} verified, {2} unverified, {3} "
              "running their ATen ops",
              res.regions.size(), verified, unverified, other + slower);
  if (slower)
    s += formatv(" ({0} of them verified but not faster)", slower).str();
  return s;
}

std::string warning(const RewriteResult &res) {
  for (const RegionPlan &p : res.regions)
    if (p.record.status == RegionStatus::Unverified)
      return "UNVERIFIED: no GPU was available, so the kernels were compiled "
             "but NOT checked against PyTorch. Re-run kb-rewrite rewrite on a "
             "GPU host before trusting this model.";
  return "";
}

} // namespace

json::Value reportJson(const RewriteResult &res) {
  json::Array kept;
  for (const KeptOp &k : res.keptOps)
    kept.push_back(json::Object{
        {"op", k.op}, {"location", k.location}, {"reason", k.reason}});
  json::Array biasFree;
  for (const KeptOp &k : res.biasFreeGemms)
    biasFree.push_back(json::Object{{"op", k.op}, {"location", k.location}});
  json::Array regions;
  for (const RegionPlan &p : res.regions) {
    const RegionRecord &r = p.record;
    json::Object o{{"name", r.name},
                   {"kind", r.kind},
                   {"anchor", r.anchor},
                   {"ops", r.ops},
                   {"status", statusName(r.status)},
                   {"origin", originName(r.origin)},
                   {"detail", r.detail},
                   {"bytes", r.bytes},
                   {"math", r.approximate ? "fast" : "exact"},
                   {"aten_order", r.atenOrder},
                   {"order_free", r.orderFree},
                   {"verdict", r.verdict}};
    if (r.kernelMs)
      o["kernel_ms"] = *r.kernelMs;
    if (r.eagerMs)
      o["eager_ms"] = *r.eagerMs;
    if (r.kernelMs && r.eagerMs && *r.kernelMs > 0)
      o["speedup_vs_eager"] = *r.eagerMs / *r.kernelMs;
    if (auto gbs = achievedGBs(r))
      o["achieved_gbs"] = *gbs;
    if (r.copyGBs)
      o["copy_gbs"] = *r.copyGBs;
    if (!r.library.empty())
      o["library_form"] = r.library;
    if (r.modelCandidates > 0)
      o["model"] = json::Object{{"candidates", r.modelCandidates},
                                {"accepted", r.modelAccepted},
                                {"choice", r.modelChoice}};
    regions.push_back(std::move(o));
  }
  return json::Object{{"schema_version", 1},
                      {"graph", res.graphPath},
                      {"gpu", res.gpu},
                      {"fast_math", res.fastMath},
                      {"numerics", res.relaxed ? "relaxed" : "exact"},
                      {"summary", headline(res)},
                      {"warning", warning(res)},
                      {"model_new", res.modelNew},
                      {"model_new_note", res.modelNewNote},
                      {"regions", std::move(regions)},
                      {"kept_in_aten", std::move(kept)},
                      {"bias_free_gemms", std::move(biasFree)}};
}

std::string reportMarkdown(const RewriteResult &res) {
  std::string s;
  raw_string_ostream os(s);
  os << "# kb-rewrite report: " << sys::path::filename(res.graphPath) << "\n\n"
     << headline(res) << ".\n\n";
  if (std::string w = warning(res); !w.empty())
    os << "> **" << w << "**\n\n";
  if (!res.modelNew)
    os << "> model_new.py was not written: " << res.modelNewNote << "\n\n";
  if (res.fastMath)
    os << "> Built with --fast-math: kernels marked *(fast math)* compute exp "
          "and division approximately (2 ulp each, as torch.compile does); "
          "the others are exact.\n\n";
  if (res.relaxed)
    os << "> Built with --numerics=relaxed: sums, norms and softmax are fused "
          "even before step ops, singular ops and TF32 convolutions, where "
          "their last bits can move outputs past 1e-4 of eager's "
          "(docs/correctness.md); not the default, reported apart.\n\n";
  os << "| region | anchor | fused ops | kind | origin | status | kernel ms | "
        "eager ms | vs eager | GB/s |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const RegionRecord &r : records(res)) {
    auto num = [](std::optional<double> v, const char *fmt) {
      return v ? formatv(fmt, *v).str() : std::string("-");
    };
    std::optional<double> speed;
    if (r.kernelMs && r.eagerMs && *r.kernelMs > 0)
      speed = *r.eagerMs / *r.kernelMs;
    os << "| " << r.name << " | " << (r.anchor.empty() ? "-" : r.anchor)
       << " | " << r.ops << " | " << (r.kind.empty() ? "-" : r.kind) << " | "
       << originName(r.origin) << (r.approximate ? " *(fast math)*" : "")
       << (r.atenOrder ? " *(ATen's order)*" : "") << " | "
       << statusName(r.status) << " | " << num(r.kernelMs, "{0:F3}") << " | "
       << num(r.eagerMs, "{0:F3}") << " | " << num(speed, "{0:F2}x") << " | "
       << num(achievedGBs(r), "{0:F0}") << " |\n";
  }
  bool details = false;
  for (const RegionRecord &r : records(res))
    if (r.modelCandidates > 0) {
      if (!details)
        os << "\n## Details\n\n";
      details = true;
      os << "- " << r.name << " (model): " << r.modelCandidates
         << " candidates, " << r.modelAccepted << " accepted; " << r.modelChoice
         << "\n";
    }
  for (const RegionRecord &r : records(res))
    if (!r.library.empty()) {
      if (!details)
        os << "\n## Details\n\n";
      details = true;
      os << "- " << r.name << " (library form): " << r.library
         << " competes with the anchor + this kernel; the runtime times both "
            "on the traced operands and keeps the faster when the results "
            "agree within 1e-5 (model_new's `_kb.library_ms`)\n";
    }
  for (const RegionRecord &r : records(res))
    if (!r.detail.empty() && r.status != RegionStatus::Verified) {
      if (!details)
        os << "\n## Details\n\n";
      details = true;
      os << "- " << r.name << " (" << statusName(r.status)
         << "): " << clipText(r.detail, 400) << "\n";
    }
  if (!res.keptOps.empty()) {
    os << "\n## Kept in ATen by the numerics policy\n\n"
          "Fusable, but their last bits must be ATen's (docs/correctness.md); "
          "the ops after them are fused.\n\n";
    for (const KeptOp &k : res.keptOps)
      os << "- " << k.location << " " << k.op << ": " << k.reason << "\n";
  }
  if (!res.biasFreeGemms.empty()) {
    os << "\n## GEMMs run without their bias\n\n"
          "Their bias add is fused into the epilogue's region, and cuBLAS "
          "runs the bias-free GEMM (--kb-unfuse-linear-bias, "
          "docs/passes.md): faster, but possibly another kernel than "
          "eager's, summing in another order.\n\n";
    for (const KeptOp &k : res.biasFreeGemms)
      os << "- " << k.location << " " << k.op << "\n";
  }
  return os.str();
}

std::string reportHtml(const RewriteResult &res) {
  std::string s;
  raw_string_ostream os(s);
  os << "<!doctype html><html><head><meta charset=\"utf-8\"><title>kb-rewrite "
        "report</title><style>body{font:14px sans-serif;margin:2em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:3px 8px}.warn{background:#fdd;padding:1em;font-weight:bold}"
        "</style></head><body>\n<h1>kb-rewrite: "
     << html(sys::path::filename(res.graphPath)) << "</h1>\n<p>"
     << html(headline(res)) << ".</p>\n";
  if (std::string w = warning(res); !w.empty())
    os << "<p class=\"warn\">" << html(w) << "</p>\n";
  if (!res.modelNew)
    os << "<p class=\"warn\">model_new.py was not written: "
       << html(res.modelNewNote) << "</p>\n";

  // Per-region time chart: two bars per region.
  double maxMs = 0;
  for (const RegionRecord &r : records(res))
    maxMs = std::max({maxMs, r.kernelMs.value_or(0), r.eagerMs.value_or(0)});
  const int rowH = 34, left = 140, width = 520;
  int height = rowH * std::max<size_t>(1, res.regions.size()) + 40;
  os << "<h2>Time per region</h2>\n";
  if (maxMs <= 0) {
    os << "<p>No timings: the kernels were not run (no GPU).</p>\n";
  } else {
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
       << left + width + 120 << "\" height=\"" << height << "\">\n";
    for (auto [i, p] : llvm::enumerate(res.regions)) {
      const RegionRecord &r = p.record;
      int y = 10 + i * rowH;
      os << formatv("<text x=\"0\" y=\"{0}\">{1}</text>\n", y + 14,
                    html(r.name));
      auto bar = [&](std::optional<double> ms, int dy, const char *color,
                     const char *label) {
        if (!ms)
          return;
        int w = std::max(1, int(width * *ms / maxMs));
        os << formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"12\" "
                      "fill=\"{3}\"/><text x=\"{4}\" y=\"{5}\" "
                      "font-size=\"11\">{6} {7:F3} ms</text>\n",
                      left, y + dy, w, color, left + w + 4, y + dy + 10, label,
                      *ms);
      };
      bar(r.kernelMs, 0, "#2a7", "kernel");
      bar(r.eagerMs, 14, "#999", "eager");
    }
    os << "</svg>\n";
  }

  // Bandwidth roofline: x = arithmetic intensity (ops per byte, log), y =
  // achieved GB/s (log); the ceiling is the measured copy bandwidth.
  double copy = 0;
  for (const RegionRecord &r : records(res))
    copy = std::max(copy, r.copyGBs.value_or(0));
  os << "<h2>Roofline (memory side)</h2>\n";
  if (copy <= 0) {
    os << "<p>No measurements (no GPU).</p>\n";
  } else {
    const int W = 560, H = 300, x0 = 60, y0 = 20;
    double yMax = copy * 2, yMin = copy / 1000;
    auto ly = [&](double gbs) {
      double t = (std::log10(std::max(gbs, yMin)) - std::log10(yMin)) /
                 (std::log10(yMax) - std::log10(yMin));
      return y0 + H - int(t * H);
    };
    auto lx = [&](double ai) {
      double t = (std::log10(std::max(ai, 1e-3)) + 3) / 5.0; // 1e-3 .. 1e2
      return x0 + int(std::min(1.0, t) * W);
    };
    os << formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                  "height=\"{1}\">\n",
                  x0 + W + 40, y0 + H + 50);
    os << formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" "
                  "fill=\"none\" stroke=\"#888\"/>\n",
                  x0, y0, W, H);
    os << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                  "stroke=\"#c33\" stroke-dasharray=\"4\"/><text x=\"{3}\" "
                  "y=\"{4}\" font-size=\"11\">copy {5:F0} GB/s</text>\n",
                  x0, ly(copy), x0 + W, x0 + 4, ly(copy) - 4, copy);
    os << formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">arithmetic "
                  "intensity (ops/byte, log)</text><text x=\"4\" y=\"{2}\" "
                  "font-size=\"11\">GB/s (log)</text>\n",
                  x0 + W / 3, y0 + H + 30, y0 + 10);
    for (const RegionRecord &r : records(res)) {
      auto gbs = achievedGBs(r);
      if (!gbs || r.bytes <= 0)
        continue;
      double ai = double(r.numOps) * r.elements / r.bytes;
      int x = lx(ai), y = ly(*gbs);
      os << formatv("<circle cx=\"{0}\" cy=\"{1}\" r=\"4\" fill=\"#2a7\"/>"
                    "<text x=\"{2}\" y=\"{3}\" font-size=\"10\">{4} "
                    "({5:F0}%)</text>\n",
                    x, y, x + 6, y + 4, html(r.name), 100 * *gbs / copy);
    }
    os << "</svg>\n";
  }

  os << "<h2>Regions</h2>\n<table><tr><th>region</th><th>anchor</th><th>fused "
        "ops</th><th>status</th><th>origin</th><th>detail</th></tr>\n";
  for (const RegionRecord &r : records(res))
    os << "<tr><td>" << html(r.name) << "</td><td>" << html(r.anchor)
       << "</td><td>" << html(r.ops) << "</td><td>"
       << html(statusName(r.status)) << "</td><td>"
       << html(originName(r.origin)) << "</td><td>"
       << html(clipText(r.detail, 300)) << "</td></tr>\n";
  os << "</table>\n";
  if (!res.keptOps.empty()) {
    os << "<h2>Kept in ATen by the numerics policy</h2>\n<ul>\n";
    for (const KeptOp &k : res.keptOps)
      os << "<li>" << html(k.location) << " <code>" << html(k.op)
         << "</code>: " << html(k.reason) << "</li>\n";
    os << "</ul>\n";
  }
  if (!res.biasFreeGemms.empty()) {
    os << "<h2>GEMMs run without their bias</h2>\n<p>Their bias add is "
          "fused into the epilogue's region (--kb-unfuse-linear-bias).</p>"
          "\n<ul>\n";
    for (const KeptOp &k : res.biasFreeGemms)
      os << "<li>" << html(k.location) << " <code>" << html(k.op)
         << "</code></li>\n";
    os << "</ul>\n";
  }
  os << "</body></html>\n";
  return os.str();
}

} // namespace kb
