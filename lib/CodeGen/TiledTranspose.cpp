//===- TiledTranspose.cpp - Pointwise regions over two layouts ------------===//
//
// MLP-Mixer and ResMLP keep their residual stream transposed ([B, N, C]
// stored as [B, C, N]: PatchEmbed's `flatten(2).transpose(1, 2)`, the token
// mixing linear's `.transpose(1, 2)`), while the channel linears read and
// write row-major. A pointwise region between them that writes both layouts
// (the residual sum and the norm a linear reads) cannot walk either with the
// float4 kernel: the other layout's stores are a float a 32-byte sector, and
// stores are not combined in L1. Here a block takes a 32 x 32 tile of the
// last two dims: tensors stored transposed go through shared memory (loaded
// and stored a column of the tile at a time), so every warp's access is 128
// contiguous bytes in either layout, as a transpose kernel's are.
//
//===----------------------------------------------------------------------===//

#include "TiledTranspose.h"
#include "RegionEmitter.h"

#include "kb/CodeGen/IndexMath.h"
#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

constexpr int64_t kTile = 32, kTileRows = 8; // 256 threads: 32 x 8
/// Shared memory for the staged tensors: 48 KB, the static limit.
constexpr int64_t kMaxStaged = 48 * 1024 / (kTile * (kTile + 1) * 4);

} // namespace

std::optional<TiledLayouts> codegen::tiledTransposeLayouts(RegionEmitter &e,
                                                           YieldOp yield) {
  if (!e.tileTransposes || e.halfStorage || e.channelsLastRead)
    return std::nullopt;
  Block &body = e.kernel.getBody().front();
  for (Operation &op : body.without_terminator())
    if (auto a = dyn_cast<AtenOp>(op); a && a.getName() == "cat")
      return std::nullopt;
  ArrayRef<int64_t> space = shapeOf(yield.getValues()[0]);
  size_t r = space.size();
  if (r < 2 || space[r - 2] < kTiledTransposeMinDim ||
      space[r - 1] < kTiledTransposeMinDim)
    return std::nullopt;
  // Row-major (false) or swapped (true); nullopt for any other layout.
  auto layoutOf = [&](Value v) -> std::optional<bool> {
    SmallVector<int64_t> st = tracedStrides(v);
    if (st.empty())
      return false;
    if (isSwappedLastTwoStrides(space, st))
      return true;
    return std::nullopt;
  };
  // Only outputs of both layouts: where they share one, the float4 kernel
  // walks it and reads the other layout's inputs a float a lane, their
  // sectors shared with the block's other warps in L1, and that measured
  // faster (fc2's epilogue in resmlp_12's shape, two transposed outputs:
  // 0.0210 against 0.0238 ms tiled; with one output of each layout the
  // tiles took 0.0206 against 0.0596; run123, H100).
  TiledLayouts l;
  bool rowMajor = false, transposed = false;
  for (Value v : yield.getValues()) {
    std::optional<bool> t = layoutOf(v);
    if (!t || e.storedAs(v) != Storage::F32 || shapeOf(v) != space)
      return std::nullopt;
    l.outputs.push_back(*t);
    (*t ? transposed : rowMajor) = true;
  }
  if (!rowMajor || !transposed)
    return std::nullopt;
  for (BlockArgument arg : body.getArguments()) {
    bool full = floatStorage(arg.getType()) && shapeOf(arg) == space;
    std::optional<bool> t = full ? layoutOf(arg) : std::optional<bool>(false);
    if (!t)
      return std::nullopt;
    l.inputs.push_back(
        full ? (*t ? TiledLayouts::Transposed : TiledLayouts::RowMajor)
             : TiledLayouts::Other);
  }
  int64_t staged = llvm::count(l.inputs, TiledLayouts::Transposed) +
                   llvm::count(l.outputs, true);
  if (staged > kMaxStaged)
    return std::nullopt;
  return l;
}

