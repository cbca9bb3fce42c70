//===- SplitRows.cpp - Rows spread over many blocks, one launch -----------===//
//
// Few long rows (a training-mode batch norm's channels, a group norm of a
// small batch, a sum over the leading dim of a tall matrix) leave most SMs
// idle when each row belongs to one block: 48 channels of 4.3 GB took
// 9.9 ms where the roofline is 3.1 ms (bench/NOTES.md, session 13). Here
// each row is cut into chunks; rows x chunks items are spread over a grid
// of resident blocks (one to four per SM). Each pass of the plan accumulates
// every item into the workspace, a grid barrier follows, and every block
// then combines the
// partials of the rows it needs in chunk order (so all blocks see the same
// statistics, bit for bit) before the next pass or the outputs. The launch
// is cooperative: every block is resident, so the barrier cannot hang.
//
// Rows whose elements are strided by the row count (BatchNorm1d's [N, C],
// a sum over dim 0) take 32 rows per item, one per lane, the warps
// splitting the elements: each warp load reads 32 neighbouring floats.
// Fewer rows take virtual warps of fewer lanes, several to a warp.
//
//===----------------------------------------------------------------------===//

#include "SplitEmitter.h"

#include <utility>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

llvm::Error SplitEmitter::emit(llvm::raw_ostream &os) {
  bool flt = false, dbl = false, csum = false;
  for (const ReducePass &pass : p.prog.passes) {
    for (const Accumulator &a : pass.accs)
      (a.combine == "CSum" ? csum : a.type == "double" ? dbl : flt) = true;
    csum |= pass.online; // the pair's sums go to cbc
  }
  if (lanes) {
    if (kLanes == 32)
      os << "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n";
    else // virtual warps of kLanes lanes
      os << "  const int lane = threadIdx.x % " << kLanes
         << ", warp = threadIdx.x / " << kLanes << ";\n";
    // The batched combine's arrays replace the serial combine's.
    declareBatchedCombine(os);
    if ((flt || csum) && !batched)
      os << "  __shared__ float cbf[" << kBlock << "];\n";
    if (csum && !batched)
      os << "  __shared__ float cbc[" << kBlock << "];\n";
    if (dbl && !batched)
      os << "  __shared__ double cbd[" << kBlock << "];\n";
    if (p.flat)
      declareFlatScratch(os);
  } else {
    os << blockScratch(p.prog);
  }
  if (quad)
    return emitQuad(os);
  if (p.chunks == 1)
    return emitWhole(os);
  declareSlots(os);

  int64_t S = p.chunks, T = ceilDiv(p.cols, S);
  if (vec || p.flat)
    T = ceilDiv(T, 4) * 4; // every chunk starts at a float4
  std::string items = std::to_string(groups * S) + "LL";
  for (auto [k, pass] : llvm::enumerate(p.prog.passes)) {
    os << "  for (long long item = blockIdx.x; item < " << items
       << "; item += gridDim.x) {\n";
    itemHead(os, S, T);
    if (auto err = rowStatistics(k, os))
      return err;
    if (auto err = p.flat ? flatPass(k, T, os) : accumulatePass(pass, os))
      return err;
    os << "    if (" << leaderTest() << ") {\n";
    for (const Layout::Slot &s : layout.passes[k])
      os << "      " << s.name << "[" << partial("s") << "] = " << s.acc
         << ";\n";
    os << "    }\n  }\n  kb_grid_sync(ws);\n";
    if (finalized(k))
      finalizePass(k, os);
  }

  size_t all = p.prog.passes.size();
  if (!p.element) {
    // One output per row: only each row's (group's) first item writes.
    if (lanes) // chunk-major: the first `groups` items are chunk 0
      os << "  for (long long item = blockIdx.x; item < " << groups
         << "LL; item += gridDim.x) {\n";
    else
      os << "  for (long long item = blockIdx.x * " << S << "LL; item < "
         << items << "; item += (long long)gridDim.x * " << S << "LL) {\n";
    itemHead(os, S, T, /*range=*/false);
    if (auto err = rowStatistics(all, os))
      return err;
    return writeItemOutputs(os, /*firstChunkOnly=*/true);
  }
  os << "  for (long long item = blockIdx.x; item < " << items
     << "; item += gridDim.x) {\n";
  itemHead(os, S, T);
  if (auto err = rowStatistics(all, os))
    return err;
  if (p.flat)
    return flatOutputs(T, os);
  return writeItemOutputs(os, /*firstChunkOnly=*/true);
}

