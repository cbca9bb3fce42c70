//===- Compare.cpp - Output comparison against the float64 truth ----------===//

#include "kb/Verify/Checks.h"

#include <cmath>
#include <cstring>
#include <sstream>

using namespace kb::verify;

namespace {
constexpr double kHugeMagnitude = 1e30;

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
} // namespace

Comparison kb::verify::compareOutput(const float *cand, const float *eager32,
                                     const double *ref64, size_t n,
                                     double factor, uint32_t poison) {
  Comparison c;
  // Unwritten elements first: they are the most specific evidence.
  size_t unwritten = 0, firstUnwritten = 0;
  for (size_t i = 0; i < n; ++i)
    if (bitsOf(cand[i]) == poison && !unwritten++)
      firstUnwritten = i;
  if (unwritten) {
    std::ostringstream os;
    os << unwritten << " of " << n
       << " output elements still hold the poison pattern (never written); "
          "first at index "
       << firstUnwritten;
    c.status = "unwritten_output";
    c.detail = os.str();
  }

  // NaN/Inf structure follows eager fp32 (fp32 overflows where fp64 does not).
  size_t nanBad = 0, firstNanBad = 0, hugeBad = 0, firstHugeBad = 0;
  double scale = 0, eagerErr = 0, candErr = 0, sumSq = 0, refSq = 0;
  size_t worst = 0;
  for (size_t i = 0; i < n; ++i) {
    float e = eager32[i], x = cand[i];
    bool special = std::isnan(e) || std::isinf(e);
    if (special) {
      bool same = std::isnan(e) ? std::isnan(x)
                                : (std::isinf(x) && std::signbit(x) == std::signbit(e));
      if (!same && !nanBad++)
        firstNanBad = i;
      continue;
    }
    if (std::isnan(x) || std::isinf(x)) {
      if (!nanBad++)
        firstNanBad = i;
      continue;
    }
    double r = ref64[i];
    double d = std::fabs(double(x) - r);
    if (std::fabs(r) > kHugeMagnitude) {
      // Huge values (special-value trials put +-3e38 in) are checked
      // relatively, so they cannot inflate the bound of everything else.
      double tol = factor * std::max(std::fabs(double(e) - r),
                                     std::ldexp(std::fabs(r), -23));
      if (d > tol && !hugeBad++)
        firstHugeBad = i;
    } else {
      scale = std::max(scale, std::fabs(r));
      eagerErr = std::max(eagerErr, std::fabs(double(e) - r));
      if (d > candErr) {
        candErr = d;
        worst = i;
      }
    }
    sumSq += d * d;
    refSq += r * r;
    // KernelBench's check: allclose(candidate, eager) in fp32.
    double ad = std::fabs(double(x) - double(e));
    if (ad > 1e-4 + 1e-4 * std::fabs(double(e)))
      c.allclose1e4 = false;
    if (ad > 1e-2 + 1e-2 * std::fabs(double(e)))
      c.allclose1e2 = false;
  }
  if (nanBad) {
    c.allclose1e4 = c.allclose1e2 = false;
  }
  c.maxAbsError = candErr;
  c.eagerMaxAbsError = eagerErr;
  c.bound = factor * std::max(eagerErr, std::ldexp(scale, -23));
  c.relL2 = refSq > 0 ? std::sqrt(sumSq / refSq) : std::sqrt(sumSq);
  if (c.status != "accepted")
    return c;
  if (nanBad) {
    std::ostringstream os;
    os << nanBad << " elements differ in NaN/Inf from eager fp32; first at "
       << "index " << firstNanBad << " (candidate " << cand[firstNanBad]
       << ", eager " << eager32[firstNanBad] << ")";
    c.status = "nan_mismatch";
    c.detail = os.str();
    return c;
  }
  if (hugeBad) {
    std::ostringstream os;
    os.precision(9);
    os << hugeBad << " elements of magnitude > 1e30 are off by more than "
       << factor << " x eager fp32's relative error; first at index "
       << firstHugeBad << ": candidate " << cand[firstHugeBad]
       << ", reference " << ref64[firstHugeBad];
    c.status = "wrong_result";
    c.detail = os.str();
    return c;
  }
  if (candErr > c.bound) {
    std::ostringstream os;
    os.precision(9);
    os << "max |candidate - float64 reference| = " << candErr
       << " exceeds the bound " << c.bound << " (" << factor
       << " x eager fp32 error " << eagerErr << "); worst at index " << worst
       << ": candidate " << cand[worst] << ", reference " << ref64[worst]
       << "; relative L2 error " << c.relL2;
    c.status = "wrong_result";
    c.detail = os.str();
  }
  return c;
}

bool kb::verify::canaryIntact(const uint8_t *guard, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (guard[i] != kCanaryByte)
      return false;
  return true;
}
