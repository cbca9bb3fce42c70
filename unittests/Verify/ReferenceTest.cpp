//===- ReferenceTest.cpp - The reference runs in libtorch on the CPU ------===//

#include "Reference.h"
#include "Compile.h"
#include "Headers.h"
#include "kb/Verify/Checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace kb::verify;

TEST(Reference, RunsTheGraphInFloat64AndFloat32) {
  Reference ref("graph(%x : Tensor, %b : Tensor):\n"
                "  %one : int = prim::Constant[value=1]()\n"
                "  %s : Tensor = aten::add(%x, %b, %one)\n"
                "  %y : Tensor = aten::relu(%s)\n"
                "  %z : Tensor = aten::exp(%x)\n"
                "  return (%y, %z)\n");
  std::vector<float> xs = {-1, 0.5, 2, -3, 0.25, 1};
  at::Tensor x = at::tensor(xs).view({2, 3});
  at::Tensor b = at::tensor(std::vector<float>{0.5, 0.5, -4});
  ReferenceOutputs out = ref.run({x, b});
  ASSERT_EQ(out.truth64.size(), 2u);
  EXPECT_EQ(out.truth64[0].sizes(), at::IntArrayRef({2, 3}));
  EXPECT_EQ(out.truth64[0].scalar_type(), at::kDouble);
  EXPECT_EQ(out.eager32[0].scalar_type(), at::kFloat);
  const std::vector<double> expectY = {0, 1, 0, 0, 0.75, 0};
  at::Tensor y64 = out.truth64[0].view(-1), y32 = out.eager32[0].view(-1);
  at::Tensor z64 = out.truth64[1].view(-1), z32 = out.eager32[1].view(-1);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(y64[i].item<double>(), expectY[i]);
    EXPECT_EQ(y32[i].item<float>(), static_cast<float>(expectY[i]));
    EXPECT_DOUBLE_EQ(z64[i].item<double>(), std::exp(double(xs[i])));
    EXPECT_EQ(z32[i].item<float>(), std::exp(xs[i]));
  }
}

// Special-value trials also run the graph op by op, each op's result
// rounded to float32: a batch norm whose output lies beyond float32's range
// is -Inf there and the hardswish after it NaN, where the float64 truth
// (hardswish of a finite -6e38) is -0.
TEST(Reference, OpByOpFp32RoundsEachOpsResult) {
  Reference ref("graph(%x : Tensor, %w : Tensor, %b : Tensor, %m : Tensor, "
                "%v : Tensor):\n"
                "  %t : bool = prim::Constant[value=1]()\n"
                "  %f : bool = prim::Constant[value=0]()\n"
                "  %mo : float = prim::Constant[value=0.01]()\n"
                "  %eps : float = prim::Constant[value=0.001]()\n"
                "  %y : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %t, "
                "%mo, %eps, %f)\n"
                "  %z : Tensor = aten::hardswish(%y)\n"
                "  %one : int = prim::Constant[value=1]()\n"
                "  %s : Tensor = aten::add(%x, %x, %one)\n"
                "  return (%z, %s, %m)\n");
  // Channel 0: x = +-1, so (x - mean) * rstd = +-1 (to 1e-3) and the
  // output is +-3e38 * 2 = +-6e38; channel 1: ordinary values.
  at::Tensor x =
      at::tensor(std::vector<float>{1, 0.5f, -1, -0.5f}).view({2, 2, 1, 1});
  at::Tensor w = at::tensor(std::vector<float>{3e38f, 1});
  at::Tensor b = at::tensor(std::vector<float>{-3e38f, 0});
  at::Tensor m = at::zeros({2}), v = at::ones({2});
  EXPECT_TRUE(ref.run({x, w, b, m, v}).step32.empty());
  ReferenceOutputs out = ref.run({x, w, b, m, v}, /*sensitivity=*/true);
  ASSERT_EQ(out.step32.size(), 3u);
  EXPECT_EQ(out.step32[0].scalar_type(), at::kFloat);
  // Element 2: batch norm -6e38 in float64, -Inf in fp32; hardswish -> NaN.
  EXPECT_EQ(out.truth64[0][1][0][0][0].item<double>(), 0.0);
  EXPECT_TRUE(std::isnan(out.step32[0][1][0][0][0].item<float>()));
  // Element 0: 3e38 * 0.9995 - 3e38, finite everywhere; and channel 1.
  EXPECT_TRUE(std::isfinite(out.step32[0][0][0][0][0].item<float>()));
  EXPECT_FLOAT_EQ(out.step32[0][0][1][0][0].item<float>(),
                  float(out.truth64[0][0][1][0][0].item<double>()));
  EXPECT_EQ(out.step32[1][1][0][0][0].item<float>(), -2.f);
  // The graph's input returned as an output (the running mean, updated in
  // place by the batch norm as in eager).
  EXPECT_TRUE(out.step32[2].defined());
}

