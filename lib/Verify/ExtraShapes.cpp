//===- ExtraShapes.cpp - Shapes with the job's broadcast pattern ----------===//

#include "kb/Verify/Checks.h"

#include <algorithm>
#include <cmath>

using namespace kb::verify;

namespace {
/// A dim size for extra shape `variant`: even variants shrink to odd sizes,
/// odd ones grow past vector-width multiples.
int64_t resizedDim(int64_t d, int variant) {
  return variant % 2 == 0 ? std::max<int64_t>(2, d / 2 + 1) | 1
                          : d + 3 + 2 * (variant / 2);
}
} // namespace

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
        d = resizedDim(d, variant);
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

std::map<std::string, std::vector<int64_t>>
kb::verify::resizedInputs(const Job &job, int variant) {
  std::map<int64_t, int64_t> to;
  if (variant == 2) {
    const TensorSpec *big = nullptr;
    for (const TensorSpec &t : job.inputs)
      if (!big || numel(t.shape) > numel(big->shape))
        big = &t;
    const int64_t target = int64_t(1) << 22;
    if (!big || big->shape.empty() || numel(big->shape) >= target ||
        numel(big->shape) == 0)
      return {};
    int64_t d = *std::max_element(big->shape.begin(), big->shape.end());
    // Every dim of that size grows alike: by the c-th root of the factor.
    int c =
        static_cast<int>(std::count(big->shape.begin(), big->shape.end(), d));
    double grow = std::pow(double(target) / double(numel(big->shape)), 1.0 / c);
    to[d] = static_cast<int64_t>(std::ceil(double(d) * grow)) | 1;
  } else {
    for (const TensorSpec &t : job.inputs)
      for (int64_t d : t.shape)
        if (d > 1)
          to[d] = resizedDim(d, variant);
  }
  bool changed = false;
  std::map<std::string, std::vector<int64_t>> out;
  for (const TensorSpec &t : job.inputs) {
    std::vector<int64_t> s = t.shape;
    for (int64_t &d : s) {
      auto it = to.find(d);
      if (it != to.end() && it->second != d) {
        d = it->second;
        changed = true;
      }
    }
    out[t.name] = s;
  }
  if (!changed)
    return {};
  return out;
}

GuardLayout kb::verify::guardLayout(size_t dataBytes) {
  GuardLayout g;
  g.front = kGuardBytes;
  g.data = dataBytes;
  size_t need = g.front + dataBytes + kGuardBytes;
  g.total = (need + kGuardGranule - 1) / kGuardGranule * kGuardGranule;
  g.back = g.total - g.front - dataBytes;
  return g;
}
