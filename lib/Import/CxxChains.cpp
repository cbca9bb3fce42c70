//===- CxxChains.cpp - Fusable chains in libtorch C++ code ----------------===//

#include "CxxChainParts.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Support/Printable.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <memory>
#include <optional>
#include <set>

using namespace clang;
using llvm::formatv;
using llvm::StringRef;

namespace kb {
namespace {

using namespace cxxchains;

/// How the rewrite names item `i` of Sequential `name` of `n` items: a
/// helper of kb_kernels.h that checks the list and the item's class
/// (SequentialImpl::at<T> does not compile for a module whose forward is
/// inherited, BatchNorm2d's).
std::string itemText(StringRef name, StringRef impl, size_t i, size_t n) {
  return formatv("kb_rewrite::kb_item<{0}>({1}, {2}, {3})", impl, name, i, n)
      .str();
}

/// `layer1->forward(x)` of a Sequential member whose items are known
/// (sequentialItems): the holder, the input, and each item as the Step its
/// own call would be, the module named by its index.
struct SequentialCall {
  const Expr *holder = nullptr, *input = nullptr;
  std::string name; // its source: "layer1"
  std::vector<Step> items;
};

std::optional<SequentialCall>
sequentialCall(const Expr *e, const SourceView &src, std::string &why) {
  const auto *mc = dyn_cast<CXXMemberCallExpr>(e);
  const CXXMethodDecl *md = mc ? mc->getMethodDecl() : nullptr;
  if (!md || !md->getIdentifier() || md->getName() != "forward" ||
      mc->getNumArgs() != 1 || !isTensorType(mc->getType()))
    return std::nullopt;
  const auto *me = dyn_cast<MemberExpr>(mc->getCallee()->IgnoreParens());
  const auto *arrow =
      me ? dyn_cast<CXXOperatorCallExpr>(me->getBase()->IgnoreParenImpCasts())
         : nullptr;
  if (!arrow || arrow->getOperator() != OO_Arrow)
    return std::nullopt;
  SequentialCall call;
  call.holder = arrow->getArg(0);
  call.input = mc->getArg(0);
  if (!isSequential(call.holder))
    return std::nullopt;
  std::string name = src.source(call.holder->getSourceRange());
  std::string itemsWhy;
  auto items = sequentialItems(call.holder, itemsWhy);
  if (!items || !movableOperand(call.holder)) {
    why = "the items of Sequential '" + name + "' are not known: " +
          (items ? "its expression may have side effects" : itemsWhy);
    return std::nullopt;
  }
  call.name = name;
  for (size_t i = 0; i < items->size(); ++i) {
    const SequentialItem &it = (*items)[i];
    std::optional<Step> s;
    if (it.impl->getName() == "FunctionalImpl") {
      s = it.function.empty() ? std::nullopt : makeStep(it.function);
      if (s) {
        s->functional = true;
        s->others = it.bound;
        classifyLiterals(*s);
      }
    } else if (!cxxModuleOp(it.impl->getName()).empty()) {
      s = makeModuleStep(it.impl);
      if (s) {
        s->module = true;
        s->moduleObj = call.holder;
        s->moduleText = itemText(call.name, it.impl->getQualifiedNameAsString(),
                                 i, items->size());
      }
    }
    if (!s) { // a module the table does not know: no op of any chain
      s.emplace();
      s->op = it.impl->getName().str();
    }
    s->item = (int)i;
    // Every item, an op of the chain or not, is called as its own class.
    s->moduleType = it.impl->getQualifiedNameAsString();
    call.items.push_back(std::move(*s));
  }
  return call;
}

/// Where an expression's chain starts.
struct Root {
  enum Kind { None, Anchor, Var } kind = None;
  CxxOpSite anchor;
  const Expr *anchorExpr = nullptr;
  const VarDecl *var = nullptr;
  std::string anchorText; // the anchor is a Sequential's item: its call
  // An anchor whose input is the tracked value after more fusable ops
  // (`fc(x.mean({2, 3}))`): those ops end the chain that feeds it.
  bool feedsVar = false;
  std::vector<CxxOpSite> feedOps;
  // A Sequential call (an anchor among its items): the call, its last
  // anchor, and its inner chains, items [first, end) after the anchor
  // first - 1 and before the anchor end.
  std::shared_ptr<SequentialCall> seq;
  int lastAnchor = -1;
  std::vector<std::pair<int, int>> segments;
};

class Analyzer : SourceView {
public:
  using Active = ActiveChain;

