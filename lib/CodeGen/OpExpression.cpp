//===- OpExpression.cpp - A pointwise kb op as a CUDA expression ----------===//
#include "kb/CodeGen/OpExpression.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;

namespace kb::codegen {
namespace {

llvm::Error unsupported(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

} // namespace

llvm::Expected<std::string> operandExpression(AtenOp op, const ArgSpec &arg,
                                              Value v,
                                              const OperandNames &names) {
  if (auto it = names.find(v); it != names.end())
    return it->second;
  if (isNone(v)) {
    // An absent string option (div's rounding_mode), or an absent bound
    // of a clamp-like op (unbounded on that side).
    if (std::optional<std::string> absent = absentOperand(arg))
      return *absent;
    return unsupported("None for operand '" + arg.name + "' of '" +
                       displayName(op) + "'");
  }
  if (auto c = v.getDefiningOp<ConstantOp>()) {
    // Only string operands are strings: a tensor constant that torch
    // prints as "<Tensor>" is no literal.
    if (auto s = dyn_cast<StringAttr>(c.getValue());
        s && arg.type == ArgType::Str)
      return deviceStringOption(s.getValue());
    if (auto n = getConstantNumber(v))
      return floatLiteral(*n);
  }
  return unsupported("operand '" + arg.name + "' of '" + displayName(op) +
                     "' is not a scalar constant");
}

llvm::Expected<std::string> pointwiseExpression(AtenOp op,
                                                const OperandNames &names) {
  const OpInfo *row = op.getInfo();
  // (div.Tensor_mode's twin is div.Scalar_mode, floor_divide's is
  // floor_divide.Scalar.)
  llvm::StringRef mode = row->overload;
  bool tensorOther = mode.empty() || mode.consume_front("Tensor");
  if (tensorOther && (mode.empty() || mode.starts_with("_")))
    if (Value other = op.getArg("other");
        other && other.getDefiningOp<ConstantOp>())
      for (const OpInfo *alt : lookupOverloads(row->name))
        if (alt->overload == ("Scalar" + mode).str() &&
            alt->args.size() == row->args.size() &&
            llvm::all_of(llvm::zip(alt->args, row->args), [](auto ab) {
              return std::get<0>(ab).name == std::get<1>(ab).name;
            }))
          row = alt;
  const OpInfo &info = *row;
  if (info.cuda.empty())
    return unsupported("'" + displayName(op) + "' has no CUDA expression");
  return expandTemplate(info, [&](size_t k) {
    return operandExpression(op, info.args[k], op.getArgs()[k], names);
  });
}

} // namespace kb::codegen
