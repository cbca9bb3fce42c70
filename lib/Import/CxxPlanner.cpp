//===- CxxPlanner.cpp - The source edits of a finished C++ chain ----------===//
//
// A chain that CxxChains.cpp found and finished becomes a CxxRewritePlan:
// the byte ranges its statements span, what replaces them (a call of the
// fused function, its result stored as the chain stored it), the
// operands moved into the call, and statements left in place; or the
// reason it stays as written.
//
//===----------------------------------------------------------------------===//
#include "CxxChainParts.h"
#include "kb/Support/Printable.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <set>

using namespace clang;
using llvm::formatv;
using llvm::StringRef;

namespace kb::cxxchains {
namespace {

class Planner : SourceView {
public:
  Planner(ASTContext &ctx, const LocalRefs &refs)
      : SourceView(ctx), refs(refs) {}

  using Active = ActiveChain;

  /// Offset just past the last token of `s`, and past a `;` right after it.
  unsigned endOf(const Stmt *s, bool withSemi) const {
    SourceLocation end = sm.getExpansionLoc(s->getEndLoc());
    SourceLocation after =
        Lexer::getLocForEndOfToken(end, 0, sm, ctx.getLangOpts());
    if (withSemi)
      if (auto t = Lexer::findNextToken(end, sm, ctx.getLangOpts());
          t && t->is(tok::semi))
        after = t->getEndLoc();
    return sm.getFileOffset(after);
  }

  /// Every operand of `r`'s call in call order (a method's object first);
  /// empty for a Functional's or a Sequential's item.
  static std::vector<const Expr *> callOperands(const OpRef &r) {
    std::vector<const Expr *> all;
    if (r.step.functional || r.step.item >= 0)
      return all;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(r.expr)) {
      for (unsigned i = 0; i < op->getNumArgs(); ++i)
        all.push_back(op->getArg(i));
    } else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(r.expr)) {
      all.push_back(mc->getImplicitObjectArgument());
      for (const Expr *a : mc->arguments())
        all.push_back(a);
    } else if (const auto *call = dyn_cast<CallExpr>(r.expr)) {
      for (const Expr *a : call->arguments())
        all.push_back(a);
    }
    return all;
  }

  /// The operands of `r` other than the chain's value, in call order.
  std::vector<const Expr *> otherOperands(const OpRef &r) const {
    // A Functional's module is no operand of its function; a Sequential's
    // items take the chain's value only.
    if (r.step.functional || r.step.item >= 0)
      return r.step.others;
    // Defaulted arguments were omitted in the source: the row's default (or
    // None) stands for them, as in the ATen call the fallback makes.
    std::vector<const Expr *> others;
    for (const Expr *a : callOperands(r))
      if (a != r.chainIn && !isa<CXXDefaultArgExpr>(a->IgnoreImplicit()) &&
          !isa<CXXDefaultArgExpr>(a))
        others.push_back(a);
    return others;
  }

