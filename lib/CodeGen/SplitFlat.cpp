//===- SplitFlat.cpp - Few strided rows read as flat float4s --------------===//
//
// RowPlan::flat: at most 32 rows whose elements are strided by the row
// count (an amin over dim 0 of [N, 7]: element (r, c) at c * R + r). Lanes
// over rows read one float a lane, 112 bytes a warp load for 7 rows (2.2
// TB/s where ATen's kernel reached 2.8, seed 20261321 task 0 on the H100).
// Here the item's elements are one flat run of (c1 - c0) * R floats read
// as float4s, thread t taking float4s t, t + B, ...; with B a multiple of
// R, element j of each of them belongs to the same row, (4t + j) mod R, so
// a thread keeps 4 accumulators (`acc_[j]`, as the quad form's) and row r's
// are the block's slots r, r + R, ... of the 4B in shared memory, folded in
// slot order: hardware warp r folds 4B / R / 32 of them a lane (32 with
// 256 threads a row, 8 with 64, 4 with 32), then its lane 0 the 32 lanes
// in order. The item's row totals then stand where the lanes-over-rows
// combine leaves them (lane r of every virtual warp), so its partial
// writes, barrier and per-row outputs are that form's; per-element
// outputs (lanes with --split-lane-outputs) get each thread's 4 rows'
// statistics from lane r of warp 0 through shared memory (flatRows).
//
//===----------------------------------------------------------------------===//

#include "SplitEmitter.h"
#include "ValueTypes.h"
#include "kb/CodeGen/IndexMath.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

/// The float4s a thread reads per item of a flat split reduction, at least
/// (the chunks cut to that many where the inputs are small).
constexpr int64_t kFlatVectorsPerThread = 8;

/// The block of a flat plan: 256 threads a row up to 2 rows, 64 up to 16,
/// 32 up to 32 (a multiple of 32 x rows, at least a hardware warp a row).
/// One or two rows (a sum over dim 0 of [N, 2]) take 256 a row: 64 or 128
/// threads a block would leave an SM 256 or 512 at 4 blocks.
static int flatBlock(int64_t rows) {
  return int(rows <= 2 ? 256 * rows : rows <= 16 ? 64 * rows : 32 * rows);
}

void SplitEmitter::declareFlatScratch(llvm::raw_ostream &os) {
  for (const ReducePass &pass : p.prog.passes)
    for (const Accumulator &a : pass.accs)
      os << "  __shared__ " << a.type << " kbf_" << a.name << "[" << 4 * kBlock
         << "];\n";
  // The rows' statistics and shift, from lane r of warp 0 to every
  // thread's 4 rows (flatRows).
  if (p.prog.passes.size() > 1 || p.element)
    for (const ReducePass &pass : p.prog.passes)
      for (const Accumulator &a : pass.accs)
        os << "  __shared__ " << a.type << " kbr_" << a.name << "[" << p.rows
           << "];\n";
  if (p.shiftFirst)
    os << "  __shared__ double kbr_k0[" << p.rows << "];\n";
}

void SplitEmitter::flatRows(size_t k, llvm::raw_ostream &os) {
  if (k == 0 && !p.shiftFirst)
    return;
  std::string R = std::to_string(p.rows);
  os << "    if (live && warp == 0) {\n";
  if (p.shiftFirst)
    os << "      kbr_k0[r] = k0;\n";
  for (size_t j = 0; j < k; ++j)
    for (const Accumulator &a : p.prog.passes[j].accs)
      os << "      kbr_" << a.name << "[r] = " << a.name << ";\n";
  os << "    }\n    __syncthreads();\n";
  if (p.shiftFirst)
    os << "    double k0_[4];\n";
  for (size_t j = 0; j < k; ++j)
    declareArrays(p.prog.passes[j], os, "    ");
  os << "#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n"
     << "      const int rr = (4 * threadIdx.x + j) % " << R << ";\n";
  if (p.shiftFirst)
    os << "      k0_[j] = kbr_k0[rr];\n";
  for (size_t j = 0; j < k; ++j)
    for (const Accumulator &a : p.prog.passes[j].accs)
      os << "      " << a.name << "_[j] = kbr_" << a.name << "[rr];\n";
  // The next item's leader writes them again.
  os << "    }\n    __syncthreads();\n";
}

