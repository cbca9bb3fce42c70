//===- CrossRow.cpp - A norm's statistics, then rows of another dim -------===//
//
// A training batch norm (or a softmax) whose result feeds a reduction over
// other rows (`layer_norm(tanh(batch_norm(x)))`: channels, then samples) took
// two kernels: the norm's (its statistics, then every element written) and the
// reduction's (reading those elements back): five passes over memory. Here
// one cooperative kernel computes the norm's statistics alone in a first
// phase (one read of x; the split kernel's passes and combine, its
// per-channel mean and rstd stored in the workspace, the running
// statistics updated as ATen does), waits at a grid barrier, then runs the
// final stage's row kernel, which evaluates the norm per element from x and
// the stored statistics (RegionEmitter's affineNormAt), in the split
// kernel's own expression, so every element rounds as it did in the norm's
// kernel. Row kernels loop over their rows by gridDim, so the final stage
// runs unchanged on the grid of resident blocks a cooperative launch needs.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

int64_t roundUp16(int64_t n) { return (n + 15) / 16 * 16; }

/// Floats of shared memory a final stage may stage its row in beside the
/// statistics phase's scratch (at most 16 KB for 1024 threads): the two
/// stay within a block's 48 KB of static shared memory.
constexpr int kCrossRowSharedRowMax = 6144;

} // namespace

AtenOp codegen::crossRowNorm(AtenOp final) {
  // Back from the final stage's input through pointwise ops only: any
  // other reduction on the way keeps the kernel as it was.
  AtenOp found;
  SmallVector<Value> work{final.getArgs()[0]};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    auto op = dyn_cast_or_null<AtenOp>(v.getDefiningOp());
    if (!op || !op.getInfo())
      continue;
    OpKind kind = op.getInfo()->kind;
    if (kind == OpKind::Reduction) {
      if ((!isCrossRowFirst(op) && !sameRowFirstRow(op)) ||
          (found && found != op))
        return {};
      found = op;
      continue;
    }
    if (kind != OpKind::Elementwise && kind != OpKind::Broadcast)
      continue;
    for (Value o : op->getOperands())
      if (isa<RankedTensorType>(o.getType()))
        work.push_back(o);
  }
  return found;
}

llvm::Expected<CrossRowStats>
codegen::planCrossRowStats(RegionEmitter &e, AtenOp norm, YieldOp yield,
                           EmittedKernel &out,
                           SmallVectorImpl<unsigned> &updated) {
  if (e.channelsLastRead)
    return e.unsupported("channels-last reads into a cross-row kernel");
  auto stage = analyzeStage(e.kernel, norm);
  if (!stage)
    return stage.takeError();
  CrossRowStats s;
  s.stage = std::move(*stage);
  if (auto err = planRows(e, s.stage, yield, s.plan, out, updated,
                          /*forceSplit=*/true))
    return std::move(err);
  if (s.plan.mode != RowMode::Split)
    return e.unsupported("the statistics of '" + displayName(norm) +
                         "' as split rows");
  s.plan.element = nullptr;
  s.plan.statsOnly = true;
  bool bn = s.stage.recipe == Recipe::BatchNorm;
  // The statistics the split kernel's element expression reads.
  s.first = bn ? "mean" : "m";
  s.second = bn ? "rstd" : "acc";
  s.type = bn ? "double" : "float";
  s.plan.leaderExtra += "      kbx_" + s.first + "[r] = " + s.first +
                        ";\n      kbx_" + s.second + "[r] = " + s.second +
                        ";\n";
  int64_t R = s.plan.rows;
  s.firstOffset = roundUp16(std::max<int64_t>(16, splitWorkspaceBytes(s.plan)));
  s.secondOffset = s.firstOffset + roundUp16(R * (bn ? 8 : 4));
  s.workspaceBytes = s.secondOffset + roundUp16(R * (bn ? 8 : 4));
  s.comment = "Phase 1: the statistics of " + s.plan.what + " over " +
              std::to_string(R) + (bn ? " channels of " : " rows of ") +
              std::to_string(s.plan.cols) +
              " elements (split items, no element written), then a grid "
              "barrier; phase 2 evaluates it per element from them.";
  return s;
}

