//===- ExtraShapes.cpp - Shapes with the job's broadcast pattern ----------===//

#include "kb/Verify/Checks.h"

#include <algorithm>

using namespace kb::verify;

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