llvm::Error SplitEmitter::flatLoop(int64_t T, llvm::raw_ostream &os,
                                   const FlatBody &body) {
  std::string R = std::to_string(p.rows);
  // Every thread reads the item's elements (chunkRange empties the range
  // of a lane past the rows).
  os << "    {\n"
     << "    const long long f0 = c0 * " << R << "LL, n = ((c0 + " << T
     << "LL < " << p.cols << "LL ? c0 + " << T << "LL : " << p.cols
     << "LL) - c0) * " << R << "LL, nq = n / 4;\n"
     << "#pragma unroll " << shape.unroll
     << "\n    for (long long q = threadIdx.x; q < nq; q += " << kBlock
     << ") {\n"
     << "      const long long fb = f0 + 4 * q;\n";
  // The input itself, or the arguments its pointwise prologue reads.
  SmallVector<unsigned, 4> args(p.vecArgs.begin(), p.vecArgs.end());
  if (auto a = dyn_cast<BlockArgument>(f.input))
    args = {a.getArgNumber()};
  loadFloat4s(args, "fb", os);
  if (auto err = body(args, os))
    return err;
  os << "    }\n";
  // The last float4's elements past n are none: the thread whose next
  // float4 it would be takes the ones before n, one by one.
  os << "    if (threadIdx.x == nq % " << kBlock << ") {\n"
     << "      const long long fb = f0 + 4 * nq;\n";
  if (auto err = body({}, os))
    return err;
  os << "    }\n    }\n";
  return llvm::Error::success();
}

void SplitEmitter::flatElementHead(size_t k, llvm::ArrayRef<unsigned> loaded,
                                   llvm::raw_ostream &os) {
  // The tail's elements past n are skipped inside the unrolled loop, so
  // acc_[j] keeps constant indices (registers, not the stack).
  os << "#pragma unroll\n      for (int j = 0; j < 4; ++j) {\n";
  if (loaded.empty())
    os << "        if (4 * nq + j >= n) continue;\n";
  os << "        const long long i = fb + j, c = i / " << p.rows
     << "LL, r = (4 * threadIdx.x + j) % " << p.rows << ";\n"
     << "        (void)c; (void)r;\n";
  bindStats(k, os, "        ");
  e.newScope();
  seedFloat4s(loaded);
}

llvm::Error SplitEmitter::flatPass(size_t k, int64_t T, llvm::raw_ostream &os) {
  const ReducePass &pass = p.prog.passes[k];
  flatRows(k, os);
  for (const Accumulator &a : pass.accs)
    os << "    " << declareAcc(a) << "\n";
  declareArrays(pass, os, "    ");
  os << "#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.name << "_[j] = " << a.init << ";\n";
  os << "    }\n";
  auto err = flatLoop(T, os,
                      [&](llvm::ArrayRef<unsigned> loaded,
                          llvm::raw_ostream &os) -> llvm::Error {
                        flatElementHead(k, loaded, os);
                        bind(pass, os, "        ");
                        auto x = e.valueAt(f.input, "i", os, "        ");
                        if (!x)
                          return x.takeError();
                        os << "        " << stepText(f, pass, *x, "")
                           << "\n      }\n";
                        e.newScope();
                        return llvm::Error::success();
                      });
  if (err)
    return err;
  flatCombine(pass, os);
  return llvm::Error::success();
}

