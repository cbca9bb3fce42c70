//===- RowKernels.cpp - Reductions, softmax and norms over rows -----------===//
//
// Every row-shaped final stage is one plan: `rows` independent rows of
// `cols` elements, element (r, c) at an input index given by the plan, a
// few accumulation passes (each combined across the row), then either one
// value per row (sum, mean, amax, ...) or one per element (softmax, norms).
// Rows of up to 1024 elements get one warp each (8 per block, shuffles
// only), longer rows one block; rows of at most 16 elements, and rows whose
// elements are strided (softmax over a middle dim), one thread each, so
// neighbouring threads read neighbouring addresses. The pointwise prologue
// is recomputed on each pass instead of stored.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

#include <functional>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

int64_t codegen::lanesPerRow(int64_t cols) {
  int64_t l = 2;
  while (l < 32 && l * 8 < cols)
    l *= 2;
  return l;
}

int64_t codegen::tilePitch(int64_t C, int64_t W) {
  int64_t R = 32 / lanesPerRow(W);
  return C + ((R - C % 32) % 32 + 32) % 32;
}

namespace {

using Mode = RowMode;

/// Columns mode (channels-last reads): warps per block. Long rows get a
/// 1024-thread block so each SM keeps enough loads in flight with one or
/// two blocks.
int64_t columnWarps(int64_t cols) { return cols >= 4096 ? 32 : 8; }

/// Tile mode's shared slab: W rows of tilePitch floats.
int64_t tileFloats(int64_t C, int64_t W) { return W * tilePitch(C, W); }

Mode chooseMode(int64_t cols, bool contiguousRows) {
  if (!contiguousRows || cols <= 16)
    return Mode::Thread;
  return cols <= 1024 ? Mode::Warp : Mode::Block;
}

int blockSize(const RowPlan &p) {
  if (p.mode == Mode::Split)
    return splitBlockSize(p);
  if (p.mode == Mode::Tile)
    return 256;
  if (p.mode == Mode::Columns)
    return 32 * columnWarps(p.cols);
  return p.mode == Mode::Block && p.cols >= 16384 ? 1024 : 256;
}

std::string subst(std::string text, llvm::StringRef key, llvm::StringRef v) {
  for (size_t p; (p = text.find(key.str())) != std::string::npos;)
    text.replace(p, key.size(), v.str());
  return text;
}

class RowEmitter : RowWriter {
public:
  using RowWriter::RowWriter;

