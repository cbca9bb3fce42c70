//===- PromptTest.cpp - Prompt templates and kernel extraction ------------===//

#include "kb/Model/Prompt.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace kb::model;

namespace {

KernelSpec spec() {
  KernelSpec s;
  s.name = "kb_region_0";
  s.kind = "pointwise";
  s.pytorch = "def _kb_region_0_reference(in0, in1):\n    return (in0 + in1,)";
  s.kbIR = "kb.kernel @kb_region_0 {...}";
  s.tensors = "in0: input [4, 8]\nin1: input [8]\nout0: output [4, 8]";
  s.signature = "extern \"C\" __global__ void kb_region_0(const float* __restrict__ in0, "
                "const float* __restrict__ in1, float* __restrict__ out0)";
  s.grid = "ceil_div(32, 256), 1, 1";
  s.block = "256, 1, 1";
  s.example = "extern \"C\" __global__ void k(float* o) { o[0] = 1.f; }";
  s.exampleKind = "pointwise";
  s.baselineMs = 0.5;
  s.eagerMs = 1.25;
  s.copyGBs = 4000;
  s.bytes = 2'000'000'000;
  s.gpu = "NVIDIA H200";
  return s;
}

const char *kGood = "extern \"C\" __global__ void kb_region_0(const float* __restrict__ in0,\n"
                    "    const float* __restrict__ in1, float* __restrict__ out0) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < 32) out0[i] = in0[i] + in1[i % 8];\n}\n";

} // namespace

TEST(Prompt, DraftCarriesTheSpec) {
  auto t = PromptTemplates::load();
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto m = draftMessages(*t, spec(), /*profile=*/false);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].role, "system");
  const std::string &u = (*m)[1].content;
  for (const char *needle : {"def _kb_region_0_reference(in0, in1)", "kb.kernel @kb_region_0",
                             "in1: input [8]", "__restrict__ out0)", "grid = (ceil_div(32, 256), 1, 1)",
                             "A verified kernel of the same kind (pointwise)"})
    EXPECT_NE(u.find(needle), std::string::npos) << needle << "\n" << u;
  EXPECT_EQ(u.find("{{"), std::string::npos) << "unfilled placeholder\n" << u;
  EXPECT_EQ(u.find("0.5000 ms"), std::string::npos); // no profile in a draft
}

TEST(Prompt, ProfileAddsMeasurements) {
  auto t = PromptTemplates::load();
  auto m = draftMessages(*t, spec(), /*profile=*/true);
  ASSERT_TRUE(bool(m));
  const std::string &u = (*m)[1].content;
  EXPECT_NE(u.find("time 0.5000 ms for 2000.0 MB of traffic: 4000 GB/s"), std::string::npos) << u;
  EXPECT_NE(u.find("roofline bound is 0.5000 ms"), std::string::npos) << u;
  EXPECT_NE(u.find("eager PyTorch operations take 1.2500 ms"), std::string::npos) << u;
  EXPECT_NE(u.find("on NVIDIA H200"), std::string::npos) << u;
}

TEST(Prompt, RepairAppendsReplyAndFeedback) {
  auto t = PromptTemplates::load();
  auto draft = draftMessages(*t, spec(), false);
  auto r = repairMessages(*t, spec(), *draft, "my kernel", "wrong_result",
                          "max |error| 3.2 at out0[17]");
  ASSERT_TRUE(bool(r));
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[2].role, "assistant");
  EXPECT_EQ((*r)[2].content, "my kernel");
  EXPECT_NE((*r)[3].content.find("Result: wrong_result"), std::string::npos);
  EXPECT_NE((*r)[3].content.find("out0[17]"), std::string::npos);
}

TEST(Prompt, EditedTemplatesOverrideAndTyposAreErrors) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("kb-prompts", dir);
  std::ofstream(std::string(dir) + "/draft.txt") << "Implement {{signature}} for {{pytorhc}}\n";
  auto t = PromptTemplates::load(dir);
  ASSERT_TRUE(bool(t));
  auto m = draftMessages(*t, spec(), false);
  ASSERT_FALSE(bool(m));
  std::string msg = llvm::toString(m.takeError());
  EXPECT_NE(msg.find("draft.txt' uses {{pytorhc}}"), std::string::npos) << msg;
  std::ofstream(std::string(dir) + "/draft.txt") << "Implement {{signature}}\n";
  auto t2 = PromptTemplates::load(dir);
  auto m2 = draftMessages(*t2, spec(), false);
  ASSERT_TRUE(bool(m2));
  EXPECT_EQ((*m2)[1].content.rfind("Implement extern", 0), 0u);
  llvm::sys::fs::remove_directories(dir);
}

TEST(Extract, CodeBlockAmidChatter) {
  std::string reply = std::string("Sure! Here is an optimized kernel.\n\n```cuda\n") + kGood +
                      "```\n\nIt uses one thread per element.";
  auto k = extractKernel(reply, "kb_region_0");
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(*k, kGood);
}

TEST(Extract, PicksTheBlockWithTheEntryPoint) {
  std::string reply = std::string("```python\nx = 1\n```\nand\n```\n") + kGood + "```\n";
  auto k = extractKernel(reply, "kb_region_0");
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(*k, kGood);
}

TEST(Extract, Rejections) {
  auto why = [](const std::string &reply) {
    auto k = extractKernel(reply, "kb_region_0");
    return k ? std::string("accepted") : llvm::toString(k.takeError());
  };
  EXPECT_NE(why(kGood).find("no fenced code block"), std::string::npos);
  EXPECT_NE(why("```cuda\n__global__ void kb_region_0(float* o) {\n  o[0] =").find("truncated"),
            std::string::npos);
  EXPECT_NE(why("```cuda\n__global__ void other(float* o) {}\n```").find("required entry point"),
            std::string::npos);
  EXPECT_NE(why(std::string("```cuda\n") + kGood + "int main() { return 0; }\n```")
                .find("host code"),
            std::string::npos);
  EXPECT_NE(why(std::string("```cuda\n#include <iostream>\n") + kGood + "```").find("iostream"),
            std::string::npos);
  EXPECT_NE(why(std::string("```cuda\n") + kGood +
                "__global__ void k2(float* p) { cudaMalloc(&p, 4); }\n```")
                .find("static check"),
            std::string::npos);
}
