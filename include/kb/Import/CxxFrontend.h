//===- CxxFrontend.h - libTooling driver over libtorch sources ---*- C++ -*-===//
//
// Runs the chain finder (CxxChains.h) over C++ sources with the compile
// flags of a compilation database (`-p BUILD_DIR`, compile_commands.json) or
// given after `--`. Parse errors are reported with their locations, and no
// chain is taken from a file that did not parse.
//
//===----------------------------------------------------------------------===//
#ifndef KB_IMPORT_CXXFRONTEND_H
#define KB_IMPORT_CXXFRONTEND_H

#include "kb/Import/CxxChains.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kb {

struct CxxInputs {
  std::vector<std::string> files;
  std::string buildDir;                   // -p; "" = none
  std::vector<std::string> flags;         // after `--`
  bool haveFlags = false;                 // `--` was given (maybe empty)
  /// Where "parsing a.cpp (1/3)" and its time go as each file is parsed
  /// (a translation unit with libtorch's headers takes seconds); none when
  /// null.
  llvm::raw_ostream *progress = nullptr;
};

/// True for the file names the C++ frontend takes (.cpp .cc .cxx .cu .h ...).
bool isCxxSource(llvm::StringRef path);

/// Parses every file and collects its chains; an error names the file and
/// says what to pass (-p or --) when no compile command is known.
llvm::Expected<CxxAnalysis> analyzeCxxSources(const CxxInputs &in);

} // namespace kb

#endif // KB_IMPORT_CXXFRONTEND_H
