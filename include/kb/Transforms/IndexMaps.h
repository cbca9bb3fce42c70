//===- IndexMaps.h - The parameters of index-map ops -----------*- C++ -*-===//
//
// Implemented in lib/Transforms/IndexMaps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KB_TRANSFORMS_INDEXMAPS_H
#define KB_TRANSFORMS_INDEXMAPS_H

#include "kb/IR/OpSemantics.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kb {

/// Where each element of an index-map op's result comes from in its input
/// (the table's IndexMap), read from the op's constant operands.
struct IndexMapParams {
  IndexMap map = IndexMap::None;
  /// Permute: the permutation; Roll: the rolled dims (empty: flattened).
  llvm::SmallVector<int64_t> dims;
  /// Roll: the shift of each rolled dim.
  llvm::SmallVector<int64_t> shifts;
  /// Pad: (before, after) pairs from the last dim backwards.
  llvm::SmallVector<int64_t> pads;
  /// Slice and Select: the dim; Slice: its first index and step; Select:
  /// the index.
  int64_t dim = 0, start = 0, step = 1, index = 0;
  /// Pad: the value outside the input.
  double value = 0;
};

/// The parameters of an index-map op (permute, transpose, view, reshape,
/// flatten, squeeze, unsqueeze, contiguous, clone, roll, slice, narrow,
/// select, constant pad), not in place, between static tensors of one
/// element type, neither mutated; nullopt where an operand the map needs
/// is not a constant (a size list is not needed: the traced result shape
/// is the view's), or a pad's mode is not "constant".
std::optional<IndexMapParams> indexMapOf(mlir::Operation *op);

/// An index-map op whose element i is its input's element i (the "flat"
/// map: view, reshape, flatten, squeeze, unsqueeze, contiguous, clone):
/// inside a region it moves no data, whatever its input's strides.
bool isFlatView(mlir::Operation *op);

} // namespace kb

#endif // KB_TRANSFORMS_INDEXMAPS_H