  Analyzer(ASTContext &ctx, const FunctionDecl &fn, CxxAnalysis &out)
      : SourceView(ctx), fn(fn), out(out) {
    collectRefs(fn.getBody());
  }

  void run() {
    if (const auto *body = dyn_cast_or_null<CompoundStmt>(fn.getBody()))
      block(body);
  }

private:
  const FunctionDecl &fn;
  CxxAnalysis &out;
  // Every reference to a local, by file offset; aliases (references bound
  // to a local, its address taken) mark the local as unusable.
  LocalRefs refs;
  std::map<const VarDecl *, std::string> aliased;

  CxxOpSite site(const Step &s, const Expr *e) const {
    CxxOpSite o;
    o.op = s.op;
    o.inPlace = s.inPlace;
    SourceLocation b = sm.getExpansionLoc(e->getBeginLoc());
    o.line = sm.getExpansionLineNumber(b);
    o.column = sm.getExpansionColumnNumber(b);
    CharSourceRange r = CharSourceRange::getTokenRange(
        sm.getExpansionRange(e->getSourceRange()).getAsRange());
    o.text = Lexer::getSourceText(r, sm, ctx.getLangOpts()).str();
    o.text = clipText(o.text, 76);
    return o;
  }

  void collectRefs(const Stmt *body) {
    struct V : RecursiveASTVisitor<V> {
      Analyzer &a;
      explicit V(Analyzer &a) : a(a) {}
      bool VisitDeclRefExpr(DeclRefExpr *d) {
        if (const auto *vd = dyn_cast<VarDecl>(d->getDecl()))
          a.refs[vd].push_back(a.offset(d->getLocation()));
        return true;
      }
      bool VisitVarDecl(VarDecl *vd) {
        if (vd->getType()->isReferenceType() && vd->getInit())
          if (const auto *d = dyn_cast<DeclRefExpr>(strip(vd->getInit())))
            if (const auto *target = dyn_cast<VarDecl>(d->getDecl()))
              a.aliased[target] = formatv("'{0}' is aliased by the reference "
                                          "'{1}' (line {2})",
                                          target->getName(), vd->getName(),
                                          a.line(vd->getLocation()));
        return true;
      }
      bool VisitUnaryOperator(UnaryOperator *u) {
        if (u->getOpcode() == UO_AddrOf)
          if (const auto *d = dyn_cast<DeclRefExpr>(strip(u->getSubExpr())))
            if (const auto *target = dyn_cast<VarDecl>(d->getDecl()))
              a.aliased[target] =
                  formatv("the address of '{0}' is taken "
                          "(line {1})",
                          target->getName(), a.line(u->getBeginLoc()));
        return true;
      }
    } v(*this);
    v.TraverseStmt(const_cast<Stmt *>(body));
  }

  static bool inMacro(const Stmt *s) {
    if (!s)
      return false;
    if (s->getBeginLoc().isMacroID() || s->getEndLoc().isMacroID())
      return true;
    for (const Stmt *c : s->children())
      if (inMacro(c))
        return true;
    return false;
  }

  bool references(const Stmt *s, const VarDecl *var) const {
    if (!s || !var)
      return false;
    if (const auto *d = dyn_cast<DeclRefExpr>(s))
      return d->getDecl() == var;
    for (const Stmt *c : s->children())
      if (references(c, var))
        return true;
    return false;
  }

  bool usedAfter(const VarDecl *var, const Stmt *s) const {
    unsigned end = offset(s->getEndLoc());
    auto it = refs.find(var);
    if (it == refs.end())
      return false;
    for (unsigned o : it->second)
      if (o > end)
        return true;
    return false;
  }

