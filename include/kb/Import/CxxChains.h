//===- CxxChains.h - Fusable chains in libtorch C++ code ---------*- C++
//-*-===//
//
// The Clang half of the frontend (issue 7): in the functions of a libtorch
// C++ translation unit, find anchors (torch::conv2d, torch::matmul,
// torch::linear, at::addmm, module calls such as `conv1->forward(x)` or
// `fc(x)`) and the memory-bound chain after each: functional calls
// (torch::relu, torch::nn::functional::gelu), Tensor methods (.relu(),
// .add(...), in-place relu_), operators and compound assignments with
// tensors and scalars, and calls of activation/norm modules. A chain
// follows its value through local variables across statements of one block
// (`x = f(x)` reassignments, `auto y = g(x)` when x is not used again) and
// stops at anything that would change meaning: another use of the value, an
// alias of the variable, a statement in a macro, an op the table does not
// list as fusable.
//
// What an op is comes only from the op-semantics table (OpSemantics.def,
// including its KB_CXX_MODULE rows); nothing here names an activation.
//
//===----------------------------------------------------------------------===//
#ifndef KB_IMPORT_CXXCHAINS_H
#define KB_IMPORT_CXXCHAINS_H

#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/STLExtras.h"

#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
} // namespace clang

namespace kb {

struct CxxOpSite {
  std::string op;       // aten name ("relu", "add", "conv2d")
  bool inPlace = false; // relu_, +=
  std::string text;     // the source of the call
  unsigned line = 0, column = 0;
};

/// An operand of a fused chain other than the chain's value, evaluated once
/// where the fused call stands.
struct CxxOperand {
  /// Module: a torch::nn module whose forward the chain calls (passed by
  /// reference; `type` is its implementation class). ModuleOption and
  /// ModuleTensor are read from module `owner` inside the fused function
  /// (`options.<text>()`, the member tensor `<text>` per channel), not
  /// passed at the call.
  /// Value: the chain's own value read a second time (`x * torch::sigmoid(x)`):
  /// the result of the op `back` places before the one it feeds, or the
  /// chain's input when there is none.
  /// Int, Bool, IntList: an integer literal, a bool literal or a braced list
  /// of integer literals where a stage op's schema takes int, bool or int[]
  /// (softmax's dim, mean's dims and keepdim, a pool's kernel_size); the
  /// fused function takes them as int64_t, bool and at::IntArrayRef.
  /// ModuleIntList: an int[] option of module `owner` read at run time (a
  /// LayerNorm's normalized_shape), as at::IntArrayRef.
  enum Kind {
    Tensor,
    Scalar,
    String,
    Module,
    ModuleOption,
    ModuleTensor,
    Value,
    Int,
    Bool,
    IntList,
    ModuleIntList
  };
  Kind kind = Tensor;
  std::string text; // its source ("bias", "this->scale", "0.5", "\"tanh\"")
  std::string type; // Module: "torch::nn::BatchNorm2dImpl"
  int owner = -1;   // ModuleOption, ModuleTensor: the Module operand
  /// ModuleOption: the schema type it feeds (Int and Bool options of a
  /// stage module, a Softmax's dim, are host values, not kernel numbers).
  ArgType optionType = ArgType::Scalar;
  int back = 0;     // Value: how many ops back from the op it feeds
};

/// One op of a rewritable chain against its op-semantics row.
struct CxxPlanOp {
  std::string op, overload;
  bool inPlace = false;
  /// Per schema operand other than the chain's (`chainArg`), in schema
  /// order: an index into the plan's operands, or -1 where the call
  /// omitted it (the row's default, or None).
  std::vector<int> args;
  /// The schema operand the chain's value is: 0 (`self`) but where the
  /// call takes it later (`torch::sub(b, x)`, `b / x`, `torch::addcmul(
  /// beta, alpha, x)`); only pointwise ops take it there.
  unsigned chainArg = 0;
  /// The schema position of args[k].
  unsigned schemaPos(size_t k) const {
    return k < chainArg ? (unsigned)k : (unsigned)k + 1;
  }
  /// The index into `args` of schema operand `pos` (not chainArg); -1
  /// past its end.
  int argAt(unsigned pos) const {
    size_t k = pos < chainArg ? pos : pos - 1;
    return k < args.size() ? args[k] : -1;
  }
  /// A module call: its Module operand, and the operands its row's CUDA
  /// names (by STATE name) when the module row replaces the expression.
  int module = -1;
  std::vector<std::pair<std::string, int>> named;
  /// Options that must keep their value for the kernel to be right
  /// ("approximate" == "none"): name -> C++ value.
  std::vector<std::pair<std::string, std::string>> pinned;
  /// Its `self` is the result of the op this many places before it (or the
  /// chain's input): 1 but for `x * f(x)`, where f's ops come between.
  int selfBack = 1;
  bool evalOnly = false;   // the module's fused form needs !is_training()
  bool inplaceOpt = false; // the module has an `inplace` option
};

/// What a chain's one stage op computes: a reduction over dims, a softmax
/// over a dim, a 2-d pooling, or a layer norm over the trailing dims
/// (docs/cxx.md, "Reductions, softmax, pooling and layer norm").
enum class CxxStage {
  None,
  Sum,
  Mean,
  Amax,
  Amin,
  Softmax,
  LogSoftmax,
  MaxPool2d,
  AvgPool2d,
  AdaptiveAvgPool2d,
  LayerNorm
};
/// The stage an op-table row computes in a C++ chain, None for the rows a
/// C++ chain cannot take as its stage (every pointwise row among them).
CxxStage cxxStageOf(const OpInfo &row);

/// The op-table row a planned op was matched to (its name and overload).
inline const OpInfo *rowOf(const CxxPlanOp &op) {
  for (const OpInfo *row : lookupOverloads(op.op))
    if (row->overload == op.overload)
      return row;
  return nullptr;
}

/// How a chain is replaced by one call; `whyNot` says why it is not.
struct CxxRewritePlan {
  std::string whyNot;
  std::string partial; // set when only the chain's last ops are replaced
  unsigned begin = 0, end = 0; // the replaced bytes [begin, end) of `file`
  std::string prefix, suffix;  // source kept around the call ("auto y = ", ";")
  /// Earlier statements of the chain, removed: their ops moved down to the
  /// call past statements that cannot observe them (byte ranges of `file`).
  std::vector<std::pair<unsigned, unsigned>> removals;
  std::string input;        // source of the chain's input tensor
  /// The input calls items of a torch::nn::Sequential (kb_rewrite::kb_item).
  bool inputReadsItems = false;
  /// One Sequential call holds several chains (`{Conv, BN, ReLU, Conv, BN,
  /// ReLU}`): one between two of its anchors is `nested`, with no edit of
  /// its own; the chain that owns the call's edit reads it through a
  /// placeholder in `input` (cxxSegmentMark), filled with its fused call or,
  /// when that is not used, with `unrolled` (its items called one by one).
  bool nested = false;
  std::string unrolled;
  /// Around this chain's call: the items after it (a last segment).
  std::string wrapOpen, wrapClose;
  /// When this chain's input reads nested chains and it is not rewritten
  /// itself: the Sequential call [seqBegin, seqEnd) becomes `seqUnrolled`,
  /// every item called on its own but the nested chains' calls.
  unsigned seqBegin = 0, seqEnd = 0;
  std::string seqUnrolled;
  bool writesInput = false; // in-place ops on a variable: the call writes it
  std::vector<CxxOperand> operands;
  std::vector<CxxPlanOp> ops;
  /// The op of `ops` that is a stage (cxxStageOf), -1 for a pointwise
  /// chain: the ops before it run per element of its input, the ops after
  /// it (scalar operands only) per element of its result.
  int stage = -1;
  CxxStage stageKind = CxxStage::None;
};

/// The placeholder of chain `index` (of CxxAnalysis::chains) in another
/// chain's texts: "\x01<index>\x01", never in C++ source.
inline std::string cxxSegmentMark(size_t index) {
  return "\x01" + std::to_string(index) + "\x01";
}

/// A tensor operand only the plan's stage reads, along its rows (a layer
/// norm's weight and bias), not per element of the chain's input.
inline bool isStageTensor(const CxxRewritePlan &p, size_t idx) {
  const CxxOperand &o = p.operands[idx];
  return p.stageKind == CxxStage::LayerNorm &&
         (o.kind == CxxOperand::Tensor || o.kind == CxxOperand::ModuleTensor) &&
         llvm::is_contained(p.ops[p.stage].args, (int)idx);
}

struct CxxChain {
  std::string file, function;
  CxxOpSite anchor;
  std::vector<CxxOpSite> ops; // in the order they apply
  std::string variable;       // the local that holds the result ("" if none)
  std::string end;            // why the chain stops here
  CxxRewritePlan plan;
  /// "fusable epilogue after conv2d: relu -> add (2 ops)"
  std::string summary() const;
};

/// A place the frontend looked at and left alone, with the reason.
struct CxxSkip {
  std::string file, function;
  unsigned line = 0;
  std::string reason;
};

struct CxxAnalysis {
  std::vector<CxxChain> chains;
  std::vector<CxxSkip> skipped;
};

/// Appends the chains (and skips) of one function definition.
void analyzeCxxFunction(clang::ASTContext &ctx, const clang::FunctionDecl &fn,
                        CxxAnalysis &out);

} // namespace kb

#endif // KB_IMPORT_CXXCHAINS_H
