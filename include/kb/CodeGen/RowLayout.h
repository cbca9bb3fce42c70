//===- RowLayout.h - How row kernels lay rows over lanes --------*- C++ -*-===//
//
// The two layout rules of the row kernels (RowKernels.cpp) that their
// shared-memory bank analysis rests on; unittests/CodeGen/TileLayoutTest.cpp
// checks them without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_ROWLAYOUT_H
#define KB_CODEGEN_ROWLAYOUT_H

#include <cstdint>

namespace kb::codegen {

/// Lanes per row in warp mode (and per channel row in tile mode): about 8
/// elements per lane, a power of two (so xor shuffles stay inside the
/// group), at most 32. Each lane keeps its ceil(cols / lanes) <= 32
/// elements in registers.
int64_t lanesPerRow(int64_t cols);

/// Tile mode's slab pitch for C channels and rows of W: C floats padded to
/// C = R (mod 32), R = 32 / lanesPerRow(W) channel rows per warp. Lane
/// (g, l) of a warp reads element l + L j of row g, bank (l R + g + const)
/// mod 32: all 32 lanes in different banks.
int64_t tilePitch(int64_t C, int64_t W);

} // namespace kb::codegen

#endif // KB_CODEGEN_ROWLAYOUT_H
