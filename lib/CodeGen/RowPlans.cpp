//===- RowPlans.cpp - The row plan of each reduction, softmax and norm ---===//
//
// emitRowKernel reads the final stage's operands the way ATen interprets
// them and plans it as rows (RowPlan.h): which elements form a row, the
// accumulation passes, the per-element or per-row outputs, and the layout
// of threads over rows (register groups, blocks, one thread per row,
// channels-last columns and tiles, or split rows over many blocks), then
// assembles the kernel around RowKernels.cpp's or SplitRows.cpp's body.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

#include <functional>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

using Mode = RowMode;

/// `op` is the kernel's only reduction (an earlier stage's sum would not
/// round as ATen's ops do, whatever order the final stage takes).
bool onlyReduction(KernelOp kernel, Operation *op) {
  for (Operation &other : kernel.getBody().front())
    if (&other != op && getKind(&other) == OpKind::Reduction)
      return false;
  return true;
}

/// Row groups a warp of float4 lane groups loads before the first one's
/// shuffles. Large inputs (2^24 elements or more) only: each lane then has
/// one float4 of each of several rows in flight. Measured on the H200
/// (kb-verify, L2 flushed): a max over 5.66M rows of 64 0.423 ms at 1,
/// 0.362 at 2, 0.353 at 4 (session 29); a layer norm over rows of 28
/// 0.253 / 0.220 / 0.220 (session 23); layer norms over 0.01 ms inputs
/// (rows of 12, 64) lost 0-25%. At most 16 floats of rows a lane, and 2
/// groups where every element is written back (the norm gained no more).
int vectorGroupUnroll(const RowPlan &p) {
  if (p.rows * p.cols < (int64_t(1) << 24))
    return 1;
  int64_t k4 = ((p.cols + 3) / 4 + rowLanes(p) - 1) / rowLanes(p);
  int64_t most = p.element ? 2 : 4;
  return (int)std::clamp<int64_t>(16 / (4 * k4), 1, most);
}

/// Contiguous rows of up to 16 go to a lane group each too: one thread a
/// row made each warp load touch 32 rows 40 bytes apart (measured on the
/// H200, session 33: layer norms over 1.39M rows of 10 0.1146 -> 0.0334
/// ms, over 2.1M rows of 14 0.3024 -> 0.0644).
Mode chooseMode(int64_t cols, bool contiguousRows,
                bool threadShortRows = false) {
  if (!contiguousRows || (cols <= 16 && threadShortRows))
    return Mode::Thread;
  return cols <= kLaneGroupRowMax ? Mode::Warp : Mode::Block;
}

/// Walks `v`'s pointwise prologue back to the kernel's arguments, calling
/// `onArg` for each argument and `onOp` for each op once; false (the walk
/// cut short) where it meets anything but a pointwise op (an earlier
/// reduction's lambda, a pooling window).
bool walkPrologue(Value v, llvm::function_ref<void(BlockArgument)> onArg,
                  llvm::function_ref<void(AtenOp)> onOp) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto a = dyn_cast<BlockArgument>(x)) {
      onArg(a);
      continue;
    }
    Operation *op = x.getDefiningOp();
    if (isa<ConstantOp, ListOp>(op))
      continue;
    // A flat view keeps every element's index: an argument of `v`'s
    // shape behind one is still read at the element's own.
    auto aten = dyn_cast<AtenOp>(op);
    if (!aten || !aten.getInfo() ||
        (aten.getInfo()->kind != OpKind::Elementwise &&
         aten.getInfo()->kind != OpKind::Broadcast && !isFlatView(aten)))
      return false;
    onOp(aten);
    for (Value o : op->getOperands())
      if (isa<RankedTensorType>(o.getType()))
        work.push_back(o);
  }
  return true;
}

/// The kernel arguments of `v`'s shape that its pointwise prologue
/// reads (at the element's own index: broadcast arguments, of other
/// shapes, are read at theirs), into `args`; left empty unless every op
/// between them and `v` is pointwise (an earlier reduction's lambda reads
/// its arguments at other indices).
void prologueArgs(Value v, SmallVectorImpl<unsigned> &args) {
  ArrayRef<int64_t> shape = shapeOf(v);
  SmallVector<unsigned, 4> found;
  auto onArg = [&](BlockArgument a) {
    if (shapeOf(a) == shape && !llvm::is_contained(found, a.getArgNumber()))
      found.push_back(a.getArgNumber());
  };
  if (!walkPrologue(v, onArg, [](AtenOp) {}))
    return;
  // float4 loads read raw offsets of floats: a strided argument, or a bool
  // mask, leaves them out.
  for (unsigned a : found)
    if (BlockArgument arg = v.getParentBlock()->getArgument(a);
        !isContiguousArg(arg) || !isF32Tensor(arg.getType()))
      return;
  llvm::sort(found);
  args.assign(found.begin(), found.end());
}

/// The ops of `v`'s pointwise prologue (those between the kernel's
/// arguments and `v`), which a row plan re-reading its row evaluates again
/// on each pass (casts, copies and views not counted); -1 where it holds
/// anything but pointwise ops.
int prologueOps(Value v) {
  int ops = 0;
  auto onOp = [&](AtenOp aten) {
    OpStyle style = aten.getInfo()->style;
    ops += style != OpStyle::Identity && style != OpStyle::View &&
           style != OpStyle::Copy && style != OpStyle::Cast &&
           style != OpStyle::Dropout;
  };
  return walkPrologue(
             v, [](BlockArgument) {}, onOp)
             ? ops
             : -1;
}

