//===- OpSemantics.h - Queries over the op-semantics table ------*- C++ -*-===//
//
// Typed view of OpSemantics.def. Everything that needs to know what an aten op
// is asks here.
//
//===----------------------------------------------------------------------===//
#ifndef KB_IR_OPSEMANTICS_H
#define KB_IR_OPSEMANTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace kb {

/// c10::ScalarType's code for float32, as a traced `ScalarType` operand
/// (`dtype=torch.float32`) holds it.
constexpr int64_t kFloat32ScalarType = 6;

/// Pattern kinds, ordered as in TVM's FuseOps: lower kinds fuse into higher.
enum class OpKind {
  Elementwise,
  Broadcast,
  Injective,
  Reduction,
  Anchor,
  Host,
  Opaque,
};

/// Finer behaviour that passes and code generation key on.
enum class OpStyle {
  None,
  Conv,
  Gemm,
  Attention,
  Reduce,
  ArgReduce,
  Softmax,
  Norm,
  Pool,
  View,
  Identity,
  Copy,
  Cast,
  Dropout,
  Composite, // computed by ATen from other rows' ops (--kb-decompose)
};

/// What kind of value a schema operand accepts.
enum class ArgType {
  Tensor,
  TensorList,
  Scalar, // int, float or bool
  Int,
  Float,
  Bool,
  IntList,
  FloatList,
  Str,
  ScalarType,
  MemoryFormat,
  Layout,
  Device,
  Generator,
  Any,
};

struct ArgSpec {
  std::string name;
  ArgType type;
  bool optional; // "T?": also accepts None
  /// ATen's default when a C++ call omits the operand ("1", "\"none\"");
  /// empty when it has none (an omitted optional operand is None).
  std::string defaultValue = {};
};

/// What a reduction-like row computes: the CUDA column of a Reduction row
/// names it ("sum", "log_softmax", "max_pool"), parsed once when the table
/// is built. None for every other row.
enum class Recipe {
  None,
  AdaptiveAvgPool,
  AdaptiveMaxPool,
  Amax,
  Amin,
  Argmax,
  Argmin,
  AvgPool,
  BatchNorm,
  Cosine,
  GroupNorm,
  InstanceNorm,
  LayerNorm,
  LogSoftmax,
  Logsumexp,
  MaxPool,
  Mean,
  Pnorm,
  Prod,
  SafeSoftmax,
  Softmax,
  Std,
  Sum,
  Var,
};
/// The recipe as the table spells it ("" for None).
llvm::StringRef recipeName(Recipe r);
/// layer_norm, group_norm, instance_norm, batch_norm.
bool isNormRecipe(Recipe r);
/// softmax, log_softmax and safe_softmax: a result per element of the row.
bool isSoftmaxRecipe(Recipe r);

/// What an Injective row's `cuda` column names: the index map the code
/// generator applies inside a region.
enum class IndexMap {
  None,
  /// "permute": the input read at the permuted coordinates.
  Permute,
  /// "flat": element i of the result (row-major) is element i of the
  /// input, whatever the input's strides (view, reshape, flatten, ...).
  Flat,
  /// "roll": each rolled coordinate c reads (c - shift) mod n.
  Roll,
  /// "slice": coordinate c of one dim reads start + c * step.
  Slice,
  /// "select": one dim held at an index (the result drops it).
  Select,
  /// "pad": a constant outside the input, the input shifted inside.
  Pad,
};

struct OpInfo {
  llvm::StringRef name;     // aten name without "aten::"
  llvm::StringRef overload; // "" for the default overload
  OpKind kind;
  OpStyle style;
  llvm::StringRef schema;
  llvm::StringRef cuda;
  llvm::StringRef aten;
  llvm::SmallVector<ArgSpec, 8> args;
  Recipe recipe = Recipe::None; // Reduction rows: what `cuda` names
  IndexMap indexMap = IndexMap::None; // Injective rows: what `cuda` names

  /// Index of the schema operand called `argName`, if any.
  std::optional<unsigned> argIndex(llvm::StringRef argName) const;
  std::string qualifiedName() const; // "aten::add.Tensor"
};

/// The kind of an actual operand, as seen by overload resolution.
enum class ValueClass {
  Tensor,
  TensorList,
  Int,
  Float,
  Bool,
  Number,
  IntList,
  FloatList,
  List,
  Str,
  None,
  Device,
  Other
};

/// All rows of the table, in table order.
llvm::ArrayRef<OpInfo> allOps();