TEST(Reference, InPlaceOpsDoNotChangeTheCallersInputs) {
  Reference ref("graph(%x : Tensor):\n"
                "  %y : Tensor = aten::relu_(%x)\n"
                "  return (%y)\n");
  at::Tensor x = at::tensor(std::vector<float>{-1, 2});
  ref.run({x});
  EXPECT_EQ(x[0].item<float>(), -1.f);
}

TEST(Reference, MasksStayBoolAndAreNotPerturbed) {
  // where(mask, x, -3.4e38): the mask reaches the graph as bool in the
  // float64 truth, the float32 run and the sensitivity runs alike.
  Reference ref("graph(%m : Tensor, %x : Tensor):\n"
                "  %lo : float = prim::Constant[value=-3.4e+38]()\n"
                "  %y : Tensor = aten::where(%m, %x, %lo)\n"
                "  return (%y)\n");
  at::Tensor m = at::tensor(std::vector<uint8_t>{1, 0, 1}).to(at::kBool);
  at::Tensor x = at::tensor(std::vector<float>{1.5f, 2.f, -3.f});
  ReferenceOutputs out = ref.run({m, x}, /*sensitivity=*/true);
  ASSERT_EQ(out.truth64.size(), 1u);
  EXPECT_EQ(out.truth64[0][0].item<double>(), 1.5);
  EXPECT_EQ(out.truth64[0][1].item<double>(), -3.4e38);
  EXPECT_EQ(out.eager32[0][2].item<float>(), -3.f);
  ASSERT_EQ(out.sens64.size(), 1u);
  EXPECT_EQ(out.sens64[0][1].item<double>(), 0.0); // the constant branch
  EXPECT_EQ(m.scalar_type(), at::kBool);
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
  EXPECT_EQ(bad.status, VerdictStatus::CompileError);
  EXPECT_NE(bad.log.find("error"), std::string::npos);
}

// The compiled program is checked too: a timer read in inline PTX (inside
// a string, where the source rules cannot see it), device malloc spelled by
// token pasting, printf.
TEST(Compile, WhatNvrtcProducedIsChecked) {
  const std::string head = "extern \"C\" __global__ void k(float* y) {";
  for (const std::string &body :
       {std::string("unsigned long long t; asm volatile(\"mov.u64 %0, "
                    "%%globaltimer;\" : \"=l\"(t)); y[0] = (float)t; }"),
        std::string("y[0] = (float)(unsigned long long)CAT(mal, loc)(4); }"),
        std::string("printf(\"%f\", y[0]); }"),
        // State that outlives the launch: a counter, a cached pointer.
        std::string(
            "static __device__ unsigned n; y[0] = atomicAdd(&n, 1u); }"),
        std::string("} __device__ float* last; extern \"C\" __global__ void "
                    "k2(float* y) { last = y; }")}) {
    std::string src = "#define CAT(a, b) a##b\n" + head + body;
    CompileResult r = compileCandidate(src, "k", "sm_90");
    EXPECT_EQ(r.status, VerdictStatus::ForbiddenConstruct)
        << body << ": " << r.log;
    EXPECT_FALSE(r.ok);
  }
  CompileResult fine = compileCandidate(head + "y[0] = 1.f; }", "k", "sm_90");
  EXPECT_TRUE(fine.ok) << fine.log;
  // A constant table is not state.
  CompileResult table =
      compileCandidate("__constant__ float tab[4] = {1.f, 2.f, 3.f, 4.f};\n" +
                           head + "y[threadIdx.x] = tab[threadIdx.x & 3]; }",
                       "k", "sm_90");
  EXPECT_TRUE(table.ok) << table.log;
}

// Candidates compile with no include path: every allow-listed header, and
// what it includes, comes from memory.
TEST(Compile, AllowedHeadersCompileFromMemory) {
  std::string src;
  for (const std::string &h : allowedHeaders())
    src += "#include <" + h + ">\n";
  src +=
      "extern \"C\" __global__ void k(float* y) {\n"
      "  y[0] = __half2float(__float2half(cuda::std::sqrt(y[1]))) +\n"
      "         __bfloat162float(__float2bfloat16(y[2])) +\n"
      "         (float)cuda::std::numeric_limits<cuda::std::int32_t>::max();\n"
      "}\n";
  CompileResult r = compileCandidate(src, "k", "sm_90");
  EXPECT_TRUE(r.ok) << r.log;
  const InMemoryHeaders &h = toolkitHeaders();
  EXPECT_GT(h.names.size(), allowedHeaders().size()); // their includes too
  for (const std::string &n : h.names)
    EXPECT_EQ(n.find(".."), std::string::npos) << n;
}

