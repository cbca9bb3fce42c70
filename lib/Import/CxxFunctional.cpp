//===- CxxFunctional.cpp - What a torch::nn::Functional member computes ---===//
//
// `torch::nn::Functional relu{torch::relu};` then `relu->forward(x)`: the
// module is a std::function, so its call says nothing of the op; the places
// that set the member do. Tutorials (the ResNet residual block of
// prabhuomkar/pytorch-cpp among them) write activations this way.
//
//===----------------------------------------------------------------------===//

#include "CxxChainParts.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"

#include <functional>

using namespace clang;

namespace kb::cxxchains {
namespace {

/// torch::nn::Functional (TORCH_MODULE's class over
/// ModuleHolder<FunctionalImpl>), the holder, or the implementation.
bool isFunctionalType(QualType t) {
  const CXXRecordDecl *impl = moduleImplDecl(t);
  return impl && impl->getName() == "FunctionalImpl";
}

/// The function a Functional is built from in `e` (`Functional(torch::relu)`,
/// `{torch::relu}`, `register_module("relu", Functional(torch::relu))`):
/// the one construction of a Functional below `e`, with the function as its
/// only argument (extra arguments are bound to it: another op). Null where
/// there is none, or more than one.
const FunctionDecl *builtFrom(const Stmt *e) {
  const FunctionDecl *found = nullptr;
  int constructions = 0;
  std::function<void(const Stmt *)> walk = [&](const Stmt *s) {
    if (!s)
      return;
    if (const auto *c = dyn_cast<CXXConstructExpr>(s);
        c && isFunctionalType(c->getType()) && c->getNumArgs() >= 1 &&
        !c->getConstructor()->isCopyOrMoveConstructor()) {
      ++constructions;
      const Expr *arg = c->getNumArgs() == 1
                            ? c->getArg(0)->IgnoreUnlessSpelledInSource()
                            : nullptr;
      if (const auto *u = dyn_cast_or_null<UnaryOperator>(arg);
          u && u->getOpcode() == UO_AddrOf)
        arg = u->getSubExpr()->IgnoreParenImpCasts();
      const auto *ref = dyn_cast_or_null<DeclRefExpr>(arg);
      found = ref ? dyn_cast<FunctionDecl>(ref->getDecl()) : nullptr;
      return;
    }
    for (const Stmt *child : s->children())
      walk(child);
  };
  walk(e);
  return constructions == 1 ? found : nullptr;
}

/// Every assignment `field = value` in `body`.
void assignmentsTo(const Stmt *body, const FieldDecl *field,
                   std::vector<const Expr *> &values) {
  if (!body)
    return;
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(body);
      op && op->getOperator() == OO_Equal && op->getNumArgs() == 2)
    if (const auto *m =
            dyn_cast<MemberExpr>(op->getArg(0)->IgnoreParenImpCasts());
        m && m->getMemberDecl() == field)
      values.push_back(op->getArg(1));
  for (const Stmt *child : body->children())
    assignmentsTo(child, field, values);
}

} // namespace

std::optional<std::string> functionalOp(const Expr *module) {
  const auto *m = dyn_cast_or_null<MemberExpr>(
      module ? module->IgnoreParenImpCasts() : nullptr);
  const auto *field = m ? dyn_cast<FieldDecl>(m->getMemberDecl()) : nullptr;
  if (!field || !isFunctionalType(field->getType()))
    return std::nullopt;
  const auto *cls = dyn_cast<CXXRecordDecl>(field->getParent());
  if (!cls || !cls->hasDefinition())
    return std::nullopt;
  // Where the member is set: its in-class initializer, the written
  // initializers of the constructors, assignments in the methods. Every
  // constructor's body must be visible (one defined elsewhere could set it
  // to anything).
  std::vector<const Expr *> values;
  if (const Expr *init = field->getInClassInitializer())
    values.push_back(init);
  for (const CXXMethodDecl *md : cls->methods()) {
    const FunctionDecl *def = nullptr;
    if (!md->hasBody(def)) {
      if (isa<CXXConstructorDecl>(md) && !md->isImplicit() && !md->isDeleted())
        return std::nullopt;
      continue;
    }
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(def))
      for (const CXXCtorInitializer *ci : ctor->inits())
        if (ci->isWritten() && ci->getMember() == field)
          values.push_back(ci->getInit());
    assignmentsTo(def->getBody(), field, values);
  }
  const FunctionDecl *fn = nullptr;
  for (const Expr *v : values) {
    const FunctionDecl *f = builtFrom(v);
    if (!f || (fn && f->getCanonicalDecl() != fn->getCanonicalDecl()))
      return std::nullopt;
    fn = f;
  }
  if (!fn || fn->getNumParams() != 1 || !isTensorType(fn->getReturnType()) ||
      !isTensorType(fn->getParamDecl(0)->getType()))
    return std::nullopt;
  std::string q = fn->getQualifiedNameAsString();
  if (!StringRef(q).starts_with("at::") && !StringRef(q).starts_with("torch::"))
    return std::nullopt;
  return fn->getName().str();
}

} // namespace kb::cxxchains