/// A prologue worth evaluating once per element rather than on each pass
/// of a row read more than once: an earlier reduction or pooling window
/// (prologueOps -1), or two pointwise ops or more.
bool expensivePrologue(int prologueOps) {
  return prologueOps < 0 || prologueOps >= 2;
}

/// One pass of double moments of x - k0 (k0 the row's first element, so
/// E[x^2] - E[x]^2 does not cancel): sx and sq, then `after`.
ReducePass shiftedMoments(std::string after) {
  return {{{"sx", "double", "0.0", "Sum"}, {"sq", "double", "0.0", "Sum"}},
          "{ const double d = (double){x} - k0; sx += d; sq += d * d; }",
          std::move(after)};
}

} // namespace

std::string codegen::normMoments(int64_t cols, double eps, bool divisionStats,
                                 llvm::StringRef prefix) {
  // ATen's Welford turns an Inf in the row into a NaN mean and variance
  // (Inf - Inf on the next update); sx - sx is NaN exactly then, 0
  // otherwise. Rounding can make m2 slightly negative; NaN must stay NaN,
  // which fmax would drop.
  // Every lane of a row computes its statistics: three double divisions
  // and a square root a row were as much work as the loads over short
  // rows (a layer norm over 2.96M rows of 28 ran at 2.6 TB/s). A product
  // by 1/N and rsqrt are within an ulp of a double (rounded to a float
  // afterwards); --division-stats keeps the old form for probes.
  auto v = [&](const char *name) { return prefix.str() + name; };
  std::string n = std::to_string(cols) + ".0",
              inv = doubleLiteral(1.0 / (double)cols),
              eps2 = doubleLiteral(eps);
  std::string sx = v("sx"), sq = v("sq"), k0 = v("k0"), nf = v("nf"),
              mx = v("mx"), mean = v("mean"), m2 = v("m2"), var = v("var");
  std::string moments =
      divisionStats ? mean + " = " + k0 + " + " + sx + " / " + n + " + " + nf +
                          ", " + m2 + " = " + sq + " / " + n + " - (" + sx +
                          " / " + n + ") * (" + sx + " / " + n + ") + " + nf
                    : mx + " = " + sx + " * " + inv + ", " + mean + " = " + k0 +
                          " + " + mx + " + " + nf + ", " + m2 + " = " + sq +
                          " * " + inv + " - " + mx + " * " + mx + " + " + nf;
  std::string rstd = divisionStats ? "1.0 / sqrt(" + var + " + " + eps2 + ")"
                                   : "rsqrt(" + var + " + " + eps2 + ")";
  return "const double " + nf + " = " + sx + " - " + sx + ", " + moments +
         ";\n    const double " + var + " = " + m2 + " < 0.0 ? 0.0 : " + m2 +
         ";\n    const double " + v("rstd") + " = " + rstd + ";";
}

