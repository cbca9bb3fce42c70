//===- ValueRange.h - Bounds of a value's float32 results ------*- C++ -*-===//
//
// The numerics rules keep a sum, norm or softmax in ATen when its result
// reaches a step op, because a last-bit difference can flip the step. Some
// steps cannot flip whatever their input's last bits: `div(hardtanh(relu(x),
// -1.1, 0.54), |p| + 1, rounding_mode='trunc')` is 0 everywhere. These
// bounds come from the ops between the reduction and the step alone
// (clamps, activations of bounded range, arithmetic on them), so they hold
// for any value the reduction rounds to.
//
//===----------------------------------------------------------------------===//
#ifndef KB_TRANSFORMS_VALUERANGE_H
#define KB_TRANSFORMS_VALUERANGE_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace kb {

/// A closed interval every float32 element of a value lies in (NaN aside:
/// a NaN is a NaN in ATen's kernels and in generated ones alike). Bounds
/// are float32 values; -inf / +inf where nothing is known.
struct Interval {
  double lo, hi;
  static Interval all();
  bool isAll() const;
};

/// Bounds of `v`'s elements from the ops that compute it (none known: all).
Interval valueRange(mlir::Value v);

/// Whether step op `op` (a KB_STEP_OP row) gives the same result for every
/// input in the ranges of its operands, so that no last-bit difference
/// upstream can change it.
bool stepCannotFlip(mlir::Operation *op);

} // namespace kb

#endif // KB_TRANSFORMS_VALUERANGE_H
