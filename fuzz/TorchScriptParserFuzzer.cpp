//===- TorchScriptParserFuzzer.cpp - libFuzzer target for the parser ------===//
//
// Build and run with scripts/fuzz-parser (clang-22, -fsanitize=fuzzer,
// address,undefined). Any input must either parse or produce a located error.
//
//===----------------------------------------------------------------------===//

#include "kb/Import/TorchScriptIR.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto graph = kb::ts::parseGraph(text, "fuzz.graph.txt");
  if (!graph) {
    std::string msg = llvm::toString(graph.takeError());
    // Every error names the buffer, line and column.
    if (msg.rfind("fuzz.graph.txt:", 0) != 0)
      abort();
  }
  return 0;
}
