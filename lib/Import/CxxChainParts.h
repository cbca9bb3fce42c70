//===- CxxChainParts.h - What chain finding and planning share -*- C++ -*-===//
//
// lib/Import's C++ frontend in two jobs: CxxChains.cpp finds the chains
// of a function (which calls fuse, where a chain ends and why), and
// CxxPlanner.cpp plans the source edits of a finished chain (byte ranges,
// the fused call's prefix and suffix, operands moved into it). This
// private header holds what both read: a call as an op (Step), a chain's
// ops as the AST has them, and the AST helpers both use.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_IMPORT_CXXCHAINPARTS_H
#define KB_LIB_IMPORT_CXXCHAINPARTS_H

#include "kb/IR/OpSemantics.h"
#include "kb/Import/CxxChains.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kb::cxxchains {

using clang::CompoundStmt;
using clang::Expr;
using clang::Stmt;
using clang::VarDecl;

/// Whether `t` is (a reference to) at::Tensor or at::TensorBase.
bool isTensorType(clang::QualType t);
/// `e` without implicit nodes, parentheses, Tensor copies and functional
/// casts.
const Expr *strip(const Expr *e);
/// The aten op a table row names, if the table lists it.
const OpInfo *tableRow(llvm::StringRef base);
/// Looks through the implicit conversions a call adds to an operand
/// (double -> at::Scalar, "tanh" -> c10::string_view).
const Expr *operandCore(const Expr *e);
/// Operands the rewrite may move to the fused call: no side effects and no
/// evaluation order to keep (locals, members, literals).
bool movableOperand(const Expr *e);
/// The module implementation class behind `m->forward` or `m(...)`: the
/// Impl of a ModuleHolder (or of a TORCH_MODULE class over one), or an
/// Impl class the op table (or Functional) knows; null otherwise.
const clang::CXXRecordDecl *moduleImplDecl(clang::QualType t);
/// The op a `torch::nn::Functional` member computes (`module` as in
/// `relu->forward(x)` or `relu(x)`): the torch:: / at:: function of one
/// tensor that every place setting the member in its class builds it from
/// ("relu" for `Functional relu{torch::relu};`); nothing when they differ,
/// a constructor is not visible, or arguments are bound to it.
std::optional<std::string> functionalOp(const Expr *module);

/// An item of a torch::nn::Sequential member: its implementation class and,
/// for a Functional, the function it wraps (functionalOp's rule).
struct SequentialItem {
  const clang::CXXRecordDecl *impl = nullptr;
  std::string function;
  /// A Functional's number literals bound after the input
  /// (`Functional(torch::leaky_relu, 0.2)`): the op's next operands.
  std::vector<const clang::Expr *> bound;
};
/// Whether `module` (as in `layer1->forward(x)`) is a torch::nn::Sequential.
bool isSequential(const Expr *module);
/// The items of the Sequential member `module` names, when every place
/// that sets it builds it from one list of module constructions and its
/// class uses it only by calling it and registering it (no push_back, no
/// copy handed on); otherwise nothing, and `why` says why.
std::optional<std::vector<SequentialItem>> sequentialItems(const Expr *module,
                                                           std::string &why);

/// The function's source as both jobs read it: positions at their macro
/// expansion.
class SourceView {
public:
  explicit SourceView(clang::ASTContext &ctx)
      : ctx(ctx), sm(ctx.getSourceManager()) {}
  unsigned offset(clang::SourceLocation l) const {
    return sm.getFileOffset(sm.getExpansionLoc(l));
  }
  unsigned line(clang::SourceLocation l) const {
    return sm.getExpansionLineNumber(l);
  }
  /// The source of `r`'s tokens, at their macro expansion.
  std::string source(clang::SourceRange r) const;

protected:
  clang::ASTContext &ctx;
  clang::SourceManager &sm;
};

