//===- Checks.h - Host-side checks of kb-verify ------------------*- C++ -*-===//
//
// Everything kb-verify decides without a GPU: comparison against the float64
// truth, poison and canary detection, static source checks, launch
// expressions, random inputs and extra shapes, cache keys. Unit-tested in CI.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_CHECKS_H
#define KB_VERIFY_CHECKS_H

#include "kb/Verify/Job.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kb::verify {

// ---- comparison -----------------------------------------------------------

/// Output poison patterns: a quiet NaN with a payload, then a finite value.
constexpr uint32_t kPoisonA = 0x7FC0DEADu;
constexpr uint32_t kPoisonB = 0x5EADBEEFu;
/// Poisons of 16-bit outputs (each 32-bit word holds the pattern twice):
/// a float16 NaN (bfloat16 7.1e37), then a finite value (float16 427.25,
/// bfloat16 6.2e18).
constexpr uint16_t kPoisonA16 = 0x7E5Au;
constexpr uint16_t kPoisonB16 = 0x5EADu;
constexpr uint32_t twice(uint16_t p) {
  return uint32_t(p) | (uint32_t(p) << 16);
}
constexpr uint8_t kCanaryByte = 0xA5;

/// Where a device buffer's data lies in its allocation. Every buffer the
/// worker hands a kernel is its own allocation of whole 2 MiB granules (so
/// no other allocation shares its pages), the data `front` bytes in, and
/// everything around the data, at least kGuardBytes on each side and the
/// whole mapped slack after it, is canary checked after every launch: a
/// store past the end, or results stashed in the slack, is found wherever
/// it lands in the allocation.
constexpr size_t kGuardBytes = size_t(64) << 10;
constexpr size_t kGuardGranule = size_t(2) << 20;
struct GuardLayout {
  size_t front = 0, data = 0, back = 0, total = 0;
};
GuardLayout guardLayout(size_t dataBytes);

struct Comparison {
  // Accepted, or UnwrittenOutput / NanMismatch / WrongResult.
  VerdictStatus status = VerdictStatus::Accepted;
  std::string detail;
  double maxAbsError = 0, eagerMaxAbsError = 0, bound = 0, relL2 = 0;
  bool allclose1e4 = true, allclose1e2 = true;
};

/// What a comparison measured, before judging it. Computed over host
/// buffers by compareOutput and over device tensors (chunk by chunk) by
/// kb-verify's worker; both then call judgeComparison, so the rule and its
/// messages exist once.
struct ComparisonStats {
  uint64_t n = 0;
  uint64_t unwritten = 0, firstUnwritten = 0;
  uint64_t nanBad = 0, firstNanBad = 0;
  float nanBadCand = 0, nanBadEager = 0; // values at firstNanBad
  double nanBadRef = 0;
  uint64_t hugeBad = 0, firstHugeBad = 0;
  float hugeBadCand = 0;
  double hugeBadRef = 0;
  double scale = 0, eagerErr = 0, candErr = 0;
  uint64_t worst = 0;
  float worstCand = 0;
  double worstRef = 0;
  double sumSq = 0, refSq = 0;
  bool allclose1e4 = true, allclose1e2 = true;
  // Elements beyond their own magnitude's bound (magnitudeEnvelope).
  uint64_t envBad = 0, firstEnvBad = 0;
  float envBadCand = 0;
  double envBadRef = 0, envBadBound = 0;

  /// Folds in the stats of the elements that follow (indices offset by n).
  void append(const ComparisonStats &next);
};

/// Eager fp32's largest relative error over the elements whose truth is
/// beyond kHugeMagnitude (at least 2^-23): those are held to `factor` times
/// it, as the others are to `factor` times eager's largest absolute error.
/// exp(x - mean) near 1e37 moves by 1e-5 of itself when x - mean moves by
/// its last bit; eager's error there is small at some elements by luck.
double hugeEagerRelError(const float *eager32, const double *ref64, size_t n);

