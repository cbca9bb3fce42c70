//===- Prelude.h - Device helpers every emitted kernel includes -*- C++ -*-===//
#ifndef KB_CODEGEN_PRELUDE_H
#define KB_CODEGEN_PRELUDE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kb {
/// CUDA source of the kb:: helpers, pasted into each emitted translation
/// unit so that it stays self-contained (nvcc -c and NVRTC accept it alone).
llvm::StringRef cudaPrelude();
/// Conversions between float and float16 / bfloat16 bits, pasted after the
/// prelude into kernels with 16-bit tensors only (float32 kernels, and
/// their hashes in lock files, stay as they were).
llvm::StringRef halfPrelude();
/// Whether `code` calls a helper whose KB_FAST_MATH variant differs from
/// the exact one (so defining the macro changes its results).
bool callsFastMathHelper(llvm::StringRef code);
/// A string option of an op (div's rounding_mode, gelu's approximate) as
/// the helpers take it: its first character ('t' for "trunc" and "tanh"),
/// '\0' for an absent one. Never a string literal: a literal is a global
/// whose address a kernel takes, which kb-verify refuses as module state.
std::string deviceStringOption(std::optional<llvm::StringRef> s);
} // namespace kb

#endif