  /// A module call of a chain as a planned op: the module is an operand,
  /// its options and tensors are read from it inside the fused function
  /// (the KB_CXX_MODULE row's STATE says which). An error says why not.
  std::optional<std::string> planModule(const OpRef &r,
                                        CxxRewritePlan &p) const {
    const Step &st = r.step;
    StringRef impl = StringRef(st.moduleType).rsplit("::").second;
    if (impl.empty())
      impl = st.moduleType;
    const CxxModuleInfo *m = cxxModule(impl);
    const OpInfo *row = tableRow(st.op);
    if (!m || !row)
      return "module '" + st.moduleType + "' is not in the op-semantics table";
    // A stage module (LayerNorm) must hold every operand its schema has no
    // default for (a Softmax module's dim is not in the table's state: its
    // kernel would not know it).
    const bool stage = cxxStageOf(*row) != CxxStage::None;
    if (m->cuda.empty() && row->kind != OpKind::Elementwise &&
        row->kind != OpKind::Broadcast && !stage)
      return "'" + st.op + "' (module " + impl.str() +
             ") is not pointwise, nor a stage the C++ kernels take";
    if (stage && p.stage >= 0)
      return "'" + st.op + "' (module " + impl.str() +
             ") is a second reduction, norm or pooling after '" +
             p.ops[p.stage].op + "': one per chain";
    if (!st.others.empty())
      return "the call of module " + impl.str() + " passes more than its input";
    if (!st.moduleObj || !movableOperand(st.moduleObj))
      return "the module expression of '" + st.op +
             "' may have side effects: it is not moved";
    CxxPlanOp planned;
    planned.op = st.op;
    planned.overload = row->overload.str();
    planned.module = (int)p.operands.size();
    CxxOperand mod;
    mod.kind = CxxOperand::Module;
    std::string obj = st.moduleText.empty()
                          ? source(st.moduleObj->getSourceRange())
                          : st.moduleText;
    mod.text = st.moduleDeref ? "(*" + obj + ")" : obj;
    mod.type = st.moduleType;
    p.operands.push_back(mod);
    SmallVector<StringRef> state;
    m->state.split(state, ' ', -1, false);
    std::map<std::string, int> fromModule;
    for (StringRef n : state) {
      if (n == "eval") {
        planned.evalOnly = true;
        continue;
      }
      if (n == "inplace") {
        planned.inplaceOpt = true;
        continue;
      }
      CxxOperand o;
      o.owner = planned.module;
      o.kind = n.consume_front(".") ? CxxOperand::ModuleTensor
                                    : CxxOperand::ModuleOption;
      o.text = n.str();
      // A str option (gelu's approximate) is a compile-time choice of the
      // kernel: it must keep the schema default.
      const ArgSpec *spec = nullptr;
      for (const ArgSpec &arg : row->args)
        if (arg.name == n)
          spec = &arg;
      if (spec && spec->type == ArgType::IntList)
        o.kind = CxxOperand::ModuleIntList;
      if (spec)
        o.optionType = spec->type;
      // An optional option the kernel does not take (a pooling's
      // divisor_override) must be unset, or the module runs as written.
      if (spec && spec->optional && spec->defaultValue == "None" &&
          o.kind == CxxOperand::ModuleOption) {
        planned.pinned.push_back({n.str(), "c10::nullopt"});
        continue;
      }
      if (spec && spec->type == ArgType::Str) {
        planned.pinned.push_back({n.str(), spec->defaultValue});
        continue;
      }
      fromModule[n.str()] = (int)p.operands.size();
      planned.named.push_back({n.str(), (int)p.operands.size()});
      p.operands.push_back(o);
    }
    for (size_t k = 1; k < row->args.size(); ++k) {
      auto it = fromModule.find(row->args[k].name);
      planned.args.push_back(
          it == fromModule.end() || !m->cuda.empty() ? -1 : it->second);
      if (stage && it == fromModule.end() && !row->args[k].optional &&
          row->args[k].defaultValue.empty() &&
          row->args[k].type != ArgType::Bool)
        return "'" + st.op + "' (module " + impl.str() + ") keeps its '" +
               row->args[k].name +
               "' where the op-semantics table does not say";
    }
    if (stage) {
      p.stage = (int)p.ops.size();
      p.stageKind = cxxStageOf(*row);
    }
    p.ops.push_back(std::move(planned));
    return std::nullopt;
  }