  /// Follows the chain operand of `e` down to its root; `ops` gets the
  /// steps from the root outwards. Other operands must not read `var`.
  Root trace(const Expr *e, const VarDecl *var, std::vector<CxxOpSite> &ops,
             std::string &why, std::vector<OpRef> &refs) const {
    e = strip(e);
    if (const auto *d = dyn_cast<DeclRefExpr>(e)) {
      Root r;
      if (const auto *vd = dyn_cast<VarDecl>(d->getDecl()); vd && vd == var) {
        r.kind = Root::Var;
        r.var = vd;
      }
      return r;
    }
    if (auto seq = sequentialCall(e, *this, why))
      return traceSequential(*seq, e, var, ops, why, refs);
    auto step = stepOf(e);
    if (!step)
      return {};
    if (step->anchor) {
      Root r;
      r.kind = Root::Anchor;
      r.anchor = site(*step, e);
      r.anchorExpr = e;
      if (var && !step->inputs.empty()) {
        std::string ignored;
        std::vector<OpRef> feedRefs;
        Root in =
            trace(step->inputs.front(), var, r.feedOps, ignored, feedRefs);
        r.feedsVar = in.kind == Root::Var;
        if (!r.feedsVar)
          r.feedOps.clear();
      }
      return r;
    }
    if (!step->isFusable) {
      why = "'" + step->op + "' is not fusable (op-semantics table: " +
            kindName(step->kind).str() + ")";
      return {};
    }
    for (const Expr *in : step->inputs) {
      std::vector<CxxOpSite> inner;
      std::vector<OpRef> innerRefs;
      Root r = trace(in, var, inner, why, innerRefs);
      if (r.kind == Root::None)
        continue;
      // The chain's value read twice (`x * torch::sigmoid(x)`, `x * x`): the
      // other read must be the value itself or pointwise ops of it, and one
      // of the two reads the value directly.
      // (`y.mul(torch::sigmoid(y))`: a method's or function's tensor
      // argument too). Only pointwise ops may stand between: a reduction
      // read twice (`x + x.mean()`) ends the chain before it.
      const Expr *value = nullptr;
      std::vector<CxxOpSite> sub;
      std::vector<OpRef> subRefs;
      // A commuting call's second operand is among both (CxxSteps.cpp).
      std::vector<const Expr *> reads(step->inputs.begin(), step->inputs.end());
      for (const Expr *o : step->others)
        if (!llvm::is_contained(reads, o))
          reads.push_back(o);
      for (const Expr *o : reads) {
        if (o == in || !references(o, var))
          continue;
        std::string ignored;
        if (value || r.kind != Root::Var || !isTensorType(o->getType()) ||
            trace(o, var, sub, ignored, subRefs).kind != Root::Var ||
            (!inner.empty() && !sub.empty()))
          return {};
        for (const OpRef &x : subRefs) {
          const OpInfo *row = tableRow(x.step.op);
          if (x.step.module || !row ||
              (row->kind != OpKind::Elementwise &&
               row->kind != OpKind::Broadcast))
            return {};
        }
        value = o;
      }
      OpRef self{*step, e, in};
      if (value) {
        self.value = value;
        self.selfBack = (int)sub.size() + 1;
        self.valueBack = sub.empty() ? (int)inner.size() + 1 : 1;
      }
      ops = std::move(inner);
      ops.insert(ops.end(), sub.begin(), sub.end());
      ops.push_back(site(*step, e));
      refs = std::move(innerRefs);
      refs.insert(refs.end(), subRefs.begin(), subRefs.end());
      refs.push_back(self);
      return r;
    }
    return {};
  }

