//===- TensorChecksTest.cpp - Tensor statistics equal the host rule -------===//
//
// The worker judges device tensors with tensorStats; these tests run the same
// code on CPU tensors and hold it to the host loop (compareStats), chunked
// and unchunked, on planted errors.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace kb::verify;

namespace {

struct Planted {
  at::Tensor cand, eager, truth;
  std::vector<float> c, e;
  std::vector<double> r;
  explicit Planted(int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      double v = std::sin(i * 0.37) * 3.0 + std::cos(i * 0.011) * 1e-3;
      r.push_back(v);
      e.push_back(static_cast<float>(v));
    }
    c = e;
  }
  void tensors() {
    cand = at::tensor(c);
    eager = at::tensor(e);
    truth = at::tensor(r);
  }
};

void expectSame(const ComparisonStats &a, const ComparisonStats &b) {
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.unwritten, b.unwritten);
  EXPECT_EQ(a.firstUnwritten, b.firstUnwritten);
  EXPECT_EQ(a.nanBad, b.nanBad);
  EXPECT_EQ(a.firstNanBad, b.firstNanBad);
  if (a.nanBad) { // a NaN candidate is the same NaN, not an equal one
    EXPECT_EQ(std::isnan(a.nanBadCand), std::isnan(b.nanBadCand));
    if (!std::isnan(a.nanBadCand))
      EXPECT_EQ(a.nanBadCand, b.nanBadCand);
  }
  EXPECT_EQ(a.hugeBad, b.hugeBad);
  EXPECT_EQ(a.firstHugeBad, b.firstHugeBad);
  EXPECT_EQ(a.scale, b.scale);
  EXPECT_EQ(a.eagerErr, b.eagerErr);
  EXPECT_EQ(a.candErr, b.candErr);
  EXPECT_EQ(a.worst, b.worst);
  EXPECT_EQ(a.worstCand, b.worstCand);
  // Summation order differs (chunks, tree reductions): equal to rounding.
  EXPECT_NEAR(a.sumSq, b.sumSq, 1e-12 * std::max(1.0, a.sumSq));
  EXPECT_EQ(a.allclose1e4, b.allclose1e4);
  EXPECT_EQ(a.allclose1e2, b.allclose1e2);
  EXPECT_EQ(a.envBad, b.envBad);
  EXPECT_EQ(a.firstEnvBad, b.firstEnvBad);
  EXPECT_EQ(a.envBadBound, b.envBadBound);
}

void checkAgainstHost(Planted &p, uint32_t poison,
                      NonfiniteRule nonfinite = NonfiniteRule::Exact,
                      const std::vector<double> &sens = {},
                      const std::vector<float> &step = {}) {
  p.tensors();
  ComparisonStats host =
      compareStats(p.c.data(), p.e.data(), p.r.data(), p.r.size(), 8.0, poison,
                   nonfinite, sens.empty() ? nullptr : sens.data(),
                   step.empty() ? nullptr : step.data());
  at::Tensor st = sens.empty() ? at::Tensor() : at::tensor(sens);
  at::Tensor sp = step.empty() ? at::Tensor() : at::tensor(step);
  for (int64_t chunk : {int64_t(1) << 26, int64_t(7), int64_t(100)}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    ComparisonStats t = tensorStats(p.cand, p.eager, p.truth, 8.0, poison,
                                    nonfinite, chunk, st, nullptr, sp);
    expectSame(host, t);
    Comparison a = judgeComparison(host, 8.0), b = judgeComparison(t, 8.0);
    EXPECT_EQ(a.status, b.status);
  }
}

/// checkAgainstHost, then the verdict on the device statistics.
VerdictStatus judged(Planted &p,
                     NonfiniteRule nonfinite = NonfiniteRule::Exact) {
  checkAgainstHost(p, kPoisonA, nonfinite);
  p.tensors();
  return judgeComparison(
             tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA, nonfinite), 8)
      .status;
}

float poisonFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

TEST(TensorStats, CleanOutputMatchesHost) {
  Planted p(1000);
  checkAgainstHost(p, kPoisonA);
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::Accepted);
}

