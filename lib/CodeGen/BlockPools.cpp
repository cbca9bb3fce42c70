//===- BlockPools.cpp - Pooling windows reduced by a whole block ----------===//
//
// One thread per pooled output reads its window serially, in ATen's order:
// with windows of thousands of elements and few outputs, most of the GPU
// idles (seed 20261311 task 2: adaptive_avg_pool2d(4) of 127 x 256 planes
// into an amin, 1.9 ms where ATen takes 0.12). Unequal adaptive windows and
// padded windows have no row form (windowsAsRows, poolsIntoRows), so a
// cooperative kernel evaluates such a pooling with the whole block: every
// thread the same output, the window's elements split over the threads.
//
//===----------------------------------------------------------------------===//

#include "Stages.h"
#include "kb/CodeGen/IndexMath.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int64_t codegen::poolWindowElements(const StageInfo &s) {
  if (!isPoolRecipe(s.recipe) || !s.spatial ||
      llvm::any_of(s.dilation, [](int64_t d) { return d != 1; }))
    return 0;
  return product(widestWindow(s));
}

bool codegen::blockWidePool(const StageInfo &s) {
  return poolWindowElements(s) >= kBlockPoolWindowMin &&
         product(s.outShape) <= 65536;
}

llvm::Error codegen::emitBlockPoolStage(ElementSource &e, const StageInfo &s,
                                        llvm::StringRef idx,
                                        llvm::StringRef result,
                                        llvm::raw_ostream &os,
                                        llvm::StringRef indent) {
  int64_t k = s.spatial;
  ArrayRef<int64_t> inSp = ArrayRef<int64_t>(s.inShape).take_back(k);
  ArrayRef<int64_t> outSp = ArrayRef<int64_t>(s.outShape).take_back(k);
  bool adaptive = isAdaptivePoolRecipe(s.recipe);
  bool mx = s.recipe == Recipe::MaxPool || s.recipe == Recipe::AdaptiveMaxPool;
  std::vector<int64_t> inStride(k, 1), outStride(k, 1);
  for (int64_t d = k - 2; d >= 0; --d) {
    inStride[d] = inStride[d + 1] * inSp[d + 1];
    outStride[d] = outStride[d + 1] * outSp[d + 1];
  }
  std::string in = indent.str(), O = "(" + idx.str() + ")";
  os << in << "const long long wplane = " << O << " / " << product(outSp)
     << "LL;\n";
  for (int64_t d = 0; d < k; ++d)
    os << in << "const int wp" << d << " = (int)((" << O << " / "
       << outStride[d] << "LL) % " << outSp[d] << "LL);\n";
  auto [count, padded] =
      emitWindowBounds(s, "w", !mx && s.countIncludePad && !s.divisor, os, in);
  std::string in2 = in + "  ";
  os << in << "const int wcnt = max(" << count << ", 0);\n"
     << in << "float wacc = " << (mx ? "-kb::inf()" : "0.f") << ";\n"
     << in << "for (int wj = threadIdx.x; wj < wcnt; wj += blockDim.x) {\n"
     << in2 << "int wq = wj;\n";
  // The window's element j in (d, h, w) order: the last dim fastest.
  for (int64_t d = k - 1; d >= 0; --d) {
    std::string D = std::to_string(d);
    if (d == 0) {
      os << in2 << "const int wx0 = wb0 + wq;\n";
      break;
    }
    os << in2 << "const int wx" << D << " = wb" << D << " + wq % (we" << D
       << " - wb" << D << ");\n"
       << in2 << "wq /= we" << D << " - wb" << D << ";\n";
  }
  os << in2 << "const long long wi = wplane * " << product(inSp) << "LL";
  for (int64_t d = 0; d < k; ++d)
    os << " + (long long)wx" << d
       << (inStride[d] == 1 ? "" : " * " + std::to_string(inStride[d]) + "LL");
  os << ";\n";
  e.newScope();
  auto x = e.valueAt(s.input, "wi", os, in2);
  if (!x)
    return x.takeError();
  if (mx) // ATen: a NaN in the window wins
    os << in2 << "if (" << *x << " > wacc || " << *x << " != " << *x
       << ") wacc = " << *x << ";\n";
  else
    os << in2 << "wacc += " << *x << ";\n";
  os << in << "}\n";
  e.newScope();
  os << in << "wacc = kb::block_reduce(wacc, " << (mx ? "-kb::inf()" : "0.f")
     << ", smem, kb::" << (mx ? "Max" : "Sum") << "());\n";
  if (mx) {
    os << in << result << " = wacc; // " << displayName(s.op) << "\n";
    return llvm::Error::success();
  }
  std::string divisor = adaptive            ? "wcnt"
                        : s.divisor         ? std::to_string(*s.divisor)
                        : s.countIncludePad ? padded
                                            : "wcnt";
  // A window wholly in the padding averages to 0, as ATen's.
  os << in << result << " = wcnt > 0 ? wacc / (float)(" << divisor
     << ") : 0.f; // " << displayName(s.op) << "\n";
  return llvm::Error::success();
}

bool codegen::blockWideFinalPool(const StageInfo &s) {
  return s.reduced.empty() && s.window.empty() && blockWidePool(s);
}