  llvm::Error emit(const RowPlan &p, llvm::raw_ostream &os) {
    if (p.mode == Mode::Split)
      return emitSplitRows(e, f, yield, p, os);
    if (p.mode == Mode::Warp)
      return emitRegisterRows(p, os);
    if (p.mode == Mode::Columns)
      return emitColumns(p, os);
    if (p.mode == Mode::Tile)
      return emitTile(p, os);
    std::string R = std::to_string(p.rows) + "LL",
                C = std::to_string(p.cols) + "LL";
    bool dbl = false, flt = false, csum = false;
    for (const ReducePass &pass : p.prog.passes)
      for (const Accumulator &a : pass.accs)
        (a.combine == "CSum" ? csum : a.type == "double" ? dbl : flt) = true;
    std::string leader;
    switch (p.mode) {
    case Mode::Warp:
      os << "  const int lane = threadIdx.x & 31;\n"
         << "  for (long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> "
            "5); r < "
         << R << "; r += (long long)gridDim.x * 8) {\n";
      head = "    for (long long c = lane; c < " + C + "; c += 32) {\n";
      leader = "    if (lane == 0) {\n";
      break;
    case Mode::Block:
      if (flt)
        os << "  __shared__ float smem[33];\n";
      if (dbl)
        os << "  __shared__ double smemd[33];\n";
      if (csum)
        os << "  __shared__ float smemc[66];\n";
      os << "  for (long long r = blockIdx.x; r < " << R
         << "; r += gridDim.x) {\n";
      // A compile-time stride and trip count let the loop be unrolled with
      // four loads in flight per thread: with few rows (batch_norm's
      // channels) one block per SM must keep enough bytes in flight alone.
      head = "#pragma unroll 4\n    for (long long c = threadIdx.x; c < " + C +
             "; c += " + std::to_string(blockSize(p)) + ") {\n";
      leader = "    if (threadIdx.x == 0) {\n";
      break;
    case Mode::Columns:
    case Mode::Tile:
    case Mode::Split:
      llvm_unreachable("emitted by emitColumns / emitTile / emitSplitRows");
    case Mode::Thread:
      os << "  for (long long r = (long long)blockIdx.x * blockDim.x + "
            "threadIdx.x; r < "
         << R << ";\n       r += (long long)gridDim.x * blockDim.x) {\n";
      head = "    for (long long c = 0; c < " + C + "; ++c) {\n";
      leader = "    {\n";
      break;
    }
    if (p.shiftFirst) {
      // Sums of x - k0 (k0 = the row's first element) in double: one pass
      // for both moments without the cancellation of E[x^2] - E[x]^2.
      e.newScope();
      os << "    const long long ik = " << p.index("r", "0") << ";\n";
      auto x = e.valueAt(f.input, "ik", os, "    ");
      if (!x)
        return x.takeError();
      // A non-finite first element would make every difference Inf/NaN.
      os << "    const double k0 = isfinite(" << *x << ") ? (double)" << *x
         << " : 0.0;\n";
      e.newScope();
    }
    for (const ReducePass &pass : p.prog.passes) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      auto x = loopHead(p, os);
      if (!x)
        return x.takeError();
      os << "      " << subst(pass.step, "{x}", *x) << "\n" << close;
      e.newScope();
      if (p.mode != Mode::Thread)
        for (const Accumulator &a : pass.accs)
          os << "    " << combineAcc(a, p.mode == Mode::Warp ? 32 : 0) << "\n";
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    if (p.element) {
      auto x = loopHead(p, os);
      if (!x)
        return x.takeError();
      if (auto err = writeElement(p, *x, os, "      "))
        return err;
      os << close;
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
    int64_t L = lanesPerRow(p.cols), K = (p.cols + L - 1) / L;
    std::string Ls = std::to_string(L), Ks = std::to_string(K),
                C = std::to_string(p.cols) + "LL";
    os << "  const int lane = threadIdx.x & " << L - 1 << ";\n"
       << "  for (long long r0 = ((long long)blockIdx.x * 256 + (threadIdx.x & "
          "~31)) / "
       << Ls << "; r0 < " << p.rows
       << "LL;\n       r0 += (long long)gridDim.x * " << 256 / L << ") {\n"
       << "    const long long r = r0 + (threadIdx.x & 31) / " << Ls << ";\n"
       << "    const bool live = r < " << p.rows << "LL;\n"
       << "    float xs[" << Ks << "];\n"
       << "#pragma unroll\n    for (int k = 0; k < " << Ks << "; ++k) {\n"
       << "      const long long c = lane + k * " << Ls << ";\n"
       << "      xs[k] = 0.f;\n"
       << "      if (live && c < " << C << ") {\n"
       << "        const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    auto x = e.valueAt(f.input, "i", os, "        ");
    if (!x)
      return x.takeError();
    os << "        xs[k] = " << *x << ";\n      }\n    }\n";
    e.newScope();
    std::string each = "#pragma unroll\n    for (int k = 0; k < " + Ks +
                       "; ++k) {\n      const long long c = lane + k * " + Ls +
                       ";\n      if (live && c < " + C + ") {\n";
    if (p.shiftFirst)
      os << "    const float x0 = __shfl_sync(0xffffffffu, xs[0], (threadIdx.x "
            "& 31) & ~"
         << L - 1 << ");\n"
         << "    // A non-finite first element would make every difference "
            "Inf/NaN.\n"
         << "    const double k0 = isfinite(x0) ? (double)x0 : 0.0;\n";
    for (const ReducePass &pass : p.prog.passes) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      os << each << "        " << subst(pass.step, "{x}", "xs[k]")
         << "\n      }\n    }\n";
      for (const Accumulator &a : pass.accs)
        os << "    " << combineAcc(a, L) << "\n";
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    if (p.element) {
      os << each << "        const long long i = " << p.index("r", "c")
         << ";\n";
      e.newScope();
      if (auto err = writeElement(p, "xs[k]", os, "        "))
        return err;
      os << "      }\n    }\n";
      e.newScope();
      if (!p.leaderExtra.empty())
        os << "    if (live && lane == 0) {\n" << p.leaderExtra << "    }\n";
    } else {
      if (auto err = writeRowResult(p, "    if (live && lane == 0) {\n", os))
        return err;
    }
    os << "  }\n";
    return llvm::Error::success();
  }

  /// Columns mode: rows whose elements are strided by the row count's
  /// fastest dim (channels of channels-last data). A block takes 32
  /// consecutive rows, one per lane, and its W warps split each row's
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
       << "; r0 += (long long)gridDim.x * 32) {\n"
       << "    const long long r = r0 + lane;\n"
       << "    const bool live = r < " << R << ";\n";
    for (auto [k, pass] : llvm::enumerate(p.prog.passes)) {
      for (const Accumulator &a : pass.accs)
        os << "    " << declareAcc(a) << "\n";
      os << "    if (live) {\n#pragma unroll 4\n"
         << "      for (long long c = warp; c < " << C << "; c += " << Ws
         << ") {\n"
         << "        const long long i = " << p.index("r", "c") << ";\n";
      e.newScope();
      auto x = e.valueAt(f.input, "i", os, "        ");
      if (!x)
        return x.takeError();
      os << "        " << subst(pass.step, "{x}", *x) << "\n      }\n    }\n";
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
        bool csum = a.combine == "CSum";
        os << "    " << a.name << " = " << buf << "[lane];\n";
        if (csum)
          os << "    " << a.name << "c = " << buf << "c[lane];\n";
        os << "    for (int w = 1; w < " << Ws << "; ++w) {\n";
        if (csum)
          os << "      kb::csum_add(" << a.name << ", " << a.name << "c, "
             << buf << "[w * 32 + lane]);\n      " << a.name << "c += " << buf
             << "c[w * 32 + lane];\n";
        else
          os << "      " << a.name << " = kb::" << a.combine << "()(" << a.name
             << ", " << buf << "[w * 32 + lane]);\n";
        os << "    }\n";
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
    int64_t bs = blockSize(p), trips = (W * C + bs - 1) / bs;
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
      os << each << "        " << subst(pass.step, "{x}", at) << "\n      }\n";
      for (const Accumulator &a : pass.accs)
        os << "      " << combineAcc(a, L) << "\n";
      if (!pass.after.empty())
        os << "      " << pass.after << "\n";
    }
    if (!p.element)
      return e.unsupported("tile rows without per-element outputs");
    os << each << "        const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    if (auto err = writeElement(p, at, os, "        "))
      return err;
    os << "      }\n    }\n"
       << "    __syncthreads(); // the slab is refilled for the next q\n"
       << "  }\n";
    e.newScope();
    return llvm::Error::success();
  }

private:
  /// Opens the loop over a row's elements (`close` ends it) and returns
  /// the element's value. (float4 reads here measured slower than these
  /// scalar ones: an instance norm's rows of 16K took 0.211 ms vs 0.163.)
  llvm::Expected<std::string> loopHead(const RowPlan &p,
                                       llvm::raw_ostream &os) {
    close = "    }\n";
    os << head << "      const long long i = " << p.index("r", "c") << ";\n";
    e.newScope();
    return e.valueAt(f.input, "i", os, "      ");
  }

