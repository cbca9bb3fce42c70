//===- KbDialect.cpp - kb dialect registration and verifiers --------------===//

#include "kb/IR/KbDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kb;

#include "kb/IR/KbOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "kb/IR/KbOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "kb/IR/KbOps.cpp.inc"

void KbDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kb/IR/KbOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "kb/IR/KbOpsTypes.cpp.inc"
      >();
}

const OpInfo *AtenOp::getInfo() {
  for (const OpInfo *info : lookupOverloads(getName()))
    if (info->overload == getOverload())
      return info;
  return nullptr;
}

Value AtenOp::getArg(llvm::StringRef argName) {
  const OpInfo *info = getInfo();
  if (!info)
    return {};
  auto idx = info->argIndex(argName);
  if (!idx || *idx >= getArgs().size())
    return {};
  return getArgs()[*idx];
}

LogicalResult AtenOp::verify() {
  const OpInfo *info = getInfo();
  if (!info)
    return emitOpError("'aten::")
           << getName() << (getOverload().empty() ? "" : ".") << getOverload()
           << "' is not in the op-semantics table";
  if (info->args.size() != getArgs().size())
    return emitOpError("expects ")
           << info->args.size() << " operands for " << info->qualifiedName()
           << ", got " << getArgs().size();
  return success();
}

LogicalResult RegionOp::verify() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields types that differ from its results");
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto kernel =
      symbols.lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("'") << getKernel() << "' does not name a kb.kernel";
  Block &body = kernel.getBody().front();
  if (body.getArgumentTypes() != getArgs().getTypes())
    return emitOpError("operand types differ from the kernel's inputs");
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("result types differ from the kernel's outputs");
  return success();
}

void kb::registerKbDialects(mlir::DialectRegistry &registry) {
  registry.insert<KbDialect, mlir::func::FuncDialect>();
}
