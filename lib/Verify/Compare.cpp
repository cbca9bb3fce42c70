//===- Compare.cpp - Output comparison against the float64 truth ----------===//

#include "kb/Verify/Checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

using namespace kb::verify;

namespace {
uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
} // namespace

void ComparisonStats::append(const ComparisonStats &o) {
  auto firstOf = [&](uint64_t mine, uint64_t count, uint64_t theirs,
                     uint64_t &out) {
    if (!mine && count)
      out = n + theirs;
  };
  firstOf(unwritten, o.unwritten, o.firstUnwritten, firstUnwritten);
  unwritten += o.unwritten;
  if (!nanBad && o.nanBad) {
    firstNanBad = n + o.firstNanBad;
    nanBadCand = o.nanBadCand;
    nanBadEager = o.nanBadEager;
    nanBadRef = o.nanBadRef;
  }
  nanBad += o.nanBad;
  if (!hugeBad && o.hugeBad) {
    firstHugeBad = n + o.firstHugeBad;
    hugeBadCand = o.hugeBadCand;
    hugeBadRef = o.hugeBadRef;
  }
  hugeBad += o.hugeBad;
  scale = std::max(scale, o.scale);
  eagerErr = std::max(eagerErr, o.eagerErr);
  if (o.candErr > candErr) { // strictly: the first worst element wins
    candErr = o.candErr;
    worst = n + o.worst;
    worstCand = o.worstCand;
    worstRef = o.worstRef;
  }
  if (!envBad && o.envBad) {
    firstEnvBad = n + o.firstEnvBad;
    envBadCand = o.envBadCand;
    envBadRef = o.envBadRef;
    envBadBound = o.envBadBound;
  }
  envBad += o.envBad;
  sumSq += o.sumSq;
  refSq += o.refSq;
  allclose1e4 = allclose1e4 && o.allclose1e4;
  allclose1e2 = allclose1e2 && o.allclose1e2;
  n += o.n;
}

int kb::verify::envBucket(double r) {
  uint64_t bits;
  std::memcpy(&bits, &r, sizeof(bits));
  int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  return std::clamp(e, kEnvLo, kEnvHi) - kEnvLo;
}

void kb::verify::envelopeBins(const float *eager32, const double *ref64,
                              size_t n, std::vector<double> &bins,
                              std::vector<double> &counts) {
  bins.resize(kEnvBuckets, 0.0);
  counts.resize(kEnvBuckets, 0.0);
  for (size_t i = 0; i < n; ++i) {
    double r = ref64[i];
    if (!std::isfinite(eager32[i]) || !std::isfinite(r) ||
        std::fabs(r) > kHugeMagnitude)
      continue;
    int k = envBucket(r);
    bins[k] = std::max(bins[k], std::fabs(double(eager32[i]) - r));
    counts[k] += 1;
  }
}

std::vector<double>
kb::verify::envelopeFromBins(const std::vector<double> &bins,
                             const std::vector<double> &counts, int mantissa) {
  double total = 0;
  for (double c : counts)
    total += c;
  int median = 0;
  for (double seen = 0; median < kEnvBuckets; ++median)
    if ((seen += counts[median]) >= total / 2)
      break;
  double floor = std::ldexp(1.0, std::min(median, kEnvBuckets - 1) + kEnvLo +
                                     1 - mantissa);
  std::vector<double> cum(kEnvBuckets), env(kEnvBuckets);
  double m = 0;
  for (int k = 0; k < kEnvBuckets; ++k)
    cum[k] = m = std::max(m, bins[k]);
  for (int k = 0; k < kEnvBuckets; ++k)
    env[k] = std::max({cum[std::min(k + kEnvHeadroom, kEnvBuckets - 1)],
                       std::ldexp(1.0, k + kEnvLo + 1 - mantissa), floor});
  return env;
}

double kb::verify::hugeEagerRelError(const float *eager32, const double *ref64,
                                     size_t n) {
  double rel = std::ldexp(1.0, -23);
  for (size_t i = 0; i < n; ++i) {
    double r = ref64[i];
    if (std::isfinite(eager32[i]) && std::isfinite(r) &&
        std::fabs(r) > kHugeMagnitude)
      rel = std::max(rel, std::fabs(double(eager32[i]) - r) / std::fabs(r));
  }
  return rel;
}