// The closure follows "..." includes from the including file's directory
// and <...> ones from the roots, every branch alike, and leaves out what no
// root has.
TEST(Compile, HeaderClosure) {
  std::string root = ::testing::TempDir() + "kb_headers";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root + "/cuda/std/detail");
  auto write = [&](const std::string &rel, const std::string &text) {
    std::ofstream(root + "/" + rel) << text;
  };
  write("cuda_fp16.h", "#include \"cuda_fp16.hpp\"\n");
  write("cuda_fp16.hpp", "#if 0\n#include <cmath>\n#endif\n");
  write("cuda/std/cmath", "#include \"detail/impl.h\"\n");
  write("cuda/std/detail/impl.h", "  #  include <cuda/std/limits>\n");
  write("cuda/std/limits", "int x;\n");
  InMemoryHeaders h = collectHeaders({root});
  std::set<std::string> names(h.names.begin(), h.names.end());
  EXPECT_EQ(names, (std::set<std::string>{"cuda_fp16.h", "cuda_fp16.hpp",
                                          "cuda/std/cmath", "detail/impl.h",
                                          "cuda/std/limits"}));
  std::filesystem::remove_all(root);
}

// Sensitivity: rows whose result cancels huge terms move by far more than
// one fp32 ulp of the result when the inputs move by one fp32 ulp; ordinary
// rows move by about that ulp.
TEST(Reference, SensitivityFlagsIllConditionedRows) {
  Reference ref("graph(%x : Tensor):\n"
                "  %d : int[] = prim::Constant[value=[1]]()\n"
                "  %k : bool = prim::Constant[value=0]()\n"
                "  %n : NoneType = prim::Constant()\n"
                "  %s : Tensor = aten::sum(%x, %d, %k, %n)\n"
                "  return (%s)\n");
  at::Tensor x = at::tensor(std::vector<float>{1e20f, -1e20f, 1.f, 1.f, 2.f,
                                               3.f})
                     .view({2, 3});
  EXPECT_TRUE(ref.run({x}).sens64.empty());
  ReferenceOutputs out = ref.run({x}, /*sensitivity=*/true);
  ASSERT_EQ(out.sens64.size(), 1u);
  at::Tensor s = out.sens64[0].view(-1);
  EXPECT_GT(s[0].item<double>(), 1e6);
  EXPECT_LE(s[1].item<double>(), 6.0 * std::ldexp(1.0, -23));
}

// A clamp after an ill-conditioned sum: a perturbation that moves the sum
// below the bound moves the result by nothing, so the sensitivity is the
// larger of a perturbation and its mirror image, for every draw.
TEST(Reference, SensitivitySeesPastAClamp) {
  Reference ref("graph(%x : Tensor):\n"
                "  %d : int[] = prim::Constant[value=[1]]()\n"
                "  %k : bool = prim::Constant[value=0]()\n"
                "  %n : NoneType = prim::Constant()\n"
                "  %lo : float = prim::Constant[value=-0.025]()\n"
                "  %s : Tensor = aten::sum(%x, %d, %k, %n)\n"
                "  %c : Tensor = aten::clamp_min(%s, %lo)\n"
                "  return (%c)\n");
  at::Tensor x =
      at::tensor(std::vector<float>{1e20f, -1e20f, -1.f, 1.f, 2.f, 3.f})
          .view({2, 3});
  for (int seed = 0; seed < 16; ++seed) {
    at::manual_seed(seed);
    ReferenceOutputs out = ref.run({x}, /*sensitivity=*/true);
    ASSERT_EQ(out.sens64.size(), 1u);
    at::Tensor s = out.sens64[0].view(-1);
    EXPECT_GT(s[0].item<double>(), 1e6) << "seed " << seed;
    EXPECT_LE(s[1].item<double>(), 12.0 * std::ldexp(1.0, -23));
  }
}