TEST(TensorStats, PlantedErrorsMatchHost) {
  Planted p(1000);
  p.c[613] += 0.5f; // wrong value
  p.c[17] += 0.01f; // a smaller one first: the worst must be 613
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::WrongResult);
  EXPECT_NE(c.detail.find("index 613"), std::string::npos) << c.detail;
}

TEST(TensorStats, UnwrittenNanAndHugeMatchHost) {
  Planted p(500);
  p.c[450] = poisonFloat(kPoisonB);
  p.c[460] = poisonFloat(kPoisonB);
  p.e[10] = p.r[10] = std::numeric_limits<float>::quiet_NaN();
  p.c[11] = std::numeric_limits<float>::infinity();
  p.r[300] = 3e38;
  p.e[300] = 3e38f;
  p.c[300] = 1e38f;
  checkAgainstHost(p, kPoisonB);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonB), 8);
  EXPECT_EQ(c.status, VerdictStatus::UnwrittenOutput);
  EXPECT_NE(c.detail.find("2 of 500"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("index 450"), std::string::npos) << c.detail;
  p.c[450] = p.e[450];
  p.c[460] = p.e[460];
  checkAgainstHost(p, kPoisonB);
  p.c[11] = p.e[11];
  p.c[10] = 0; // NaN expected
  checkAgainstHost(p, kPoisonB);
  p.c[10] = p.e[10];
  checkAgainstHost(p, kPoisonB); // only the huge element is wrong now
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonB), 8)
          .status,
      VerdictStatus::WrongResult);
}

// Values spread over many magnitudes (exp of a wide range): a kernel that
// computes the mid-range ones in bf16 stays below the tensor-wide bound the
// largest elements set, not below the bound of their own magnitude.
TEST(TensorStats, PerElementBoundsSeeMidRangePrecision) {
  Planted p(2000);
  for (size_t i = 0; i < p.r.size(); ++i) {
    p.r[i] = std::exp(std::sin(i * 0.37) * 40.0); // 4e-18 .. 2e17
    p.e[i] = static_cast<float>(p.r[i]);
  }
  p.c = p.e;
  EXPECT_EQ(judged(p), VerdictStatus::Accepted);
  // bf16 rounding (8 significant bits) of every value in [1, 1e12].
  for (size_t i = 0; i < p.c.size(); ++i)
    if (p.r[i] >= 1 && p.r[i] <= 1e12) {
      uint32_t b;
      std::memcpy(&b, &p.c[i], 4);
      b = (b + 0x8000u) & 0xFFFF0000u;
      std::memcpy(&p.c[i], &b, 4);
    }
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  ComparisonStats st = tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA);
  Comparison c = judgeComparison(st, 8);
  EXPECT_LE(st.candErr, c.bound); // the tensor-wide bound misses it
  EXPECT_EQ(c.status, VerdictStatus::WrongResult);
  EXPECT_NE(c.detail.find("at values of their magnitude"), std::string::npos)
      << c.detail;
  // One last-bit difference per element is within every bound.
  p.c = p.e;
  for (float &v : p.c)
    v = std::nextafter(v, 0.f);
  EXPECT_EQ(judged(p), VerdictStatus::Accepted);
}

TEST(Envelope, BucketsAndHeadroom) {
  EXPECT_EQ(envBucket(1.0), -kEnvLo);
  EXPECT_EQ(envBucket(1.5), -kEnvLo);
  EXPECT_EQ(envBucket(-2.0), -kEnvLo + 1);
  EXPECT_EQ(envBucket(0.0), 0);
  EXPECT_EQ(envBucket(1e-300), 0);
  EXPECT_EQ(envBucket(1e300), kEnvBuckets - 1);
  std::vector<double> bins(kEnvBuckets, 0.0), counts(kEnvBuckets, 0.0);
  bins[envBucket(1000.0)] = 1e-4; // eager's error at values near 1000
  counts[envBucket(1e-9)] = 10;   // most values are tiny: a tiny floor
  counts[envBucket(1000.0)] = 1;
  std::vector<double> env = envelopeFromBins(bins, counts);
  // Within 2^6 below: that error counts; further below, only the ulps.
  EXPECT_EQ(env[envBucket(1000.0 / 40)], 1e-4);
  EXPECT_LT(env[envBucket(1000.0 / 200)], 1e-5);
  EXPECT_EQ(env[envBucket(1e6)],
            std::ldexp(1.0, envBucket(1e6) + kEnvLo + 1 - 23));
  // Most values near 1000: one ulp there is every element's floor.
  counts[envBucket(1000.0)] = 100;
  env = envelopeFromBins(bins, counts);
  EXPECT_EQ(env[0], std::ldexp(1.0, envBucket(1000.0) + kEnvLo + 1 - 23));
}

