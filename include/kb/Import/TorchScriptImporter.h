//===- TorchScriptImporter.h - TorchScript IR -> kb dialect -----*- C++ -*-===//
#ifndef KB_IMPORT_TORCHSCRIPTIMPORTER_H
#define KB_IMPORT_TORCHSCRIPTIMPORTER_H

#include "kb/Import/TorchScriptIR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"

#include <map>

namespace kb {

/// Shapes and dtypes of module parameters from `<name>.params.json`, used
/// when the graph prints a parameter as plain `Tensor`.
struct ParamInfo {
  std::vector<int64_t> shape;
  std::string dtype; // "float32", ...
};

/// A tensor constant's exact values as kb-export recorded them (the graph
/// text prints at most 6 digits, or `<Tensor>`), row-major.
struct ConstantData {
  std::vector<int64_t> shape;
  std::string dtype; // "float32", "int64", "bool", ...
  std::vector<double> values;
};

struct ImportOptions {
  std::map<std::string, ParamInfo> params;
  /// params.json's "constants", by the name of the value in the graph.
  std::map<std::string, ConstantData> constants;
  /// Stripped from parameter paths: kb-export wraps models whose forward
  /// takes non-tensor arguments in a module holding the model as "model".
  std::string modulePrefix;
};

/// Reads kb-export's params.json (see docs/graph-format.md).
llvm::Expected<ImportOptions> loadParamsJson(llvm::StringRef path);
/// The import options of a parsed params.json read from `path` (named in
/// errors).
llvm::Expected<ImportOptions> paramsFromJson(const llvm::json::Object &params,
                                             llvm::StringRef path);
/// <stem>.params.json for <stem>.graph.txt (kb-export writes them side by
/// side), <path>.params.json for any other name.
std::string defaultParamsPath(llvm::StringRef graphPath);

/// Lowers a parsed graph into `func.func @forward` in a new module.
/// Errors name the graph file, line and column.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraph(mlir::MLIRContext &ctx, const ts::Graph &graph,
            const ImportOptions &options = {});

/// Reads and parses a graph file ("-": stdin).
llvm::Expected<ts::Graph> readGraphFile(llvm::StringRef path);

/// Parses and imports a graph file; picks up `<stem>.params.json` beside a
/// `<stem>.graph.txt` when `paramsPath` is empty.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraphFile(mlir::MLIRContext &ctx, llvm::StringRef path,
                llvm::StringRef paramsPath = "");

} // namespace kb

#endif // KB_IMPORT_TORCHSCRIPTIMPORTER_H
