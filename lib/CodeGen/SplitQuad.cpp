//===- SplitQuad.cpp - Split rows with lanes over 4 rows each -------------===//
//
// RowPlan::quad: rows whose elements are strided by the row count, a lane
// over 4 neighbouring rows (one float4 a load), the warps splitting the
// elements. Per-row state lives in arrays of 4 (`acc_[j]`), bound by
// reference to the usual names inside fully unrolled `j` loops, so every
// recipe's step, combine and writer text is used as it is.
//
//===----------------------------------------------------------------------===//

#include "SplitEmitter.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

void SplitEmitter::declareArrays(const ReducePass &pass, llvm::raw_ostream &os,
                                 llvm::StringRef in) {
  for (const Accumulator &a : pass.accs) {
    os << in << a.type << " " << a.name << "_[4];\n";
    if (a.combine == "CSum")
      os << in << "float " << a.name << "c_[4];\n";
  }
}

void SplitEmitter::initArrays(const ReducePass &pass, llvm::raw_ostream &os) {
  os << openRows("    ");
  for (const Accumulator &a : pass.accs) {
    os << "      " << a.name << "_[j] = " << a.init << ";\n";
    if (a.combine == "CSum")
      os << "      " << a.name << "c_[j] = 0.f;\n";
  }
  os << "    }\n";
}

void SplitEmitter::bind(const ReducePass &pass, llvm::raw_ostream &os,
                        llvm::StringRef in) {
  for (const Accumulator &a : pass.accs) {
    os << in << a.type << "& " << a.name << " = " << a.name << "_[j];\n";
    if (a.combine == "CSum")
      os << in << "float& " << a.name << "c = " << a.name << "c_[j];\n";
  }
}

void SplitEmitter::bindStats(size_t k, llvm::raw_ostream &os,
                             llvm::StringRef in) {
  if (p.shiftFirst)
    os << in << "const double k0 = k0_[j]; (void)k0;\n";
  for (size_t j = 0; j < k; ++j) {
    bind(p.prog.passes[j], os, in);
    if (!p.prog.passes[j].after.empty())
      os << in << p.prog.passes[j].after << "\n";
  }
}

std::string SplitEmitter::openRows(llvm::StringRef in) {
  return "#pragma unroll\n" + in.str() + "for (int j = 0; j < 4; ++j) {\n" +
         in.str() + "  const long long r = rq + j; (void)r;\n";
}

llvm::Error SplitEmitter::quadHead(llvm::raw_ostream &os, int64_t T,
                                   bool range) {
  std::string Gs = std::to_string(groups) + "LL";
  if (range)
    os << "    const long long s = item / " << Gs << ";\n";
  os << "    const long long rq = (item % " << Gs << ") * " << 4 * kLanes
     << " + 4 * lane;\n"
     << "    const bool live = rq < " << p.rows << "LL;\n";
  if (range)
    chunkRange(os, T, /*lanes=*/true);
  if (!p.shiftFirst)
    return llvm::Error::success();
  if (auto a = dyn_cast<BlockArgument>(f.input); a && p.splitRowVectors) {
    // --split-row-vectors: the lane's 4 rows' first elements are one
    // float4 of the argument, as the item loop reads it.
    os << "    double k0_[4];\n    {\n"
       << "      const float4 k4 = live ? *reinterpret_cast<const float4*>(in"
       << a.getArgNumber() << " + " << p.index("rq", "0")
       << ") : make_float4(0.f, 0.f, 0.f, 0.f);\n"
       << "      const float kx[4] = {k4.x, k4.y, k4.z, k4.w};\n"
       << "#pragma unroll\n      for (int j = 0; j < 4; ++j)\n"
       << "        k0_[j] = isfinite(kx[j]) ? (double)kx[j] : 0.0;\n"
       << "    }\n";
    return llvm::Error::success();
  }
  os << "    double k0_[4];\n"
     << openRows("    ") << "      double k0 = 0.0;\n"
     << "      if (live) {\n";
  if (auto err = writeShift(p, "k0", os, "        "))
    return err;
  os << "      }\n      k0_[j] = k0;\n    }\n";
  return llvm::Error::success();
}

