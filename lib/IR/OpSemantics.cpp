//===- OpSemantics.cpp - The op-semantics table ---------------------------===//

#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace kb;
using llvm::StringRef;

namespace {

struct RawRow {
  const char *name, *overload;
  OpKind kind;
  OpStyle style;
  const char *schema, *cuda, *aten;
};

const RawRow kRows[] = {
#define KB_OP(NAME, OVERLOAD, KIND, STYLE, SCHEMA, CUDA, ATEN)                 \
  {#NAME, OVERLOAD, OpKind::KIND, OpStyle::STYLE, SCHEMA, CUDA, ATEN},
#include "kb/IR/OpSemantics.def"
#undef KB_OP
};

ArgType parseArgType(StringRef t) {
  static const llvm::StringMap<ArgType> kTypes = {
      {"Tensor", ArgType::Tensor},
      {"Tensor[]", ArgType::TensorList},
      {"Scalar", ArgType::Scalar},
      {"int", ArgType::Int},
      {"float", ArgType::Float},
      {"bool", ArgType::Bool},
      {"int[]", ArgType::IntList},
      {"float[]", ArgType::FloatList},
      {"str", ArgType::Str},
      {"ScalarType", ArgType::ScalarType},
      {"MemoryFormat", ArgType::MemoryFormat},
      {"Layout", ArgType::Layout},
      {"Device", ArgType::Device},
      {"Generator", ArgType::Generator},
      {"Any", ArgType::Any}};
  auto it = kTypes.find(t);
  if (it == kTypes.end())
    llvm::report_fatal_error(
        llvm::Twine("OpSemantics.def: unknown schema type '") + t + "'");
  return it->second;
}

const std::pair<Recipe, llvm::StringLiteral> kRecipes[] = {
    {Recipe::AdaptiveAvgPool, "adaptive_avg_pool"},
    {Recipe::AdaptiveMaxPool, "adaptive_max_pool"},
    {Recipe::Amax, "amax"},
    {Recipe::Amin, "amin"},
    {Recipe::Argmax, "argmax"},
    {Recipe::Argmin, "argmin"},
    {Recipe::AvgPool, "avg_pool"},
    {Recipe::BatchNorm, "batch_norm"},
    {Recipe::Cosine, "cosine"},
    {Recipe::GroupNorm, "group_norm"},
    {Recipe::InstanceNorm, "instance_norm"},
    {Recipe::LayerNorm, "layer_norm"},
    {Recipe::LogSoftmax, "log_softmax"},
    {Recipe::Logsumexp, "logsumexp"},
    {Recipe::MaxPool, "max_pool"},
    {Recipe::Mean, "mean"},
    {Recipe::Pnorm, "pnorm"},
    {Recipe::Prod, "prod"},
    {Recipe::SafeSoftmax, "safe_softmax"},
    {Recipe::Softmax, "softmax"},
    {Recipe::Std, "std"},
    {Recipe::Sum, "sum"},
    {Recipe::Var, "var"},
};

Recipe parseRecipe(StringRef name) {
  for (const auto &[r, text] : kRecipes)
    if (text == name)
      return r;
  llvm::report_fatal_error(llvm::Twine("OpSemantics.def: unknown recipe '") +
                           name + "' of a Reduction row");
}

const std::pair<IndexMap, llvm::StringLiteral> kIndexMaps[] = {
    {IndexMap::None, ""},       {IndexMap::Permute, "permute"},
    {IndexMap::Flat, "flat"},   {IndexMap::Roll, "roll"},
    {IndexMap::Slice, "slice"}, {IndexMap::Select, "select"},
    {IndexMap::Pad, "pad"},
};

IndexMap parseIndexMap(StringRef name) {
  for (const auto &[m, text] : kIndexMaps)
    if (text == name)
      return m;
  llvm::report_fatal_error(llvm::Twine("OpSemantics.def: unknown index map '") +
                           name + "' of an Injective row");
}

// The table is static data; a malformed row is a programming error caught by
// the first unit test that loads it.
std::vector<OpInfo> buildTable() {
  std::vector<OpInfo> table;
  for (const RawRow &row : kRows) {
    OpInfo info{row.name,   row.overload, row.kind, row.style,
                row.schema, row.cuda,     row.aten, {}};
    llvm::SmallVector<StringRef, 16> parts;
    StringRef(row.schema).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts) {
      auto [decl, def] = part.trim().split('=');
      auto [type, name] = decl.trim().rsplit(' ');
      bool optional = type.consume_back("?");
      info.args.push_back(
          {name.str(), parseArgType(type), optional, def.str()});
    }
    if (info.kind == OpKind::Reduction)
      info.recipe = parseRecipe(info.cuda);
    if (info.kind == OpKind::Injective)
      info.indexMap = parseIndexMap(info.cuda);
    table.push_back(std::move(info));
  }
  return table;
}

const std::vector<OpInfo> &table() {
  static const std::vector<OpInfo> t = buildTable();
  return t;
}

bool accepts(const ArgSpec &arg, ValueClass v) {
  if (v == ValueClass::None)
    return arg.optional || arg.type == ArgType::Any;
  switch (arg.type) {
  case ArgType::Tensor:
    return v == ValueClass::Tensor;
  case ArgType::TensorList:
    return v == ValueClass::TensorList || v == ValueClass::List;
  case ArgType::Scalar:
    return v == ValueClass::Int || v == ValueClass::Float ||
           v == ValueClass::Bool || v == ValueClass::Number;
  case ArgType::Int:
  case ArgType::ScalarType:
  case ArgType::MemoryFormat:
  case ArgType::Layout:
    // TorchScript encodes dtypes, layouts and memory formats as ints.
    return v == ValueClass::Int || v == ValueClass::Number;
  case ArgType::Float:
    return v == ValueClass::Float || v == ValueClass::Int ||
           v == ValueClass::Number;
  case ArgType::Bool:
    return v == ValueClass::Bool || v == ValueClass::Int;
  case ArgType::IntList:
    // A single int is accepted where int[] is expected (int[2] broadcast).
    return v == ValueClass::IntList || v == ValueClass::List ||
           v == ValueClass::Int;
  case ArgType::FloatList:
    return v == ValueClass::FloatList || v == ValueClass::List;
  case ArgType::Str:
    return v == ValueClass::Str;
  case ArgType::Device:
    return v == ValueClass::Device || v == ValueClass::Str;
  case ArgType::Generator:
    return false;
  case ArgType::Any:
    return true;
  }
  return false;
}

} // namespace

