//===- RowIndex.cpp - Element indices and row coordinates of row plans ---===//
//
// The index math a row plan (RowPlan.h) carries: which input element is
// element c of row r when rows run over kept, middle or pooled dims, and
// the coordinates a row fixes, from which RegionEmitter::operandOffset
// reads operands broadcast along the row once per row.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

void codegen::seedRowCoordinates(ElementSource &e, const RowPlan &p,
                                 llvm::StringRef r, llvm::StringRef idx) {
  if (!p.rowCoords)
    return;
  std::vector<std::string> coords = p.rowCoords(r);
  if (llvm::any_of(coords, [](const std::string &c) { return !c.empty(); }))
    e.seedCoordinates(idx, p.space, std::move(coords));
}

/// Row r's coordinates when rows enumerate the dims `kept` of `shape`
/// row-major (the rows of a reduction over the other dims).
std::function<std::vector<std::string>(llvm::StringRef)>
codegen::keptCoordinates(ArrayRef<int64_t> shape, std::vector<int64_t> kept) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  return [dims, kept](llvm::StringRef r) {
    std::vector<std::string> coords(dims.size());
    int64_t inner = 1;
    for (size_t k = kept.size(); k-- > 0;) {
      int64_t d = kept[k];
      std::string c =
          inner == 1 ? r.str()
                     : "(" + r.str() + " / " + std::to_string(inner) + "LL)";
      if (k > 0)
        c = "(" + c + " % " + std::to_string(dims[d]) + "LL)";
      coords[d] = dims[d] == 1 ? "0" : c;
      inner *= dims[d];
    }
    return coords;
  };
}

/// The dims of a rank-`rank` tensor outside [first, last].
std::vector<int64_t> codegen::outsideRun(int64_t rank, int64_t first,
                                         int64_t last) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (d < first || d > last)
      kept.push_back(d);
  return kept;
}

/// The index of element (r, c) when the input is [outer, cols, inner] and
/// rows run over the middle dim: row r is (r / inner, r % inner).
std::function<std::string(llvm::StringRef, llvm::StringRef)>
codegen::overMiddleDim(int64_t cols, int64_t inner) {
  return [cols, inner](llvm::StringRef r, llvm::StringRef c) {
    if (inner == 1)
      return rowMajor(r, c, cols);
    return "(" + r.str() + " / " + std::to_string(inner) + "LL) * " +
           std::to_string(cols * inner) + "LL + " + c.str() + " * " +
           std::to_string(inner) + "LL + (" + r.str() + " % " +
           std::to_string(inner) + "LL)";
  };
}

/// The input index of element c of gathered row r (StageInfo::poolIn):
/// each dim d of the input is cut into (pooled coordinate o, window
/// coordinate k) with x = o * window[d] + k; a dim in `rowDims` belongs to
/// the row whole, any other gives o to the row index and k to the element
/// index. Rows and elements both run row-major over their coordinates.
std::function<std::string(llvm::StringRef, llvm::StringRef)>
codegen::gatherIndex(ArrayRef<int64_t> in, ArrayRef<int64_t> window,
                     ArrayRef<int64_t> rowDims) {
  struct Coord {
    bool row; // from r, else from c
    int64_t extent, inner = 1;
  };
  // Neighbouring dims read whole on the same side (kept and not pooled,
  // or reduced whole) are one coordinate: fewer divisions per element.
  struct Dim {
    int64_t in, window;
    bool reduced;
  };
  SmallVector<Dim> merged;
  for (size_t d = 0; d < in.size(); ++d) {
    Dim m{in[d], window[d], llvm::is_contained(rowDims, (int64_t)d)};
    if (m.reduced && in[d] % window[d] == 0)
      m.window = 1; // covered whole
    if (!merged.empty() && merged.back().window == 1 && m.window == 1 &&
        merged.back().reduced == m.reduced)
      merged.back().in *= m.in;
    else
      merged.push_back(m);
  }
  int64_t rank = merged.size();
  // Per dim: the pooled coordinate (or the whole dim) and the window one.
  SmallVector<std::pair<Coord, Coord>> dims;
  for (const Dim &m : merged) {
    int64_t o = m.in / m.window;
    if (m.reduced)
      dims.push_back({{false, o * m.window}, {false, 1}});
    else
      dims.push_back({{true, o}, {false, m.window}});
  }
  int64_t rInner = 1, cInner = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    for (Coord *c : {&dims[d].second, &dims[d].first}) {
      int64_t &inner = c->row ? rInner : cInner;
      c->inner = inner;
      inner *= c->extent;
    }
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * merged[d + 1].in;
  return [dims, strides, rInner, cInner](llvm::StringRef r, llvm::StringRef c) {
    auto coord = [&](const Coord &k) -> std::string {
      if (k.extent == 1)
        return "";
      std::string v = (k.row ? r : c).str();
      if (k.inner > 1)
        v = "(" + v + " / " + std::to_string(k.inner) + "LL)";
      if (k.inner * k.extent < (k.row ? rInner : cInner))
        v = "(" + v + " % " + std::to_string(k.extent) + "LL)";
      return v;
    };
    std::string off;
    for (auto [d, pair] : llvm::enumerate(dims)) {
      std::string o = coord(pair.first), k = coord(pair.second), x;
      int64_t w = pair.second.extent;
      if (!o.empty() && w > 1)
        x = "(" + o + " * " + std::to_string(w) + "LL + " + k + ")";
      else
        x = !o.empty() ? o : k;
      if (x.empty())
        continue;
      off += (off.empty() ? "" : " + ") + x;
      if (strides[d] > 1)
        off += " * " + std::to_string(strides[d]) + "LL";
    }
    return off.empty() ? std::string("0LL") : "(" + off + ")";
  };
}
