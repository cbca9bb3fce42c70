//===- Worker.cpp - Runs jobs on the GPU inside the worker process --------===//
//
// Order of checks per launch (docs/verify.md): CUDA errors, guard canaries,
// inputs unchanged, poison left in the output, NaN/Inf positions, values
// against the float64 truth. Every trial uses fresh random inputs at fresh
// addresses (the previous buffers stay alive while new ones are allocated),
// and every trial launches twice with two different output poisons.
//
//===----------------------------------------------------------------------===//

#include "Worker.h"
#include "Compile.h"
#include "CudaCompat.h"
#include "DeviceBuffers.h"
#include "Reference.h"
#include "TensorChecks.h"

#include "kb/Verify/Checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

using namespace kb::verify;

namespace {

struct Failure {
  VerdictStatus status;
  std::string detail;
};

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i)
    o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

/// 0 ordinary, 1 large magnitudes, 2 special values. The job's own shapes
/// get all three; each extra shape an ordinary and a special trial.
int trialKind(size_t shapeIndex, int t, bool special) {
  if (shapeIndex == 0)
    return t == 1 ? 1 : (t == 2 && special) ? 2 : 0;
  return t == 0 ? 0 : special ? 2 : 1;
}

/// The timing loop's input-set and poison order: fixed per job seed, with
/// nothing a kernel can read to predict it.
uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

struct GpuWorker::Impl {
  WorkerInfo info;
  cudaStream_t stream = nullptr;
  void *flushBuf = nullptr;
  size_t flushBytes = 0;
  // The launch's workspace (LaunchSpec::workspaceBytes), kept as the
  // runtime keeps it: zeroed when allocated, then the kernel's own between
  // launches (no memset in front of every launch). Its first 16 bytes (a
  // grid barrier's count and generation) carry over, and the count must be
  // 0 again after every launch (checkWorkspace); the rest is poisoned
  // before each launch, outside the timed region, so nothing a launch
  // leaves there serves the next one and a kernel that reads partials it
  // did not write gets garbage. Grown, never shrunk; the process ends after
  // its job.
  void *workspace = nullptr;
  size_t workspaceBytes = 0; // allocated
  size_t workspaceUsed = 0;  // by the last launch
  static constexpr size_t kWorkspaceKept = 16;

  void *workspaceFor(size_t bytes) {
    if (bytes > workspaceBytes) {
      if (workspace)
        check(cudaFree(workspace), "cudaFree (workspace)");
      workspace = nullptr;
      check(cudaMalloc(&workspace, bytes), "cudaMalloc (workspace)");
      check(cudaMemset(workspace, 0, bytes), "zero workspace");
      workspaceBytes = bytes;
    }
    workspaceUsed = bytes;
    if (bytes > kWorkspaceKept)
      check(cudaMemsetAsync(static_cast<char *>(workspace) + kWorkspaceKept,
                            0xA5, bytes - kWorkspaceKept, stream),
            "poison workspace");
    return workspace;
  }

  /// The last launch left its grid barrier's count (the workspace's first
  /// word) at 0, as the next launch needs it.
  std::optional<Failure> checkWorkspace() {
    if (workspaceUsed < 4)
      return std::nullopt;
    uint32_t count = 0;
    check(cudaMemcpy(&count, workspace, 4, cudaMemcpyDeviceToHost),
          "read workspace");
    if (count == 0)
      return std::nullopt;
    return Failure{VerdictStatus::LaunchError,
                   "the workspace's first word (a grid barrier's count) is " +
                       std::to_string(count) +
                       " after the launch; the workspace is kept between "
                       "launches, so a kernel must leave it 0"};
  }

  static void flush(void *self) {
    auto *impl = static_cast<Impl *>(self);
    cudaMemsetAsync(impl->flushBuf, 0x5A, impl->flushBytes, impl->stream);
  }

