//===- CxxChainParts.cpp - What chain finding and planning share ----------===//
#include "CxxChainParts.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FormatVariadic.h"

using namespace clang;
using llvm::StringRef;

namespace kb::cxxchains {

std::string SourceView::source(SourceRange r) const {
  CharSourceRange c =
      CharSourceRange::getTokenRange(sm.getExpansionRange(r).getAsRange());
  return Lexer::getSourceText(c, sm, ctx.getLangOpts()).str();
}

bool isTensorType(QualType t) {
  t = t.getNonReferenceType().getCanonicalType();
  const auto *rd = t->getAsCXXRecordDecl();
  if (!rd)
    return false;
  std::string n = rd->getQualifiedNameAsString();
  return n == "at::Tensor" || n == "at::TensorBase";
}

const Expr *strip(const Expr *e) {
  while (e) {
    const Expr *before = e;
    e = e->IgnoreImplicit()->IgnoreParens();
    if (const auto *c = dyn_cast<CXXConstructExpr>(e))
      if (c->getNumArgs() == 1 && isTensorType(c->getType()) &&
          isTensorType(c->getArg(0)->getType()))
        e = c->getArg(0); // copies and moves of a Tensor
    if (const auto *c = dyn_cast<CXXFunctionalCastExpr>(e))
      e = c->getSubExpr();
    if (e == before)
      break;
  }
  return e;
}

/// The aten op a table row names, if the table lists it.
const OpInfo *tableRow(StringRef base) {
  auto rows = lookupOverloads(base);
  return rows.empty() ? nullptr : rows.front();
}

/// Looks through the implicit conversions a call adds to an operand
/// (double -> at::Scalar, "tanh" -> c10::string_view).
const Expr *operandCore(const Expr *e) {
  while (true) {
    e = strip(e)->IgnoreParenImpCasts();
    const auto *c = dyn_cast<CXXConstructExpr>(e);
    if (!c || c->getNumArgs() != 1 || isa<CXXTemporaryObjectExpr>(c))
      return e;
    e = c->getArg(0);
  }
}

/// Operands the rewrite may move to the fused call: no side effects and no
/// evaluation order to keep (locals, members, literals).
bool movableOperand(const Expr *e) {
  e = operandCore(e);
  if (isa<IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr, StringLiteral,
          DeclRefExpr, CXXThisExpr>(e))
    return true;
  if (const auto *u = dyn_cast<UnaryOperator>(e))
    return (u->getOpcode() == UO_Minus || u->getOpcode() == UO_Plus) &&
           movableOperand(u->getSubExpr());
  if (const auto *m = dyn_cast<MemberExpr>(e))
    return !isa<CXXMethodDecl>(m->getMemberDecl()) &&
           movableOperand(m->getBase());
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e)) // module->weight
    return op->getOperator() == OO_Arrow && movableOperand(op->getArg(0));
  // MaxPool2dOptions({2, 2}): a braced list of movable values.
  if (const auto *il = dyn_cast<CXXStdInitializerListExpr>(e))
    return movableOperand(il->getSubExpr());
  if (const auto *mt = dyn_cast<MaterializeTemporaryExpr>(e))
    return movableOperand(mt->getSubExpr());
  if (const auto *il = dyn_cast<InitListExpr>(e))
    return llvm::all_of(il->inits(),
                        [](const Expr *x) { return movableOperand(x); });
  return false;
}

const CXXRecordDecl *moduleImplDecl(QualType t) {
  t = t.getNonReferenceType().getCanonicalType();
  if (t->isPointerType())
    t = t->getPointeeType().getCanonicalType();
  const auto *rd = t->getAsCXXRecordDecl();
  while (rd) {
    if (const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(rd))
      if (spec->getName() == "ModuleHolder" &&
          spec->getTemplateArgs().size() == 1)
        if (const auto *impl =
                spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl())
          return impl;
    if (rd->getName().ends_with("Impl") &&
        (!cxxModuleOp(rd->getName()).empty() ||
         rd->getName() == "FunctionalImpl"))
      return rd;
    if (!rd->hasDefinition() || rd->getNumBases() == 0)
      break;
    rd = rd->bases_begin()->getType()->getAsCXXRecordDecl();
  }
  return nullptr;
}

/// `target = value` forms: assignment, declaration, in-place statements.
bool assignment(const Stmt *s, const VarDecl *&target, const Expr *&value) {
  if (const auto *ds = dyn_cast<DeclStmt>(s)) {
    if (!ds->isSingleDecl())
      return false;
    const auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl());
    if (!vd || !vd->getInit() || vd->getType()->isReferenceType() ||
        !isTensorType(vd->getType()))
      return false;
    target = vd;
    value = vd->getInit();
    return true;
  }
  const auto *e = dyn_cast<Expr>(s);
  if (!e)
    return false;
  e = strip(e);
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e)) {
    if (op->getOperator() == OO_Equal && op->getNumArgs() == 2) {
      const auto *d = dyn_cast<DeclRefExpr>(strip(op->getArg(0)));
      const auto *vd = d ? dyn_cast<VarDecl>(d->getDecl()) : nullptr;
      if (!vd || !isTensorType(vd->getType()))
        return false;
      target = vd;
      value = op->getArg(1);
      return true;
    }
  }
  // x.relu_(); x += b;  — the statement itself is the op.
  if (auto step = stepOf(e); step && step->inPlace && !step->inputs.empty())
    if (const auto *d = dyn_cast<DeclRefExpr>(strip(step->inputs.front())))
      if (const auto *vd = dyn_cast<VarDecl>(d->getDecl())) {
        target = vd;
        value = e;
        return true;
      }
  return false;
}

} // namespace kb::cxxchains

namespace kb {

CxxStage cxxStageOf(const OpInfo &row) {
  // By the row's recipe, so an overload the kernels do not take (prod,
  // logsumexp, max.dim's values and indices, a 1-d or 3-d pool) is no stage.
  StringRef name = row.name;
  switch (row.recipe) {
  case Recipe::Sum:
    return CxxStage::Sum;
  case Recipe::Mean:
    return CxxStage::Mean;
  case Recipe::Amax:
    return name == "amax" ? CxxStage::Amax : CxxStage::None;
  case Recipe::Amin:
    return name == "amin" ? CxxStage::Amin : CxxStage::None;
  case Recipe::Softmax:
    return name == "softmax" ? CxxStage::Softmax : CxxStage::None;
  case Recipe::LogSoftmax:
    return name == "log_softmax" ? CxxStage::LogSoftmax : CxxStage::None;
  case Recipe::MaxPool:
    return name == "max_pool2d" ? CxxStage::MaxPool2d : CxxStage::None;
  case Recipe::AvgPool:
    return name == "avg_pool2d" ? CxxStage::AvgPool2d : CxxStage::None;
  case Recipe::AdaptiveAvgPool:
    return name == "adaptive_avg_pool2d" ? CxxStage::AdaptiveAvgPool2d
                                         : CxxStage::None;
  case Recipe::LayerNorm:
    return CxxStage::LayerNorm;
  default:
    return CxxStage::None;
  }
}

std::string CxxChain::summary() const {
  std::string chain;
  for (const CxxOpSite &o : ops)
    chain += (chain.empty() ? "" : " -> ") + o.op + (o.inPlace ? "_" : "");
  return llvm::formatv("fusable epilogue after {0}: {1} ({2} op{3})", anchor.op,
                       chain, ops.size(), ops.size() == 1 ? "" : "s");
}

} // namespace kb