// "nonfinite": where eager is NaN/Inf, "order" frees any NaN/Inf candidate
// where the truth is NaN (an Inf of each sign in a sum: the order decides),
// "any" also where the truth is +-Inf (variances); a finite candidate
// there, or Inf where the truth is finite, never passes.
TEST(TensorStats, NonfiniteRulesMatchHost) {
  using R = NonfiniteRule;
  auto status = [](Planted &p, R rule) { return judged(p, rule); };
  Planted p(300);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  p.e[5] = inf;
  p.r[5] = std::numeric_limits<double>::quiet_NaN();
  p.c[5] = -inf;
  p.e[6] = nan;
  p.r[6] = std::numeric_limits<double>::quiet_NaN();
  p.c[6] = inf;
  EXPECT_EQ(status(p, R::Exact), VerdictStatus::NanMismatch);
  EXPECT_EQ(status(p, R::Order), VerdictStatus::Accepted);
  EXPECT_EQ(status(p, R::Any), VerdictStatus::Accepted);
  // NaN where the truth and eager are +Inf (a logsumexp without the Inf
  // rule): wrong under "order"; under "any" (a variance) it passes.
  p.e[7] = inf;
  p.r[7] = std::numeric_limits<double>::infinity();
  p.c[7] = nan;
  EXPECT_EQ(status(p, R::Order), VerdictStatus::NanMismatch);
  EXPECT_EQ(status(p, R::Any), VerdictStatus::Accepted);
  p.c[7] = -inf; // the wrong sign of an infinite truth
  EXPECT_EQ(status(p, R::Order), VerdictStatus::NanMismatch);
  p.c[7] = inf;
  EXPECT_EQ(status(p, R::Order), VerdictStatus::Accepted);
  p.c[5] = 1.0f; // finite where the truth is NaN: wrong either way
  EXPECT_EQ(status(p, R::Any), VerdictStatus::NanMismatch);
  EXPECT_EQ(status(p, R::Order), VerdictStatus::NanMismatch);
  p.c[5] = -inf;
  p.c[200] = inf; // Inf where eager and the truth are finite
  EXPECT_EQ(status(p, R::Any), VerdictStatus::NanMismatch);
}

// Special-value trials: an element whose truth moves by `sens` when the
// inputs move by one fp32 ulp (a row with +3e38 and -3e38) may be off by up
// to factor x sens; the others keep the tight bound.
TEST(TensorStats, IllConditionedElementsAreExcused) {
  Planted p(400);
  std::vector<double> sens(400, 0.0);
  p.c[50] += 0.3f;
  sens[50] = 0.1; // 0.3 <= 8 x 0.1
  checkAgainstHost(p, kPoisonA, NonfiniteRule::Exact, sens);
  p.tensors();
  EXPECT_EQ(judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA,
                                        NonfiniteRule::Exact, int64_t(1) << 26,
                                        at::tensor(sens)),
                            8)
                .status,
            VerdictStatus::Accepted);
  sens[50] = 0.01; // 0.3 > 8 x 0.01
  checkAgainstHost(p, kPoisonA, NonfiniteRule::Exact, sens);
  EXPECT_EQ(judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA,
                                        NonfiniteRule::Exact, int64_t(1) << 26,
                                        at::tensor(sens)),
                            8)
                .status,
            VerdictStatus::WrongResult);
}

