//===- CodegenKnobs.h - The codegen command's plan probes -------*- C++ -*-===//
#ifndef KB_TOOLS_KBREWRITE_CODEGENKNOBS_H
#define KB_TOOLS_KBREWRITE_CODEGENKNOBS_H

#include "kb/CodeGen/KernelEmitter.h"

#include "llvm/Support/Error.h"

namespace kbtool {

/// The EmitOptions the codegen subcommand's probe options ask for (the
/// rest default), or an error naming the option and value out of range.
llvm::Expected<kb::EmitOptions> knobEmitOptions();

} // namespace kbtool

#endif // KB_TOOLS_KBREWRITE_CODEGENKNOBS_H
