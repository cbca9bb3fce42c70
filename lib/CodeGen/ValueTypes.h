//===- ValueTypes.h - How region values are typed and stored ----*- C++ -*-===//
//
// What the emitters ask of a value's type: static float32 / 16-bit / bool /
// int64 tensors, their storage and traced strides, and the conversions
// between a stored element and the float kernels compute in.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_VALUETYPES_H
#define KB_LIB_CODEGEN_VALUETYPES_H

#include "kb/IR/KbDialect.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kb::codegen {

std::string cString(llvm::StringRef s);
/// A static float32 tensor, row-major or with traced strides.
bool isF32Tensor(mlir::Type t);
/// How a float tensor is stored. Kernels compute in float (ATen's opmath
/// type for all three) and convert at loads and stores.
enum class Storage { F32, F16, BF16 };
/// The storage of a static float32, float16 or bfloat16 tensor (traced
/// strides allowed); none for anything else.
std::optional<Storage> floatStorage(mlir::Type t);
/// A static float16 or bfloat16 tensor.
bool isHalfTensor(mlir::Type t);
/// Whether any block argument, op result or output of `body` is one.
bool hasHalfValues(mlir::Block &body);
/// The kb-verify dtype name ("float32", "float16", "bfloat16").
const char *storageDtype(Storage s);
/// "f16" or "bf16": the suffix of the half prelude's helpers (kb::f_f16,
/// kb::ld4_bf16, ...) for a 16-bit storage.
const char *halfSuffix(Storage s);
/// `expr`, an element as stored, as a float; a float as stored; and a
/// float rounded to the storage type (eager stores each op's result).
std::string fromStorage(Storage s, llvm::StringRef expr);
std::string toStorage(Storage s, llvm::StringRef expr);
std::string roundToStorage(Storage s, llvm::StringRef expr);
/// A static bool tensor (a mask a region reads: `const bool*`, each element
/// read as 0.f or 1.f, never as float4s).
bool isBoolTensor(mlir::Type t);
/// The C type of a kernel argument's elements: "bool" or "float".
const char *argElementType(mlir::Value arg);
/// The traced strides of a value whose layout is not row-major (the
/// importer's encoding; a transposed view), empty for a row-major one.
/// Kernels read strided arguments through them and write strided outputs
/// through them (dense permutations only).
llvm::SmallVector<int64_t> tracedStrides(mlir::Value v);
/// A value without traced strides: float4 and raw-offset reads apply.
bool isContiguousArg(mlir::Value v);
/// A static int64 tensor (argmax / argmin results).
bool isI64Tensor(mlir::Type t);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

/// `text` with every `key` replaced by `value` (recipe templates' {x}).
std::string replaceAll(std::string text, llvm::StringRef key,
                       llvm::StringRef value);

} // namespace kb::codegen

#endif // KB_LIB_CODEGEN_VALUETYPES_H
