//===- CxxFrontend.cpp - libTooling driver over libtorch sources ----------===//

#include "kb/Import/CxxFrontend.h"
#include "kb/Support/InputFile.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace llvm;

namespace kb {
namespace {

class Collect : public MatchFinder::MatchCallback {
public:
  explicit Collect(CxxAnalysis &out) : out(out) {}
  void run(const MatchFinder::MatchResult &r) override {
    if (const auto *fn = r.Nodes.getNodeAs<FunctionDecl>("fn"))
      analyzeCxxFunction(*r.Context, *fn, out);
  }

private:
  CxxAnalysis &out;
};

} // namespace

bool isCxxSource(StringRef path) {
  StringRef ext = sys::path::extension(path);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".cu" ||
         ext == ".C" || ext == ".h" || ext == ".hpp";
}

Expected<CxxAnalysis> analyzeCxxSources(const CxxInputs &in) {
  for (const std::string &f : in.files) {
    if (!sys::fs::exists(f))
      return createStringError(inconvertibleErrorCode(),
                               "no such file '" + f + "'");
    if (Error e = checkInputFile(f)) // Clang would block on a FIFO
      return std::move(e);
  }
  std::unique_ptr<tooling::CompilationDatabase> db;
  std::string err;
  if (in.haveFlags) {
    db = std::make_unique<tooling::FixedCompilationDatabase>(".", in.flags);
  } else if (!in.buildDir.empty()) {
    db = tooling::CompilationDatabase::loadFromDirectory(in.buildDir, err);
    if (!db)
      return createStringError(inconvertibleErrorCode(),
                               "cannot load compile_commands.json from '" +
                                   in.buildDir + "': " + err);
  } else {
    db = tooling::CompilationDatabase::autoDetectFromSource(in.files.front(),
                                                            err);
    if (!db)
      return createStringError(
          inconvertibleErrorCode(),
          "no compilation database for '" + in.files.front() +
              "': pass -p BUILD_DIR (with compile_commands.json) or the "
              "compiler flags after `--`");
  }
  tooling::ClangTool tool(*db, in.files);
  // The resource directory (stddef.h and friends): beside the executable in
  // a packed kb-rewrite (lib/clang/<N>, as clang itself looks), else that of
  // the Clang kb-rewrite was built against. The compile command's compiler
  // may be gcc or nvcc, whose own directories Clang cannot use.
  std::string resource = KB_CLANG_RESOURCE_DIR;
  std::string exe = sys::fs::getMainExecutable(nullptr, nullptr);
  if (!exe.empty()) {
    SmallString<256> packed(
        sys::path::parent_path(sys::path::parent_path(exe)));
    sys::path::append(packed, "lib", "clang",
                      sys::path::filename(KB_CLANG_RESOURCE_DIR));
    if (sys::fs::exists(packed + "/include/stddef.h"))
      resource = packed.str().str();
  }
  tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
      {"-resource-dir=" + resource, "-Wno-unknown-warning-option"},
      tooling::ArgumentInsertPosition::END));
  tool.appendArgumentsAdjuster(tooling::getClangSyntaxOnlyAdjuster());
  CxxAnalysis out;
  Collect collect(out);
  MatchFinder finder;
  finder.addMatcher(functionDecl(isDefinition(), isExpansionInMainFile(),
                                 unless(isInstantiated()))
                        .bind("fn"),
                    &collect);
  int rc = tool.run(tooling::newFrontendActionFactory(&finder).get());
  if (rc != 0)
    return createStringError(inconvertibleErrorCode(),
                             "could not parse the sources (the compiler's "
                             "errors are above); nothing was analysed");
  return out;
}

} // namespace kb
