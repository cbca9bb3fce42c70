//===- TensorChecks.h - Inputs and comparisons on device tensors -*- C++ -*-===//
//
// The worker keeps every element-wise step on the GPU: a 2 GB output is
// generated, compared and checksummed there in milliseconds, where the same
// work through host buffers takes tens of seconds. The verdict logic is the
// host one (judgeComparison); only the statistics are computed here. The
// functions work on CPU tensors too, which is how CI tests them.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_TENSORCHECKS_H
#define KB_VERIFY_TENSORCHECKS_H

#include "kb/Verify/Checks.h"

#include <ATen/ATen.h>

namespace kb::verify {

/// A fresh input of the tensor's distribution, generated on `device` from
/// `seed` (the same seed gives the same values on the same device kind).
/// Trial kinds: 0 = ordinary, 1 = large magnitudes (x 1e3), 2 = special
/// values (NaN, +-Inf, +-0, denormal, +-3e38) at ~3% of the elements. A
/// bool input (a mask) is a fair coin per element in every kind. Dims of
/// stride 0 (an expanded view) hold one value along them.
at::Tensor makeInput(const TensorSpec &spec, const std::vector<int64_t> &shape,
                     uint64_t seed, int trialKind, at::Device device);

/// The input's element type: at::kBool for a mask, at::kHalf /
/// at::kBFloat16 for "float16" / "bfloat16", else at::kFloat.
at::ScalarType inputType(const TensorSpec &spec);
/// The output's element type (at::kLong for "int64").
at::ScalarType outputType(const TensorSpec &spec);
/// The comparison format of a floating type (float32's for the others).
FloatFormat formatOf(at::ScalarType type);

/// dst.copy_(src) where `dst` may be an expanded view (stride 0 along a dim
/// of size > 1, whose elements share memory): one slice along such dims.
void copyIntoView(at::Tensor dst, const at::Tensor &src);

/// What a comparison needs of eager and the truth alone (not of the
/// candidate): eager's relative error over huge elements and the magnitude
/// envelope. Computed once per output and reused for every launch judged
/// against the same truth (the pass over a 4 GB float64 truth is seconds).
struct EagerProfile {
  double eagerRel = 0;
  at::Tensor env; // per envBucket, the bound before the factor
  FloatFormat format;
};
EagerProfile eagerProfile(const at::Tensor &eager32, const at::Tensor &truth64,
                          int64_t chunk = int64_t(1) << 26,
                          FloatFormat format = kFloat32Format);

/// compareStats over tensors (any shape, contiguous float32 `cand` and
/// `eager32`, float64 `truth64`), processed in chunks of `chunk` elements so
/// temporaries stay bounded.
ComparisonStats tensorStats(const at::Tensor &cand, const at::Tensor &eager32,
                            const at::Tensor &truth64, double factor,
                            uint32_t poison,
                            NonfiniteRule nonfinite = NonfiniteRule::Exact,
                            int64_t chunk = int64_t(1) << 26,
                            const at::Tensor &sens64 = at::Tensor(),
                            const EagerProfile *profile = nullptr,
                            const at::Tensor &step32 = at::Tensor(),
                            FloatFormat format = kFloat32Format);

/// int64 outputs (argmax / argmin indices): accepted only when every
/// element equals eager's; a poison word left in place is an unwritten
/// element. `cand` and `eager` are int64 tensors of the same shape.
Comparison indexComparison(const at::Tensor &cand, const at::Tensor &eager,
                           uint32_t poison);

/// 32-bit words holding `pa` in `a` where `b` holds `pb` (the outputs of
/// two launches poisoned differently): how many, and the first one's index.
std::pair<int64_t, int64_t> jointPattern(const at::Tensor &a,
                                         const at::Tensor &b, uint32_t pa,
                                         uint32_t pb);

/// True when every byte of `allocation` (the whole allocation as bytes,
/// laid out as `g` says) outside its data still holds kCanaryByte.
bool guardsIntact(const at::Tensor &allocation, const GuardLayout &g);

/// Elements of `cand` whose bits differ from `eager32`'s, any NaN matching
/// any NaN (int64 indices: elements that differ).
int64_t countBitDifferences(const at::Tensor &cand, const at::Tensor &eager32);

/// True when the two tensors hold the same bits (NaN payloads included).
bool sameBits(const at::Tensor &a, const at::Tensor &b);

} // namespace kb::verify

#endif