void SplitEmitter::loadFloat4s(llvm::ArrayRef<unsigned> args,
                               llvm::StringRef at, llvm::raw_ostream &os) {
  for (unsigned a : args) {
    std::string k = std::to_string(a);
    os << "      const float4 v4_" << k
       << " = *reinterpret_cast<const float4*>(in" << k << " + " << at << ");\n"
       << "      const float xs" << k << "[4] = {v4_" << k << ".x, v4_" << k
       << ".y, v4_" << k << ".z, v4_" << k << ".w};\n";
  }
}

void SplitEmitter::seedFloat4s(llvm::ArrayRef<unsigned> args) {
  Block &body = e.kernel.getBody().front();
  for (unsigned a : args)
    e.seed(body.getArgument(a), "i", "xs" + std::to_string(a) + "[j]");
}

void SplitEmitter::declareSlots(llvm::raw_ostream &os) {
  for (const auto *slots : {&layout.passes, &layout.finals})
    for (const auto &pass : *slots)
      for (const Layout::Slot &s : pass)
        os << "  " << s.type << "* const " << s.name << " = (" << s.type
           << "*)((char*)ws + " << s.offset << ");\n";
}

llvm::Error SplitEmitter::emitWhole(llvm::raw_ostream &os) {
  int64_t T = p.cols;
  os << "  for (long long item = blockIdx.x; item < " << groups
     << "LL; item += gridDim.x) {\n";
  itemHead(os, 1, T);
  if (auto err = itemShift(os))
    return err;
  // Held in registers, each thread's elements of the item are read once
  // for all the passes and the outputs.
  int64_t held = (T + kWarps - 1) / kWarps;
  if (p.splitItemRegisters && lanes && !vec && held <= 32) {
    itemRegisters = held;
    registersFilled = false;
    os << "    float kb_xs[" << held << "];\n";
  }
  for (const ReducePass &pass : p.prog.passes) {
    if (auto err = accumulatePass(pass, os))
      return err;
    if (!pass.after.empty())
      os << "    " << pass.after << "\n";
  }
  llvm::Error err = writeItemOutputs(os, /*firstChunkOnly=*/false);
  itemRegisters = 0;
  return err;
}

