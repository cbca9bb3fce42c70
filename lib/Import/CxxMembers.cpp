//===- CxxMembers.cpp - What a module member of a class holds -------------===//
//
// Two members whose call says nothing of the op it computes, so the places
// that set the member must:
// - `torch::nn::Functional relu{torch::relu};` then `relu->forward(x)`: a
//   std::function. Tutorials (the ResNet residual block of
//   prabhuomkar/pytorch-cpp among them) write activations this way.
// - `torch::nn::Sequential layer1{Conv2d(...), BatchNorm2d(16),
//   Functional(torch::relu), MaxPool2d(...)};` then `layer1->forward(x)`:
//   a list of modules (the CNN tutorial of prabhuomkar/pytorch-cpp, the
//   DCGAN example of pytorch/examples).
//
//===----------------------------------------------------------------------===//

#include "CxxChainParts.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/Support/FormatVariadic.h"

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

/// Whether `e` is a number literal as written (`0.2`, `-1`).
bool isNumberLiteral(const Expr *e) {
  e = operandCore(e);
  if (const auto *u = dyn_cast<UnaryOperator>(e);
      u && (u->getOpcode() == UO_Minus || u->getOpcode() == UO_Plus))
    e = operandCore(u->getSubExpr());
  return isa<FloatingLiteral, IntegerLiteral>(e);
}

/// `Holder{nullptr}`: the idiom for a module member its class's constructor
/// sets for real. A call through an empty holder throws, so what it is set
/// to elsewhere is what every call that returns sees.
bool isEmptyHolder(const CXXConstructExpr *c) {
  return c->getNumArgs() == 1 &&
         isa<CXXNullPtrLiteralExpr>(strip(c->getArg(0)));
}

