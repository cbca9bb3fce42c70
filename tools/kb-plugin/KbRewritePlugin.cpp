//===- KbRewritePlugin.cpp - Fusable-chain remarks during a compile -------===//
//
//   clang++ -fplugin=.../KbRewrite.so -Xclang -plugin-arg-kb-rewrite \
//           -Xclang remarks ...
//
// Off by default: without the `remarks` argument the plugin does nothing.
// With it, each fusable chain the frontend finds (the same analysis as
// `kb-rewrite analyze`) becomes a remark at its anchor, e.g.
//   remark: fusable epilogue after conv2d: relu -> add (2 ops)
// The plugin runs after the main action and never changes the generated
// code.
//
//===----------------------------------------------------------------------===//

#include "kb/Import/CxxChains.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"

using namespace clang;

namespace {

class Consumer : public ASTConsumer {
public:
  explicit Consumer(CompilerInstance &ci) : ci(ci) {}

  void HandleTranslationUnit(ASTContext &ctx) override {
    struct Visit : RecursiveASTVisitor<Visit> {
      ASTContext &ctx;
      kb::CxxAnalysis &out;
      Visit(ASTContext &ctx, kb::CxxAnalysis &out) : ctx(ctx), out(out) {}
      bool VisitFunctionDecl(FunctionDecl *fn) {
        SourceManager &sm = ctx.getSourceManager();
        if (fn->isThisDeclarationADefinition() &&
            sm.isInMainFile(sm.getExpansionLoc(fn->getLocation())))
          kb::analyzeCxxFunction(ctx, *fn, out);
        return true;
      }
    };
    kb::CxxAnalysis out;
    Visit(ctx, out).TraverseDecl(ctx.getTranslationUnitDecl());
    DiagnosticsEngine &diags = ci.getDiagnostics();
    unsigned id = diags.getCustomDiagID(DiagnosticsEngine::Remark, "%0");
    SourceManager &sm = ctx.getSourceManager();
    FileID main = sm.getMainFileID();
    for (const kb::CxxChain &c : out.chains) {
      SourceLocation loc = sm.translateLineCol(main, c.anchor.line, c.anchor.column);
      diags.Report(loc, id) << c.summary();
    }
  }

private:
  CompilerInstance &ci;
};

class Action : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci,
                                                 llvm::StringRef) override {
    if (!remarks)
      return std::make_unique<ASTConsumer>();
    return std::make_unique<Consumer>(ci);
  }

  bool ParseArgs(const CompilerInstance &ci,
                 const std::vector<std::string> &args) override {
    for (const std::string &a : args) {
      if (a == "remarks") {
        remarks = true;
      } else {
        DiagnosticsEngine &d = ci.getDiagnostics();
        d.Report(d.getCustomDiagID(DiagnosticsEngine::Error,
                                   "kb-rewrite plugin: unknown argument '%0' "
                                   "(the one argument is 'remarks')"))
            << a;
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddAfterMainAction; }

private:
  bool remarks = false;
};

} // namespace

static FrontendPluginRegistry::Add<Action> X("kb-rewrite",
                                             "remarks at fusable epilogues");
