//===- VerifyCoreTest.cpp - kb-verify's host-side logic -------------------===//

#include "kb/Verify/Checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace kb::verify;

namespace {

const char *kJob = R"JSON({
  "schema_version": 1, "id": "relu",
  "reference": "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n",
  "inputs": [{"name": "x", "shape": [4, 6]}],
  "outputs": [{"name": "y", "shape": [4, 6]}],
  "candidate": {"source": "extern \"C\" __global__ void k(const float* x, float* y, long long n) {}",
                "entry": "k",
                "args": [{"tensor": "x"}, {"tensor": "y"}, {"int64": "numel_y"}],
                "launch": {"grid": ["ceil_div(numel_y, 256)"], "block": [256]},
                "shape_generic": true}
})JSON";

/// The JobError message parseJob gives for `text`, or "no error".
std::string message(const std::string &text) {
  try {
    parseJob(text);
  } catch (const JobError &e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace

TEST(Job, ParsesAndRoundTrips) {
  Job job = parseJob(kJob);
  EXPECT_EQ(job.id, "relu");
  EXPECT_EQ(job.inputs[0].shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(job.candidate.args.size(), 3u);
  EXPECT_EQ(job.candidate.args[2].kind, ArgSpec::Kind::Int64);
  EXPECT_EQ(job.candidate.launch.block,
            (std::vector<std::string>{"256", "1", "1"}));
  EXPECT_EQ(job.checks.trials, 5);
  Job again = parseJob(toJson(job));
  EXPECT_EQ(toJson(again), toJson(job));
}

TEST(Job, ErrorsNameThePath) {
  EXPECT_NE(message("{").find("invalid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"schema_version": 2})").find("unsupported version 2"),
            std::string::npos);
  std::string badShape = kJob;
  badShape.replace(badShape.find("[4, 6]"), 6, "[4, -6]");
  EXPECT_NE(message(badShape).find("job.inputs[0].shape[1]"),
            std::string::npos);
  std::string badArg = kJob;
  badArg.replace(badArg.find(R"({"tensor": "x"})"), 15, R"({"tensor": "q"})");
  EXPECT_NE(message(badArg).find("names no input or output 'q'"),
            std::string::npos);
  std::string fewTrials = kJob;
  fewTrials.insert(fewTrials.rfind('}'), R"(, "checks": {"trials": 2})");
  EXPECT_NE(message(fewTrials).find("at least 5 trials"), std::string::npos);
}

TEST(Job, OutputAndInputDtypes) {
  // argmax / argmin jobs declare int64 outputs (compared exactly);
  // float16 / bfloat16 tensors are inputs and outputs of 16-bit regions;
  // an int64 input, a bool output or another dtype is an error naming the
  // field.
  std::string text = kJob;
  const std::string y = R"({"name": "y", "shape": [4, 6]})";
  text.replace(text.find(y), y.size(),
               R"({"name": "y", "shape": [4, 6], "dtype": "int64"})");
  Job job = parseJob(text);
  EXPECT_EQ(job.outputs[0].dtype, "int64");
  EXPECT_EQ(parseJob(toJson(job)).outputs[0].dtype, "int64");
  std::string input = kJob;
  input.replace(input.find(R"([4, 6]}],)"), 9,
                R"([4, 6], "dtype": "int64"}],)");
  EXPECT_NE(message(input).find("job.inputs[0].dtype: inputs are float32, "
                                "float16, bfloat16 or bool"),
            std::string::npos)
      << message(input);
  // A bool input (a mask) round-trips; a bool output is an error.
  std::string mask = kJob;
  mask.replace(mask.find(R"([4, 6]}],)"), 9, R"([4, 6], "dtype": "bool"}],)");
  EXPECT_EQ(parseJob(toJson(parseJob(mask))).inputs[0].dtype, "bool");
  std::string boolOut = text;
  boolOut.replace(boolOut.find("int64"), 5, "bool");
  EXPECT_NE(message(boolOut).find("outputs are float32, float16, bfloat16 "
                                  "or int64, got 'bool'"),
            std::string::npos)
      << message(boolOut);
  std::string half = text;
  half.replace(half.find("int64"), 5, "float16");
  EXPECT_EQ(parseJob(toJson(parseJob(half))).outputs[0].dtype, "float16");
  std::string bf = kJob;
  bf.replace(bf.find(R"([4, 6]}],)"), 9, R"([4, 6], "dtype": "bfloat16"}],)");
  EXPECT_EQ(parseJob(toJson(parseJob(bf))).inputs[0].dtype, "bfloat16");
  std::string f64 = text;
  f64.replace(f64.find("int64"), 5, "float64");
  EXPECT_NE(message(f64).find("got 'float64'"), std::string::npos)
      << message(f64);
}

TEST(Job, StridedViewsFixTheirShapes) {
  // A transposed input and an output laid out alike (a permutation) survive
  // the round trip; strides of another rank, an output with gaps, and
  // strides on a shape-generic candidate are errors naming the field.
  std::string text = kJob;
  text.replace(text.find(R"("shape_generic": true)"), 21,
               R"("shape_generic": false)");
  const std::string x = R"({"name": "x", "shape": [4, 6]})";
  const std::string y = R"({"name": "y", "shape": [4, 6]})";
  std::string strided = text;
  strided.replace(strided.find(x), x.size(),
                  R"({"name": "x", "shape": [4, 6], "strides": [1, 4]})");
  strided.replace(strided.find(y), y.size(),
                  R"({"name": "y", "shape": [4, 6], "strides": [1, 4]})");
  Job job = parseJob(strided);
  EXPECT_EQ(job.inputs[0].strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(parseJob(toJson(job)).outputs[0].strides,
            (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(stridedSpan({4, 6}, {1, 4}), 24);
  EXPECT_EQ(stridedSpan({4, 6}, {1, 8}), 44);
  std::string rank = strided;
  rank.replace(rank.find("[1, 4]"), 6, "[1]");
  EXPECT_NE(message(rank).find("job.inputs[0].strides: expected one stride "
                               "per dim"),
            std::string::npos)
      << message(rank);
  std::string gaps = strided;
  gaps.replace(gaps.rfind("[1, 4]"), 6, "[1, 8]");
  EXPECT_NE(message(gaps).find("job.outputs[0].strides"), std::string::npos)
      << message(gaps);
  std::string generic = kJob;
  generic.replace(generic.find(x), x.size(),
                  R"({"name": "x", "shape": [4, 6], "strides": [1, 4]})");
  EXPECT_NE(message(generic).find("need a fixed-shape candidate"),
            std::string::npos)
      << message(generic);
}

TEST(Job, WorkspaceAndGridSync) {
  // A split row kernel's job: a zeroed workspace argument and a
  // cooperative launch; both survive the round trip, and a workspace
  // argument without a size, or a grid_sync that is not a boolean, is an
  // error naming the field.
  std::string text = kJob;
  text.replace(text.find(R"({"int64": "numel_y"})"), 20,
               R"({"workspace": true})");
  text.replace(text.find(R"("block": [256]})"), 15,
               R"("block": [256], "workspace_bytes": "4096",
                  "grid_sync": true})");
  Job job = parseJob(text);
  EXPECT_EQ(job.candidate.args[2].kind, ArgSpec::Kind::Workspace);
  EXPECT_EQ(job.candidate.launch.workspaceBytes, "4096");
  EXPECT_TRUE(job.candidate.launch.gridSync);
  Job again = parseJob(toJson(job));
  EXPECT_EQ(toJson(again), toJson(job));
  EXPECT_TRUE(again.candidate.launch.gridSync);
  std::string noSize = text;
  noSize.replace(noSize.find(R"("4096")"), 6, R"("0")");
  EXPECT_NE(message(noSize).find("job.candidate.launch.workspace_bytes"),
            std::string::npos);
  std::string badSync = text;
  badSync.replace(badSync.find("\"grid_sync\": true"), 17, "\"grid_sync\": 1");
  EXPECT_NE(message(badSync).find("job.candidate.launch.grid_sync"),
            std::string::npos);
  std::string badArg = text;
  badArg.replace(badArg.find(R"({"workspace": true})"), 19,
                 R"({"workspace": 1})");
  EXPECT_NE(message(badArg).find("workspace: expected true"),
            std::string::npos);
}

TEST(Verdict, RoundTrips) {
  Verdict v;
  v.id = "x";
  v.status = VerdictStatus::WrongResult;
  v.detail = "max error";
  v.candidateTiming = Timing{1.5, 1.2, 2.0, 20};
  v.shapesChecked = {{3, 4}, {5}};
  v.eagerMismatches = 17;
  Verdict w = parseVerdict(toJson(v));
  EXPECT_EQ(w.eagerMismatches, 17);
  // A verdict without the field (an older kb-verify): not measured.
  EXPECT_EQ(
      parseVerdict(R"({"id": "y", "status": "accepted"})").eagerMismatches, -1);
  EXPECT_EQ(w.status, VerdictStatus::WrongResult);
  EXPECT_FALSE(w.accepted());
  ASSERT_TRUE(w.candidateTiming.has_value());
  EXPECT_EQ(w.candidateTiming->runs, 20);
  EXPECT_FALSE(w.eagerTiming.has_value());
  EXPECT_EQ(w.shapesChecked, v.shapesChecked);
}

class CompareTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (int i = 0; i < 64; ++i) {
      double r = std::sin(i * 0.37) * 3.0;
      ref.push_back(r);
      eager.push_back(static_cast<float>(r));
    }
    cand = eager;
  }
  Comparison run(uint32_t poison = kPoisonA) {
    return compareOutput(cand.data(), eager.data(), ref.data(), ref.size(), 8.0,
                         poison);
  }
  std::vector<double> ref;
  std::vector<float> eager, cand;
};

TEST_F(CompareTest, IdenticalToEagerPasses) {
  Comparison c = run();
  EXPECT_EQ(c.status, VerdictStatus::Accepted);
  EXPECT_TRUE(c.allclose1e4);
}

TEST_F(CompareTest, AFewUlpsPass) {
  for (float &x : cand)
    x = std::nextafter(std::nextafter(x, 1e9f), 1e9f);
  EXPECT_EQ(run().status, VerdictStatus::Accepted);
}

TEST_F(CompareTest, HalfPrecisionErrorFails) {
  // fp16 keeps 11 bits: a relative error of 2^-11 is far past 8x fp32's.
  cand[17] = static_cast<float>(ref[17] * (1 + std::ldexp(1.0, -11)));
  Comparison c = run();
  EXPECT_EQ(c.status, VerdictStatus::WrongResult);
  EXPECT_NE(c.detail.find("index 17"), std::string::npos) << c.detail;
  EXPECT_TRUE(c.allclose1e2);
}

TEST_F(CompareTest, PoisonLeftIsUnwritten) {
  cand[63] = fromBits(kPoisonB);
  Comparison c = run(kPoisonB);
  EXPECT_EQ(c.status, VerdictStatus::UnwrittenOutput);
  EXPECT_NE(c.detail.find("first at index 63"), std::string::npos);
  cand[63] = fromBits(kPoisonA);
  EXPECT_EQ(run(kPoisonA).status, VerdictStatus::UnwrittenOutput);
}

TEST_F(CompareTest, NanAndInfPositionsMustMatchEager) {
  ref[5] = std::numeric_limits<double>::quiet_NaN();
  ref[6] = -std::numeric_limits<double>::infinity();
  eager[5] = std::numeric_limits<float>::quiet_NaN();
  cand[5] = 0.f;
  EXPECT_EQ(run().status, VerdictStatus::NanMismatch);
  cand[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(run().status, VerdictStatus::Accepted);
  eager[6] = -std::numeric_limits<float>::infinity();
  cand[6] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run().status, VerdictStatus::NanMismatch);
  cand[6] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(run().status, VerdictStatus::Accepted);
  cand[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(run().status, VerdictStatus::NanMismatch);
}

TEST_F(CompareTest, HugeValuesDoNotWidenTheBoundOfOrdinaryOnes) {
  // A special-value trial: one element near FLT_MAX must not let an error of
  // 0.5 on an ordinary element pass.
  ref[0] = 3e38;
  eager[0] = 3e38f;
  cand[0] = 3e38f;
  EXPECT_EQ(run().status, VerdictStatus::Accepted);
  cand[9] = eager[9] + 0.5f;
  EXPECT_EQ(run().status, VerdictStatus::WrongResult);
  cand[9] = eager[9];
  // And the huge element itself is held to a relative bound.
  cand[0] = 2.9e38f;
  Comparison c = run();
  EXPECT_EQ(c.status, VerdictStatus::WrongResult);
  EXPECT_NE(c.detail.find("magnitude > 1e30"), std::string::npos) << c.detail;
}

TEST_F(CompareTest, HugeValuesAreHeldToEagersWorstRelativeError) {
  // exp(x - mean) near 4.6e37 (gen-20261212 task 5): eager is 4e-5 off at
  // one huge element and exact at another; a candidate 3e-5 off at the
  // second is within 8x eager's relative error, 5e-4 off is not.
  ref[0] = 4.6e37;
  eager[0] = static_cast<float>(4.6e37 * (1 + 4e-5));
  cand[0] = eager[0];
  ref[1] = 3e37;
  eager[1] = 3e37f;
  cand[1] = static_cast<float>(3e37 * (1 + 3e-5));
  EXPECT_EQ(run().status, VerdictStatus::Accepted);
  EXPECT_NEAR(hugeEagerRelError(eager.data(), ref.data(), ref.size()), 4e-5,
              1e-6);
  cand[1] = static_cast<float>(3e37 * (1 + 5e-4));
  EXPECT_EQ(run().status, VerdictStatus::WrongResult);
  // Without eager's error at element 0, 2^-23 is the relative bound.
  eager[0] = 4.6e37f;
  cand[0] = eager[0];
  cand[1] = static_cast<float>(3e37 * (1 + 3e-5));
  EXPECT_EQ(run().status, VerdictStatus::WrongResult);
}

TEST_F(CompareTest, TheTruthsInfStandsWhereEagerStayedFinite) {
  // exp(x - mean) where eager's float sum overflowed (mean +Inf, exp(-Inf)
  // = 0) and the float64 truth is +Inf: the candidate's +Inf is the truth.
  ref[3] = std::numeric_limits<double>::infinity();
  eager[3] = 0.f;
  cand[3] = std::numeric_limits<float>::infinity();
  Comparison c = run();
  EXPECT_EQ(c.status, VerdictStatus::Accepted) << c.detail;
  EXPECT_FALSE(c.allclose1e4); // KernelBench compares with eager's 0
  cand[3] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(run().status, VerdictStatus::NanMismatch);
  cand[3] = 0.f; // eager's value: finite, so held to the bound
  EXPECT_NE(run().status, VerdictStatus::NanMismatch);
}

TEST_F(CompareTest, ConstantOutputFails) {
  for (float &x : cand)
    x = 0.5f;
  EXPECT_EQ(run().status, VerdictStatus::WrongResult);
}

TEST(StaticCheck, AcceptsPlainKernelsRejectsEscapes) {
  std::string ok = "extern \"C\" __global__ void k(float* y) { y[0] = 1; }";
  EXPECT_FALSE(staticCheck(ok, "k").has_value());
  // Words inside comments and strings do not count.
  EXPECT_FALSE(staticCheck("// malloc( here is fine\n" + ok, "k").has_value());
  auto status = [](const std::string &src, const std::string &entry = "k") {
    auto r = staticCheck(src, entry);
    return r ? std::string(statusName(r->status)) : std::string("ok");
  };
  EXPECT_EQ(
      status(ok +
             " __global__ void c(){} __global__ void d(){ c<<<1,1>>>(); }"),
      "forbidden_construct");
  EXPECT_EQ(status("__global__ void k(){ float* p = (float*)malloc(4); }"),
            "forbidden_construct");
  EXPECT_EQ(status("#include <cstdio>\n" + ok), "forbidden_construct");
  EXPECT_EQ(status("#include <cuda_fp16.h>\n" + ok), "ok");
  // Includes are read as the preprocessor reads them: a macro, a digraph,
  // a comment or a line splice does not get a host file past the list.
  for (const char *escape :
       {"#define P \"/etc/passwd\"\n#include P\n",
        "%:include \"/etc/passwd\"\n", "#include /* x */ \"/etc/passwd\"\n",
        "#\\\ninclude \"/etc/passwd\"\n", "  # include_next <cstdio>\n",
        "#embed \"/etc/passwd\"\n",
        "#if __has_include(\"/etc/hosts\")\n#endif\n",
        "#include <cuda_fp16.h> <cstdio>\n"})
    EXPECT_EQ(status(escape + ok), "forbidden_construct") << escape;
  EXPECT_EQ(status(" %: include <cuda_bf16.h> // fp16 too\n" + ok), "ok");
  EXPECT_EQ(status("const char* s = \"#include <cstdio>\";\n" + ok), "ok");
  EXPECT_EQ(status(ok + "\nint main() { return 0; }"), "forbidden_construct");
  EXPECT_EQ(status(ok, "other"), "entry_point_missing");
}

TEST(StaticCheck, CodeIsReadAsTheCompilerReadsIt) {
  auto status = [](const std::string &src) {
    auto r = staticCheck(src, "k");
    return r ? std::string(statusName(r->status)) : std::string("ok");
  };
  std::string ok = "extern \"C\" __global__ void k(float* y) { y[0] = 1; }\n";
  // Code a naive string scanner would read as inside a literal: after a raw
  // string holding a quote, after a digit separator, or split by a line
  // splice, the rules still see it.
  for (const char *hidden :
       {"const char* r = R\"(\")\"; __host__ void h() {} const char* t = "
        "\"(\";\n",
        "const char* r = u8R\"x(\")x\"; int main() { return 0; } // \"\n",
        "int a = 1'0; __host__ void h() {} char c = '0';\n",
        "__ho\\\nst__ void h() {}\n",
        "void g() { float* p = (float*)mal\\\nloc(4); }\n"})
    EXPECT_EQ(status(ok + hidden), "forbidden_construct") << hidden;
  // Words inside raw strings and character literals, and digit separators,
  // are not code.
  EXPECT_EQ(status("const char* r = R\"d(__host__ malloc( <<<)d\";\n" + ok),
            "ok");
  EXPECT_EQ(status("const int n = 1'000'000; const char c = '\"';\n" + ok),
            "ok");
}

TEST(StaticCheck, PtxChecksWhatTheSourceCouldHide) {
  std::string body =
      ".visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n";
  EXPECT_FALSE(ptxCheck(body).has_value());
  auto status = [](const std::string &ptx) {
    auto r = ptxCheck(ptx);
    return r ? std::string(statusName(r->status)) + ": " + r->detail : "ok";
  };
  EXPECT_NE(status("mov.u64 %rd1, %globaltimer;\n" + body).find("%globaltimer"),
            std::string::npos);
  // Module-scope variables in global memory written, atomically updated, or
  // whose address reaches a store, an atomic, a call, memory or another
  // declaration (state between launches) are refused; one no instruction
  // names (a header's helper), or only loaded from, directly or through
  // registers derived from its address, is not.
  // (after the header directives NVRTC ends with a newline, not a ';', a
  // comment before that newline included)
  const std::string decl =
      ".version 9.0\n.target sm_90\n\t// .globl\tk\n"
      ".address_size 64 // 64-bit\n.global .align 8 .u64 last_input;\n";
  for (const std::string &use :
       {"st.global.u64 [last_input], %rd1;\n",
        "@%p1 atom.global.add.u64 %rd2, [last_input+8], 1;\n",
        "mov.u64 %rd1, last_input;\ncvta.global.u64 %rd2, %rd1;\n"
        "add.s64 %rd3, %rd2, 8;\nst.global.u32 [%rd3+4], %r1;\n",
        "red.global.add.u64 [last_input], 1;\n",
        // through a vector register pair and back
        "mov.u64 %rd1, last_input;\nmov.b64 {%r1, %r2}, %rd1;\n"
        "mov.b64 %rd5, {%r1, %r2};\n@!%p3 st.global.u32 [%rd5], 0;\n",
        // stored as a value (to reload it later), or passed to a call
        "mov.u64 %rd1, last_input;\nst.local.u64 [%rd9], %rd1;\n",
        "mov.u64 %rd1, last_input;\nst.param.b64 [param0], %rd1;\n",
        // an inline-asm block of its own
        "{\n.reg .u64 %t;\nmov.u64 %t, last_input;\n"
        "atom.global.inc.u32 %r1, [%t], 7;\n}\n",
        // another variable initialised with its address
        ".global .align 8 .u64 ptrs[1] = {generic(last_input)};\n"})
    EXPECT_NE(status(decl + use + body).find("'last_input'"), std::string::npos)
        << use;
  // sinf/cosf's argument reduction reads the math library's table through
  // a pointer it increments (NVRTC 13's PTX, abridged): loads only.
  EXPECT_EQ(
      status(".global .align 4 .b8 __cudart_i2opi_f[24] = {65, 144, 67, 60};\n"
             ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n"
             ".reg .pred %p<9>;\n.reg .b64 %rd<51>;\n"
             "mov.u64 %rd46, __cudart_i2opi_f;\nmov.u64 %rd45, %rd1;\n"
             "$L__BB0_3:\n\tld.global.nc.u32 %r47, [%rd46];\n"
             "mul.wide.u32 %rd24, %r47, %r46;\nst.local.u32 [%rd45], %rd24;\n"
             "add.s64 %rd46, %rd46, 4; // next word\n"
             "setp.ne.s64 %p3, %rd46, %rd7;\n@%p3 bra $L__BB0_3;\n"
             "st.global.f32 [%rd44], %f69;\nret;\n}\n"),
      "ok");
  // double sin/cos: a table read through an offset, next to an inline-asm
  // block after a label (a vector operand's braces inside it).
  EXPECT_EQ(
      status(".global .align 8 .b8 __cudart_sin_cos_coeffs[128] = {186, 94};\n"
             ".visible .entry k()\n{\n$L__BB0_5:\n\t{\n\t.reg .b32 %temp;\n"
             "\tmov.b64 \t{%r925, %temp}, %fd1;\n\t}\n"
             "mov.u64 %rd5, __cudart_sin_cos_coeffs;\n"
             "mul.wide.s32 %rd6, %r925, 8;\nadd.s64 %rd7, %rd5, %rd6;\n"
             "ld.global.nc.f64 %fd2, [%rd7+8];\nret;\n}\n"),
      "ok");
  // A register is a function's own: another function's %rd46 is not the
  // table's address.
  EXPECT_EQ(status(".global .align 4 .b8 tab[8];\n"
                   ".func f()\n{\nmov.u64 %rd46, tab;\n"
                   "ld.global.u32 %r1, [%rd46];\nret;\n}\n"
                   ".visible .entry k()\n{\nst.global.u32 [%rd46], %r1;\n"
                   "ret;\n}\n"),
            "ok");
  EXPECT_EQ(status(decl + "ld.global.u64 %rd1, [last_input];\n" +
                   "@%p2 ld.global.nc.u64 %rd2, [last_input+8];\n" + body),
            "ok");
  EXPECT_EQ(status(decl + "ld.global.u64 %rd1, [last_inputs];\n" + body), "ok");
  EXPECT_EQ(status(".visible .global .align 4 .b8 "
                   "_ZN26__nv_atomic_triv_cp_helperIjE5__valE[4];\n" +
                   body),
            "ok");
  EXPECT_NE(status(".global .align 1 .b8 $str[6] = {116, 114, 117, 110, 99};\n"
                   "mov.u64 %rd12, $str;\ncvta.global.u64 %rd13, %rd12;\n"
                   "st.param.b64 [param0+0], %rd13;\n" +
                   body)
                .find("'$str'"),
            std::string::npos);
  EXPECT_EQ(status(".const .align 4 .b8 tab[8] = {0, 0, 128, 63};\n"
                   "ld.const.f32 %f1, [tab];\nst.global.f32 [%rd2], %f1;\n"
                   "atom.global.add.u32 %r1, [%rd3], 1;\n" +
                   body),
            "ok");
  EXPECT_NE(status("mov.u32 %r1, %clock;\n" + body).find("%clock"),
            std::string::npos);
  EXPECT_NE(status("mov.u64 %rd1, %clock64;\n" + body).find("%clock64"),
            std::string::npos);
  EXPECT_NE(
      status(".extern .func  (.param .b64 func_retval0) malloc\n(\n.param .b64 "
             "malloc_param_0\n)\n;\n" +
             body)
          .find("calls malloc"),
      std::string::npos);
  EXPECT_NE(
      status(".extern .func  (.param .b32 func_retval0) vprintf\n(\n);\n" +
             body)
          .find("calls vprintf"),
      std::string::npos);
  // Names that merely contain the words are fine.
  EXPECT_EQ(status(".visible .func my_malloc_free()\n{\nret;\n}\n%clockwise\n" +
                   body),
            "ok");
}

TEST(Expr, EvaluatesLaunchRules) {
  std::map<std::string, int64_t> v = {{"numel_y", 1000}, {"sm_count", 132}};
  EXPECT_EQ(evalExpr("ceil_div(numel_y, 256)", v), 4);
  EXPECT_EQ(evalExpr("numel_y / 256", v), 3);
  EXPECT_EQ(evalExpr("min(sm_count * 4, ceil_div(numel_y, 128)) + -1", v), 7);
  EXPECT_EQ(evalExpr("(2 + 3) * 4 % 7", v), 6);
  EXPECT_THROW(evalExpr("numel_q", v), JobError);
  EXPECT_THROW(evalExpr("1 / 0", v), JobError);
  EXPECT_THROW(evalExpr("foo(1, 2)", v), JobError);
  EXPECT_THROW(evalExpr("(1", v), JobError);
}

TEST(Shapes, ExtraShapesKeepTheBroadcastPattern) {
  Job job = parseJob(kJob);
  job.inputs.push_back(TensorSpec{"b", {4, 1}});
  std::vector<ShapeSet> sets = deriveExtraShapes(job, 2);
  ASSERT_EQ(sets.size(), 2u);
  for (const ShapeSet &s : sets) {
    EXPECT_NE(s.at("y"), (std::vector<int64_t>{4, 6}));
    EXPECT_EQ(s.at("x"), s.at("y"));
    EXPECT_EQ(s.at("b")[1], 1);            // broadcast dim stays 1
    EXPECT_EQ(s.at("b")[0], s.at("y")[0]); // others follow the output
  }
  // A reduction's input does not broadcast against its output: no guess.
  job.inputs[1].shape = {4, 7};
  EXPECT_TRUE(deriveExtraShapes(job, 2).empty());
}

// Shape-generic claims on jobs whose outputs do not broadcast against the
// inputs: resized inputs, dims of equal size alike; and a large variant.
TEST(Shapes, ResizedInputsKeepEqualDimsEqual) {
  Job job = parseJob(kJob);
  job.inputs = {TensorSpec{"x", {8, 37, 1, 64}}, TensorSpec{"w", {37}}};
  for (int variant : {0, 1}) {
    auto in = resizedInputs(job, variant);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_NE(in["x"][1], 37);
    EXPECT_EQ(in["x"][1], in["w"][0]); // the weight follows the channels
    EXPECT_EQ(in["x"][2], 1);
    EXPECT_NE(in["x"][3], 64);
    if (variant == 0)
      EXPECT_EQ(in["x"][3] % 2, 1); // odd
  }
  auto big = resizedInputs(job, 2);
  ASSERT_EQ(big.size(), 2u);
  EXPECT_GE(numel(big["x"]), int64_t(1) << 22);
  EXPECT_LT(numel(big["x"]), int64_t(1) << 24);
  EXPECT_EQ(big["w"][0], 37); // only the largest dim's size grows
  job.inputs = {TensorSpec{"x", {1 << 12, 1 << 11}}};
  EXPECT_TRUE(resizedInputs(job, 2).empty()); // already large
  job.inputs = {TensorSpec{"x", {1, 1}}};
  EXPECT_TRUE(resizedInputs(job, 0).empty()); // nothing to resize
}

// Every buffer is whole 2 MiB granules of its own, guarded all around.
TEST(Shapes, GuardLayoutCoversTheSlack) {
  for (size_t n :
       {size_t(4), size_t(1) << 20, (size_t(2) << 20) - 4, size_t(3) << 21}) {
    GuardLayout g = guardLayout(n);
    EXPECT_EQ(g.total % kGuardGranule, 0u) << n;
    EXPECT_EQ(g.front, kGuardBytes);
    EXPECT_GE(g.back, kGuardBytes) << n;
    EXPECT_EQ(g.front + g.data + g.back, g.total);
    EXPECT_LT(g.total, n + 2 * kGuardBytes + kGuardGranule);
    EXPECT_EQ(g.front % 256, 0u); // data stays aligned for float4 and more
  }
}

TEST(Cache, Sha256KnownVectorsAndKeys) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(std::string(1000, 'a')).size(), 64u);
  Job job = parseJob(kJob);
  std::string k = cacheKey(job, "H200", "580", "13000", "2.11.0");
  EXPECT_EQ(k, cacheKey(job, "H200", "580", "13000", "2.11.0"));
  EXPECT_NE(k, cacheKey(job, "V100", "580", "13000", "2.11.0"));
  EXPECT_NE(k, cacheKey(job, "H200", "580", "13000", "2.10.0"));
  Job renamed = job;
  renamed.id = "other-id"; // the id does not change what is verified
  EXPECT_EQ(k, cacheKey(renamed, "H200", "580", "13000", "2.11.0"));
  Job edited = job;
  edited.candidate.source += " ";
  EXPECT_NE(k, cacheKey(edited, "H200", "580", "13000", "2.11.0"));
  // A verdict of the previous oracle (its key's material began
  // "kb-verify/1") is not found again.
  EXPECT_GE(kOracleVersion, 2);
  EXPECT_NE(k,
            sha256Hex("kb-verify/1\n" + sha256Hex(job.candidate.source) + "\n" +
                      canonicalJob(job) + "\nH200\n580\n13000\n2.11.0"));
  EXPECT_EQ(k, sha256Hex("kb-verify/" + std::to_string(kOracleVersion) + "\n" +
                         sha256Hex(job.candidate.source) + "\n" +
                         canonicalJob(job) + "\nH200\n580\n13000\n2.11.0"));
}

TEST(Truncate, KeepsHeadAndTail) {
  std::string s(5000, 'x');
  s.replace(0, 4, "HEAD");
  s.replace(4996, 4, "TAIL");
  std::string t = truncateMiddle(s, 300);
  EXPECT_LT(t.size(), 400u);
  EXPECT_EQ(t.substr(0, 4), "HEAD");
  EXPECT_EQ(t.substr(t.size() - 4), "TAIL");
}
