//===- VerifyJob.cpp - kb-verify jobs for emitted kernels -----------------===//

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Verify/Checks.h"
#include "kb/Verify/Job.h"

namespace {
/// A norm's statistics, or var / std (var_mean, std_mean) among the
/// region's ops (the reference is IR this code generator wrote).
bool computesVariance(const kb::EmittedKernel &k) {
  return k.kind == "norm" ||
         k.referenceIR.find("aten::var") != std::string::npos ||
         k.referenceIR.find("aten::std") != std::string::npos;
}
} // namespace

int64_t kb::kernelBytes(const EmittedKernel &k) {
  int64_t bytes = 0;
  for (const auto *list : {&k.inputs, &k.outputs})
    for (const EmittedTensor &t : *list)
      bytes += elementBytes(t.dtype) * verify::numel(t.shape);
  return bytes;
}

std::string kb::verifyJobJson(const EmittedKernel &k) {
  verify::Job job;
  job.id = k.name;
  job.reference = k.referenceIR;
  for (const EmittedTensor &t : k.inputs) {
    job.inputs.push_back({t.name, t.shape});
    job.inputs.back().distribution = t.distribution;
    job.inputs.back().dtype = t.dtype;
    job.inputs.back().strides = t.strides;
  }
  for (const EmittedTensor &t : k.outputs) {
    job.outputs.push_back({t.name, t.shape});
    job.outputs.back().dtype = t.dtype;
    job.outputs.back().strides = t.strides;
  }
  job.candidate.source = k.source;
  job.candidate.entry = k.name;
  for (const EmittedTensor &t : k.inputs)
    job.candidate.args.push_back({verify::ArgSpec::Kind::Tensor, t.name});
  for (const EmittedTensor &t : k.outputs)
    job.candidate.args.push_back({verify::ArgSpec::Kind::Tensor, t.name});
  if (k.workspaceBytes > 0)
    job.candidate.args.push_back({verify::ArgSpec::Kind::Workspace, ""});
  job.candidate.launch.grid = k.grid;
  job.candidate.launch.block = k.block;
  job.candidate.launch.workspaceBytes = std::to_string(k.workspaceBytes);
  job.candidate.launch.gridSync = k.gridSync;
  // Sizes are compiled in: the kernel is exactly for these shapes.
  job.candidate.shapeGeneric = false;
  job.candidate.origin = "codegen";
  // The watchdog covers compile, trials and timing, and every trial reads
  // each output several times in float64 (about 18 s for a 4.3 GB input
  // and output on an H200, run59): 20 s, plus 5 s per GB moved.
  job.timeoutSeconds = 20.0 + 5.0 * double(kernelBytes(k)) / 1e9;
  // Reductions: with Inf of both signs NaN or Inf depends on the order of
  // the sum ("order": free only where the truth is NaN; where it is +-Inf,
  // a NaN is wrong, as in a logsumexp without the Inf rule). Variances
  // (norm statistics, var, std): ATen's Welford updates give +-Inf where
  // the value is NaN (Inf - Inf) and fp32 overflow flips signs, so any NaN
  // or Inf matches there ("any"). Pointwise kernels must match exactly.
  if (k.kind != "pointwise")
    job.checks.nonfinite = computesVariance(k) ? verify::NonfiniteRule::Any
                                               : verify::NonfiniteRule::Order;
  return verify::toJson(job);
}