llvm::Error codegen::planRows(RegionEmitter &e, const StageInfo &f,
                              YieldOp yield, RowPlan &p, EmittedKernel &out,
                              SmallVectorImpl<unsigned> &updated,
                              bool forceSplit) {
  ArrayRef<int64_t> in = f.inShape;
  int64_t rank = in.size();
  const Recipe recipe = f.recipe;
  // Rows whose elements are strided by the row count: neighbouring rows,
  // not neighbouring elements, are neighbouring addresses.
  bool stridedRows = false;
  // Length of the runs of consecutive input elements along a row.
  int64_t run = 0;
  bool reduce = !isPerElementRecipe(recipe);
  // Channels-last reads: reductions over trailing spatial dims (all of
  // them, or the last ones: a var over W keeps rows (n, c, h)) and
  // layer_norm over the last dim.
  bool trailingSpatial = reduce && !f.reduced.empty() &&
                         f.reduced.front() >= 2 && f.reduced.back() == rank - 1;
  if (e.channelsLastRead && recipe != Recipe::LayerNorm && !trailingSpatial)
    return e.unsupported("channels-last reads are generated for reductions "
                         "over trailing spatial dims and layer_norm over the "
                         "last dim only");
  if (isSoftmaxRecipe(recipe)) {
    int64_t d = f.reduced.empty() ? 0 : f.reduced[0];
    int64_t R = rank ? in[d] : 1, inner = product(in.drop_front(d + 1));
    p.rows = product(in) / std::max<int64_t>(R, 1);
    p.cols = R;
    p.mode = chooseMode(R, inner == 1);
    stridedRows = inner > 1;
    run = inner == 1 ? R : 0;
    p.rowRun = inner;
    p.index = overMiddleDim(R, inner);
    if (rank && !e.channelsLastRead) {
      p.space.assign(in.begin(), in.end());
      p.rowCoords = keptCoordinates(in, outsideRun(rank, d, d));
    }
    // __fsub_rn: x - m is never contracted into an FMA with a multiply of
    // the prologue (fma(v, c, -m) uses the unrounded v * c, so the row's
    // maximum minus m would be its rounding error and expf of it Inf).
    p.prog.passes.push_back({{{"m", "float", "(-kb::inf())", "Max"}},
                             "m = kb::nanmax(m, {x});",
                             ""});
    // --fast-math: the division approximate (kb::softmax_div), as
    // torch.compile's softmax computes it; the exp stays expf (Prelude.cpp).
    bool fast = e.fastMath;
    p.prog.passes.push_back({{{"acc", "float", "0.f", "Sum"}},
                             "acc += {h};",
                             "",
                             /*online=*/false,
                             softmaxExp("__fsub_rn({x}, m)")});
    bool log = recipe == Recipe::LogSoftmax;
    bool safe = recipe == Recipe::SafeSoftmax;
    p.element = [log, fast,
                 safe](llvm::StringRef x, llvm::raw_ostream &,
                       llvm::StringRef) -> llvm::Expected<std::string> {
      return softmaxElement(x, "m", "acc", log, fast, safe);
    };
    // The same bits as softmaxElement's: the exp of the same operand,
    // computed once.
    if (!log)
      p.heldElement = [fast, safe](llvm::StringRef h) {
        return softmaxQuotient(h, "m", "acc", fast, safe);
      };
    p.what = recipeName(recipe).str() + " over dim " + std::to_string(d);
    // ATen's order keeps ATen's maximum, which drops NaN and starts at the
    // lowest float in places: it cannot tell a row of -inf apart, which
    // _safe_softmax tests for separately (all(x == -inf)).
    if (safe && e.atenOrderNorms)
      return e.unsupported("safe_softmax in ATen's order");
    if (e.atenOrderNorms && !e.channelsLastRead && inner == 1 && R <= 1024 &&
        onlyReduction(e.kernel, f.op)) {
      // ATen's order (AtenSoftmax.cpp): its warp softmax's lanes, maximum
      // and sum trees; the exps held (softmax) or x - max - log(sum).
      p.mode = Mode::AtenSoftmax;
      p.prog.passes.clear();
      run = 0; // ATen reads scalars: no float4 plan, no split
      p.element = [log](llvm::StringRef x, llvm::raw_ostream &,
                        llvm::StringRef) -> llvm::Expected<std::string> {
        return log ? "__fsub_rn(__fsub_rn(" + x.str() + ", m), ls)"
                   : std::string("__fdiv_rn(ex[k], s)");
      };
      out.atenOrder = true;
    } else if (e.atenOrderNorms && !e.channelsLastRead && inner > 1 &&
               onlyReduction(e.kernel, f.op)) {
      // ATen's spatial softmax (cunn_SpatialSoftMaxForward): each thread
      // folds its elements of a row in order, a maximum from the lowest
      // float (`m < x ? x : m`), then a float sum of expf(x - max); with
      // threads along the dim (inner <= 64, dim >= 64) their partials meet
      // in its shared-memory tree (AtenSpatial), else one thread per
      // strided row takes the same order (no split, no online pass; rows of
      // 64 or more with a block's warps sharing the loads of 32 rows,
      // AtenStrided). Out: expf(x - max) / sum or x - max - logf(sum).
      if (int64_t threads = atenSpatialThreads(R, inner); threads > 1) {
        p.mode = Mode::AtenSpatial;
        p.spatialThreads = threads;
        p.spatialInner = inner;
        p.prog.passes.clear();
      } else if (R >= kAtenStridedMinCols) {
        p.mode = Mode::AtenStrided;
        p.prog.passes.clear();
        p.splitPerSM = e.splitPerSM;
      } else {
        p.mode = Mode::Thread;
        p.prog.passes.front() = {{{"m", "float", "(-3.40282347e+38f)", "Max"}},
                                 "m = (m < {x}) ? {x} : m;",
                                 ""};
      }
      p.element = [log](llvm::StringRef x, llvm::raw_ostream &,
                        llvm::StringRef) -> llvm::Expected<std::string> {
        return log ? "__fsub_rn(__fsub_rn(" + x.str() + ", m), logf(acc))"
                   : "__fdiv_rn(expf(__fsub_rn(" + x.str() + ", m)), acc)";
      };
      p.heldElement = nullptr;
      if (!log)
        p.heldElement = [](llvm::StringRef h) {
          return "__fdiv_rn(" + h.str() + ", acc)";
        };
      out.atenOrder = true;
    }
  } else if (recipe == Recipe::LayerNorm || recipe == Recipe::GroupNorm ||
             recipe == Recipe::InstanceNorm || recipe == Recipe::BatchNorm) {
    AtenOp op = f.op;
    auto eps = getConstantNumber(op.getArg("eps"));
    if (!eps)
      return e.unsupported(recipeName(recipe) + " with a non-constant eps");
    if (rank < 2 && recipe != Recipe::LayerNorm)
      return e.unsupported(recipeName(recipe) +
                           " of a tensor with fewer than 2 dims");
    int64_t C = rank >= 2 ? in[1] : 1, N = in[0],
            HW = rank >= 2 ? product(in.drop_front(2)) : 1;
    // ch(r, c): the channel of element (r, c) for the per-channel affine.
    std::function<std::string(llvm::StringRef, llvm::StringRef)> channel;
    if (recipe == Recipe::LayerNorm) {
      auto shape = getConstantIntList(op.getArg("normalized_shape"));
      if (!shape || shape->empty() || (int64_t)shape->size() > rank)
        return e.unsupported("layer_norm with a non-constant shape");
      int64_t first = rank - (int64_t)shape->size();
      p.rows = product(in.take_front(first));
      p.cols = product(in.drop_front(first));
      if (e.channelsLastRead) {
        // 24 KB of slab at most: several blocks per SM stay resident.
        if (first != rank - 1 || rank < 3 ||
            tileFloats(in[1], in[rank - 1]) * 4 > 24 * 1024)
          return e.unsupported("channels-last reads into a layer_norm need "
                               "it over the last dim with a [W, C] slab of "
                               "at most 24 KB");
        p.tileN = in[0];
        p.tileC = in[1];
        p.tileM = product(in.slice(2, rank - 3));
        p.tileW = in[rank - 1];
      }
      int64_t cols = p.cols;
      run = e.channelsLastRead ? 0 : cols;
      p.index = [cols](llvm::StringRef r, llvm::StringRef c) {
        return rowMajor(r, c, cols);
      };
      if (!e.channelsLastRead) {
        p.space.assign(in.begin(), in.end());
        p.rowCoords = keptCoordinates(in, outsideRun(rank, first, rank - 1));
      }
      channel = [](llvm::StringRef, llvm::StringRef c) { return c.str(); };
    } else if (recipe == Recipe::GroupNorm) {
      auto groups = getConstantNumber(op.getArg("num_groups"));
      if (!groups || *groups < 1 || C % (int64_t)*groups)
        return e.unsupported("group_norm with groups that do not divide the "
                             "channels");
      int64_t G = *groups;
      p.rows = N * G;
      p.cols = C / G * HW;
      run = p.cols;
      int64_t cols = p.cols;
      p.index = [cols](llvm::StringRef r, llvm::StringRef c) {
        return rowMajor(r, c, cols);
      };
      p.space.assign(in.begin(), in.end());
      p.rowCoords = [rank, G](llvm::StringRef r) {
        std::vector<std::string> coords(rank);
        coords[0] = "(" + r.str() + " / " + std::to_string(G) + "LL)";
        return coords;
      };
      channel = [=](llvm::StringRef r, llvm::StringRef c) {
        return "(" + r.str() + " % " + std::to_string(G) + "LL) * " +
               std::to_string(C / G) + "LL + " + c.str() + " / " +
               std::to_string(HW) + "LL";
      };
    } else if (recipe == Recipe::InstanceNorm) {
      auto useInput = getConstantBool(op.getArg("use_input_stats"));
      if (!useInput || !*useInput)
        return e.unsupported("instance_norm with running statistics is not "
                             "generated yet");
      for (llvm::StringRef a : {"running_mean", "running_var"})
        if (Value v = op.getArg(a); v && !isNone(v))
          return e.unsupported("instance_norm updating running statistics is "
                               "not generated yet");
      p.rows = N * C;
      p.cols = HW;
      run = HW;
      p.index = [HW](llvm::StringRef r, llvm::StringRef c) {
        return rowMajor(r, c, HW);
      };
      p.space.assign(in.begin(), in.end());
      p.rowCoords = keptCoordinates(in, {0, 1});
      channel = [C](llvm::StringRef r, llvm::StringRef) {
        return "(" + r.str() + " % " + std::to_string(C) + "LL)";
      };
    } else { // batch_norm in training mode: one row per channel
      p.rows = C;
      p.cols = N * HW;
      p.space.assign(in.begin(), in.end());
      p.rowCoords = keptCoordinates(in, {1});
      p.index = [=](llvm::StringRef r, llvm::StringRef c) {
        if (HW == 1)
          return c.str() + " * " + std::to_string(C) + "LL + " + r.str();
        // 32-bit division by the constant HW where the tensor allows: a
        // 64-bit one costs several times the instructions per element.
        if (N * C * HW < (int64_t(1) << 31))
          return "(long long)((unsigned)" + c.str() + " / " +
                 std::to_string(HW) + "u * " + std::to_string(C * HW) +
                 "u + (unsigned)" + r.str() + " * " + std::to_string(HW) +
                 "u + (unsigned)" + c.str() + " % " + std::to_string(HW) + "u)";
        return "(" + c.str() + " / " + std::to_string(HW) + "LL) * " +
               std::to_string(C * HW) + "LL + " + r.str() + " * " +
               std::to_string(HW) + "LL + " + c.str() + " % " +
               std::to_string(HW) + "LL";
      };
      channel = [](llvm::StringRef r, llvm::StringRef) { return r.str(); };
      stridedRows = HW == 1;
      run = HW > 1 ? HW : 0;
      p.rowRun = HW == 1 ? C : 0;
      auto momentum = getConstantNumber(op.getArg("momentum"));
      auto rm = dyn_cast_or_null<BlockArgument>(op.getArg("running_mean"));
      auto rv = dyn_cast_or_null<BlockArgument>(op.getArg("running_var"));
      bool track = !isNone(op.getArg("running_mean"));
      if (track && (!rm || !rv || !momentum))
        return e.unsupported("batch_norm running statistics are not inputs");
      if (track) {
        // ATen: running = momentum * batch + (1 - momentum) * running, with
        // the unbiased variance; written to two extra outputs the host
        // wrapper aliases to the buffers.
        size_t o = yield.getValues().size();
        std::string m = floatLiteral(*momentum);
        std::string n = std::to_string(p.cols) + ".0";
        p.leaderExtra = "      out" + std::to_string(o) + "[r] = " + m +
                        " * (float)mean + (1.f - " + m + ") * in" +
                        std::to_string(rm.getArgNumber()) + "[r];\n      out" +
                        std::to_string(o + 1) + "[r] = " + m +
                        " * (float)(var * " + n + " / (" + n +
                        " - 1.0)) + (1.f - " + m + ") * in" +
                        std::to_string(rv.getArgNumber()) + "[r];\n";
        out.outputs.push_back({"out" + std::to_string(o), {C}});
        out.outputs.push_back({"out" + std::to_string(o + 1), {C}});
        out.updates = {{(int)o, (int)rm.getArgNumber()},
                       {(int)o + 1, (int)rv.getArgNumber()}};
        updated.assign({rm.getArgNumber(), rv.getArgNumber()});
      }
    }
    p.mode = p.tileW ? Mode::Tile
             : recipe == Recipe::BatchNorm
                 ? (p.cols <= kLaneGroupRowMax ? Mode::Warp : Mode::Block)
                 : chooseMode(p.cols, true, e.threadShortRows);
    p.shiftFirst = true;
    p.prog.passes.push_back(
        shiftedMoments(normMoments(p.cols, *eps, e.divisionStats, "")));
    Value weight = op.getArg("weight"), bias = op.getArg("bias");
    p.element = [&e, weight, bias, channel](
                    llvm::StringRef x, llvm::raw_ostream &os,
                    llvm::StringRef indent) -> llvm::Expected<std::string> {
      bool w = weight && !isNone(weight), b = bias && !isNone(bias);
      if (w || b)
        os << indent << "const long long ch = " << channel("r", "c") << ";\n";
      std::string wv, bv;
      if (w) {
        auto v = e.valueAt(weight, "ch", os, indent);
        if (!v)
          return v.takeError();
        wv = *v;
      }
      if (b) {
        auto v = e.valueAt(bias, "ch", os, indent);
        if (!v)
          return v.takeError();
        bv = *v;
      }
      return normElement(x, "mean", "rstd", wv, bv);
    };
    p.what = displayName(op);
    if (recipe == Recipe::LayerNorm && e.atenOrderNorms &&
        !e.channelsLastRead && isAtenOrderNorm(op) &&
        onlyReduction(e.kernel, op)) {
      // ATen's order (AtenRows.cpp): float statistics, and the output as
      // ATen's kernel rounds it, gamma * (rstd * (x - mean)) + beta with
      // the product and the sum fused (nvcc contracts ATen's expression).
      p.mode = Mode::AtenOrder;
      p.shiftFirst = false;
      p.prog.passes.clear();
      int64_t cols = p.cols;
      p.element = [&e, weight, bias, cols](
                      llvm::StringRef x, llvm::raw_ostream &os,
                      llvm::StringRef indent) -> llvm::Expected<std::string> {
        std::string d = "__fsub_rn(" + x.str() + ", mean)";
        std::string g, b;
        if (weight && !isNone(weight)) {
          auto v = e.valueAt(weight, "c", os, indent);
          if (!v)
            return v.takeError();
          g = *v;
        }
        if (bias && !isNone(bias)) {
          auto v = e.valueAt(bias, "c", os, indent);
          if (!v)
            return v.takeError();
          b = *v;
        }
        // RowwiseMoments' kernel (rows not a multiple of 4) computes
        // (x - mean) * rstd * gamma + beta, an absent affine 1 and 0.
        if (cols % 4)
          return "__fmaf_rn(__fmul_rn(" + d + ", rstd), " +
                 (g.empty() ? "1.0f" : g) + ", " + (b.empty() ? "0.0f" : b) +
                 ")";
        std::string n = "__fmul_rn(rstd, " + d + ")";
        if (!g.empty() && !b.empty())
          return "__fmaf_rn(" + g + ", " + n + ", " + b + ")";
        if (!g.empty())
          return "__fmul_rn(" + g + ", " + n + ")";
        if (!b.empty())
          return "__fmaf_rn(rstd, " + d + ", " + b + ")";
        return n;
      };
      out.atenOrder = true;
    }
  } else { // Reduce recipes over one run of adjacent dims
    int64_t first = f.reduced.front(), last = f.reduced.back();
    if (last - first + 1 != (int64_t)f.reduced.size())
      return e.unsupported("row kernels reduce adjacent dims only");
    int64_t inner = product(in.drop_front(last + 1));
    p.rows = product(in.take_front(first)) * inner;
    p.cols = product(in.slice(first, last - first + 1));
    if (inner > 1 && e.channelsLastRead)
      return e.unsupported("channels-last reads into a reduction over "
                           "leading dims");
    if (isArgRecipe(recipe) && e.channelsLastRead)
      return e.unsupported("channels-last reads into an index reduction");
    stridedRows = inner > 1;
    run = inner == 1 && !e.channelsLastRead && f.window.empty() ? p.cols : 0;
    p.rowRun = inner;
    // Strided rows (inner > 1) enough to give every thread of the GPU one
    // row each run one per thread: lanes over 32 of them with 16 warps per
    // block (Split) spent each block's combine on 32 x 65 elements (gen
    // task 57, amax over a middle dim of 65: 1.54 ms vs ATen's 0.59).
    bool manyStrided = inner > 1 && p.rows >= 132 * 1024;
    p.mode = e.channelsLastRead
                 ? Mode::Columns
                 : chooseMode(p.cols, !manyStrided, e.threadShortRows);
    if (e.channelsLastRead) {
      p.colC = in[1];
      p.colM = product(in.slice(2, first - 2));
    }
    p.index = f.window.empty() ? overMiddleDim(p.cols, inner)
                               : gatherIndex(f.poolIn, f.window, f.rowDims);
    if (f.window.empty() && !e.channelsLastRead) {
      p.space.assign(in.begin(), in.end());
      p.rowCoords = keptCoordinates(in, outsideRun(rank, first, last));
    }
    p.prog = reduceProgram(f, p.cols);
    p.what = displayName(f.op);
    if (f.rebroadcast) {
      // The row's result, then the outputs at each element of the row.
      std::string result = p.prog.result;
      p.element = [result](llvm::StringRef, llvm::raw_ostream &,
                           llvm::StringRef) -> llvm::Expected<std::string> {
        return result;
      };
      p.what += ", broadcast back over its rows";
    }
    // A sum or mean over trailing rows in ATen's own order (AtenReduce.cpp):
    // eager's bits, so a result small beside its terms still meets 1e-4.
    int64_t atenRows = 0, atenCols = 0;
    bool rowOutputs = llvm::all_of(yield.getValues(), [&](Value v) {
      return product(shapeOf(v)) == p.rows;
    });
    if ((recipe == Recipe::Sum || recipe == Recipe::Mean) &&
        !e.channelsLastRead && f.window.empty() && !f.input2 &&
        !f.rebroadcast && f.sumDivisor == 0 && !forceSplit && rowOutputs &&
        onlyReduction(e.kernel, f.op) && !crossRowNorm(f.op) &&
        isF32Tensor(f.input.getType()) &&
        isAtenReduceShape(f.op, &atenRows, &atenCols) && atenRows == p.rows &&
        atenCols == p.cols && inner == 1) {
      p.mode = Mode::AtenReduce;
      p.prog.passes.clear();
      p.prog.result =
          recipe == Recipe::Mean
              ? "__fmul_rn(acc, " + atenMeanFactor(p.rows, p.cols) + ")"
              : std::string("acc");
      // Eager's bits, a warp or a block a row (AtenReduce.cpp;
      // kb::isAtenOrderSum).
      out.atenOrder = true;
    }
  }

  // Two-input reductions (cosine) run as one thread, a lane group or a
  // block per row, re-reading nothing: the float4, register-block, column,
  // tile and split layouts read one input.
  if (f.input2) {
    if (e.channelsLastRead)
      return e.unsupported("channels-last reads into a two-input reduction");
    if (stridedRows)
      p.mode = Mode::Thread;
    run = 0;
  }
  p.vec4 = run > 0 && run % 4 == 0 && isa<BlockArgument>(f.input) &&
           isContiguousArg(f.input) && isF32Tensor(f.input.getType()) &&
           !e.channelsLastRead;
  p.vectorLanes = e.vectorLanes;
  // ATen's order reads the arguments of a pointwise prologue as float4s.
  if ((p.mode == Mode::AtenOrder || p.mode == Mode::AtenReduce) && !p.vec4)
    prologueArgs(f.input, p.vecArgs);
  // Rows of up to 16 contiguous elements read as float4 by a group of
  // lanes rather than one thread each (a warp load then reads consecutive
  // bytes instead of one float every 32 bytes).
  if (p.mode == Mode::Thread && p.vec4 && !stridedRows)
    p.mode = Mode::Warp;

  int prologue = prologueOps(f.input);
  // Split over many blocks: rows too few to fill the GPU one block (or,
  // strided, one thread) each, and rows strided by the row count, which
  // lanes over rows read coalesced (SplitRows.cpp).
  if (!e.channelsLastRead && p.mode != Mode::Tile &&
      p.mode != Mode::AtenOrder && p.mode != Mode::AtenSoftmax && !f.input2 &&
      !out.atenOrder && (forceSplit || p.rows * p.cols >= (int64_t(1) << 16))) {
    int64_t rowsPerItem = stridedRows ? 32 : 1;
    // Arguments larger than the rows are gathered (a pooling window per
    // element): their elements per row element.
    int64_t gathered = 0, n = p.rows * p.cols;
    for (BlockArgument a : e.kernel.getBody().front().getArguments())
      if (isF32Tensor(a.getType()) && product(shapeOf(a)) > n)
        gathered += product(shapeOf(a));
    int64_t chunks =
        e.splitChunks > 0
            ? std::min<int64_t>(e.splitChunks, p.cols)
            : splitChunks(p.rows, p.cols, rowsPerItem, gathered / n);
    // splitChunks cuts rows only where there are too few rows for about 8
    // items per SM. Measured (session 15): BatchNorm2d over 1024 channels
    // and a group norm over 1024 rows (2 chunks each) took 0.364 and 0.278
    // ms split, 0.412 and 0.290 as one block per row.
    // A row staged in shared memory evaluates an expensive prologue once;
    // chunks re-evaluate it on every pass (a group norm over 500 rows of
    // pooled values: staged, one block a row, 0.166 ms; 3 chunks 0.327).
    bool staged =
        p.mode == Mode::Block && e.splitChunks == 0 &&
        p.cols <= (e.sharedRowMax > 0
                       ? std::min<int64_t>(e.sharedRowMax, kSharedRowMax)
                       : kSharedRowMax) &&
        p.rows >= 132 && expensivePrologue(prologue);
    bool few = p.mode == Mode::Block && chunks > 1 && !staged;
    // Strided rows one per thread fill the GPU only with many rows.
    bool strided =
        stridedRows && (p.mode != Mode::Thread || p.rows < 132 * 1024);
    if (few || strided || forceSplit) {
      p.mode = Mode::Split;
      p.splitRows = rowsPerItem;
      p.chunks = chunks;
      p.splitBlock = e.splitBlock;
      p.splitPerSM = e.splitPerSM;
      p.splitUnroll = e.splitUnroll;
      p.splitAhead = e.splitAhead;
      p.splitFoldUnroll = e.splitFoldUnroll;
      p.splitCombineOnceMin = e.splitCombineOnceMin;
      p.splitSerialCombine = e.splitSerialCombine;
      p.splitItemRegisters = e.splitItemRegisters;
      p.splitRowVectors = e.splitRowVectors;
      // Lanes over rows evaluating an expensive prologue per element run
      // out of the 32 registers four blocks of 512 leave a thread: three
      // blocks an SM, 16 loads a trip. Measured on the H200 (session 26,
      // a mean over dim 0 of 14112 x 4096 after softplus -> tanh -> mul):
      // 0.197 ms as 512x4 unrolled 8, 0.164 512x2x8, 0.160 512x2x16, 0.155
      // 1024x1x16, 0.145 512x3x16 (0.149 unrolled 8, 0.146 32).
      if (rowsPerItem == 32 && expensivePrologue(prologue) &&
          e.splitPerSM == 0 && e.splitUnroll == 0) {
        p.splitPerSM = 3;
        p.splitUnroll = 16;
      }
      // Four neighbouring rows per lane as one aligned float4: the input
      // is a kernel argument, rows come in runs of a multiple of 4. By
      // default where every element is written back (norms, softmax) over
      // 128 rows or more: measured on the H200 (session 19) BatchNorm1d over
      // 1000 channels 0.398 -> 0.313 ms, softmax over dim 0 0.309 -> 0.263,
      // log_softmax over dim 0 of 22848 rows 2.20 -> 1.73; single-output
      // reductions lost 4-13% (sum, amax, var, logsumexp over dim 0), and
      // so did fewer rows (64 channels 0.120 -> 0.184: virtual warps).
      bool quadDefault = isPerElementRecipe(f.recipe) && p.rows >= 128;
      // Whole items (no chunks) of 128 rows fewer than the SMs would leave
      // SMs idle: those keep one row per lane (whole items of 179 x 128
      // rows were measured faster, log_softmax over dim 0 of 22848 rows).
      // 128 items of 128 rows on 132 SMs count as filling them:
      // BatchNorm1d over 16384 channels of 1414 after sqrt(|x|) took 0.178
      // ms one row a lane, 0.137 with 4 (H200, session 31).
      quadDefault &= chunks > 1 || (p.rows + 127) / 128 * 10 >= 9 * 132;
      // A computed input reads the arguments of its pointwise prologue
      // (of the input's shape) as float4s alike, the prologue evaluated per
      // row of the four (gen-20261219 task 7: sqrt(|x|) into BatchNorm1d
      // over 16384 channels read one float a lane).
      SmallVector<unsigned, 4> quadArgs;
      if (!isa<BlockArgument>(f.input) && !e.channelsLastRead && !f.input2)
        prologueArgs(f.input, quadArgs);
      p.quad = (e.splitQuad || quadDefault) && rowsPerItem == 32 &&
               p.rows % 4 == 0 && p.rowRun > 0 && p.rowRun % 4 == 0 &&
               ((isa<BlockArgument>(f.input) && isContiguousArg(f.input) &&
                 isF32Tensor(f.input.getType())) ||
                !quadArgs.empty());
      if (p.quad && !isa<BlockArgument>(f.input))
        p.vecArgs = quadArgs;
      // An item of 4 rows a lane is 128 rows: four times the bytes the
      // chunks were sized for, on half the resident blocks. Chunked again
      // where split already: levit_128's BatchNorm1d over 256 channels of
      // 12544 tokens took 24 chunks, 48 items of 268 KB on 132 SMs, 0.046
      // ms against ATen's 0.023 (run104, H100).
      if (p.quad && p.chunks > 1 && p.rows >= 128 && e.splitChunks == 0)
        p.chunks = std::max(p.chunks, splitChunks(p.rows, p.cols, rowsPerItem,
                                                  gathered / n, /*quad=*/true));
      // One row per item reads float4 when its input is an argument
      // (measured, session 14: BatchNorm2d over 48 channels 0.449 ms
      // scalar, 0.374 float4); a computed input reads the arguments of its
      // pointwise prologue as float4 alike.
      if (rowsPerItem == 1 && !p.vec4 && run > 0 && run % 4 == 0 &&
          !e.channelsLastRead && !f.input2)
        prologueArgs(f.input, p.vecArgs);
    }
  }
  // Long contiguous rows streamed from memory stay one block of 256 per
  // row: whole split items of 1024 threads reading float4 measured slower
  // on every case (session 16: instance norm over rows of 16K 0.163 ->
  // 0.209 ms, logsumexp over rows of 4096 0.098 -> 0.144, a mean over
  // HW = 4096 0.075 -> 0.101), fewer rows in flight per SM each ending in a
  // 32-warp combine.

  // Softmax over strided rows re-reads every pass from memory (split with
  // lanes, or one thread per row over rows of 64 or more: 64 threads x 256
  // B per SM and up no longer stay in L1): the max and the sum in one
  // online pass (kb::online_add) save one of the three. Shorter rows stay
  // in L1 between passes, where two plain passes cost less than one
  // online pass's extra exp per element; so do rows a thread holds in
  // registers (threadRegisterRow).
  // Rows a block streams that no block size keeps in L2 between passes
  // likewise (log_softmax over 3400 rows of 65536, gen-20261223 task 0:
  // three reads and a write, 0.890 ms, where torch.compile's two reads
  // took 0.650).
  p.threadRowMax = e.threadRowMax; // threadRegisterRow reads it
  if (recipe == Recipe::Logsumexp && stridedRows && !p.element)
    p.threadRowDefault = kThreadLogsumexpRowMax;
  bool stridedPasses = (p.mode == Mode::Split && p.splitRows == 32) ||
                       (p.mode == Mode::Thread && stridedRows && p.cols >= 64 &&
                        !threadRegisterRow(p)) ||
                       (p.mode == Mode::Block && !rowsFitL2(p.cols, 1024));
  // logsumexp alike (its two passes re-read strided rows the same way:
  // gen-20261208 task 1's over 258048 strided rows of 126 ran at 1.6 TB/s
  // of one read). An infinite max is ATen's result as it is: its two
  // passes replace it by 0, so the sum is 0 (all -inf) or +inf.
  if ((isSoftmaxRecipe(recipe) || recipe == Recipe::Logsumexp) &&
      stridedPasses && !out.atenOrder) {
    p.prog.passes = {{{{"m", "float", "(-kb::inf())", "Max"},
                       {"acc", "float", "0.f", "Sum"}},
                      "kb::online_add(m, acc, {x});",
                      "",
                      /*online=*/true}};
    if (recipe == Recipe::Logsumexp)
      p.prog.result = "(isinf(m) ? m : logf(acc) + m)";
  }

  // A variance whose row is streamed from memory (split, one thread per
  // row, or a block re-reading it) in one pass of shifted double moments,
  // as the norms compute theirs, instead of the mean and then the squared
  // deviations: one read of the input instead of two (and, split, one grid
  // barrier instead of two). Rows held in registers keep the two passes.
  bool streamed = p.mode == Mode::Split || p.mode == Mode::Thread ||
                  (p.mode == Mode::Block && blockRegisterSlots(p) == 0);
  if ((recipe == Recipe::Var || recipe == Recipe::Std) && streamed) {
    std::string n = std::to_string(p.cols) + ".0";
    p.shiftFirst = true;
    p.prog.passes = {shiftedMoments(
        // sx - sx: NaN where the row holds Inf or NaN (ATen's var is NaN
        // there), 0 elsewhere; rounding can make q slightly negative.
        "const double nf = sx - sx, q0 = sq - sx * (sx / " + n +
        ") + nf, q = q0 < 0.0 ? 0.0 : q0;")};
    std::string var =
        "q / fmax(" + n + " - " + doubleLiteral(f.correction) + ", 0.0)";
    p.prog.result = recipe == Recipe::Var ? "(float)(" + var + ")"
                                          : "(float)sqrt(" + var + ")";
  }

  p.rowBlock = e.rowBlock; // rowBlockSize reads it for streamed block rows
  p.groupUnroll = e.groupUnroll > 0                ? e.groupUnroll
                  : p.mode == Mode::AtenSoftmax    ? atenSoftmaxBatch(p.cols)
                  : p.mode == Mode::Warp && p.vec4 ? vectorGroupUnroll(p)
                                                   : 1;
  p.momentsBatch = e.momentsBatch > 0 ? e.momentsBatch : kMomentsBatch;
  // Layer norms of a kernel argument hold rows of up to 3584 in registers
  // (14 a thread) rather than staging them in shared memory: measured on
  // the H200 (codegen_knobs.py, session 36), rows of 3584 0.0513 ms in
  // registers, 0.0608 staged; 2080 0.389 vs 0.453. After a pointwise
  // prologue (an add, then a relu: rows of 3072) registers took 0.068
  // where staging took 0.063, so those stage. Rows of 4096 (16 a thread)
  // were slower in registers (0.226 vs 0.164 streamed, session 22).
  p.registerRowMax = e.registerRowMax;
  if (recipe == Recipe::LayerNorm && isa<BlockArgument>(f.input))
    p.registerRowDefault = kLayerNormRegisterRowMax;
  // Layer norms over rows too long for registers stage them in shared
  // memory. Measured on the H200 (codegen_knobs.py, session 22): rows of
  // 2080, 3072, 4096 and 4096 after a pointwise prologue 2.5-7% faster
  // than re-reading the row; softmax, log_softmax and a group norm without
  // a prologue measured 3-4% slower and an instance norm the same, so
  // they stream. A group norm after four pointwise ops (div, abs, add,
  // xlogy) measured 0.084 ms streamed, 0.059 staged (session 25): rows
  // whose prologue evaluates two ops or more are staged too.
  p.sharedRowMax = e.sharedRowMax > 0 ? e.sharedRowMax
                   : recipe == Recipe::LayerNorm || expensivePrologue(prologue)
                       ? int(kSharedRowMax)
                       : 0;
  // Softmax over short contiguous rows of scalars as one tile per block:
  // lane groups reading them straight from global memory spent their time
  // on the scattered accesses beside the exps (kStagedSoftmaxRowMax). Layer
  // norms and sums over such rows measured faster without
  // (kStagedSoftmaxRowMax's note). Per-element outputs go back through the
  // tile, so each must be a plain float32 tensor indexed as the input, at most
  // two of them (32 KB of tiles).
  size_t tiles = 1;
  bool plainOutputs = true;
  if (p.element) {
    tiles = std::max<size_t>(1, yield.getValues().size());
    for (auto [k, v] : llvm::enumerate(yield.getValues()))
      plainOutputs &= !isArgIndex(v) && (k >= e.outputStrides.size() ||
                                         e.outputStrides[k].empty());
  }
  p.stagedTile = isSoftmaxRecipe(recipe) && p.mode == Mode::Warp && !p.vec4 &&
                 p.cols <= kStagedSoftmaxRowMax && p.rows >= kStagedMinRows &&
                 run == p.cols && !f.input2 && !e.channelsLastRead &&
                 !e.laneShortRows && !forceSplit && plainOutputs &&
                 tiles * 256 * (p.cols + 1) * 4 <= 32 * 1024;
  // Few strided rows of one run read as flat float4s; a computed input
  // reads its prologue's arguments of its shape so.
  if (e.splitFlat && !e.channelsLastRead) {
    SmallVector<unsigned, 4> args;
    if (!isa<BlockArgument>(f.input))
      prologueArgs(f.input, args);
    planFlat(p, f, args, e.splitChunks > 0, e.splitFlatOutputs);
  }
  return llvm::Error::success();
}
