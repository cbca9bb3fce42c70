//===- Prelude.h - Device helpers every emitted kernel includes -*- C++ -*-===//
#ifndef KB_CODEGEN_PRELUDE_H
#define KB_CODEGEN_PRELUDE_H

#include "llvm/ADT/StringRef.h"

namespace kb {
/// CUDA source of the kb:: helpers, pasted into each emitted translation
/// unit so that it stays self-contained (nvcc -c and NVRTC accept it alone).
llvm::StringRef cudaPrelude();
} // namespace kb

#endif