std::optional<unsigned> OpInfo::argIndex(StringRef argName) const {
  for (unsigned i = 0, e = args.size(); i != e; ++i)
    if (args[i].name == argName)
      return i;
  return std::nullopt;
}

std::string OpInfo::qualifiedName() const {
  std::string s = (llvm::Twine("aten::") + name).str();
  if (!overload.empty())
    s += (llvm::Twine(".") + overload).str();
  return s;
}

llvm::ArrayRef<OpInfo> kb::allOps() { return table(); }

llvm::SmallVector<const OpInfo *, 4> kb::lookupOverloads(StringRef name) {
  // Built once: the importer resolves every node of every graph through here.
  static const llvm::StringMap<llvm::SmallVector<const OpInfo *, 4>> index =
      [] {
        llvm::StringMap<llvm::SmallVector<const OpInfo *, 4>> m;
        for (const OpInfo &info : table())
          m[info.name].push_back(&info);
        return m;
      }();
  auto it = index.find(name);
  if (it == index.end())
    return {};
  return it->second;
}

const OpInfo *kb::resolveOverload(StringRef name,
                                  llvm::ArrayRef<ValueClass> operands) {
  for (const OpInfo *info : lookupOverloads(name)) {
    if (info->args.size() != operands.size())
      continue;
    bool ok = true;
    for (unsigned i = 0, e = operands.size(); i != e && ok; ++i)
      ok = accepts(info->args[i], operands[i]);
    if (ok)
      return info;
  }
  return nullptr;
}

std::pair<StringRef, bool> kb::stripInPlace(StringRef atenName) {
  StringRef name = atenName;
  name.consume_front("aten::");
  if (name.size() > 1 && name.ends_with("_") && !name.ends_with("__"))
    return {name.drop_back(), true};
  return {name, false};
}

llvm::ArrayRef<CxxModuleInfo> kb::cxxModules() {
  static const CxxModuleInfo kModules[] = {
#define KB_OP(...)
#define KB_CXX_MODULE(IMPL, OP, STATE, CUDA) {#IMPL, #OP, STATE, CUDA},
#include "kb/IR/OpSemantics.def"
#undef KB_CXX_MODULE
#undef KB_OP
  };
  return kModules;
}

