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

#include "SplitLayout.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;
using namespace kb::codegen::split;

namespace {

class SplitEmitter : RowWriter {
public:
  SplitEmitter(RegionEmitter &e, const StageInfo &f, YieldOp y,
               const RowPlan &p)
      : RowWriter(e, f, y), p(p), layout(p), lanes(p.splitRows == 32),
        quad(lanes && p.quad), vec(!lanes && (p.vec4 || !p.vecArgs.empty())),
        shape(shapeFor(p)), kBlock(shape.block), kLanes(splitLaneWidth(p)),
        kWarps(shape.block / kLanes), groups(splitGroups(p)) {}

  llvm::Error emit(llvm::raw_ostream &os) {
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
    } else {
      os << blockScratch(p.prog);
    }
    if (quad)
      return emitQuad(os);
    if (p.chunks == 1)
      return emitWhole(os);
    for (const auto *slots : {&layout.passes, &layout.finals})
      for (const auto &pass : *slots)
        for (const Layout::Slot &s : pass)
          os << "  " << s.type << "* const " << s.name << " = (" << s.type
             << "*)((char*)ws + " << s.offset << ");\n";

    int64_t S = p.chunks, T = ceilDiv(p.cols, S);
    if (vec)
      T = ceilDiv(T, 4) * 4; // every chunk starts at a float4
    std::string items = std::to_string(groups * S) + "LL";
    for (auto [k, pass] : llvm::enumerate(p.prog.passes)) {
      os << "  for (long long item = blockIdx.x; item < " << items
         << "; item += gridDim.x) {\n";
      itemHead(os, S, T);
      if (auto err = rowStatistics(k, os))
        return err;
      if (auto err = accumulatePass(pass, os))
        return err;
      os << "    if (" << leaderTest() << ") {\n";
      for (const Layout::Slot &s : layout.passes[k])
        os << "      " << s.name << "[r * " << S << "LL + s] = " << s.acc
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
    return writeItemOutputs(os, /*firstChunkOnly=*/true);
  }

private:
  /// One chunk per row: each item is whole, so its passes and outputs
  /// follow one another in the same block, with no workspace and no grid
  /// barrier; the item's later passes re-read what its first one brought
  /// into L2 moments before, instead of after every other item's pass
  /// (softmax over dim 0 of 1024 x 65536: 0.329 ms split by barriers).
  llvm::Error emitWhole(llvm::raw_ostream &os) {
    int64_t T = p.cols;
    os << "  for (long long item = blockIdx.x; item < " << groups
       << "LL; item += gridDim.x) {\n";
    itemHead(os, 1, T);
    if (auto err = itemShift(os))
      return err;
    for (const ReducePass &pass : p.prog.passes) {
      if (auto err = accumulatePass(pass, os))
        return err;
      if (!pass.after.empty())
        os << "    " << pass.after << "\n";
    }
    return writeItemOutputs(os, /*firstChunkOnly=*/false);
  }

