//===- TiledTranspose.h - Pointwise regions over two layouts ----*- C++ -*-===//
//
// The tiled form of a pointwise kernel whose outputs are stored row-major
// and with their last two dims swapped (TiledTranspose.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_TILEDTRANSPOSE_H
#define KB_LIB_CODEGEN_TILEDTRANSPOSE_H

#include "RegionEmitter.h"

#include <optional>
#include <vector>

namespace kb::codegen {

/// Per tensor of a pointwise region, how the tiled kernel reaches it.
struct TiledLayouts {
  /// Full-size inputs stored row-major or with the last two dims swapped;
  /// Other: smaller (broadcast) operands, read where their index puts them.
  enum Input { RowMajor, Transposed, Other };
  std::vector<Input> inputs;
  /// Per output: stored with the last two dims swapped.
  std::vector<bool> outputs;
};

/// The layouts when the region's outputs come in both layouts, its
/// full-size inputs in those two only, the last two dims are at least 16 and
/// the staged tensors fit the static shared memory; nullopt otherwise (the
/// float4 kernel).
std::optional<TiledLayouts> tiledTransposeLayouts(RegionEmitter &e,
                                                  YieldOp yield);

/// The kernel: a block per 32 x 32 tile of the last two dims.
llvm::Expected<EmittedKernel>
emitTiledTranspose(RegionEmitter &e, YieldOp yield, const TiledLayouts &l);

} // namespace kb::codegen

#endif
