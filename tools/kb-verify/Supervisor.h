//===- Supervisor.h - Worker processes, watchdog, verdict cache -*- C++ -*-===//
#ifndef KB_VERIFY_SUPERVISOR_H
#define KB_VERIFY_SUPERVISOR_H

#include "kb/Verify/Job.h"

#include <string>
#include <sys/types.h>

namespace kb::verify {

std::string defaultCacheDir();

class Supervisor {
public:
  Supervisor(std::string self, std::string cacheDir);
  ~Supervisor();
  /// Verifies one job (JSON text). Never throws.
  Verdict verify(const std::string &jobText);

private:
  bool ensureWorker(const std::string &sanitizer, std::string &error);
  void stopWorker();
  /// Reads one line with a deadline; false on EOF or timeout.
  bool readLine(std::string &line, double seconds, bool &timedOut);
  std::string workerLogTail() const;

  std::string self, cacheDir;
  pid_t pid = -1;
  int toWorker = -1, fromWorker = -1;
  std::string pending; // bytes read past the last newline
  std::string workerSanitizer;
  std::string logPath;
  std::string gpu, driver, cuda, torch;
};

} // namespace kb::verify

#endif