  void measureCopyBandwidth() {
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    check(cudaMalloc(&a, bytes), "cudaMalloc (bandwidth probe)");
    check(cudaMalloc(&b, bytes), "cudaMalloc (bandwidth probe)");
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    std::vector<double> ms;
    for (int i = 0; i < 7; ++i) {
      cudaEventRecord(s, stream);
      cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream);
      cudaEventRecord(e, stream);
      check(cudaEventSynchronize(e), "bandwidth probe");
      float t;
      cudaEventElapsedTime(&t, s, e);
      if (i >= 2)
        ms.push_back(t);
    }
    // Bytes read plus bytes written, as benchmark-tasks.md counts them.
    info.copyGBs = 2.0 * bytes / (median(ms) * 1e-3) / 1e9;
    cudaEventDestroy(s);
    cudaEventDestroy(e);
    cudaFree(a);
    cudaFree(b);
  }

  struct Launch {
    cudaKernel_t fn;
    const Job *job;
    std::vector<TensorSpec> tensors; // inputs then outputs, concrete shapes
  };

  /// Launches the candidate; with `start` and `end`, events recorded just
  /// around the kernel (the workspace's poison stays outside them).
  void launch(const Launch &l, const std::map<std::string, void *> &ptrs,
              cudaEvent_t start = nullptr, cudaEvent_t end = nullptr) {
    auto vars = sizeVariables(l.tensors, info.smCount);
    const Candidate &c = l.job->candidate;
    // Argument storage must outlive cuLaunchKernel.
    std::vector<void *> dptr;
    std::vector<int64_t> i64;
    std::vector<int32_t> i32;
    std::vector<float> f32;
    dptr.reserve(c.args.size());
    i64.reserve(c.args.size());
    i32.reserve(c.args.size());
    f32.reserve(c.args.size());
    std::vector<void *> params;
    std::vector<size_t> wsSlots; // indices into dptr of workspace arguments
    for (const ArgSpec &a : c.args) {
      switch (a.kind) {
      case ArgSpec::Kind::Tensor:
        dptr.push_back(ptrs.at(a.value));
        params.push_back(&dptr.back());
        break;
      case ArgSpec::Kind::Int64:
        i64.push_back(evalExpr(a.value, vars));
        params.push_back(&i64.back());
        break;
      case ArgSpec::Kind::Int32:
        i32.push_back(static_cast<int32_t>(evalExpr(a.value, vars)));
        params.push_back(&i32.back());
        break;
      case ArgSpec::Kind::Float32:
        f32.push_back(std::stof(a.value));
        params.push_back(&f32.back());
        break;
      case ArgSpec::Kind::Workspace:
        wsSlots.push_back(dptr.size()); // filled once the size is known
        dptr.push_back(nullptr);
        params.push_back(&dptr.back());
        break;
      }
    }
    int64_t wsBytes = evalExpr(c.launch.workspaceBytes, vars);
    if (wsBytes < 0 || wsBytes > (int64_t(1) << 32))
      throw CudaFailure(VerdictStatus::LaunchError,
                        "workspace_bytes gives " + std::to_string(wsBytes) +
                            " (0 to 4 GiB)",
                        false);
    int64_t g[3], b[3];
    for (int k = 0; k < 3; ++k) {
      g[k] = evalExpr(c.launch.grid[k], vars);
      b[k] = evalExpr(c.launch.block[k], vars);
      if (g[k] < 1 || b[k] < 1 || g[k] > 0x7fffffff || b[k] > 1024)
        throw CudaFailure(VerdictStatus::LaunchError,
                          "launch rule gives grid/block dimension " +
                              std::to_string(k) + " = " + std::to_string(g[k]) +
                              "/" + std::to_string(b[k]),
                          false);
    }
    int64_t shared = evalExpr(c.launch.sharedBytes, vars);
    const void *fn = reinterpret_cast<const void *>(l.fn);
    if (shared > 48 * 1024)
      check(cudaFuncSetAttribute(fn,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(shared)),
            "dynamic shared memory");
    workspaceUsed = 0;
    if (wsBytes > 0) {
      void *w = workspaceFor(static_cast<size_t>(wsBytes));
      for (size_t slot : wsSlots)
        dptr[slot] = w;
    }
    if (start)
      check(cudaEventRecord(start, stream), "event");
    if (c.launch.gridSync) {
      // A grid-synchronised kernel loops over its work by gridDim, so its
      // grid may shrink to what this GPU holds at once (fewer threads per
      // SM than the one it was generated for); if the query fails the
      // launch below still fails cleanly (launch_error) instead of hanging.
      int perSM = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &perSM, fn, static_cast<int>(b[0] * b[1] * b[2]),
              static_cast<size_t>(shared)) == cudaSuccess &&
          perSM > 0 && g[1] == 1 && g[2] == 1)
        g[0] = std::min<int64_t>(g[0], int64_t(perSM) * info.smCount);
      else
        cudaGetLastError(); // not sticky; clear it for the checks after
      check(cudaLaunchCooperativeKernel(fn, dim3(g[0], g[1], g[2]),
                                        dim3(b[0], b[1], b[2]), params.data(),
                                        static_cast<size_t>(shared), stream),
            "cudaLaunchCooperativeKernel");
    } else
      check(cudaLaunchKernel(fn, dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2]),
                             params.data(), static_cast<size_t>(shared),
                             stream),
            "cudaLaunchKernel");
    if (end)
      check(cudaEventRecord(end, stream), "event");
  }

  /// Tensor `t` (float32 unless told) over its device buffer, laid out
  /// with its strides (a strided view's) or row-major.
  static at::Tensor specView(const GuardedBuffer &b, const TensorSpec &t,
                             at::ScalarType type = at::kFloat) {
    if (t.strides.empty())
      return view(b, t.shape, type);
    return at::from_blob(b.data(), t.shape, t.strides,
                         at::TensorOptions().dtype(type).device(at::kCUDA, 0));
  }
  /// A tensor (float32 unless told) over a device buffer the worker owns.
  static at::Tensor view(const GuardedBuffer &b,
                         const std::vector<int64_t> &shape,
                         at::ScalarType type = at::kFloat) {
    return at::from_blob(b.data(), shape,
                         at::TensorOptions().dtype(type).device(at::kCUDA, 0));
  }
  /// The buffer as 32-bit words (poison patterns).
  static at::Tensor words(const GuardedBuffer &b) {
    return view(b, {int64_t(b.bytes / 4)}, at::kInt);
  }
  /// Output `o`'s element type, as eager gives it; an output whose type
  /// is not the job's is an invalid job (its buffer would be mis-sized).
  static at::ScalarType outType(const ReferenceOutputs &e, size_t o) {
    return o < e.outTypes.size() ? e.outTypes[o] : at::kFloat;
  }
  /// Output poison `which` (0: A, 1: B) for elements of `type`.
  static uint32_t poisonOf(at::ScalarType type, int which) {
    return at::elementSize(type) == 2 ? twice(which ? kPoisonB16 : kPoisonA16)
                                      : (which ? kPoisonB : kPoisonA);
  }
  /// Poisons `b` (an output of type `type`) with pattern `which` (0: A).
  static void poison(const GuardedBuffer &b, at::ScalarType type, int which) {
    uint32_t p = poisonOf(type, which);
    // A 16-bit output of an odd element count leaves a half word: filled
    // through the 16-bit view.
    if (b.bytes % 4)
      view(b, {int64_t(b.bytes / 2)}, at::kShort)
          .fill_(static_cast<int16_t>(p & 0xffffu));
    else
      words(b).fill_(static_cast<int32_t>(p));
  }

  /// One output against eager: exact for indices (int64), else the
  /// tolerance rule against the float64 truth.
  /// `poisonChecked`: unwritten elements were already judged over two
  /// launches (jointPattern), so one launch's poison bits are a value here.
  /// `profiles`: eagerProfile of each output of `expect`, made on first use.
  static Comparison compareOutput(const at::Tensor &got,
                                  const ReferenceOutputs &expect, size_t o,
                                  const Job &job, uint32_t poison,
                                  bool withSensitivity, bool poisonChecked,
                                  std::vector<EagerProfile> &profiles) {
    if (got.scalar_type() == at::kLong)
      return indexComparison(got, expect.eager32[o], poison);
    // A 16-bit output is compared widened to float32 (exact), with its own
    // format's ulp floors and range.
    FloatFormat format = formatOf(got.scalar_type());
    if (profiles.size() <= o)
      profiles.resize(expect.eager32.size());
    if (!profiles[o].env.defined())
      profiles[o] = eagerProfile(expect.eager32[o], expect.truth64[o],
                                 int64_t(1) << 26, format);
    ComparisonStats stats = tensorStats(
        got.scalar_type() == at::kFloat ? got : got.to(at::kFloat),
        expect.eager32[o], expect.truth64[o], job.checks.toleranceFactor,
        poison, job.checks.nonfinite, int64_t(1) << 26,
        withSensitivity && !expect.sens64.empty() ? expect.sens64[o]
                                                  : at::Tensor(),
        &profiles[o],
        withSensitivity && o < expect.step32.size() ? expect.step32[o]
                                                    : at::Tensor(),
        format);
    if (poisonChecked)
      stats.unwritten = 0;
    return judgeComparison(stats, job.checks.toleranceFactor, format.mantissa);
  }

  /// Fresh inputs for the first `n` of `specs` (their shapes), generated
  /// on the GPU.
  static std::vector<at::Tensor>
  makeInputs(const std::vector<TensorSpec> &specs, size_t n, uint64_t seed,
             int kind) {
    std::vector<at::Tensor> xs;
    for (size_t i = 0; i < n; ++i)
      xs.push_back(makeInput(specs[i], specs[i].shape, seed + 7919 * i, kind,
                             at::Device(at::kCUDA, 0)));
    return xs;
  }
  static std::vector<at::Tensor> makeInputs(const Launch &l, uint64_t seed,
                                            int kind) {
    return makeInputs(l.tensors, l.job->inputs.size(), seed, kind);
  }
  /// Input `spec`'s view of its buffer, in its own element type.
  static at::Tensor inputView(const GuardedBuffer &b, const TensorSpec &spec) {
    return specView(b, spec, inputType(spec));
  }

  /// Fresh inputs (generated on the GPU) copied into guarded buffers at new
  /// addresses: the previous trial's buffers are still alive while these are
  /// allocated. Returns the pristine tensors the checks compare against.
  std::vector<at::Tensor> placeInputs(const Launch &l, uint64_t seed, int kind,
                                      std::vector<GuardedBuffer> &live,
                                      std::map<std::string, void *> &ptrs) {
    const Job &job = *l.job;
    std::vector<at::Tensor> pristine = makeInputs(l, seed, kind);
    std::vector<GuardedBuffer> bufs;
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      const std::vector<int64_t> &shape = l.tensors[i].shape;
      at::ScalarType type = inputType(job.inputs[i]);
      bufs.emplace_back((l.tensors[i].strides.empty()
                             ? numel(shape)
                             : stridedSpan(shape, l.tensors[i].strides)) *
                        at::elementSize(type));
      copyIntoView(inputView(bufs.back(), l.tensors[i]), pristine[i]);
      ptrs[job.inputs[i].name] = bufs.back().data();
    }
    live = std::move(bufs);
    return pristine;
  }

  /// An extra shape set from resizedInputs(job, variant), its outputs'
  /// shapes from the reference run on inputs of those shapes; nothing when
  /// the variant changes nothing or the reference rejects the shapes.
  std::optional<ShapeSet>
  shapesFromReference(const Job &job, const Reference &ref, int variant) {
    std::map<std::string, std::vector<int64_t>> in =
        resizedInputs(job, variant);
    if (in.empty())
      return std::nullopt;
    for (const TensorSpec &t : job.inputs)
      if (!t.strides.empty())
        return std::nullopt;
    std::vector<TensorSpec> specs = job.inputs;
    for (TensorSpec &t : specs)
      t.shape = in[t.name];
    std::vector<at::Tensor> xs = makeInputs(specs, specs.size(), 1, 0);
    ShapeSet set(in.begin(), in.end());
    try {
      ReferenceOutputs out = ref.run(xs);
      if (out.truth64.size() != job.outputs.size())
        return std::nullopt;
      for (size_t o = 0; o < job.outputs.size(); ++o)
        set[job.outputs[o].name] = std::vector<int64_t>(
            out.truth64[o].sizes().begin(), out.truth64[o].sizes().end());
    } catch (const std::exception &) {
      return std::nullopt; // shapes the region's ops do not accept
    }
    return set;
  }

  std::optional<Failure> checkShapes(const Launch &l,
                                     const ReferenceOutputs &expect) {
    const Job &job = *l.job;
    size_t nIn = job.inputs.size();
    if (expect.truth64.size() != job.outputs.size())
      return Failure{
          VerdictStatus::InvalidJob,
          "the reference returns " + std::to_string(expect.truth64.size()) +
              " outputs, the job names " + std::to_string(job.outputs.size())};
    for (size_t o = 0; o < job.outputs.size(); ++o) {
      std::vector<int64_t> got(expect.truth64[o].sizes().begin(),
                               expect.truth64[o].sizes().end());
      if (got != l.tensors[nIn + o].shape)
        return Failure{VerdictStatus::InvalidJob,
                       "the reference output " + job.outputs[o].name +
                           " has shape " + shapeStr(got) + ", the job says " +
                           shapeStr(l.tensors[nIn + o].shape)};
      if (outType(expect, o) != outputType(job.outputs[o]))
        return Failure{VerdictStatus::InvalidJob,
                       "the reference output " + job.outputs[o].name +
                           " has dtype " +
                           std::string(c10::toString(outType(expect, o))) +
                           ", the job says " + job.outputs[o].dtype};
    }
    return std::nullopt;
  }

  /// One trial at one shape: fresh inputs, two launches, all checks.
  std::optional<Failure> trial(const Launch &l, const Reference &ref,
                               uint64_t seed, int kind,
                               std::vector<GuardedBuffer> &liveInputs,
                               Verdict &v) {
    const Job &job = *l.job;
    size_t nIn = job.inputs.size();
    std::map<std::string, void *> ptrs;
    std::vector<at::Tensor> pristine =
        placeInputs(l, seed, kind, liveInputs, ptrs);
    // Special-value trials also measure each output's sensitivity to its
    // inputs' fp32 rounding (docs/verify.md).
    ReferenceOutputs expect = ref.run(pristine, kind == 2);
    if (auto f = checkShapes(l, expect))
      return f;

    // Both launches first (fresh outputs, poison A, then B), then the
    // checks: an element is unwritten only when it still holds poison A
    // after the first launch and poison B after the second, so a correct
    // output that happens to hold one poison's bits (a NaN with that
    // payload) is not reported unwritten.
    std::vector<std::vector<at::Tensor>> runs(2);
    for (int r = 0; r < 2; ++r) {
      std::vector<GuardedBuffer> outs;
      for (size_t o = 0; o < job.outputs.size(); ++o) {
        outs.emplace_back(expect.eager32[o].numel() *
                          at::elementSize(outType(expect, o)));
        poison(outs.back(), outType(expect, o), r);
        ptrs[job.outputs[o].name] = outs.back().data();
      }
      check(cudaDeviceSynchronize(), "before launch");
      launch(l, ptrs);
      check(cudaStreamSynchronize(stream), "candidate kernel");
      check(cudaDeviceSynchronize(), "candidate kernel (device)");
      if (auto f = checkBuffers(l, outs, liveInputs, pristine))
        return f;
      if (auto f = checkWorkspace())
        return f;
      for (size_t o = 0; o < outs.size(); ++o)
        runs[r].push_back(
            specView(outs[o], l.tensors[nIn + o], outType(expect, o)).clone());
    }
    for (size_t o = 0; o < job.outputs.size(); ++o) {
      if (runs[0][o].scalar_type() == at::kLong)
        continue; // indices: both words of the poison (indexComparison)
      at::ScalarType type = outType(expect, o);
      auto [left, first] = jointPattern(runs[0][o], runs[1][o],
                                        poisonOf(type, 0), poisonOf(type, 1));
      if (left)
        return Failure{VerdictStatus::UnwrittenOutput,
                       "output " + job.outputs[o].name + ": " +
                           std::to_string(left) + " of " +
                           std::to_string(runs[0][o].numel()) +
                           " output elements still hold the poison pattern "
                           "after both launches (never written); first at "
                           "index " +
                           std::to_string(first)};
    }
    std::vector<EagerProfile> profiles;
    for (int r = 0; r < 2; ++r)
      for (size_t o = 0; o < job.outputs.size(); ++o) {
        Comparison c = compareOutput(runs[r][o], expect, o, job,
                                     poisonOf(outType(expect, o), r),
                                     /*withSensitivity=*/true,
                                     /*poisonChecked=*/true, profiles);
        v.maxAbsError = std::max(v.maxAbsError, c.maxAbsError);
        v.eagerMaxAbsError = std::max(v.eagerMaxAbsError, c.eagerMaxAbsError);
        v.bound = std::max(v.bound, c.bound);
        v.relL2Error = std::max(v.relL2Error, c.relL2);
        v.allclose1e4 = v.allclose1e4 && c.allclose1e4;
        v.allclose1e2 = v.allclose1e2 && c.allclose1e2;
        if (c.status != VerdictStatus::Accepted)
          return Failure{c.status,
                         "output " + job.outputs[o].name + ": " + c.detail};
      }
    for (size_t o = 0; o < job.outputs.size(); ++o) {
      const at::Tensor &x = runs[0][o];
      v.eagerMismatches =
          std::max<int64_t>(v.eagerMismatches, 0) +
          countBitDifferences(x.element_size() == 2 ? x.to(at::kFloat) : x,
                              expect.eager32[o]);
      if (!sameBits(runs[0][o], runs[1][o]))
        v.deterministic = false;
    }
    return std::nullopt;
  }

  /// After a launch (device synchronised): the canaries around every output
  /// and input, and every input bit-identical to what was placed there.
  std::optional<Failure> checkBuffers(const Launch &l,
                                      const std::vector<GuardedBuffer> &outs,
                                      const std::vector<GuardedBuffer> &inputs,
                                      const std::vector<at::Tensor> &pristine) {
    const Job &job = *l.job;
    for (size_t o = 0; o < outs.size(); ++o)
      if (!outs[o].guardsIntact())
        return Failure{VerdictStatus::OutOfBoundsWrite,
                       "the guard bytes around output " + job.outputs[o].name +
                           " were overwritten"};
    for (size_t i = 0; i < job.inputs.size(); ++i)
      if (!inputs[i].guardsIntact() ||
          !sameBits(inputView(inputs[i], l.tensors[i]), pristine[i]))
        return Failure{VerdictStatus::InputMutated,
                       "input " + job.inputs[i].name +
                           " (or the guard bytes around it) changed during the "
                           "launch"};
    return std::nullopt;
  }

  /// The timing loop. Its launches are verified like the trials': two
  /// input sets take turns in the same buffers (a seeded order, so a result
  /// replayed for the same addresses, or for values sampled from a previous
  /// launch, is wrong), outputs are poisoned with the trials' patterns, and
  /// after every launch the canaries, the inputs and every output element
  /// are checked (bits against the first checked launch of that input set;
  /// if they differ, the full comparison against the truth).
  std::optional<Failure> timing(const Launch &l, const Reference &ref,
                                Verdict &v) {
    const Job &job = *l.job;
    size_t nIn = job.inputs.size();
    std::map<std::string, void *> ptrs;
    std::vector<GuardedBuffer> bufs;
    std::vector<at::Tensor> sets[2];
    sets[0] = placeInputs(l, job.checks.seed, 0, bufs, ptrs);
    sets[1] = makeInputs(l, job.checks.seed * 2654435761u + 17, 0);
    ReferenceOutputs expects[2] = {ref.run(sets[0]), ref.run(sets[1])};
    for (const ReferenceOutputs &e : expects)
      if (auto f = checkShapes(l, e))
        return f;
    const ReferenceOutputs &expect = expects[0];
    int64_t outBytes = 0, inBytes = 0;
    std::vector<GuardedBuffer> outs;
    for (size_t o = 0; o < job.outputs.size(); ++o) {
      outs.emplace_back(expect.eager32[o].numel() *
                        at::elementSize(outType(expect, o)));
      ptrs[job.outputs[o].name] = outs.back().data();
      outBytes += outs.back().bytes;
    }
    // The least a correct kernel moves: it writes every output, and reads
    // of each input at most as much as it writes (a select or a slice reads
    // only a part of its input).
    for (const GuardedBuffer &b : bufs)
      inBytes += std::min<int64_t>(b.bytes, outBytes);
    int64_t bytes = outBytes + inBytes;
    std::vector<at::Tensor> seen[2];
    std::vector<EagerProfile> profiles[2];
    int placed = 0;
    check(cudaDeviceSynchronize(), "before timing");
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    std::vector<double> ms;
    int launches = job.checks.warmup + job.checks.timingRuns;
    for (int i = 0; i < launches; ++i) {
      // Outside the timed region: the input set, the poisons, an L2 flush.
      int set = i < 2 ? i : int(splitmix(job.checks.seed * 7919 + i) >> 63);
      if (set != placed) {
        for (size_t k = 0; k < nIn; ++k)
          copyIntoView(inputView(bufs[k], l.tensors[k]), sets[set][k]);
        placed = set;
      }
      int which = int(splitmix(job.checks.seed + 31 * i) & 1);
      for (size_t o = 0; o < outs.size(); ++o)
        poison(outs[o], outType(expect, o), which);
      check(cudaDeviceSynchronize(), "before a timed launch");
      flush(this);
      launch(l, ptrs, s, e);
      check(cudaEventSynchronize(e), "timed launch");
      check(cudaDeviceSynchronize(), "timed launch (device)");
      float t;
      cudaEventElapsedTime(&t, s, e);
      if (i >= job.checks.warmup)
        ms.push_back(t);
      auto failed = [&](const std::string &what) {
        return Failure{VerdictStatus::TimingRecheckFailed,
                       "timed launch " + std::to_string(i) + " of " +
                           std::to_string(launches) + ": " + what};
      };
      if (auto f = checkBuffers(l, outs, bufs, sets[set]))
        return failed(statusName(f->status) + std::string(": ") + f->detail);
      if (auto f = checkWorkspace())
        return failed(statusName(f->status) + std::string(": ") + f->detail);
      for (size_t o = 0; o < outs.size(); ++o) {
        at::Tensor got =
            specView(outs[o], l.tensors[nIn + o], outType(expect, o));
        if (o < seen[set].size() && sameBits(got, seen[set][o]))
          continue;
        // A poison left in place is a wrong value here (poison A is a
        // NaN, B a finite 6.2e18); a correct value with a poison's bits
        // is not refused (the trials judged unwritten elements).
        Comparison c = compareOutput(got, expects[set], o, job,
                                     poisonOf(outType(expect, o), which),
                                     /*withSensitivity=*/false,
                                     /*poisonChecked=*/true, profiles[set]);
        if (c.status != VerdictStatus::Accepted)
          return failed("output " + job.outputs[o].name + ": " + c.detail);
        if (o >= seen[set].size())
          seen[set].push_back(got.clone());
      }
    }
    cudaEventDestroy(s);
    cudaEventDestroy(e);
    check(cudaDeviceSynchronize(), "after timing");
    for (int k = 0; k < 2; ++k) {
      seen[k].clear();
      profiles[k].clear();
    }
    std::vector<at::Tensor> &pristine = sets[0];  // eager's inputs
    expects[0] = expects[1] = ReferenceOutputs(); // free the truth first
    Timing t;
    std::sort(ms.begin(), ms.end());
    t.medianMs = ms[ms.size() / 2];
    t.minMs = ms.front();
    t.maxMs = ms.back();
    t.runs = static_cast<int>(ms.size());
    v.candidateTiming = t;
    std::vector<double> eager =
        ref.timeEager(pristine, stream, 0, job.checks.warmup,
                      job.checks.timingRuns, &Impl::flush, this);
    if (!eager.empty()) {
      std::sort(eager.begin(), eager.end());
      v.eagerTiming = Timing{eager[eager.size() / 2], eager.front(),
                             eager.back(), static_cast<int>(eager.size())};
    }
    v.copyBandwidthGBs = info.copyGBs;
    v.rooflineMs = bytes / (info.copyGBs * 1e9) * 1e3;
    // Below half the time the bytes need at copy bandwidth is not a fast
    // kernel, it is skipped work (tiny problems are launch-bound, exempt).
    if (bytes >= (int64_t(8) << 20) && t.medianMs < 0.5 * v.rooflineMs)
      return Failure{VerdictStatus::ImplausibleSpeed,
                     "median " + std::to_string(t.medianMs) +
                         " ms is below half the roofline time " +
                         std::to_string(v.rooflineMs) + " ms for " +
                         std::to_string(bytes) + " bytes"};
    return std::nullopt;
  }
};