// A NaN (or Inf) where evaluating each op in fp32, correctly rounded,
// gives one: a batch norm's output beyond float32's range is -Inf there and
// hardswish(-Inf) is NaN, while the float64 truth (-0) and eager's own
// order (-0.375) stay finite (MobileNetV3-Large's region 57). Any other
// NaN or Inf, or one of the wrong kind or sign, stays a mismatch.
TEST(TensorStats, OpByOpFp32NonfiniteIsExcused) {
  const float nan = std::nanf(""), inf = INFINITY;
  Planted p(400);
  std::vector<float> step(p.e.begin(), p.e.end());
  p.c[30] = nan;
  p.e[30] = -0.375f;
  p.r[30] = -0.0;
  auto status = [&](const std::vector<float> &st) {
    checkAgainstHost(p, kPoisonA, NonfiniteRule::Exact, {}, st);
    p.tensors();
    return judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA,
                                       NonfiniteRule::Exact, int64_t(1) << 26,
                                       at::Tensor(), nullptr, at::tensor(st)),
                           8);
  };
  EXPECT_EQ(status(step).status, VerdictStatus::NanMismatch);
  step[30] = nan;
  Comparison c = status(step);
  EXPECT_EQ(c.status, VerdictStatus::Accepted);
  EXPECT_FALSE(c.allclose1e4); // KernelBench compares with eager's -0.375
  p.c[30] = inf;               // an Inf where the op-by-op value is NaN
  EXPECT_EQ(status(step).status, VerdictStatus::NanMismatch);
  step[30] = -inf; // and of the other sign
  EXPECT_EQ(status(step).status, VerdictStatus::NanMismatch);
  step[30] = inf;
  EXPECT_EQ(status(step).status, VerdictStatus::Accepted);
  p.c[31] = nan; // a second NaN the op-by-op evaluation does not have
  EXPECT_EQ(status(step).status, VerdictStatus::NanMismatch);
  // Where eager is the NaN too, the candidate's NaN was already its value.
  p.c[31] = p.e[31];
  p.c[40] = nan;
  p.e[40] = nan;
  step[40] = nan;
  c = status(step);
  EXPECT_EQ(c.status, VerdictStatus::Accepted);
}

TEST(TensorInputs, SeededDistributionsAndSpecialValues) {
  TensorSpec t{"x", {4096}};
  at::Device cpu(at::kCPU);
  at::Tensor a = makeInput(t, {64, 64}, 7, 0, cpu);
  EXPECT_EQ(a.sizes(), at::IntArrayRef({64, 64}));
  EXPECT_TRUE(sameBits(a, makeInput(t, {64, 64}, 7, 0, cpu)));
  EXPECT_FALSE(sameBits(a, makeInput(t, {64, 64}, 8, 0, cpu)));
  EXPECT_GT(a.lt(0).sum().item<int64_t>(), 1000);
  at::Tensor big = makeInput(t, {4096}, 7, 1, cpu);
  EXPECT_GT(big.abs().max().item<float>(), 100.f);
  at::Tensor sp = makeInput(t, {4096}, 7, 2, cpu);
  EXPECT_GT(sp.isnan().sum().item<int64_t>(), 0);
  EXPECT_GT(sp.isinf().sum().item<int64_t>(), 0);
  EXPECT_GT(sp.eq(3e38f).sum().item<int64_t>(), 0);
  t.distribution = "uniform:2:3";
  at::Tensor u = makeInput(t, {4096}, 7, 0, cpu);
  EXPECT_TRUE(u.ge(2).all().item<bool>() && u.le(3).all().item<bool>());
  t.distribution = "positive";
  EXPECT_TRUE(makeInput(t, {4096}, 7, 0, cpu).gt(0).all().item<bool>());
}

