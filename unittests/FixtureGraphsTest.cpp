//===- FixtureGraphsTest.cpp - Every checked-in graph goes through -------===//
//
// Each exported fixture graph (torch 1.13 and torch 2.x) must import, verify,
// survive the analysis pipeline and outlining, and every KernelBench level-2
// graph must contain at least one fusion region.
//
//===----------------------------------------------------------------------===//

#include "kb/Emit/AnalysisReport.h"
#include "kb/Import/TorchScriptImporter.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

namespace {

std::vector<std::string> fixtureGraphs() {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(KB_FIXTURE_DIR, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".graph.txt"))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

class FixtureGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureGraph, ImportsAnalysesAndOutlines) {
  const std::string &path = GetParam();
  mlir::MLIRContext ctx;
  auto module = kb::importGraphFile(ctx, path);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(mlir::succeeded(mlir::verify(**module)));

  mlir::PassManager pm(&ctx);
  kb::buildAnalysisPipeline(pm);
  ASSERT_TRUE(mlir::succeeded(pm.run(**module)));
  kb::AnalysisReport report = kb::buildAnalysisReport(**module, path);

  for (const kb::RegionReport &r : report.regions) {
    EXPECT_FALSE(r.ops.empty());
    EXPECT_LE(r.bytesFused, r.bytesUnfused) << "region r" << r.id;
    // Only a region over tensors with no elements moves nothing (the
    // empty_rows fixture; the code generator writes it no kernel).
    if (r.bytesUnfused > 0)
      EXPECT_GT(r.bytesFused, 0) << "region r" << r.id;
  }
  if (llvm::StringRef(llvm::sys::path::filename(path)).starts_with("level2_")) {
    EXPECT_GE(report.regions.size(), 1u) << path;
  }

  mlir::PassManager outline(&ctx);
  outline.addPass(kb::createOutline());
  ASSERT_TRUE(mlir::succeeded(outline.run(**module)));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(**module)));
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string name =
      llvm::sys::path::parent_path(info.param).rsplit('/').second.str() + "_" +
      llvm::sys::path::stem(info.param).str();
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureGraph,
                         ::testing::ValuesIn(fixtureGraphs()), testName);

TEST(FixtureGraphs, ThereAreAtLeastTwelve) {
  EXPECT_GE(fixtureGraphs().size(), 12u);
}

} // namespace