llvm::Expected<std::string> SplitEmitter::registerLoop(llvm::raw_ostream &os) {
  loopEnd = "      }\n    }\n";
  os << "#pragma unroll\n    for (int k = 0; k < " << itemRegisters
     << "; ++k) {\n"
     << "      const long long c = c0 + warp + k * " << kWarps << ";\n"
     << "      if (c < c1) {\n"
     << "      const long long i = " << p.index("r", "c") << ";\n"
     << "      (void)i; // not every pass reads it\n";
  e.newScope();
  seedRowCoordinates(e, p, "r");
  if (!std::exchange(registersFilled, true)) {
    auto x = e.valueAt(f.input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      kb_xs[k] = " << *x << ";\n";
  }
  return std::string("kb_xs[k]");
}

void SplitEmitter::finalizePass(size_t k, llvm::raw_ostream &os) {
  const ReducePass &pass = p.prog.passes[k];
  os << "  for (long long g = blockIdx.x; g < " << groups
     << "LL; g += gridDim.x) {\n"
     << "    const long long r = g * 32 + lane;\n"
     << "    const bool live = r < " << p.rows << "LL;\n";
  combinePartials(k, os);
  os << "    if (live && warp == 0) {\n";
  for (const Layout::Slot &s : layout.finals[k])
    os << "      " << s.name << "[r] = " << s.acc << ";\n";
  os << "    }\n  }\n  kb_grid_sync(ws);\n";
  (void)pass;
}

bool SplitEmitter::finalized(size_t k) const {
  return combinesOnce(p) && (p.element || k + 1 < p.prog.passes.size());
}

void SplitEmitter::loadStatistics(size_t j, llvm::raw_ostream &os) {
  if (!finalized(j))
    return combinePartials(j, os);
  for (const Accumulator &a : p.prog.passes[j].accs)
    os << "    " << declareAcc(a) << "\n";
  os << "    if (live) {\n";
  for (const Layout::Slot &sl : layout.finals[j])
    os << "      " << sl.acc << " = __ldcg(" << sl.name << " + r);\n";
  os << "    }\n";
}

void SplitEmitter::combinePartials(size_t j, llvm::raw_ostream &os) {
  std::string S = std::to_string(p.chunks) + "LL";
  const ReducePass &pass = p.prog.passes[j];
  for (const Accumulator &a : pass.accs)
    os << "    " << declareAcc(a) << "\n";
  os << "    for (long long t = " << (lanes ? "warp" : "threadIdx.x") << "; "
     << (lanes ? "live && " : "") << "t < " << S
     << "; t += " << (lanes ? kWarps : kBlock) << ") {\n";
  foldPartials(j, os, "      ");
  os << "    }\n";
  combinePassInBlock(pass, os);
}

void SplitEmitter::foldPartials(size_t j, llvm::raw_ostream &os,
                                llvm::StringRef in, bool fromVectors) {
  const ReducePass &pass = p.prog.passes[j];
  // A slot's partial: loaded from L2 only (other SMs wrote it in this
  // launch), or row j of the vector quadFoldPartials loaded.
  auto at = [&](const std::string &slot) {
    return fromVectors ? slot + "_v[j]"
                       : "__ldcg(" + slot + " + " + partial("t") + ")";
  };
  if (pass.online) {
    std::string m = pass.accs[0].name, a = pass.accs[1].name,
                sm = "p" + std::to_string(j) + m,
                sa = "p" + std::to_string(j) + a;
    os << in << "kb::online_merge(" << m << ", " << a << ", " << at(sm) << ", "
       << at(sa) << ");\n";
  }
  for (const Accumulator &a : pass.online ? llvm::ArrayRef<Accumulator>()
                                          : llvm::ArrayRef(pass.accs)) {
    std::string slot = "p" + std::to_string(j) + a.name;
    if (a.combine == "CSum")
      os << in << "kb::csum_add(" << a.name << ", " << a.name << "c, "
         << at(slot) << ");\n"
         << in << a.name << "c += " << at(slot + "c") << ";\n";
    else
      os << in << a.name << " = kb::" << a.combine << "()(" << a.name << ", "
         << at(slot) << ");\n";
  }
}

std::string SplitEmitter::partial(llvm::StringRef chunk) const {
  return lanes ? (chunk + " * " + std::to_string(p.rows) + "LL + r").str()
               : ("r * " + std::to_string(p.chunks) + "LL + " + chunk).str();
}

const char *SplitEmitter::leaderTest() const {
  return lanes ? "live && warp == 0" : "threadIdx.x == 0";
}

llvm::Error SplitEmitter::itemShift(llvm::raw_ostream &os) {
  if (!p.shiftFirst)
    return llvm::Error::success();
  os << "    double k0 = 0.0;\n    if (" << (lanes ? "live" : "true")
     << ") {\n";
  if (auto err = writeShift(p, "k0", os, "      "))
    return err;
  os << "    }\n";
  return llvm::Error::success();
}

llvm::Error SplitEmitter::accumulatePass(const ReducePass &pass,
                                         llvm::raw_ostream &os) {
  for (const Accumulator &a : pass.accs)
    os << "    " << declareAcc(a) << "\n";
  auto x = elementLoop(os);
  if (!x)
    return x.takeError();
  os << "      " << stepText(f, pass, *x, "") << "\n" << loopEnd;
  e.newScope();
  combinePassInBlock(pass, os);
  return llvm::Error::success();
}

llvm::Error SplitEmitter::writeItemOutputs(llvm::raw_ostream &os,
                                           bool firstChunkOnly) {
  std::string leader = std::string("    if (") + leaderTest() + ") {\n";
  if (!p.element) {
    if (auto err = writeRowResult(p, leader, os))
      return err;
    os << "  }\n";
    return llvm::Error::success();
  }
  auto x = elementLoop(os);
  if (!x)
    return x.takeError();
  if (auto err = writeElement(p, *x, os, "      "))
    return err;
  os << loopEnd;
  e.newScope();
  if (!p.leaderExtra.empty())
    os << "    if (" << (firstChunkOnly ? "s == 0 && " : "") << leaderTest()
       << ") {\n"
       << p.leaderExtra << "    }\n";
  os << "  }\n";
  return llvm::Error::success();
}

void SplitEmitter::itemHead(llvm::raw_ostream &os, int64_t S, int64_t T,
                            bool range) {
  std::string Ss = std::to_string(S) + "LL", Gs = std::to_string(groups) + "LL";
  if (lanes) {
    if (range)
      os << "    const long long s = item / " << Gs << ";\n";
    os << "    const long long r = (item % " << Gs << ") * 32 + lane;\n"
       << "    const bool live = r < " << p.rows << "LL;\n";
  } else {
    if (range)
      os << "    const long long s = item % " << Ss << ";\n";
    os << "    const long long r = item / " << Ss << ";\n";
  }
  if (range)
    chunkRange(os, T, lanes);
}

void SplitEmitter::chunkRange(llvm::raw_ostream &os, int64_t T, bool lanes) {
  std::string end = "(c0 + " + std::to_string(T) + "LL < " +
                    std::to_string(p.cols) + "LL ? c0 + " + std::to_string(T) +
                    "LL : " + std::to_string(p.cols) + "LL)";
  os << "    const long long c0 = s * " << T
     << "LL, c1 = " << (lanes ? "!live ? c0 : " : "") << end << ";\n";
}

llvm::Expected<std::string> SplitEmitter::elementLoop(llvm::raw_ostream &os) {
  if (itemRegisters)
    return registerLoop(os);
  loopEnd = "    }\n";
  if (vec) {
    os << "#pragma unroll " << shape.vunroll
       << "\n    for (long long cb = c0 + 4 * threadIdx.x; "
          "cb < c1; cb += "
       << 4 * kBlock << ") {\n"
       << "      const long long ib = " << p.index("r", "cb") << ";\n";
    // The input itself, or the arguments its pointwise prologue reads.
    SmallVector<unsigned, 4> args(p.vecArgs.begin(), p.vecArgs.end());
    if (p.vec4)
      args = {cast<BlockArgument>(f.input).getArgNumber()};
    loadFloat4s(args, "ib", os);
    os << "#pragma unroll\n      for (int j = 0; j < 4; ++j) {\n"
       << "      const long long c = cb + j, i = ib + j;\n"
       << "      (void)c; (void)i; // not every pass reads them\n";
    loopEnd = "      }\n    }\n";
    e.newScope();
    seedFloat4s(args);
    return e.valueAt(f.input, "i", os, "      ");
  }
  if (lanes)
    os << "#pragma unroll " << shape.unroll
       << "\n    for (long long c = c0 + warp; c < c1; c += " << kWarps
       << ") {\n";
  else
    os << "#pragma unroll " << shape.unroll
       << "\n    for (long long c = c0 + threadIdx.x; c < "
          "c1; c += "
       << kBlock << ") {\n";
  os << "      const long long i = " << p.index("r", "c") << ";\n";
  e.newScope();
  seedRowCoordinates(e, p, "r");
  return e.valueAt(f.input, "i", os, "      ");
}

llvm::Error SplitEmitter::rowStatistics(size_t k, llvm::raw_ostream &os) {
  if (auto err = itemShift(os))
    return err;
  for (size_t j = 0; j < k; ++j) {
    const ReducePass &pass = p.prog.passes[j];
    loadStatistics(j, os);
    if (!pass.after.empty())
      os << "    " << pass.after << "\n";
  }
  return llvm::Error::success();
}

void SplitEmitter::combinePassInBlock(const ReducePass &pass,
                                      llvm::raw_ostream &os) {
  if (!pass.online) {
    for (const Accumulator &a : pass.accs)
      combineInBlock(a, os);
    return;
  }
  std::string m = pass.accs[0].name, a = pass.accs[1].name;
  os << "    cbf[threadIdx.x] = " << m << ";\n    cbc[threadIdx.x] = " << a
     << ";\n    __syncthreads();\n"
     << "    " << m << " = cbf[lane];\n    " << a << " = cbc[lane];\n"
     << "    for (int w = 1; w < " << kWarps << "; ++w)\n"
     << "      kb::online_merge(" << m << ", " << a << ", cbf[w * " << kLanes
     << " + lane], cbc[w * " << kLanes << " + lane]);\n"
     << "    __syncthreads();\n";
}

void SplitEmitter::combineInBlock(const Accumulator &a, llvm::raw_ostream &os) {
  if (!lanes) {
    os << "    " << combineAcc(a, 0) << "\n";
    return;
  }
  bool csum = a.combine == "CSum";
  std::string buf = a.type == "double" ? "cbd" : "cbf";
  os << "    " << buf << "[threadIdx.x] = " << a.name << ";\n";
  if (csum)
    os << "    cbc[threadIdx.x] = " << a.name << "c;\n";
  os << "    __syncthreads();\n"
     << combineWarpsInOrder(a, buf, "cbc", kWarps, "    ", kLanes)
     << "    __syncthreads();\n";
}

llvm::Error codegen::emitSplitRows(RegionEmitter &e, const StageInfo &f,
                                   YieldOp yield, const RowPlan &p,
                                   llvm::raw_ostream &os) {
  return SplitEmitter(e, f, yield, p).emit(os);
}