llvm::ArrayRef<LibEpilogueInfo> kb::libraryEpilogues() {
  static const LibEpilogueInfo kRows[] = {
#define KB_OP(...)
#define KB_LIB_EPILOGUE(ANCHOR, OP, WHEN, CALL, LIBRARY)                       \
  {#ANCHOR, #OP, WHEN, CALL, LIBRARY},
#include "kb/IR/OpSemantics.def"
#undef KB_LIB_EPILOGUE
#undef KB_OP
  };
  return kRows;
}

llvm::ArrayRef<StepOpInfo> kb::stepOps() {
  static const StepOpInfo kRows[] = {
#define KB_OP(...)
#define KB_STEP_OP(NAME, OVERLOAD, RESULT, WHY) {#NAME, OVERLOAD, WHY, RESULT},
#include "kb/IR/OpSemantics.def"
#undef KB_STEP_OP
#undef KB_OP
  };
  return kRows;
}

llvm::ArrayRef<StepOpInfo> kb::singularOps() {
  static const StepOpInfo kRows[] = {
#define KB_OP(...)
#define KB_SINGULAR_OP(NAME, OVERLOAD, WHY) {#NAME, OVERLOAD, WHY},
#include "kb/IR/OpSemantics.def"
#undef KB_SINGULAR_OP
#undef KB_OP
  };
  return kRows;
}

llvm::ArrayRef<StepOpInfo> kb::growthOps() {
  static const StepOpInfo kRows[] = {
#define KB_OP(...)
#define KB_GROWTH_OP(NAME, OVERLOAD, WHY) {#NAME, OVERLOAD, WHY},
#include "kb/IR/OpSemantics.def"
#undef KB_GROWTH_OP
#undef KB_OP
  };
  return kRows;
}

llvm::ArrayRef<StepOpInfo> kb::periodicOps() {
  static const StepOpInfo kRows[] = {
#define KB_OP(...)
#define KB_PERIODIC_OP(NAME, OVERLOAD, WHY) {#NAME, OVERLOAD, WHY},
#include "kb/IR/OpSemantics.def"
#undef KB_PERIODIC_OP
#undef KB_OP
  };
  return kRows;
}

static const StepOpInfo *findRow(llvm::ArrayRef<StepOpInfo> rows,
                                 StringRef name, StringRef overload) {
  name.consume_front("aten::");
  StringRef base = stripInPlace(name).first;
  for (const StepOpInfo &r : rows)
    if (r.name == base && (r.overload == "*" || r.overload == overload))
      return &r;
  return nullptr;
}

static bool inRows(llvm::ArrayRef<StepOpInfo> rows, StringRef name,
                   StringRef overload) {
  return findRow(rows, name, overload) != nullptr;
}

bool kb::isStepOp(StringRef name, StringRef overload) {
  return inRows(stepOps(), name, overload);
}

const StepOpInfo *kb::findStepOp(StringRef name, StringRef overload) {
  return findRow(stepOps(), name, overload);
}

bool kb::isSingularOp(StringRef name, StringRef overload) {
  return inRows(singularOps(), name, overload);
}

bool kb::isGrowthOp(StringRef name, StringRef overload) {
  return inRows(growthOps(), name, overload);
}

bool kb::isPeriodicOp(StringRef name, StringRef overload) {
  return inRows(periodicOps(), name, overload);
}

const CxxModuleInfo *kb::cxxModule(StringRef implClass) {
  for (const CxxModuleInfo &m : cxxModules())
    if (m.impl == implClass)
      return &m;
  return nullptr;
}

StringRef kb::cxxModuleOp(StringRef implClass) {
  const CxxModuleInfo *m = cxxModule(implClass);
  return m ? m->op : "";
}

StringRef kb::kindName(OpKind kind) {
  switch (kind) {
  case OpKind::Elementwise:
    return "elementwise";
  case OpKind::Broadcast:
    return "broadcast";
  case OpKind::Injective:
    return "injective";
  case OpKind::Reduction:
    return "reduction";
  case OpKind::Anchor:
    return "anchor";
  case OpKind::Host:
    return "host";
  case OpKind::Opaque:
    return "opaque";
  }
  llvm_unreachable("unknown OpKind");
}

OpKind kb::refinedKind(const OpInfo &row, const KnownOperands &known) {
  switch (row.style) {
  case OpStyle::Dropout: {
    auto p = known.number("p");
    auto train = known.flag("train");
    if ((p && *p == 0.0) || (train && !*train))
      return OpKind::Injective;
    return OpKind::Opaque;
  }
  case OpStyle::Norm:
    for (StringRef flag : {"training", "use_input_stats"})
      if (auto f = known.flag(flag); f && !*f)
        return OpKind::Broadcast;
    return row.kind;
  default:
    return row.kind;
  }
}

StringRef kb::styleName(OpStyle style) {
  switch (style) {
  case OpStyle::None:
    return "";
  case OpStyle::Conv:
    return "conv";
  case OpStyle::Gemm:
    return "gemm";
  case OpStyle::Attention:
    return "attention";
  case OpStyle::Reduce:
    return "reduce";
  case OpStyle::ArgReduce:
    return "arg-reduce";
  case OpStyle::Softmax:
    return "softmax";
  case OpStyle::Norm:
    return "norm";
  case OpStyle::Pool:
    return "pool";
  case OpStyle::View:
    return "view";
  case OpStyle::Identity:
    return "identity";
  case OpStyle::Copy:
    return "copy";
  case OpStyle::Cast:
    return "cast";
  case OpStyle::Dropout:
    return "dropout";
  case OpStyle::Composite:
    return "composite";
  }
  llvm_unreachable("unknown OpStyle");
}

/// One markdown row per StepOpInfo row: op, overload ("all" for "*"), and
/// `why` after `prefix`.
static void renderStepRows(llvm::raw_ostream &os,
                           llvm::ArrayRef<StepOpInfo> rows,
                           llvm::StringRef prefix = "") {
  for (const StepOpInfo &r : rows) {
    os << "| `aten::" << r.name << "` | "
       << (r.overload == "*" ? "all" : r.overload) << " | " << prefix << r.why;
    if (r.result >= 0)
      os << " (result " << r.result
         << " only: the op is no step while that result is unused)";
    os << " |\n";
  }
}

std::string kb::renderOpSemanticsMarkdown() {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "# Op semantics\n\n"
     << "Generated from `include/kb/IR/OpSemantics.def` by "
        "`kb-rewrite ops --markdown`; do not edit by hand.\n\n"
     << "Kinds follow TVM's pattern order (elementwise < broadcast < "
        "injective < reduction < anchor); `host` ops compute shapes and "
        "scalars on the CPU; anything not listed imports as an opaque op.\n\n"
     << "| op | kind | style | operands | CUDA expression or codegen recipe | "
        "ATen behaviour |\n"
     << "|---|---|---|---|---|---|\n";
  // A '|' inside a cell (|x| in the ATen column too) would end the cell.
  auto cell = [](llvm::StringRef text) {
    std::string c = text.str();
    for (size_t p = 0; (p = c.find('|', p)) != std::string::npos; p += 2)
      c.replace(p, 1, "\\|");
    return c;
  };
  for (const OpInfo &info : table()) {
    std::string cuda = cell(info.cuda);
    os << "| `" << info.qualifiedName() << "` | " << kindName(info.kind)
       << " | " << styleName(info.style) << " | `" << info.schema << "` | "
       << (cuda.empty() ? "" : "`" + cuda + "`") << " | " << cell(info.aten)
       << " |\n";
  }
  os << "\n## Library epilogues\n\n"
     << "A region that is exactly the op applied to the anchor's result may "
        "also run as one library call; the runtime times both and keeps the "
        "faster when the results agree (docs/rewrite.md).\n\n"
     << "| anchor | op | when | library call | library |\n"
     << "|---|---|---|---|---|\n";
  for (const LibEpilogueInfo &e : libraryEpilogues())
    os << "| `aten::" << e.anchor << "` | `aten::" << e.op << "` | "
       << (e.when.empty() ? "" : "`" + e.when.str() + "`") << " | `" << e.call
       << "` | " << e.library << " |\n";
  os << "\n## Step ops\n\n"
     << "Results that jump at some inputs. A kernel that matches ATen only to "
        "a few ulps (sums, norms, softmax, --fast-math) keeps its ATen ops "
        "when its values reach one of these, inside its region or downstream "
        "(docs/rewrite.md, \"Numerics policy\").\n\n"
     << "| op | overload | why |\n|---|---|---|\n";
  renderStepRows(os, stepOps());
  os << "\n## Singular ops\n\n"
     << "Slopes without bound at 0. A norm centres its row and divides by the "
        "row's standard deviation, so a last-bit difference of its input "
        "becomes an absolute error near 0; one of these ops there turns it "
        "into ~1e-3. A kernel that matches ATen only to a few ulps keeps its "
        "ATen ops when its values reach a norm and then one of these, inside "
        "its region or downstream (docs/rewrite.md, \"Numerics policy\").\n\n"
     << "| op | overload | why |\n|---|---|---|\n";
  renderStepRows(os, singularOps());
  os << "\n## Periodic ops of exponentials\n\n"
     << "A periodic op passes its argument's absolute error into its result "
        "whatever the argument's size, and an exponential makes large "
        "arguments from ordinary ones (a last bit of e^5 = 148 is 1.5e-5). A "
        "periodic op whose argument an exponential computed (through "
        "pointwise ops) counts as a singular op.\n\n"
     << "| op | overload | kind |\n|---|---|---|\n";
  renderStepRows(os, growthOps(), "growth: ");
  renderStepRows(os, periodicOps(), "periodic: ");
  return out;
}

llvm::StringRef kb::recipeName(Recipe r) {
  for (const auto &[recipe, text] : kRecipes)
    if (recipe == r)
      return text;
  return "";
}

bool kb::isNormRecipe(Recipe r) {
  return r == Recipe::LayerNorm || r == Recipe::GroupNorm ||
         r == Recipe::InstanceNorm || r == Recipe::BatchNorm;
}

bool kb::isSoftmaxRecipe(Recipe r) {
  return r == Recipe::Softmax || r == Recipe::LogSoftmax ||
         r == Recipe::SafeSoftmax;
}