  /// trace() of a Sequential's call: its items as nested calls. After its
  /// last anchor the items are the chain's first ops, the items up to it
  /// the anchor's call
  /// (`kb_rewrite::kb_item<torch::nn::Conv2dImpl>(layer1, 0, 4).forward(x)`);
  /// with no anchor in it, its items continue the chain of its input.
  Root traceSequential(const SequentialCall &seq, const Expr *e,
                       const VarDecl *var, std::vector<CxxOpSite> &ops,
                       std::string &why, std::vector<OpRef> &refs) const {
    int last = -1; // the last item that is an anchor or ends chains
    for (size_t i = 0; i < seq.items.size(); ++i)
      if (seq.items[i].anchor || !seq.items[i].isFusable)
        last = (int)i;
    std::vector<CxxOpSite> inner;
    std::vector<OpRef> innerRefs;
    Root r;
    if (last >= 0 && !seq.items[last].anchor) {
      const Step &st = seq.items[last];
      why = tableRow(st.op)
                ? formatv("'{0}' (item {1} of Sequential '{2}') is not "
                          "fusable (op-semantics table: {3})",
                          st.op, last, seq.name, kindName(st.kind))
                      .str()
                : formatv("item {0} of Sequential '{1}' is a module the "
                          "op-semantics table does not list ({2})",
                          last, seq.name, st.op)
                      .str();
      return {};
    }
    if (last >= 0) {
      // Runs of fusable items between two anchors: chains of their own
      // (emitSegments), once a chain starts at this call.
      int prev = -1;
      for (int i = 0; i <= last; ++i) {
        if (!seq.items[i].anchor) {
          if (!seq.items[i].isFusable || !tableRow(seq.items[i].op))
            prev = -1;
          continue;
        }
        if (prev >= 0 && i - prev > 1)
          r.segments.push_back({prev + 1, i});
        prev = i;
      }
      r.seq = std::make_shared<SequentialCall>(seq);
      r.lastAnchor = last;
      r.kind = Root::Anchor;
      r.anchor = site(seq.items[last], e);
      r.anchor.text += formatv(" (item {0})", last).str();
      r.anchorExpr = e;
      r.anchorText = composeItems(r, last, {});
      if (var && last == 0) {
        std::string ignored;
        std::vector<OpRef> feedRefs;
        r.feedsVar = trace(seq.input, var, r.feedOps, ignored, feedRefs).kind ==
                     Root::Var;
        if (!r.feedsVar)
          r.feedOps.clear();
      }
    } else {
      r = trace(seq.input, var, inner, why, innerRefs);
      if (r.kind == Root::None)
        return r;
    }
    ops = std::move(inner);
    refs = std::move(innerRefs);
    for (size_t i = last + 1; i < seq.items.size(); ++i) {
      ops.push_back(site(seq.items[i], e));
      ops.back().text += formatv(" (item {0})", i).str();
      refs.push_back(OpRef{seq.items[i], e, seq.input});
    }
    return r;
  }

  /// A chain found in statement `s` of block `b`: where it is.
  void place(Active &a, const Stmt *s, const CompoundStmt *b) const {
    a.parent = b;
    a.chain.file = sm.getFilename(sm.getExpansionLoc(s->getBeginLoc())).str();
    a.chain.function = fn.getQualifiedNameAsString();
  }

  /// The Sequential call of `r` up to item `upto`, each item called on its
  /// own but segment k (of r.segments, k < marks.size(), k != skip), which
  /// stands as chain marks[k]'s placeholder for items 0 .. its end.
  std::string composeItems(const Root &r, int upto, ArrayRef<size_t> marks,
                           int skip = -1) const {
    const SequentialCall &seq = *r.seq;
    std::string call = source(seq.input->getSourceRange());
    for (int i = 0; i <= upto;) {
      auto k = llvm::find_if(r.segments, [&](auto g) { return g.first == i; }) -
               r.segments.begin();
      if (k < (long)marks.size() && k != skip &&
          r.segments[k].second - 1 <= upto) {
        call = cxxSegmentMark(marks[k]);
        i = r.segments[k].second;
        continue;
      }
      call = itemText(seq.name, seq.items[i].moduleType, i, seq.items.size()) +
             ".forward(" + call + ")";
      ++i;
    }
    return call;
  }