TEST(TensorInputs, StridedInputsKeepTheirLayout) {
  // A transposed view's input: the same values as the row-major one of the
  // same seed, laid out with the traced strides.
  TensorSpec t{"x", {4, 6}};
  at::Device cpu(at::kCPU);
  at::Tensor row = makeInput(t, {4, 6}, 7, 0, cpu);
  t.strides = {1, 4};
  at::Tensor strided = makeInput(t, {4, 6}, 7, 0, cpu);
  EXPECT_EQ(strided.strides(), at::IntArrayRef({1, 4}));
  EXPECT_TRUE(sameBits(strided, row));
  at::Tensor sp = makeInput(t, {4, 6}, 7, 2, cpu);
  EXPECT_EQ(sp.strides(), at::IntArrayRef({1, 4}));
}

TEST(TensorInputs, ExpandedInputsHoldOneValueAlongStrideZero) {
  // T5's mask reaches its region expanded over the batch (stride 0): the
  // input is one slice repeated, and a copy into such a view (kb-verify's
  // guarded buffers) writes that slice once instead of throwing.
  TensorSpec t{"m", {3, 2, 4}};
  t.strides = {0, 4, 1};
  at::Device cpu(at::kCPU);
  at::Tensor x = makeInput(t, {3, 2, 4}, 7, 0, cpu);
  EXPECT_EQ(x.strides(), at::IntArrayRef({0, 4, 1}));
  EXPECT_TRUE(at::equal(x[0], x[2]));
  at::Tensor base = at::zeros({8}, at::kFloat);
  at::Tensor view = base.as_strided({3, 2, 4}, {0, 4, 1});
  copyIntoView(view, x);
  EXPECT_TRUE(sameBits(view, x));
}

TEST(TensorInputs, MasksAreFairCoins) {
  // A bool input (a mask) is random bits in every trial kind, never the
  // float special values; the same seed gives the same mask.
  TensorSpec t{"m", {4096}};
  t.dtype = "bool";
  at::Device cpu(at::kCPU);
  EXPECT_EQ(inputType(t), at::kBool);
  for (int kind : {0, 1, 2}) {
    at::Tensor m = makeInput(t, {4096}, 7, kind, cpu);
    ASSERT_EQ(m.scalar_type(), at::kBool);
    double share = m.to(at::kDouble).mean().item<double>();
    EXPECT_GT(share, 0.45);
    EXPECT_LT(share, 0.55);
  }
  at::Tensor odd = makeInput(t, {4095}, 7, 0, cpu); // not a multiple of 4
  EXPECT_TRUE(sameBits(odd, makeInput(t, {4095}, 7, 0, cpu)));
  EXPECT_FALSE(sameBits(odd, makeInput(t, {4095}, 8, 0, cpu)));
}

// The worker's guard check, on a CPU tensor: one changed byte anywhere
// around the data (front guard, back guard, the slack at the end) is found;
// the data itself is not a guard.
TEST(Canary, DetectsOneChangedByte) {
  GuardLayout g = guardLayout(1000);
  at::Tensor a = at::full({int64_t(g.total)}, kCanaryByte, at::kByte);
  a.narrow(0, int64_t(g.front), 1000).zero_();
  EXPECT_TRUE(guardsIntact(a, g));
  for (size_t pos : {size_t(0), g.front - 1, g.front + 1000,
                     g.front + 1000 + kGuardBytes + 7, g.total - 1}) {
    at::Tensor b = a.clone();
    b[int64_t(pos)] = 0;
    EXPECT_FALSE(guardsIntact(b, g)) << pos;
  }
}

TEST(TensorInputs, JointPatternCountsAndSameBits) {
  at::Tensor x = at::zeros({10}, at::kFloat);
  x.view(at::kInt).narrow(0, 2, 3).fill_(-1);
  EXPECT_EQ(jointPattern(x, x, 0xFFFFFFFFu, 0xFFFFFFFFu).first, 3);
  at::Tensor y = x.clone();
  EXPECT_TRUE(sameBits(x, y)); // NaN patterns compare by bits
  y.view(at::kInt)[9].fill_(1);
  EXPECT_FALSE(sameBits(x, y));
}