  std::string head, close;
};

std::string rowMajor(llvm::StringRef r, llvm::StringRef c, int64_t cols) {
  return "(" + r.str() + ") * " + std::to_string(cols) + "LL + " + c.str();
}

} // namespace

/// One output per row: the row's leader (the block opened by `leader`)
/// writes the reduction's result and the recipe's extra outputs.
llvm::Error codegen::RowWriter::writeRowResult(const RowPlan &p,
                                               llvm::StringRef leader,
                                               llvm::raw_ostream &os) {
  e.newScope();
  os << leader << "      const float red = " << p.prog.result << "; // "
     << displayName(f.op) << "\n";
  if (auto err = writeOutputs("r", os, "      "))
    return err;
  os << p.leaderExtra << "    }\n";
  e.newScope();
  return llvm::Error::success();
}

/// Per-element outputs at index `i`, the input's element being `x`.
llvm::Error codegen::RowWriter::writeElement(const RowPlan &p,
                                             llvm::StringRef x,
                                             llvm::raw_ostream &os,
                                             llvm::StringRef indent) {
  auto red = p.element(x, os, indent);
  if (!red)
    return red.takeError();
  os << indent << "const float red = " << *red << "; // " << displayName(f.op)
     << "\n";
  return writeOutputs("i", os, indent);
}

