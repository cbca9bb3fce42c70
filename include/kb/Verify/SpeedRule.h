//===- SpeedRule.h - When a kernel counts as faster ------------*- C++ -*-===//
//
// "Never slower": a verified kernel replaces ATen ops (or another kernel)
// only when it is measurably faster. Measurably means beyond the noise the
// timing itself shows: each side's spread below its median (median - min of
// its runs), a relative margin, and an absolute floor (CUDA events resolve
// about 0.5 us, and the same few-microsecond kernel measured 0.0037 vs
// 0.0038 ms in two runs). One rule for kb-rewrite's region selection, the
// model search and (mirrored in runtime/kb_runtime.py) the runtime's
// whole-forward check; docs/correctness.md states it.
//
// Header-only and dependency-free: kb-verify (no LLVM) and the compiler
// layers both include it.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_SPEEDRULE_H
#define KB_VERIFY_SPEEDRULE_H

#include <algorithm>
#include <optional>

namespace kb::verify {

/// One side of a comparison: the median of its timed runs and, where known,
/// the fastest run (its spread below the median is the noise estimate).
struct TimedRuns {
  double medianMs = 0;
  std::optional<double> minMs;
  double spreadMs() const {
    return minMs ? std::max(0.0, medianMs - *minMs) : 0.0;
  }
};

struct SpeedRule {
  double relativeMargin = 0.03; // at least 3% faster ...
  double floorMs = 0.001;       // ... and at least 1 us faster ...
  // ... and faster by more than both sides' spreads together.

  /// The margin `candidate` must beat `baseline` by.
  double marginMs(const TimedRuns &candidate, const TimedRuns &baseline) const {
    return std::max({baseline.medianMs * relativeMargin, floorMs,
                     candidate.spreadMs() + baseline.spreadMs()});
  }
  bool measurablyFaster(const TimedRuns &candidate,
                        const TimedRuns &baseline) const {
    if (!(candidate.medianMs > 0) || !(baseline.medianMs > 0))
      return false; // nothing measured: no claim of speed
    return baseline.medianMs - candidate.medianMs >
           marginMs(candidate, baseline);
  }
};

} // namespace kb::verify

#endif // KB_VERIFY_SPEEDRULE_H
