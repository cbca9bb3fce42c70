//===- CxxFrontend.cpp - libTooling driver over libtorch sources ----------===//

#include "kb/Import/CxxFrontend.h"
#include "kb/Support/InputFile.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <optional>

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

/// Says which file is being parsed and how long it took.
class Progress : public tooling::SourceFileCallbacks {
public:
  Progress(raw_ostream &os, size_t total) : os(os), total(total) {}
  bool handleBeginSource(CompilerInstance &ci) override {
    start = std::chrono::steady_clock::now();
    StringRef file = ci.getFrontendOpts().Inputs.empty()
                         ? StringRef("?")
                         : ci.getFrontendOpts().Inputs[0].getFile();
    os << "kb-rewrite: parsing " << file << " (" << ++index << "/" << total
       << ")...";
    os.flush();
    return true;
  }
  void handleEndSource() override {
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    os << format(" %.1f s\n", took.count());
    os.flush();
  }

private:
  raw_ostream &os;
  size_t total;
  size_t index = 0;
  std::chrono::steady_clock::time_point start;
};

/// Runs the matchers over the main file's top-level declarations only: the
/// chains live in its functions, and walking every libtorch header's
/// declarations as well took longer than the analysis itself (a 180-line
/// source: 2.8 s over Clang's 9.0 s parse; with a precompiled torch.h, 4.4 s
/// over 4.0, the walk deserialising the whole header).
class MainFileMatcher : public ASTConsumer {
public:
  explicit MainFileMatcher(MatchFinder &finder) : finder(finder) {}
  void HandleTranslationUnit(ASTContext &ctx) override {
    const SourceManager &sm = ctx.getSourceManager();
    std::vector<Decl *> scope;
    // noload: declarations from a precompiled header are never the main
    // file's, and loading them is the cost avoided here.
    for (Decl *d : ctx.getTranslationUnitDecl()->noload_decls())
      if (sm.isInMainFile(sm.getExpansionLoc(d->getLocation())))
        scope.push_back(d);
    ctx.setTraversalScope(scope);
    finder.matchAST(ctx);
  }

private:
  MatchFinder &finder;
};

class MainFileAction : public ASTFrontendAction {
public:
  MainFileAction(MatchFinder &finder, Progress *progress)
      : finder(finder), progress(progress) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    return std::make_unique<MainFileMatcher>(finder);
  }
  bool BeginSourceFileAction(CompilerInstance &ci) override {
    return !progress || progress->handleBeginSource(ci);
  }
  void EndSourceFileAction() override {
    if (progress)
      progress->handleEndSource();
  }

private:
  MatchFinder &finder;
  Progress *progress;
};

class MainFileActionFactory : public tooling::FrontendActionFactory {
public:
  MainFileActionFactory(MatchFinder &finder, Progress *progress)
      : finder(finder), progress(progress) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<MainFileAction>(finder, progress);
  }

private:
  MatchFinder &finder;
  Progress *progress;
};

} // namespace

bool isCxxSource(StringRef path) {
  StringRef ext = sys::path::extension(path);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".cu" ||
         ext == ".C" || ext == ".h" || ext == ".hpp";
}

Expected<CxxAnalysis> analyzeCxxSources(const CxxInputs &in) {
  // Missing files fail here as a graph's do (the OS's error code, exit 1);
  // Clang would block on a FIFO.
  for (const std::string &f : in.files)
    if (Error e = checkInputFile(f))
      return std::move(e);
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
  std::optional<Progress> progress;
  if (in.progress)
    progress.emplace(*in.progress, in.files.size());
  MainFileActionFactory factory(finder, progress ? &*progress : nullptr);
  int rc = tool.run(&factory);
  if (rc != 0)
    return createStringError(inconvertibleErrorCode(),
                             "could not parse the sources (the compiler's "
                             "errors are above); nothing was analysed");
  return out;
}

} // namespace kb