GpuWorker::GpuWorker() : impl(new Impl) {
  WorkerInfo &info = impl->info;
  if (!Reference::usesCuda())
    throw std::runtime_error("kb-verify was built against a libtorch without "
                             "CUDA; rebuild it against the GPU host's torch");
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "CUDA context");
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  info.gpu = prop.name;
  info.smCount = prop.multiProcessorCount;
  info.cc = prop.major * 10 + prop.minor;
  info.l2Bytes = prop.l2CacheSize;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  info.driver = std::to_string(drv);
  info.cuda = std::to_string(rt);
  info.torch = Reference::torchVersion();
  check(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking),
        "cudaStreamCreate");
  impl->flushBytes = std::max<size_t>(2 * info.l2Bytes, 64 << 20);
  check(cudaMalloc(&impl->flushBuf, impl->flushBytes), "cudaMalloc (L2 flush)");
  impl->measureCopyBandwidth();
}

GpuWorker::~GpuWorker() = default;

const WorkerInfo &GpuWorker::info() const { return impl->info; }

Verdict GpuWorker::run(const Job &job) {
  Verdict v;
  v.id = job.id;
  v.gpu = impl->info.gpu;
  v.driver = impl->info.driver;
  v.cuda = impl->info.cuda;
  v.torch = impl->info.torch;
  v.allclose1e4 = v.allclose1e2 = true;
  auto fail = [&](VerdictStatus status, const std::string &detail) {
    v.status = status;
    v.detail = truncateMiddle(detail, 2000);
    return v;
  };
  std::unique_ptr<Reference> ref;
  try {
    ref = std::make_unique<Reference>(job.reference);
  } catch (const std::exception &e) {
    return fail(VerdictStatus::InvalidJob,
                std::string("reference IR: ") + e.what());
  }
  std::string arch =
      job.arch == "native" ? "sm_" + std::to_string(impl->info.cc) : job.arch;
  CompileResult cr =
      compileCandidate(job.candidate.source, job.candidate.entry, arch);
  v.compileLog = cr.log;
  if (!cr.ok)
    return fail(cr.status, cr.log);

  cudaLibrary_t module = nullptr;
  try {
    check(cudaLibraryLoadData(&module, cr.cubin.data(), nullptr, nullptr, 0,
                              nullptr, nullptr, 0),
          "cudaLibraryLoadData");
    cudaKernel_t fn;
    if (cudaLibraryGetKernel(&fn, module, cr.loweredEntry.c_str()) !=
        cudaSuccess) {
      cudaGetLastError();
      cudaLibraryUnload(module);
      return fail(VerdictStatus::EntryPointMissing,
                  "no kernel '" + job.candidate.entry + "' in the module");
    }
    std::vector<ShapeSet> extras = job.extraShapes;
    if (extras.empty() && job.candidate.shapeGeneric) {
      extras = deriveExtraShapes(job, job.checks.extraShapes);
      // Claims deriveExtraShapes cannot test (outputs that do not broadcast
      // against the inputs), and a large shape for every claim: resized
      // inputs, the outputs' shapes from the reference.
      for (int variant = extras.empty() ? 0 : 2; variant < 3; ++variant)
        if (auto set = impl->shapesFromReference(job, *ref, variant))
          extras.push_back(std::move(*set));
      if (extras.empty())
        return fail(VerdictStatus::InvalidJob,
                    "the candidate claims shape_generic, but no other shapes "
                    "could be derived for this job; give extra_shapes");
    }
    std::vector<ShapeSet> shapes(1);
    shapes.insert(shapes.end(), extras.begin(), extras.end());
    std::optional<Failure> failure;
    std::vector<GuardedBuffer> live;
    for (size_t si = 0; si < shapes.size() && !failure; ++si) {
      Impl::Launch l{fn, &job, {}};
      for (const auto *list : {&job.inputs, &job.outputs})
        for (TensorSpec t : *list) {
          auto it = shapes[si].find(t.name);
          if (it != shapes[si].end())
            t.shape = it->second;
          l.tensors.push_back(t);
        }
      int trials = si == 0 ? job.checks.trials : 2;
      for (int t = 0; t < trials && !failure; ++t) {
        int kind = trialKind(si, t, job.checks.specialValues);
        uint64_t seed = job.checks.seed * 1000003 + si * 1009 + t * 31;
        failure = impl->trial(l, *ref, seed, kind, live, v);
        if (!failure)
          ++v.trialsRun;
      }
      if (failure && si > 0 && failure->status != VerdictStatus::InvalidJob) {
        failure->detail = "passes at the job's shapes but fails at " +
                          shapeStr(l.tensors[job.inputs.size()].shape) + " (" +
                          statusName(failure->status) + "): " + failure->detail;
        failure->status = VerdictStatus::ShapeSpecific;
      }
      if (!failure)
        v.shapesChecked.push_back(l.tensors[job.inputs.size()].shape);
    }
    live.clear();
    if (!failure && job.checks.timing) {
      Impl::Launch l{fn, &job, {}};
      for (const auto *list : {&job.inputs, &job.outputs})
        for (const TensorSpec &t : *list)
          l.tensors.push_back(t);
      failure = impl->timing(l, *ref, v);
    }
    cudaLibraryUnload(module);
    if (failure)
      return fail(failure->status, failure->detail);
  } catch (const CudaFailure &e) {
    if (e.sticky)
      throw;
    if (module)
      cudaLibraryUnload(module);
    return fail(e.status, e.what());
  } catch (const JobError &e) {
    if (module)
      cudaLibraryUnload(module);
    return fail(VerdictStatus::InvalidJob, e.what());
  } catch (const std::exception &e) {
    if (module)
      cudaLibraryUnload(module);
    return fail(VerdictStatus::InvalidJob,
                std::string("reference failed: ") + e.what());
  }
  v.status = VerdictStatus::Accepted;
  return v;
}

int kb::verify::workerMain() {
  std::unique_ptr<GpuWorker> worker;
  try {
    worker = std::make_unique<GpuWorker>();
  } catch (const std::exception &e) {
    std::cout << nlohmann::json{{"worker_error", e.what()}}.dump() << std::endl;
    return 2;
  }
  const WorkerInfo &i = worker->info();
  std::cout << nlohmann::json{{"gpu", i.gpu},
                              {"driver", i.driver},
                              {"cuda", i.cuda},
                              {"torch", i.torch},
                              {"copy_gbs", i.copyGBs},
                              {"sm_count", i.smCount},
                              {"cc", i.cc}}
                   .dump()
            << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    Verdict v;
    try {
      Job job = parseJob(line);
      v = worker->run(job);
    } catch (const JobError &e) {
      v.status = VerdictStatus::InvalidJob;
      v.detail = e.what();
    } catch (const CudaFailure &e) {
      v.status = VerdictStatus::Crashed;
      v.detail = e.what();
      std::cout << toJson(v) << std::endl;
      return 3; // the context is poisoned: the supervisor starts a new worker
    }
    std::cout << toJson(v) << std::endl;
  }
  return 0;
}
