//===- LibraryEpilogue.cpp - Regions a library call can absorb ------------===//

#include "kb/Emit/LibraryEpilogue.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace kb {

std::optional<std::string> pythonScalarLiteral(Attribute a, Type t) {
  if (isa<TensorType>(t))
    return std::nullopt;
  if (isa<UnitAttr>(a) || isa<NoneType>(t))
    return std::string("None");
  if (auto b = dyn_cast<BoolAttr>(a))
    return std::string(b.getValue() ? "True" : "False");
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    if (i.getType().isInteger(1))
      return std::string(i.getInt() ? "True" : "False");
    return std::to_string(i.getInt());
  }
  if (auto f = dyn_cast<FloatAttr>(a)) {
    double d = f.getValueAsDouble();
    if (std::isnan(d))
      return std::string("float(\"nan\")");
    if (std::isinf(d))
      return std::string(d > 0 ? "float(\"inf\")" : "-float(\"inf\")");
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::format("%.17g", d);
    os.flush();
    if (s.find_first_of(".eE") == std::string::npos)
      s += ".0";
    return s;
  }
  if (auto s = dyn_cast<StringAttr>(a)) {
    std::string out = "\"";
    for (char c : s.getValue()) {
      if (c == '\\' || c == '"')
        out += '\\';
      out += c;
    }
    return out + "\"";
  }
  return std::nullopt;
}

namespace {

/// How a traced operand prints in a condition: its literal when constant,
/// "None" for an absent optional, "<value>" for anything computed.
std::string conditionText(Value v) {
  if (isa<NoneType>(v.getType()))
    return "None";
  if (auto c = v.getDefiningOp<ConstantOp>())
    if (auto lit = pythonScalarLiteral(c.getValue(), c.getType()))
      return *lit;
  return "<value>";
}

bool holds(llvm::StringRef cond, AtenOp anchor, AtenOp op) {
  auto operand = [&](llvm::StringRef name) -> Value {
    if (Value v = anchor.getArg(name))
      return v;
    return op.getArg(name);
  };
  if (auto [lhs, rank] = cond.split(".rank="); !rank.empty()) {
    Value v = operand(lhs);
    auto t = v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
    unsigned n;
    return t && !rank.getAsInteger(10, n) && t.getRank() == n;
  }
  if (auto [lhs, lit] = cond.split("!="); !lit.empty()) {
    Value v = operand(lhs);
    return v && conditionText(v) != lit;
  }
  auto [lhs, lit] = cond.split('=');
  Value v = operand(lhs);
  return v && !lit.empty() && conditionText(v) == lit;
}

/// The single aten op of `kernel` over its only argument, yielded alone.
AtenOp soleOp(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  if (body.getNumArguments() != 1)
    return {};
  AtenOp found;
  for (Operation &op : body.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    auto aten = dyn_cast<AtenOp>(op);
    if (!aten || found || aten.getInplace() || aten->getNumResults() != 1)
      return {};
    found = aten;
  }
  if (!found || found.getArgs().empty() ||
      found.getArgs()[0] != body.getArgument(0))
    return {};
  Operation *term = body.getTerminator();
  if (term->getNumOperands() != 1 ||
      term->getOperand(0) != found->getResult(0))
    return {};
  return found;
}

} // namespace

std::optional<LibraryEpilogue> matchLibraryEpilogue(LaunchOp launch,
                                                    ModuleOp module) {
  if (launch.getArgs().size() != 1 || launch->getNumResults() != 1)
    return std::nullopt;
  Value in = launch.getArgs()[0];
  auto anchor = in.getDefiningOp<AtenOp>();
  if (!anchor || !in.hasOneUse() || anchor.getInplace() ||
      anchor->getNumResults() != 1 || !anchor.getInfo())
    return std::nullopt;
  KernelOp kernel;
  for (KernelOp k : module.getOps<KernelOp>())
    if (k.getSymName() == launch.getKernel())
      kernel = k;
  AtenOp op = kernel ? soleOp(kernel) : AtenOp();
  if (!op)
    return std::nullopt;
  for (const LibEpilogueInfo &row : libraryEpilogues()) {
    if (row.anchor != anchor.getName() || row.op != op.getName())
      continue;
    llvm::SmallVector<llvm::StringRef> conds;
    row.when.split(conds, ' ', -1, false);
    if (!llvm::all_of(conds, [&](llvm::StringRef c) {
          return holds(c, anchor, op);
        }))
      continue;
    LibraryEpilogue m;
    m.row = &row;
    m.anchor = anchor;
    const OpInfo *info = anchor.getInfo();
    if (info->args.size() < anchor.getArgs().size())
      return std::nullopt;
    for (unsigned i = 0; i < anchor.getArgs().size(); ++i)
      m.params.push_back(info->args[i].name);
    std::string call = row.call.str();
    for (const std::string &p : m.params) {
      std::string key = "{" + p + "}";
      for (size_t pos; (pos = call.find(key)) != std::string::npos;)
        call.replace(pos, key.size(), p);
    }
    if (call.find('{') != std::string::npos)
      return std::nullopt; // the row names an operand this call lacks
    m.call = call;
    return m;
  }
  return std::nullopt;
}

} // namespace kb
