//===- RowKernels.cpp - Reductions, softmax and norms over rows -----------===//
//
// The kernel bodies of a row plan (RowPlan.h; RowPlans.cpp builds them):
// `rows` independent rows of `cols` elements, a few accumulation passes
// (each combined across the row), then one value per row (sum, mean, amax,
// ...) or one per element (softmax, norms). Rows of up to 1024 elements get
// a group of lanes and live in registers, longer rows one block; rows of
// at most 16 elements, and rows whose elements are strided, one thread
// each, so neighbouring threads read neighbouring addresses; channels-last
// columns and tiles; split rows are SplitRows.cpp's. Outside registers the
// pointwise prologue is recomputed on each pass instead of stored.
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

class RowEmitter : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    // Only the layouts that load both inputs of a two-input reduction.
    if (f.input2 && (p.vec4 || blockRegisterSlots(p) ||
                     (p.mode != Mode::Thread && p.mode != Mode::Warp &&
                      p.mode != Mode::Block)))
      return e.unsupported("a two-input reduction in this row layout");
    if (p.mode == Mode::Split)
      return emitSplitRows(e, f, yield, p, os);
    if (p.mode == Mode::AtenOrder)
      return emitAtenOrderRows(e, f, yield, p, os);
    if (p.mode == Mode::AtenSoftmax)
      return emitAtenSoftmaxRows(e, f, yield, p, os);
    if (p.mode == Mode::AtenSpatial)
      return emitAtenSpatialRows(e, f, yield, p, os);
    if (p.mode == Mode::AtenStrided)
      return emitAtenStridedRows(e, f, yield, p, os);
    if (p.mode == Mode::AtenReduce)
      return emitAtenReduceRows(e, f, yield, p, os);
    if (p.mode == Mode::Warp)
      return p.stagedTile ? emitStagedRows(p, os)
             : p.vec4     ? emitVectorRows(p, os)
                          : emitRegisterRows(p, os);
    if (blockRegisterSlots(p))
      return emitBlockRegisterRows(p, os);
    if (threadRegisterRow(p))
      return emitThreadRegisterRows(p, os);
    if (blockSharedRow(p))
      return emitBlockSharedRows(p, os);
    if (p.mode == Mode::Columns)
      return emitColumns(p, os);
    if (p.mode == Mode::Tile)
      return emitTile(p, os);
    std::string R = std::to_string(p.rows) + "LL",
                C = std::to_string(p.cols) + "LL";
    std::string leader;
    switch (p.mode) {
    case Mode::Block:
      declareBlockScratch(p, os);
      os << "  for (long long r = blockIdx.x; r < " << R
         << "; r += gridDim.x) {\n";
      if (auto err = emitRowFirstStats(e, p, 0, os))
        return err;
      // A compile-time stride and trip count let the loop be unrolled with
      // four loads in flight per thread: with few rows (batch_norm's
      // channels) one block per SM must keep enough bytes in flight alone.
      head = "#pragma unroll 4\n    for (long long c = threadIdx.x; c < " + C +
             "; c += " + std::to_string(rowBlockSize(p)) + ") {\n";
      leader = "    if (threadIdx.x == 0) {\n";
      break;
    case Mode::Warp:
    case Mode::Columns:
    case Mode::Tile:
    case Mode::Split:
    case Mode::AtenOrder:
    case Mode::AtenSoftmax:
    case Mode::AtenSpatial:
    case Mode::AtenStrided:
    case Mode::AtenReduce:
      llvm_unreachable("emitted by emitRegisterRows / emitVectorRows / "
                       "emitColumns / emitTile / emitSplitRows / "
                       "emitAtenOrderRows / emitAtenSoftmaxRows / "
                       "emitAtenSpatialRows / emitAtenStridedRows");
    case Mode::Thread:
      os << "  for (long long r = (long long)blockIdx.x * blockDim.x + "
            "threadIdx.x; r < "
         << R << ";\n       r += (long long)gridDim.x * blockDim.x) {\n";
      if (auto err = emitRowFirstStats(e, p, 1, os))
        return err;
      // Unrolled: one load in flight per thread is latency-bound (an amax
      // over a middle dim of 65 with 8.6M rows took 2.40 ms where ATen's
      // kernel takes 0.58, gen-20261201 task 57).
      head =
          "#pragma unroll 8\n    for (long long c = 0; c < " + C + "; ++c) {\n";
      leader = "    {\n";
      break;
    }
    if (auto err = emitShift(p, os))
      return err;
    for (const ReducePass &pass : p.prog.passes) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      auto x = loopHead(p, os);
      if (!x)
        return x.takeError();
      os << "      " << stepText(f, pass, *x, y) << "\n    }\n";
      e.newScope();
      if (p.mode != Mode::Thread && pass.online)
        os << combineOnlineBlock(pass, "    ");
      else if (p.mode != Mode::Thread)
        for (const Accumulator &a : pass.accs)
          os << "    " << combineAcc(a, 0) << "\n";
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    if (p.element) {
      auto x = loopHead(p, os);
      if (!x)
        return x.takeError();
      if (auto err = writeElement(p, *x, os, "      "))
        return err;
      os << "    }\n";
      e.newScope();
      if (!p.leaderExtra.empty())
        os << leader << p.leaderExtra << "    }\n";
    } else {
      if (auto err = writeRowResult(p, leader, os))
        return err;
    }
    os << "  }\n";
    return llvm::Error::success();
  }

  /// Warp mode: a group of L lanes per row (L a power of two), the row's
  /// elements loaded once into registers (the pointwise prologue evaluated
  /// once per element), every pass and the output pass reading registers;
  /// combines are xor shuffles within the group. The loop runs per warp, so
  /// all 32 lanes reach every shuffle; rows past the end are dead lanes.
  llvm::Error emitRegisterRows(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t L = rowLanes(p), K = (p.cols + L - 1) / L;
    std::string Ls = std::to_string(L), Ks = std::to_string(K),
                C = std::to_string(p.cols) + "LL";
    int to = transposedOutput(e, p, yield, L);
    if (to >= 0)
      openTransposedStoreRows(e, p, L, to, os);
    else
      openGroupRows(p, L, os);
    if (auto err = p.rowFirst ? emitHeldRowStats(p, L, K, os)
                              : emitRowFirstStats(e, p, L, os))
      return err;
    if (auto err =
            loadRegisters(p, K, "lane + k * " + Ls, "live && c < " + C, os))
      return err;
    if (p.shiftFirst)
      emitGroupShift(L, os);
    std::string each = "#pragma unroll\n    for (int k = 0; k < " + Ks +
                       "; ++k) {\n      const long long c = lane + k * " + Ls +
                       ";\n      if (live && c < " + C + ") {\n";
    std::string flush = to >= 0 ? transposedStoreFlush(e, p, L, to) : "";
    auto err = emitRegisterPasses(p, each, "xs[k]", L,
                                  "    if (live && lane == 0) {\n", os,
                                  /*vectorSlots=*/0, K, flush);
    e.stagedOut = -1;
    return err;
  }

  /// A softmax or layer norm over the rows held here (RowPlan::rowFirst):
  /// its input is loaded once into kbs_x[K], in the slots the final stage's
  /// loads use, the prologue evaluated once (emitRowFirstStats's loops read
  /// the row again, re-evaluating the prologue: an anchor's bias and
  /// activation three times); its statistics come from there in the same
  /// per-lane order (the same bits), and the final stage's loads read
  /// kbs_x[k] where they need the first stage's input.
  llvm::Error emitHeldRowStats(const RowPlan &p, int64_t L, int64_t K,
                               llvm::raw_ostream &os) {
    auto s = analyzeStage(e.kernel, p.rowFirst);
    if (!s)
      return s.takeError();
    std::string Ls = std::to_string(L), C = std::to_string(p.cols) + "LL";
    if (auto err = loadSlots(p, K, "lane + k * " + Ls, "live && c < " + C,
                             "kbs_x", s->input, os))
      return err;
    std::string each = "#pragma unroll\n    for (int k = 0; k < " +
                       std::to_string(K) +
                       "; ++k) {\n      const long long c = lane + k * " + Ls +
                       ";\n      if (live && c < " + C + ")\n";
    heldFirstInput = s->input;
    e.rowStats.insert(p.rowFirst);
    if (s->recipe == Recipe::LayerNorm) {
      // The layer norm's program (RowPlans.cpp): double moments of x - k0,
      // k0 the row's first element, held by the group's first lane.
      os << "    const float kbs_x0 = __shfl_sync(0xffffffffu, kbs_x[0], "
            "(threadIdx.x & 31) & ~"
         << L - 1 << ");\n"
         << "    const double kbs_k0 = isfinite(kbs_x0) ? (double)kbs_x0 : "
            "0.0;\n"
         << "    double kbs_sx = 0.0, kbs_sq = 0.0;\n"
         << each
         << "        { const double d = (double)kbs_x[k] - kbs_k0; kbs_sx += "
            "d; kbs_sq += d * d; }\n    }\n"
         << "    kbs_sx = kb::group_reduce<" << Ls << ">(kbs_sx, kb::Sum());\n"
         << "    kbs_sq = kb::group_reduce<" << Ls << ">(kbs_sq, kb::Sum());\n";
      return rowNormStats(e, p.rowFirst, p.cols, os);
    }
    os << "    float kbs_m = (-kb::inf());\n"
       << each << "        kbs_m = kb::nanmax(kbs_m, kbs_x[k]);\n    }\n"
       << "    kbs_m = kb::group_reduce<" << Ls << ">(kbs_m, kb::Max());\n"
       << "    float kbs_acc = 0.f;\n"
       << each
       << "        kbs_acc += expf(__fsub_rn(kbs_x[k], kbs_m));\n    }\n"
       << "    kbs_acc = kb::group_reduce<" << Ls << ">(kbs_acc, kb::Sum());\n";
    e.normStats[p.rowFirst] = {"kbs_m", "kbs_acc"};
    return llvm::Error::success();
  }

  /// Thread mode for short rows read more than once: the thread loads its
  /// row into registers (the pointwise prologue evaluated once per element)
  /// and every pass and the output pass read them, in the same order as
  /// the streamed loops. Re-reading a row of pooled values on each pass
  /// (max_pool1d -> layer_norm over rows of 10, gen-20261215 task 1) ran at
  /// 1.6 TB/s, three windows of loads a row element.
  llvm::Error emitThreadRegisterRows(const RowPlan &p, llvm::raw_ostream &os) {
    std::string K = std::to_string(p.cols), C = K + "LL";
    os << "  for (long long r = (long long)blockIdx.x * blockDim.x + "
          "threadIdx.x; r < "
       << p.rows << "LL;\n       r += (long long)gridDim.x * blockDim.x) {\n";
    if (auto err = emitRowFirstStats(e, p, 1, os))
      return err;
    if (auto err = loadRegisters(p, p.cols, "k", "c < " + C, os))
      return err;
    if (p.shiftFirst)
      emitGroupShift(1, os);
    std::string each =
        "#pragma unroll\n    for (int k = 0; k < " + K +
        "; ++k) {\n      const long long c = k;\n      if (c < " + C + ") {\n";
    return emitRegisterPasses(p, each, "xs[k]", 1, "    {\n", os,
                              /*vectorSlots=*/0, p.cols);
  }

  /// `float xs[K]`: slot k holds element c = `col` of row r where `cond`
  /// holds (0 elsewhere), the pointwise prologue evaluated once per
  /// element; all K loads are issued before any pass combines. A two-input
  /// reduction's second input goes to ys[K] alike.
  llvm::Error loadRegisters(const RowPlan &p, int64_t K, llvm::StringRef col,
                            llvm::StringRef cond, llvm::raw_ostream &os) {
    if (auto err = loadSlots(p, K, col, cond, "xs", f.input, os))
      return err;
    if (!f.input2)
      return llvm::Error::success();
    return loadSlots(p, K, col, cond, "ys", f.input2, os);
  }

  llvm::Error loadSlots(const RowPlan &p, int64_t K, llvm::StringRef col,
                        llvm::StringRef cond, llvm::StringRef slots,
                        mlir::Value value, llvm::raw_ostream &os) {
    os << "    float " << slots << "[" << K << "];\n"
       << "#pragma unroll\n    for (int k = 0; k < " << K << "; ++k) {\n"
       << "      const long long c = " << col << ";\n"
       << "      " << slots << "[k] = 0.f;\n"
       << "      if (" << cond << ") {\n"
       << "        const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    seedRowCoordinates(e, p, "r");
    if (heldFirstInput && value != heldFirstInput)
      e.seed(heldFirstInput, "i", "kbs_x[k]");
    auto x = e.valueAt(value, "i", os, "        ");
    if (!x)
      return x.takeError();
    os << "        " << slots << "[k] = " << *x << ";\n      }\n    }\n";
    e.newScope();
    return llvm::Error::success();
  }

  /// k0 for a group of L lanes: the first element, held by the group's
  /// first lane (one thread a row, L = 1, holds it itself: no shuffle, which
  /// its diverging row loop could not reach with every lane).
  void emitGroupShift(int64_t L, llvm::raw_ostream &os) {
    std::string x0 = "xs[0]";
    if (L > 1) {
      os << "    const float x0 = __shfl_sync(0xffffffffu, xs[0], (threadIdx.x "
            "& 31) & ~"
         << L - 1 << ");\n";
      x0 = "x0";
    }
    os << "    // A non-finite first element would make every difference "
          "Inf/NaN.\n"
       << "    const double k0 = isfinite(" << x0 << ") ? (double)" << x0
       << " : 0.0;\n";
  }

  /// The passes and outputs of a row held in registers: `each` opens the
  /// loop over a thread's register slots (defining c, testing liveness),
  /// `x` is the slot's value, `lanes` the group width combines run over
  /// (0: the block), `leader` opens the row leader's block; with
  /// `vectorSlots` > 0 the output pass stores float4s (emitVectorElements).
  /// `holdSlots`: the thread's register slots, for a pass's held values;
  /// `tripTail`: statements closing each trip of the row loop (a staged
  /// tile's barrier and stores, emitStagedRows).
  llvm::Error emitRegisterPasses(const RowPlan &p, llvm::StringRef each,
                                 llvm::StringRef x, int64_t lanes,
                                 llvm::StringRef leader, llvm::raw_ostream &os,
                                 int64_t vectorSlots = 0, int64_t holdSlots = 0,
                                 llvm::StringRef tripTail = "") {
    // A pass's held value (ReducePass::hold) kept per slot in hs[] for the
    // output pass, where the plan reads it (RowPlan::heldElement).
    const ReducePass *held = nullptr;
    if (holdSlots > 0 && p.heldElement)
      for (const ReducePass &pass : p.prog.passes)
        if (!pass.hold.empty())
          held = &pass;
    for (const ReducePass &pass : p.prog.passes) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      ReducePass step = pass;
      if (&pass == held) {
        os << "    float hs[" << holdSlots << "];\n";
        step.step = "hs[k] = " + pass.hold + ";\n        " +
                    replaceAll(pass.step, "{h}", "hs[k]");
        step.hold.clear();
      }
      os << each << "        " << stepText(f, step, x, "ys[k]")
         << "\n      }\n    }\n";
      // One thread a row (lanes 1) has nothing to combine.
      for (const Accumulator &a : pass.accs)
        if (lanes != 1)
          os << "    " << combineAcc(a, lanes) << "\n";
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    if (!p.element) {
      if (auto err = writeRowResult(p, leader, os))
        return err;
      os << tripTail << "  }\n";
      return llvm::Error::success();
    }
    if (vectorSlots) {
      if (auto err = emitVectorElements(p, vectorSlots, os, held != nullptr))
        return err;
    } else {
      os << each << "        const long long i = " << p.index("r", "c")
         << ";\n";
      // Staged outputs (emitStagedRows): slot j of ov<k> is the element's
      // place in output k's tile row.
      if (p.stagedTile)
        os << "        const int j = k;\n        (void)i;\n";
      e.newScope();
      seedRowCoordinates(e, p, "r");
      if (auto err =
              writeElement(p, x, os, "        ",
                           /*toSlots=*/p.stagedTile, held ? "hs[k]" : ""))
        return err;
      os << "      }\n    }\n";
      e.newScope();
    }
    if (!p.leaderExtra.empty())
      os << leader << p.leaderExtra << "    }\n";
    os << tripTail << "  }\n";
    return llvm::Error::success();
  }

  /// The tile's values a pooling whose windows overlap (adaptive sizes
  /// that do not divide, a stride below the window): each output loaded
  /// its window's elements from global memory and evaluated the prologue on
  /// each, every element about twice (seed 20261306 task 1's
  /// adaptive_max_pool2d 7 of 32 x 8 after `(conv + b) - mean`: 0.416 ms
  /// for 600 MB on an H100). The trip's input planes go to shared memory
  /// first, with coalesced loads and the prologue once per element; the
  /// windows read them there, in the same order, so the values are the
  /// same bits. Only where the planes fit beside `usedBytes`.
  llvm::Error stagePoolInput(int64_t C, int64_t outputs, int64_t usedBytes,
                             llvm::raw_ostream &os) {
    auto pool = f.input.getDefiningOp<AtenOp>();
    const OpInfo *info = pool ? pool.getInfo() : nullptr;
    if (!info || !isPoolRecipe(info->recipe))
      return llvm::Error::success();
    auto ps = analyzeStage(e.kernel, pool);
    if (!ps) {
      llvm::consumeError(ps.takeError());
      return llvm::Error::success();
    }
    int64_t k = ps->spatial, planeIn = 1, planeOut = 1;
    bool adaptive = ps->recipe == Recipe::AdaptiveMaxPool ||
                    ps->recipe == Recipe::AdaptiveAvgPool;
    bool overlap = false;
    for (int64_t d = 0; d < k; ++d) {
      int64_t in = ps->inShape[ps->inShape.size() - k + d];
      int64_t out = ps->outShape[ps->outShape.size() - k + d];
      planeIn *= in;
      planeOut *= out;
      overlap |= adaptive ? in % out != 0
                          : (d < (int64_t)ps->stride.size() &&
                             ps->stride[d] < ps->kernel[d]);
    }
    int64_t floats = (outputs / planeOut + 2) * planeIn;
    if (!overlap || floats * 4 + usedBytes > kStagedPoolBytes)
      return llvm::Error::success();
    // The staging loop evaluates the pooling's input, never the pooling,
    // so the windows may read the stage from here on.
    e.stagedPool = pool;
    auto [stage, base] = e.stagedPoolInput(pool);
    e.preamble += "  __shared__ float " + stage + "[" + std::to_string(floats) +
                  "];\n  long long " + base + " = 0;\n";
    std::string PI = std::to_string(planeIn) + "LL",
                PO = std::to_string(planeOut) + "LL";
    os << "    " << base << " = r0 * " << C << "LL / " << PO << " * " << PI
       << ";\n"
       << "    const int kb_sn = (int)(((r0 * " << C << "LL + n - 1) / " << PO
       << " + 1) * " << PI << " - " << base << ");\n"
       << "    for (int t = threadIdx.x; t < kb_sn; t += 256) {\n"
       << "      const long long i = " << base << " + t;\n";
    e.newScope();
    auto x = e.valueAt(ps->input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      " << stage << "[t] = " << *x
       << ";\n    }\n    __syncthreads();\n";
    e.newScope();
    return llvm::Error::success();
  }

  /// Warp-mode rows of at most kStagedSoftmaxRowMax contiguous scalars
  /// (RowPlan::stagedTile): each trip of the block takes 256 rows, their
  /// elements one contiguous run of the input. The block computes the run
  /// into shared memory with coalesced loads (the pointwise prologue
  /// evaluated once per element), each thread then takes one row from it
  /// into registers, and per-element outputs go back into the tiles (the
  /// input's own, the first output's) for coalesced stores. Rows sit in the
  /// tiles at an odd pitch, so that the 32 rows of a warp fall in 32 banks.
  /// Loads and stores stay scalar: float4s (each scattered into the pitched
  /// tile) measured slower on the H200 (session 36, codegen_knobs.py):
  /// log_softmax over rows of 7 0.227 -> 0.252 ms, softmax over 14 0.228 ->
  /// 0.234.
  llvm::Error emitStagedRows(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t C = p.cols, P = C % 2 ? C : C + 1;
    size_t outs = p.element ? yield.getValues().size() : 0;
    std::string Cs = std::to_string(C), Ps = std::to_string(P),
                R = std::to_string(p.rows) + "LL";
    auto at = [&](llvm::StringRef t) {
      return "(unsigned)(" + t.str() + ") / " + Cs + "u * " + Ps +
             "u + (unsigned)(" + t.str() + ") % " + Cs + "u";
    };
    auto tile = [](size_t k) {
      return k == 0 ? std::string("kb_tile") : "kb_tile" + std::to_string(k);
    };
    size_t tiles = std::max<size_t>(outs, 1);
    for (size_t k = 0; k < tiles; ++k)
      os << "  __shared__ float " << tile(k) << "[" << 256 * P << "];\n";
    os << "  for (long long r0 = (long long)blockIdx.x * 256; r0 < " << R
       << "; r0 += (long long)gridDim.x * 256) {\n"
       << "    const int n = (int)(" << R << " - r0 < 256LL ? " << R
       << " - r0 : 256LL) * " << Cs << ";\n";
    if (auto err = stagePoolInput(C, 256 * C, tiles * 256 * P * 4, os))
      return err;
    os << "    for (int t = threadIdx.x; t < n; t += 256) {\n"
       << "      const long long i = r0 * " << Cs << "LL + t;\n";
    e.newScope();
    auto x = e.valueAt(f.input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      kb_tile[" << at("t") << "] = " << *x << ";\n    }\n";
    e.newScope();
    os << "    __syncthreads();\n"
       << "    const long long r = r0 + threadIdx.x;\n"
       << "    const bool live = r < " << R << ";\n"
       << "    float xs[" << Cs << "];\n"
       << "#pragma unroll\n    for (int k = 0; k < " << Cs << "; ++k)\n"
       << "      xs[k] = live ? kb_tile[threadIdx.x * " << Ps
       << " + k] : 0.f;\n";
    // The thread has its row: its outputs may overwrite it in place.
    for (size_t k = 0; k < outs; ++k)
      os << "    float* const ov" << k << " = " << tile(k)
         << " + threadIdx.x * " << Ps << ";\n";
    if (p.shiftFirst)
      emitGroupShift(1, os);
    // Every thread is done with this trip's tiles before the next fills
    // them.
    std::string tail = "    __syncthreads();\n";
    if (outs) {
      llvm::raw_string_ostream t(tail);
      t << "    for (int t = threadIdx.x; t < n; t += 256) {\n"
        << "      const unsigned q = " << at("t") << ";\n";
      for (size_t k = 0; k < outs; ++k)
        t << "      " << e.store(k, "r0 * " + Cs + "LL + t", tile(k) + "[q]")
          << "\n";
      t << "    }\n    __syncthreads();\n";
    }
    std::string each = "#pragma unroll\n    for (int k = 0; k < " + Cs +
                       "; ++k) {\n      const long long c = k;\n      "
                       "(void)c;\n      if (live) {\n";
    return emitRegisterPasses(p, each, "xs[k]", 1, "    if (live) {\n", os,
                              /*vectorSlots=*/0, C, tail);
  }

  /// The output pass of emitVectorRows: four elements per slot, each
  /// output stored as one float4 (outputs are indexed as the input is).
  llvm::Error emitVectorElements(const RowPlan &p, int64_t slots,
                                 llvm::raw_ostream &os, bool held) {
    size_t n = yield.getValues().size();
    std::string Ls = std::to_string(rowLanes(p)),
                C = std::to_string(p.cols) + "LL";
    os << "#pragma unroll\n    for (int k4 = 0; k4 < " << slots << "; ++k4) {\n"
       << "      const long long cb = 4 * (lane + k4 * " << Ls << ");\n"
       << "      if (live && cb < " << C << ") {\n"
       << "        const long long ib = " << p.index("r", "cb") << ";\n";
    for (size_t k = 0; k < n; ++k)
      os << "        float ov" << k << "[4];\n";
    os << "#pragma unroll\n        for (int j = 0; j < 4; ++j) {\n"
       << "          const long long c = cb + j, i = ib + j;\n"
       << "          (void)c;\n";
    e.newScope();
    if (auto err = writeElement(p, "xs[4 * k4 + j]", os, "          ",
                                /*toSlots=*/true, held ? "hs[4 * k4 + j]" : ""))
      return err;
    os << "        }\n";
    e.newScope();
    for (size_t k = 0; k < n; ++k)
      os << "        " << e.storeFour(k, "ib", "ov" + std::to_string(k))
         << "\n";
    os << "      }\n    }\n";
    return llvm::Error::success();
  }

  void declareBlockScratch(const RowPlan &p, llvm::raw_ostream &os) {
    os << blockScratch(p.prog);
  }

  /// k0 (the row's first element) for shifted statistics, read by every
  /// thread of a block row.
  llvm::Error emitShift(const RowPlan &p, llvm::raw_ostream &os) {
    if (!p.shiftFirst)
      return llvm::Error::success();
    return writeShift(p, "const double k0", os, "    ");
  }

  /// Block mode for rows of up to 2K elements: the block loads its row
  /// once into registers (every load issued before the first combine, the
  /// pointwise prologue evaluated once per element) and every pass and the
  /// output pass read registers instead of re-reading the row.
  llvm::Error emitBlockRegisterRows(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t K = blockRegisterSlots(p), B = rowBlockSize(p);
    std::string Ks = std::to_string(K), Bs = std::to_string(B),
                C = std::to_string(p.cols) + "LL";
    declareBlockScratch(p, os);
    os << "  for (long long r = blockIdx.x; r < " << p.rows
       << "LL; r += gridDim.x) {\n";
    if (auto err = emitRowFirstStats(e, p, 0, os))
      return err;
    if (auto err =
            loadRegisters(p, K, "threadIdx.x + k * " + Bs, "c < " + C, os))
      return err;
    if (auto err = emitShift(p, os))
      return err;
    std::string each =
        "#pragma unroll\n    for (int k = 0; k < " + Ks +
        "; ++k) {\n      const long long c = threadIdx.x + k * " + Bs +
        ";\n      if (c < " + C + ") {\n";
    return emitRegisterPasses(p, each, "xs[k]", 0,
                              "    if (threadIdx.x == 0) {\n", os,
                              /*vectorSlots=*/0, K);
  }

  /// Block mode for rows too long for registers: each thread stages its
  /// elements of the row (c = threadIdx.x + k * B) in shared memory once,
  /// the pointwise prologue evaluated once per element, and every pass and
  /// the output pass read them back instead of re-reading (and
  /// re-computing) the row. A thread reads only the slots it wrote, so the
  /// staging needs no barrier of its own.
  llvm::Error emitBlockSharedRows(const RowPlan &p, llvm::raw_ostream &os) {
    std::string B = std::to_string(rowBlockSize(p)),
                C = std::to_string(p.cols) + "LL";
    declareBlockScratch(p, os);
    os << "  __shared__ float xsm[" << p.cols << "];\n"
       << "  for (long long r = blockIdx.x; r < " << p.rows
       << "LL; r += gridDim.x) {\n";
    if (auto err = emitRowFirstStats(e, p, 0, os))
      return err;
    os << "#pragma unroll 4\n    for (long long c = threadIdx.x; c < " << C
       << "; c += " << B << ") {\n"
       << "      const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    seedRowCoordinates(e, p, "r");
    auto x = e.valueAt(f.input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      xsm[c] = " << *x << ";\n    }\n";
    e.newScope();
    if (auto err = emitShift(p, os))
      return err;
    std::string each = "#pragma unroll 4\n    for (long long c = threadIdx.x; "
                       "c < " +
                       C + "; c += " + B + ") {\n      {\n";
    return emitRegisterPasses(p, each, "xsm[c]", 0,
                              "    if (threadIdx.x == 0) {\n", os);
  }

  /// Warp mode with float4 loads (rows of contiguous runs of 4, the input
  /// a kernel argument): a group of L lanes per row, lane l holding the
  /// float4s l, l + L, ...; with L = the row's float4 count (up to 32) a
  /// warp load reads 512 consecutive bytes even for rows of 8 (a layer norm
  /// over rows of 8, one thread per row: 0.265 ms vs torch.compile's
  /// 0.133). Per-element outputs are stored as float4 too.
  llvm::Error emitVectorRows(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t L = rowLanes(p), K4 = ((p.cols + 3) / 4 + L - 1) / L;
    int64_t U = std::max(p.groupUnroll, 1);
    std::string Ls = std::to_string(L), K4s = std::to_string(K4),
                C = std::to_string(p.cols) + "LL", S = std::to_string(4 * K4);
    unsigned arg = cast<BlockArgument>(f.input).getArgNumber();
    std::string load =
        "#pragma unroll\n    for (int k = 0; k < " + K4s + "; ++k) {\n" +
        "      const long long c = 4 * (lane + k * " + Ls + ");\n" +
        "      float4 v4 = make_float4(0.f, 0.f, 0.f, 0.f);\n" +
        "      if (live && c < " + C + ")\n" +
        "        v4 = *reinterpret_cast<const float4*>(in" +
        std::to_string(arg) + " + " + p.index("r", "c") + ");\n" +
        "      xs[4 * k] = v4.x; xs[4 * k + 1] = v4.y; xs[4 * k + 2] = v4.z; "
        "xs[4 * k + 3] = v4.w;\n    }\n";
    if (U == 1) {
      openGroupRows(p, L, os);
      os << "    float xs[" << S << "];\n" << load;
    } else {
      // --group-unroll: the warp's U row groups (strided by the grid's
      // reach, as U trips of the loop would take them) are all loaded
      // before the first one's shuffles, then processed one by one.
      std::string reach = "(long long)gridDim.x * " + std::to_string(256 / L);
      std::string group =
          "#pragma unroll\n    for (int u = 0; u < " + std::to_string(U) +
          "; ++u) {\n    const long long r = rq + u * " + reach +
          " + (threadIdx.x & 31) / " + Ls + ";\n    const bool live = r < " +
          std::to_string(p.rows) + "LL;\n    float (&xs)[" + S +
          "] = xsu[u];\n";
      os << "  const int lane = threadIdx.x & " << L - 1 << ";\n"
         << "  for (long long rq = ((long long)blockIdx.x * 256 + (threadIdx.x "
            "& ~31)) / "
         << Ls << "; rq < " << p.rows << "LL;\n       rq += " << reach << " * "
         << U << ") {\n"
         << "    float xsu[" << U << "][" << S << "];\n"
         << group << load << "    }\n"
         << group;
    }
    if (p.shiftFirst)
      emitGroupShift(L, os);
    std::string each =
        "#pragma unroll\n    for (int k = 0; k < " + S +
        "; ++k) {\n      const long long c = 4 * (lane + (k >> "
        "2) * " +
        Ls + ") + (k & 3);\n      if (live && c < " + C + ") {\n";
    if (auto err = emitRegisterPasses(p, each, "xs[k]", L,
                                      "    if (live && lane == 0) {\n", os, K4,
                                      4 * K4))
      return err;
    if (U > 1)
      os << "  }\n"; // the loop over row groups
    return llvm::Error::success();
  }

  /// Columns mode: rows whose elements are strided by the row count's
  /// fastest dim (channels of channels-last data). A block takes 32
  /// rows neighbouring in channel, one per lane (rows (n, c, m) of a
  /// reduction over the last spatial dims are taken in (n, m, c) order),
  /// and its W warps split each row's
  /// elements, so every warp load reads 32 neighbouring channels. Per pass,
  /// each lane's W partials meet in shared memory and are combined in warp
  /// order by every thread (the same result in all of them).
  llvm::Error emitColumns(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t W = columnWarps(p.cols);
    std::string R = std::to_string(p.rows) + "LL",
                C = std::to_string(p.cols) + "LL", Ws = std::to_string(W);
    os << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n";
    for (auto [k, pass] : llvm::enumerate(p.prog.passes))
      for (const Accumulator &a : pass.accs) {
        os << "  __shared__ " << a.type << " cb" << k << a.name << "[" << W
           << " * 32];\n";
        if (a.combine == "CSum")
          os << "  __shared__ float cb" << k << a.name << "c[" << W
             << " * 32];\n";
      }
    // r0 is uniform in the block: every thread reaches every barrier.
    os << "  for (long long r0 = (long long)blockIdx.x * 32; r0 < " << R
       << "; r0 += (long long)gridDim.x * 32) {\n";
    if (p.colM > 1) {
      // Lane l takes the l-th row in channel-fastest order, (n, m, c), and
      // reduces NCHW's row (n, c, m); its result lands at that row.
      std::string M = std::to_string(p.colM) + "LL",
                  Cs = std::to_string(p.colC) + "LL";
      os << "    const long long cq = r0 + lane;\n"
         << "    const long long r = ((cq / (" << M << " * " << Cs << ")) * "
         << Cs << " + cq % " << Cs << ") * " << M << " + (cq / " << Cs << ") % "
         << M << ";\n"
         << "    const bool live = cq < " << R << ";\n";
    } else {
      os << "    const long long r = r0 + lane;\n"
         << "    const bool live = r < " << R << ";\n";
    }
    for (auto [k, pass] : llvm::enumerate(p.prog.passes)) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      os << "    if (live) {\n#pragma unroll 4\n"
         << "      for (long long c = warp; c < " << C << "; c += " << Ws
         << ") {\n"
         << "        const long long i = " << p.index("r", "c") << ";\n";
      e.newScope();
      seedRowCoordinates(e, p, "r");
      auto x = e.valueAt(f.input, "i", os, "        ");
      if (!x)
        return x.takeError();
      os << "        " << stepText(f, pass, *x, "") << "\n      }\n    }\n";
      e.newScope();
      for (const Accumulator &a : pass.accs) {
        std::string buf = "cb" + std::to_string(k) + a.name;
        bool csum = a.combine == "CSum";
        os << "    " << buf << "[threadIdx.x] = " << a.name << ";\n";
        if (csum)
          os << "    " << buf << "c[threadIdx.x] = " << a.name << "c;\n";
      }
      os << "    __syncthreads();\n";
      for (const Accumulator &a : pass.accs) {
        std::string buf = "cb" + std::to_string(k) + a.name;
        os << combineWarpsInOrder(a, buf, buf + "c", W, "    ");
      }
      // The buffers are written again by the next pass or row group.
      os << "    __syncthreads();\n";
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    if (auto err = writeRowResult(p, "    if (live && warp == 0) {\n", os))
      return err;
    os << "  }\n";
    return llvm::Error::success();
  }

  /// Tile mode: rows along the last dim W of channels-last data (a
  /// layer_norm over W after a convolution). Neither a row nor a column of
  /// lanes is contiguous both ways, so each block stages the [W, C] slab of
  /// one (n, m) in shared memory: loaded in memory order (neighbouring
  /// threads, neighbouring channels), then a group of L lanes per channel
  /// row walks it along W, as the warp-mode rows do, and writes the row's
  /// outputs contiguously.
  llvm::Error emitTile(const RowPlan &p, llvm::raw_ostream &os) {
    int64_t N = p.tileN, C = p.tileC, M = p.tileM, W = p.tileW;
    std::string Cs = std::to_string(C), Ms = std::to_string(M) + "LL",
                Ws = std::to_string(W), pitch = std::to_string(tilePitch(C, W));
    int64_t bs = rowBlockSize(p), trips = (W * C + bs - 1) / bs;
    int64_t L = lanesPerRow(W), groups = bs / L;
    std::string Ls = std::to_string(L);
    os << "  __shared__ float slab[" << tileFloats(C, W) << "];\n"
       << "  const int lane = threadIdx.x & " << L - 1 << ";\n"
       << "  for (long long q = blockIdx.x; q < " << N * M
       << "LL; q += gridDim.x) {\n"
       << "    const long long n = q / " << Ms << ", m = q % " << Ms
       << ";\n"
       // Unrolled: every load of the slab is issued before the first
       // shared store.
       << "    #pragma unroll\n"
       << "    for (int k = 0; k < " << trips << "; ++k) {\n"
       << "      const int e = threadIdx.x + k * " << bs << ";\n"
       << (W * C % bs ? "      if (e >= " + std::to_string(W * C) + ") break;\n"
                      : std::string())
       << "      const int tw = e / " << Cs << ", tc = e % " << Cs << ";\n"
       << "      const long long i = ((n * " << Cs << " + tc) * " << Ms
       << " + m) * " << Ws << " + tw;\n";
    e.newScope();
    // A per-channel operand (the bias of L2-3's convolution) is read at tc
    // instead of through divisions of i: 0.620 vs 0.665 ms for L2-3's slab.
    ArrayRef<int64_t> space = shapeOf(f.input);
    std::vector<std::string> coords(space.size());
    coords.front() = "n";
    coords[1] = "tc";
    coords.back() = "tw";
    if (space.size() == 4)
      coords[2] = "m";
    e.seedCoordinates("i", space, coords);
    // The slab of (n, m) is W * C consecutive floats of the channels-last
    // input: element e is read at q * W * C + e, not through the permute's
    // index map from i (whose 64-bit arithmetic, 16 loads deep, took 78
    // registers: 3 blocks per SM, 0.85 ms vs 0.62 ms for L2-3's slab).
    if (Value view = e.channelsLastView) {
      unsigned arg = cast<BlockArgument>(view.getDefiningOp()->getOperand(0))
                         .getArgNumber();
      os << "      const float xcl = in" << arg << "[q * " << W * C
         << "LL + e];\n";
      e.seed(view, "i", "xcl");
    }
    auto x = e.valueAt(f.input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      slab[tw * " << pitch << " + tc] = " << *x << ";\n    }\n"
       << "    __syncthreads();\n";
    e.newScope();
    // L lanes per channel row (a warp of 32 would walk 8 rows one after
    // another, each two elements per lane and five shuffle levels deep:
    // 1.15 ms for L2-3's slab vs 0.55 ms for a copy). Every lane of a warp
    // runs the same iterations, so the shuffles see whole groups; rows past
    // C are dead groups.
    os << "    for (int cb = 0; cb < " << Cs << "; cb += " << groups << ") {\n"
       << "      const int cr = cb + (int)(threadIdx.x / " << Ls << ");\n"
       << "      const bool live = cr < " << Cs << ";\n"
       << "      const long long r = (n * " << Cs << " + cr) * " << Ms
       << " + m;\n";
    std::string at = "slab[c * " + pitch + " + cr]";
    if (p.shiftFirst)
      os << "      const float x0 = live ? slab[cr] : 0.f;\n"
         << "      // A non-finite first element would make every difference "
            "Inf/NaN.\n"
         << "      const double k0 = isfinite(x0) ? (double)x0 : 0.0;\n";
    std::string each = "#pragma unroll\n      for (int k = 0; k < " +
                       std::to_string((W + L - 1) / L) +
                       "; ++k) {\n        const int c = lane + k * " + Ls +
                       ";\n        if (!live || c >= " + Ws + ") break;\n";
    for (const ReducePass &pass : p.prog.passes) {
      for (const Accumulator &a : pass.accs)
        os << "      " << declareAcc(a) << "\n";
      os << each << "        " << stepText(f, pass, at, "") << "\n      }\n";
      for (const Accumulator &a : pass.accs)
        os << "      " << combineAcc(a, L) << "\n";
      if (!pass.after.empty())
        os << "      " << pass.after << "\n";
    }
    if (!p.element)
      return e.unsupported("tile rows without per-element outputs");
    os << each << "        const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    seedRowCoordinates(e, p, "r");
    if (auto err = writeElement(p, at, os, "        "))
      return err;
    os << "      }\n    }\n"
       << "    __syncthreads(); // the slab is refilled for the next q\n"
       << "  }\n";
    e.newScope();
    return llvm::Error::success();
  }

private:
  /// Opens the loop over a row's elements and returns the element's
  /// value. (float4 reads here measured slower than these scalar ones: an
  /// instance norm's rows of 16K took 0.211 ms vs 0.163.)
  llvm::Expected<std::string> loopHead(const RowPlan &p,
                                       llvm::raw_ostream &os) {
    os << head << "      const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    seedRowCoordinates(e, p, "r");
    auto x = e.valueAt(f.input, "i", os, "      ");
    if (!x || !f.input2)
      return x;
    auto second = e.valueAt(f.input2, "i", os, "      ");
    if (!second)
      return second.takeError();
    y = *second;
    return x;
  }

  std::string head;
  // The second input's element at the loop head (two-input reductions).
  std::string y;
  // The input of a row's first stage held in kbs_x (emitHeldRowStats).
  mlir::Value heldFirstInput;
};

} // namespace

llvm::Error codegen::emitRowPlan(RegionEmitter &e, const StageInfo &f,
                                 YieldOp yield, const RowPlan &p,
                                 llvm::raw_ostream &os) {
  return RowEmitter(e, f, yield).emit(p, os);
}