ComparisonStats
kb::verify::compareStats(const float *cand, const float *eager32,
                         const double *ref64, size_t n, double factor,
                         uint32_t poison, NonfiniteRule nonfinite,
                         const double *sens64, const float *step32) {
  ComparisonStats s;
  s.n = n;
  for (size_t i = 0; i < n; ++i)
    if (bitsOf(cand[i]) == poison && !s.unwritten++)
      s.firstUnwritten = i;
  double eagerRel = hugeEagerRelError(eager32, ref64, n);
  std::vector<double> bins, counts;
  envelopeBins(eager32, ref64, n, bins, counts);
  std::vector<double> env = envelopeFromBins(bins, counts);
  // NaN/Inf structure follows eager fp32 (fp32 overflows where fp64 does
  // not), except where eager's NaN/Inf is an overflow of its own algorithm:
  // the float64 truth is finite and fits in float32, so a candidate that
  // computes it (a two-pass variance where eager's Welford merge overflowed)
  // is held to the truth instead.
  for (size_t i = 0; i < n; ++i) {
    float e = eager32[i], x = cand[i];
    double r = ref64[i];
    bool special = std::isnan(e) || std::isinf(e);
    bool xSpecial = std::isnan(x) || std::isinf(x);
    bool bad = false, same = false;
    // The NaN or Inf that evaluating each op in fp32, correctly rounded,
    // gives here: an intermediate overflowed (beyond float32's range, finite
    // in the truth and perhaps in eager's order) and a later op's fp32
    // semantics made a NaN of it (hardswish(-Inf)).
    bool stepSame =
        step32 && xSpecial &&
        (std::isnan(x) ? std::isnan(step32[i])
                       : std::isinf(step32[i]) &&
                             std::signbit(step32[i]) == std::signbit(x));
    if (special) {
      same = std::isnan(e) ? std::isnan(x)
                           : (std::isinf(x) && std::signbit(x) == std::signbit(e));
      bool overflowed = std::isfinite(r) && std::fabs(r) <= kFloatMax;
      // eager NaN where the truth is +-Inf: the truth's Inf is right too;
      // so is the Inf a truth beyond float32's range rounds to, where
      // eager's order met +Inf and -Inf partials (a sum over rows with
      // +-3e38: gen-20261207 task 6).
      bool truthInf = std::isinf(r) && std::isinf(x) &&
                      std::signbit(x) == std::signbit(r);
      bool roundsToInf = std::isinf(x) && std::isfinite(r) &&
                         std::fabs(r) > kFloatMax &&
                         std::signbit(x) == std::signbit(r);
      // NaN where the truth lies beyond float32's range: an intermediate
      // that overflowed to Inf met an op whose fp32 semantics make Inf a
      // NaN (floor_divide's fmod(Inf, b): gen-20261228 task 1).
      bool overflowNan =
          std::isnan(x) && std::isfinite(r) && std::fabs(r) > kFloatMax;
      if (roundsToInf || overflowNan || (stepSame && !same)) // not eager's
        s.allclose1e4 = s.allclose1e2 = false;
      same = same || truthInf || roundsToInf || overflowNan || stepSame ||
             (xSpecial &&
              (nonfinite == NonfiniteRule::Any
                   ? !std::isfinite(r)
                   : nonfinite == NonfiniteRule::Order && std::isnan(r)));
      bad = !same && (!overflowed || xSpecial);
    } else {
      // The truth lies beyond float32's range: the candidate's Inf of its
      // sign is the correctly rounded result, where eager's order of
      // operations happened to stay finite (a sum with +-3e38 terms).
      // So is the truth's own Inf, where eager's fp32 order stayed finite
      // (x - mean near 3e38, the mean overflowing in eager's float sum: exp
      // of -Inf gave eager 0; gen-20261212 task 5).
      // A NaN there is an intermediate's overflow met by an op that makes
      // Inf a NaN (above).
      bool beyond = std::isfinite(r) && std::fabs(r) > kFloatMax;
      same = (std::isinf(x) && (std::isinf(r) || beyond) &&
              std::signbit(x) == std::signbit(r)) ||
             (std::isnan(x) && beyond) || stepSame;
      bad = xSpecial && !same;
      if (same) // KernelBench compares with eager: Inf is not close to it
        s.allclose1e4 = s.allclose1e2 = false;
    }
    if (bad && !s.nanBad++) {
      s.firstNanBad = i;
      s.nanBadCand = x;
      s.nanBadEager = e;
      s.nanBadRef = r;
    }
    if (same || bad)
      continue;
    // Eager's error is unknown where it overflowed: 0, not Inf, in the bound.
    double eErr = special ? 0.0 : std::fabs(double(e) - r);
    double d = std::fabs(double(x) - r);
    bool excused = sens64 && d <= factor * sens64[i];
    if (std::fabs(r) > kHugeMagnitude) {
      // Huge values (special-value trials put +-3e38 in) are checked
      // relatively, so they cannot inflate the bound of everything else.
      double tol = factor * std::max(eErr, std::fabs(r) * eagerRel);
      if (d > tol && !excused && !s.hugeBad++) {
        s.firstHugeBad = i;
        s.hugeBadCand = x;
        s.hugeBadRef = r;
      }
    } else {
      s.scale = std::max(s.scale, std::fabs(r));
      s.eagerErr = std::max(s.eagerErr, eErr);
      if (!excused && d > s.candErr) {
        s.candErr = d;
        s.worst = i;
        s.worstCand = x;
        s.worstRef = r;
      }
      double tolHere = factor * env[envBucket(r)];
      if (!excused && d > tolHere && !s.envBad++) {
        s.firstEnvBad = i;
        s.envBadCand = x;
        s.envBadRef = r;
        s.envBadBound = tolHere;
      }
    }
    s.sumSq += d * d;
    s.refSq += r * r;
    // KernelBench's check: allclose(candidate, eager) in fp32.
    // Where eager overflowed to NaN/Inf, allclose against it fails.
    double ad = std::fabs(double(x) - double(e));
    if (special || ad > 1e-4 + 1e-4 * std::fabs(double(e)))
      s.allclose1e4 = false;
    if (special || ad > 1e-2 + 1e-2 * std::fabs(double(e)))
      s.allclose1e2 = false;
  }
  return s;
}