/// The function a Functional is built from in `e` (`Functional(torch::relu)`,
/// `{torch::relu}`, `register_module("relu", Functional(torch::relu))`):
/// the one construction of a Functional below `e`, with the function as its
/// only argument (extra arguments are bound to it: another op). Null where
/// there is none, or more than one. With `bound`, arguments after the
/// function that are number literals (`Functional(torch::leaky_relu, 0.2)`:
/// std::bind's) are accepted and collected: a literal means the same
/// wherever the call is written. With `empty`, an empty holder
/// (`Functional act{nullptr}`) is no construction and sets it instead.
const FunctionDecl *builtFrom(const Stmt *e,
                              std::vector<const Expr *> *bound = nullptr,
                              bool *empty = nullptr) {
  const FunctionDecl *found = nullptr;
  int constructions = 0;
  std::function<void(const Stmt *)> walk = [&](const Stmt *s) {
    if (!s)
      return;
    if (const auto *c = dyn_cast<CXXConstructExpr>(s);
        c && isFunctionalType(c->getType()) && c->getNumArgs() >= 1 &&
        !c->getConstructor()->isCopyOrMoveConstructor()) {
      if (empty && isEmptyHolder(c)) {
        *empty = true;
        return;
      }
      ++constructions;
      bool literals = bound != nullptr;
      for (unsigned i = 1; i < c->getNumArgs() && literals; ++i)
        literals = isNumberLiteral(c->getArg(i));
      if (literals)
        for (unsigned i = 1; i < c->getNumArgs(); ++i)
          bound->push_back(c->getArg(i));
      const Expr *arg = c->getNumArgs() == 1 || literals
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

/// The member field `module` names (`relu`, `this->layer1`), if any.
const FieldDecl *memberField(const Expr *module) {
  const auto *m = dyn_cast_or_null<MemberExpr>(
      module ? module->IgnoreParenImpCasts() : nullptr);
  return m ? dyn_cast<FieldDecl>(m->getMemberDecl()) : nullptr;
}

/// Where `field` is set: its in-class initializer, the written initializers
/// of the constructors, assignments in the methods. False when a
/// constructor's body is not visible (one defined elsewhere could set it to
/// anything).
bool valuesOf(const FieldDecl *field, std::vector<const Expr *> &values) {
  const auto *cls = dyn_cast<CXXRecordDecl>(field->getParent());
  if (!cls || !cls->hasDefinition())
    return false;
  if (const Expr *init = field->getInClassInitializer())
    values.push_back(init);
  for (const CXXMethodDecl *md : cls->methods()) {
    const FunctionDecl *def = nullptr;
    if (!md->hasBody(def)) {
      if (isa<CXXConstructorDecl>(md) && !md->isImplicit() && !md->isDeleted())
        return false;
      continue;
    }
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(def))
      for (const CXXCtorInitializer *ci : ctor->inits())
        if (ci->isWritten() && ci->getMember() == field)
          values.push_back(ci->getInit());
    assignmentsTo(def->getBody(), field, values);
  }
  return true;
}

/// The function of one tensor a Functional is built from (`fn` as found by
/// builtFrom): its name when it is a torch:: or at:: function.
std::optional<std::string> oneTensorFunction(const FunctionDecl *fn,
                                             unsigned bound) {
  if (!fn || fn->getNumParams() < 1 + bound ||
      !isTensorType(fn->getReturnType()) ||
      !isTensorType(fn->getParamDecl(0)->getType()))
    return std::nullopt;
  // The bound operands are numbers; every later parameter has a default.
  for (unsigned i = 1; i < fn->getNumParams(); ++i)
    if (isTensorType(fn->getParamDecl(i)->getType()) ||
        (i > bound && !fn->getParamDecl(i)->hasDefaultArg()))
      return std::nullopt;
  std::string q = fn->getQualifiedNameAsString();
  if (!StringRef(q).starts_with("at::") && !StringRef(q).starts_with("torch::"))
    return std::nullopt;
  return fn->getName().str();
}

bool isSequentialType(QualType t) {
  const CXXRecordDecl *impl = moduleImplDecl(t);
  return impl && impl->getName() == "SequentialImpl";
}

/// The one construction of a Sequential with items below `e` (the list of
/// `Sequential layer1{...}`, `register_module("l", Sequential(...))`);
/// `empty` is set instead for `Sequential layer1{nullptr}`. Null where there
/// is none with items, or more than one.
const CXXConstructExpr *sequentialBuilt(const Stmt *e, bool &empty) {
  const CXXConstructExpr *found = nullptr;
  int constructions = 0;
  empty = false;
  std::function<void(const Stmt *)> walk = [&](const Stmt *s) {
    if (!s)
      return;
    if (const auto *c = dyn_cast<CXXConstructExpr>(s);
        c && isSequentialType(c->getType()) &&
        !c->getConstructor()->isCopyOrMoveConstructor()) {
      if (isEmptyHolder(c)) {
        empty = true;
        return;
      }
      bool items = c->getNumArgs() > 0;
      for (const Expr *arg : c->arguments())
        items = items && moduleImplDecl(arg->getType());
      if (items) {
        ++constructions;
        found = c;
        return;
      }
    }
    for (const Stmt *child : s->children())
      walk(child);
  };
  walk(e);
  if (constructions != 1)
    found = nullptr;
  if (found)
    empty = false;
  return found;
}

/// Methods of a local Sequential a function may call without changing its
/// list (DCGAN's main() moves, trains and checkpoints its nets).
bool keepsLocalList(StringRef method) {
  return llvm::is_contained({"forward", "to", "parameters", "named_parameters",
                             "buffers", "named_buffers", "zero_grad", "train",
                             "eval", "is_training"},
                            method);
}

/// The line of a use of `target` below `roots` that may change the list
/// it was built with, 0 where none. A member (`local` false) keeps it in
/// its class's methods through forward calls, register_module's argument
/// and the assignments valuesOf reads; a local in its function through
/// keepsLocalList's methods and torch::save / torch::load (which load the
/// items' parameters, not the list). push_back, extend, insert, a copy
/// handed to other code (which shares the list and could add to it) may
/// change it.
unsigned listChanged(const ValueDecl *target, ArrayRef<const Stmt *> roots,
                     bool local) {
  std::vector<const Stmt *> up; // the ancestors of the node walked
  // The first ancestor that is more than a conversion or a temporary.
  auto user = [&](size_t &i) -> const Stmt * {
    while (i-- > 0)
      if (!isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
               ParenExpr, ExprWithCleanups, CXXConstructExpr>(up[i]))
        return up[i];
    return nullptr;
  };
  auto keeps = [&](const Expr *m) {
    size_t i = up.size();
    const Stmt *u = user(i);
    if (const auto *op = dyn_cast_or_null<CXXOperatorCallExpr>(u)) {
      if (op->getOperator() == OO_Equal)
        return !local && strip(op->getArg(0)) == m;
      if (op->getOperator() != OO_Arrow)
        return false;
      const auto *callee = dyn_cast_or_null<MemberExpr>(user(i));
      const auto *md =
          callee ? dyn_cast<CXXMethodDecl>(callee->getMemberDecl()) : nullptr;
      if (!md || !md->getIdentifier())
        return false;
      return local ? keepsLocalList(md->getName()) : md->getName() == "forward";
    }
    if (local) {
      const auto *call = dyn_cast_or_null<CallExpr>(u);
      const FunctionDecl *fd = call ? call->getDirectCallee() : nullptr;
      std::string q = fd ? fd->getQualifiedNameAsString() : "";
      return call && !isa<CXXMemberCallExpr>(call) &&
             (q == "torch::save" || q == "torch::load");
    }
    const auto *mc = dyn_cast_or_null<CXXMemberCallExpr>(u);
    const auto *md = mc ? mc->getMethodDecl() : nullptr;
    return md && md->getIdentifier() && md->getName() == "register_module";
  };
  unsigned changed = 0;
  const SourceManager &sm = target->getASTContext().getSourceManager();
  std::function<void(const Stmt *)> walk = [&](const Stmt *s) {
    if (!s || changed)
      return;
    const Expr *ref = nullptr;
    if (const auto *m = dyn_cast<MemberExpr>(s);
        !local && m && m->getMemberDecl() == target)
      ref = m;
    if (const auto *d = dyn_cast<DeclRefExpr>(s);
        local && d && d->getDecl() == target)
      ref = d;
    if (ref) {
      if (!keeps(ref))
        changed = sm.getExpansionLineNumber(ref->getBeginLoc());
      return;
    }
    up.push_back(s);
    for (const Stmt *child : s->children())
      walk(child);
    up.pop_back();
  };
  for (const Stmt *r : roots)
    walk(r);
  return changed;
}

/// The statements a member's list may change in: its class's methods and
/// constructor initializers.
std::vector<const Stmt *> memberUses(const FieldDecl *field) {
  std::vector<const Stmt *> roots;
  const auto *cls = cast<CXXRecordDecl>(field->getParent());
  for (const CXXMethodDecl *md : cls->methods()) {
    const FunctionDecl *def = nullptr;
    if (md->hasBody(def)) {
      if (const auto *ctor = dyn_cast<CXXConstructorDecl>(def))
        for (const CXXCtorInitializer *ci : ctor->inits())
          roots.push_back(ci->getInit());
      roots.push_back(def->getBody());
    }
  }
  return roots;
}

/// The local `module` names (`generator` in DCGAN's main()), if any: a
/// variable of the function, not a parameter (its caller builds those).
const VarDecl *localVar(const Expr *module) {
  const auto *d = dyn_cast_or_null<DeclRefExpr>(
      module ? module->IgnoreParenImpCasts() : nullptr);
  const auto *v = d ? dyn_cast<VarDecl>(d->getDecl()) : nullptr;
  return v && v->hasLocalStorage() && !isa<ParmVarDecl>(v) ? v : nullptr;
}

} // namespace

bool isSequential(const Expr *module) {
  return module && isSequentialType(module->getType());
}

std::optional<std::vector<SequentialItem>> sequentialItems(const Expr *module,
                                                           std::string &why) {
  const FieldDecl *field = memberField(module);
  const VarDecl *local = field ? nullptr : localVar(module);
  std::vector<const Expr *> values;
  if (local) {
    const auto *fn =
        dyn_cast_or_null<FunctionDecl>(local->getParentFunctionOrMethod());
    if (!fn || !fn->hasBody() || !local->getInit()) {
      why = "it is not built where it is declared";
      return std::nullopt;
    }
    values.push_back(local->getInit());
    if (unsigned line = listChanged(local, {fn->getBody()}, true)) {
      why = llvm::formatv("its list may change at line {0}", line).str();
      return std::nullopt;
    }
  } else if (!field) {
    why = "it is neither a member of the class nor a local variable";
    return std::nullopt;
  } else if (!valuesOf(field, values)) {
    why = "a constructor of its class is not visible";
    return std::nullopt;
  } else if (unsigned line = listChanged(field, memberUses(field), false)) {
    why = llvm::formatv("its list may change at line {0}", line).str();
    return std::nullopt;
  }
  const CXXConstructExpr *built = nullptr;
  for (const Expr *v : values) {
    bool empty = false;
    const CXXConstructExpr *c = sequentialBuilt(v, empty);
    if (empty)
      continue; // `{nullptr}`: set for real elsewhere
    if (!c || built) {
      why = "it is not set once from a list of modules";
      return std::nullopt;
    }
    built = c;
  }
  if (!built) {
    why = "it is not set from a list of modules";
    return std::nullopt;
  }
  std::vector<SequentialItem> items;
  for (const Expr *arg : built->arguments()) {
    SequentialItem item;
    item.impl = moduleImplDecl(arg->getType());
    if (item.impl->getName() == "FunctionalImpl") {
      std::vector<const Expr *> bound;
      const FunctionDecl *fn = builtFrom(arg, &bound);
      if (auto op = oneTensorFunction(fn, bound.size())) {
        item.function = *op;
        item.bound = std::move(bound);
      }
    }
    items.push_back(item);
  }
  return items;
}

std::optional<std::string> functionalOp(const Expr *module) {
  const FieldDecl *field = memberField(module);
  if (!field || !isFunctionalType(field->getType()))
    return std::nullopt;
  std::vector<const Expr *> values;
  if (!valuesOf(field, values))
    return std::nullopt;
  const FunctionDecl *fn = nullptr;
  for (const Expr *v : values) {
    bool empty = false;
    const FunctionDecl *f = builtFrom(v, nullptr, &empty);
    if (empty && !f)
      continue; // `{nullptr}`: set for real elsewhere
    if (!f || (fn && f->getCanonicalDecl() != fn->getCanonicalDecl()))
      return std::nullopt;
    fn = f;
  }
  return oneTensorFunction(fn, 0);
}

} // namespace kb::cxxchains
