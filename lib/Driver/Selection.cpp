//===- Selection.cpp - Stage 6: only kernels that keep the numbers and win
//-===//
#include "kb/Driver/Stages.h"
#include "kb/Verify/SpeedRule.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace kb::driver {
namespace {

/// The speed half of kernel selection (include/kb/Verify/SpeedRule.h).
void dropIfNotFaster(RegionRecord &rec) {
  if (rec.status != RegionStatus::Verified || !rec.kernelMs || !rec.eagerMs)
    return;
  verify::TimedRuns aten{*rec.eagerMs, rec.eagerMinMs};
  // The code generator's kernel has kb-verify's spread; a model's or the
  // store's kernel only the median its own verdict reported.
  verify::TimedRuns kernel{*rec.kernelMs, rec.origin == KernelOrigin::Codegen
                                              ? rec.kernelMinMs
                                              : std::nullopt};
  verify::SpeedRule rule;
  if (rule.measurablyFaster(kernel, aten))
    return;
  rec.status = RegionStatus::Slower;
  rec.detail =
      formatv("verified, but not measurably faster than its ATen "
              "ops: {0:F4} ms vs {1:F4} ms ({2:F2}x; needs a "
              "{3:F4} ms margin); runs its ATen ops",
              kernel.medianMs, aten.medianMs, aten.medianMs / kernel.medianMs,
              rule.marginMs(kernel, aten))
          .str();
}

} // namespace

void selectKernels(RewriteRun &run) {
  if (!run.result.gpu)
    return;
  bool relaxed = run.opts.numerics == Numerics::Relaxed;
  for (RegionPlan &plan : run.result.regions) {
    RegionRecord &rec = plan.record;
    if (!relaxed)
      keepIfNotIdentical(rec, run.numerics[rec.name], run.opts.fuseBeforeTF32);
    if (rec.status == RegionStatus::Kept) {
      plan.channelsLast.reset();
      rec.clStatus.reset();
    }
    // The paper's experiment counts "faster than eager" itself: a slower
    // model kernel still answers (docs/model.md, "The paper's experiment").
    if (!run.opts.model.strategy.modelOnly)
      dropIfNotFaster(rec);
  }
}

} // namespace kb::driver
