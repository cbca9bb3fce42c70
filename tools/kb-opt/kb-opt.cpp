//===- kb-opt.cpp - Runs kb passes on MLIR for lit tests ------------------===//

#include "kb/IR/KbDialect.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kb::registerKbDialects(registry);
  kb::registerKbPasses();
  kb::registerKbPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kb pass driver\n", registry));
}
