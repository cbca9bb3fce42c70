//===- Inputs.cpp - Random inputs and extra shapes -------------------------===//

#include "kb/Verify/Checks.h"

#include <cmath>
#include <limits>
#include <random>

using namespace kb::verify;

void kb::verify::fillInput(std::vector<float> &out, const TensorSpec &spec,
                           uint64_t seed, int trialKind) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float lo = -1, hi = 1;
  bool uniform = spec.distribution.rfind("uniform:", 0) == 0;
  if (uniform) {
    size_t a = spec.distribution.find(':'), b = spec.distribution.rfind(':');
    lo = std::stof(spec.distribution.substr(a + 1, b - a - 1));
    hi = std::stof(spec.distribution.substr(b + 1));
  }
  std::uniform_real_distribution<float> unif(lo, hi);
  bool positive = spec.distribution == "positive";
  float magnitude = trialKind == 1 ? 1e3f : 1.0f;
  for (float &v : out) {
    float x = uniform ? unif(rng) : normal(rng);
    if (positive)
      x = std::fabs(x) + 0.1f;
    v = x * magnitude;
  }
  if (trialKind != 2)
    return;
  // Special values where the reference defines them: the reference runs on
  // the same inputs, so whatever it does with them is the truth.
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            1e-40f,
                            -3e38f,
                            3e38f};
  std::uniform_int_distribution<size_t> pick(0, std::size(specials) - 1);
  std::uniform_real_distribution<float> coin(0, 1);
  for (float &v : out)
    if (coin(rng) < 0.03f)
      v = specials[pick(rng)];
}

std::vector<ShapeSet> kb::verify::deriveExtraShapes(const Job &job, int count) {
  const std::vector<int64_t> &out = job.outputs.front().shape;
  auto alignedOk = [&](const std::vector<int64_t> &s) {
    if (s.size() > out.size())
      return false;
    size_t off = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] != 1 && s[i] != out[off + i])
        return false;
    return true;
  };
  for (const TensorSpec &t : job.inputs)
    if (!alignedOk(t.shape))
      return {};
  for (const TensorSpec &t : job.outputs)
    if (t.shape != out)
      return {};
  std::vector<ShapeSet> sets;
  for (int variant = 0; variant < count; ++variant) {
    // Variant 0 shrinks to odd sizes, variant 1 grows past vector-width
    // multiples; both keep size-1 (broadcast) dims at 1.
    std::vector<int64_t> o = out;
    for (int64_t &d : o)
      if (d > 1)
        d = variant % 2 == 0 ? std::max<int64_t>(2, d / 2 + 1) | 1
                             : d + 3 + 2 * (variant / 2);
    ShapeSet set;
    auto follow = [&](const std::vector<int64_t> &s) {
      std::vector<int64_t> r = s;
      size_t off = o.size() - s.size();
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] != 1)
          r[i] = o[off + i];
      return r;
    };
    for (const TensorSpec &t : job.inputs)
      set[t.name] = follow(t.shape);
    for (const TensorSpec &t : job.outputs)
      set[t.name] = o;
    sets.push_back(std::move(set));
  }
  return sets;
}
