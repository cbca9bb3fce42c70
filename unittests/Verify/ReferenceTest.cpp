//===- ReferenceTest.cpp - The reference runs in libtorch on the CPU ------===//

#include "Compile.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kb::verify;

TEST(Reference, RunsTheGraphInFloat64AndFloat32) {
  Reference ref("graph(%x : Tensor, %b : Tensor):\n"
                "  %one : int = prim::Constant[value=1]()\n"
                "  %s : Tensor = aten::add(%x, %b, %one)\n"
                "  %y : Tensor = aten::relu(%s)\n"
                "  %z : Tensor = aten::exp(%x)\n"
                "  return (%y, %z)\n");
  HostTensor x{{2, 3}, {-1, 0.5, 2, -3, 0.25, 1}};
  HostTensor b{{3}, {0.5, 0.5, -4}};
  ReferenceOutputs out = ref.run({x, b});
  ASSERT_EQ(out.truth64.size(), 2u);
  EXPECT_EQ(out.shapes[0], (std::vector<int64_t>{2, 3}));
  const std::vector<double> expectY = {0, 1, 0, 0, 0.75, 0};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out.truth64[0][i], expectY[i]);
    EXPECT_EQ(out.eager32[0][i], static_cast<float>(expectY[i]));
    EXPECT_DOUBLE_EQ(out.truth64[1][i], std::exp(double(x.data[i])));
    EXPECT_EQ(out.eager32[1][i], std::exp(x.data[i]));
  }
}

TEST(Reference, MalformedIRIsAnError) {
  EXPECT_THROW(Reference("graph(%x : Tensor):\n  return (%nope)\n"),
               std::exception);
}

TEST(Compile, NvrtcCompilesForSeveralArchitecturesWithoutAGpu) {
  std::string src = "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.f; }";
  for (const char *arch : {"sm_75", "sm_80", "sm_90"}) {
    CompileResult r = compileCandidate(src, "k", arch);
    EXPECT_TRUE(r.ok) << arch << ": " << r.log;
    EXPECT_GT(r.cubin.size(), 0u);
    EXPECT_EQ(r.loweredEntry, "k");
  }
  CompileResult bad = compileCandidate("__global__ void k( {", "k", "sm_90");
  EXPECT_EQ(bad.status, "compile_error");
  EXPECT_NE(bad.log.find("error"), std::string::npos);
}
