//===- CxxAnalysisReport.cpp - `kb-rewrite analyze` over C++ --------------===//
#include "kb/Emit/CxxAnalysisReport.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace kb {

std::string cxxAnalysisJson(const CxxAnalysis &a) {
  auto siteJson = [](const CxxOpSite &s) {
    return llvm::json::Object{{"op", s.op},
                              {"in_place", s.inPlace},
                              {"text", s.text},
                              {"line", s.line},
                              {"column", s.column}};
  };
  llvm::json::Array chains, skipped;
  for (const CxxChain &c : a.chains) {
    llvm::json::Array ops;
    for (const CxxOpSite &o : c.ops)
      ops.push_back(siteJson(o));
    chains.push_back(llvm::json::Object{{"file", c.file},
                                        {"function", c.function},
                                        {"anchor", siteJson(c.anchor)},
                                        {"ops", std::move(ops)},
                                        {"variable", c.variable},
                                        {"end", c.end},
                                        {"summary", c.summary()}});
  }
  for (const CxxSkip &s : a.skipped)
    skipped.push_back(llvm::json::Object{{"file", s.file},
                                         {"function", s.function},
                                         {"line", s.line},
                                         {"reason", s.reason}});
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"chains", std::move(chains)},
                                   {"skipped", std::move(skipped)}}));
  return text + "\n";
}

std::string cxxAnalysisText(const CxxAnalysis &a) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << a.chains.size() << " fusable chain" << (a.chains.size() == 1 ? "" : "s")
     << "\n";
  for (const CxxChain &c : a.chains) {
    os << c.file << ":" << c.anchor.line << ":" << c.anchor.column << ": in "
       << c.function << ": " << c.summary() << "\n";
    os << "  anchor " << c.anchor.text << "\n";
    for (const CxxOpSite &o : c.ops)
      os << "  line " << o.line << ": " << o.op << (o.inPlace ? "_" : "")
         << "  " << o.text << "\n";
    os << "  ends: " << c.end << "\n";
  }
  for (const CxxSkip &s : a.skipped)
    os << s.file << ":" << s.line << ": in " << s.function
       << ": skipped: " << s.reason << "\n";
  return text;
}

} // namespace kb