/// Checks `cand` against the float64 truth `ref64`, with eager fp32 `eager32`
/// defining the fp32 error budget and where NaN/Inf must appear.
/// Rule (docs/verify.md): every element whose eager value is NaN/+Inf/-Inf
/// must be the same in `cand` (unless the float64 truth there is finite and
/// within float32 range: eager's own overflow, where `cand` may instead be
/// checked against the truth; where the truth is +-Inf and eager's NaN, the
/// truth's Inf is accepted too); over the other elements
///   max|cand - ref64| <= factor * max(max|eager32 - ref64|, 2^-23 * scale)
/// where scale = max |ref64| over them; elements with |ref64| > 1e30 (the
/// special-value trials' +-3e38) are instead held to factor x eager's error
/// or 2^-23 relative each, so they cannot widen the bound of the others.
/// `poison` is the bit pattern the output
/// was filled with before the launch: any element still holding it was never
/// written. `nonfinite` frees NaN/Inf where eager is NaN/Inf (Job.h's
/// NonfiniteRule): Order where the truth is NaN, Any where it is NaN or Inf.
/// `sens64` (special-value trials): per element, how far the float64 truth
/// moves when the inputs are perturbed by one fp32 ulp; an element within
/// factor x that of the truth is excused (ill-conditioned). `step32`
/// (special-value trials): the graph evaluated op by op, each op's result
/// correctly rounded to float32; a candidate's NaN, or Inf of the same
/// sign, where it holds one is that faithful evaluation's value.
ComparisonStats compareStats(const float *cand, const float *eager32,
                             const double *ref64, size_t n, double factor,
                             uint32_t poison,
                             NonfiniteRule nonfinite = NonfiniteRule::Exact,
                             const double *sens64 = nullptr,
                             const float *step32 = nullptr);
Comparison judgeComparison(const ComparisonStats &s, double factor,
                           int mantissa = 23);
Comparison compareOutput(const float *cand, const float *eager32,
                         const double *ref64, size_t n, double factor,
                         uint32_t poison,
                         NonfiniteRule nonfinite = NonfiniteRule::Exact);

/// Per-element bounds: one number for a whole tensor is set by its largest
/// elements, so a kernel computing its mid-range values in bf16 hides
/// under it. Each element is also held to `factor` x the larger of
/// eager's largest error over the elements at most 2^kEnvHeadroom times
/// its magnitude, one fp32 ulp at the top of its binade, and one fp32 ulp
/// of the median magnitude (an absolute floor for elements near 0, where
/// cancellation leaves errors of the typical value's size: a floor from the
/// largest value would hide the mid range again) ("the envelope"; binary
/// exponents kEnvLo..kEnvHi, those beyond clamped). It depends on eager
/// and the truth only, never on the candidate.
constexpr int kEnvLo = -160, kEnvHi = 130, kEnvHeadroom = 6;
constexpr int kEnvBuckets = kEnvHi - kEnvLo + 1;
/// The bucket of a truth value: its binary exponent, clamped (0 and
/// subnormals in the lowest), read from the bits as the device does.
int envBucket(double r);
/// Per bucket, eager's largest |eager32 - ref64| over the elements whose
/// eager value and truth are finite and whose truth is at most
/// kHugeMagnitude (0 where none), and how many such elements there are;
/// folded across chunks (max, sum).
void envelopeBins(const float *eager32, const double *ref64, size_t n,
                  std::vector<double> &bins, std::vector<double> &counts);
/// The bound before `factor`, per bucket, from the bins.
std::vector<double> envelopeFromBins(const std::vector<double> &bins,
                                     const std::vector<double> &counts,
                                     int mantissa = 23);

/// Magnitude beyond which an element is checked relatively (see above).
constexpr double kHugeMagnitude = 1e30;
/// FLT_MAX: a float64 truth up to this magnitude is representable in fp32.
constexpr double kFloatMax = 3.4028234663852886e38;

