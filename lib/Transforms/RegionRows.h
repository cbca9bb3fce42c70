//===- RegionRows.h - The groups FormRegions builds and their rows -*- C++
//-*-===//
//
// Private to lib/Transforms: a group of ops that becomes one region
// (FormRegions.cpp), and the questions the pass asks about a group's
// reductions and their rows, none of which needs the pass's state.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_TRANSFORMS_REGIONROWS_H
#define KB_LIB_TRANSFORMS_REGIONROWS_H

#include "kb/IR/KbDialect.h"
#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace kb::formregions {

using mlir::ArrayRef;
using mlir::Operation;
using mlir::SmallVector;
using mlir::Value;

/// Reductions broadcast back (broadcastsBack) leave at least kFewRows kept
/// elements or rows shorter than kLongRow.
constexpr int64_t kFewRows = 16384, kLongRow = 4096;

struct Group {
  int id;
  Operation *anchor = nullptr;
  // Members, the anchor first (materialize orders them by the block).
  SmallVector<Operation *> ops;
  // The group runs in stages separated by reductions. `stage` holds the ops
  // whose results live in the current iteration space `shape`.
  ArrayRef<int64_t> shape;
  llvm::SmallPtrSet<Operation *, 8> stage;
  Operation *lastReduction = nullptr;
  // The stage before the group's first shape-changing reduction, which a
  // pointwise op may combine with the reduction's keepdim result
  // (`x - x.mean(1, keepdim=True)`): the row kernel writes it per element
  // of the row once the row's result is known.
  llvm::SmallPtrSet<Operation *, 8> rowStage;
  // That reduction: only it is broadcast back, over its input's shape.
  Operation *firstReduction = nullptr;
  // Reductions of any kind in the group (a softmax or norm after an anchor
  // or a pointwise op is one without being firstReduction).
  int reductions = 0;
  bool rebroadcast = false;
  // Once broadcast back: the reduction's result shape, whose pointwise ops
  // may still join (their values are the row's at every element).
  ArrayRef<int64_t> reducedShape;
};

ArrayRef<int64_t> resultShape(Operation *op);

bool allResultsStatic(Operation *op);

/// Tensor operand a reduction reduces (its first tensor operand).
Value reducedInput(Operation *op);

/// A tensor constant of rank >= 1 (a plain tensor attribute the tracer
/// baked in): kernels render constants as literals, so an op reading one
/// stays in ATen and its result reaches a region as an input.
bool readsTensorConstant(Operation *op);

std::string unfusedReason(Operation *op, OpKind kind);

/// `op`, a norm or softmax, may follow `g`'s only reduction, a training
/// batch norm or a softmax, over other rows: the kernel computes the
/// first's statistics in a first phase and evaluates it per element in
/// the second (CrossRow.cpp), instead of writing it for `op` to read
/// back.
bool crossRow(Operation *op, const Group &g);

/// The row length of a softmax over the last dim of a static input; 0 for
/// anything else.
int64_t lastDimSoftmaxRow(Operation *op);

/// Whether `a` normalises or reduces over the last dim alone, of `len`
/// elements: a softmax over it, a layer norm of that normalized shape, or
/// a plain reduction over that dim.
bool overLastDim(AtenOp a, int64_t len);

/// A plain reduction (sum, mean, var, amax, argmax, ...) over one run of
/// adjacent dims of more than 16 elements: the row kernels take it
/// (trailing rows, or columns), which evaluate a cross-row first stage
/// from its statistics; fewer elements per output go to one thread per
/// output, which does not.
bool rowReduction(AtenOp a);

/// A plain float reduction over adjacent dims whose result keeps them as
/// size-1 dims: its value at any element of a row is the row's.
bool keepdimRows(Operation *red);

/// `op`'s value reaches a reduction through pointwise ops of its shape
/// (`div -> xlogy -> group_norm`): broadcast back into the first
/// reduction's region, the chain could not take the second and would be
/// written for it; left to the second's region, the first reduction's
/// small result is all that is written.
bool feedsReduction(Operation *op);

/// `u` is a pointwise op that reads `red`'s result, directly or through
/// pointwise ops of its shape, and is either over the rows of `red` or of
/// the result's shape with only such users: it will join `red`'s group
/// (broadcastsBack, then as a member of the result's stage).
bool rejoins(Operation *u, Operation *red, int depth = 0);

} // namespace kb::formregions

#endif // KB_LIB_TRANSFORMS_REGIONROWS_H
