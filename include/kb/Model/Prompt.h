//===- Prompt.h - Prompts from kernel specs, kernels from replies -*- C++ -*-===//
//
// Prompt templates are plain text files with {{name}} placeholders
// (share/prompts/, compiled in; --prompt-dir overrides them by file name).
// A reply's kernel is its fenced code block that defines the entry point; it
// then passes kb-verify's static check (device code only, allowed includes)
// before anything compiles it.
//
//===----------------------------------------------------------------------===//
#ifndef KB_MODEL_PROMPT_H
#define KB_MODEL_PROMPT_H

#include "kb/Model/Client.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kb::model {

/// What the model is asked to implement (one region).
struct KernelSpec {
  std::string name;      // entry point, kb_region_<id>
  std::string kind;      // pointwise | reduction | softmax | norm | pool
  std::string pytorch;   // the region as a Python function of ATen calls
  std::string kbIR;      // the kb.kernel op, printed
  std::string tensors;   // one line per tensor: name, role, shape
  std::string signature; // extern "C" __global__ void ...(...)
  std::string grid, block;
  std::string example, exampleKind; // a verified kernel of the same kind
  // The agent's retrieval: similar verified kernels from the store, as
  // prompt text ("" when the store has none); see KernelStore::similar.
  std::string retrieved;
  // Profile of the current best kernel (profiling-guided prompts).
  std::optional<double> baselineMs, eagerMs, copyGBs;
  int64_t bytes = 0;
  std::string gpu;
};

class PromptTemplates {
public:
  /// The built-in templates, each replaced by DIR/<name>.txt where present.
  static llvm::Expected<PromptTemplates> load(llvm::StringRef dir = "");
  /// Fills {{name}} placeholders; an unknown placeholder is an error naming
  /// the template (a typo in an edited template must not reach the model).
  llvm::Expected<std::string>
  render(llvm::StringRef name, const std::map<std::string, std::string> &vars) const;

  std::map<std::string, std::string> texts;
};

/// The placeholders a spec provides (draft, profile and repair use them).
std::map<std::string, std::string> specVars(const KernelSpec &spec);

/// system + user messages for a first draft; `profile` adds the baseline
/// kernel's measured time, bandwidth and roofline bound.
llvm::Expected<std::vector<Message>>
draftMessages(const PromptTemplates &t, const KernelSpec &spec, bool profile);

/// The conversation so far, the model's reply, then the repair request with
/// kb-verify's verdict and feedback.
llvm::Expected<std::vector<Message>>
repairMessages(const PromptTemplates &t, const KernelSpec &spec,
               std::vector<Message> conversation, const std::string &reply,
               const std::string &verdict, const std::string &feedback);

/// The kernel in `reply`, or why there is none: no fenced block, a block cut
/// off (truncated reply), no block defining `entry`, or a static-check
/// rejection (host code, library calls, includes outside the allow-list).
llvm::Expected<std::string> extractKernel(llvm::StringRef reply,
                                          llvm::StringRef entry);

} // namespace kb::model

#endif // KB_MODEL_PROMPT_H