llvm::Expected<EmittedKernel>
codegen::emitTiledTranspose(RegionEmitter &e, YieldOp yield,
                            const TiledLayouts &l) {
  Block &body = e.kernel.getBody().front();
  ArrayRef<int64_t> space = shapeOf(yield.getValues()[0]);
  size_t r = space.size(), nIn = l.inputs.size(), nOut = l.outputs.size();
  int64_t N = space[r - 2], C = space[r - 1];
  int64_t lead = product(space) / (N * C);
  for (size_t k = 0; k < nIn; ++k)
    if (l.inputs[k] != TiledLayouts::Other)
      e.argNames[body.getArgument(k)] = "v" + std::to_string(k);

  // The element at logical (row-major) index i, as the float4 kernel's.
  std::string fn;
  llvm::raw_string_ostream os(fn);
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    auto y = e.valueAt(v, "i", os, "  ");
    if (!y)
      return y.takeError();
    os << "  o" << k << " = " << *y << ";\n";
  }
  std::string name = e.kernel.getSymName().str();
  const char *I = e.narrow ? "unsigned" : "long long";
  std::string helpers;
  llvm::raw_string_ostream hs(helpers);
  hs << "\nstatic __device__ __forceinline__ void " << name << "_element(" << I
     << " i";
  for (size_t k = 0; k < nIn; ++k)
    hs << (l.inputs[k] != TiledLayouts::Other
               ? std::string(", float v")
               : std::string(", const ") + argElementType(body.getArgument(k)) +
                     "* __restrict__ in")
       << k;
  for (size_t k = 0; k < nOut; ++k)
    hs << ", float& o" << k;
  hs << ") {\n" << fn << "}\n";

  // Shared tiles: the transposed inputs', then the transposed outputs'.
  std::vector<int> tileOfIn(nIn, -1), tileOfOut(nOut, -1);
  int tiles = 0;
  for (size_t k = 0; k < nIn; ++k)
    if (l.inputs[k] == TiledLayouts::Transposed)
      tileOfIn[k] = tiles++;
  int firstOut = tiles;
  for (size_t k = 0; k < nOut; ++k)
    if (l.outputs[k])
      tileOfOut[k] = tiles++;
  std::string T = std::to_string(kTile), P = std::to_string(kTile + 1),
              RS = std::to_string(kTileRows), Ns = std::to_string(N),
              Cs = std::to_string(C), suffix = e.narrow ? "u" : "LL";
  // Rows of the tiles run over the leading dims too (m = b * N + n), so no
  // tile is cut short at N: resmlp_12's N = 196 left 28 of every 224 rows
  // empty. A warp's column of a transposed tensor then spans at most two
  // runs (the end of one b, the start of the next).
  int64_t M = lead * N;
  int64_t tilesM = (M + kTile - 1) / kTile, tilesC = (C + kTile - 1) / kTile;
  std::string Ms = std::to_string(M);
  std::string text;
  llvm::raw_string_ostream s(text);
  if (tiles)
    s << "  __shared__ float kb_tile[" << tiles << "][" << T << "][" << P
      << "];\n";
  s << "  const unsigned tx = threadIdx.x % " << T << "u, ty = threadIdx.x / "
    << T << "u;\n"
    << "  const unsigned c0 = blockIdx.x % " << tilesC << "u * " << T
    << "u;\n"
    << "  const " << I << " m0 = (" << I << ")(blockIdx.x / " << tilesC
    << "u) * " << T << suffix << ";\n";
  // A tile column per warp row: rows along the lanes, 128 contiguous bytes
  // of a transposed tensor.
  std::string mDiv = e.narrow ? "m / " + Ns + "u" : "m / " + Ns + "LL",
              mMod = e.narrow ? "m % " + Ns + "u" : "m % " + Ns + "LL";
  auto columns = [&](llvm::function_ref<void(llvm::raw_ostream &)> each) {
    s << "#pragma unroll\n"
      << "  for (unsigned k = 0; k < " << T << "u; k += " << RS << "u) {\n"
      << "    const unsigned c = c0 + ty + k;\n"
      << "    const " << I << " m = m0 + tx;\n"
      << "    if (c < " << Cs << "u && m < " << Ms << suffix << ") {\n"
      << "      const " << I << " at = (" << mDiv << ") * " << N * C << suffix
      << " + (" << I << ")c * " << Ns << suffix << " + " << mMod << ";\n";
    each(s);
    s << "    }\n  }\n";
  };
  if (firstOut > 0) {
    columns([&](llvm::raw_ostream &o) {
      for (size_t k = 0; k < nIn; ++k)
        if (tileOfIn[k] >= 0)
          o << "      kb_tile[" << tileOfIn[k] << "][ty + k][tx] = in" << k
            << "[at];\n";
    });
    s << "  __syncthreads();\n";
  }
  // A tile row per warp row: c along the lanes.
  s << "#pragma unroll\n"
    << "  for (unsigned k = 0; k < " << T << "u; k += " << RS << "u) {\n"
    << "    const unsigned c = c0 + tx;\n"
    << "    const " << I << " m = m0 + ty + k;\n"
    << "    if (m < " << Ms << suffix << " && c < " << Cs << "u) {\n"
    << "      const " << I << " li = m * " << Cs << suffix << " + c;\n";
  for (size_t k = 0; k < nOut; ++k)
    s << "      float o" << k << ";\n";
  s << "      " << name << "_element(li";
  for (size_t k = 0; k < nIn; ++k) {
    if (tileOfIn[k] >= 0)
      s << ", kb_tile[" << tileOfIn[k] << "][tx][ty + k]";
    else if (l.inputs[k] == TiledLayouts::RowMajor)
      s << ", in" << k << "[li]";
    else
      s << ", in" << k;
  }
  for (size_t k = 0; k < nOut; ++k)
    s << ", o" << k;
  s << ");\n";
  for (size_t k = 0; k < nOut; ++k)
    if (tileOfOut[k] >= 0)
      s << "      kb_tile[" << tileOfOut[k] << "][tx][ty + k] = o" << k
        << ";\n";
    else
      s << "      out" << k << "[li] = o" << k << ";\n";
  s << "    }\n  }\n";
  if (tiles > firstOut) {
    s << "  __syncthreads();\n";
    columns([&](llvm::raw_ostream &o) {
      for (size_t k = 0; k < nOut; ++k)
        if (tileOfOut[k] >= 0)
          o << "      out" << k << "[at] = kb_tile[" << tileOfOut[k]
            << "][ty + k][tx];\n";
    });
  }
  EmittedKernel out;
  std::string comment =
      "One pass over " + std::to_string(product(space)) +
      " elements in 32 x 32 tiles of (" + Ms + " rows of " + Ns + ") x " + Cs +
      ", a tile a block;\ntensors stored transposed (the last two dims "
      "swapped) pass through shared memory,\nso every access is coalesced "
      "in either layout.";
  if (auto err = assembleKernel(e, out, yield, comment, helpers, text,
                                kTile * kTileRows))
    return std::move(err);
  out.kind = "pointwise";
  out.grid = {std::to_string(tilesM * tilesC), "1", "1"};
  out.block = {std::to_string(kTile * kTileRows), "1", "1"};
  return out;
}
