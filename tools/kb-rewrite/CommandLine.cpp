//===- CommandLine.cpp - What every kb-rewrite subcommand shares ----------===//

#include "CommandLine.h"

#include "kb/Driver/Failure.h"
#include "kb/Import/CxxFrontend.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

int kbtool::fail(ExitCode code, const Twine &msg) {
  std::string text = msg.str();
  // Errors from the parser already carry "file:line:col: error:".
  if (StringRef(text).contains(": error:") ||
      StringRef(text).starts_with("error:"))
    errs() << text;
  else
    WithColor::error(errs(), "kb-rewrite") << text;
  if (!StringRef(text).ends_with("\n"))
    errs() << "\n";
  return code;
}

/// Reports `err`; its kind (Failure.h) is the exit code.
int kbtool::fail(Error err, kb::driver::FailureKind fallback) {
  auto [kind, msg] = kb::driver::takeFailure(std::move(err), fallback);
  return fail(ExitCode(kind), msg);
}

/// The first of `opts` given on the command line, spelled as given.
std::string kbtool::firstGiven(ArrayRef<const cl::Option *> opts) {
  for (const cl::Option *o : opts)
    if (o->getNumOccurrences())
      return (o->ArgStr.size() == 1 ? "-" : "--") + o->ArgStr.str();
  return "";
}

cl::SubCommand &kbtool::codegenCommand() {
  static cl::SubCommand cmd(
      "codegen", "Write a CUDA kernel and a kb-verify job per region");
  return cmd;
}

/// Whether `inputs` are C++ sources (every one) rather than one graph; a
/// usage error names what is wrong with a mix, several graphs, an option
/// of the other frontend or flags after `--` with a graph.
Expected<bool> kbtool::pickFrontend(StringRef cmd, ArrayRef<std::string> inputs,
                                    bool haveCompilerFlags,
                                    ArrayRef<const cl::Option *> graphOnly,
                                    ArrayRef<const cl::Option *> cxxOnly) {
  using kb::driver::FailureKind;
  auto usage = [&](const Twine &msg) {
    return kb::driver::failure(FailureKind::Usage, cmd + ": " + msg);
  };
  size_t cxx = llvm::count_if(
      inputs, [](const std::string &f) { return kb::isCxxSource(f); });
  if (cxx && cxx != inputs.size())
    for (const std::string &f : inputs)
      if (!kb::isCxxSource(f))
        return usage("'" + f +
                     "' is not a C++ source (.cpp, .cc, .cxx, .cu, .h, ...): "
                     "give one graph or only C++ sources");
  if (cxx) {
    if (std::string o = firstGiven(graphOnly); !o.empty())
      return usage(o + " applies to graphs, not to C++ sources (see " +
                   "kb-rewrite " + cmd + " --help)");
    return true;
  }
  if (inputs.size() != 1)
    return usage("one graph at a time (" + Twine(inputs.size()) +
                 " inputs given); C++ sources end in .cpp, .cc, .cxx or .cu");
  if (std::string o = firstGiven(cxxOnly); !o.empty())
    return usage(o + " applies to C++ sources, not to the graph '" + inputs[0] +
                 "'");
  if (haveCompilerFlags)
    return usage("flags after -- apply to C++ sources, not to the graph '" +
                 inputs[0] + "'");
  return false;
}