  /// The chains between the anchors of r's Sequential call, finished here
  /// (before the chain after its last anchor, which reads them through
  /// placeholders). With no ops after the last anchor (`owner` false) the
  /// last of them owns the call's edit, the items after it around its call.
  /// Sets r.anchorText to the call up to the last anchor with every
  /// segment's placeholder; returns the owner's texts in `outer`.
  void emitSegments(Root &r, const Stmt *s, unsigned index,
                    const CompoundStmt *b, bool owner, Active &outer) {
    // The marks are "\x01<index>\x01": an input whose source holds that
    // byte (a hostile file) keeps one chain per call.
    if (!r.seq || r.segments.empty() ||
        source(r.seq->input->getSourceRange()).find('\x01') !=
            std::string::npos)
      return;
    const SequentialCall &seq = *r.seq;
    int n = (int)seq.items.size();
    std::vector<size_t> marks;
    for (auto [k, g] : llvm::enumerate(r.segments)) {
      auto [first, end] = g;
      std::optional<Active> in;
      in.emplace();
      place(*in, s, b);
      in->chain.anchor = site(seq.items[first - 1], r.anchorExpr);
      in->chain.anchor.text += formatv(" (item {0})", first - 1).str();
      for (int i = first; i < end; ++i) {
        in->chain.ops.push_back(site(seq.items[i], r.anchorExpr));
        in->chain.ops.back().text += formatv(" (item {0})", i).str();
        in->refs.push_back(OpRef{seq.items[i], r.anchorExpr, seq.input});
      }
      in->stmts.push_back({s, index});
      in->anchorExpr = r.anchorExpr;
      in->anchorText = composeItems(r, first - 1, marks);
      in->unrolled = composeItems(r, end - 1, marks, (int)k);
      bool last = k + 1 == r.segments.size();
      if (last && !owner) {
        for (int i = n - 1; i >= end; --i)
          in->wrapOpen +=
              itemText(seq.name, seq.items[i].moduleType, i, n) + ".forward(";
        in->wrapClose = std::string(n - end, ')');
        if (!marks.empty()) {
          in->seqExpr = r.anchorExpr;
          in->seqUnrolled = composeItems(r, n - 1, marks, (int)k);
        }
      } else {
        in->nested = true;
      }
      finish(in, formatv("feeds {0} (item {1} of Sequential '{2}')",
                         seq.items[end].op, end, seq.name));
      marks.push_back(out.chains.size() - 1);
    }
    r.anchorText = composeItems(r, r.lastAnchor, marks);
    if (owner) {
      outer.seqExpr = r.anchorExpr;
      outer.seqUnrolled = composeItems(r, n - 1, marks);
    }
  }

  void finish(std::optional<Active> &a, const std::string &why) {
    if (a && !a->chain.ops.empty()) {
      a->chain.end = why;
      a->chain.plan = planRewrite(ctx, refs, *a);
      a->chain.variable = a->var ? a->var->getName().str() : "";
      out.chains.push_back(std::move(a->chain));
    }
    a.reset();
  }

  void skip(const Stmt *s, const std::string &why) {
    CxxSkip k;
    k.file = sm.getFilename(sm.getExpansionLoc(s->getBeginLoc())).str();
    k.function = fn.getQualifiedNameAsString();
    k.line = line(s->getBeginLoc());
    k.reason = why;
    out.skipped.push_back(std::move(k));
  }

  /// Whether a statement's traced value is no chain of its own (nothing
  /// fusable at its top, or an anchor with no ops after it): chains may
  /// still sit in its operands (nestedChains).
  static bool holdsNoChain(const Root &r, const std::vector<CxxOpSite> &ops) {
    return r.kind == Root::None || (r.kind == Root::Anchor && ops.empty() &&
                                    r.segments.empty() && !r.feedsVar);
  }

  /// Ends the active chain at statement `s` when `s` reads its variable.
  void endIfUsed(std::optional<Active> &active, const Stmt *s,
                 const VarDecl *var) {
    if (!references(s, var))
      return;
    finish(active,
           isa<ReturnStmt>(s)
               ? formatv("returned at line {0}", line(s->getBeginLoc())).str()
               : formatv("'{0}' is used at line {1}", var->getName(),
                         line(s->getBeginLoc()))
                     .str());
  }

  /// A chain of one statement `s` (index `index` of block `b`) from
  /// anchor root `r` through `ops`, finished at once with `why`.
  void finishOne(Active a, const Root &r, std::vector<CxxOpSite> ops,
                 std::vector<OpRef> refs, const Stmt *s, unsigned index,
                 const CompoundStmt *b, const std::string &why) {
    std::optional<Active> one;
    one.emplace(std::move(a));
    place(*one, s, b);
    one->chain.anchor = r.anchor;
    one->chain.ops = std::move(ops);
    one->refs = std::move(refs);
    one->stmts.push_back({s, index});
    one->anchorExpr = r.anchorExpr;
    one->anchorText = r.anchorText;
    finish(one, why);
  }

