//===- ChannelsLast.h - Pointwise kernels over channels-last data -*- C++
//-*-===//
//
// cuDNN runs NCHW convolutions by transposing to NHWC and back (measured on
// the H200: 2.67 ms vs 1.60 ms for L2-1's conv). A pointwise epilogue does
// not care about the layout as long as every operand is permuted alike, so
// the channels-last variant of a pointwise region is the same kernel spec
// over permuted shapes: the conv output read as a contiguous [N, H, W, C]
// (or [N, D, H, W, C]) tensor, a [C, 1, 1] bias as [C].
//
// A region that reduces or pools (its outputs smaller than the conv's) gets
// a "reads" variant instead: the same ops, the conv output arriving as
// [N, H, W, C] through a `permute` back to NCHW, every other operand and
// every output as before. The emitter then maps threads so that
// neighbouring lanes read neighbouring channels (KernelEmitter.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KB_TRANSFORMS_CHANNELSLAST_H
#define KB_TRANSFORMS_CHANNELSLAST_H

#include "kb/IR/KbDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <vector>

namespace kb {

struct ChannelsLastVariant {
  KernelOp kernel; // a clone named <name>_cl, inside the scratch module
  std::vector<int64_t> perm; // NCHW -> NHWC (rank 4) or NCDHW -> NDHWC
  /// Per kernel input: its original and its permuted shape.
  std::vector<std::vector<int64_t>> inputShapes, permutedShapes;
  /// Only input 0 is permuted (read through a `permute`); outputs keep
  /// their layout.
  bool readsOnly = false;
};

/// A norm with running statistics (batch_norm in eval mode): pointwise, but
/// it indexes its per-channel operands by dim 1, so a variant shows it NCHW
/// data through a permute and back.
bool indexesChannelDim(mlir::Operation &op);

/// The channels-last variant of `kernel`, cloned into `scratch`; nullopt
/// unless the kernel's first input is the rank-4/5 output of a convolution
/// and the kernel is pointwise (elementwise and broadcast ops only), or
/// reduces and pools it.
std::optional<ChannelsLastVariant>
makeChannelsLastVariant(KernelOp kernel, mlir::ModuleOp scratch);

} // namespace kb

#endif // KB_TRANSFORMS_CHANNELSLAST_H