void SplitEmitter::quadLoop(llvm::raw_ostream &os) {
  // The float4s a trip reads: the input's (xs), or those of the
  // arguments of its pointwise prologue (xs<k>).
  SmallVector<std::pair<std::string, std::string>> reads; // (arg, suffix)
  if (auto a = dyn_cast<BlockArgument>(f.input))
    reads.push_back({std::to_string(a.getArgNumber()), ""});
  else
    for (unsigned a : p.vecArgs)
      reads.push_back({std::to_string(a), std::to_string(a)});
  auto unpack = [&](const std::pair<std::string, std::string> &r,
                    llvm::StringRef from) {
    std::string v = "v4" + (r.second.empty() ? "" : "_" + r.second);
    os << "      const float4 " << v << " = " << from.str() << ";\n"
       << "      const float xs" << r.second << "[4] = {" << v << ".x, " << v
       << ".y, " << v << ".z, " << v << ".w};\n";
  };
  if (p.splitAhead > 1) {
    // --split-ahead (a probe): a trip's float4s all loaded before any is
    // used, so a thread has that many loads in flight whatever ptxas
    // schedules under the register cap.
    int B = p.splitAhead;
    os << "    for (long long cb = c0 + warp; cb < c1; cb += " << kWarps * B
       << ") {\n";
    for (const auto &r : reads)
      os << "      float4 ahead" << r.first << "[" << B << "];\n";
    os << "#pragma unroll\n      for (int b = 0; b < " << B
       << "; ++b) {\n        const long long c = cb + b * " << kWarps << ";\n";
    for (const auto &r : reads)
      os << "        ahead" << r.first << "[b] = c < c1 ? "
         << "*reinterpret_cast<const float4*>(in" << r.first << " + "
         << p.index("rq", "c") << ") : make_float4(0.f, 0.f, 0.f, 0.f);\n";
    os << "      }\n#pragma unroll\n      for (int b = 0; b < " << B
       << "; ++b) {\n      const long long c = cb + b * " << kWarps
       << ";\n      if (c >= c1) break;\n"
       << "      const long long ib = " << p.index("rq", "c") << ";\n";
    for (const auto &r : reads)
      unpack(r, "ahead" + r.first + "[b]");
    return;
  }
  os << "#pragma unroll " << shape.unroll
     << "\n    for (long long c = c0 + warp; c < c1; c += " << kWarps
     << ") {\n      const long long ib = " << p.index("rq", "c") << ";\n";
  for (const auto &r : reads)
    unpack(r, "*reinterpret_cast<const float4*>(in" + r.first + " + ib)");
}

void SplitEmitter::quadLoopEnd(llvm::raw_ostream &os) {
  os << (p.splitAhead > 1 ? "    }\n    }\n" : "    }\n");
}

llvm::Expected<std::string> SplitEmitter::quadElement(llvm::raw_ostream &os,
                                                      llvm::StringRef indent) {
  e.newScope();
  if (isa<BlockArgument>(f.input)) {
    e.seed(f.input, "i", "xs[j]");
    return std::string("xs[j]");
  }
  Block &body = e.kernel.getBody().front();
  for (unsigned a : p.vecArgs)
    e.seed(body.getArgument(a), "i", "xs" + std::to_string(a) + "[j]");
  return e.valueAt(f.input, "i", os, indent);
}

llvm::Error SplitEmitter::quadPass(size_t k, llvm::raw_ostream &os) {
  const ReducePass &pass = p.prog.passes[k];
  declareArrays(pass, os, "    ");
  initArrays(pass, os);
  quadLoop(os);
  os << "  " << openRows("      ")
     << "        const long long i = ib + j; (void)i;\n";
  bindStats(k, os, "        ");
  bind(pass, os, "        ");
  auto x = quadElement(os, "        ");
  if (!x)
    return x.takeError();
  os << "        " << stepText(f, pass, *x, "") << "\n      }\n";
  quadLoopEnd(os);
  e.newScope();
  if (batched) {
    quadCombine(k, os);
    return llvm::Error::success();
  }
  os << openRows("    ");
  bind(pass, os, "      ");
  combinePassInBlock(pass, os);
  os << "    }\n";
  return llvm::Error::success();
}