Comparison kb::verify::judgeComparison(const ComparisonStats &s, double factor,
                                       int mantissa) {
  Comparison c;
  c.allclose1e4 = s.allclose1e4 && !s.nanBad;
  c.allclose1e2 = s.allclose1e2 && !s.nanBad;
  c.maxAbsError = s.candErr;
  c.eagerMaxAbsError = s.eagerErr;
  c.bound = factor * std::max(s.eagerErr, std::ldexp(s.scale, -mantissa));
  c.relL2 = s.refSq > 0 ? std::sqrt(s.sumSq / s.refSq) : std::sqrt(s.sumSq);
  std::ostringstream os;
  os.precision(9);
  // Unwritten elements first: they are the most specific evidence.
  // Eager in the output's own type (a 16-bit region's eager is 16-bit).
  const char *eager = mantissa == 10  ? "eager fp16"
                      : mantissa == 7 ? "eager bf16"
                                      : "eager fp32";
  if (s.unwritten) {
    os << s.unwritten << " of " << s.n
       << " output elements still hold the poison pattern (never written); "
          "first at index "
       << s.firstUnwritten;
    c.status = VerdictStatus::UnwrittenOutput;
  } else if (s.nanBad) {
    os.precision(6);
    os << s.nanBad << " elements differ in NaN/Inf from " << eager
       << "; first at "
       << "index " << s.firstNanBad << " (candidate " << s.nanBadCand
       << ", eager " << s.nanBadEager << ", float64 " << s.nanBadRef << ")";
    c.status = VerdictStatus::NanMismatch;
  } else if (s.hugeBad) {
    os << s.hugeBad << " elements of magnitude > 1e30 are off by more than "
       << factor << " x " << eager << "'s relative error; first at index "
       << s.firstHugeBad << ": candidate " << s.hugeBadCand << ", reference "
       << s.hugeBadRef;
    c.status = VerdictStatus::WrongResult;
  } else if (s.candErr <= c.bound && s.envBad) {
    os << s.envBad << " elements are off by more than " << factor << " x "
       << eager << "'s error at values of their magnitude (up to "
       << (1 << kEnvHeadroom) << "x larger); first at index " << s.firstEnvBad
       << ": candidate " << s.envBadCand << ", reference " << s.envBadRef
       << ", bound there " << s.envBadBound
       << " (a lower-precision computation hides under the tensor-wide "
          "bound "
       << c.bound << ")";
    c.status = VerdictStatus::WrongResult;
  } else if (s.candErr > c.bound) {
    os << "max |candidate - float64 reference| = " << s.candErr
       << " exceeds the bound " << c.bound << " (" << factor << " x " << eager
       << " error " << s.eagerErr << "); worst at index " << s.worst
       << ": candidate " << s.worstCand << ", reference " << s.worstRef
       << "; relative L2 error " << c.relL2;
    c.status = VerdictStatus::WrongResult;
  }
  c.detail = os.str();
  return c;
}

Comparison kb::verify::compareOutput(const float *cand, const float *eager32,
                                     const double *ref64, size_t n,
                                     double factor, uint32_t poison,
                                     NonfiniteRule nonfinite) {
  return judgeComparison(
      compareStats(cand, eager32, ref64, n, factor, poison, nonfinite), factor);
}