/// One call as an op: what it computes and through which operands a chain
/// can flow into it.
struct Step {
  std::string op;
  bool inPlace = false;
  bool anchor = false;
  bool isFusable = false;
  OpKind kind = OpKind::Opaque; // kb::refinedKind of its literal operands
  bool module = false; // a module's forward: its options live in the module
  bool functional = false; // a Functional member's call: the function's op
  const Expr *moduleObj = nullptr;  // the module (holder, pointer or object)
  bool moduleDeref = false;         // `*obj` is the implementation object
  std::string moduleType;           // its qualified implementation class
  /// An item of a Sequential (`layer1->forward(x)`): its index, and the
  /// module's source as the rewrite names it
  /// (`kb_rewrite::kb_item<...Impl>(layer1, 1, 4)`).
  int item = -1;
  std::string moduleText;
  std::vector<const Expr *> inputs; // tensor operands a chain may come through
  std::vector<const Expr *> others; // every other operand
};

/// An op of a chain as the AST has it, for the rewrite plan.
struct OpRef {
  Step step;
  const Expr *expr = nullptr;    // the call
  const Expr *chainIn = nullptr; // the operand the chain flows through
  // `x * f(x)`: the other operand that reads the chain's value, how many
  // ops back its value is, and how many back `self`'s is.
  const Expr *value = nullptr;
  int valueBack = 0, selfBack = 1;
};

/// A chain while its function's block is read, and once finished: its
/// ops, the statements holding them, and how it starts.
struct ActiveChain {
  CxxChain chain;
  const VarDecl *var = nullptr;
  std::vector<OpRef> refs;
  // Statements holding the chain's ops, with their index in the block.
  std::vector<std::pair<const Stmt *, unsigned>> stmts;
  const Expr *anchorExpr = nullptr; // when the first statement holds it
  std::string anchorText;           // its source when it is a Sequential's item
  std::string inputVar;             // otherwise: the local it was stored in
  bool feedsAnchor = false;         // its last ops sit in an anchor's operand
  bool expression = false;          // one statement: replace the expression
  const CompoundStmt *parent = nullptr; // the block of `stmts`
  /// Chains of one Sequential call between two of its anchors
  /// (CxxRewritePlan::nested): no edit of their own.
  bool nested = false;
  /// The Sequential call whose inner chains this chain's input reads, and
  /// the texts CxxRewritePlan::seqUnrolled, unrolled, wrapOpen/Close take.
  const clang::Expr *seqExpr = nullptr;
  std::string seqUnrolled, unrolled, wrapOpen, wrapClose;
};

/// Every reference to a local, by file offset.
using LocalRefs = std::map<const VarDecl *, std::vector<unsigned>>;

/// The op `e` computes, with the operands a chain may flow through; nullopt
/// for a call the op table and module rows do not know (CxxSteps.cpp).
std::optional<Step> stepOf(const Expr *e);
/// A call of `torch::add(a, b)` (alpha the default) or `torch::mul(a, b)`
/// of two tensors: the chain may flow through `b` as well as `a` (the
/// planner then passes `a` as the other operand: the same bits).
bool commutesWithSelf(const Step &s, const clang::CallExpr *call);

/// The tensor arguments of `call` through which the chain may also come
/// into a pointwise op, at their own schema position (`torch::sub(b, x)`,
/// `b.div(x)`): added to `s.inputs`; none for in-place or other ops.
void addLaterInputs(Step &s, const clang::CallExpr *call);
/// The op named `name` (an aten name, `relu_` in place), classified with no
/// operands known.
std::optional<Step> makeStep(llvm::StringRef name);
/// A module call's op; a module with a fused form of its own (a Dropout in
/// eval mode) is fusable where its op alone is not.
std::optional<Step> makeModuleStep(const clang::CXXRecordDecl *impl);
/// Classifies `s` again with what its literal operands (`others`) say.
void classifyLiterals(Step &s);
/// `target = value` forms: assignment, declaration, in-place statements.
bool assignment(const Stmt *s, const VarDecl *&target, const Expr *&value);

/// The source edits that replace finished chain `a` of a function by a
/// call of its fused function (or why it stays as written, in the plan's
/// `why`). `refs` holds the function's references to its locals.
CxxRewritePlan planRewrite(clang::ASTContext &ctx, const LocalRefs &refs,
                           const ActiveChain &a);

} // namespace kb::cxxchains

#endif // KB_LIB_IMPORT_CXXCHAINPARTS_H
