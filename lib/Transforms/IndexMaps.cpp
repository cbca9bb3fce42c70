//===- IndexMaps.cpp - The parameters of index-map ops --------------------===//
//
// Where each element of a view, permute, roll, slice, select or constant
// pad comes from in its input, read once from the op's constant operands
// (the op table's IndexMap names the kind). kb-form-regions lets such ops
// join a stage (FormRegions' joinView); RegionEmitter::valueAt reads
// through them.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/OpUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace kb;

std::optional<IndexMapParams> kb::indexMapOf(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || aten.getInplace() || !aten.getInfo() ||
      aten.getInfo()->indexMap == IndexMap::None || op->getNumResults() != 1 ||
      aten.getArgs().empty())
    return std::nullopt;
  Value in = aten.getArgs()[0], out = op->getResult(0);
  auto it = dyn_cast<RankedTensorType>(in.getType());
  auto ot = dyn_cast<RankedTensorType>(out.getType());
  if (!it || !ot || !it.hasStaticShape() || !ot.hasStaticShape() ||
      it.getElementType() != ot.getElementType() || hasMutatingUse(in) ||
      hasMutatingUse(out))
    return std::nullopt;
  int64_t rank = it.getRank();
  auto arg = [&](StringRef name) { return aten.getArg(name); };
  auto intArg = [&](StringRef name) -> std::optional<int64_t> {
    Value v = arg(name);
    std::optional<double> n = v ? getConstantNumber(v) : std::nullopt;
    if (!n || *n != std::floor(*n))
      return std::nullopt;
    return static_cast<int64_t>(*n);
  };
  auto dimIn = [&](std::optional<int64_t> d) -> std::optional<int64_t> {
    if (!d || *d < -rank || *d >= rank)
      return std::nullopt;
    return *d < 0 ? *d + rank : *d;
  };
  IndexMapParams p;
  // Each dim of `dims` normalised into p.dims; false at one out of range.
  auto takeDims = [&](ArrayRef<int64_t> dims) {
    for (int64_t d : dims) {
      std::optional<int64_t> k = dimIn(d);
      if (!k)
        return false;
      p.dims.push_back(*k);
    }
    return true;
  };
  p.map = aten.getInfo()->indexMap;
  switch (p.map) {
  case IndexMap::None:
    return std::nullopt;
  case IndexMap::Flat:
    if (it.getNumElements() != ot.getNumElements())
      return std::nullopt;
    return p;
  case IndexMap::Permute: {
    StringRef name = aten.getName();
    if (name == "permute") {
      auto perm = getConstantIntList(arg("dims"));
      if (!perm || (int64_t)perm->size() != rank || !takeDims(*perm))
        return std::nullopt;
    } else {
      std::optional<int64_t> a = 0, b = rank > 1 ? 1 : 0;
      if (name != "t") {
        a = dimIn(intArg(name == "swapaxes" ? "axis0" : "dim0"));
        b = dimIn(intArg(name == "swapaxes" ? "axis1" : "dim1"));
      }
      if (!a || !b || (rank > 2 && name == "t"))
        return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        p.dims.push_back(d == *a ? *b : d == *b ? *a : d);
    }
    llvm::SmallVector<int64_t> seen(p.dims);
    llvm::sort(seen);
    for (int64_t d = 0; d < rank; ++d)
      if (seen[d] != d || ot.getShape()[d] != it.getShape()[p.dims[d]])
        return std::nullopt;
    return p;
  }
  case IndexMap::Roll: {
    auto shifts = getConstantIntList(arg("shifts"));
    auto dims = getConstantIntList(arg("dims"));
    if (!shifts || !dims || it.getShape() != ot.getShape() ||
        (dims->empty() ? shifts->size() != 1
                       : shifts->size() != dims->size()) ||
        !takeDims(*dims))
      return std::nullopt;
    p.shifts.assign(shifts->begin(), shifts->end());
    bool moves = false;
    for (auto [k, shift] : llvm::enumerate(p.shifts)) {
      int64_t n =
          p.dims.empty() ? it.getNumElements() : it.getShape()[p.dims[k]];
      moves |= n > 0 && shift % n != 0;
    }
    if (!moves)
      p.map = IndexMap::Flat;
    return p;
  }
  case IndexMap::Slice: {
    std::optional<int64_t> d = dimIn(intArg("dim"));
    if (!d || it.getRank() != ot.getRank())
      return std::nullopt;
    int64_t n = it.getShape()[*d];
    if (aten.getName() == "narrow") {
      std::optional<int64_t> s = intArg("start");
      if (!s)
        return std::nullopt;
      p.start = *s < 0 ? *s + n : *s;
    } else {
      // slice.Tensor: a None start is 0, a negative one counts from the
      // end, and it clamps into [0, n] as ATen does.
      Value s = arg("start");
      std::optional<int64_t> v =
          isNone(s) ? std::optional<int64_t>(0) : intArg("start");
      std::optional<int64_t> step = intArg("step");
      if (!v || !step || *step < 1)
        return std::nullopt;
      p.start = std::clamp<int64_t>(*v < 0 ? *v + n : *v, 0, n);
      p.step = *step;
    }
    p.dim = *d;
    for (int64_t k = 0; k < rank; ++k)
      if (k != *d && it.getShape()[k] != ot.getShape()[k])
        return std::nullopt;
    int64_t len = ot.getShape()[*d];
    if (p.start < 0 || (len > 0 && p.start + (len - 1) * p.step >= n))
      return std::nullopt;
    if (len == n && p.start == 0) // the whole dim (x[:, :H] of H rows)
      p.map = IndexMap::Flat;
    return p;
  }
  case IndexMap::Select: {
    std::optional<int64_t> d = dimIn(intArg("dim")), i = intArg("index");
    if (!d || !i || ot.getRank() + 1 != rank)
      return std::nullopt;
    int64_t n = it.getShape()[*d];
    p.dim = *d;
    p.index = *i < 0 ? *i + n : *i;
    if (p.index < 0 || p.index >= n)
      return std::nullopt;
    if (n == 1)
      p.map = IndexMap::Flat;
    return p;
  }
  case IndexMap::Pad: {
    auto pads = getConstantIntList(arg("pad"));
    if (!pads || pads->size() % 2 || (int64_t)pads->size() > 2 * rank ||
        it.getRank() != ot.getRank())
      return std::nullopt;
    if (Value mode = arg("mode")) {
      auto c = mode.getDefiningOp<ConstantOp>();
      auto s = c ? dyn_cast<StringAttr>(c.getValue()) : StringAttr();
      if (!s || s.getValue() != "constant")
        return std::nullopt;
    }
    Value v = arg("value");
    std::optional<double> value =
        !v || isNone(v) ? std::optional<double>(0.0) : getConstantNumber(v);
    if (!value)
      return std::nullopt;
    p.value = *value;
    p.pads.assign(pads->begin(), pads->end());
    for (int64_t k = 0; k < rank; ++k) {
      int64_t j = rank - 1 - k; // pads name the last dim first
      int64_t grow = 2 * k + 1 < (int64_t)p.pads.size()
                         ? p.pads[2 * k] + p.pads[2 * k + 1]
                         : 0;
      if (ot.getShape()[j] != it.getShape()[j] + grow)
        return std::nullopt;
    }
    if (llvm::all_of(p.pads, [](int64_t x) { return x == 0; }))
      p.map = IndexMap::Flat; // Swin pads by 0 where its sizes divide
    return p;
  }
  }
  return std::nullopt;
}

bool kb::isFlatView(Operation *op) {
  std::optional<IndexMapParams> p = indexMapOf(op);
  return p && p->map == IndexMap::Flat;
}