int codegen::crossRowBlocksPerSM(const RowPlan &p) {
  if (p.mode == RowMode::Split && p.chunks > 1)
    return splitBlocksPerSM(p);
  // 1024 threads an SM: 64 registers a thread under the launch bounds.
  return std::max(1, 1024 / rowBlockSize(p));
}

llvm::Error codegen::emitCrossRowStats(RegionEmitter &e, CrossRowStats &s,
                                       YieldOp yield, int block,
                                       llvm::raw_ostream &os) {
  s.plan.splitBlock = block;
  s.plan.splitPerSM = s.blocksPerSM;
  std::string a = "kbx_" + s.first, b = "kbx_" + s.second;
  os << "  " << s.type << "* const " << a << " = (" << s.type
     << "*)((char*)ws + " << s.firstOffset << ");\n"
     << "  " << s.type << "* const " << b << " = (" << s.type
     << "*)((char*)ws + " << s.secondOffset << ");\n"
     << "  { // phase 1: " << s.plan.what << " statistics\n";
  if (auto err = emitSplitRows(e, s.stage, yield, s.plan, os))
    return err;
  os << "  }\n  kb_grid_sync(ws);\n  // phase 2\n";
  e.newScope();
  e.normStats[s.stage.op] = {a, b};
  return llvm::Error::success();
}

int codegen::crossRowSharedRowMax(int sharedRowMax) {
  return std::min(sharedRowMax, kCrossRowSharedRowMax);
}

bool codegen::sameRowFirst(RegionEmitter &e, AtenOp pre, const StageInfo &f,
                           const RowPlan &final, bool rowMajorIndex) {
  if (e.channelsLastRead)
    return false;
  auto s = analyzeStage(e.kernel, pre);
  if (!s) {
    llvm::consumeError(s.takeError());
    return false;
  }
  if (s->recipe == Recipe::LayerNorm) {
    // Only over the final stage's rows, which a lane group holds in
    // registers (form-regions joins no other: rows of the last dim of at
    // most kLaneGroupRowMax, a final stage reading the norm's result); a
    // staged tile gives way to the lane groups (emitRowKernel drops it).
    int64_t len = sameRowFirstRow(pre);
    return final.mode == RowMode::Warp && !final.vec4 && rowMajorIndex &&
           len > 0 && len == final.cols &&
           product(s->inShape) == final.rows * final.cols;
  }
  if (!isSoftmaxRecipe(s->recipe))
    return false;
  // A thread that owns its row reads it in any order: the softmax only
  // has to reduce the same elements, whatever their strides
  // (softmax(dim=1) -> log_softmax(dim=1) of a [4455, 64, 64] bmm, seed
  // 20261291 task 2: a statistics phase, a grid barrier and 64-register
  // spills, 0.243 ms for one read and one write of 73 MB).
  if (final.mode == RowMode::Thread)
    return s->inShape == f.inShape && s->reduced == f.reduced &&
           s->reduced.size() == 1 &&
           product(s->inShape) == final.rows * final.cols;
  // A staged tile gives way to the lane groups (emitRowKernel drops it).
  bool registerGroups = final.mode == RowMode::Warp && !final.vec4;
  if ((final.mode != RowMode::Block && !registerGroups) || !rowMajorIndex)
    return false;
  int64_t d = s->reduced.empty() ? 0 : s->reduced[0];
  ArrayRef<int64_t> in = s->inShape;
  return !in.empty() && product(in.drop_front(d + 1)) == 1 &&
         in[d] == final.cols && product(in) == final.rows * final.cols;
}

llvm::Error codegen::rowNormStats(RegionEmitter &e, AtenOp ln, int64_t cols,
                                  llvm::raw_ostream &os) {
  auto eps = getConstantNumber(ln.getArg("eps"));
  if (!eps)
    return e.unsupported("layer_norm with a non-constant eps");
  os << "    " << normMoments(cols, *eps, e.divisionStats, "kbs_") << "\n";
  e.normStats[ln] = {"kbs_mean", "kbs_rstd"};
  e.rowStats.insert(ln);
  return llvm::Error::success();
}

