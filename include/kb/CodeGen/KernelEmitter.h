//===- KernelEmitter.h - CUDA for outlined fusion regions -------*- C++ -*-===//
#ifndef KB_CODEGEN_KERNELEMITTER_H
#define KB_CODEGEN_KERNELEMITTER_H

#include "kb/IR/KbDialect.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kb {

struct EmittedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string distribution = "normal"; // kb-verify's input distribution
  std::string dtype =
      "float32"; // int64 (argmax / argmin outputs), bool (masks)
  /// The traced strides of a strided view (a transposed attention output),
  /// empty for row-major. Inputs are read through them (the runtime's
  /// guard and kb-verify's inputs take them); outputs, permutations of
  /// row-major only, are allocated and written with them, so later ops see
  /// the layout eager gives them.
  std::vector<int64_t> strides;
  /// An input kb-stream-layouts made row-major where eager's layout is
  /// another: the runtime copies it to row-major when its producer ran its
  /// ATen ops, rather than run this region's ATen ops too.
  bool relaid = false;
};

/// The C type of a tensor's elements among a kernel's parameters, from its
/// dtype: "bool" (masks), "long long" (int64 indices) or "float". The
/// kernel's signature and the model's prompt both spell it so.
/// float16 and bfloat16 are their bits (NVRTC gets no cuda_fp16.h): the
/// prelude's kb::f16_f and friends convert.
inline const char *elementCType(const std::string &dtype) {
  if (dtype == "float16" || dtype == "bfloat16")
    return "unsigned short";
  return dtype == "bool" ? "bool" : dtype == "int64" ? "long long" : "float";
}
/// The size of that element type in bytes.
inline int elementBytes(const std::string &dtype) {
  if (dtype == "float16" || dtype == "bfloat16")
    return 2;
  return dtype == "bool" ? 1 : dtype == "int64" ? 8 : 4;
}

/// One kernel: a self-contained .cu and what kb-verify needs to check it.
struct EmittedKernel {
  std::string name;        // kb_region_<id>, also the entry point
  std::string source;      // the .cu translation unit
  std::string referenceIR; // the region's ops as TorchScript IR text
  std::vector<EmittedTensor> inputs, outputs;
  std::vector<std::string> grid, block; // launch rule (kb-verify expressions)
  std::string kind; // pointwise | reduction | softmax | norm | pool
  /// {output, input}: the output holds the input's new value, which the
  /// original op writes in place (batch_norm's running statistics); the host
  /// wrapper passes the input's buffer for that output.
  std::vector<std::pair<int, int>> updates;
  /// Built with EmitOptions::fastMath and calling a helper it changes.
  bool approximate = false;
  /// Its one reduction (a layer norm) runs in ATen's own order, so its
  /// output should be bit-identical to eager's (EmitOptions::atenOrderNorms;
  /// kb-verify's eager_mismatches confirms it).
  bool atenOrder = false;
  /// Its reductions are maxima, minima or their indices (max pools
  /// included), which every order computes alike, and no approximate
  /// helper is used: bit-identical to eager, as pointwise kernels are.
  bool orderFree = false;
  /// Split row kernels: bytes of zeroed scratch (the grid barrier and the
  /// partial results of each pass), passed as the last parameter `ws`; the
  /// kernel is launched cooperatively (every block resident at once).
  int64_t workspaceBytes = 0;
  bool gridSync = false;
  int blocksPerSM = 1; // gridSync: the grid is sm_count * blocksPerSM
  /// Otherwise the launch bound's blocks per SM (0: none), capping the
  /// registers ptxas may spend on a thread's row.
  int minBlocksPerSM = 0;
};