llvm::Error codegen::RowWriter::writeOutputs(llvm::StringRef idx,
                                             llvm::raw_ostream &os,
                                             llvm::StringRef indent) {
  e.seed(f.op->getResult(0), idx, "red");
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    auto y = e.valueAt(v, idx, os, indent);
    if (!y)
      return y.takeError();
    os << indent << "out" << k << "[" << idx << "] = " << *y << ";\n";
  }
  return llvm::Error::success();
}

llvm::Expected<EmittedKernel>
codegen::emitRowKernel(RegionEmitter &e, const StageInfo &f, YieldOp yield) {
  EmittedKernel out;
  RowPlan p;
  ArrayRef<int64_t> in = f.inShape;
  int64_t rank = in.size();
  const std::string &recipe = f.recipe;
  SmallVector<unsigned> updated; // inputs an op updates in place
  // Rows whose elements are strided by the row count: neighbouring rows,
  // not neighbouring elements, are neighbouring addresses.
  bool stridedRows = false;
  // Length of the runs of consecutive input elements along a row.
  int64_t run = 0;
  bool reduce = recipe != "softmax" && recipe != "log_softmax" &&
                !llvm::StringRef(recipe).ends_with("_norm");
  if (e.channelsLastRead && recipe != "layer_norm" &&
      (!reduce || rank - (int64_t)f.reduced.size() != 2))
    return e.unsupported("channels-last reads are generated for reductions "
                         "over all spatial dims and layer_norm over the last "
                         "dim only");
  if (recipe == "softmax" || recipe == "log_softmax") {
    int64_t d = f.reduced.empty() ? 0 : f.reduced[0];
    int64_t R = rank ? in[d] : 1, inner = product(in.drop_front(d + 1));
    p.rows = product(in) / std::max<int64_t>(R, 1);
    p.cols = R;
    p.mode = chooseMode(R, inner == 1);
    stridedRows = inner > 1;
    run = inner == 1 ? R : 0;
    p.index = [=](llvm::StringRef r, llvm::StringRef c) {
      if (inner == 1)
        return rowMajor(r, c, R);
      return "(" + r.str() + " / " + std::to_string(inner) + "LL) * " +
             std::to_string(R * inner) + "LL + " + c.str() + " * " +
             std::to_string(inner) + "LL + (" + r.str() + " % " +
             std::to_string(inner) + "LL)";
    };
    // __fsub_rn: x - m is never contracted into an FMA with a multiply of
    // the prologue (fma(v, c, -m) uses the unrounded v * c, so the row's
    // maximum minus m would be its rounding error and expf of it Inf).
    p.prog.passes.push_back({{{"m", "float", "(-kb::inf())", "Max"}},
                             "m = kb::nanmax(m, {x});",
                             ""});
    p.prog.passes.push_back({{{"acc", "float", "0.f", "Sum"}},
                             "acc += expf(__fsub_rn({x}, m));",
                             ""});
    bool log = recipe == "log_softmax";
    p.element = [log](llvm::StringRef x, llvm::raw_ostream &,
                      llvm::StringRef) -> llvm::Expected<std::string> {
      return log ? "__fsub_rn(" + x.str() + ", m) - logf(acc)"
                 : "expf(__fsub_rn(" + x.str() + ", m)) / acc";
    };
    p.what = recipe + " over dim " + std::to_string(d);
  } else if (recipe == "layer_norm" || recipe == "group_norm" ||
             recipe == "instance_norm" || recipe == "batch_norm") {
    AtenOp op = f.op;
    auto eps = getConstantNumber(op.getArg("eps"));
    if (!eps)
      return e.unsupported(recipe + " with a non-constant eps");
    if (rank < 2 && recipe != "layer_norm")
      return e.unsupported(recipe + " of a tensor with fewer than 2 dims");
    int64_t C = rank >= 2 ? in[1] : 1, N = in[0],
            HW = rank >= 2 ? product(in.drop_front(2)) : 1;
    // ch(r, c): the channel of element (r, c) for the per-channel affine.
    std::function<std::string(llvm::StringRef, llvm::StringRef)> channel;
    if (recipe == "layer_norm") {
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
      channel = [](llvm::StringRef, llvm::StringRef c) { return c.str(); };
    } else if (recipe == "group_norm") {
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
      channel = [=](llvm::StringRef r, llvm::StringRef c) {
        return "(" + r.str() + " % " + std::to_string(G) + "LL) * " +
               std::to_string(C / G) + "LL + " + c.str() + " / " +
               std::to_string(HW) + "LL";
      };
    } else if (recipe == "instance_norm") {
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
      channel = [C](llvm::StringRef r, llvm::StringRef) {
        return "(" + r.str() + " % " + std::to_string(C) + "LL)";
      };
    } else { // batch_norm in training mode: one row per channel
      p.rows = C;
      p.cols = N * HW;
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
        updated = {rm.getArgNumber(), rv.getArgNumber()};
      }
    }
    p.mode = p.tileW ? Mode::Tile
             : recipe == "batch_norm"
                 ? (p.cols <= 1024 ? Mode::Warp : Mode::Block)
                 : chooseMode(p.cols, true);
    p.shiftFirst = true;
    std::string n = std::to_string(p.cols) + ".0";
    p.prog.passes.push_back(
        {{{"sx", "double", "0.0", "Sum"}, {"sq", "double", "0.0", "Sum"}},
         "{ const double d = (double){x} - k0; sx += d; sq += d * d; }",
         // ATen's Welford turns an Inf in the row into a NaN mean and
         // variance (Inf - Inf on the next update); sx - sx is NaN exactly
         // then, 0 otherwise. Rounding can make m2 slightly negative; NaN
         // must stay NaN, which fmax would drop.
         "const double nf = sx - sx, mean = k0 + sx / " + n +
             " + nf, m2 = sq / " + n + " - (sx / " + n + ") * (sx / " + n +
             ") + nf;\n    "
             "const double var = m2 < 0.0 ? 0.0 : m2;\n    "
             "const double rstd = 1.0 / sqrt(var + " +
             doubleLiteral(*eps) + ");"});
    Value weight = op.getArg("weight"), bias = op.getArg("bias");
    p.element = [&e, weight, bias, channel](
                    llvm::StringRef x, llvm::raw_ostream &os,
                    llvm::StringRef indent) -> llvm::Expected<std::string> {
      std::string y = "(float)(((double)" + x.str() + " - mean) * rstd)";
      bool w = weight && !isNone(weight), b = bias && !isNone(bias);
      if (w || b)
        os << indent << "const long long ch = " << channel("r", "c") << ";\n";
      if (w) {
        auto v = e.valueAt(weight, "ch", os, indent);
        if (!v)
          return v.takeError();
        y += " * " + *v;
      }
      if (b) {
        auto v = e.valueAt(bias, "ch", os, indent);
        if (!v)
          return v.takeError();
        y += " + " + *v;
      }
      return y;
    };
    p.what = displayName(op);
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
    stridedRows = inner > 1;
    run = inner == 1 && !e.channelsLastRead ? p.cols : 0;
    p.mode = e.channelsLastRead ? Mode::Columns : chooseMode(p.cols, true);
    int64_t cols = p.cols;
    p.index = [cols, inner](llvm::StringRef r, llvm::StringRef c) {
      if (inner == 1)
        return rowMajor(r, c, cols);
      return "(" + r.str() + " / " + std::to_string(inner) + "LL) * " +
             std::to_string(cols * inner) + "LL + " + c.str() + " * " +
             std::to_string(inner) + "LL + (" + r.str() + " % " +
             std::to_string(inner) + "LL)";
    };
    p.prog = reduceProgram(f, p.cols);
    p.what = displayName(f.op);
  }

  // Split over many blocks: rows too few to fill the GPU one block (or,
  // strided, one thread) each, and rows strided by the row count, which
  // lanes over rows read coalesced (SplitRows.cpp).
  if (!e.channelsLastRead && p.mode != Mode::Tile &&
      p.rows * p.cols >= (int64_t(1) << 16)) {
    int64_t rowsPerItem = stridedRows ? 32 : 1;
    int64_t chunks = splitChunks(p.rows, p.cols, rowsPerItem);
    // One block per row fills a 132-SM part from two rows per SM, and its
    // second pass then re-reads a row still in L2; split rows read every
    // pass from DRAM, which only pays where most SMs would idle.
    bool few = p.mode == Mode::Block && chunks > 1 && p.rows < 2 * 132;
    // Strided rows one per thread fill the GPU only with many rows.
    bool strided = stridedRows && (p.mode != Mode::Thread ||
                                   p.rows < 132 * 1024 || chunks > 1);
    if (few || strided) {
      p.mode = Mode::Split;
      p.splitRows = rowsPerItem;
      p.chunks = chunks;
    }
  }

  p.vec4 = run > 0 && run % 4 == 0 && isa<BlockArgument>(f.input) &&
           !e.channelsLastRead;

  std::string body;
  llvm::raw_string_ostream os(body);
  RowEmitter re(e, f, yield);
  if (auto err = re.emit(p, os))
    return std::move(err);
  SmallVector<EmittedTensor> extra(out.outputs.begin(), out.outputs.end());
  out.outputs.clear();
  std::string modeName[] = {
      "thread",
      std::to_string(lanesPerRow(p.cols)) + "-lane group",
      "block",
      "lane (32 channels-last rows per block, " +
          std::to_string(columnWarps(p.cols)) + " warps splitting each)",
      std::to_string(lanesPerRow(p.tileW)) +
          "-lane group, the block staging a channels-last [" +
          std::to_string(p.tileW) + ", " + std::to_string(p.tileC) +
          "] slab in shared memory",
      "block per item of " +
          (p.splitRows == 32 ? std::string("32 rows (one per lane)")
                             : std::string("one row")) +
          (p.chunks == 1
               ? std::string(" and all its elements")
               : " x 1/" + std::to_string(p.chunks) + " of its elements") +
          ", a grid barrier after each pass"};
  std::string comment =
      p.what + " of " + std::to_string(p.rows) + " rows x " +
      std::to_string(p.cols) + " elements, one " + modeName[(int)p.mode] +
      (p.mode == Mode::Split ? "; " : " per row; ") +
      (p.mode == Mode::Warp ? "the row is held in registers (the pointwise "
                              "prologue evaluated once per element)."
       : p.mode == Mode::Tile
           ? "the pointwise prologue is evaluated once per element, into "
             "the slab."
           : "the pointwise prologue is recomputed on each pass instead of "
             "stored.");
  int block = blockSize(p);
  std::string R = std::to_string(p.rows);
  // Uncapped grids: every warp, block or thread takes its rows in one
  // iteration (a grid capped at a multiple of the SM count measured 8% below
  // copy bandwidth on pointwise kernels; the loops stay for safety).
  std::string grid = p.mode == Mode::Warp
                         ? "ceil_div(" + R + ", " +
                               std::to_string(256 / lanesPerRow(p.cols)) + ")"
                     : p.mode == Mode::Columns ? "ceil_div(" + R + ", 32)"
                     : p.mode == Mode::Tile ? std::to_string(p.tileN * p.tileM)
                     : p.mode == Mode::Block
                         ? R
                         : "ceil_div(" + R + ", " + std::to_string(block) + ")";
  bool split = p.mode == Mode::Split;
  if (split) {
    out.blocksPerSM = splitBlocksPerSM(p);
    grid = out.blocksPerSM == 1
               ? "sm_count"
               : "sm_count * " + std::to_string(out.blocksPerSM);
    out.workspaceBytes = splitWorkspaceBytes(p);
    out.gridSync = true;
  }
  if (auto err =
          assembleKernel(e, out, yield, comment, split ? splitHelpers() : "",
                         body, block, extra, updated))
    return std::move(err);
  out.kind = recipe == "softmax" || recipe == "log_softmax" ? "softmax"
             : llvm::StringRef(recipe).ends_with("_norm")   ? "norm"
                                                            : "reduction";
  out.grid = {grid, "1", "1"};
  out.block = {std::to_string(block), "1", "1"};
  return out;
}
