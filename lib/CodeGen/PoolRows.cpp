//===- PoolRows.cpp - Poolings read as the rows of a final stage ---------===//
//
// A final stage over pooled values, or a final adaptive pooling of large
// equal windows, planned as rows of the pooling's input (StageInfo::poolIn
// and window): the row kernels then reduce a window or the windows of a
// row with a lane group or a block instead of a thread per output.
//
//===----------------------------------------------------------------------===//

#include "Stages.h"

#include "kb/CodeGen/IndexMath.h"
#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

/// Windows of at least this many elements are rows: one thread per
/// output loops over smaller ones quickly enough.
constexpr int64_t kWindowRowsMin = 64;

/// The window of `op`, per dim of its input, where it is a pooling of
/// equal windows that tile the input from its start (a remainder at the
/// end left out) of the kind `avg` names; none otherwise.
std::optional<SmallVector<int64_t>> tilingWindow(KernelOp kernel, AtenOp op,
                                                 bool avg) {
  Recipe recipe = op.getInfo()->recipe;
  if (getKind(op) != OpKind::Reduction ||
      (recipe != (avg ? Recipe::AvgPool : Recipe::MaxPool) &&
       recipe != (avg ? Recipe::AdaptiveAvgPool : Recipe::AdaptiveMaxPool)))
    return std::nullopt;
  ArrayRef<int64_t> in = shapeOf(op.getArgs()[0]),
                    out = shapeOf(op->getResult(0));
  if (in.size() != out.size() || op->getNumResults() != 1)
    return std::nullopt;
  if (isAdaptivePoolRecipe(recipe))
    return equalWindows(in, out);
  int64_t rank = in.size();
  SmallVector<int64_t> window(rank, 1);
  auto st = analyzeStage(kernel, op);
  if (!st) {
    llvm::consumeError(st.takeError());
    return std::nullopt;
  }
  int64_t k = st->spatial;
  if (st->divisor)
    return std::nullopt;
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = rank - k + i;
    if (st->kernel[i] != st->stride[i] || st->padding[i] != 0 ||
        st->dilation[i] != 1 || out[d] * st->kernel[i] > in[d] ||
        out[d] != in[d] / st->kernel[i])
      return std::nullopt;
    window[d] = st->kernel[i];
  }
  return window;
}

} // namespace

/// A final adaptive pooling whose windows are equal (every pooled dim a
/// multiple of its output) and large: rows of the window's elements, so a
/// block or lane group reduces each output instead of one thread
/// (gen-20261219 task 5: adaptive_avg_pool2d to (1, 2) over 225 x 56, 546
/// outputs of 6300 elements, 1.748 ms one thread each, ATen 0.214).
void codegen::windowsAsRows(StageInfo &s, bool channelsLastRead) {
  if (!isAdaptivePoolRecipe(s.recipe) || channelsLastRead || !s.spatial)
    return;
  ArrayRef<int64_t> in = s.inShape, out = s.outShape;
  // Leading dims are kept (analyzeStage): windows of 1.
  auto window = equalWindows(in, out);
  if (!window || product(*window) < kWindowRowsMin)
    return;
  s.poolIn.assign(in.begin(), in.end());
  s.window = *window;
  s.recipe = s.recipe == Recipe::AdaptiveAvgPool ? Recipe::Mean : Recipe::Amax;
  s.inShape = {product(out), product(*window)};
  s.reduced = {1};
}

/// A final sum or mean of average poolings (amax or amin of max
/// poolings) whose windows tile their input (equal, not overlapping, no
/// padding): the reduction over the pooled values is one over the
/// windows' elements, so the rows gather the pooling's input instead of
/// evaluating a window per element (gen-20261219 task 1: a mean over dim
/// 0 of two poolings of [267, 128, 256], 128 rows of 267 pooled values
/// of 256 elements each, one lane group per row: 0.38x torch.compile).
/// The mean of equal windows' means is the mean of their elements; a sum
/// of them is the elements' sum over the window size.
void codegen::poolsIntoRows(KernelOp kernel, StageInfo &s,
                            bool channelsLastRead) {
  bool avg = s.recipe == Recipe::Sum || s.recipe == Recipe::Mean;
  if ((!avg && s.recipe != Recipe::Amax && s.recipe != Recipe::Amin) ||
      channelsLastRead || s.input2 || !s.window.empty() || s.reduced.empty() ||
      ArrayRef<int64_t>(s.inShape) != shapeOf(s.input))
    return;
  ArrayRef<int64_t> pooled = s.inShape;
  int64_t rank = pooled.size();
  SmallVector<int64_t> window(rank, 1);
  Value x = s.input;
  while (auto p = x.getDefiningOp<AtenOp>()) {
    auto w = tilingWindow(kernel, p, avg);
    if (!w || !x.hasOneUse() || p.getInplace())
      break;
    for (int64_t d = 0; d < rank; ++d)
      window[d] *= (*w)[d];
    x = p.getArgs()[0];
  }
  if (x == s.input)
    return;
  ArrayRef<int64_t> in = shapeOf(x);
  // Rows: the pooled dims kept; elements: the reduced ones whole and
  // the windows of the others. Contiguous when no kept coordinate varies
  // faster than an element one and every dim is covered whole.
  int64_t rows = 1, cols = 1;
  bool contiguous = true, inElements = false;
  for (int64_t d = 0; d < rank; ++d) {
    contiguous &= pooled[d] * window[d] == in[d];
    if (llvm::is_contained(s.reduced, d)) {
      cols *= pooled[d] * window[d];
      inElements |= pooled[d] * window[d] > 1;
      continue;
    }
    rows *= pooled[d];
    contiguous &= !inElements || pooled[d] == 1;
    cols *= window[d];
    inElements |= window[d] > 1;
  }
  // Rows of at most 16 elements take one thread per output (perOutput),
  // which evaluates the poolings as written.
  if (cols <= 16)
    return;
  if (s.recipe == Recipe::Sum)
    s.sumDivisor = product(window);
  SmallVector<int64_t> reduced = s.reduced;
  s.input = x;
  s.inShape = {rows, cols};
  s.reduced = {1};
  if (contiguous)
    return;
  s.poolIn.assign(in.begin(), in.end());
  s.window = window;
  s.rowDims = reduced;
}
