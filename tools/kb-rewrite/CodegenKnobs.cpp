//===- CodegenKnobs.cpp - The codegen subcommand's probes of the plan ----===//
//
// Options that override one choice of the code generator's row and split
// plans (bench/probes/codegen_knobs.py times them against the default):
// each fills a field of kb::EmitOptions, checked here once.
//
//===----------------------------------------------------------------------===//

#include "CodegenKnobs.h"
#include "CommandLine.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"

using namespace llvm;
using namespace kbtool;

namespace {

cl::opt<unsigned> splitChunksOpt(
    "split-chunks",
    cl::desc("Chunks per row of split row kernels instead of the heuristic "
             "(a probe of the plan; 1 = whole items)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<std::string> splitShapeOpt(
    "split-shape",
    cl::desc("BLOCK,PER_SM,UNROLL of split row kernels instead of the "
             "measured defaults; PER_SM also caps the resident blocks of "
             "softmax in ATen's strided order (a probe of the plan; 0 keeps "
             "one)"),
    cl::init(""), cl::sub(codegenCommand()));
cl::opt<bool> splitQuadOpt(
    "split-quad",
    cl::desc("Split row kernels over strided rows give each lane 4 rows "
             "read as float4 wherever that applies (default: norms and "
             "softmax over 128 rows or more; a probe of the plan)"),
    cl::sub(codegenCommand()));
cl::opt<unsigned> splitAheadOpt(
    "split-ahead",
    cl::desc("Split row kernels with lanes over 4 rows load that many "
             "float4s of a trip before using the first (default: one at a "
             "time in the unrolled loop; a probe of the plan)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> splitFoldUnrollOpt(
    "split-fold-unroll",
    cl::desc("Split row kernels with lanes over 4 rows fold that many "
             "chunks' partials per unrolled trip (1-8; default: one trip at "
             "a time; a probe of the plan)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> splitCombineOnceOpt(
    "split-combine-once",
    cl::desc("Split row kernels with lanes over rows in at least N chunks "
             "combine each row's partials once (a finalize phase and a "
             "second grid barrier) instead of in every item (default 64; a "
             "probe of the plan)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<bool> splitLaneRowsOpt(
    "split-lane-rows",
    cl::desc("Split reductions over at most 32 strided rows of one run read "
             "one float a lane a row (the form before session 58) instead of "
             "flat float4s, 4 accumulators a thread (a probe of the plan)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> splitLaneOutputsOpt(
    "split-lane-outputs",
    cl::desc("Split reductions over at most 32 strided rows of one run "
             "where every element is written back, over several passes, "
             "online pairs or shifted moments read one float a lane a row "
             "(the form before session 60) instead of flat float4s (a probe "
             "of the plan)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> splitSerialCombineOpt(
    "split-serial-combine",
    cl::desc("Split row kernels with lanes over 4 rows combine each row's "
             "accumulators over the block one at a time instead of all at "
             "once (the same bits; a probe of the plan)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> splitItemRegistersOpt(
    "split-item-registers",
    cl::desc("Split row kernels with lanes over strided rows in whole items "
             "hold each thread's elements (at most 32) in registers from the "
             "first pass to the outputs instead of reading them again each "
             "pass (a probe of the plan)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> splitRowScalarsOpt(
    "split-row-scalars",
    cl::desc("Split row kernels with lanes over 4 rows load the rows' shift "
             "and statistics as 4 scalars a lane instead of one vector (the "
             "form before session 57; a probe of the plan)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> splitBarrierExchangeOpt(
    "split-barrier-exchange",
    cl::desc("Grid barriers release with an exchange, a fence and an "
             "increment (the form before session 58) instead of one 8-byte "
             "store of the count and generation (a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<unsigned> pointwiseVectorsOpt(
    "pointwise-vectors",
    cl::desc("float4s each thread of a pointwise kernel takes, all loaded "
             "before the first is computed (default 1; a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> outputsPerThreadOpt(
    "outputs-per-thread",
    cl::desc("Outputs per thread of one-thread-per-output kernels (pooling, "
             "strided reductions) instead of the default (a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> rowBlockOpt(
    "row-block",
    cl::desc("Threads per block of row kernels streaming long rows (one "
             "block a row) instead of the default (a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> registerRowMaxOpt(
    "register-row-max",
    cl::desc("Longest rows a block holds in registers (default 2048, 3584 "
             "for layer norms of a kernel argument; with --row-block, that "
             "many threads hold them) (a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> threadRowMaxOpt(
    "thread-row-max",
    cl::desc("Longest strided rows one thread holds in registers when it "
             "reads them more than once (default 128; 112 for a logsumexp) (a "
             "probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<bool> divisionStatsOpt(
    "division-stats",
    cl::desc("Norm statistics as divisions by the row length and 1 / sqrt "
             "(the form before session 32) (a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> threadShortRowsOpt(
    "thread-short-rows",
    cl::desc("Contiguous rows of at most 16 elements read by one thread each "
             "instead of a group of lanes each (a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> laneShortRowsOpt(
    "lane-short-rows",
    cl::desc("Contiguous rows of at most 16 scalars read by lane groups from "
             "global memory instead of staged through shared memory, one "
             "thread a row (a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> directTransposedStoresOpt(
    "direct-transposed-stores",
    cl::desc("Lane-group rows store an output kept transposed straight to "
             "global memory, one float a sector, instead of through a "
             "shared-memory tile of the block's rows (the form before "
             "session 57; a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<bool> noTiledTransposesOpt(
    "no-tiled-transposes",
    cl::desc("Pointwise regions over row-major and transposed tensors walk "
             "one layout with float4s instead of 32 x 32 tiles through "
             "shared memory (the form before session 62; a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<unsigned> sharedRowMaxOpt(
    "shared-row-max",
    cl::desc("Longest rows a block stages in shared memory when too long "
             "for registers (default: 11776 for layer norms, none for the "
             "rest; 1 turns it off) (a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<bool> atenOrderNormsOpt(
    "aten-order-norms",
    cl::desc("Layer norms (float32; rows of a multiple of 4, or up to 8192) "
             "and softmax over a last dim of at most 1024 in ATen's own "
             "order, bit-identical to eager; rewrite uses it where a step or "
             "singular op follows a layer norm (a probe)"),
    cl::init(false), cl::sub(codegenCommand()));
cl::opt<unsigned> groupUnrollOpt(
    "group-unroll",
    cl::desc("Row groups a warp of lane-group row kernels takes per unrolled "
             "trip, the grid divided as much (1-8; default: 2 to 4 for "
             "float4 rows of inputs of 2^24 elements or more, else 1) "
             "(a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> vectorLanesOpt(
    "vector-lanes",
    cl::desc("Lanes per row of lane-group row kernels reading float4 (1, 2, "
             "4, 8, 16 or 32; default: one float4 a lane, up to 32; up to "
             "four a lane over many rows of 61-256 read more than once) "
             "(a probe)"),
    cl::init(0), cl::sub(codegenCommand()));
cl::opt<unsigned> momentsBatchOpt(
    "moments-batch",
    cl::desc("Elements a thread of the 512-thread layer norm in ATen's "
             "order (odd rows over 8192) loads before folding them, and "
             "outputs it computes before storing (1-16; 1: one at a time) "
             "(a probe)"),
    cl::init(0), cl::sub(codegenCommand()));

Error usage(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

} // namespace

Expected<kb::EmitOptions> kbtool::knobEmitOptions() {
  int splitShape[3] = {0, 0, 0};
  if (!splitShapeOpt.empty()) {
    SmallVector<StringRef, 3> parts;
    StringRef(splitShapeOpt).split(parts, ',');
    bool ok = parts.size() == 3;
    for (unsigned i = 0; ok && i < 3; ++i)
      ok = !parts[i].trim().getAsInteger(10, splitShape[i]) &&
           splitShape[i] >= 0 && splitShape[i] <= 1024;
    if (ok && splitShape[0] && (splitShape[0] % 32 || splitShape[0] < 64))
      ok = false;
    if (!ok)
      return usage("--split-shape wants BLOCK,PER_SM,UNROLL "
                   "(BLOCK a multiple of 32 from 64 to 1024, 0 "
                   "keeps the default), not '" +
                   splitShapeOpt + "'");
  }
  if (rowBlockOpt != 0 &&
      (rowBlockOpt % 32 != 0 || rowBlockOpt < 64 || rowBlockOpt > 1024))
    return usage("--row-block wants a multiple of 32 from 64 to "
                 "1024, not " +
                 std::to_string(rowBlockOpt));
  if (groupUnrollOpt > 8)
    return usage("--group-unroll wants 1 to 8, not " +
                 std::to_string(groupUnrollOpt));
  if (vectorLanesOpt > 32 || (vectorLanesOpt & (vectorLanesOpt - 1)))
    return usage("--vector-lanes wants 1, 2, 4, 8, 16 or 32, not " +
                 std::to_string(vectorLanesOpt));
  if (momentsBatchOpt > 16)
    return usage("--moments-batch wants 1 to 16, not " +
                 std::to_string(momentsBatchOpt));
  if (registerRowMaxOpt > 32768)
    return usage("--register-row-max wants at most 32768, not " +
                 std::to_string(registerRowMaxOpt));
  if (threadRowMaxOpt > 256)
    return usage("--thread-row-max wants at most 256, not " +
                 std::to_string(threadRowMaxOpt));
  if (sharedRowMaxOpt > 11776)
    return usage("--shared-row-max wants at most 11776 (48 KB of "
                 "shared memory), not " +
                 std::to_string(sharedRowMaxOpt));
  if (outputsPerThreadOpt > 16)
    return usage("--outputs-per-thread wants 1 to 16, not " +
                 std::to_string(outputsPerThreadOpt));
  if (splitFoldUnrollOpt > 8)
    return usage("--split-fold-unroll wants 1 to 8, not " +
                 std::to_string(splitFoldUnrollOpt));
  if (pointwiseVectorsOpt > 8)
    return usage("--pointwise-vectors wants 1 to 8, not " +
                 std::to_string(pointwiseVectorsOpt));
  kb::EmitOptions o;
  o.splitChunks = splitChunksOpt;
  o.splitBlock = splitShape[0];
  o.splitPerSM = splitShape[1];
  o.splitUnroll = splitShape[2];
  o.splitQuad = splitQuadOpt;
  o.splitAhead = splitAheadOpt;
  o.splitFoldUnroll = splitFoldUnrollOpt;
  o.splitFlat = !splitLaneRowsOpt;
  o.splitFlatOutputs = !splitLaneOutputsOpt;
  o.splitCombineOnceMin = splitCombineOnceOpt;
  o.splitSerialCombine = splitSerialCombineOpt;
  o.splitItemRegisters = splitItemRegistersOpt;
  o.splitRowVectors = !splitRowScalarsOpt;
  o.outputsPerThread = outputsPerThreadOpt;
  o.pointwiseVectors = pointwiseVectorsOpt;
  o.rowBlock = rowBlockOpt;
  o.registerRowMax = registerRowMaxOpt;
  o.threadRowMax = threadRowMaxOpt;
  o.divisionStats = divisionStatsOpt;
  o.threadShortRows = threadShortRowsOpt;
  o.laneShortRows = laneShortRowsOpt;
  o.stageTransposedStores = !directTransposedStoresOpt;
  o.tileTransposes = !noTiledTransposesOpt;
  o.splitBarrierStore = !splitBarrierExchangeOpt;
  o.sharedRowMax = sharedRowMaxOpt;
  o.atenOrderNorms = atenOrderNormsOpt;
  o.groupUnroll = groupUnrollOpt;
  o.vectorLanes = vectorLanesOpt;
  o.momentsBatch = momentsBatchOpt;
  return o;
}
