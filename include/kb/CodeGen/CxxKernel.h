//===- CxxKernel.h - Fused functions for libtorch C++ chains ----*- C++ -*-===//
//
// The C++ frontend's chains (kb/Import/CxxChains.h) as CUDA: one host
// function per chain, defined in the kb_kernels.cu a rewrite writes. Its
// kernels are shape-generic (sizes are read at run time: a C++ source says
// nothing about them), its guards send anything else to the chain's own
// ATen ops, and the op table's CUDA templates give every element
// expression, through the expander the graph kernels use.
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_CXXKERNEL_H
#define KB_CODEGEN_CXXKERNEL_H

#include "kb/Import/CxxChains.h"
#include "kb/Import/CxxImporter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kb::codegen {

/// One fused function: its declaration for kb_kernels.h and its definition
/// (kernels, then the host wrapper) for kb_kernels.cu, each starting with
/// a comment line naming `where` the chain was found.
struct CxxFunction {
  std::string decl, def;
  /// Built with fastMath and calling an approximate helper: its name and
  /// lock signature must say so (cxxFusedName's `approximate`).
  bool approximate = false;
};

/// The function `name` for a chain with a rewrite plan (an empty whyNot),
/// its element expressions from the chain's kb IR `ir` (importCxxChain,
/// then kb-classify) as the graph kernels' are (OpExpression.h). With
/// `fastMath` (kb-rewrite rewrite --fast-math) sigmoid, silu, mish and
/// softmax's division use the approximate forms the graph kernels use
/// under the same option (docs/codegen.md, "Exact and fast math").
llvm::Expected<CxxFunction> emitCxxFunction(const CxxChain &chain,
                                            const ImportedChain &ir,
                                            llvm::StringRef name,
                                            llvm::StringRef where,
                                            bool fastMath = false);

/// The device and host helpers every fused function uses (namespace
/// kb_rewrite::detail), once per kb_kernels.cu.
llvm::StringRef cxxKernelSupport();

} // namespace kb::codegen

#endif // KB_CODEGEN_CXXKERNEL_H
