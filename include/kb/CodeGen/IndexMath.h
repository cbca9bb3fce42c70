//===- IndexMath.h - Index expressions of the emitted kernels --*- C++ -*-===//
//
// The emitters write index math as C++ text: the offset of an element
// given its linear index in another shape (broadcast operands, permuted
// and strided tensors, sub-spaces of a tensor's dims). Sizes are constants,
// so divisions are by constants; adjacent dims merge. With `narrow` (every
// tensor of the kernel has < 2^31 elements) the math is 32-bit: a 64-bit
// division by a constant costs several times the instructions of a 32-bit
// one. unittests/CodeGen/IndexMathTest.cpp evaluates these expressions.
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_INDEXMATH_H
#define KB_CODEGEN_INDEXMATH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kb::codegen {

int64_t product(llvm::ArrayRef<int64_t> s);
/// `idx` as an operand of `/` and `%`: parenthesised unless a name, cast
/// to unsigned for 32-bit index math.
std::string indexOperand(llvm::StringRef idx, bool narrow);

/// Offset of the element at linear (row-major) index `idx` of `shape` in
/// a tensor laid out with `strides`; dims that are runs of each other
/// merge, so a transposed [B, T, E] costs two divisions.
std::string stridedOffset(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> strides, llvm::StringRef idx,
                          bool narrow = false);

/// Offset into a tensor of shape `in` (row-major, broadcast to `space` by
/// numpy rules) of the element at linear index `idx` of `space`. Sizes are
/// constants, so the divisions are by constants.
/// With `narrow` (every tensor of the kernel has < 2^31 elements) the math
/// is 32-bit: a 64-bit division by a constant costs several times the
/// instructions of a 32-bit one.
std::string broadcastOffset(llvm::ArrayRef<int64_t> in,
                            llvm::ArrayRef<int64_t> space, llvm::StringRef idx,
                            bool narrow = false);

/// broadcastOffset from coordinates a loop already has: `coords[d]` names
/// the coordinate of dim d of `space` (empty: not known). Where the tensor
/// broadcasts over every dim whose coordinate is unknown, its offset needs
/// no division (a per-channel bias in a loop over (channel, position)
/// costs one multiply-add instead of a division and a modulo of the linear
/// index); nullopt otherwise.
std::optional<std::string> coordinateOffset(llvm::ArrayRef<int64_t> in,
                                            llvm::ArrayRef<int64_t> space,
                                            llvm::ArrayRef<std::string> coords,
                                            bool narrow = false);

/// Offset into the operand of `permute(x, perm)` (x of shape `in`, row-major)
/// of the element at linear index `idx` of the permuted shape. Dims adjacent
/// in both orders merge: NCHW indices into NHWC data cost three terms.
std::string permuteOffset(llvm::ArrayRef<int64_t> in,
                          llvm::ArrayRef<int64_t> perm, llvm::StringRef idx,
                          bool narrow = false);

/// Offset into the operand of `roll(x, shifts, dims)` (x of shape `shape`,
/// row-major) of the element at linear index `idx` of the result: along
/// each rolled dim of n, coordinate c reads (c - shift) mod n; with no
/// dims the flattened tensor rolls by shifts[0].
std::string rollOffset(llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> shifts,
                       llvm::ArrayRef<int64_t> dims, llvm::StringRef idx,
                       bool narrow = false);
/// Offset into the operand of a slice along `dim` (x of shape `in`,
/// row-major; the result of shape `out`) of the element at linear index
/// `idx` of the result: coordinate c of `dim` reads start + c * step.
std::string sliceOffset(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out,
                        int64_t dim, int64_t start, int64_t step,
                        llvm::StringRef idx, bool narrow = false);
/// Offset into the operand of `select(x, dim, index)` (x of shape `in`,
/// row-major) of the element at linear index `idx` of the result.
std::string selectOffset(llvm::ArrayRef<int64_t> in, int64_t dim, int64_t index,
                         llvm::StringRef idx, bool narrow = false);
/// The element at linear index `idx` of a constant pad of x (shape `in`,
/// row-major; the result of shape `out`; `pads` (before, after) pairs from
/// the last dim backwards, negative ones crop): {a condition, true where
/// the element is x's, and its offset in x, clamped into x elsewhere so
/// that a load there stays in bounds}. 64-bit math.
std::pair<std::string, std::string> padOffset(llvm::ArrayRef<int64_t> in,
                                              llvm::ArrayRef<int64_t> out,
                                              llvm::ArrayRef<int64_t> pads,
                                              llvm::StringRef idx);
/// Offset of linear index `idx` over the dims `dims` of a row-major tensor of
/// shape `shape` (the other dims held at 0). Adjacent dims merge.
std::string subspaceOffset(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> dims, llvm::StringRef idx,
                           bool narrow = false);
/// Offset into a row-major tensor of shape `out` of step `idx` of a walk
/// that takes its dims in channels-last order: `origins[k]` is the dim of
/// an NC... tensor that dim k of `out` comes from; the dim from 1 (the
/// channel) goes fastest, the others keep their order. A reduction over
/// dim 0 of [N, C, H, W] read as NHWC walks its [C, H, W] output as
/// (h, w, c), so neighbouring steps read neighbouring channels.
std::string channelsLastWalk(llvm::ArrayRef<int64_t> out,
                             llvm::ArrayRef<int64_t> origins,
                             llvm::StringRef idx);
/// An integer literal: `12u` when narrow, else `12LL`.
std::string intLit(int64_t v, bool narrow);

/// The widest window adaptive pooling cuts from a dim of `in` elements into
/// `out` (window q spans [floor(q in / out), ceil((q + 1) in / out))), in
/// constant time; 1 for sizes below 1.
int64_t widestAdaptiveWindow(int64_t in, int64_t out);

} // namespace kb::codegen

#endif // KB_CODEGEN_INDEXMATH_H