llvm::Error SplitEmitter::flatOutputs(int64_t T, llvm::raw_ostream &os) {
  size_t all = p.prog.passes.size(), nOut = yield.getValues().size();
  flatRows(all, os);
  auto err = flatLoop(
      T, os,
      [&](llvm::ArrayRef<unsigned> loaded,
          llvm::raw_ostream &os) -> llvm::Error {
        bool whole = !loaded.empty();
        if (whole)
          for (size_t k = 0; k < nOut; ++k)
            os << "      float ov" << k << "[4];\n";
        flatElementHead(all, loaded, os);
        auto x = e.valueAt(f.input, "i", os, "        ");
        if (!x)
          return x.takeError();
        if (auto err = writeElement(p, *x, os, "        ", /*toSlots=*/whole))
          return err;
        e.newScope();
        os << "      }\n";
        if (whole)
          for (size_t k = 0; k < nOut; ++k)
            os << "      " << e.storeFour(k, "fb", "ov" + std::to_string(k))
               << "\n";
        return llvm::Error::success();
      });
  if (err)
    return err;
  if (!p.leaderExtra.empty())
    os << "    if (s == 0 && " << leaderTest() << ") {\n"
       << p.leaderExtra << "    }\n";
  os << "  }\n";
  return llvm::Error::success();
}

void SplitEmitter::flatCombine(const ReducePass &pass, llvm::raw_ostream &os) {
  int64_t R = p.rows, slots = 4 * kBlock / R;
  std::string Rs = std::to_string(R);
  for (const Accumulator &a : pass.accs)
    os << "#pragma unroll\n    for (int j = 0; j < 4; ++j)\n      kbf_"
       << a.name << "[4 * threadIdx.x + j] = " << a.name << "_[j];\n";
  os << "    __syncthreads();\n"
     << "    const int hw = threadIdx.x >> 5, hl = threadIdx.x & 31;\n";
  // `dst` folded with the slots at `at`: an online pair merged together,
  // other accumulators each by its combine.
  auto fold = [&](llvm::StringRef in, llvm::StringRef suffix,
                  llvm::StringRef at) {
    if (pass.online) {
      std::string m = pass.accs[0].name, a = pass.accs[1].name;
      os << in << "kb::online_merge(" << m << suffix << ", " << a << suffix
         << ", kbf_" << m << "[" << at << "], kbf_" << a << "[" << at
         << "]);\n";
      return;
    }
    for (const Accumulator &a : pass.accs)
      os << in << a.name << suffix << " = kb::" << a.combine << "()(" << a.name
         << suffix << ", kbf_" << a.name << "[" << at << "]);\n";
  };
  // Hardware warp r < R folds row r's slots r + R * (l + 32 u), lane l
  // over u in order, then lane 0 the 32 lanes in order.
  for (const Accumulator &a : pass.accs)
    os << "    " << a.type << " " << a.name << "_w = " << a.init << ";\n";
  os << "    if (hw < " << R << ") {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.name << "_w = kbf_" << a.name << "[hw + " << Rs
       << " * hl];\n";
  // (`u`, not `m`: an online pair's maximum is `m`.)
  os << "      for (int u = 1; u < " << slots / 32 << "; ++u) {\n";
  fold("        ", "_w", "hw + " + Rs + " * (hl + 32 * u)");
  os << "      }\n    }\n    __syncthreads();\n    if (hw < " << R << ") {\n";
  for (const Accumulator &a : pass.accs)
    os << "      kbf_" << a.name << "[hw * 32 + hl] = " << a.name << "_w;\n";
  os << "    }\n    __syncthreads();\n    if (hw < " << R << " && hl == 0) {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.type << " " << a.name << "_t = kbf_" << a.name
       << "[hw * 32];\n";
  os << "      for (int l = 1; l < 32; ++l) {\n";
  fold("        ", "_t", "hw * 32 + l");
  os << "      }\n";
  for (const Accumulator &a : pass.accs)
    os << "      kbf_" << a.name << "[" << 32 * R << " + hw] = " << a.name
       << "_t;\n";
  os << "    }\n    __syncthreads();\n";
  // Every virtual warp's lane r holds row r's total, as combineInBlock
  // leaves it.
  for (const Accumulator &a : pass.accs)
    os << "    " << a.name << " = kbf_" << a.name << "[" << 32 * R
       << " + (lane < " << Rs << " ? lane : 0)];\n";
  os << "    __syncthreads();\n";
}

/// Whether a split plan's rows can be read as flat float4s: lanes over at
/// most 32 rows that are one run of the input, a contiguous float32 kernel
/// argument of rows x cols elements (or computed by a pointwise prologue
/// from such arguments, `args`), accumulators that are not compensated
/// sums; one pass of plain accumulators and one output a row unless
/// `outputs` (EmitOptions::splitFlatOutputs).
static bool flatSplitApplies(const RowPlan &p, const StageInfo &f,
                             llvm::ArrayRef<unsigned> args, bool outputs) {
  if (p.mode != RowMode::Split || p.splitRows != 32 || p.quad || p.chunks < 2 ||
      p.rows > 32 || p.rowRun != p.rows || p.statsOnly || f.input2)
    return false;
  // Per-element outputs, several passes, an online pair or a shift: lanes
  // with --split-lane-outputs (flat 26-31% faster on split_few_rows, run117).
  if (!outputs && (p.element || p.shiftFirst || p.prog.passes.size() != 1 ||
                   p.prog.passes[0].online))
    return false;
  // A thread's rows are (4t + j) mod rows only with a block of whole
  // rounds of the rows, and flatCombine folds row r on hardware warp r, 32
  // slots a round: a multiple of 32 x rows (a probe's --split-shape block
  // may not be one).
  int64_t block = p.splitBlock > 0 ? p.splitBlock : flatBlock(p.rows);
  if (block % (32 * p.rows) != 0)
    return false;
  // The slots (4 a thread) within 32 KB of shared memory.
  int64_t slotBytes = 0;
  for (const ReducePass &pass : p.prog.passes)
    for (const Accumulator &a : pass.accs) {
      if (a.combine == "CSum")
        return false;
      slotBytes += (a.type == "double" ? 8 : 4) * (4 * block + 32);
    }
  if (slotBytes > 32 * 1024 || product(shapeOf(f.input)) != p.rows * p.cols)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(f.input))
    return isContiguousArg(arg) && isF32Tensor(arg.getType());
  return !args.empty(); // prologueArgs: contiguous float32, the input's shape
}

