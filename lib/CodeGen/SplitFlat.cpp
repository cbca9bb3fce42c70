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
// slot order: hardware warp r folds 4B / R / 32 of them a lane (8 with 64
// threads a row, 4 with 32), then its lane 0 the 32 lanes in order. The
// item's row totals then stand where the lanes-over-rows combine leaves
// them (lane r of every virtual warp), so its partial writes, barrier and
// per-row outputs are that form's.
//
//===----------------------------------------------------------------------===//

#include "SplitEmitter.h"
#include "ValueTypes.h"
#include "kb/CodeGen/IndexMath.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

void SplitEmitter::declareFlatScratch(llvm::raw_ostream &os) {
  for (const Accumulator &a : p.prog.passes[0].accs)
    os << "  __shared__ " << a.type << " kbf_" << a.name << "[" << 4 * kBlock
       << "];\n";
}

llvm::Error SplitEmitter::flatPass(const ReducePass &pass, int64_t T,
                                   llvm::raw_ostream &os) {
  std::string R = std::to_string(p.rows);
  for (const Accumulator &a : pass.accs)
    os << "    " << declareAcc(a) << "\n";
  os << "    {\n";
  declareArrays(pass, os, "    ");
  os << "#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.name << "_[j] = " << a.init << ";\n";
  os << "    }\n"
     // Every thread reads the item's elements (chunkRange empties the
     // range of a lane past the rows).
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
  if (auto err = flatElements(pass, args, os))
    return err;
  os << "    }\n";
  // The last float4's elements past n are none: the thread whose next
  // float4 it would be takes the ones before n, one by one.
  os << "    if (threadIdx.x == nq % " << kBlock << ") {\n"
     << "      const long long fb = f0 + 4 * nq;\n";
  if (auto err = flatElements(pass, {}, os))
    return err;
  os << "    }\n";
  flatCombine(pass, os);
  os << "    }\n";
  return llvm::Error::success();
}

llvm::Error SplitEmitter::flatElements(const ReducePass &pass,
                                       llvm::ArrayRef<unsigned> loaded,
                                       llvm::raw_ostream &os) {
  // The tail's elements past n are skipped inside the unrolled loop, so
  // acc_[j] keeps constant indices (registers, not the stack).
  os << "#pragma unroll\n      for (int j = 0; j < 4; ++j) {\n";
  if (loaded.empty())
    os << "        if (4 * nq + j >= n) continue;\n";
  os << "        const long long i = fb + j, c = i / " << p.rows
     << "LL, r = (4 * threadIdx.x + j) % " << p.rows << ";\n"
     << "        (void)c; (void)r;\n";
  bind(pass, os, "        ");
  e.newScope();
  seedFloat4s(loaded);
  auto x = e.valueAt(f.input, "i", os, "        ");
  if (!x)
    return x.takeError();
  os << "        " << stepText(f, pass, *x, "") << "\n      }\n";
  e.newScope();
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
  // Hardware warp r < R folds row r's slots r + R * (l + 32 m), lane l
  // over m in order, then lane 0 the 32 lanes in order.
  for (const Accumulator &a : pass.accs)
    os << "    " << a.type << " " << a.name << "_w = " << a.init << ";\n";
  os << "    if (hw < " << R << ") {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.name << "_w = kbf_" << a.name << "[hw + " << Rs
       << " * hl];\n"
       << "      for (int m = 1; m < " << slots / 32 << "; ++m)\n"
       << "        " << a.name << "_w = kb::" << a.combine << "()(" << a.name
       << "_w, kbf_" << a.name << "[hw + " << Rs << " * (hl + 32 * m)]);\n";
  os << "    }\n    __syncthreads();\n    if (hw < " << R << ") {\n";
  for (const Accumulator &a : pass.accs)
    os << "      kbf_" << a.name << "[hw * 32 + hl] = " << a.name << "_w;\n";
  os << "    }\n    __syncthreads();\n    if (hw < " << R << " && hl == 0) {\n";
  for (const Accumulator &a : pass.accs)
    os << "      " << a.type << " " << a.name << "_t = kbf_" << a.name
       << "[hw * 32];\n"
       << "      for (int l = 1; l < 32; ++l)\n"
       << "        " << a.name << "_t = kb::" << a.combine << "()(" << a.name
       << "_t, kbf_" << a.name << "[hw * 32 + l]);\n"
       << "      kbf_" << a.name << "[" << 32 * R << " + hw] = " << a.name
       << "_t;\n";
  os << "    }\n    __syncthreads();\n";
  // Every virtual warp's lane r holds row r's total, as combineInBlock
  // leaves it.
  for (const Accumulator &a : pass.accs)
    os << "    " << a.name << " = kbf_" << a.name << "[" << 32 * R
       << " + (lane < " << Rs << " ? lane : 0)];\n";
  os << "    __syncthreads();\n";
}

bool codegen::flatSplitApplies(const RowPlan &p, const StageInfo &f,
                               llvm::ArrayRef<unsigned> args) {
  if (p.mode != RowMode::Split || p.splitRows != 32 || p.quad || p.chunks < 2 ||
      p.rows > 32 || p.rowRun != p.rows || p.element || p.shiftFirst ||
      p.statsOnly || p.prog.passes.size() != 1 || f.input2)
    return false;
  const ReducePass &pass = p.prog.passes[0];
  if (pass.online || llvm::any_of(pass.accs, [](const Accumulator &a) {
        return a.combine == "CSum";
      }))
    return false;
  // The slots (4 a thread) within 32 KB of shared memory.
  int64_t slotBytes = 0;
  for (const Accumulator &a : pass.accs)
    slotBytes += (a.type == "double" ? 8 : 4) * 4 * flatBlock(p.rows);
  if (slotBytes > 32 * 1024 || product(shapeOf(f.input)) != p.rows * p.cols)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(f.input))
    return isContiguousArg(arg) && isF32Tensor(arg.getType());
  return !args.empty(); // prologueArgs: contiguous float32, the input's shape
}

int codegen::flatBlock(int64_t rows) {
  return int(rows <= 16 ? 64 * rows : 32 * rows);
}
