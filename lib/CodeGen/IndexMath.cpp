//===- IndexMath.cpp - Index expressions of the emitted kernels -----------===//
#include "kb/CodeGen/IndexMath.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cctype>
#include <numeric>

using namespace kb;
using llvm::ArrayRef;
using llvm::SmallVector;

std::string codegen::indexOperand(llvm::StringRef idx, bool narrow) {
  std::string I =
      llvm::all_of(idx, [](char c) { return isalnum(c) || c == '_'; })
          ? idx.str()
          : "(" + idx.str() + ")";
  return narrow ? "(unsigned)" + I : I;
}

namespace {
std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t k = (int64_t)shape.size() - 2; k >= 0; --k)
    s[k] = s[k + 1] * shape[k + 1];
  return s;
}

} // namespace

std::string codegen::stridedOffset(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> strides,
                                   llvm::StringRef idx, bool narrow) {
  // Runs of dims (innermost first) that continue each other, {size,
  // stride}: a dim whose stride is the run's extent merges into it (a
  // transposed [B, T, E] view of [T, B, E] keeps E whole); size-1 dims
  // never move an address.
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] == 1)
      continue;
    if (!runs.empty() && strides[d] == runs.back().first * runs.back().second)
      runs.back().first *= shape[d];
    else
      runs.push_back({shape[d], strides[d]});
  }
  std::string I = indexOperand(idx, narrow);
  std::string expr;
  int64_t inner = 1;
  for (auto [k, run] : llvm::enumerate(runs)) {
    auto [size, stride] = run;
    std::string coord =
        inner == 1 ? I : "(" + I + " / " + intLit(inner, narrow) + ")";
    if (k + 1 < runs.size()) // the outermost run needs no modulo
      coord = "(" + coord + " % " + intLit(size, narrow) + ")";
    inner *= size;
    if (stride == 0) // a broadcast (expanded) dim
      continue;
    std::string term =
        stride == 1 ? coord : coord + " * " + intLit(stride, narrow);
    expr = expr.empty() ? term : expr + " + " + term;
  }
  return expr.empty() ? "0" : expr;
}

int64_t codegen::product(ArrayRef<int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::string codegen::broadcastOffset(ArrayRef<int64_t> in,
                                     ArrayRef<int64_t> space,
                                     llvm::StringRef idx, bool narrow) {
  if (in == space)
    return idx.str();
  std::string I = indexOperand(idx, narrow);
  idx = I;
  int64_t rank = space.size(), off = rank - (int64_t)in.size();
  auto broadcast = [&](int64_t d) {
    int64_t id = d - off;
    return id < 0 || (in[id] == 1 && space[d] != 1);
  };
  std::vector<int64_t> inStride = rowMajorStrides(in);
  std::string expr;
  int64_t inner = 1;
  for (int64_t d = rank - 1; d >= 0;) {
    if (broadcast(d)) {
      inner *= space[d];
      --d;
      continue;
    }
    int64_t b = d, runSize = 1;
    while (d >= 0 && !broadcast(d)) {
      runSize *= space[d];
      --d;
    }
    std::string coord =
        inner == 1 ? idx.str()
                   : "(" + idx.str() + " / " + intLit(inner, narrow) + ")";
    if (d >= 0) // a run that reaches dim 0 needs no modulo
      coord = "(" + coord + " % " + intLit(runSize, narrow) + ")";
    int64_t stride = inStride[b - off];
    std::string term =
        stride == 1 ? coord : coord + " * " + intLit(stride, narrow);
    expr = expr.empty() ? term : expr + " + " + term;
    inner *= runSize;
  }
  return expr.empty() ? "0" : expr;
}

std::optional<std::string>
codegen::coordinateOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> space,
                          ArrayRef<std::string> coords, bool narrow) {
  int64_t rank = space.size(), off = rank - (int64_t)in.size();
  if (off < 0 || (int64_t)coords.size() != rank)
    return std::nullopt;
  std::string expr;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= off; --d) {
    int64_t id = d - off;
    if (in[id] != 1) {
      if (coords[d].empty())
        return std::nullopt;
      std::string c = "(" + coords[d] + ")";
      if (narrow)
        c = "((unsigned)" + c + ")";
      std::string term = stride == 1 ? c : c + " * " + intLit(stride, narrow);
      expr = expr.empty() ? term : term + " + " + expr;
    }
    stride *= in[id];
  }
  return expr.empty() ? std::string("0") : expr;
}