// Unwritten over two launches: only where the first launch left poison A
// and the second poison B; a value equal to one poison's bits is a value.
TEST(TensorInputs, JointPatternNeedsBothPoisons) {
  at::Tensor a = at::zeros({8}, at::kFloat), b = at::zeros({8}, at::kFloat);
  a.view(at::kInt).narrow(0, 3, 3).fill_(static_cast<int32_t>(kPoisonA));
  b.view(at::kInt).narrow(0, 4, 3).fill_(static_cast<int32_t>(kPoisonB));
  auto [n, first] = jointPattern(a, b, kPoisonA, kPoisonB);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(first, 4);
  // A kernel that writes poison A's bits (a NaN with that payload) in both
  // launches wrote them.
  b.copy_(a);
  EXPECT_EQ(jointPattern(a, b, kPoisonA, kPoisonB).first, 0);
}

TEST(TensorInputs, BitDifferencesFromEager) {
  at::Tensor e = at::arange(8, at::kFloat);
  at::Tensor c = e.clone();
  EXPECT_EQ(countBitDifferences(c, e), 0);
  // One ulp, a sign of zero, and NaNs of different payloads (which match).
  c.view(at::kInt)[3].add_(1);
  e[0] = 0.0f;
  c[0] = -0.0f;
  e[5] = std::numeric_limits<float>::quiet_NaN();
  c.view(at::kInt)[5].fill_(static_cast<int32_t>(0x7FC0DEADu));
  EXPECT_EQ(countBitDifferences(c, e), 2);
  // int64 indices (argmax): elements that differ, 0-d included.
  at::Tensor i = at::arange(6, at::kLong), j = i.clone();
  j[4] = 0;
  EXPECT_EQ(countBitDifferences(j, i), 1);
  EXPECT_EQ(countBitDifferences(at::scalar_tensor(3, at::kLong),
                                at::scalar_tensor(3, at::kLong)),
            0);
}

TEST(TensorStats, EagerOverflowIsHeldToTheTruth) {
  // Eager fp32 overflowed to NaN where the float64 truth is finite: the
  // candidate may compute the truth, or reproduce eager's NaN; a wrong
  // finite value or a NaN where the truth is NaN too is still rejected.
  Planted p(300);
  p.e[40] = std::numeric_limits<float>::quiet_NaN();
  p.c[40] = static_cast<float>(p.r[40]);
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::Accepted) << c.detail;
  EXPECT_FALSE(c.allclose1e4);
  p.c[40] = p.e[40];
  checkAgainstHost(p, kPoisonA);
  p.c[40] = static_cast<float>(p.r[40]) + 1.f;
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::WrongResult);
  p.r[40] = std::numeric_limits<double>::quiet_NaN();
  p.c[40] = 1.f;
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::NanMismatch);
}

TEST(TensorStats, TruthInfAcceptedWhereEagerIsNan) {
  Planted p(200);
  p.e[7] = std::numeric_limits<float>::quiet_NaN();
  p.r[7] = -std::numeric_limits<double>::infinity();
  p.c[7] = -std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::Accepted);
  p.c[7] = std::numeric_limits<float>::infinity(); // wrong sign
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::NanMismatch);
  EXPECT_NE(c.detail.find("float64 -inf"), std::string::npos) << c.detail;
}

TEST(TensorStats, InfAcceptedWhereTheTruthOverflowsFloat32) {
  // A row sum with +-3e38 terms: the float64 truth is -3.4e39, beyond
  // float32; eager's order stayed finite, the candidate's overflowed to
  // -Inf, the correctly rounded result. Accepted, but not close to eager;
  // +Inf (the wrong sign) or Inf where the truth fits are still rejected.
  Planted p(300);
  p.r[40] = -3.38e39;
  p.e[40] = -1.5f;
  p.c[40] = -std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::Accepted) << c.detail;
  EXPECT_FALSE(c.allclose1e4);
  p.c[40] = std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::NanMismatch);
  p.r[40] = -3.0e38;
  p.c[40] = -std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::NanMismatch);
}

