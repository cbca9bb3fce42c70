//===- RewriteOptions.h - What `kb-rewrite rewrite` was asked ---*- C++ -*-===//
#ifndef KB_DRIVER_REWRITEOPTIONS_H
#define KB_DRIVER_REWRITEOPTIONS_H

#include "kb/Model/Search.h"

#include <string>

namespace kb {

enum class VerifyMode { Auto, On, Off };

/// Asking the code model for kernels (docs/model.md).
struct ModelSearchOptions {
  bool enabled = false; // a server URL was given, or a transcript to replay
  model::ClientConfig client;
  model::StrategyOptions strategy;
  std::string transcript; // "" = <out>/transcript.jsonl
  std::string replay;     // a transcript to replay instead of a server
  /// With `replay`: run kb-verify again on the recorded replies instead of
  /// serving the recorded verdicts (bench/paper.py --replay).
  bool replayVerify = false;
  /// A directory of model candidates' verdicts by the hash of their job and
  /// the GPU ("" = none): the same kernel is verified once per GPU.
  std::string verdictCache;
  std::string promptDir;
  std::string storeDir; // "" = KernelStore::defaultDir()
};

/// What the numerics policy asks of fused kernels (docs/correctness.md).
enum class Numerics {
  /// Sums, norms and softmax whose last bits could flip a step op, be
  /// magnified by a singular op or by a TF32 convolution keep ATen's ops
  /// unless their kernel is bit-identical to eager (the default).
  Exact,
  /// Everything fusable is fused (--numerics=relaxed): outputs may differ
  /// from eager past 1e-4 where such ops follow; reported as such.
  Relaxed
};

struct RewriteOptions {
  std::string graphPath;
  std::string paramsPath; // "" = <stem>.params.json beside the graph
  std::string outDir;
  std::string modelSource; // the traced model.py ("" = params.json's source)
  VerifyMode verify = VerifyMode::Auto;
  std::string kbVerify; // path of kb-verify ("" = not found)
  std::string compileArchs = "sm_75,sm_90"; // checked when no GPU is present
  bool cudaGraphs = true;
  /// Fuse reductions/norms/softmax even where their result feeds a TF32
  /// convolution (see docs/rewrite.md, "Numerics").
  bool fuseBeforeTF32 = false;
  /// EmitOptions::fastMath for every generated kernel.
  bool fastMath = false;
  Numerics numerics = Numerics::Exact;
  bool quiet = false;
  ModelSearchOptions model;
};

} // namespace kb

#endif // KB_DRIVER_REWRITEOPTIONS_H