std::string codegen::permuteOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> perm,
                                   llvm::StringRef idx, bool narrow) {
  // permute(x, perm) of a row-major x is a strided view of x.
  std::vector<int64_t> inStride = rowMajorStrides(in);
  SmallVector<int64_t> shape, strides;
  for (int64_t d : perm) {
    shape.push_back(in[d]);
    strides.push_back(inStride[d]);
  }
  return stridedOffset(shape, strides, idx, narrow);
}

namespace {
std::string plus(std::string off, int64_t base, bool narrow) {
  if (base == 0)
    return off;
  return off == "0" ? codegen::intLit(base, narrow)
                    : "(" + off + " + " + codegen::intLit(base, narrow) + ")";
}
} // namespace

std::string codegen::rollOffset(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> shifts,
                                ArrayRef<int64_t> dims, llvm::StringRef idx,
                                bool narrow) {
  std::string I = indexOperand(idx, narrow);
  std::vector<int64_t> strides = rowMajorStrides(shape);
  SmallVector<std::pair<int64_t, int64_t>> rolls; // {dim or -1, shift}
  if (dims.empty())
    rolls.push_back({-1, shifts.empty() ? 0 : shifts[0]});
  for (auto [k, d] : llvm::enumerate(dims))
    rolls.push_back({d, shifts[k]});
  // Each rolled dim adds (n - s) strides where its coordinate is below
  // the shift, else subtracts s strides; in 32-bit math a subtraction is
  // the addition of its two's complement, and the sum is an index.
  std::string expr = I;
  for (auto [d, shift] : rolls) {
    int64_t n = d < 0 ? product(shape) : shape[d];
    int64_t S = d < 0 ? 1 : strides[d];
    int64_t s = n ? ((shift % n) + n) % n : 0;
    if (s == 0)
      continue;
    std::string c = S == 1 ? I : "(" + I + " / " + intLit(S, narrow) + ")";
    if (d > 0)
      c = "(" + c + " % " + intLit(n, narrow) + ")";
    expr +=
        " + (" + c + " < " + intLit(s, narrow) + " ? " +
        intLit((n - s) * S, narrow) + " : " +
        (narrow ? "0u - " + intLit(s * S, narrow) : intLit(-s * S, narrow)) +
        ")";
  }
  return expr;
}

std::string codegen::sliceOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                 int64_t dim, int64_t start, int64_t step,
                                 llvm::StringRef idx, bool narrow) {
  // A slice of a row-major x is a strided view of x, `start` rows in.
  std::vector<int64_t> strides = rowMajorStrides(in);
  int64_t base = start * strides[dim];
  strides[dim] *= step;
  return plus(stridedOffset(out, strides, idx, narrow), base, narrow);
}

std::string codegen::selectOffset(ArrayRef<int64_t> in, int64_t dim,
                                  int64_t index, llvm::StringRef idx,
                                  bool narrow) {
  std::vector<int64_t> strides = rowMajorStrides(in);
  SmallVector<int64_t> shape, kept;
  for (int64_t d = 0; d < (int64_t)in.size(); ++d)
    if (d != dim) {
      shape.push_back(in[d]);
      kept.push_back(strides[d]);
    }
  return plus(stridedOffset(shape, kept, idx, narrow), index * strides[dim],
              narrow);
}