void SplitEmitter::declareBatchedCombine(llvm::raw_ostream &os) {
  if (!quad || p.splitSerialCombine || kLanes != 32)
    return;
  int64_t bytes = 0;
  for (const ReducePass &pass : p.prog.passes) {
    if ((pass.online ? 1 : (int64_t)pass.accs.size()) * 128 > kBlock)
      return;
    for (const Accumulator &a : pass.accs)
      bytes += 4 * kBlock *
               ((a.type == "double" ? 8 : 4) + (a.combine == "CSum" ? 4 : 0));
  }
  if (bytes > kBatchedCombineBytes)
    return;
  batched = true;
  for (auto [k, pass] : llvm::enumerate(p.prog.passes))
    for (const Accumulator &a : pass.accs) {
      os << "  __shared__ " << a.type << " " << batchName(k, a.name) << "["
         << 4 * kBlock << "];\n";
      if (a.combine == "CSum")
        os << "  __shared__ float " << batchName(k, a.name + "c") << "["
           << 4 * kBlock << "];\n";
    }
}

std::string SplitEmitter::batchName(size_t k, llvm::StringRef acc) {
  return "kbq" + std::to_string(k) + "_" + acc.str();
}

void SplitEmitter::quadCombine(size_t k, llvm::raw_ostream &os) {
  const ReducePass &pass = p.prog.passes[k];
  std::string B = std::to_string(kBlock), W = std::to_string(kWarps);
  auto eachAcc = [&](auto fn) {
    for (const Accumulator &a : pass.accs) {
      fn(a.name, batchName(k, a.name));
      if (a.combine == "CSum")
        fn(a.name + "c", batchName(k, a.name + "c"));
    }
  };
  os << openRows("    ");
  eachAcc([&](const std::string &n, const std::string &q) {
    os << "      " << q << "[j * " << B << " + threadIdx.x] = " << n
       << "_[j];\n";
  });
  os << "    }\n    __syncthreads();\n";
  if (pass.online) {
    std::string m = pass.accs[0].name, a = pass.accs[1].name,
                bm = batchName(k, m), ba = batchName(k, a);
    os << "    if (threadIdx.x < 128) {\n"
       << "      float* const bm = " << bm << " + (threadIdx.x >> 5) * " << B
       << ";\n      float* const ba = " << ba << " + (threadIdx.x >> 5) * " << B
       << ";\n      float " << m << " = bm[lane], " << a
       << " = ba[lane];\n      for (int w = 1; w < " << W << "; ++w)\n"
       << "        kb::online_merge(" << m << ", " << a
       << ", bm[w * 32 + lane], ba[w * 32 + lane]);\n"
       << "      bm[lane] = " << m << ";\n      ba[lane] = " << a
       << ";\n    }\n";
  } else {
    for (auto [g, a] : llvm::enumerate(pass.accs)) {
      bool csum = a.combine == "CSum";
      os << "    if (";
      if (g)
        os << "threadIdx.x >= " << 128 * g << " && ";
      os << "threadIdx.x < " << 128 * (g + 1) << ") {\n"
         << "      " << a.type << "* const b = " << batchName(k, a.name)
         << " + ((threadIdx.x >> 5) & 3) * " << B << ";\n";
      if (csum)
        os << "      float* const bc = " << batchName(k, a.name + "c")
           << " + ((threadIdx.x >> 5) & 3) * " << B << ";\n";
      os << "      " << a.type << " " << a.name << ";\n";
      if (csum)
        os << "      float " << a.name << "c;\n";
      os << combineWarpsInOrder(a, "b", "bc", kWarps, "      ", kLanes)
         << "      b[lane] = " << a.name << ";\n";
      if (csum)
        os << "      bc[lane] = " << a.name << "c;\n";
      os << "    }\n";
    }
  }
  os << "    __syncthreads();\n" << openRows("    ");
  eachAcc([&](const std::string &n, const std::string &q) {
    os << "      " << n << "_[j] = " << q << "[j * " << B << " + lane];\n";
  });
  os << "    }\n    __syncthreads();\n";
}

