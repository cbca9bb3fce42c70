//===- TaggedFunction.h - Test IR parsed from text, ops by tag -*- C++ -*-===//
//
// The unit tests write a small kb function as text and name the ops they
// check with a `tag` attribute; this parses it and finds them.
//
//===----------------------------------------------------------------------===//
#ifndef KB_UNITTESTS_TAGGEDFUNCTION_H
#define KB_UNITTESTS_TAGGEDFUNCTION_H

#include "kb/IR/KbDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <map>
#include <string>

namespace kb::testing {

/// `func.func @f(<args>) {\n<body>  return\n}` in a module of its own.
class TaggedFunction {
public:
  TaggedFunction(const std::string &args, const std::string &body) {
    ctx.loadDialect<KbDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @f(" + args + ") {\n" + body + "  return\n}\n", &ctx);
    if (!module)
      return;
    module->walk([&](mlir::Operation *op) {
      if (auto t = op->getAttrOfType<mlir::StringAttr>("tag"))
        ops[t.getValue().str()] = op;
    });
  }
  bool ok() const { return static_cast<bool>(module); }
  mlir::Operation *op(const std::string &tag) const { return ops.at(tag); }
  mlir::func::FuncOp fn() {
    return *module->getOps<mlir::func::FuncOp>().begin();
  }

private:
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::map<std::string, mlir::Operation *> ops;
};

} // namespace kb::testing

#endif // KB_UNITTESTS_TAGGEDFUNCTION_H
