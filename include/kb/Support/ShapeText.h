//===- ShapeText.h - A shape as messages and prompts print it ---*- C++ -*-===//
#ifndef KB_SUPPORT_SHAPETEXT_H
#define KB_SUPPORT_SHAPETEXT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace kb {

/// "[2, 3, 4]" (as torch prints sizes).
inline std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace kb

#endif // KB_SUPPORT_SHAPETEXT_H