void SplitEmitter::quadStatistics(size_t k, llvm::raw_ostream &os) {
  for (size_t j = 0; j < k; ++j) {
    const ReducePass &pass = p.prog.passes[j];
    declareArrays(pass, os, "    ");
    // Batched: the rows' partials folded per thread, then combined over
    // the block at once.
    if (batched && !finalized(j)) {
      quadFoldPartials(j, os);
      quadCombine(j, os);
      continue;
    }
    if (p.splitRowVectors && finalized(j)) {
      quadVectorStatistics(j, os);
      continue;
    }
    os << openRows("    ");
    loadStatistics(j, os);
    for (const Accumulator &a : pass.accs) {
      os << "      " << a.name << "_[j] = " << a.name << ";\n";
      if (a.combine == "CSum")
        os << "      " << a.name << "c_[j] = " << a.name << "c;\n";
    }
    os << "    }\n";
  }
}

void SplitEmitter::quadVectorStatistics(size_t j, llvm::raw_ostream &os) {
  initArrays(p.prog.passes[j], os);
  os << "    if (live) {\n";
  for (const Layout::Slot &sl : layout.finals[j])
    rowVector(os, "      ", sl.type, sl.name + " + rq", sl.acc + "_");
  os << "    }\n";
}

void SplitEmitter::rowVector(llvm::raw_ostream &os, llvm::StringRef in,
                             llvm::StringRef type, llvm::StringRef addr,
                             llvm::StringRef dst) {
  if (type == "double")
    os << in << "{\n"
       << in << "  const double2 v01 = __ldcg(reinterpret_cast<const double2*>("
       << addr << ")), v23 = __ldcg(reinterpret_cast<const double2*>(" << addr
       << " + 2));\n"
       << in << "  " << dst << "[0] = v01.x; " << dst << "[1] = v01.y; " << dst
       << "[2] = v23.x; " << dst << "[3] = v23.y;\n"
       << in << "}\n";
  else
    os << in << "{\n"
       << in << "  const float4 v = __ldcg(reinterpret_cast<const float4*>("
       << addr << "));\n"
       << in << "  " << dst << "[0] = v.x; " << dst << "[1] = v.y; " << dst
       << "[2] = v.z; " << dst << "[3] = v.w;\n"
       << in << "}\n";
}

llvm::Error SplitEmitter::quadOutputs(llvm::raw_ostream &os,
                                      bool firstChunkOnly) {
  size_t all = p.prog.passes.size();
  if (!p.element) {
    os << "    if (live && warp == 0) {\n" << openRows("      ");
    bindStats(all, os, "        ");
    // writeRowResult closes the row loop; the leader's block and the
    // item's follow.
    if (auto err = writeRowResult(p, "", os))
      return err;
    os << "    }\n  }\n";
    return llvm::Error::success();
  }
  size_t nOut = yield.getValues().size();
  quadLoop(os);
  for (size_t k = 0; k < nOut; ++k)
    os << "      float ov" << k << "[4];\n";
  os << "  " << openRows("      ")
     << "        const long long i = ib + j; (void)i;\n";
  bindStats(all, os, "        ");
  auto x = quadElement(os, "        ");
  if (!x)
    return x.takeError();
  if (auto err = writeElement(p, *x, os, "        ", /*toSlots=*/true))
    return err;
  e.newScope();
  os << "      }\n";
  for (size_t k = 0; k < nOut; ++k)
    os << "      " << e.storeFour(k, "ib", "ov" + std::to_string(k)) << "\n";
  quadLoopEnd(os);
  if (!p.leaderExtra.empty()) {
    os << "    if (" << (firstChunkOnly ? "s == 0 && " : "")
       << "live && warp == 0) {\n"
       << openRows("      ");
    bindStats(all, os, "        ");
    os << p.leaderExtra << "      }\n    }\n";
  }
  os << "  }\n";
  return llvm::Error::success();
}

