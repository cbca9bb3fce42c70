//===- CxxAnalysisReport.h - `kb-rewrite analyze` over C++ -----*- C++ -*-===//
//
// The C++ frontend's chains and skips (kb/Import/CxxChains.h) as
// `kb-rewrite analyze` prints them, next to the graph path's report
// (AnalysisReport.h): finding chains is lib/Import's job, reporting them
// is this one's.
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_CXXANALYSISREPORT_H
#define KB_EMIT_CXXANALYSISREPORT_H

#include "kb/Import/CxxChains.h"

#include <string>

namespace kb {

/// JSON (one object: chains, skipped) as `kb-rewrite analyze --json` prints.
std::string cxxAnalysisJson(const CxxAnalysis &a);
/// The text report: one paragraph per chain.
std::string cxxAnalysisText(const CxxAnalysis &a);

} // namespace kb

#endif // KB_EMIT_CXXANALYSISREPORT_H
