//===- ModelReplyFuzzer.cpp - libFuzzer target for the model-reply path --===//
//
// Build and run with scripts/fuzz-reply (clang-22, -fsanitize=fuzzer,
// address,undefined). A model's reply is untrusted bytes: kernel extraction,
// kb-verify's static check, the text made printable and the transcript
// record must each end in a result or an error, never a crash, a hang or an
// exception (an invalid UTF-8 reply once aborted a run in the transcript
// writer).
//
//===----------------------------------------------------------------------===//

#include "kb/Model/Prompt.h"
#include "kb/Model/Search.h"
#include "kb/Support/Printable.h"
#include "kb/Verify/Checks.h"

#include "llvm/Support/JSON.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string reply(reinterpret_cast<const char *>(data), size);
  auto kernel = kb::model::extractKernel(reply, "kb_region_0");
  std::string detail;
  if (kernel) {
    auto rej = kb::verify::staticCheck(*kernel, "kb_region_0");
    detail = rej ? rej->detail : "";
  } else {
    detail = llvm::toString(kernel.takeError());
  }
  // Whatever the reply, the text shown and logged is printable UTF-8.
  std::string shown = kb::printable(detail + reply);
  if (!llvm::json::isUTF8(shown))
    abort();
  for (char c : shown)
    if ((unsigned char)c < 0x20 || c == 0x7f)
      abort();
  kb::model::Transcript transcript; // in memory
  transcript.write({{"kind", "response"}, {"text", reply}, {"error", detail}});
  (void)kb::verify::ptxCheck(reply);
  return 0;
}