void codegen::planFlat(RowPlan &p, const StageInfo &f,
                       llvm::ArrayRef<unsigned> args, bool fixedChunks,
                       bool outputs) {
  if (!flatSplitApplies(p, f, args, outputs))
    return;
  p.flat = true;
  p.vecArgs.assign(args.begin(), args.end());
  if (p.splitBlock == 0)
    p.splitBlock = flatBlock(p.rows); // a multiple of the rows
  // As many as an SM's 2048 threads hold, up to 4; per-element outputs
  // keep 64 registers a thread for their 4 rows' statistics (at 48 a batch
  // norm over 5 rows spilled 136 bytes).
  if (p.splitPerSM == 0)
    p.splitPerSM = std::min(4, (p.element ? 1024 : 2048) / p.splitBlock);
  // At least kFlatVectorsPerThread float4s a thread per item: fewer leave
  // an item's block mostly folding its 4 x block slots (run114, the sum
  // over dim 0 of [300007, 20]: 528 chunks, 4.4 float4s a thread, 0.0259
  // ms; 264 chunks 0.0207; ATen 0.0287).
  if (!fixedChunks)
    p.chunks = std::max<int64_t>(
        2,
        std::min(p.chunks, ceilDiv(p.rows * p.cols,
                                   4 * kFlatVectorsPerThread * p.splitBlock)));
}
