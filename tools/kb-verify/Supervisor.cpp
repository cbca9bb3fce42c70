//===- Supervisor.cpp - Worker processes, watchdog, verdict cache ---------===//
//
// The watchdog limit is the job's timeout_s (default 20 s, compile, trials
// and timing together); a worker past it is killed with SIGKILL and the
// verdict is `timeout`. A worker that dies is `crashed`, with the tail of its
// stderr. The next job starts a fresh worker.
//
//===----------------------------------------------------------------------===//

#include "Supervisor.h"

#include "kb/Verify/Checks.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kb::verify;

std::string kb::verify::defaultCacheDir() {
  if (const char *x = std::getenv("KB_VERIFY_CACHE"))
    return x;
  if (const char *x = std::getenv("XDG_CACHE_HOME"))
    return std::string(x) + "/kb-verify";
  if (const char *h = std::getenv("HOME"))
    return std::string(h) + "/.cache/kb-verify";
  return "";
}

Supervisor::Supervisor(std::string self, std::string cacheDir)
    : self(std::move(self)), cacheDir(std::move(cacheDir)) {
  signal(SIGPIPE, SIG_IGN);
  logPath = "/tmp/kb-verify-worker-" + std::to_string(getpid()) + ".log";
}

Supervisor::~Supervisor() {
  stopWorker();
  unlink(logPath.c_str());
  unlink((logPath + ".sanitizer").c_str());
}

void Supervisor::stopWorker() {
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  if (toWorker >= 0)
    close(toWorker);
  if (fromWorker >= 0)
    close(fromWorker);
  pid = -1;
  toWorker = fromWorker = -1;
  pending.clear();
}

std::string Supervisor::workerLogTail() const {
  std::stringstream ss;
  for (const std::string &p : {logPath + ".sanitizer", logPath}) {
    std::ifstream in(p);
    if (in)
      ss << in.rdbuf();
  }
  std::string s = ss.str();
  return s.size() > 1500 ? s.substr(s.size() - 1500) : s;
}

bool Supervisor::readLine(std::string &line, double seconds, bool &timedOut) {
  timedOut = false;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (true) {
    size_t nl = pending.find('\n');
    if (nl != std::string::npos) {
      line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timedOut = true;
      return false;
    }
    pollfd p{fromWorker, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      continue;
    char buf[65536];
    ssize_t n = read(fromWorker, buf, sizeof(buf));
    if (n <= 0)
      return false; // EOF: the worker died
    pending.append(buf, n);
  }
}

bool Supervisor::ensureWorker(const std::string &sanitizer, std::string &error) {
  if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == pid) {
    pid = -1;
    stopWorker();
  }
  if (pid > 0 && sanitizer == workerSanitizer)
    return true;
  stopWorker();
  int in[2], out[2];
  if (pipe(in) || pipe(out)) {
    error = std::string("pipe: ") + strerror(errno);
    return false;
  }
  pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + strerror(errno);
    return false;
  }
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    int log = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0)
      dup2(log, 2);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    std::string exe = "/proc/self/exe";
    char selfPath[4096];
    ssize_t n = readlink("/proc/self/exe", selfPath, sizeof(selfPath) - 1);
    if (n > 0) {
      selfPath[n] = 0;
      exe = selfPath;
    }
    if (sanitizer != "none") {
      // The sanitizer's report goes to the worker log, not to the verdict
      // stream on stdout.
      std::string tool = "--tool=" + sanitizer;
      std::string logOpt = "--log-file=" + logPath + ".sanitizer";
      execlp("compute-sanitizer", "compute-sanitizer", tool.c_str(),
             logOpt.c_str(), "--error-exitcode=97", "--print-limit=20",
             exe.c_str(), "--worker", (char *)nullptr);
      _exit(127);
    }
    execl(exe.c_str(), "kb-verify", "--worker", (char *)nullptr);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  toWorker = in[1];
  fromWorker = out[0];
  workerSanitizer = sanitizer;
  std::string line;
  bool timedOut = false;
  // Skip anything a wrapper (compute-sanitizer) prints before the greeting.
  while (readLine(line, 120, timedOut) && (line.empty() || line[0] != '{'))
    ;
  if (line.empty() || line[0] != '{') {
    error = "the worker did not start" +
            std::string(timedOut ? " (timeout)" : "") + ": " + workerLogTail();
    stopWorker();
    return false;
  }
  try {
    auto j = nlohmann::json::parse(line);
    if (j.contains("worker_error")) {
      error = "the worker could not use the GPU: " +
              j["worker_error"].get<std::string>();
      stopWorker();
      return false;
    }
    gpu = j.value("gpu", "");
    driver = j.value("driver", "");
    cuda = j.value("cuda", "");
    torch = j.value("torch", "");
  } catch (const std::exception &e) {
    error = std::string("bad worker greeting: ") + e.what();
    stopWorker();
    return false;
  }
  return true;
}

