//===- CommandLine.h - What every kb-rewrite subcommand shares --*- C++ -*-===//
//
// Exit codes (docs/cli.md), error reporting, and the choice between the
// graph and the C++ frontend from a command's inputs and options.
//
//===----------------------------------------------------------------------===//
#ifndef KB_TOOLS_KBREWRITE_COMMANDLINE_H
#define KB_TOOLS_KBREWRITE_COMMANDLINE_H

#include "kb/Driver/Failure.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kbtool {

enum ExitCode { Ok = 0, UsageError = 1, InputError = 2, InternalError = 3 };

/// Reports `msg` on stderr (as "kb-rewrite: error: ..." unless it is a
/// located error already) and returns `code`.
int fail(ExitCode code, const llvm::Twine &msg);
/// Reports `err`; its kind (Failure.h) is the exit code.
int fail(llvm::Error err, kb::driver::FailureKind fallback);

/// The codegen subcommand, for options defined outside kb-rewrite.cpp
/// (built on first use: another file's globals may be constructed first).
llvm::cl::SubCommand &codegenCommand();

/// The first of `opts` given on the command line, spelled as given.
std::string firstGiven(llvm::ArrayRef<const llvm::cl::Option *> opts);

/// Whether `inputs` are C++ sources (every one) rather than one graph; a
/// usage error names what is wrong with a mix, several graphs, an option
/// of the other frontend or flags after `--` with a graph.
llvm::Expected<bool>
pickFrontend(llvm::StringRef cmd, llvm::ArrayRef<std::string> inputs,
             bool haveCompilerFlags,
             llvm::ArrayRef<const llvm::cl::Option *> graphOnly,
             llvm::ArrayRef<const llvm::cl::Option *> cxxOnly);

} // namespace kbtool

#endif // KB_TOOLS_KBREWRITE_COMMANDLINE_H