  /// Lanes over rows: each row's partials of pass k combined once, by one
  /// block per group of 32 rows, into f<k><acc>[r], and a grid barrier.
  /// Every item of the row used to combine all of them itself: rows x
  /// chunks^2 partials read, which at 528 chunks took 0.25 of BatchNorm1d's
  /// 0.36 ms (bench/NOTES.md, session 18). The combine's code and order are
  /// the ones each item ran, so the statistics keep their bits.
  void finalizePass(size_t k, llvm::raw_ostream &os) {
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

  // ---- Lanes over 4 rows each (RowPlan::quad) ------------------------
  // Per-row state lives in arrays of 4 (`acc_[j]`), bound by reference to
  // the usual names inside fully unrolled `j` loops, so every recipe's
  // step, combine and writer text is used as it is; a pass's `after`
  // statements are re-emitted in each `j` body that needs them (they only
  // read the row's accumulators, so they are loop-invariant there).

  void declareArrays(const ReducePass &pass, llvm::raw_ostream &os,
                     llvm::StringRef in) {
    for (const Accumulator &a : pass.accs) {
      os << in << a.type << " " << a.name << "_[4];\n";
      if (a.combine == "CSum")
        os << in << "float " << a.name << "c_[4];\n";
    }
  }
  /// The arrays of declareArrays set to the accumulators' initial values.
  void initArrays(const ReducePass &pass, llvm::raw_ostream &os) {
    os << openRows("    ");
    for (const Accumulator &a : pass.accs) {
      os << "      " << a.name << "_[j] = " << a.init << ";\n";
      if (a.combine == "CSum")
        os << "      " << a.name << "c_[j] = 0.f;\n";
    }
    os << "    }\n";
  }
  void bind(const ReducePass &pass, llvm::raw_ostream &os, llvm::StringRef in) {
    for (const Accumulator &a : pass.accs) {
      os << in << a.type << "& " << a.name << " = " << a.name << "_[j];\n";
      if (a.combine == "CSum")
        os << in << "float& " << a.name << "c = " << a.name << "c_[j];\n";
    }
  }
  /// Binds passes [0, k) and emits their `after` statements, and k0.
  void bindStats(size_t k, llvm::raw_ostream &os, llvm::StringRef in) {
    if (p.shiftFirst)
      os << in << "const double k0 = k0_[j]; (void)k0;\n";
    for (size_t j = 0; j < k; ++j) {
      bind(p.prog.passes[j], os, in);
      if (!p.prog.passes[j].after.empty())
        os << in << p.prog.passes[j].after << "\n";
    }
  }
  /// Opens an unrolled loop over the lane's 4 rows, `r` the row.
  static std::string openRows(llvm::StringRef in) {
    return "#pragma unroll\n" + in.str() + "for (int j = 0; j < 4; ++j) {\n" +
           in.str() + "  const long long r = rq + j; (void)r;\n";
  }

  llvm::Error quadHead(llvm::raw_ostream &os, int64_t T, bool range) {
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

  /// Opens the float4 loop over the item's elements of its 4 rows (the
  /// caller closes it): the input's float4 (xs), or, for a computed input,
  /// those of the arguments its pointwise prologue reads (xs<k>).
  void quadLoop(llvm::raw_ostream &os) {
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
         << "; ++b) {\n        const long long c = cb + b * " << kWarps
         << ";\n";
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
  /// Closes quadLoop's loop (two with --split-ahead).
  void quadLoopEnd(llvm::raw_ostream &os) {
    os << (p.splitAhead > 1 ? "    }\n    }\n" : "    }\n");
  }
  /// Inside the loop over the lane's 4 rows: row j's element at i, read
  /// from the float4s, its pointwise prologue evaluated (a new scope).
  llvm::Expected<std::string> quadElement(llvm::raw_ostream &os,
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

  /// Pass k over the item: its accumulators per row, then combined over
  /// the block row by row.
  llvm::Error quadPass(size_t k, llvm::raw_ostream &os) {
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

  /// The batched combine's shared arrays (unless
  /// RowPlan::splitSerialCombine): per pass and accumulator, each thread's
  /// value for each of its 4 rows. Only for whole warps of lanes, a block
  /// with 128 threads per accumulator (an online pair is one), and arrays
  /// that fit kBatchedCombineBytes. Measured on the H100 (run108,
  /// codegen_knobs.py, levit_128's seven batch norms): every region 10-19%
  /// faster (0.0449 -> 0.0396 ms at 128 x 12544, 0.0214 -> 0.0173 at 384 x
  /// 1024).
  void declareBatchedCombine(llvm::raw_ostream &os) {
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
  static std::string batchName(size_t k, llvm::StringRef acc) {
    return "kbq" + std::to_string(k) + "_" + acc.str();
  }

  /// Pass k's accumulators of the thread's 4 rows (acc_[j]) combined over
  /// the block at once: every value to shared memory, one barrier, then
  /// thread (accumulator a, row j, lane l) folds lane l's values over the
  /// warps in warp order, as combinePassInBlock does row by row (the same
  /// bits); a barrier, every thread reads its rows' results, and a barrier
  /// before the arrays are filled again. Three barriers where the serial
  /// form takes two per row and accumulator.
  void quadCombine(size_t k, llvm::raw_ostream &os) {
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
         << ";\n      float* const ba = " << ba << " + (threadIdx.x >> 5) * "
         << B << ";\n      float " << m << " = bm[lane], " << a
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

  /// The item's rows' statistics of passes [0, k): from f<j> where
  /// finalizePass combined them, else from the partials.
  void quadStatistics(size_t k, llvm::raw_ostream &os) {
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

  /// --split-row-vectors: pass j's finalized statistics of the lane's 4
  /// (contiguous, 16-byte aligned) rows as a float4 or two double2s each.
  void quadVectorStatistics(size_t j, llvm::raw_ostream &os) {
    initArrays(p.prog.passes[j], os);
    os << "    if (live) {\n";
    for (const Layout::Slot &sl : layout.finals[j]) {
      std::string n = sl.acc + "_";
      if (sl.type == "double")
        os << "      {\n        const double2 v01 = __ldcg(reinterpret_cast<"
              "const double2*>("
           << sl.name << " + rq)), v23 = __ldcg(reinterpret_cast<const "
           << "double2*>(" << sl.name << " + rq + 2));\n        " << n
           << "[0] = v01.x; " << n << "[1] = v01.y; " << n << "[2] = v23.x; "
           << n << "[3] = v23.y;\n      }\n";
      else
        os << "      {\n        const float4 v = __ldcg(reinterpret_cast<"
              "const float4*>("
           << sl.name << " + rq));\n        " << n << "[0] = v.x; " << n
           << "[1] = v.y; " << n << "[2] = v.z; " << n << "[3] = v.w;\n"
           << "      }\n";
    }
    os << "    }\n";
  }

  /// The item's outputs: per element (float4 stores of the 4 rows'
  /// values) or, by its leader, per row; then the per-row extras.
  llvm::Error quadOutputs(llvm::raw_ostream &os, bool firstChunkOnly) {
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

  llvm::Error emitQuad(llvm::raw_ostream &os) {
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
    for (const auto *slots : {&layout.passes, &layout.finals})
      for (const auto &pass : *slots)
        for (const Layout::Slot &sl : pass)
          os << "  " << sl.type << "* const " << sl.name << " = (" << sl.type
             << "*)((char*)ws + " << sl.offset << ");\n";
    for (size_t k = 0; k < p.prog.passes.size(); ++k) {
      os << "  for (long long item = blockIdx.x; item < " << items
         << "; item += gridDim.x) {\n";
      if (auto err = quadHead(os, T, true))
        return err;
      quadStatistics(k, os);
      if (auto err = quadPass(k, os))
        return err;
      os << "    if (live && warp == 0) {\n" << openRows("      ");
      for (const Layout::Slot &sl : layout.passes[k]) {
        std::string acc = sl.acc;
        os << "        " << sl.name << "[r * " << S << "LL + s] = " << acc
           << "_[j];\n";
      }
      os << "      }\n    }\n  }\n  kb_grid_sync(ws);\n";
      if (finalized(k))
        quadFinalize(k, os);
    }
    size_t all = p.prog.passes.size();
    if (!p.element) {
      os << "  for (long long item = blockIdx.x; item < " << groups
         << "LL; item += gridDim.x) {\n";
      if (auto err = quadHead(os, T, false))
        return err;
      quadStatistics(all, os);
      return quadOutputs(os, true);
    }
    os << "  for (long long item = blockIdx.x; item < " << items
       << "; item += gridDim.x) {\n";
    if (auto err = quadHead(os, T, true))
      return err;
    quadStatistics(all, os);
    return quadOutputs(os, true);
  }

  void quadFinalize(size_t k, llvm::raw_ostream &os) {
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

  /// Whether pass k's partials are combined once per row (finalizePass):
  /// with lanes over rows in many chunks, where every item reads the statistics
  /// (a later pass or per-element outputs); one output per row after the last
  /// pass is written by one item per row group, which combines them itself.
  bool finalized(size_t k) const {
    return combinesOnce(p) && (p.element || k + 1 < p.prog.passes.size());
  }

  /// Pass j's accumulators declared and set to row r's statistics: read
  /// from f<j> where finalizePass combined them, else combined from the
  /// partials.
  void loadStatistics(size_t j, llvm::raw_ostream &os) {
    if (!finalized(j))
      return combinePartials(j, os);
    for (const Accumulator &a : p.prog.passes[j].accs)
      os << "    " << declareAcc(a) << "\n";
    os << "    if (live) {\n";
    for (const Layout::Slot &sl : layout.finals[j])
      os << "      " << sl.acc << " = __ldcg(" << sl.name << " + r);\n";
    os << "    }\n";
  }

  /// Pass j's accumulators declared and combined from its partials over
  /// the item's row, across the block.
  void combinePartials(size_t j, llvm::raw_ostream &os) {
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

  /// Partial t of row r of pass j folded into the pass's accumulators.
  void foldPartials(size_t j, llvm::raw_ostream &os, llvm::StringRef in) {
    std::string S = std::to_string(p.chunks) + "LL";
    const ReducePass &pass = p.prog.passes[j];
    // L2 only: the partials were written by other SMs in this launch.
    if (pass.online) {
      std::string m = pass.accs[0].name, a = pass.accs[1].name,
                  sm = "p" + std::to_string(j) + m,
                  sa = "p" + std::to_string(j) + a;
      os << in << "kb::online_merge(" << m << ", " << a << ", __ldcg(" << sm
         << " + r * " << S << " + t), __ldcg(" << sa << " + r * " << S
         << " + t));\n";
    }
    for (const Accumulator &a : pass.online ? llvm::ArrayRef<Accumulator>()
                                            : llvm::ArrayRef(pass.accs)) {
      std::string slot = "p" + std::to_string(j) + a.name;
      if (a.combine == "CSum")
        os << in << "kb::csum_add(" << a.name << ", " << a.name
           << "c, __ldcg(" << slot << " + r * " << S << " + t));\n"
           << in << a.name << "c += __ldcg(" << slot << "c + r * " << S
           << " + t);\n";
      else
        os << in << a.name << " = kb::" << a.combine << "()(" << a.name
           << ", __ldcg(" << slot << " + r * " << S << " + t));\n";
    }
  }

  /// Batched: the partials of pass j's rows folded into acc_[j] (declared
  /// by the caller), the 4 rows in one loop over the chunks: each row's in
  /// the order combinePartials folds it, four loads a trip.
  void quadFoldPartials(size_t j, llvm::raw_ostream &os) {
    const ReducePass &pass = p.prog.passes[j];
    initArrays(pass, os);
    os << "    for (long long t = warp; live && t < " << p.chunks
       << "LL; t += " << kWarps << ") {\n"
       << openRows("      ");
    bind(pass, os, "        ");
    foldPartials(j, os, "        ");
    os << "      }\n    }\n";
  }

  /// The test that selects the thread writing an item's per-row values.
  const char *leaderTest() const {
    return lanes ? "live && warp == 0" : "threadIdx.x == 0";
  }

  /// k0, the shift of a norm's or variance's moments, for the item's row.
  llvm::Error itemShift(llvm::raw_ostream &os) {
    if (!p.shiftFirst)
      return llvm::Error::success();
    os << "    double k0 = 0.0;\n    if (" << (lanes ? "live" : "true")
       << ") {\n";
    if (auto err = writeShift(p, "k0", os, "      "))
      return err;
    os << "    }\n";
    return llvm::Error::success();
  }

  /// One pass over the item's elements into the pass's accumulators,
  /// combined over the block.
  llvm::Error accumulatePass(const ReducePass &pass, llvm::raw_ostream &os) {
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

  /// The item's outputs once its row's statistics are known, and the end
  /// of the item loop: the row's result (by its leader) or every element
  /// of the item, then the recipe's extra per-row outputs, written once
  /// per row (with `firstChunkOnly`, by chunk 0's item).
  llvm::Error writeItemOutputs(llvm::raw_ostream &os, bool firstChunkOnly) {
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

  /// The item's row r (with lanes: the lane's row) and chunk s. Items
  /// with lanes are taken chunk-major: the blocks running at once read the
  /// 128-byte strips of neighbouring row groups over the same elements,
  /// so together they stream whole rows of memory (group-major, each
  /// block alone in a strip 384 bytes apart from the next, ran BatchNorm1d
  /// at a third of copy bandwidth).
  void itemHead(llvm::raw_ostream &os, int64_t S, int64_t T,
                bool range = true) {
    std::string Ss = std::to_string(S) + "LL",
                Gs = std::to_string(groups) + "LL";
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

  /// Chunk s's elements [c0, c1). A lane past the last row gets an empty
  /// range, so the element loops test `c < c1` alone: with `live && c <
  /// c1` nvcc could not count the trips and branched after every unrolled
  /// load, one load in flight per warp (a column sum of [256260, 999] ran
  /// at 2.4 TB/s, ATen's at 3.7).
  void chunkRange(llvm::raw_ostream &os, int64_t T, bool lanes) {
    std::string end = "(c0 + " + std::to_string(T) + "LL < " +
                      std::to_string(p.cols) + "LL ? c0 + " +
                      std::to_string(T) + "LL : " + std::to_string(p.cols) +
                      "LL)";
    os << "    const long long c0 = s * " << T
       << "LL, c1 = " << (lanes ? "!live ? c0 : " : "") << end << ";\n";
  }

  /// The loop over the item's elements, opened (loopEnd closes it);
  /// returns the element value. Rows of contiguous runs of 4 read their
  /// input as float4 (a quarter of the load instructions, four times the
  /// bytes in flight per load); unrolling as Shape says.
  llvm::Expected<std::string> elementLoop(llvm::raw_ostream &os) {
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
      for (unsigned a : args) {
        std::string k = std::to_string(a);
        os << "      const float4 v4_" << k
           << " = *reinterpret_cast<const float4*>(in" << k << " + ib);\n"
           << "      const float xs" << k << "[4] = {v4_" << k << ".x, v4_" << k
           << ".y, v4_" << k << ".z, v4_" << k << ".w};\n";
      }
      os << "#pragma unroll\n      for (int j = 0; j < 4; ++j) {\n"
         << "      const long long c = cb + j, i = ib + j;\n"
         << "      (void)c; (void)i; // not every pass reads them\n";
      loopEnd = "      }\n    }\n";
      e.newScope();
      Block &body = e.kernel.getBody().front();
      for (unsigned a : args)
        e.seed(body.getArgument(a), "i", "xs" + std::to_string(a) + "[j]");
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
    return e.valueAt(f.input, "i", os, "      ");
  }

  /// The shift k0 and the combined statistics of the passes before `k`,
  /// each with its `after` statements, for the item's row.
  llvm::Error rowStatistics(size_t k, llvm::raw_ostream &os) {
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

  /// Combines a pass's accumulators over the block; an online pair is
  /// merged together, lane by lane in warp order (lanes over rows only).
  void combinePassInBlock(const ReducePass &pass, llvm::raw_ostream &os) {
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

  /// Combines an accumulator over the block: every thread, or with lanes
  /// over rows every warp's value of the same lane, in warp order; all
  /// threads reach this (the loops above are uniform per block).
  void combineInBlock(const Accumulator &a, llvm::raw_ostream &os) {
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

  const RowPlan &p;
  Layout layout;
  bool lanes, quad, vec;
  // Quad items' block combines batched (declareBatchedCombine).
  bool batched = false;
  Shape shape;
  int kBlock, kLanes, kWarps;
  // Row groups of an item (splitGroups; the item loops' bound per chunk).
  int64_t groups;
  std::string loopEnd;
};

} // namespace

llvm::Error codegen::emitSplitRows(RegionEmitter &e, const StageInfo &f,
                                   YieldOp yield, const RowPlan &p,
                                   llvm::raw_ostream &os) {
  return SplitEmitter(e, f, yield, p).emit(os);
}