  /// What a chain's enclosing expression calls, for the chain's end: its
  /// op, or the function it calls ("" for no call: a braced list).
  static std::string callName(const Expr *e) {
    e = strip(e);
    if (auto st = stepOf(e))
      return "'" + st->op + "'";
    if (const auto *call = dyn_cast<CallExpr>(e))
      if (const FunctionDecl *fd = call->getDirectCallee())
        return "'" + fd->getQualifiedNameAsString() + "'";
    return "";
  }

  /// Chains nested in a statement whose value is no chain of its own: the
  /// argument of an op the kernels do not take
  /// (`torch::cumsum(torch::gelu(fc(x)) * 2, 1)`, a dropout whose flag is
  /// known only at run time) or of an anchor (`fc2(torch::relu(fc1(x)))`).
  /// Each largest one that starts at an anchor becomes a chain that ends
  /// there; its outermost op's expression is what changes. `holder`: the
  /// nearest call around `value` and the line it starts at.
  void nestedChains(const Expr *value, const Stmt *s, unsigned index,
                    const CompoundStmt *b,
                    std::pair<std::string, unsigned> holder = {}) {
    if (isa<LambdaExpr>(value))
      return;
    if (std::string name = callName(value); !name.empty())
      holder = {name, line(value->getBeginLoc())};
    for (const Stmt *c : value->children()) {
      const auto *e = dyn_cast_or_null<Expr>(c);
      if (!e)
        continue;
      std::vector<CxxOpSite> ops;
      std::vector<OpRef> refs;
      std::string why;
      Root r = trace(e, nullptr, ops, why, refs);
      if (r.kind != Root::Anchor || !r.segments.empty() || ops.empty()) {
        nestedChains(e, s, index, b, holder);
        continue;
      }
      finishOne(Active(), r, std::move(ops), std::move(refs), s, index, b,
                holder.first.empty()
                    ? formatv("inside the statement at line {0}",
                              line(s->getBeginLoc()))
                          .str()
                    : formatv("an operand of {0} at line {1}", holder.first,
                              holder.second)
                          .str());
    }
  }

