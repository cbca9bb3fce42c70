//===- CxxSteps.cpp - The op a libtorch C++ expression computes -----------===//
//
// One expression of a chain as a Step: a tensor method, an at:: / torch::
// function, an overloaded operator, a module's call or a Functional's, with
// the operands the chain flows through and the others, classified by the
// op-semantics table with what its literal operands say.
//
//===----------------------------------------------------------------------===//

#include "CxxChainParts.h"
#include "kb/IR/OpSemantics.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"

#include <map>

using namespace clang;
using llvm::StringRef;

namespace kb {
namespace {

using namespace cxxchains;

/// A call's literal operands, by the schema's positions: the input, then
/// `others` (function calls and tensor methods).
struct LiteralOperands : KnownOperands {
  const OpInfo &row;
  const Step &step;
  LiteralOperands(const OpInfo &row, const Step &step) : row(row), step(step) {}
  const Expr *arg(StringRef name) const {
    auto i = row.argIndex(name);
    if (!i || *i == 0 || *i - 1 >= step.others.size())
      return nullptr;
    return operandCore(step.others[*i - 1]);
  }
  std::optional<double> number(StringRef name) const override {
    const Expr *e = arg(name);
    if (const auto *f = dyn_cast_or_null<FloatingLiteral>(e))
      return f->getValueAsApproximateDouble();
    if (const auto *n = dyn_cast_or_null<IntegerLiteral>(e))
      return (double)n->getValue().getSExtValue();
    return std::nullopt;
  }
  std::optional<bool> flag(StringRef name) const override {
    if (const auto *b = dyn_cast_or_null<CXXBoolLiteralExpr>(arg(name)))
      return b->getValue();
    return std::nullopt;
  }
};

/// The graph path's kinds (kb::refinedKind) decide; C++ chains, unranked,
/// fuse through pointwise ops and the stages, not through views or an
/// identity dropout (no kernel form).
void classify(Step &s, const OpInfo &row, const KnownOperands &known) {
  s.kind = refinedKind(row, known);
  s.isFusable = s.kind == OpKind::Elementwise || s.kind == OpKind::Broadcast ||
                s.kind == OpKind::Reduction;
}

} // namespace

void cxxchains::addLaterInputs(Step &s, const CallExpr *call) {
  const OpInfo *row = tableRow(s.op);
  if (s.inPlace || !row ||
      (row->kind != OpKind::Elementwise && row->kind != OpKind::Broadcast))
    return;
  for (const Expr *a : call->arguments())
    if (!llvm::is_contained(s.inputs, a) && isTensorType(a->getType()))
      s.inputs.push_back(a);
}

bool cxxchains::commutesWithSelf(const Step &s, const CallExpr *call) {
  // x + y == y + x and x * y == y * x to the bit in IEEE arithmetic;
  // add's alpha would scale the other operand, so it must be the default.
  // (maximum / minimum are not: they order signed zeros by position.)
  if ((s.op != "add" && s.op != "mul") || s.inPlace || call->getNumArgs() < 2 ||
      !isTensorType(call->getArg(0)->getType()) ||
      !isTensorType(call->getArg(1)->getType()))
    return false;
  for (unsigned i = 2; i < call->getNumArgs(); ++i)
    if (!isa<CXXDefaultArgExpr>(call->getArg(i)->IgnoreImplicit()) &&
        !isa<CXXDefaultArgExpr>(call->getArg(i)))
      return false;
  return true;
}

std::optional<Step> cxxchains::makeStep(StringRef name) {
  auto [base, inPlace] = stripInPlace(name);
  const OpInfo *row = tableRow(base);
  if (!row)
    return std::nullopt;
  Step s;
  s.op = base.str();
  s.inPlace = inPlace;
  s.anchor = row->kind == OpKind::Anchor;
  classify(s, *row, KnownOperands());
  return s;
}

std::optional<Step>
cxxchains::makeModuleStep(const CXXRecordDecl *impl) {
  auto s = makeStep(cxxModuleOp(impl->getName()));
  if (const CxxModuleInfo *m = cxxModule(impl->getName());
      s && m && !m->cuda.empty())
    s->isFusable = true;
  return s;
}

void cxxchains::classifyLiterals(Step &s) {
  if (const OpInfo *row = tableRow(s.op))
    classify(s, *row, LiteralOperands(*row, s));
}

std::optional<Step> cxxchains::stepOf(const Expr *e) {
  // Once the operands are known: what their literals say of the kind.
  auto withOperands = [](std::optional<Step> s) {
    if (s)
      classifyLiterals(*s);
    return s;
  };
  // A Functional member's call is the call of the function it wraps.
  auto functional = [&](const Expr *module, const Expr *input,
                        unsigned extra) -> std::optional<Step> {
    auto name = extra ? std::nullopt : functionalOp(module);
    auto s = name ? makeStep(*name) : std::nullopt;
    if (s) {
      s->functional = true;
      s->inputs.push_back(input);
    }
    return s; // its only operand is the input: makeStep() classified it
  };
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e)) {
    OverloadedOperatorKind k = op->getOperator();
    if (k == OO_Call && op->getNumArgs() >= 2) {
      const CXXRecordDecl *impl = moduleImplDecl(op->getArg(0)->getType());
      if (!impl)
        return std::nullopt;
      if (impl->getName() == "FunctionalImpl")
        return functional(op->getArg(0), op->getArg(1), op->getNumArgs() - 2);
      auto s = makeModuleStep(impl);
      if (s) {
        s->module = true;
        s->moduleObj = op->getArg(0); // a ModuleHolder: `bn1(x)`
        s->moduleDeref = true;
        s->moduleType = impl->getQualifiedNameAsString();
        s->inputs.push_back(op->getArg(1));
        for (unsigned i = 2; i < op->getNumArgs(); ++i)
          s->others.push_back(op->getArg(i));
      }
      return s;
    }
    static const std::map<OverloadedOperatorKind, std::pair<const char *, bool>>
        kOps = {{OO_Plus, {"add", false}},     {OO_Minus, {"sub", false}},
                {OO_Star, {"mul", false}},     {OO_Slash, {"div", false}},
                {OO_PlusEqual, {"add", true}}, {OO_MinusEqual, {"sub", true}},
                {OO_StarEqual, {"mul", true}}, {OO_SlashEqual, {"div", true}}};
    auto it = kOps.find(k);
    if (!isTensorType(op->getType()))
      return std::nullopt;
    if (it == kOps.end()) {
      if (k == OO_Minus && op->getNumArgs() == 1)
        it = kOps.end();
      return std::nullopt;
    }
    if (op->getNumArgs() == 1) { // unary minus
      auto s = makeStep("neg");
      if (s)
        s->inputs.push_back(op->getArg(0));
      return s;
    }
    auto s = makeStep(it->second.first);
    if (!s)
      return s;
    s->inPlace = it->second.second;
    if (s->inPlace) {
      s->inputs.push_back(op->getArg(0));
      s->others.push_back(op->getArg(1));
    } else {
      for (unsigned i = 0; i < 2; ++i)
        (isTensorType(op->getArg(i)->getType()) ? s->inputs : s->others)
            .push_back(op->getArg(i));
    }
    return s;
  }
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
    const CXXMethodDecl *md = mc->getMethodDecl();
    const Expr *obj = mc->getImplicitObjectArgument();
    if (!md || !obj)
      return std::nullopt;
    if (isTensorType(obj->getType())) {
      auto s = makeStep(md->getName());
      if (s) {
        s->inputs.push_back(obj);
        for (const Expr *a : mc->arguments())
          s->others.push_back(a);
        addLaterInputs(*s, mc);
      }
      return withOperands(s);
    }
    if (md->getName() == "forward" && mc->getNumArgs() >= 1) {
      // Without the derived-to-base cast: `bn1->forward` calls a method of
      // BatchNormImplBase<2, BatchNorm2dImpl>.
      const CXXRecordDecl *impl =
          moduleImplDecl(obj->IgnoreImpCasts()->getType());
      if (!impl)
        return std::nullopt;
      // `bn1->forward`: the holder's operator-> (or a pointer's ->);
      // `bn1.forward`: the implementation object itself.
      const auto *me = dyn_cast<MemberExpr>(mc->getCallee()->IgnoreParens());
      const Expr *base = me ? me->getBase()->IgnoreParenImpCasts() : obj;
      if (const auto *arrow = dyn_cast<CXXOperatorCallExpr>(base);
          arrow && arrow->getOperator() == OO_Arrow)
        base = arrow->getArg(0);
      if (impl->getName() == "FunctionalImpl")
        return functional(base, mc->getArg(0), mc->getNumArgs() - 1);
      auto s = makeModuleStep(impl);
      if (s) {
        s->module = true;
        s->moduleType = impl->getQualifiedNameAsString();
        s->moduleObj = base;
        s->moduleDeref = me && me->isArrow();
        s->inputs.push_back(mc->getArg(0));
        for (unsigned i = 1; i < mc->getNumArgs(); ++i)
          s->others.push_back(mc->getArg(i));
      }
      return s;
    }
    return std::nullopt;
  }
  if (const auto *call = dyn_cast<CallExpr>(e)) {
    const FunctionDecl *fd = call->getDirectCallee();
    if (!fd || !fd->getIdentifier() || call->getNumArgs() == 0)
      return std::nullopt;
    std::string q = fd->getQualifiedNameAsString();
    if (!StringRef(q).starts_with("at::") &&
        !StringRef(q).starts_with("torch::"))
      return std::nullopt;
    auto s = makeStep(fd->getName());
    if (s) {
      s->inputs.push_back(call->getArg(0));
      for (unsigned i = 1; i < call->getNumArgs(); ++i)
        s->others.push_back(call->getArg(i));
      // `torch::add(bias, x)`, `torch::mul(w, x)`: the chain may come
      // through the second operand too, as through `bias + x`; through a
      // later tensor operand of another pointwise op (`torch::sub(b, x)`,
      // `torch::addcmul(beta, alpha, x)`) it keeps that position
      // (CxxPlanOp::chainArg).
      if (commutesWithSelf(*s, call))
        s->inputs.push_back(call->getArg(1));
      else
        addLaterInputs(*s, call);
    }
    return withOperands(s);
  }
  return std::nullopt;
}

} // namespace kb
