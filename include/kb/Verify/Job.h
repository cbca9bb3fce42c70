//===- Job.h - kb-verify job and verdict protocol ---------------*- C++ -*-===//
//
// The JSON protocol between kb-rewrite (or any client) and kb-verify,
// schema_version 1, documented in docs/verify.md. Plain C++ (nlohmann-json):
// no LLVM, no CUDA, no torch, so every side can link it.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_JOB_H
#define KB_VERIFY_JOB_H

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb::verify {

constexpr int kSchemaVersion = 1;

/// Thrown for a job that does not follow the schema; the message names the
/// JSON path ("inputs[1].shape: expected an array of integers").
struct JobError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  /// float32; outputs may be int64 (indices, compared exactly with eager),
  /// inputs bool (masks).
  std::string dtype = "float32";
  std::string role = "activation"; // activation | parameter
  /// normal | uniform:LO:HI | positive (|normal| + 0.1)
  std::string distribution = "normal";
  /// Fixed-shape jobs: the element strides of a strided view (one per dim;
  /// empty: row-major). An input is laid out so, in a buffer of its span,
  /// for the candidate and for the reference alike; an output (dense: a
  /// permutation of row-major) is read back through them.
  std::vector<int64_t> strides;
};

/// One launch argument: a tensor pointer, or an integer / float scalar whose
/// value is an expression over sizes (docs/verify.md).
struct ArgSpec {
  enum class Kind { Tensor, Int64, Int32, Float32, Workspace } kind;
  std::string value; // tensor name, or expression / number (Workspace: "")
};

struct LaunchSpec {
  std::vector<std::string> grid{"1", "1", "1"};
  std::vector<std::string> block{"256", "1", "1"};
  std::string sharedBytes = "0";
  /// Bytes of scratch memory, zeroed before every launch, passed as a
  /// {"workspace": true} argument (split reductions keep partial results
  /// and a grid barrier there).
  std::string workspaceBytes = "0";
  /// Launched cooperatively (cudaLaunchCooperativeKernel): every block is
  /// resident at once or the launch fails, so a grid barrier cannot hang.
  bool gridSync = false;
};

struct Candidate {
  std::string source;
  std::string entry;
  std::vector<ArgSpec> args;
  LaunchSpec launch;
  bool shapeGeneric = false;
  std::string origin = "unknown"; // codegen | model | corpus ...
};

/// Where NaN and Inf may differ from eager's (docs/verify.md).
/// Exact: NaN/+Inf/-Inf must match eager where it has them (pointwise).
/// Order: where eager is NaN/Inf and the float64 truth is NaN, any NaN or
///   Inf passes (sums with Inf of both signs: the order decides); where the
///   truth is +-Inf, a NaN is wrong (a logsumexp without the Inf rule).
/// Any: where eager and the truth are both NaN/Inf, any NaN or Inf passes
///   (variances: ATen's Welford updates give +-Inf where the value is NaN,
///   and fp32 overflow of the statistics flips signs).
enum class NonfiniteRule { Exact, Order, Any };
const char *nonfiniteName(NonfiniteRule r);

struct Checks {
  int trials = 5;
  uint64_t seed = 1;
  bool specialValues = true;
  int extraShapes = 2; // auto-derived when the candidate is shape-generic
  bool timing = true;
  int timingRuns = 20;
  int warmup = 3;
  double toleranceFactor = 8.0;
  NonfiniteRule nonfinite = NonfiniteRule::Exact;
  std::string sanitizer = "none"; // none | memcheck | racecheck
};

/// Explicit extra shapes: tensor name -> shape, one map per variant.
using ShapeSet = std::map<std::string, std::vector<int64_t>>;

struct Job {
  int schemaVersion = kSchemaVersion;
  std::string id;
  std::string reference; // TorchScript IR text; graph inputs = `inputs`
  std::vector<TensorSpec> inputs, outputs;
  std::vector<ShapeSet> extraShapes; // empty: derive from broadcasting
  Candidate candidate;
  std::string arch = "native"; // "native" or "sm_XY"
  Checks checks;
  double timeoutSeconds = 20.0;

  const TensorSpec *findTensor(const std::string &name) const;
};

struct Timing {
  double medianMs = 0, minMs = 0, maxMs = 0;
  int runs = 0;
};

/// A verdict's status. On the wire (JSON) each is the snake_case word
/// statusName gives (docs/verify.md); Unknown is a word this build does not
/// know (a newer kb-verify), or none.
enum class VerdictStatus {
  Unknown,
  Accepted,
  Compiled, // kb-verify --compile: NVRTC accepted it, nothing ran
  CompileError,
  ForbiddenConstruct,
  EntryPointMissing,
  LaunchError,
  UnwrittenOutput,
  OutOfBoundsWrite,
  InputMutated,
  NanMismatch,
  WrongResult,
  ShapeSpecific,
  TimingRecheckFailed,
  ImplausibleSpeed,
  Crashed,
  SanitizerError,
  Timeout,
  Oom,
  InvalidJob,
  InternalError,
};

/// The wire word of `s` ("unknown" for Unknown).
const char *statusName(VerdictStatus s);
/// The status a wire word names; Unknown for any other word.
VerdictStatus parseVerdictStatus(const std::string &word);

struct Verdict {
  int schemaVersion = kSchemaVersion;
  std::string id;
  VerdictStatus status = VerdictStatus::Unknown;
  std::string detail; // human-readable evidence, truncated
  bool cached = false;
  // Evidence.
  double maxAbsError = 0, eagerMaxAbsError = 0, bound = 0, relL2Error = 0;
  bool allclose1e4 = false, allclose1e2 = false;
  bool deterministic = true;
  /// Output elements whose bits differ from eager fp32's (NaN = NaN) over
  /// every trial; -1 when not measured. 0 means the kernel rounds exactly as
  /// ATen does on these inputs, which a TF32 convolution downstream needs.
  int64_t eagerMismatches = -1;
  int trialsRun = 0;
  std::vector<std::vector<int64_t>> shapesChecked;
  std::optional<Timing> candidateTiming, eagerTiming;
  double rooflineMs = 0, copyBandwidthGBs = 0;
  std::string gpu, driver, cuda, torch;
  std::string compileLog;

  bool accepted() const { return status == VerdictStatus::Accepted; }
};

Job parseJob(const std::string &json);
std::string toJson(const Job &job);
Verdict parseVerdict(const std::string &json);
std::string toJson(const Verdict &verdict);

/// Canonical job text (sorted keys, no timing/cache-irrelevant fields) used
/// in cache keys.
std::string canonicalJob(const Job &job);

/// Truncates long logs keeping head and tail, so feedback stays readable.
std::string truncateMiddle(const std::string &text, size_t maxBytes);

} // namespace kb::verify

#endif // KB_VERIFY_JOB_H
