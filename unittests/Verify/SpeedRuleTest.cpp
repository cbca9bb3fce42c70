//===- SpeedRuleTest.cpp - the never-slower rule on recorded timings ------===//
//
// The timings are kb-verify verdicts recorded on the H200 (bench/results/,
// bench/NOTES.md); the rule must keep the clear wins and drop the rest.

#include "kb/Verify/SpeedRule.h"

#include <gtest/gtest.h>

using namespace kb::verify;

namespace {
TimedRuns runs(double median, double min) { return {median, min}; }
} // namespace

TEST(SpeedRule, KeepsAClearWin) {
  // L2-1's relu + bias region (2026-12-01-kernelbench-l2-s12-tf32.json).
  EXPECT_TRUE(
      SpeedRule().measurablyFaster(runs(0.4921, 0.4897), runs(2.0688, 2.0601)));
}

TEST(SpeedRule, DropsAKernelSlowerThanItsAtenOps) {
  // The training-mode batch norm region of issue 21: 1.80 ms vs 0.50 ms.
  EXPECT_FALSE(
      SpeedRule().measurablyFaster(runs(1.80, 1.78), runs(0.50, 0.49)));
}

TEST(SpeedRule, EqualSpeedIsNotFaster) {
  // A lone relu: the kernel and ATen's both run at copy bandwidth.
  EXPECT_FALSE(
      SpeedRule().measurablyFaster(runs(0.5102, 0.5071), runs(0.5115, 0.5080)));
}

TEST(SpeedRule, MicrosecondKernelsNeedTheAbsoluteFloor) {
  // The same kernel timed 0.0037 and 0.0038 ms (gpu_model_search).
  EXPECT_FALSE(
      SpeedRule().measurablyFaster(runs(0.0037, 0.0036), runs(0.0038, 0.0037)));
  EXPECT_TRUE(
      SpeedRule().measurablyFaster(runs(0.0037, 0.0036), runs(0.0200, 0.0195)));
}

TEST(SpeedRule, NoisyTimingsWidenTheMargin) {
  // 5% faster at the median, but the kernel's runs strayed 0.15 ms below it:
  // the difference is inside the noise.
  TimedRuns kernel = runs(0.95, 0.80), aten = runs(1.00, 0.98);
  EXPECT_NEAR(SpeedRule().marginMs(kernel, aten), 0.17, 1e-12);
  EXPECT_FALSE(SpeedRule().measurablyFaster(kernel, aten));
  // The same medians with tight runs are a measurable 5%.
  EXPECT_TRUE(
      SpeedRule().measurablyFaster(runs(0.95, 0.945), runs(1.0, 0.995)));
}

TEST(SpeedRule, NothingMeasuredIsNoClaim) {
  EXPECT_FALSE(SpeedRule().measurablyFaster(runs(0, 0), runs(1.0, 0.99)));
  EXPECT_FALSE(SpeedRule().measurablyFaster(runs(0.1, 0.1), runs(0, 0)));
  // A median without a recorded minimum: only the relative and absolute
  // margins apply.
  EXPECT_TRUE(
      SpeedRule().measurablyFaster({0.90, std::nullopt}, {1.0, std::nullopt}));
  EXPECT_FALSE(
      SpeedRule().measurablyFaster({0.98, std::nullopt}, {1.0, std::nullopt}));
}