llvm::Error SplitEmitter::emitQuad(llvm::raw_ostream &os) {
  int64_t S = p.chunks, T = ceilDiv(p.cols, S);
  std::string items = std::to_string(groups * S) + "LL";
  if (S == 1) { // whole items: passes one after another, no workspace
    os << "  for (long long item = blockIdx.x; item < " << groups
       << "LL; item += gridDim.x) {\n";
    if (auto err = quadHead(os, T, true))
      return err;
    for (size_t k = 0; k < p.prog.passes.size(); ++k)
      if (auto err = quadPass(k, os))
        return err;
    return quadOutputs(os, /*firstChunkOnly=*/false);
  }
  declareSlots(os);
  for (size_t k = 0; k < p.prog.passes.size(); ++k) {
    os << "  for (long long item = blockIdx.x; item < " << items
       << "; item += gridDim.x) {\n";
    if (auto err = quadHead(os, T, true))
      return err;
    quadStatistics(k, os);
    if (auto err = quadPass(k, os))
      return err;
    os << "    if (live && warp == 0) {\n" << openRows("      ");
    for (const Layout::Slot &sl : layout.passes[k])
      os << "        " << sl.name << "[" << partial("s") << "] = " << sl.acc
         << "_[j];\n";
    os << "      }\n    }\n  }\n  kb_grid_sync(ws);\n";
    if (finalized(k))
      quadFinalize(k, os);
  }
  // One output per row: one item per row group (chunk 0's); per-element
  // outputs: every item over its elements.
  os << "  for (long long item = blockIdx.x; item < "
     << (p.element ? items : std::to_string(groups) + "LL")
     << "; item += gridDim.x) {\n";
  if (auto err = quadHead(os, T, /*range=*/bool(p.element)))
    return err;
  quadStatistics(p.prog.passes.size(), os);
  return quadOutputs(os, true);
}

void SplitEmitter::quadFinalize(size_t k, llvm::raw_ostream &os) {
  os << "  for (long long g = blockIdx.x; g < " << groups
     << "LL; g += gridDim.x) {\n"
     << "    const long long rq = g * " << 4 * kLanes << " + 4 * lane;\n"
     << "    const bool live = rq < " << p.rows << "LL;\n";
  if (batched) {
    // Each row's partials folded per thread as the serial form does,
    // then combined over the block at once.
    declareArrays(p.prog.passes[k], os, "    ");
    quadFoldPartials(k, os);
    quadCombine(k, os);
    os << "    if (live && warp == 0) {\n" << openRows("      ");
    for (const Layout::Slot &sl : layout.finals[k])
      os << "        " << sl.name << "[r] = " << sl.acc << "_[j];\n";
  } else {
    os << openRows("    ");
    combinePartials(k, os);
    os << "      if (live && warp == 0) {\n";
    for (const Layout::Slot &sl : layout.finals[k])
      os << "        " << sl.name << "[r] = " << sl.acc << ";\n";
  }
  os << "      }\n    }\n  }\n  kb_grid_sync(ws);\n";
}

void SplitEmitter::quadFoldPartials(size_t j, llvm::raw_ostream &os) {
  const ReducePass &pass = p.prog.passes[j];
  initArrays(pass, os);
  if (p.splitFoldUnroll > 0)
    os << "    if (live)\n#pragma unroll " << p.splitFoldUnroll
       << "\n    for (long long t = warp; t < " << p.chunks
       << "LL; t += " << kWarps << ") {\n";
  else
    os << "    for (long long t = warp; live && t < " << p.chunks
       << "LL; t += " << kWarps << ") {\n";
  bool vectors = p.splitRowVectors && lanes;
  if (vectors)
    for (const Layout::Slot &sl : layout.passes[j]) {
      os << "      " << sl.type << " " << sl.name << "_v[4];\n";
      rowVector(os, "      ", sl.type,
                sl.name + " + t * " + std::to_string(p.rows) + "LL + rq",
                sl.name + "_v");
    }
  os << openRows("      ");
  bind(pass, os, "        ");
  foldPartials(j, os, "        ", vectors);
  os << "      }\n    }\n";
}
