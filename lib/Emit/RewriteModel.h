//===- RewriteModel.h - The code model's candidates for each region -*- C++ -*-===//
#ifndef KB_LIB_EMIT_REWRITEMODEL_H
#define KB_LIB_EMIT_REWRITEMODEL_H

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Emit/Rewrite.h"

namespace kb {

struct ModelRegionInput {
  RegionRecord *record;
  const EmittedKernel *kernel;
  std::string pytorch, kbIR, jobJson, example;
  std::string chosenSource; // set when a model kernel wins
};

/// Runs the strategy for every region with a generated kernel; updates the
/// records (origin, time, candidates) and sets chosenSource on wins.
llvm::Error searchRegionsWithModel(const RewriteOptions &opts, bool gpu,
                                   llvm::StringRef outDir,
                                   std::vector<ModelRegionInput> &regions,
                                   llvm::raw_ostream &log);

} // namespace kb

#endif