struct EmitOptions {
  /// Approximate exp and division (2 ulp) in sigmoid, silu, mish and
  /// softmax (not in ATen's order, nor its cross-row or online forms), as
  /// torch.compile's Triton code computes them, instead of ATen's exact
  /// expf and IEEE division (docs/codegen.md, "Exact and fast math").
  bool fastMath = false;
  /// Chunks per row of split row kernels (0: the heuristic, splitChunks);
  /// for probes (`kb-rewrite codegen --split-chunks`), never for rewrites.
  int64_t splitChunks = 0;
  /// Threads per block, resident blocks per SM and unrolling of split row
  /// kernels (0: the measured defaults); for probes (`kb-rewrite codegen
  /// --split-shape`), never for rewrites.
  int splitBlock = 0, splitPerSM = 0, splitUnroll = 0;
  /// Lanes over 4 strided rows each, read as float4 (RowPlan::quad)
  /// wherever that applies, not only for norms and softmax over 128 rows or
  /// more (the measured default); for probes (`kb-rewrite codegen
  /// --split-quad`).
  bool splitQuad = false;
  /// Lanes over 4 strided rows: each trip's float4s all loaded before the
  /// first is used (0 or 1: one at a time, as the unrolled loop comes); for
  /// probes (`kb-rewrite codegen --split-ahead`).
  int splitAhead = 0;
  /// Lanes over 4 strided rows: the chunks' partials a thread folds per
  /// unrolled trip, in a loop whose trips nvcc can count (0: one trip at a
  /// time, its test `live && t < chunks`); for probes (`kb-rewrite codegen
  /// --split-fold-unroll`).
  int splitFoldUnroll = 0;
  /// Lanes over rows: the chunks from which each row's partials are
  /// combined once, by a finalize phase behind a second grid barrier,
  /// rather than by every item after the first (0: 64; levit's batch norms
  /// over 49 chunks 8-16% faster folding in every item than at the old 16,
  /// run114); for probes (`kb-rewrite codegen --split-combine-once N`).
  int splitCombineOnceMin = 0;
  /// Split reductions over at most 32 strided rows that are one run of a
  /// contiguous input ([N, 7] over dim 0) read each item as flat float4s,
  /// a thread's 4 accumulators on fixed rows, instead of one float a lane
  /// (amin over dim 0 of [75353489, 7] 0.952 -> 0.731 ms, ATen 0.763,
  /// run114); false for probes (`kb-rewrite codegen --split-lane-rows`).
  bool splitFlat = true;
  /// Flat split plans also for per-element outputs (softmax over dim 0 of
  /// [N, 7], a batch norm of few channels), several passes, online pairs
  /// and shifted moments: the thread's 4 rows' statistics handed over
  /// through shared memory (run117, H100: a softmax over dim 0 of
  /// [300007, 7] 0.0535 -> 0.0396 ms, a batch norm of 5 channels 0.0336 ->
  /// 0.0232); false for probes (`kb-rewrite codegen --split-lane-outputs`).
  bool splitFlatOutputs = true;
  /// Lanes over 4 strided rows: an item's block combines one row and
  /// accumulator at a time (two barriers each; the form before session 56)
  /// instead of all at once (three barriers, the same bits); for probes
  /// (`kb-rewrite codegen --split-serial-combine`).
  bool splitSerialCombine = false;
  /// Lanes over strided rows in whole items (one chunk a row): each
  /// thread holds its elements of the item's rows in registers (at most
  /// 32) from the first pass to the outputs instead of reading them again
  /// each pass; for probes (`kb-rewrite codegen --split-item-registers`).
  bool splitItemRegisters = false;
  /// Lanes over 4 strided rows: the rows' shift k0 and finalized
  /// statistics loaded as one vector a lane (its 4 rows are contiguous)
  /// instead of 4 scalars 4 lanes apart (6-7% on levit's batch norms,
  /// run112); false for probes (`kb-rewrite codegen --split-row-scalars`).
  bool splitRowVectors = true;
  /// float4s each thread of a pointwise kernel takes, all loaded before the
  /// first is computed (0 or 1: one, the measured default: a block per 256
  /// float4s reached copy bandwidth); for probes (`kb-rewrite codegen
  /// --pointwise-vectors`).
  int pointwiseVectors = 0;
  /// Grid-synchronised kernels: the barrier's last arrival resets its
  /// count and opens the next generation with one 8-byte store instead
  /// of an exchange, a fence and an increment (0.4-1 us a barrier, every
  /// levit batch norm 2-7% faster, run114); false for probes (`kb-rewrite
  /// codegen --split-barrier-exchange`).
  bool splitBarrierStore = true;
  /// Outputs per thread of one-thread-per-output kernels (poolings,
  /// reductions of strided elements), 0: the default; for probes
  /// (`kb-rewrite codegen --outputs-per-thread`).
  int outputsPerThread = 0;
  /// Threads per block of row kernels that stream long rows (one block a
  /// row, not held in registers), 0: the default; for probes (`kb-rewrite
  /// codegen --row-block`).
  int rowBlock = 0;
  /// Longest rows a block-per-row kernel holds in registers (0: 2048); for
  /// probes (`kb-rewrite codegen --register-row-max`), never for rewrites.
  int registerRowMax = 0;
  /// Longest strided rows one thread holds in registers when it reads them
  /// more than once (0: kThreadRegisterRowMax, 128); for probes
  /// (`kb-rewrite codegen --thread-row-max`), never for rewrites.
  int threadRowMax = 0;
  /// Norm statistics as divisions by the row length and 1 / sqrt (the
  /// form before session 32) instead of products by its reciprocal and
  /// rsqrt; for probes (`kb-rewrite codegen --division-stats`), never for
  /// rewrites.
  bool divisionStats = false;
  /// Contiguous rows of at most 16 elements read by one thread each (the
  /// form before session 33) instead of a group of lanes each; for probes
  /// (`kb-rewrite codegen --thread-short-rows`), never for rewrites.
  bool threadShortRows = false;
  /// Contiguous rows of at most 16 scalars read by lane groups straight
  /// from global memory (the form before session 36) instead of staged
  /// through shared memory one thread a row; for probes (`kb-rewrite
  /// codegen --lane-short-rows`), never for rewrites.
  bool laneShortRows = false;
  /// Lane-group rows store a per-element output kept transposed
  /// (consecutive rows adjacent) through a shared-memory tile of the
  /// block's rows instead of one float per sector (mixer_b16's residual
  /// `add -> layer_norm` 0.106 -> 0.063 ms, run112); false for probes
  /// (`kb-rewrite codegen --direct-transposed-stores`).
  bool stageTransposedStores = true;
  /// Pointwise regions whose outputs are stored both row-major and with
  /// the last two dims swapped (ResMLP's transposed residual stream beside
  /// the Affine norm a channel linear reads) run in 32 x 32 tiles through
  /// shared memory (TiledTranspose.cpp); false for probes (`kb-rewrite
  /// codegen --no-tiled-transposes`): the float4 kernel.
  bool tileTransposes = true;
  /// Longest rows a block-per-row kernel stages in shared memory (each
  /// thread's elements once, the prologue evaluated once) when they are
  /// too long for registers; 0: the default (layer norms up to 11776
  /// elements, nothing else). For probes (`kb-rewrite codegen
  /// --shared-row-max`).
  int sharedRowMax = 0;
  /// Layer norms (float32; rows of a multiple of 4, or others up to 8192)
  /// computed in ATen's own order: its vectorized or RowwiseMoments kernel's
  /// float Welford, thread layout and combine tree, so the result is
  /// ATen's to the bit; softmax over a last dim of at most 1024 elements
  /// as ATen's warp softmax (AtenSoftmax.cpp). Slower than the
  /// default double statistics on short rows; rewrite asks for it where
  /// the numerics policy would otherwise keep the norm in ATen (a step or
  /// singular op after it). `kb-rewrite codegen --aten-order-norms`.
  bool atenOrderNorms = false;
  /// Row groups a warp of lane-group row kernels (rows of up to 1024 held in
  /// registers) takes in one unrolled trip of its loop, the grid divided
  /// as much, so several rows' loads are in flight before the first
  /// row's shuffles (0 or 1: one, the default). For probes (`kb-rewrite
  /// codegen --group-unroll`).
  int groupUnroll = 0;
  /// Lanes per row of lane-group row kernels reading float4 (a power of two
  /// up to 32) instead of the default (one float4 a lane up to 32 lanes, up
  /// to four a lane over many rows of 65-256 scalars); for probes
  /// (`kb-rewrite codegen --vector-lanes`), never for rewrites.
  int vectorLanes = 0;
  /// Elements each thread of ATen's 512-thread RowwiseMoments block (layer
  /// norms over odd rows longer than 8192) loads before folding them in
  /// order, and outputs it computes before storing them (0: the default;
  /// 1: one at a time). For probes (`kb-rewrite codegen --moments-batch`).
  int momentsBatch = 0;
};

/// Emits CUDA for an outlined kernel: pointwise chains, reductions, softmax,
/// norms and poolings with pointwise ops before and after them (float32,
/// static shapes). Anything else gives an error naming what is not
/// generated yet.
llvm::Expected<EmittedKernel> emitKernel(KernelOp kernel,
                                         const EmitOptions &options = {});

/// The bytes the kernel's inputs and outputs hold, each in its own element
/// type (the report's region bytes, the job's watchdog).
int64_t kernelBytes(const EmittedKernel &k);

/// The kb-verify job (docs/verify.md) for an emitted kernel.
std::string verifyJobJson(const EmittedKernel &k);

} // namespace kb

#endif
