//===- OpUtils.h - Helpers shared by the kb passes --------------*- C++ -*-===//
#ifndef KB_TRANSFORMS_OPUTILS_H
#define KB_TRANSFORMS_OPUTILS_H

#include "kb/IR/KbDialect.h"
#include "kb/Transforms/IndexMaps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <optional>

namespace kb {

/// Numeric value of a kb.constant (int, float, bool or a one-number tensor
/// literal such as `{2}`).
std::optional<double> getConstantNumber(mlir::Value v);
std::optional<bool> getConstantBool(mlir::Value v);
std::optional<llvm::SmallVector<int64_t>> getConstantIntList(mlir::Value v);
bool isNone(mlir::Value v);
/// kb.constant ops as the importer writes them (f64 numbers, i64 ints, i1
/// bools, None) and a kb.list of i64 constants, built where `b` inserts.
mlir::Value makeF64(mlir::OpBuilder &b, mlir::Location loc, double v);
mlir::Value makeI64(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value makeBool(mlir::OpBuilder &b, mlir::Location loc, bool v);
mlir::Value makeNone(mlir::OpBuilder &b, mlir::Location loc);
mlir::Value makeI64List(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<int64_t> values);
/// add.Tensor(x, y, alpha = 1) of result type `type`, kind broadcast: a
/// bias moved out of a GEMM or convolution into its epilogue.
mlir::Value makeBroadcastAdd(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Type type, mlir::Value x, mlir::Value y);
/// kb.constant, a kb.list of constants, or a kb.parameter: values a kernel
/// can rebuild instead of taking as an input.
bool isConstantLike(mlir::Value v);

/// Whether `v` is the same on every call of a rewritten forward whose
/// input shapes the runtime guards: its ops read no graph input or
/// parameter except through its shape (size, dim, device, dtype), and none
/// is random, uninitialised (empty) or in place. transformers' traced
/// attention masks (`ones(input.size())` then expand, 1 - m, masked_fill)
/// are such values.
bool isGuardedConstant(mlir::Value v);

/// The pattern kind of an op: the `kind` attribute written by --kb-classify
/// when present, otherwise computed from the op-semantics table.
OpKind getKind(mlir::Operation *op);
/// Computes the kind of a kb.aten op from the table and its operands.
OpKind computeKind(AtenOp op);

/// An aten op whose kind (elementwise, broadcast, reduction) lets it join
/// an anchor's epilogue region.
bool isEpilogueOp(mlir::Operation *op);

/// True when `user` may write into `v` (an in-place aten op on its first
/// operand, or an unknown in-place op).
bool mutatesOperand(mlir::Operation *user, mlir::Value v);
bool hasMutatingUse(mlir::Value v);

/// "aten::relu_" style display name of a kb.aten/kb.opaque op.
std::string displayName(mlir::Operation *op);

/// Marks a `contiguous` that kb-sink-views put after a pointwise op reading
/// a strided tensor: pointwise (an identity on values) so that it joins the
/// op's region, where the kernel writes row-major anyway.
constexpr llvm::StringLiteral kRowMajorCopyAttr = "kb.row_major_copy";

/// On a kb.kernel: the inputs kb-stream-layouts made row-major where eager
/// has another layout (the runtime copies such an input to row-major when
/// its producer ran its ATen ops, rather than fail the guard).
constexpr llvm::StringLiteral kRelaidInputsAttr = "kb.relaid";

/// Bytes of a statically shaped tensor value; 0 for anything else.
int64_t tensorBytes(mlir::Type t);

/// The traced strides a tensor type carries (the importer's encoding of a
/// layout other than row-major), or nullopt where it has none or an
/// encoding that is not non-negative strides of its rank.
std::optional<llvm::SmallVector<int64_t>>
encodedStrides(mlir::RankedTensorType t);

/// Strides that address `shape` in row-major order (those of size-1 dims,
/// which never move an address, aside).
bool isRowMajorStrides(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> strides);

/// Row-major: no traced strides, or traced strides that are row-major's.
bool isRowMajorType(mlir::RankedTensorType t);

/// Traced strides that are not row-major's: a tensor eager copies when a
/// reshape, flatten or contiguous needs it row-major.
bool hasStridedLayout(mlir::RankedTensorType t);

/// Strides that address `shape` row-major with its last two dims swapped
/// ([.., N, C] laid out as [.., C, N]: PatchEmbed's transposed residual
/// stream), size-1 dims aside; false below rank 2.
bool isSwappedLastTwoStrides(llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> strides);

/// The shortest last two dims the code generator's tiled pointwise kernel
/// takes (TiledTranspose.cpp; kb-gemm-operand-layouts relies on it).
constexpr int64_t kTiledTransposeMinDim = 16;

/// A traced layout that is row-major with the last two dims swapped, both
/// at least kTiledTransposeMinDim long (what the tiled kernel and a row
/// kernel's staged stores write at full speed).
bool isTileableTranspose(mlir::RankedTensorType t);

/// `t` without its traced layout (row-major), or (rank 2 or more) with the
/// layout that makes its last-two-dims transpose row-major.
mlir::RankedTensorType rowMajorType(mlir::RankedTensorType t);
mlir::RankedTensorType swappedLastTwoType(mlir::RankedTensorType t);

/// A kernel with a reduction over its input's last dim only (a layer norm
/// over one dim, a softmax or sum over dim -1): a row kernel, which reads
/// and writes rows contiguously when they are row-major and stages at most
/// one output stored transposed (lib/CodeGen/TransposedStores.cpp).
bool isLastDimRowKernel(KernelOp k);

/// The module's kernels launched exactly once, by symbol: a pass may change
/// such a kernel's argument or result layouts with its one launch's.
llvm::StringMap<KernelOp> kernelsLaunchedOnce(mlir::ModuleOp module);

/// Contiguous rows of at most this many elements a lane group of the code
/// generator's row kernels holds in registers (warp rows); longer rows take
/// a block each (lib/CodeGen/RowPlans.cpp). Region formation asks it too.
constexpr int64_t kLaneGroupRowMax = 1024;
/// Softmax rows of at most this many elements the code generator stages
/// as a block's tile (RowPlan::stagedTile; lib/CodeGen/RowPlan.h has the
/// measurements behind it).
constexpr int64_t kStagedSoftmaxRowMax = 16;
bool hasStaticShape(mlir::Type t);
/// A ranked tensor of a static shape and float32 elements.
bool isStaticF32(mlir::Value v);

/// A norm whose output is centred on 0 and scaled by 1 / its row's standard
/// deviation: training-mode batch norm, group, instance and layer norm
/// (eval-mode batch norm scales by the running statistics instead).
bool isCentringNorm(mlir::Operation *op);

/// A stage whose per-row statistics a cross-row kernel computes first: a
/// training batch norm (each channel's mean and rstd) or a softmax or
/// log_softmax (each row's max and sum of exponentials). form-regions joins
/// a reduction over other rows after it; the code generator plans it.
bool isCrossRowFirst(mlir::Operation *op);

/// The row length of a layer norm over the last dim alone of a static
/// input (normalized_shape of one dim), 0 for anything else: a stage whose
/// statistics a row kernel can compute from the row it holds before a
/// final stage over the same rows (a softmax, a layer norm, a reduction
/// over the last dim), never in a phase over other rows.
int64_t sameRowFirstRow(mlir::Operation *op);

/// Visits the ops that use `roots`, directly or through other ops, until
/// `found` returns true for one. Host ops (aten::size, dim, numel) read
/// shapes, not values: the walk does not go through them.
void firstDownstream(mlir::ValueRange roots,
                     llvm::function_ref<bool(mlir::Operation *)> found);

/// aten::_convolution, which cuDNN runs in TF32 by default.
bool isConvolution(mlir::Operation *op);

/// A pooling op some of whose input elements lie in more than one window
/// (a 3x3 window at stride 1 or 2; adaptive windows over a dim its output
/// does not divide), or whose windows are not constant. False for other
/// ops.
bool poolWindowsOverlap(mlir::Operation *op);

/// Whether a value computed from `op`'s results (firstDownstream's walk)
/// reaches a convolution.
bool reachesConvolution(mlir::Operation *op);

/// A KB_STEP_OP row (comparisons, rounding, sign: results jump); true
/// division (div with rounding_mode None) is continuous.
bool isStepOperation(mlir::Operation *op);
/// A step op whose result a last-bit difference of its inputs can change:
/// isStepOperation, unless its operands' value ranges keep it constant
/// (ValueRange.h: `trunc` of a value clamped to [0, 0.54]).
bool isFlippableStep(mlir::Operation *op);
/// A KB_SINGULAR_OP row (log, rsqrt, ...: unbounded slope near 0).
bool isSingularOperation(mlir::Operation *op);
/// An op that matches ATen only to a few ulps: sums, means, variances,
/// norms, softmax, logsumexp. Max/min reductions and pooling are exact.
bool isInexactReduction(mlir::Operation *op);
/// A layer norm kb-rewrite's code generator computes in ATen's own order
/// (float32 rows up to 2^24 elements: a multiple of 4, ATen's vectorized
/// CUDA kernel; others, its RowwiseMoments kernel; measured bit-identical
/// to eager's except RowwiseMoments rows over 8192), so that the numerics
/// rules need not keep it in ATen (docs/correctness.md, "Statistics in
/// ATen's order"). kb-verify's eager_mismatches confirms each kernel.
bool isAtenOrderNorm(mlir::Operation *op);
/// A softmax or log_softmax the code generator computes as ATen's CUDA
/// kernels do (float32): its warp softmax over a last dim of at most 1024
/// elements (measured bit-identical to eager's), or its spatial kernel
/// over another dim (cunn_SpatialSoftMaxForward: one thread folds each
/// row in order, or the dim's threads meet in its shared-memory tree).
bool isAtenOrderSoftmax(mlir::Operation *op);
/// The dims a reduction's or softmax's `dim` argument names over an input
/// of `rank` (none, an empty list or absent: all), each in [0, rank),
/// sorted. A 0-d input takes dim 0 or -1 (ATen wraps scalars as rank 1).
/// An error, worded to follow the op's name, when the argument is not
/// constant, or when a dim is out of range or named twice (ATen raises:
/// the op stays ATen's, so the rewritten model raises as the original).
llvm::Expected<llvm::SmallVector<int64_t>> reductionDims(mlir::Operation *op,
                                                         int64_t rank);
/// reductionDims, nullopt on its errors and for a 0-d input.
std::optional<llvm::SmallVector<int64_t>> reducedDims(mlir::Operation *op,
                                                      int64_t rank);
/// A sum or mean over the trailing dims of a static float32 tensor in the
/// shapes ATen's reduce kernel runs one CTA a row (AtenReduce.cpp): rows of
/// 129-130560 elements, a multiple of 4 (longer ones with more than 528
/// rows), at least 16 rows, fewer than 2^31 elements; the rows and their
/// length in `rows` / `cols` when given.
bool isAtenReduceShape(mlir::Operation *op, int64_t *rows = nullptr,
                       int64_t *cols = nullptr);
/// ATen's reduce kernel gives a warp a row up to this length (its
/// values_per_thread over 32 lanes below 256); beyond, a block of 512.
constexpr int64_t kAtenReduceWarpMax = 8160;
/// isAtenReduceShape: the code generator's kernel then rounds as eager's
/// sum does (every output eager's bits on torch 2.11: rows a warp sums in
/// run69 and run70, rows a block sums in the order run76's probe found,
/// bench/probes/aten_sum_order.py).
bool isAtenOrderSum(mlir::Operation *op);
/// isAtenOrderNorm, isAtenOrderSoftmax or isAtenOrderSum: a reduction whose
/// kernel can round as ATen's, so that the numerics rules need not keep it in
/// ATen.
bool hasAtenOrder(mlir::Operation *op);
/// Whether a value computed from `op`'s results reaches a step op that can
/// flip (isFlippableStep).
bool reachesStepOp(mlir::Operation *op);
/// Whether a value computed from `op`'s results reaches a singular op.
bool reachesSingularOp(mlir::Operation *op);

} // namespace kb

#endif // KB_TRANSFORMS_OPUTILS_H