TEST(TensorStats, NanAcceptedWhereTheTruthOverflowsFloat32) {
  // A layer norm whose float64 output (-2.4e39) overflows float32, then
  // floor_divide: fp32's -Inf meets fmod(-Inf, b), a NaN, as in ATen; eager's
  // float statistics overflowed (rstd 0) and gave -1 (gen-20261228 task 1).
  // Accepted, not close to eager; a NaN where the truth fits is rejected,
  // and so is one where the truth is itself an Inf.
  Planted p(300);
  p.r[40] = -1.6e39;
  p.e[40] = -1.0f;
  p.c[40] = std::numeric_limits<float>::quiet_NaN();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::Accepted) << c.detail;
  EXPECT_FALSE(c.allclose1e4);
  p.e[40] = -std::numeric_limits<float>::infinity(); // eager overflowed too
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::Accepted);
  p.e[40] = -1.0f;
  for (double truth : {-3.0e38, -std::numeric_limits<double>::infinity()}) {
    p.r[40] = truth;
    checkAgainstHost(p, kPoisonA);
    p.tensors();
    EXPECT_EQ(
        judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
            .status,
        VerdictStatus::NanMismatch)
        << truth;
  }
}

TEST(TensorStats, InfAcceptedWhereEagerMetBothInfinities) {
  // A row sum whose float64 truth (6e38) overflows float32: eager's order
  // met a +Inf and a -Inf partial and gave NaN; the candidate's +Inf is the
  // correctly rounded result (gen-20261207 task 6). -Inf is still wrong.
  Planted p(300);
  p.r[41] = 6.0e38;
  p.e[41] = std::numeric_limits<float>::quiet_NaN();
  p.c[41] = std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  Comparison c =
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8);
  EXPECT_EQ(c.status, VerdictStatus::Accepted) << c.detail;
  EXPECT_FALSE(c.allclose1e4);
  p.c[41] = -std::numeric_limits<float>::infinity();
  checkAgainstHost(p, kPoisonA);
  p.tensors();
  EXPECT_EQ(
      judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA), 8)
          .status,
      VerdictStatus::NanMismatch);
}

TEST(IndexComparison, ExactOrRejectedWithTheFirstDifference) {
  // argmax / argmin outputs: equal to eager's indices or wrong, no
  // tolerance; an element still holding the poison in both of its words
  // was never written.
  at::Tensor eager = at::arange(0, 1000, at::kLong).remainder(37);
  Comparison same = indexComparison(eager.clone(), eager, kPoisonA);
  EXPECT_EQ(same.status, VerdictStatus::Accepted) << same.detail;
  EXPECT_TRUE(same.allclose1e4);

  at::Tensor off = eager.clone();
  off[612] = off[612].item<int64_t>() + 1;
  off[900] = 0;
  Comparison wrong = indexComparison(off, eager, kPoisonA);
  EXPECT_EQ(wrong.status, VerdictStatus::WrongResult);
  EXPECT_NE(wrong.detail.find("2 of 1000"), std::string::npos) << wrong.detail;
  EXPECT_NE(wrong.detail.find("element 612: 21, eager 20"), std::string::npos)
      << wrong.detail;
  EXPECT_FALSE(wrong.allclose1e4);

  at::Tensor unwritten = eager.clone();
  unwritten.view(at::kInt).narrow(0, 10, 2).fill_(
      static_cast<int32_t>(kPoisonA));
  Comparison u = indexComparison(unwritten, eager, kPoisonA);
  EXPECT_EQ(u.status, VerdictStatus::UnwrittenOutput) << u.detail;
  EXPECT_NE(u.detail.find("1 of 1000"), std::string::npos) << u.detail;
}

TEST(SameBits, ZeroDimIndices) {
  // argmax over all elements returns a 0-d int64 tensor; the determinism
  // check compares two launches' outputs word by word.
  at::Tensor a = at::scalar_tensor(5, at::kLong), b = a.clone();
  EXPECT_TRUE(sameBits(a, b));
  b.fill_(6);
  EXPECT_FALSE(sameBits(a, b));
  EXPECT_TRUE(sameBits(at::scalar_tensor(1.5f), at::scalar_tensor(1.5f)));
}

