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
  }
  for (const EmittedTensor &t : k.outputs)
    job.outputs.push_back({t.name, t.shape});
  job.candidate.source = k.source;
  job.candidate.entry = k.name;
  for (const EmittedTensor &t : k.inputs)
    job.candidate.args.push_back({verify::ArgSpec::Kind::Tensor, t.name});
  for (const EmittedTensor &t : k.outputs)
    job.candidate.args.push_back({verify::ArgSpec::Kind::Tensor, t.name});
  job.candidate.launch.grid = k.grid;
  job.candidate.launch.block = k.block;
  // Sizes are compiled in: the kernel is exactly for these shapes.
  job.candidate.shapeGeneric = false;
  job.candidate.origin = "codegen";
  return verify::toJson(job);
}