std::pair<std::string, std::string> codegen::padOffset(ArrayRef<int64_t> in,
                                                       ArrayRef<int64_t> out,
                                                       ArrayRef<int64_t> pads,
                                                       llvm::StringRef idx) {
  int64_t rank = out.size();
  std::vector<int64_t> outStrides = rowMajorStrides(out),
                       inStrides = rowMajorStrides(in);
  std::string I = indexOperand(idx, false);
  std::string cond, off;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t k = rank - 1 - d; // pads name the last dim first
    int64_t before = 2 * k + 1 < (int64_t)pads.size() ? pads[2 * k] : 0;
    int64_t after = 2 * k + 1 < (int64_t)pads.size() ? pads[2 * k + 1] : 0;
    if (in[d] == 1 && out[d] == 1)
      continue;
    std::string c = outStrides[d] == 1
                        ? I
                        : "(" + I + " / " + intLit(outStrides[d], false) + ")";
    if (d > 0)
      c = "(" + c + " % " + intLit(out[d], false) + ")";
    std::string x =
        before == 0 ? c : "(" + c + " - " + intLit(before, false) + ")";
    if (before > 0)
      cond += (cond.empty() ? "" : " && ") + x + " >= 0LL";
    if (after > 0)
      cond += (cond.empty() ? "" : " && ") + x + " < " + intLit(in[d], false);
    if (before > 0 || after > 0)
      x = "min(max(" + x + ", 0LL), " + intLit(in[d] - 1, false) + ")";
    std::string term =
        inStrides[d] == 1 ? x : x + " * " + intLit(inStrides[d], false);
    off = off.empty() ? term : off + " + " + term;
  }
  return {cond.empty() ? "true" : cond, off.empty() ? "0LL" : off};
}

std::string codegen::channelsLastWalk(ArrayRef<int64_t> out,
                                      ArrayRef<int64_t> origins,
                                      llvm::StringRef idx) {
  SmallVector<int64_t> walk;
  for (auto [k, d] : llvm::enumerate(origins))
    if (d != 1)
      walk.push_back(k);
  for (auto [k, d] : llvm::enumerate(origins))
    if (d == 1)
      walk.push_back(k);
  return permuteOffset(out, walk, idx);
}

std::string codegen::subspaceOffset(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> dims, llvm::StringRef idx,
                                    bool narrow) {
  std::vector<int64_t> stride = rowMajorStrides(shape);
  // Merge runs of adjacent dims (innermost first): {size, stride}.
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (int64_t k = (int64_t)dims.size() - 1; k >= 0; --k) {
    int64_t d = dims[k];
    if (shape[d] == 1)
      continue;
    // Contiguous with the run so far (a size-1 dim between is no gap).
    if (!runs.empty() && stride[d] == runs.back().first * runs.back().second)
      runs.back() = {runs.back().first * shape[d], runs.back().second};
    else
      runs.push_back({shape[d], stride[d]});
  }
  std::string I = narrow ? "(unsigned)" + idx.str() : idx.str();
  std::string expr;
  int64_t inner = 1;
  for (size_t r = 0; r < runs.size(); ++r) {
    auto [size, st] = runs[r];
    std::string coord =
        inner == 1 ? idx.str()
                   : "(" + idx.str() + " / " + std::to_string(inner) + "LL)";
    if (r + 1 < runs.size())
      coord = "(" + coord + " % " + intLit(size, narrow) + ")";
    std::string term = st == 1 ? coord : coord + " * " + intLit(st, narrow);
    expr = expr.empty() ? term : term + " + " + expr;
    inner *= size;
  }
  return expr.empty() ? "0" : expr;
}

std::string codegen::intLit(int64_t v, bool narrow) {
  return std::to_string(v) + (narrow ? "u" : "LL");
}

int64_t codegen::widestAdaptiveWindow(int64_t in, int64_t out) {
  // With in = a out + r, window q is a + ceil((f + r) / out) wide for f =
  // q r mod out, which runs over the multiples of g = gcd(r, out) below
  // out: some window is a + 2 wide exactly when out - g > out - r, i.e.
  // when r does not divide out. (A loop over the outputs took a minute on
  // a malformed graph's 2^32 of them.)
  if (in < 1 || out < 1)
    return 1;
  int64_t a = in / out, r = in % out;
  return std::max<int64_t>(1, r == 0 ? a : a + (std::gcd(r, out) == r ? 1 : 2));
}
