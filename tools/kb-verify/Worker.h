//===- Worker.h - Runs jobs on the GPU inside the worker process -*- C++ -*-===//
#ifndef KB_VERIFY_WORKER_H
#define KB_VERIFY_WORKER_H

#include "kb/Verify/Job.h"

#include <memory>
#include <stdexcept>

namespace kb::verify {

struct WorkerInfo {
  std::string gpu, driver, cuda, torch;
  double copyGBs = 0;
  int smCount = 0, cc = 0;
  size_t l2Bytes = 0;
};

/// A CUDA failure while running a job. `sticky` failures poison the context:
/// the worker reports and exits, and the supervisor starts a new one.
struct CudaFailure : std::runtime_error {
  CudaFailure(VerdictStatus status, const std::string &msg, bool sticky)
      : std::runtime_error(msg), status(status), sticky(sticky) {}
  VerdictStatus status;
  bool sticky;
};

class GpuWorker {
public:
  GpuWorker(); // picks device 0, measures copy bandwidth
  ~GpuWorker();
  const WorkerInfo &info() const;
  /// Never throws for a bad candidate; throws CudaFailure only when sticky.
  Verdict run(const Job &job);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The `--worker` loop: one job per stdin line, one verdict per stdout line;
/// the first line written is the WorkerInfo. Returns the process exit code.
int workerMain();

} // namespace kb::verify

#endif