  /// `{2, 3}` or `{-1}` where an int[] is taken: the braced list of
  /// integer literals as written; none for anything else.
  std::optional<std::string> intList(const Expr *e) const {
    const Expr *core = operandCore(e);
    if (const auto *il = dyn_cast<CXXStdInitializerListExpr>(core))
      core = il->getSubExpr()->IgnoreImplicit();
    if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(core))
      core = m->getSubExpr()->IgnoreImplicit();
    const auto *init = dyn_cast<InitListExpr>(core);
    if (!init)
      return std::nullopt;
    std::string text = "{";
    for (const Expr *x : init->inits()) {
      auto v = intLiteral(x);
      if (!v)
        return std::nullopt;
      text += (text.size() > 1 ? ", " : "") + std::to_string(*v);
    }
    return text + "}";
  }

  /// An integer literal, possibly negated.
  static std::optional<int64_t> intLiteral(const Expr *e) {
    e = operandCore(e);
    bool neg = false;
    if (const auto *u = dyn_cast<UnaryOperator>(e);
        u && u->getOpcode() == UO_Minus) {
      neg = true;
      e = operandCore(u->getSubExpr());
    }
    const auto *lit = dyn_cast<IntegerLiteral>(e);
    if (!lit)
      return std::nullopt;
    int64_t v = (int64_t)lit->getValue().getLimitedValue(INT64_MAX);
    return neg ? -v : v;
  }

  /// A stage op's int, bool and int[] operands take their C++ types
  /// (int64_t, bool, at::IntArrayRef), and must be literals: the kernel's
  /// test runs them with the values the source gives.
  static std::optional<std::string>
  typeStageOperands(const OpInfo &row, const CxxPlanOp &op, CxxRewritePlan &p) {
    for (size_t k = 0; k < op.args.size(); ++k) {
      if (op.args[k] < 0)
        continue;
      const ArgSpec &spec = row.args[k + 1];
      CxxOperand &o = p.operands[op.args[k]];
      // A layer norm's weight and bias are read along its rows, and its eps
      // is a number like any other.
      if (cxxStageOf(row) == CxxStage::LayerNorm &&
          ((spec.type == ArgType::Tensor && o.kind == CxxOperand::Tensor) ||
           (spec.type == ArgType::Float && o.kind == CxxOperand::Scalar)))
        continue;
      if (spec.type == ArgType::Tensor)
        return "'" + op.op + "' takes a tensor operand ('" + o.text + "')";
      StringRef text = StringRef(o.text).trim();
      int64_t v;
      bool isInt = !text.getAsInteger(10, v);
      if (spec.type == ArgType::Bool && (text == "true" || text == "false"))
        o.kind = CxxOperand::Bool;
      else if (spec.type == ArgType::Int && isInt)
        o.kind = CxxOperand::Int;
      else if (spec.type == ArgType::IntList &&
               (isInt || o.kind == CxxOperand::IntList))
        o.kind = CxxOperand::IntList;
      else
        return "operand '" + o.text + "' (" + spec.name + ") of '" + op.op +
               "' is not a literal of its type";
    }
    return std::nullopt;
  }

  /// Whether chain `a` runs on a local declared from its anchor's call
  /// (`auto y = conv->forward(x);`, a fresh tensor) that nothing reads
  /// outside the chain's statements: no parameter, reference, copy or
  /// later use can see what its in-place ops write.
  bool privateAnchorResult(const ActiveChain &a) const {
    const VarDecl *v = a.var;
    if (!v || a.anchorExpr || a.inputVar != v->getName() ||
        isa<ParmVarDecl>(v) || v->getType()->isReferenceType() ||
        !v->getInit() || a.stmts.empty())
      return false;
    auto init = stepOf(strip(v->getInit()));
    if (!init || !init->anchor)
      return false;
    unsigned b = offset(a.stmts.front().first->getBeginLoc()),
             e = endOf(a.stmts.back().first, true);
    auto it = refs.find(v);
    return it == refs.end() || llvm::all_of(it->second, [&](unsigned o) {
             return o >= b && o < e;
           });
  }

  /// What a chain through a stage may hold: no in-place ops (the stage's
  /// result has another shape), and after the stage only ops on its value
  /// and numbers (nothing of the input's shape is left to broadcast).
  static std::optional<std::string> checkStage(const CxxRewritePlan &p,
                                               bool inPlace) {
    if (p.stage < 0)
      return std::nullopt;
    const std::string &stageOp = p.ops[p.stage].op;
    if (inPlace)
      return "in-place ops and '" + stageOp + "' (another shape)";
    for (size_t k = p.stage + 1; k < p.ops.size(); ++k) {
      const CxxPlanOp &op = p.ops[k];
      if (op.module >= 0)
        return "a module call after '" + stageOp + "'";
      if (op.selfBack != 1)
        return "'" + op.op + "' reads a value from before '" + stageOp + "'";
      for (int idx : op.args)
        if (idx >= 0 && (p.operands[idx].kind == CxxOperand::Tensor ||
                         p.operands[idx].kind == CxxOperand::Value))
          return "'" + op.op + "' after '" + stageOp +
                 "' takes a tensor (only numbers there)";
    }
    return std::nullopt;
  }

  /// The declarations (locals, members) `s` names.
  static void namedDecls(const Stmt *s, std::set<const Decl *> &out) {
    if (!s)
      return;
    if (const auto *d = dyn_cast<DeclRefExpr>(s))
      out.insert(d->getDecl());
    if (const auto *m = dyn_cast<MemberExpr>(s))
      out.insert(m->getMemberDecl());
    if (const auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        out.insert(d);
    for (const Stmt *c : s->children())
      namedDecls(c, out);
  }

  /// Whether `s` reaches the object's state other than through named
  /// fields (`helper()`, `*this`): what it touches is then unknown.
  static bool usesThisOpaquely(const Stmt *s) {
    if (!s)
      return false;
    if (const auto *m = dyn_cast<MemberExpr>(s))
      if (isa<CXXThisExpr>(m->getBase()->IgnoreParenImpCasts()))
        return !isa<FieldDecl>(m->getMemberDecl());
    if (isa<CXXThisExpr>(s))
      return true;
    for (const Stmt *c : s->children())
      if (usesThisOpaquely(c))
        return true;
    return false;
  }

  /// Why the ops of the statements before a.stmts[lastRun] cannot move
  /// down to it past the statements between them; nullopt if they can. The
  /// statements between must be plain declarations or expressions that name
  /// nothing the moved statements name (the chain's locals, its operands,
  /// its modules), and the moved ops may read no tensor but the chain's own
  /// value and their modules' state (another tensor could alias one the
  /// statements between write).
  std::optional<std::string> deferrable(const Active &a, size_t lastRun) const {
    auto body = a.parent->body();
    auto firstGap = [&]() -> unsigned {
      for (size_t k = 1; k < a.stmts.size(); ++k)
        if (a.stmts[k - 1].second + 1 != a.stmts[k].second)
          return line(
              (*std::next(body.begin(), a.stmts[k - 1].second))->getBeginLoc());
      return 0;
    };
    if (a.anchorExpr)
      return formatv("other statements stand between its ops (line {0}) and "
                     "its anchor would move past them",
                     firstGap())
          .str();
    std::set<const Decl *> moved;
    for (size_t k = 0; k < a.stmts.size(); ++k) {
      const Stmt *s = a.stmts[k].first;
      if (k < lastRun) {
        namedDecls(s, moved);
        unsigned b = offset(s->getBeginLoc()), e = endOf(s, true);
        for (const OpRef &r : a.refs) {
          unsigned o = offset(r.expr->getBeginLoc());
          if (o < b || o >= e || r.step.module)
            continue;
          for (const Expr *x : otherOperands(r))
            if (isTensorType(x->getType()) ||
                isTensorType(operandCore(x)->getType()))
              return formatv("other statements stand between its ops (line "
                             "{0}) and '{1}' reads tensor '{2}' before them",
                             firstGap(), r.step.op, source(x->getSourceRange()))
                  .str();
        }
      }
      if (k == 0 || a.stmts[k - 1].second + 1 == a.stmts[k].second)
        continue;
      for (unsigned i = a.stmts[k - 1].second + 1; i < a.stmts[k].second; ++i) {
        const Stmt *g = *std::next(body.begin(), i - 1);
        auto blocked = [&](const std::string &why) {
          return formatv("other statements stand between its ops (line {0}): "
                         "{1}",
                         line(g->getBeginLoc()), why)
              .str();
        };
        if (!isa<DeclStmt, Expr, NullStmt>(g))
          return blocked("not a plain declaration or expression");
        std::set<const Decl *> named;
        namedDecls(g, named);
        for (const Decl *d : named)
          if (moved.count(d)) {
            const auto *nd = dyn_cast<NamedDecl>(d);
            return blocked("it names '" +
                           (nd ? nd->getNameAsString() : std::string("?")) +
                           "', which the chain's earlier ops use");
          }
        if (usesThisOpaquely(g))
          return blocked("it calls a member function");
      }
    }
    return std::nullopt;
  }

  /// The chain's last run of adjacent statements as a chain of its own,
  /// starting from the local the statement before it assigned.
  std::optional<Active> lastRunOnly(const Active &a, size_t lastRun) const {
    const VarDecl *from = nullptr;
    const Expr *value = nullptr;
    if (!assignment(a.stmts[lastRun - 1].first, from, value) || !from)
      return std::nullopt;
    Active t;
    t.parent = a.parent;
    t.var = a.var;
    t.inputVar = from->getName().str();
    t.chain = a.chain;
    t.chain.ops.clear();
    unsigned b = offset(a.stmts[lastRun].first->getBeginLoc());
    for (size_t k = 0; k < a.refs.size(); ++k)
      if (offset(a.refs[k].expr->getBeginLoc()) >= b) {
        t.refs.push_back(a.refs[k]);
        t.chain.ops.push_back(a.chain.ops[k]);
      }
    t.stmts.assign(a.stmts.begin() + lastRun, a.stmts.end());
    return t;
  }

  /// A statement with its line when nothing else is on it: its indentation,
  /// and a trailing comment and the newline.
  std::pair<unsigned, unsigned> wholeLines(const Stmt *s) const {
    unsigned b = offset(s->getBeginLoc()), e = endOf(s, true);
    StringRef code =
        sm.getBufferData(sm.getFileID(sm.getExpansionLoc(s->getBeginLoc())));
    unsigned lb = b;
    while (lb > 0 && (code[lb - 1] == ' ' || code[lb - 1] == '\t'))
      --lb;
    if (lb > 0 && code[lb - 1] != '\n')
      return {b, e};
    unsigned le = e;
    while (le < code.size() && (code[le] == ' ' || code[le] == '\t'))
      ++le;
    if (code.substr(le).starts_with("//"))
      le = code.find('\n', le) == StringRef::npos ? code.size()
                                                  : code.find('\n', le);
    if (le < code.size() && code[le] == '\n')
      return {lb, le + 1};
    return {b, e};
  }

  /// A functional options object built in place
  /// (`F::LeakyReLUFuncOptions().negative_slope(0.2)`) as (option, value)
  /// pairs in `out`. nullopt: `e` is no options object; an empty string:
  /// it is one and `out` has its options; otherwise why it is not usable.
  static std::optional<std::string>
  funcOptions(const Expr *e,
              std::vector<std::pair<std::string, const Expr *>> &out) {
    // F::LeakyReLUFuncOptions is an alias of nn::LeakyReLUOptions.
    const auto *rd =
        operandCore(e)->getType().getNonReferenceType()->getAsCXXRecordDecl();
    if (!rd || !StringRef(rd->getName()).ends_with("Options") ||
        !StringRef(rd->getQualifiedNameAsString()).starts_with("torch::nn::"))
      return std::nullopt;
    e = operandCore(e);
    while (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
      const auto *md = mc->getMethodDecl();
      if (!md || mc->getNumArgs() != 1)
        return std::string("an options call that is not a setter");
      out.insert(out.begin(), {md->getNameAsString(), mc->getArg(0)});
      e = operandCore(mc->getImplicitObjectArgument());
    }
    const auto *c = dyn_cast<CXXConstructExpr>(e);
    if (!c)
      return std::string("an options object not built in place");
    for (const Expr *arg : c->arguments())
      if (!isa<CXXDefaultArgExpr>(arg))
        return std::string("an options object constructed with arguments");
    return std::string();
  }

  /// How the chain is replaced by one call of a fused kernel.
  CxxRewritePlan plan(const Active &a) const {
    // A Sequential's texts hold whether or not this chain is rewritten:
    // the others of its call still need them.
    CxxRewritePlan seq;
    seq.nested = a.nested;
    seq.unrolled = a.unrolled;
    seq.wrapOpen = a.wrapOpen;
    seq.wrapClose = a.wrapClose;
    if (a.seqExpr) {
      seq.seqBegin = offset(a.seqExpr->getBeginLoc());
      seq.seqEnd = endOf(a.seqExpr, false);
      seq.seqUnrolled = a.seqUnrolled;
    }
    CxxRewritePlan p = seq;
    auto fail = [&](std::string why) {
      p = seq;
      p.whyNot = std::move(why);
      return p;
    };
    if (a.feedsAnchor)
      return fail("its last ops are inside the operand of the next anchor");
    if (a.stmts.empty() || a.refs.size() != a.chain.ops.size())
      return fail("the chain's statements could not be located");
    // Statements between the chain's own ones: its earlier ops move to the
    // last run of adjacent chain statements when that cannot be observed.
    size_t lastRun = a.stmts.size() - 1;
    while (lastRun > 0 &&
           a.stmts[lastRun - 1].second + 1 == a.stmts[lastRun].second)
      --lastRun;
    if (lastRun > 0) {
      if (auto why = deferrable(a, lastRun)) {
        // Its ops after the statements between may still be a chain of
        // their own, from the local they read.
        if (auto tail = lastRunOnly(a, lastRun)) {
          CxxRewritePlan t = plan(*tail);
          if (t.whyNot.empty()) {
            t.partial =
                formatv("only its ops from line {0} on: {1}",
                        line(a.stmts[lastRun].first->getBeginLoc()), *why);
            return t;
          }
        }
        return fail(*why);
      }
      for (size_t k = 0; k < lastRun; ++k)
        p.removals.push_back(wholeLines(a.stmts[k].first));
    }
    // One pointwise op makes one pass in ATen too; the generic kernel would
    // not be faster (measured slower per pass, bench/NOTES.md).
    if (a.refs.size() == 1)
      return fail("a single op: nothing to fuse (ATen's kernel is one pass "
                  "as well)");
    bool inPlace = a.refs.front().step.inPlace;
    // In-place ops then out-of-place ones (`y.relu_(); return y.mean(..);`)
    // on a local that only holds the anchor's fresh result: nothing else
    // sees the writes, so the chain computes them out of place.
    bool dropInPlace =
        inPlace &&
        llvm::any_of(a.refs, [](const OpRef &r) { return !r.step.inPlace; }) &&
        privateAnchorResult(a);
    if (dropInPlace)
      inPlace = false;
    for (const OpRef &r : a.refs) {
      std::string op = r.step.op;
      const OpInfo *row = tableRow(op);
      if (r.step.module) {
        if (inPlace)
          return fail("it mixes in-place ops on a variable with a module "
                      "call");
        if (auto err = planModule(r, p))
          return fail(*err);
        continue;
      }
      bool isStage = row && cxxStageOf(*row) != CxxStage::None;
      if (!row || (row->kind != OpKind::Elementwise &&
                   row->kind != OpKind::Broadcast && !isStage))
        return fail("'" + op +
                    "' is not pointwise, nor a reduction, softmax, 2-d "
                    "pooling or layer norm the C++ kernels take");
      if (isStage && p.stage >= 0)
        return fail("'" + op + "' is a second reduction or pooling after '" +
                    p.ops[p.stage].op + "': one per chain");
      if (inPlace && !r.step.inPlace)
        return fail("it mixes in-place ops on a variable with out-of-place "
                    "ops, and the variable is not only the anchor's result "
                    "(read elsewhere, or a parameter)");
      // The chain's value is the op's `self`, or a later tensor operand of a
      // pointwise op (`b - x`, `torch::addcmul(beta, alpha, x)`): the plan
      // keeps its schema position. add and mul take it on the right as
      // their self (x + y == y + x and x * y == y * x exactly in IEEE).
      unsigned chainArg = 0;
      if (std::vector<const Expr *> all = callOperands(r);
          !all.empty() && all.front() != r.chainIn) {
        const auto *call = dyn_cast<CallExpr>(r.expr);
        auto at = llvm::find(all, r.chainIn);
        bool commuted = at == all.begin() + 1 &&
                        (isa<CXXOperatorCallExpr>(r.expr)
                             ? op == "add" || op == "mul"
                             : call && !isa<CXXMemberCallExpr>(r.expr) &&
                                   commutesWithSelf(r.step, call));
        if (at == all.end())
          return fail("the chain's value is no operand of '" + op + "'");
        if (!commuted) {
          if (isStage || r.step.inPlace)
            return fail("the chain's value is not the first operand of '" + op +
                        "'" +
                        (isStage ? " (a reduction or pooling takes it first)"
                                 : " (an in-place op writes its first)"));
          chainArg = (unsigned)(at - all.begin());
        }
      }
      CxxPlanOp planned;
      planned.chainArg = chainArg;
      planned.op = op;
      planned.inPlace = r.step.inPlace && !dropInPlace;
      planned.selfBack = r.selfBack;
      if (r.value && !dropInPlace &&
          llvm::any_of(a.refs, [](const OpRef &x) { return x.step.inPlace; }))
        return fail("the chain's value is read twice by '" + op +
                    "' and the chain has in-place ops");
      std::vector<CxxOperand::Kind> kinds;
      std::vector<int> indices;
      // Operands set through a functional options object, by schema name.
      std::map<std::string, std::pair<CxxOperand::Kind, int>> named;
      std::vector<std::pair<std::string, const Expr *>> values;
      for (const Expr *e : otherOperands(r)) {
        const Expr *core = operandCore(e);
        std::vector<std::pair<std::string, const Expr *>> opts;
        if (auto err = funcOptions(e, opts)) {
          if (!err->empty())
            return fail(*err + " (in '" + source(e->getSourceRange()) + "')");
          for (auto &[name, value] : opts) {
            if (name == "inplace") {
              const auto *b =
                  dyn_cast<CXXBoolLiteralExpr>(value->IgnoreParenImpCasts());
              if (!b)
                return fail("'inplace' of '" + op + "' is not a literal");
              // In place on a temporary of the chain is unobservable; on
              // the chain's input variable it is not.
              if (b->getValue() && &r == &a.refs.front() && !a.anchorExpr)
                return fail("'" + op +
                            "' with inplace(true) writes the chain's input");
              continue;
            }
            const Expr *vc = operandCore(value);
            // std::string("tanh") (with its defaulted allocator): the literal.
            if (const auto *c = dyn_cast<CXXConstructExpr>(vc);
                c && c->getNumArgs() >= 1 &&
                llvm::all_of(
                    llvm::drop_begin(c->arguments()),
                    [](const Expr *x) { return isa<CXXDefaultArgExpr>(x); }))
              if (const auto *lit = dyn_cast<StringLiteral>(
                      c->getArg(0)->IgnoreParenImpCasts()))
                vc = lit;
            CxxOperand o;
            if (isa<StringLiteral>(vc))
              o.kind = CxxOperand::String;
            else if (vc->getType()->isArithmeticType())
              o.kind = CxxOperand::Scalar;
            else
              return fail("option '" + name + "' of '" + op +
                          "' is not a number or a string literal");
            if (!isa<StringLiteral>(vc) && !movableOperand(value))
              return fail("option '" + name + "' of '" + op +
                          "' may have side effects: it is not moved");
            o.text = source(vc->getSourceRange());
            named[name] = {o.kind, (int)p.operands.size()};
            p.operands.push_back(std::move(o));
          }
          continue;
        }
        if (e == r.value) {
          CxxOperand o;
          o.kind = CxxOperand::Value;
          o.back = r.valueBack;
          o.text = source(e->getSourceRange());
          kinds.push_back(CxxOperand::Tensor); // matched as a tensor operand
          indices.push_back((int)p.operands.size());
          p.operands.push_back(std::move(o));
          continue;
        }
        CxxOperand o;
        std::optional<std::string> list = isStage ? intList(e) : std::nullopt;
        if (isTensorType(e->getType()) || isTensorType(core->getType()))
          o.kind = CxxOperand::Tensor;
        else if (isa<StringLiteral>(core))
          o.kind = CxxOperand::String;
        else if (core->getType()->isArithmeticType())
          o.kind = CxxOperand::Scalar;
        else if (list)
          o.kind = CxxOperand::IntList;
        else
          return fail("operand '" + source(e->getSourceRange()) + "' of '" +
                      op + "' is not a tensor, a number or a string literal" +
                      (isStage ? " (dims and window sizes must be integer "
                                 "literals or braced lists of them)"
                               : ""));
        if (!list && !movableOperand(e))
          return fail("operand '" + source(e->getSourceRange()) +
                      "' may have side effects: it is not moved");
        o.text = list ? *list : source(core->getSourceRange());
        kinds.push_back(o.kind);
        indices.push_back((int)p.operands.size());
        p.operands.push_back(std::move(o));
      }
      // `1 - x`: ATen's operator fills a tensor with the number and
      // subtracts x from it, float(1) - x in one rounding, as rsub(x, 1)
      // computes it. Other ops with a number first (`2 / x`) have no row.
      if (op == "sub" && chainArg == 1 && isa<CXXOperatorCallExpr>(r.expr) &&
          kinds.size() == 1 && kinds[0] == CxxOperand::Scalar) {
        op = planned.op = "rsub";
        chainArg = planned.chainArg = 0;
      }
      for (size_t j = 0; j < chainArg && j < kinds.size(); ++j)
        if (kinds[j] != CxxOperand::Tensor)
          return fail("the chain's value is the right operand of '" + op +
                      "' after a number: no row of the op-semantics table "
                      "takes a number first");
      const OpInfo *chosen = nullptr;
      for (const OpInfo *cand : lookupOverloads(op)) {
        if (cand->args.size() <= chainArg ||
            cand->args.size() - 1 < kinds.size())
          continue;
        // The chain's value is a tensor wherever the call passes it.
        bool ok =
            chainArg == 0 || (cand->args[chainArg].type == ArgType::Tensor &&
                              cand->kind != OpKind::Reduction);
        for (size_t a = 0, j = 0; a < cand->args.size() && ok; ++a) {
          if (a == chainArg)
            continue;
          const ArgSpec &spec = cand->args[a];
          size_t k = ++j; // kinds[k - 1] is this operand's
          if (k - 1 >= kinds.size()) {
            auto it = named.find(spec.name);
            if (it == named.end())
              ok = spec.optional || !spec.defaultValue.empty();
            else if (it->second.first == CxxOperand::String)
              ok = spec.type == ArgType::Str;
            else
              ok = spec.type == ArgType::Scalar || spec.type == ArgType::Int ||
                   spec.type == ArgType::Float;
            continue;
          }
          switch (kinds[k - 1]) {
          case CxxOperand::Tensor:
            ok = spec.type == ArgType::Tensor;
            break;
          case CxxOperand::String:
            ok = spec.type == ArgType::Str;
            break;
          case CxxOperand::Scalar:
            // One int where int[] is taken: at::IntArrayRef of one element
            // (a pool's kernel_size 2 is {2, 2}).
            ok = spec.type == ArgType::Scalar || spec.type == ArgType::Int ||
                 spec.type == ArgType::Float || spec.type == ArgType::Bool ||
                 (isStage && spec.type == ArgType::IntList);
            break;
          case CxxOperand::IntList:
            ok = spec.type == ArgType::IntList;
            break;
          case CxxOperand::Value:  // pushed as Tensor above
          case CxxOperand::Module: // only module calls have these
          case CxxOperand::ModuleOption:
          case CxxOperand::ModuleTensor:
          case CxxOperand::Int: // typed below, once a row is chosen
          case CxxOperand::Bool:
          case CxxOperand::ModuleIntList:
            ok = false;
            break;
          }
        }
        for (const auto &n : named)
          ok = ok && llvm::any_of(cand->args, [&](const ArgSpec &spec) {
                 return spec.name == n.first;
               });
        if (ok) {
          chosen = cand;
          break;
        }
      }
      if (!chosen)
        return fail("no row of '" + op +
                    "' in the op-semantics table takes "
                    "these operands");
      planned.overload = chosen->overload.str();
      for (size_t a = 0, j = 0; a < chosen->args.size(); ++a) {
        if (a == chainArg)
          continue;
        auto it = named.find(chosen->args[a].name);
        planned.args.push_back(j < indices.size()  ? indices[j]
                               : it != named.end() ? it->second.second
                                                   : -1);
        ++j;
      }
      if (isStage) {
        p.stage = (int)p.ops.size();
        p.stageKind = cxxStageOf(*chosen);
        if (p.stageKind == CxxStage::None)
          return fail("'" + op + "." + chosen->overload.str() +
                      "' is not a reduction the C++ kernels take");
        if (auto err = typeStageOperands(*chosen, planned, p))
          return fail(*err);
      }
      // The fallback calls the ATen op positionally: an operand left out
      // before one that is given takes the schema's default there.
      for (size_t k = 0; k + 1 < planned.args.size(); ++k)
        if (planned.args[k] < 0 &&
            llvm::any_of(ArrayRef<int>(planned.args).drop_front(k + 1),
                         [](int i) { return i >= 0; }) &&
            chosen->args[planned.schemaPos(k)].defaultValue.empty())
          return fail("operand '" + chosen->args[planned.schemaPos(k)].name +
                      "' of '" + op +
                      "' has no default to pass before the options given");
      p.ops.push_back(std::move(planned));
    }
    if (auto err = checkStage(p, inPlace))
      return fail(*err);
    p.writesInput = inPlace;
    p.inputReadsItems = a.anchorExpr && !a.anchorText.empty();
    if (a.anchorExpr)
      p.input = a.anchorText.empty() ? source(a.anchorExpr->getSourceRange())
                                     : a.anchorText;
    else if (!a.inputVar.empty())
      p.input = a.inputVar;
    else
      return fail("the chain's input could not be located");
    if (a.nested) // its call stands in the owner's text (cxxSegmentMark)
      return p;
    if (inPlace && a.anchorExpr)
      return fail("an in-place op on the anchor's temporary result");

    const Stmt *first = a.stmts[lastRun].first, *last = a.stmts.back().first;
    if (a.stmts.size() == 1) {
      // One statement: only the outermost op's expression changes.
      const Expr *e = a.refs.back().expr;
      p.begin = offset(e->getBeginLoc());
      p.end = endOf(e, false);
      return p;
    }
    p.begin = offset(first->getBeginLoc());
    p.end = endOf(last, true);
    // Intermediate locals declared in the replaced statements disappear.
    const VarDecl *target = a.var;
    const DeclStmt *targetDecl = nullptr;
    for (auto [st, idx] : a.stmts)
      if (const auto *ds = dyn_cast<DeclStmt>(st)) {
        const auto *vd = cast<VarDecl>(ds->getSingleDecl());
        if (vd == target) {
          targetDecl = ds;
          continue;
        }
        if (auto it = refs.find(vd); it != refs.end())
          for (unsigned o : it->second)
            if (o >= p.end)
              return fail("'" + vd->getName().str() +
                          "' is used after the chain");
      }
    const VarDecl *t2 = nullptr;
    const Expr *value = nullptr;
    const auto *ret = dyn_cast<ReturnStmt>(last);
    if (ret) {
      value = ret->getRetValue();
      if (targetDecl)
        if (auto it = refs.find(target); it != refs.end())
          for (unsigned o : it->second)
            if (o >= p.end)
              return fail("'" + target->getName().str() +
                          "' is used after the chain");
    } else if (!assignment(last, t2, value)) {
      return fail("its last statement is not an assignment");
    }
    const Expr *lastOp = a.refs.back().expr;
    if (strip(value) != lastOp && value != lastOp)
      return fail("its last statement does more than the last op");
    if (targetDecl && targetDecl != last && !ret) {
      const Expr *init = cast<VarDecl>(targetDecl->getSingleDecl())->getInit();
      p.prefix = std::string(
          sm.getCharacterData(sm.getExpansionLoc(targetDecl->getBeginLoc())),
          offset(init->getBeginLoc()) - offset(targetDecl->getBeginLoc()));
      p.suffix = ";";
    } else if (value == lastOp || strip(value) == lastOp) {
      unsigned vb = offset(lastOp->getBeginLoc()), ve = endOf(lastOp, false);
      unsigned sb = offset(last->getBeginLoc());
      const char *base =
          sm.getCharacterData(sm.getExpansionLoc(last->getBeginLoc()));
      p.prefix = std::string(base, vb - sb);
      p.suffix = std::string(base + (ve - sb), p.end - ve);
      if (p.suffix.empty() || p.suffix.back() != ';')
        p.suffix += ";";
    }
    return p;
  }

private:
  const LocalRefs &refs;
};

} // namespace

CxxRewritePlan planRewrite(ASTContext &ctx, const LocalRefs &refs,
                           const ActiveChain &a) {
  return Planner(ctx, refs).plan(a);
}

} // namespace kb::cxxchains
