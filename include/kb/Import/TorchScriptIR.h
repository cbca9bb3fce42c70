//===- TorchScriptIR.h - Parsed TorchScript IR text -------------*- C++ -*-===//
//
// A faithful, MLIR-free tree of TorchScript IR text as printed by
// torch.jit (torch/csrc/jit/ir/irparser.cpp grammar). The importer lowers it
// into the kb dialect; keeping the parser free of MLIR lets it be fuzzed alone.
//
//===----------------------------------------------------------------------===//
#ifndef KB_IMPORT_TORCHSCRIPTIR_H
#define KB_IMPORT_TORCHSCRIPTIR_H

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kb::ts {

struct Location {
  unsigned line = 0, col = 0;
};

/// A TorchScript type. Tensor types carry the scalar type name ("Float"),
/// sizes (nullopt for an unknown dim), strides and device when printed.
struct Type {
  enum class Kind {
    Tensor, Int, Float, Bool, Str, None, Device, Number, Scalar, List,
    Tuple, Optional, Dict, Class, Other
  };
  Kind kind = Kind::Tensor;
  std::string name; // scalar type for tensors ("" = unknown), class/other name
  bool hasSizes = false; // a "(...)" detail list was printed (0-d too)
  std::vector<std::optional<int64_t>> sizes;
  std::vector<int64_t> strides;
  std::string device;
  std::vector<Type> elems; // List/Optional: 1, Tuple/Dict: n

  bool isTensor() const { return kind == Kind::Tensor; }
  std::string str() const;
};

struct TensorLiteral {
  std::string text; // "{2}", "{-0.5}", "<Tensor>" or "[ CPUFloatType{0} ]"
  std::optional<double> scalar;
  /// An empty tensor printed with its type and sizes (a GPT-2 trace's
  /// `[ CPUFloatType{0} ]`): no values, so the text is all of it.
  std::optional<std::vector<int64_t>> emptySizes;
  /// A tensor printed with its values (up to 10 elements, 4 decimals): the
  /// sizes of its "[ CPUFloatType{3,2} ]" trailer; the text keeps only the
  /// trailer, the exact values come from kb-export (params.json).
  std::optional<std::vector<int64_t>> printedSizes;
};

struct AttrValue;
using AttrList = std::vector<AttrValue>;
struct AttrValue {
  std::variant<std::monostate, int64_t, double, std::string, AttrList,
               TensorLiteral, bool>
      v;
  bool isInt() const { return std::holds_alternative<int64_t>(v); }
  bool isDouble() const { return std::holds_alternative<double>(v); }
  bool isString() const { return std::holds_alternative<std::string>(v); }
  bool isList() const { return std::holds_alternative<AttrList>(v); }
  bool isTensor() const { return std::holds_alternative<TensorLiteral>(v); }
};

struct Attr {
  std::string name;
  AttrValue value;
};

struct ValueDef {
  std::string name; // without '%'
  Type type;
  Location loc;
};

struct Block;

struct Node {
  std::string kind; // "aten::relu", "prim::Constant"
  std::vector<ValueDef> outputs;
  std::vector<Attr> attrs;
  std::vector<std::string> inputs;
  std::vector<Location> inputLocs;
  std::vector<Block> blocks;
  std::string scope;         // "__module.conv" when printed with scopes
  std::string sourceComment; // the "# file.py:12:0" trailer, without '#'
  Location loc;

  const Attr *findAttr(const std::string &attrName) const;
};

struct Block {
  std::vector<ValueDef> params;
  std::vector<Node> nodes;
  std::vector<std::string> returns;
  std::vector<Location> returnLocs;
  Location loc;
};

struct Graph {
  Block body; // params = graph inputs, returns = graph outputs
  std::string bufferName;
};

/// Parses TorchScript IR text. On malformed input returns an error whose
/// message is "<bufferName>:line:col: error: ..." (SourceMgr format).
llvm::Expected<Graph> parseGraph(llvm::StringRef text,
                                 llvm::StringRef bufferName);

} // namespace kb::ts

#endif // KB_IMPORT_TORCHSCRIPTIR_H
