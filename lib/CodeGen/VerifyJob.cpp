//===- VerifyJob.cpp - kb-verify jobs for emitted kernels -----------------===//

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Verify/Job.h"

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
  // Reductions: with Inf of both signs, or Inf inside ATen's Welford
  // updates, NaN or Inf depends on the order of the sum (also between eager
  // and its float64 run); pointwise kernels must match exactly.
  if (k.kind != "pointwise")
    job.checks.nonfinite = "any";
  return verify::toJson(job);
}