llvm::Error codegen::emitRowFirstStats(RegionEmitter &e, const RowPlan &p,
                                       int64_t lanes, llvm::raw_ostream &os) {
  if (!p.rowFirst)
    return llvm::Error::success();
  auto s = analyzeStage(e.kernel, p.rowFirst);
  if (!s)
    return s.takeError();
  // A layer norm's statistics come from a held row only (sameRowFirst).
  if (!isSoftmaxRecipe(s->recipe))
    return e.unsupported("the statistics of '" + displayName(p.rowFirst) +
                         "' outside a lane group's held row");
  // One softmax a kernel (crossRowNorm's), emitted once in its row loop.
  const std::string m = "kbs_m", acc = "kbs_acc", red = "kbs_red";
  if (lanes == 1) {
    // The thread's own row: one online pass (the split kernel's
    // statistics, and what a strided softmax row computes alone).
    os << "    float " << m << " = (-kb::inf()), " << acc
       << " = 0.f;\n#pragma unroll 8\n    for (long long c = 0; c < " << p.cols
       << "LL; ++c) {\n      const long long i = " << p.index("r", "c")
       << ";\n";
    e.newScope();
    seedRowCoordinates(e, p, "r");
    auto x = e.valueAt(s->input, "i", os, "      ");
    if (!x)
      return x.takeError();
    os << "      kb::online_add(" << m << ", " << acc << ", " << *x
       << ");\n    }\n";
    e.newScope();
    e.normStats[p.rowFirst] = {m, acc};
    e.rowStats.insert(p.rowFirst);
    return llvm::Error::success();
  }
  std::string C = std::to_string(p.cols) + "LL", Ls = std::to_string(lanes);
  // A block walks the row by its threads; a group of `lanes` lanes by its
  // lanes (dead lanes past the last row take part in the shuffles only).
  std::string loop =
      lanes == 0
          ? "#pragma unroll 4\n    for (long long c = threadIdx.x; c < " + C +
                "; c += blockDim.x) {\n      {\n"
          : "#pragma unroll 4\n    for (long long c = lane; c < " + C +
                "; c += " + Ls + ") {\n      if (live) {\n";
  loop += "      const long long i = " + p.index("r", "c") + ";\n";
  auto combine = [&](const std::string &v, const char *identity,
                     const char *op) {
    return lanes == 0 ? "    " + v + " = kb::block_reduce(" + v + ", " +
                            identity + ", " + red + ", kb::" + op + "());\n"
                      : "    " + v + " = kb::group_reduce<" + Ls + ">(" + v +
                            ", kb::" + op + "());\n";
  };
  // The split kernel's two passes (RowPlans.cpp's softmax program): the
  // row comes from L2 the second time, and a third in the final stage's.
  if (lanes == 0)
    os << "    __shared__ float " << red << "[33];\n";
  os << "    float " << m << " = (-kb::inf());\n" << loop;
  e.newScope();
  seedRowCoordinates(e, p, "r");
  auto x = e.valueAt(s->input, "i", os, "      ");
  if (!x)
    return x.takeError();
  os << "      " << m << " = kb::nanmax(" << m << ", " << *x
     << ");\n      }\n    }\n"
     << combine(m, "(-kb::inf())", "Max") << "    float " << acc << " = 0.f;\n"
     << loop;
  e.newScope();
  seedRowCoordinates(e, p, "r");
  x = e.valueAt(s->input, "i", os, "      ");
  if (!x)
    return x.takeError();
  os << "      " << acc << " += expf(__fsub_rn(" << *x << ", " << m
     << "));\n      }\n    }\n"
     << combine(acc, "0.f", "Sum");
  e.newScope();
  e.normStats[p.rowFirst] = {m, acc};
  e.rowStats.insert(p.rowFirst);
  return llvm::Error::success();
}