// 16-bit inputs are drawn in float32 and rounded to their type: float16's
// range turns the special values +-3e38 into +-Inf, bfloat16 keeps them.
TEST(TensorInputs, HalfInputsAreRoundedToTheirType) {
  at::Device cpu(at::kCPU);
  TensorSpec h{"x", {4096}};
  h.dtype = "float16";
  at::Tensor a = makeInput(h, {4096}, 7, 2, cpu);
  EXPECT_EQ(a.scalar_type(), at::kHalf);
  EXPECT_EQ(a.to(at::kFloat).abs().eq(3e38f).sum().item<int64_t>(), 0);
  EXPECT_GT(a.isinf().sum().item<int64_t>(), 0);
  TensorSpec f{"x", {4096}};
  at::Tensor full = makeInput(f, {4096}, 7, 0, cpu);
  h.dtype = "bfloat16";
  at::Tensor b = makeInput(h, {4096}, 7, 0, cpu);
  EXPECT_EQ(b.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(b, full.to(at::kBFloat16))); // same draw, rounded
  EXPECT_EQ(outputType(h), at::kBFloat16);
  EXPECT_EQ(formatOf(at::kHalf).mantissa, 10);
  EXPECT_EQ(formatOf(at::kBFloat16).mantissa, 7);
}

// 16-bit outputs are poisoned 16 bits an element: unwritten where both
// launches left their pattern.
TEST(TensorInputs, JointPatternOfHalfOutputs) {
  at::Tensor a = at::zeros({8}, at::kHalf), b = at::zeros({8}, at::kHalf);
  a.view(at::kShort).narrow(0, 2, 4).fill_(int16_t(kPoisonA16));
  b.view(at::kShort).narrow(0, 3, 4).fill_(int16_t(kPoisonB16));
  auto [n, first] = jointPattern(a, b, twice(kPoisonA16), twice(kPoisonB16));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(first, 3);
}

// A float16 output: eager's error is float16 rounding (2^-11 relative),
// so a candidate one float16 ulp from eager is accepted and one off by
// 1% is not; a truth beyond float16's range (65504) makes the candidate's
// Inf the correctly rounded result, which float32's range would reject.
TEST(TensorStats, Float16OutputsUseTheirOwnFormat) {
  Planted p(512);
  for (size_t i = 0; i < p.r.size(); ++i)
    p.e[i] = at::tensor(float(p.r[i])).to(at::kHalf).item<float>();
  p.c = p.e;
  p.c[17] = std::nextafter(p.e[17], 10.f); // float32 ulps: still eager's
  int16_t bits =
      at::tensor(p.e[30]).to(at::kHalf).view(at::kShort).item<int16_t>();
  p.c[30] = at::tensor(std::vector<int16_t>{int16_t(bits + 1)})
                .view(at::kHalf)
                .item<float>(); // one float16 ulp
  p.tensors();
  auto judge = [&](FloatFormat f) {
    return judgeComparison(tensorStats(p.cand, p.eager, p.truth, 8, kPoisonA,
                                       NonfiniteRule::Exact, int64_t(1) << 26,
                                       at::Tensor(), nullptr, at::Tensor(), f),
                           8, f.mantissa);
  };
  Comparison ok = judge(kFloat16Format);
  EXPECT_EQ(ok.status, VerdictStatus::Accepted) << ok.detail;
  p.c[30] = p.e[30] * 1.01f;
  p.tensors();
  Comparison bad = judge(kFloat16Format);
  EXPECT_EQ(bad.status, VerdictStatus::WrongResult);
  EXPECT_NE(bad.detail.find("eager fp16"), std::string::npos) << bad.detail;
  p.c[30] = p.e[30];
  p.r[40] = 7.0e4;
  p.e[40] = std::numeric_limits<float>::infinity();
  p.c[40] = std::numeric_limits<float>::infinity();
  p.r[41] = 7.0e4;
  p.e[41] = 65504.f; // eager's order stayed finite
  p.c[41] = std::numeric_limits<float>::infinity();
  p.tensors();
  Comparison inf = judge(kFloat16Format);
  EXPECT_EQ(inf.status, VerdictStatus::Accepted) << inf.detail;
  EXPECT_EQ(judge(kFloat32Format).status, VerdictStatus::NanMismatch);
}
