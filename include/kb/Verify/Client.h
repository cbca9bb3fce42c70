//===- Client.h - The one way the compiler runs kb-verify -------*- C++ -*-===//
//
// Graph rewrite, the model search and C++ rewrite all run kb-verify as a
// child process: found the same way, on the same test of a GPU, its stdout
// read back the same way. kb-verify itself links no LLVM, so this client
// lives in its own library (KbVerifyClient) beside KbVerifyCore.
//
//===----------------------------------------------------------------------===//
#ifndef KB_VERIFY_CLIENT_H
#define KB_VERIFY_CLIENT_H

#include "kb/Verify/Job.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace kb::verify {

/// Whether a GPU is visible (/dev/nvidiactl or /dev/nvidia0).
/// KB_ASSUME_NO_GPU=1 says no; KB_ASSUME_GPU=1 says yes (tests that run a
/// scripted kb-verify on the CPU).
bool gpuPresent();

/// kb-verify: `given` if set, else $KB_VERIFY, else the kb-verify beside
/// the running executable (found from `argv0` and an address in it); ""
/// when there is none.
std::string findVerifier(const char *argv0, void *mainAddr,
                         llvm::StringRef given = "");

/// One run of kb-verify: its exit code and the JSON objects of its stdout,
/// one a line (other lines skipped).
struct VerifierRun {
  int exitCode = 0;
  std::vector<llvm::json::Object> lines;
};

/// Runs `exe` with `args`, stdin from `stdinPath` (none if empty), stdout
/// to `outPath` and stderr to `errPath`, and reads stdout back. An error
/// when it could not be started or wrote no stdout file.
llvm::Expected<VerifierRun> runVerifier(llvm::StringRef exe,
                                        llvm::ArrayRef<std::string> args,
                                        llvm::StringRef stdinPath,
                                        llvm::StringRef outPath,
                                        llvm::StringRef errPath);

/// A graph job's verdict: parsed by parseVerdict (Job.h), with the object
/// kb-verify printed (report.json keeps it whole). --compile prints no
/// Verdict but a line per architecture: its status ("compiled" or the
/// failure) and the compiler's log.
struct JobVerdict {
  Verdict verdict;
  llvm::json::Object printed;
  std::string arch, compileLog; // --compile only
};

/// kb-verify --serve on the jobs of `jobsPath` (one JSON object a line).
llvm::Expected<std::vector<JobVerdict>> serveJobs(llvm::StringRef exe,
                                                  llvm::StringRef jobsPath,
                                                  llvm::StringRef outPath,
                                                  llvm::StringRef errPath);
/// kb-verify --job on one job file.
llvm::Expected<std::vector<JobVerdict>> verifyJob(llvm::StringRef exe,
                                                  llvm::StringRef jobPath,
                                                  llvm::StringRef outPath,
                                                  llvm::StringRef errPath);
/// kb-verify --compile on job files for the comma-separated `archs`: a
/// verdict per job and architecture.
llvm::Expected<std::vector<JobVerdict>>
compileJobs(llvm::StringRef exe, llvm::ArrayRef<std::string> jobPaths,
            llvm::StringRef archs, llvm::StringRef outPath,
            llvm::StringRef errPath);

/// A fused C++ function's verdict from kb-verify --cxx (its harness
/// compares every function against the function's own ATen fallback).
struct CxxVerdict {
  /// Unverified: no input shape ran the fused kernel (it stays, marked).
  enum class State { Verified, Unverified, Rejected };
  std::string function;
  State state = State::Rejected;
  std::string verdict; // as printed ("verified", "rejected")
  std::string detail;
  llvm::json::Object printed; // the lock keeps it as evidence
};

/// kb-verify --cxx over the generated sources in `dir`: one verdict per
/// function; an error line (the harness did not build or run) is an error.
llvm::Expected<std::vector<CxxVerdict>>
verifyCxxSources(llvm::StringRef exe, llvm::StringRef dir,
                 llvm::StringRef outPath, llvm::StringRef errPath);

} // namespace kb::verify

#endif
