//===- ChannelsLast.h - Pointwise kernels over channels-last data -*- C++ -*-===//
//
// cuDNN runs NCHW convolutions by transposing to NHWC and back (measured on
// the H200: 2.67 ms vs 1.60 ms for L2-1's conv). A pointwise epilogue does
// not care about the layout as long as every operand is permuted alike, so
// the channels-last variant of a pointwise region is the same kernel spec
// over permuted shapes: the conv output read as a contiguous [N, H, W, C]
// (or [N, D, H, W, C]) tensor, a [C, 1, 1] bias as [C].
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_CHANNELSLAST_H
#define KB_CODEGEN_CHANNELSLAST_H

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
};

/// The channels-last variant of `kernel`, cloned into `scratch`; nullopt
/// unless the kernel is pointwise (elementwise and broadcast ops only) over
/// the rank-4/5 output of a convolution.
std::optional<ChannelsLastVariant> makeChannelsLastVariant(KernelOp kernel,
                                                           mlir::ModuleOp scratch);

} // namespace kb

#endif // KB_CODEGEN_CHANNELSLAST_H