/// The storage format of an output: its explicit mantissa bits (one ulp
/// at 1 is 2^-mantissa) and its largest finite value. Outputs of 16-bit
/// types are compared as float32 values (exact) with their own format's
/// ulp floors and overflow threshold; eager's errors, measured against the
/// truth, set the rest of the bound as they do for float32.
struct FloatFormat {
  int mantissa = 23;
  double maxFinite = kFloatMax;
};
constexpr FloatFormat kFloat32Format{23, kFloatMax};
constexpr FloatFormat kFloat16Format{10, 65504.0};
constexpr FloatFormat kBFloat16Format{7, 3.3895313892515355e38};

// ---- static checks ----------------------------------------------------------

/// Rejects what a device-only kernel must not contain: host code entry points
/// (main, cudaMalloc/cudaLaunch* host API), device-side launches (dynamic
/// parallelism, side streams), device heap allocation, includes outside the
/// allow-list, inline PTX traps are allowed (they crash, and are caught).
struct Rejection {
  VerdictStatus status; // ForbiddenConstruct | EntryPointMissing
  std::string detail;
};
/// The headers a candidate may include (literally, by these names).
const std::set<std::string> &allowedHeaders();

/// Returns the rejection, or nullopt when the source is acceptable.
std::optional<Rejection> staticCheck(const std::string &source,
                                     const std::string &entry);

/// What NVRTC produced, checked where the source's spelling cannot hide it
/// (inline PTX in a string, macros, token pasting): reads of the clock and
/// timer registers, and calls to the device heap, printf or device-side
/// launches.
std::optional<Rejection> ptxCheck(const std::string &ptx);

// ---- launch expressions -------------------------------------------------------

/// Evaluates an integer expression over named sizes: + - * / % ( ),
/// ceil_div(a, b), min(a, b), max(a, b), integer literals. Throws JobError.
int64_t evalExpr(const std::string &expr,
                 const std::map<std::string, int64_t> &vars);

/// Variables for launch expressions given the concrete shapes:
/// numel_<t>, <t>_<k> (dim k), rank_<t>, sm_count.
std::map<std::string, int64_t>
sizeVariables(const std::vector<TensorSpec> &tensors, int64_t smCount);

// ---- inputs and shapes -------------------------------------------------------

/// Extra shapes with the same broadcast pattern as the job's shapes: every
/// non-1 output dim is resized (odd sizes, not multiples of vector widths),
/// and each input dim follows the output dim it broadcasts against. Returns
/// nothing when some input does not broadcast against the first output
/// (a reduction), in which case only explicit extra_shapes are used.
std::vector<ShapeSet> deriveExtraShapes(const Job &job, int count);

/// Input shapes for a shape-generic claim that deriveExtraShapes cannot
/// test (reductions, norms, pooling: outputs do not broadcast against
/// inputs); the worker takes the outputs' shapes from the reference. Every
/// input dim size above 1 is mapped to another, dims of equal size alike (a
/// weight's channels follow its input's): variant 0 odd and smaller, 1 past
/// vector-width multiples, 2 large (the largest input grown along its
/// largest dim to at least 2^22 elements, so a grid or loop capped at a
/// fixed count shows; nothing when it already has that many). Empty when
/// the variant has nothing to change.
std::map<std::string, std::vector<int64_t>> resizedInputs(const Job &job,
                                                          int variant);

int64_t numel(const std::vector<int64_t> &shape);
/// Elements a tensor of `shape` laid out with `strides` spans, from its
/// first address to its last (0 for an empty tensor).
int64_t stridedSpan(const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &strides);

// ---- cache -------------------------------------------------------------------

std::string sha256Hex(const std::string &data);
/// Part of every cache key: bumped whenever a check changes what is
/// accepted, so a verdict an older oracle cached (an adversarial kernel it
/// let through) is never served again. 2: session 39 (issue "Nobody gets
/// in": state, guards, timed launches, per-element bounds, nonfinite rules).
constexpr int kOracleVersion = 3;
std::string cacheKey(const Job &job, const std::string &gpu,
                     const std::string &driver, const std::string &cuda,
                     const std::string &torch);

} // namespace kb::verify

#endif // KB_VERIFY_CHECKS_H
