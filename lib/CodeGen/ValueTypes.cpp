//===- ValueTypes.cpp - How region values are typed and stored ------------===//

#include "ValueTypes.h"

#include "kb/Transforms/OpUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

std::string codegen::cString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

bool codegen::isF32Tensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getElementType().isF32() &&
         (!rt.getEncoding() || encodedStrides(rt));
}

std::optional<Storage> codegen::floatStorage(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape() || (rt.getEncoding() && !encodedStrides(rt)))
    return std::nullopt;
  Type e = rt.getElementType();
  if (e.isF32())
    return Storage::F32;
  if (e.isF16())
    return Storage::F16;
  if (e.isBF16())
    return Storage::BF16;
  return std::nullopt;
}

bool codegen::isHalfTensor(Type t) {
  std::optional<Storage> s = floatStorage(t);
  return s && *s != Storage::F32;
}

bool codegen::hasHalfValues(Block &body) {
  for (BlockArgument a : body.getArguments())
    if (isHalfTensor(a.getType()))
      return true;
  for (Operation &op : body)
    for (Type t : op.getResultTypes())
      if (isHalfTensor(t))
        return true;
  for (Value v : body.getTerminator()->getOperands())
    if (isHalfTensor(v.getType()))
      return true;
  return false;
}

const char *codegen::storageDtype(Storage s) {
  switch (s) {
  case Storage::F32:
    return "float32";
  case Storage::F16:
    return "float16";
  case Storage::BF16:
    return "bfloat16";
  }
  llvm_unreachable("unknown Storage");
}

const char *codegen::halfSuffix(Storage s) {
  return s == Storage::F16 ? "f16" : "bf16";
}

std::string codegen::fromStorage(Storage s, llvm::StringRef expr) {
  if (s == Storage::F32)
    return expr.str();
  return "kb::" + std::string(halfSuffix(s)) + "_f(" + expr.str() + ")";
}

std::string codegen::toStorage(Storage s, llvm::StringRef expr) {
  if (s == Storage::F32)
    return expr.str();
  return "kb::f_" + std::string(halfSuffix(s)) + "(" + expr.str() + ")";
}

std::string codegen::roundToStorage(Storage s, llvm::StringRef expr) {
  if (s == Storage::F32)
    return expr.str();
  return "kb::rn_" + std::string(halfSuffix(s)) + "(" + expr.str() + ")";
}

bool codegen::isBoolTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getElementType().isInteger(1) &&
         (!rt.getEncoding() || encodedStrides(rt));
}

const char *codegen::argElementType(Value arg) {
  if (isHalfTensor(arg.getType()))
    return "unsigned short";
  return isBoolTensor(arg.getType()) ? "bool" : "float";
}

SmallVector<int64_t> codegen::tracedStrides(Value v) {
  auto rt = dyn_cast<RankedTensorType>(v.getType());
  if (!rt || !rt.hasStaticShape() || !rt.getEncoding())
    return {};
  auto strides = encodedStrides(rt);
  if (!strides)
    return {};
  // Strides of size-1 dims never move an address: a layout that differs
  // from row-major only there is row-major.
  return isRowMajorStrides(rt.getShape(), *strides) ? SmallVector<int64_t>()
                                                    : *strides;
}

bool codegen::isContiguousArg(Value v) { return tracedStrides(v).empty(); }

bool codegen::isI64Tensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getElementType().isInteger(64) &&
         !rt.getEncoding();
}

ArrayRef<int64_t> codegen::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

std::string codegen::replaceAll(std::string text, llvm::StringRef key,
                                llvm::StringRef value) {
  for (size_t p = 0; (p = text.find(key.str(), p)) != std::string::npos;
       p += value.size())
    text.replace(p, key.size(), value.str());
  return text;
}