/// Every row named `name` (no "aten::" prefix, no trailing '_').
llvm::SmallVector<const OpInfo *, 4> lookupOverloads(llvm::StringRef name);

/// Picks the overload whose schema accepts the operands; nullptr if none.
const OpInfo *resolveOverload(llvm::StringRef name,
                              llvm::ArrayRef<ValueClass> operands);

/// Splits "aten::relu_" into ("relu", inplace=true). Dunder names such as
/// "__and__" are never in-place.
std::pair<llvm::StringRef, bool> stripInPlace(llvm::StringRef atenName);

/// A KB_CXX_MODULE row (see OpSemantics.def).
struct CxxModuleInfo {
  llvm::StringRef impl, op;
  llvm::StringRef state; // where operands live in the module
  llvm::StringRef cuda;  // "" = the op row's expression
};

/// The aten op a libtorch module computes, from its implementation class
/// ("Conv2dImpl" -> "conv2d"); "" when the table does not list it.
llvm::StringRef cxxModuleOp(llvm::StringRef implClass);
/// The row of an implementation class; nullptr when the table lacks it.
const CxxModuleInfo *cxxModule(llvm::StringRef implClass);
/// Every KB_CXX_MODULE row of the table.
llvm::ArrayRef<CxxModuleInfo> cxxModules();

/// A KB_LIB_EPILOGUE row (see OpSemantics.def).
struct LibEpilogueInfo {
  llvm::StringRef anchor, op; // aten names without "aten::"
  llvm::StringRef when;       // conditions on the traced operands
  llvm::StringRef call;       // Python call over {anchor operand}
  llvm::StringRef library;    // what runs it
};
/// Every KB_LIB_EPILOGUE row of the table.
llvm::ArrayRef<LibEpilogueInfo> libraryEpilogues();

/// A KB_STEP_OP row: an op whose result jumps (see OpSemantics.def).
struct StepOpInfo {
  llvm::StringRef name, overload, why;
  /// KB_STEP_OP's RESULT: the one result that steps, or -1 for all.
  int result = -1;
};
llvm::ArrayRef<StepOpInfo> stepOps();
/// Whether aten op `name` (with or without "aten::" and a trailing "_") in
/// overload `overload` ("" = default; unknown overloads match "*" rows
/// only) is a step op.
bool isStepOp(llvm::StringRef name, llvm::StringRef overload);
/// The KB_STEP_OP row of `name` in `overload` (as isStepOp matches), or
/// nullptr.
const StepOpInfo *findStepOp(llvm::StringRef name, llvm::StringRef overload);
/// A KB_SINGULAR_OP row: an op whose slope is unbounded at 0.
llvm::ArrayRef<StepOpInfo> singularOps();
/// Whether aten op `name` in overload `overload` is a singular op (as
/// isStepOp matches names and overloads).
bool isSingularOp(llvm::StringRef name, llvm::StringRef overload);
/// KB_GROWTH_OP rows (exponentials) and KB_PERIODIC_OP rows (sin, cos,
/// tan): a periodic op of a growth op's result counts as singular.
llvm::ArrayRef<StepOpInfo> growthOps();
llvm::ArrayRef<StepOpInfo> periodicOps();
bool isGrowthOp(llvm::StringRef name, llvm::StringRef overload);
bool isPeriodicOp(llvm::StringRef name, llvm::StringRef overload);

llvm::StringRef kindName(OpKind kind);
llvm::StringRef styleName(OpStyle style);

/// An op's operands as far as a frontend knows them to be constants (the
/// graph's prim::Constant values, C++ literals); nothing where unknown.
struct KnownOperands {
  virtual ~KnownOperands() = default;
  virtual std::optional<double> number(llvm::StringRef) const {
    return std::nullopt;
  }
  virtual std::optional<bool> flag(llvm::StringRef) const {
    return std::nullopt;
  }
};

/// The kind of an op once its constant operands are known, the one rule of
/// both frontends: a dropout that cannot drop (p == 0 or train false) is
/// the identity (Injective) and a random mask otherwise (Opaque); a norm
/// reading running statistics (training or use_input_stats false) is a
/// per-channel affine (Broadcast); any other op has the table's kind. The
/// graph path then tells Elementwise from Broadcast by shapes (C++ chains
/// have none).
OpKind refinedKind(const OpInfo &row, const KnownOperands &known);

/// Markdown reference of the whole table (docs/op-semantics.md).
std::string renderOpSemanticsMarkdown();

} // namespace kb

#endif // KB_IR_OPSEMANTICS_H
