//===- Prelude.h - Device helpers every emitted kernel includes -*- C++ -*-===//
#ifndef KB_CODEGEN_PRELUDE_H
#define KB_CODEGEN_PRELUDE_H

#include "llvm/ADT/StringRef.h"

namespace kb {
/// CUDA source of the kb:: helpers, pasted into each emitted translation
/// unit so that it stays self-contained (nvcc -c and NVRTC accept it alone).
llvm::StringRef cudaPrelude();
/// Whether `code` calls a helper whose KB_FAST_MATH variant differs from
/// the exact one (so defining the macro changes its results).
bool callsFastMathHelper(llvm::StringRef code);
} // namespace kb

#endif