Verdict Supervisor::verify(const std::string &jobText) {
  Verdict v;
  Job job;
  try {
    job = parseJob(jobText);
  } catch (const JobError &e) {
    v.status = VerdictStatus::InvalidJob;
    v.detail = e.what();
    return v;
  }
  v.id = job.id;
  std::string error;
  if (!ensureWorker(job.checks.sanitizer, error)) {
    v.status = VerdictStatus::InternalError;
    v.detail = error;
    return v;
  }
  std::string key = cacheKey(job, gpu, driver, cuda, torch);
  std::string cachePath = cacheDir.empty() ? "" : cacheDir + "/" + key + ".json";
  if (!cachePath.empty()) {
    std::ifstream in(cachePath);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      try {
        Verdict c = parseVerdict(ss.str());
        c.cached = true;
        c.id = job.id;
        return c;
      } catch (const std::exception &) {
        // A damaged entry is ignored and rewritten.
      }
    }
  }
  std::string line = toJson(job) + "\n";
  if (write(toWorker, line.data(), line.size()) != (ssize_t)line.size()) {
    stopWorker();
    if (!ensureWorker(job.checks.sanitizer, error) ||
        write(toWorker, line.data(), line.size()) != (ssize_t)line.size()) {
      v.status = VerdictStatus::InternalError;
      v.detail = "cannot reach the worker: " + error;
      return v;
    }
  }
  std::string reply;
  bool timedOut = false;
  bool got;
  while ((got = readLine(reply, job.timeoutSeconds, timedOut)) &&
         (reply.empty() || reply[0] != '{'))
    ; // a wrapper's chatter, not a verdict
  if (!got) {
    int status = 0;
    if (timedOut) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      pid = -1;
      v.status = VerdictStatus::Timeout;
      v.detail = "no verdict within the watchdog limit of " +
                 std::to_string(job.timeoutSeconds) +
                 " s (timeout_s): the kernel hangs or is far too slow";
    } else {
      waitpid(pid, &status, 0);
      pid = -1;
      v.status = VerdictStatus::Crashed;
      std::string how = WIFSIGNALED(status)
                            ? "signal " + std::to_string(WTERMSIG(status))
                            : "exit code " + std::to_string(WEXITSTATUS(status));
      if (WIFEXITED(status) && WEXITSTATUS(status) == 97)
        v.status = VerdictStatus::SanitizerError;
      v.detail = "the worker died (" + how + "): " + workerLogTail();
    }
    stopWorker();
  } else {
    try {
      v = parseVerdict(reply);
    } catch (const std::exception &e) {
      v.status = VerdictStatus::InternalError;
      v.detail = std::string("unreadable verdict: ") + e.what();
    }
    // A sanitizer worker serves one job: its report comes at exit (also
    // after a crash, which the sanitizer itself may have caused).
    if (job.checks.sanitizer != "none" && pid > 0) {
      close(toWorker);
      toWorker = -1;
      int status = 0;
      waitpid(pid, &status, 0);
      pid = -1;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 97 &&
          (v.accepted() || v.status == VerdictStatus::Crashed)) {
        v.status = VerdictStatus::SanitizerError;
        v.detail = "compute-sanitizer (" + job.checks.sanitizer +
                   ") reported errors: " + workerLogTail();
      }
      stopWorker();
    }
    // A worker that reports a crash exits right after: wait for it, so the
    // next job cannot be written to a dying process.
    if (v.status == VerdictStatus::Crashed)
      stopWorker();
  }
  v.id = job.id;
  bool environmental = v.status == VerdictStatus::Timeout ||
                       v.status == VerdictStatus::Oom ||
                       v.status == VerdictStatus::InternalError;
  if (!cachePath.empty() && !environmental) {
    for (size_t p = cacheDir.find('/', 1); ; p = cacheDir.find('/', p + 1)) {
      mkdir(cacheDir.substr(0, p).c_str(), 0755); // parents first
      if (p == std::string::npos)
        break;
    }
    std::string tmp = cachePath + ".tmp" + std::to_string(getpid());
    {
      std::ofstream out(tmp);
      out << toJson(v);
    }
    rename(tmp.c_str(), cachePath.c_str());
  }
  return v;
}