// A 16-bit region: eager runs on the inputs in their own type (each op's
// result rounded to bfloat16 as eager stores it), eager32 holds those
// values widened, outTypes the type, and the op-by-op evaluation rounds
// to bfloat16 too; the truth is float64 from the same (bfloat16) inputs.
TEST(Reference, HalfInputsRunEagerInTheirOwnType) {
  Reference ref("graph(%x : Tensor):\n"
                "  %c : float = prim::Constant[value=0.1]()\n"
                "  %y : Tensor = aten::mul(%x, %c)\n"
                "  %z : Tensor = aten::mul(%y, %c)\n"
                "  return (%z)\n");
  at::Tensor x =
      at::tensor(std::vector<float>{1, 3, -7, 1000}).to(at::kBFloat16);
  ReferenceOutputs out = ref.run({x}, /*sensitivity=*/true);
  ASSERT_EQ(out.outTypes.size(), 1u);
  EXPECT_EQ(out.outTypes[0], at::kBFloat16);
  EXPECT_EQ(out.eager32[0].scalar_type(), at::kFloat);
  // ATen's own bfloat16 ops (on the CPU the scalar is rounded to
  // bfloat16 first; on CUDA it stays a float: kernels follow CUDA's).
  at::Tensor twice = x.mul(0.1).mul(0.1);
  EXPECT_TRUE(at::equal(out.eager32[0], twice.to(at::kFloat)));
  for (int64_t i = 0; i < 4; ++i) {
    double xi = x[i].item<float>(); // bfloat16 inputs are exact
    EXPECT_DOUBLE_EQ(out.truth64[0][i].item<double>(), xi * 0.1 * 0.1);
  }
  // Op by op, each op's float64 result rounded to bfloat16 (eager's
  // rounding points; each op correctly rounded, so within a bfloat16 ulp
  // of eager's float-then-round).
  ASSERT_EQ(out.step32.size(), 1u);
  at::Tensor s = out.step32[0];
  EXPECT_TRUE(at::equal(s, s.to(at::kBFloat16).to(at::kFloat)));
  EXPECT_TRUE(at::allclose(s, twice.to(at::kFloat), 1.0 / 128, 0));
}

// Autocast's form of a layer norm (run80, a fixture rejected as "reference
// failed"): a bfloat16 input widened to float32 for a norm whose weights
// are float32, the result narrowed again. The float64 truth runs the casts
// as float64 (a float32 value would meet float64 weights), and stays
// unrounded where eager rounds.
TEST(Reference, CastsToFloatTypesRunAsFloat64InTheTruth) {
  Reference ref("graph(%x : Tensor, %w : Tensor, %b : Tensor):\n"
                "  %f32 : int = prim::Constant[value=6]()\n"
                "  %bf16 : int = prim::Constant[value=15]()\n"
                "  %no : bool = prim::Constant[value=0]()\n"
                "  %none : NoneType = prim::Constant()\n"
                "  %n : int = prim::Constant[value=4]()\n"
                "  %shape : int[] = prim::ListConstruct(%n)\n"
                "  %eps : float = prim::Constant[value=1e-05]()\n"
                "  %h : Tensor = aten::to(%x, %f32, %no, %no, %none)\n"
                "  %y : Tensor = aten::layer_norm(%h, %shape, %w, %b, %eps, "
                "%no)\n"
                "  %z : Tensor = aten::to(%y, %bf16, %no, %no, %none)\n"
                "  return (%z)\n");
  at::Tensor x = at::tensor(std::vector<float>{1, 3, -7, 1000, 0.5, 2, 4, -1})
                     .view({2, 4})
                     .to(at::kBFloat16);
  at::Tensor w = at::tensor(std::vector<float>{1, 0.5, 2, -1});
  at::Tensor b = at::tensor(std::vector<float>{0, 0.25, 0, 1});
  ReferenceOutputs out = ref.run({x, w, b}, /*sensitivity=*/true);
  ASSERT_EQ(out.truth64.size(), 1u);
  EXPECT_EQ(out.outTypes[0], at::kBFloat16);
  at::Tensor x64 = x.to(at::kDouble);
  at::Tensor expect =
      at::layer_norm(x64, {4}, w.to(at::kDouble), b.to(at::kDouble), 1e-5);
  EXPECT_TRUE(at::allclose(out.truth64[0], expect, 1e-12, 1e-12));
  // Unrounded: the truth is not a bfloat16 value where eager's is.
  EXPECT_FALSE(at::equal(out.truth64[0],
                         out.truth64[0].to(at::kBFloat16).to(at::kDouble)));
  at::Tensor eager = at::layer_norm(x.to(at::kFloat), {4}, w, b, 1e-5)
                         .to(at::kBFloat16)
                         .to(at::kFloat);
  EXPECT_TRUE(at::equal(out.eager32[0], eager));
}
