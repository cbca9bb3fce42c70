//===- LibraryEpilogue.h - Regions a library call can absorb ----*- C++ -*-===//
//
// cuBLASLt and cuDNN can apply some activations in the epilogue of the GEMM
// or convolution itself (KB_LIB_EPILOGUE rows of OpSemantics.def). A region
// that is exactly such an activation over an anchor's result then has a
// second form: one library call instead of anchor + kernel. Which form runs
// is measured by the runtime on the traced operands (kb_runtime.Program.lib).
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_LIBRARYEPILOGUE_H
#define KB_EMIT_LIBRARYEPILOGUE_H

#include "kb/IR/KbDialect.h"
#include "kb/IR/OpSemantics.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace kb {

struct LibraryEpilogue {
  const LibEpilogueInfo *row = nullptr;
  AtenOp anchor;
  /// The anchor's schema operand names, one per operand (the parameters of
  /// the Python helper).
  std::vector<std::string> params;
  /// The row's call with every {name} replaced by its parameter.
  std::string call;
};

/// The library form of `launch`, if a KB_LIB_EPILOGUE row matches: the
/// launch's only input is the result of the row's anchor and nothing else
/// reads it, the kernel is exactly the row's op over that input, and the
/// row's conditions hold on the traced operands.
std::optional<LibraryEpilogue> matchLibraryEpilogue(LaunchOp launch,
                                                    mlir::ModuleOp module);

/// A non-tensor constant as Python prints it ("True", "3", "0.5",
/// "\"tanh\"", "None"); nullopt for anything else.
std::optional<std::string> pythonScalarLiteral(mlir::Attribute value,
                                               mlir::Type type);

} // namespace kb

#endif // KB_EMIT_LIBRARYEPILOGUE_H
