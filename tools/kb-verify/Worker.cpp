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
#include "Reference.h"
#include "TensorChecks.h"

#include "kb/Verify/Checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

using namespace kb::verify;

namespace {

void check(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return;
  std::string msg = std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation)
    throw CudaFailure(VerdictStatus::Oom, msg, false);
  throw CudaFailure(compat::isStickyError(e) ? VerdictStatus::Crashed
                                             : VerdictStatus::LaunchError,
                    msg, compat::isStickyError(e));
}

/// A device buffer with guard bytes on both sides.
struct GuardedBuffer {
  uint8_t *base = nullptr;
  size_t bytes = 0;
  GuardedBuffer() = default;
  explicit GuardedBuffer(size_t n) : bytes(n) {
    check(cudaMalloc(&base, n + 2 * kCanaryBytes), "cudaMalloc");
    check(cudaMemset(base, kCanaryByte, n + 2 * kCanaryBytes), "cudaMemset");
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  GuardedBuffer(GuardedBuffer &&o) noexcept { *this = std::move(o); }
  GuardedBuffer &operator=(GuardedBuffer &&o) noexcept {
    std::swap(base, o.base);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~GuardedBuffer() {
    if (base)
      cudaFree(base);
  }
  void *data() const { return base + kCanaryBytes; }
  bool guardsIntact() const {
    std::vector<uint8_t> g(kCanaryBytes);
    check(cudaMemcpy(g.data(), base, kCanaryBytes, cudaMemcpyDeviceToHost),
          "copy guard");
    if (!canaryIntact(g.data(), g.size()))
      return false;
    check(cudaMemcpy(g.data(), base + kCanaryBytes + bytes, kCanaryBytes,
                     cudaMemcpyDeviceToHost),
          "copy guard");
    return canaryIntact(g.data(), g.size());
  }
};

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
  // The launch's workspace (LaunchSpec::workspaceBytes), zeroed on the
  // stream before every launch, as the runtime does. Grown, never shrunk;
  // the process ends after its job.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;

  void *zeroedWorkspace(size_t bytes) {
    if (bytes > workspaceBytes) {
      if (workspace)
        check(cudaFree(workspace), "cudaFree (workspace)");
      workspace = nullptr;
      check(cudaMalloc(&workspace, bytes), "cudaMalloc (workspace)");
      workspaceBytes = bytes;
    }
    check(cudaMemsetAsync(workspace, 0, bytes, stream), "zero workspace");
    return workspace;
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

  void launch(const Launch &l, const std::map<std::string, void *> &ptrs) {
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
    if (wsBytes > 0) {
      void *w = zeroedWorkspace(static_cast<size_t>(wsBytes));
      for (size_t slot : wsSlots)
        dptr[slot] = w;
    }
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
  /// One output against eager: exact for indices (int64), else the
  /// tolerance rule against the float64 truth.
  static Comparison compareOutput(const at::Tensor &got,
                                  const ReferenceOutputs &expect, size_t o,
                                  const Job &job, uint32_t poison,
                                  bool withSensitivity) {
    if (got.scalar_type() == at::kLong)
      return indexComparison(got, expect.eager32[o], poison);
    return judgeComparison(
        tensorStats(got, expect.eager32[o], expect.truth64[o],
                    job.checks.toleranceFactor, poison,
                    job.checks.nonfinite == "any", int64_t(1) << 26,
                    withSensitivity && !expect.sens64.empty() ? expect.sens64[o]
                                                              : at::Tensor()),
        job.checks.toleranceFactor);
  }

  /// Fresh inputs (generated on the GPU) copied into guarded buffers at new
  /// addresses: the previous trial's buffers are still alive while these are
  /// allocated. Returns the pristine tensors the checks compare against.
  std::vector<at::Tensor> placeInputs(const Launch &l, uint64_t seed, int kind,
                                      std::vector<GuardedBuffer> &live,
                                      std::map<std::string, void *> &ptrs) {
    const Job &job = *l.job;
    std::vector<at::Tensor> pristine;
    std::vector<GuardedBuffer> bufs;
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      const std::vector<int64_t> &shape = l.tensors[i].shape;
      pristine.push_back(makeInput(l.tensors[i], shape, seed + 7919 * i, kind,
                                   at::Device(at::kCUDA, 0)));
      at::ScalarType type = inputType(job.inputs[i]);
      bufs.emplace_back((l.tensors[i].strides.empty()
                             ? numel(shape)
                             : stridedSpan(shape, l.tensors[i].strides)) *
                        at::elementSize(type));
      copyIntoView(specView(bufs.back(), l.tensors[i], type), pristine.back());
      ptrs[job.inputs[i].name] = bufs.back().data();
    }
    live = std::move(bufs);
    return pristine;
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

    std::vector<at::Tensor> firstRun;
    for (uint32_t poison : {kPoisonA, kPoisonB}) {
      std::vector<GuardedBuffer> outs;
      for (size_t o = 0; o < job.outputs.size(); ++o) {
        outs.emplace_back(expect.eager32[o].numel() *
                          expect.eager32[o].element_size());
        words(outs.back()).fill_(static_cast<int32_t>(poison));
        ptrs[job.outputs[o].name] = outs.back().data();
      }
      check(cudaDeviceSynchronize(), "before launch");
      launch(l, ptrs);
      check(cudaStreamSynchronize(stream), "candidate kernel");
      check(cudaDeviceSynchronize(), "candidate kernel (device)");
      for (size_t o = 0; o < outs.size(); ++o)
        if (!outs[o].guardsIntact())
          return Failure{VerdictStatus::OutOfBoundsWrite,
                         "the guard bytes around output " +
                             job.outputs[o].name + " were overwritten"};
      for (size_t i = 0; i < nIn; ++i)
        if (!liveInputs[i].guardsIntact() ||
            !sameBits(
                specView(liveInputs[i], l.tensors[i], inputType(l.tensors[i])),
                pristine[i]))
          return Failure{VerdictStatus::InputMutated,
                         "input " + job.inputs[i].name +
                             " changed during the launch"};
      std::vector<at::Tensor> got;
      for (size_t o = 0; o < outs.size(); ++o) {
        got.push_back(specView(outs[o], l.tensors[nIn + o],
                               expect.eager32[o].scalar_type()));
        Comparison c = compareOutput(got.back(), expect, o, job, poison,
                                     /*withSensitivity=*/true);
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
      if (firstRun.empty()) {
        for (size_t o = 0; o < got.size(); ++o)
          v.eagerMismatches = std::max<int64_t>(v.eagerMismatches, 0) +
                              countBitDifferences(got[o], expect.eager32[o]);
        for (const at::Tensor &t : got)
          firstRun.push_back(t.clone());
      } else {
        for (size_t o = 0; o < got.size(); ++o)
          if (!sameBits(got[o], firstRun[o]))
            v.deterministic = false;
      }
    }
    return std::nullopt;
  }

  std::optional<Failure> timing(const Launch &l, const Reference &ref,
                                Verdict &v) {
    const Job &job = *l.job;
    size_t nIn = job.inputs.size();
    std::map<std::string, void *> ptrs;
    std::vector<GuardedBuffer> bufs;
    std::vector<at::Tensor> pristine =
        placeInputs(l, job.checks.seed, 0, bufs, ptrs);
    int64_t bytes = 0;
    for (const GuardedBuffer &b : bufs)
      bytes += b.bytes;
    ReferenceOutputs expect = ref.run(pristine);
    if (auto f = checkShapes(l, expect))
      return f;
    std::vector<size_t> outIdx;
    for (size_t o = 0; o < job.outputs.size(); ++o) {
      bufs.emplace_back(expect.eager32[o].numel() *
                        expect.eager32[o].element_size());
      ptrs[job.outputs[o].name] = bufs.back().data();
      outIdx.push_back(bufs.size() - 1);
      bytes += bufs.back().bytes;
    }
    check(cudaDeviceSynchronize(), "before timing");
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    std::vector<double> ms;
    for (int i = 0; i < job.checks.warmup + job.checks.timingRuns; ++i) {
      // Outside the timed region: flush L2 and re-poison every output (all
      // bytes 0xFF, a NaN pattern), so each timed launch must write it all.
      flush(this);
      for (size_t idx : outIdx)
        check(cudaMemsetAsync(bufs[idx].data(), 0xFF, bufs[idx].bytes, stream),
              "poison output");
      check(cudaEventRecord(s, stream), "event");
      launch(l, ptrs);
      check(cudaEventRecord(e, stream), "event");
      check(cudaEventSynchronize(e), "timed launch");
      float t;
      cudaEventElapsedTime(&t, s, e);
      if (i >= job.checks.warmup)
        ms.push_back(t);
      for (size_t o = 0; o < outIdx.size(); ++o) {
        int64_t left = countPattern(words(bufs[outIdx[o]]), 0xFFFFFFFFu);
        if (left)
          return Failure{VerdictStatus::TimingRecheckFailed,
                         "timed launch " + std::to_string(i) + " left " +
                             std::to_string(left) + " elements of output " +
                             job.outputs[o].name + " unwritten"};
      }
    }
    cudaEventDestroy(s);
    cudaEventDestroy(e);
    check(cudaDeviceSynchronize(), "after timing");
    // And the values of the last timed launch must be right.
    for (size_t o = 0; o < outIdx.size(); ++o) {
      Comparison c =
          compareOutput(specView(bufs[outIdx[o]], l.tensors[nIn + o],
                                 expect.eager32[o].scalar_type()),
                        expect, o, job, 0xFFFFFFFFu, /*withSensitivity=*/false);
      if (c.status != VerdictStatus::Accepted)
        return Failure{VerdictStatus::TimingRecheckFailed,
                       "after the timing loop, output " + job.outputs[o].name +
                           ": " + c.detail};
    }
    expect = ReferenceOutputs(); // free the float64 truth before eager timing
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
    if (extras.empty() && job.candidate.shapeGeneric)
      extras = deriveExtraShapes(job, job.checks.extraShapes);
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
