//===- RewriteOutput.h - The files of a rewritten model ---------*- C++ -*-===//
//
// A rewritten model directory (docs/rewrite.md): kernels and their
// kb-verify jobs, manifest.json, model_new.py with ModelNew, the runtime
// files, and report.{json,md,html}. Written from a finished RewriteResult;
// the decisions are the driver's (lib/Driver).
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_REWRITEOUTPUT_H
#define KB_EMIT_REWRITEOUTPUT_H

#include "kb/Emit/PythonEmitter.h"
#include "kb/Emit/RewritePlan.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <utility>
#include <vector>

namespace kb {

/// `kernelDir`/<k.name>.cu and <k.name>.job.json.
llvm::Error writeKernelFiles(llvm::StringRef kernelDir, const EmittedKernel &k);

/// manifest.json: what the runtime loads. `prog` (model_new.py's program,
/// null when it could not be made) says which regions run channels-last or
/// have a library form; `params` is kb-export's params.json.
llvm::json::Value manifestJson(const RewriteResult &res,
                               const PythonProgram *prog,
                               const llvm::json::Object &params,
                               bool cudaGraphs);

/// model_new.py for model `name`, loading its files from `absDir`.
std::string modelNewSource(const RewriteResult &res, llvm::StringRef absDir,
                           llvm::StringRef name, const PythonProgram &prog,
                           llvm::StringRef modelClass);

/// kb_program.py: model_new.py's graph program without the original Model
/// class, for modules built elsewhere (the Python package's optimize() and
/// torch.compile backend); `make_program(forward)` returns its Program.
std::string programSource(const RewriteResult &res, llvm::StringRef absDir,
                          llvm::StringRef name, const PythonProgram &prog);

/// The runtime files copied into every rewritten model (name, contents).
const std::vector<std::pair<std::string, std::string>> &runtimeFiles();

/// report.json / report.md / report.html of a finished rewrite.
llvm::json::Value reportJson(const RewriteResult &res);
std::string reportMarkdown(const RewriteResult &res);
std::string reportHtml(const RewriteResult &res);

} // namespace kb

#endif // KB_EMIT_REWRITEOUTPUT_H