  void block(const CompoundStmt *b) {
    std::optional<Active> active;
    unsigned index = 0;
    for (const Stmt *s : b->body()) {
      ++index;
      const VarDecl *var = active ? active->var : nullptr;
      if (inMacro(s)) {
        if (references(s, var))
          finish(active, formatv("'{0}' is used in a macro (line {1})",
                                 var->getName(), line(s->getBeginLoc())));
        skip(s, "statement in a macro expansion: not rewritten");
        continue;
      }
      const VarDecl *target = nullptr;
      const Expr *value = nullptr;
      if (assignment(s, target, value)) {
        std::vector<CxxOpSite> ops;
        std::vector<OpRef> refs;
        std::string why;
        Root r = trace(value, var, ops, why, refs);
        if (r.kind == Root::Var && aliased.count(target)) {
          skip(s, aliased[target] + ": the chain stops here");
          finish(active, aliased[target]);
          continue;
        }
        if (r.kind == Root::Var) {
          // An intermediate value read again later must stay in memory: the
          // chain ends there. The anchor's own result is in memory anyway.
          if (target != var && usedAfter(var, s) &&
              !active->chain.ops.empty()) {
            finish(active, formatv("'{0}' is used again after line {1}",
                                   var->getName(), line(s->getEndLoc())));
            continue;
          }
          if (!ops.empty()) {
            if (active->stmts.empty() && !active->anchorExpr)
              active->inputVar = var->getName().str();
            active->stmts.push_back({s, index});
          }
          for (CxxOpSite &o : ops)
            active->chain.ops.push_back(std::move(o));
          for (OpRef &o : refs)
            active->refs.push_back(std::move(o));
          active->var = target;
          continue;
        }
        if (r.kind == Root::Anchor && r.feedsVar) {
          if (target == var || !usedAfter(var, s)) {
            for (CxxOpSite &o : r.feedOps)
              active->chain.ops.push_back(std::move(o));
            active->feedsAnchor = !r.feedOps.empty();
          }
          finish(active,
                 formatv("feeds {0} at line {1}", r.anchor.op, r.anchor.line));
        } else if (references(s, var))
          finish(active, why.empty()
                             ? formatv("'{0}' is used at line {1}",
                                       var->getName(), line(s->getBeginLoc()))
                                   .str()
                             : why);
        else if (target == var)
          finish(active, formatv("'{0}' is reassigned at line {1}",
                                 var->getName(), line(s->getBeginLoc())));
        if (holdsNoChain(r, ops))
          nestedChains(value, s, index, b);
        if (r.kind == Root::Anchor) {
          Active outer;
          emitSegments(r, s, index, b, !ops.empty(), outer);
          active.emplace(std::move(outer));
          place(*active, s, b);
          active->chain.anchor = r.anchor;
          active->chain.ops = std::move(ops);
          active->refs = std::move(refs);
          active->var = target;
          if (!active->chain.ops.empty()) {
            active->stmts.push_back({s, index});
            active->anchorExpr = r.anchorExpr;
            active->anchorText = r.anchorText;
          } else {
            active->inputVar = target->getName().str();
          }
          if (aliased.count(target)) {
            skip(s, aliased[target] + ": no chain after " + r.anchor.op);
            active.reset();
          }
        }
        continue;
      }
      if (const auto *inner = dyn_cast<CompoundStmt>(s)) {
        if (references(s, var))
          finish(active, formatv("'{0}' is used in a nested block (line {1})",
                                 var->getName(), line(s->getBeginLoc())));
        block(inner);
        continue;
      }
      // The chain's last ops in its return: `return torch::relu(y);`
      if (const auto *ret = dyn_cast<ReturnStmt>(s);
          ret && active && var && ret->getRetValue()) {
        std::vector<CxxOpSite> ops;
        std::vector<OpRef> refs;
        std::string why;
        Root r = trace(ret->getRetValue(), var, ops, why, refs);
        if (r.kind == Root::Var && !r.feedsVar && !ops.empty()) {
          if (active->stmts.empty() && !active->anchorExpr)
            active->inputVar = var->getName().str();
          active->stmts.push_back({s, index});
          for (CxxOpSite &o : ops)
            active->chain.ops.push_back(std::move(o));
          for (OpRef &o : refs)
            active->refs.push_back(std::move(o));
          finish(active,
                 formatv("returned at line {0}", line(s->getBeginLoc())));
          continue;
        }
      }
      // A chain inside one expression: `return torch::relu(conv(x)) * 2;`
      if (const Expr *value = isa<ReturnStmt>(s)
                                  ? cast<ReturnStmt>(s)->getRetValue()
                                  : dyn_cast<Expr>(s)) {
        std::vector<CxxOpSite> ops;
        std::vector<OpRef> refs;
        std::string why;
        Root r = trace(value, nullptr, ops, why, refs);
        if (r.kind == Root::Anchor && (!ops.empty() || !r.segments.empty())) {
          finish(active,
                 formatv("'{0}' is used at line {1}", var ? var->getName() : "",
                         line(s->getBeginLoc())));
          Active outer;
          emitSegments(r, s, index, b, !ops.empty(), outer);
          if (ops.empty())
            continue;
          finishOne(std::move(outer), r, std::move(ops), std::move(refs), s,
                    index, b,
                    isa<ReturnStmt>(s) ? "returned" : "end of the statement");
          continue;
        }
        if (holdsNoChain(r, ops)) {
          endIfUsed(active, s, var);
          nestedChains(value, s, index, b);
        }
      }
      endIfUsed(active, s, var);
      // Blocks under if/for/while have chains of their own.
      for (const Stmt *c : s->children())
        if (const auto *cb = dyn_cast_or_null<CompoundStmt>(c))
          block(cb);
    }
    finish(active, "end of the block");
  }
};

} // namespace

void analyzeCxxFunction(ASTContext &ctx, const FunctionDecl &fn,
                        CxxAnalysis &out) {
  if (!fn.hasBody() || !fn.isThisDeclarationADefinition())
    return;
  if (fn.isTemplated()) {
    CxxSkip k;
    SourceManager &sm = ctx.getSourceManager();
    k.file = sm.getFilename(sm.getExpansionLoc(fn.getLocation())).str();
    k.function = fn.getQualifiedNameAsString();
    k.line = sm.getExpansionLineNumber(fn.getLocation());
    k.reason = "template: not rewritten (its instantiations may differ)";
    out.skipped.push_back(std::move(k));
    return;
  }
  Analyzer(ctx, fn, out).run();
}

} // namespace kb
