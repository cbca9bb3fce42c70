//===- KernelEmitter.cpp - CUDA for outlined fusion regions ---------------===//
//
// Pointwise regions become one grid-stride loop over the output's iteration
// space. Shapes are static (traced graphs), so sizes are compile-time
// constants and broadcast index math divides by constants. Each op's CUDA
// expression comes from OpSemantics.def; scalar operands are rendered as
// literals.
//
//===----------------------------------------------------------------------===//

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/Transforms/OpUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace kb;

namespace {

llvm::Error unsupported(KernelOp k, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 k.getSymName() + ": " + why);
}

std::string floatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "kb::inf()" : "(-kb::inf())";
  if (std::isnan(v))
    return "__int_as_float(0x7fffffff)";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.9g", v);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string cString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

bool isF32Tensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getElementType().isF32() &&
         !rt.getEncoding();
}

/// Offset of a broadcast input's element for output linear index `i`.
std::string broadcastOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> space) {
  if (in == space)
    return "i";
  int64_t rank = space.size(), off = rank - (int64_t)in.size();
  auto broadcast = [&](int64_t d) {
    int64_t id = d - off;
    return id < 0 || (in[id] == 1 && space[d] != 1);
  };
  std::vector<int64_t> inStride(in.size(), 1);
  for (int64_t k = (int64_t)in.size() - 2; k >= 0; --k)
    inStride[k] = inStride[k + 1] * in[k + 1];
  std::string expr;
  int64_t inner = 1;
  for (int64_t d = rank - 1; d >= 0;) {
    if (broadcast(d)) {
      inner *= space[d];
      --d;
      continue;
    }
    int64_t b = d, runSize = 1;
    while (d >= 0 && !broadcast(d)) {
      runSize *= space[d];
      --d;
    }
    std::string coord = inner == 1 ? "i" : "(i / " + std::to_string(inner) + "LL)";
    if (d >= 0) // a run that reaches dim 0 needs no modulo
      coord = "(" + coord + " % " + std::to_string(runSize) + "LL)";
    int64_t stride = inStride[b - off];
    std::string term =
        stride == 1 ? coord : coord + " * " + std::to_string(stride) + "LL";
    expr = expr.empty() ? term : expr + " + " + term;
    inner *= runSize;
  }
  return expr.empty() ? "0" : expr;
}

class Emitter {
public:
  explicit Emitter(KernelOp k) : kernel(k) {}

  llvm::Expected<EmittedKernel> run() {
    Block &body = kernel.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    EmittedKernel out;
    out.name = kernel.getSymName().str();
    out.kind = "pointwise";
    if (yield.getValues().empty())
      return unsupported(kernel, "no outputs");
    auto spaceType = dyn_cast<RankedTensorType>(yield.getValues()[0].getType());
    if (!spaceType || !isF32Tensor(spaceType))
      return unsupported(kernel, "outputs must be static float32 tensors");
    space = spaceType.getShape();
    for (Value v : yield.getValues())
      if (v.getType() != spaceType)
        return unsupported(kernel, "outputs of different shapes");

    if (auto r = findReduction(body))
      return runReduction(*r, yield);
    // What is not generated yet is reported first, by op.
    for (Operation &op : body.without_terminator()) {
      if (isa<ConstantOp, ListOp>(op))
        continue;
      OpKind kind = getKind(&op);
      if (!isa<AtenOp>(op) ||
          (kind != OpKind::Elementwise && kind != OpKind::Broadcast))
        return unsupported(kernel, llvm::Twine(kindName(kind)) + " op '" +
                                       displayName(&op) +
                                       "' is not generated yet");
    }
    // The per-element body becomes a device function: the vector loop calls
    // it for the four lanes of a float4, the scalar tail for the rest.
    // Full-size inputs arrive as values (loaded 16 bytes at a time),
    // broadcast ones as pointers indexed inside.
    std::string bodyText;
    llvm::raw_string_ostream os(bodyText);
    SmallVector<bool> full;
    for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || !isF32Tensor(t) || t.getRank() > (int64_t)space.size())
        return unsupported(kernel, "input " + llvm::Twine(k) +
                                       " is not a static float32 tensor "
                                       "broadcasting to the output");
      std::string offset = broadcastOffset(t.getShape(), space);
      full.push_back(offset == "i");
      std::string name = "v" + std::to_string(k);
      if (!full.back())
        os << "  const float " << name << " = in" << k << "[" << offset
           << "];\n";
      names[arg] = name;
      out.inputs.push_back({"in" + std::to_string(k),
                            {t.getShape().begin(), t.getShape().end()}});
    }
    unsigned tmp = 0;
    for (Operation &op : body.without_terminator()) {
      if (isa<ConstantOp, ListOp>(op))
        continue;
      auto aten = cast<AtenOp>(op);
      const OpInfo *info = aten.getInfo();
      if (!isF32Tensor(aten->getResult(0).getType()) ||
          cast<RankedTensorType>(aten->getResult(0).getType()).getShape() !=
              space)
        return unsupported(kernel, "'" + displayName(aten) +
                                       "' does not produce the float32 "
                                       "iteration space");
      std::string expr;
      if (info->style == OpStyle::Cast) {
        expr = names.lookup(aten.getArgs()[0]);
      } else {
        auto e = substitute(aten, *info);
        if (!e)
          return e.takeError();
        expr = *e;
      }
      std::string name = "t" + std::to_string(tmp++);
      os << "  const float " << name << " = " << expr << "; // "
         << displayName(aten) << "\n";
      names[aten->getResult(0)] = name;
    }
    for (auto [k, v] : llvm::enumerate(yield.getValues())) {
      os << "  o" << k << " = " << names.lookup(v) << ";\n";
      out.outputs.push_back({"out" + std::to_string(k),
                             {space.begin(), space.end()}});
    }

    int64_t n = 1;
    for (int64_t d : space)
      n *= d;
    size_t nIn = out.inputs.size(), nOut = out.outputs.size();
    // Call arguments of the element function for lane expression `lane`
    // (".x" etc.) or, with an empty lane, for the scalar tail.
    auto callArgs = [&](llvm::StringRef idx, llvm::StringRef lane) {
      std::string a = idx.str();
      for (size_t k = 0; k < nIn; ++k)
        a += full[k] ? (lane.empty() ? ", in" + std::to_string(k) + "[i]"
                                     : ", a" + std::to_string(k) + lane.str())
                     : ", in" + std::to_string(k);
      for (size_t k = 0; k < nOut; ++k)
        a += lane.empty() ? ", o" + std::to_string(k)
                          : ", r" + std::to_string(k) + lane.str();
      return a;
    };
    std::string src;
    llvm::raw_string_ostream s(src);
    s << "// " << out.name << ": generated by kb-rewrite from "
      << (kernel.getAnchor() ? "the epilogue of " + kernel.getAnchor()->str()
                             : std::string("an anchorless chain"))
      << "\n// One grid-stride pass over " << n
      << " elements, float4 loads and stores (a scalar loop takes the tail);\n"
         "// inputs are read once, outputs written once. Tensors must be "
         "16-byte aligned.\n"
      << cudaPrelude() << "\nstatic __device__ __forceinline__ void "
      << out.name << "_element(long long i";
    for (size_t k = 0; k < nIn; ++k)
      s << (full[k] ? ", float v" : ", const float* __restrict__ in") << k;
    for (size_t k = 0; k < nOut; ++k)
      s << ", float& o" << k;
    s << ") {\n" << bodyText << "}\n\nextern \"C\" __global__ void "
      << "__launch_bounds__(256)\n" << out.name << "(";
    for (size_t k = 0; k < nIn; ++k)
      s << "const float* __restrict__ in" << k << ", ";
    for (size_t k = 0; k < nOut; ++k)
      s << "float* __restrict__ out" << k << (k + 1 < nOut ? ", " : "");
    s << ") {\n  const long long n = " << n << "LL, nv = n / 4;\n"
      << "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
      << "  for (long long q = (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; q < nv; q += stride) {\n";
    for (size_t k = 0; k < nIn; ++k)
      if (full[k])
        s << "    const float4 a" << k << " = reinterpret_cast<const float4*>(in"
          << k << ")[q];\n";
    for (size_t k = 0; k < nOut; ++k)
      s << "    float4 r" << k << ";\n";
    const char *lanes[] = {".x", ".y", ".z", ".w"};
    for (int l = 0; l < 4; ++l)
      s << "    " << out.name << "_element("
        << callArgs("4 * q + " + std::to_string(l), lanes[l]) << ");\n";
    for (size_t k = 0; k < nOut; ++k)
      s << "    reinterpret_cast<float4*>(out" << k << ")[q] = r" << k
        << ";\n";
    s << "  }\n";
    if (n % 4) {
      s << "  for (long long i = nv * 4 + (long long)blockIdx.x * blockDim.x + "
           "threadIdx.x; i < n; i += stride) {\n";
      for (size_t k = 0; k < nOut; ++k)
        s << "    float o" << k << ";\n";
      s << "    " << out.name << "_element(" << callArgs("i", "") << ");\n";
      for (size_t k = 0; k < nOut; ++k)
        s << "    out" << k << "[i] = o" << k << ";\n";
      s << "  }\n";
    }
    s << "}\n";
    out.source = std::move(src);
    int64_t nv = std::max<int64_t>(n / 4, 1);
    out.grid = {"min(ceil_div(" + std::to_string(nv) + ", 256), sm_count * 32)",
                "1", "1"};
    out.block = {"256", "1", "1"};
    out.referenceIR = referenceIR(yield);
    return out;
  }

private:
  /// The region's single reduction, if it has one.
  std::optional<AtenOp> findReduction(Block &body) {
    std::optional<AtenOp> found;
    for (Operation &op : body.without_terminator())
      if (auto a = dyn_cast<AtenOp>(op); a && getKind(a) == OpKind::Reduction) {
        if (found)
          return found; // two stages: runReduction reports it
        found = a;
      }
    return found;
  }

  /// Emits the pointwise `ops` as `const float` lines at index `idx` of the
  /// iteration shape `shape`, loading block arguments on first use.
  llvm::Error emitOps(ArrayRef<Operation *> ops, llvm::StringRef idx,
                      ArrayRef<int64_t> shape, llvm::raw_ostream &os,
                      llvm::StringRef indent) {
    for (Operation *op : ops) {
      auto aten = cast<AtenOp>(op);
      for (Value v : aten.getArgs()) {
        auto arg = dyn_cast<BlockArgument>(v);
        if (!arg || names.count(v))
          continue;
        auto t = dyn_cast<RankedTensorType>(v.getType());
        if (!t || !isF32Tensor(t) || t.getRank() > (int64_t)shape.size())
          return unsupported(kernel, "input " + llvm::Twine(arg.getArgNumber()) +
                                         " does not broadcast to its use");
        std::string offset = broadcastOffset(t.getShape(), shape);
        offset = offset == "i" ? idx.str() : offset;
        if (idx != "i" && offset != idx)
          for (size_t p; (p = offset.find("(i ")) != std::string::npos;)
            offset.replace(p + 1, 1, idx.str());
        std::string name = "v" + std::to_string(arg.getArgNumber()) + "_" +
                           std::to_string(tmp);
        os << indent << "const float " << name << " = in"
           << arg.getArgNumber() << "[" << offset << "];\n";
        names[v] = name;
      }
      std::string expr;
      if (aten.getInfo()->style == OpStyle::Cast) {
        expr = names.lookup(aten.getArgs()[0]);
      } else {
        auto e = substitute(aten, *aten.getInfo());
        if (!e)
          return e.takeError();
        expr = *e;
      }
      std::string name = "t" + std::to_string(tmp++);
      os << indent << "const float " << name << " = " << expr << "; // "
         << displayName(aten) << "\n";
      names[aten->getResult(0)] = name;
    }
    return llvm::Error::success();
  }

  /// Row reductions over trailing dims (sum, mean, amax, amin) and softmax /
  /// log_softmax over the last dim, with pointwise ops before and after:
  /// one block per row, values of the pointwise prologue recomputed on each
  /// pass instead of stored.
  llvm::Expected<EmittedKernel> runReduction(AtenOp red, YieldOp yield) {
    Block &body = kernel.getBody().front();
    EmittedKernel out;
    out.name = kernel.getSymName().str();
    out.kind = "reduction";
    // The combine of each supported reduction (to move into
    // OpSemantics.def when reductions are generated in general).
    static const llvm::StringMap<const char *> kCombine = {
        {"sum", "Sum"}, {"mean", "Sum"}, {"amax", "Max"}, {"amin", "Min"},
        {"softmax", "Softmax"}, {"log_softmax", "LogSoftmax"},
        {"layer_norm", "LayerNorm"}};
    auto combine = kCombine.find(red.getName());
    const OpInfo *info = red.getInfo();
    if (combine == kCombine.end() || red->getNumResults() != 1)
      return unsupported(kernel, "reduction op '" + displayName(red) +
                                     "' is not generated yet");
    bool layerNorm = combine->second == llvm::StringRef("LayerNorm");
    // Softmax and layer_norm keep the shape: outputs are written per element.
    bool softmax = info->style == OpStyle::Softmax || layerNorm;
    Value input = red.getArgs()[0];
    auto inType = dyn_cast<RankedTensorType>(input.getType());
    auto outType = dyn_cast<RankedTensorType>(red->getResult(0).getType());
    if (!inType || !outType || !isF32Tensor(inType) || !isF32Tensor(outType))
      return unsupported(kernel, "reduction over a non-float32 tensor");
    if (Value dt = red.getArg("dtype"); dt && !isNone(dt))
      return unsupported(kernel, "reduction with a dtype argument");
    ArrayRef<int64_t> space = inType.getShape();
    int64_t rank = space.size();
    // Which trailing dims are reduced.
    int64_t first = 0;
    if (layerNorm) {
      auto shape = getConstantIntList(red.getArg("normalized_shape"));
      if (!shape || shape->empty() || (int64_t)shape->size() > rank)
        return unsupported(kernel, "layer_norm with a non-constant shape");
      first = rank - (int64_t)shape->size();
    } else if (softmax) {
      auto d = getConstantNumber(red.getArg("dim"));
      if (!d || ((int64_t)*d + rank) % rank != rank - 1)
        return unsupported(kernel, "softmax over a dim other than the last");
      first = rank - 1;
    } else {
      Value dimArg = red.getArg("dim");
      std::vector<int64_t> dims;
      if (dimArg && !isNone(dimArg)) {
        auto list = getConstantIntList(dimArg);
        if (!list)
          return unsupported(kernel, "reduction dims are not constant");
        dims.assign(list->begin(), list->end());
      }
      if (dims.empty())
        for (int64_t d = 0; d < rank; ++d)
          dims.push_back(d);
      for (int64_t &d : dims)
        d = (d + rank) % rank;
      llvm::sort(dims);
      first = rank - (int64_t)dims.size();
      for (size_t k = 0; k < dims.size(); ++k)
        if (dims[k] != first + (int64_t)k)
          return unsupported(kernel, "reduction over dims that are not the "
                                     "trailing ones");
    }
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < first ? rows : cols) *= space[d];
    // Prologue: pointwise ops before the reduction, over `space`; epilogue:
    // after it, over the output shape.
    SmallVector<Operation *> pre, post;
    bool after = false;
    for (Operation &op : body.without_terminator()) {
      if (isa<ConstantOp, ListOp>(op))
        continue;
      if (&op == red.getOperation()) {
        after = true;
        continue;
      }
      OpKind kind = getKind(&op);
      if (!isa<AtenOp>(op) ||
          (kind != OpKind::Elementwise && kind != OpKind::Broadcast) ||
          op.getNumResults() != 1)
        return unsupported(kernel, llvm::Twine(kindName(kind)) + " op '" +
                                       displayName(&op) +
                                       "' is not generated yet");
      (after ? post : pre).push_back(&op);
    }
    llvm::SmallPtrSet<Value, 8> preValues;
    for (Operation *op : pre)
      preValues.insert(op->getResult(0));
    for (Operation *op : post)
      for (Value v : op->getOperands())
        if (preValues.count(v))
          return unsupported(kernel, "an op after the reduction uses a value "
                                     "from before it");
    for (Value v : yield.getValues())
      if (preValues.count(v) || v.getType() != outType)
        return unsupported(kernel, "the region also writes values from "
                                   "before its reduction");
    if (auto arg = dyn_cast<BlockArgument>(input); !arg && !preValues.count(input))
      return unsupported(kernel, "unexpected reduction input");

    std::string text;
    llvm::raw_string_ostream os(text);
    auto prologue = [&](llvm::StringRef indent) -> llvm::Error {
      names.clear();
      return emitOps(pre, "i", space, os, indent);
    };
    auto inputValue = [&]() -> std::string {
      if (auto arg = dyn_cast<BlockArgument>(input)) {
        std::string n = "v" + std::to_string(arg.getArgNumber()) + "_in";
        os << "      const float " << n << " = in" << arg.getArgNumber()
           << "[i];\n";
        return n;
      }
      return names.lookup(input);
    };
    // Rows of up to 1024 elements get one warp each (8 rows per block,
    // shuffles only); longer rows one block each. A block per 64-element
    // row leaves 3/4 of its threads idle and pays two barriers per reduction.
    const bool warpRow = cols <= 1024;
    auto reduce = [&](llvm::StringRef v, llvm::StringRef init,
                      llvm::StringRef op) {
      return warpRow ? "kb::warp_reduce(" + v.str() + ", kb::" + op.str() + "())"
                     : "kb::block_reduce(" + v.str() + ", " + init.str() +
                           ", smem, kb::" + op.str() + "())";
    };
    if (warpRow)
      os << "  const int lane = threadIdx.x & 31;\n"
         << "  const long long rows = " << rows << "LL, cols = " << cols << "LL;\n"
         << "  for (long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); "
            "r < rows;\n       r += (long long)gridDim.x * 8) {\n";
    else
      os << "  __shared__ " << (layerNorm ? "double" : "float") << " smem[33];\n"
         << "  const long long rows = " << rows << "LL, cols = " << cols << "LL;\n"
         << "  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {\n";
    auto loopHead = [&] {
      os << (warpRow ? "    for (long long c = lane; c < cols; c += 32) {\n"
                     : "    for (long long c = threadIdx.x; c < cols; c += "
                       "blockDim.x) {\n")
         << "      const long long i = r * cols + c;\n";
    };
    std::string outIdx = softmax ? "i" : "r";
    auto writeOutputs = [&](llvm::StringRef indent) {
      for (auto [k, v] : llvm::enumerate(yield.getValues()))
        os << indent << "out" << k << "[" << outIdx << "] = " << names.lookup(v)
           << ";\n";
    };
    if (!softmax) {
      std::string op = combine->second;
      std::string init = op == "Sum" ? "0.f" : op == "Max" ? "(-kb::inf())" : "kb::inf()";
      std::string step = op == "Sum" ? "acc + x" : op == "Max" ? "kb::nanmax(acc, x)" : "kb::nanmin(acc, x)";
      os << "    float acc = " << init << ";\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x = inputValue();
      os << "      const float x = " << x << ";\n      acc = " << step << ";\n    }\n"
         << "    acc = " << reduce("acc", init, op) << ";\n"
         << (warpRow ? "    if (lane == 0) {\n" : "    if (threadIdx.x == 0) {\n");
      std::string redName = "red";
      os << "      const float red = " << (red.getName() == "mean"
                                               ? "acc / " + floatLiteral(cols)
                                               : std::string("acc"))
         << "; // " << displayName(red) << "\n";
      names.clear();
      names[red->getResult(0)] = redName;
      if (auto e = emitOps(post, "r", outType.getShape(), os, "      "))
        return std::move(e);
      writeOutputs("      ");
      os << "    }\n  }\n";
    } else if (layerNorm) {
      // Two passes for the moments (mean, then the biased variance around
      // it), one for the output: (x - mean) * rsqrt(var + eps) * w + b. The
      // statistics are accumulated in double: a row holding 3e38 overflows
      // fp32 sums of squares (eager's Welford merge turns it into NaN), and
      // the float64 truth is finite; the passes are memory-bound, so the
      // double arithmetic is free.
      auto eps = getConstantNumber(red.getArg("eps"));
      if (!eps)
        return unsupported(kernel, "layer_norm with a non-constant eps");
      auto affine = [&](llvm::StringRef argName) -> std::optional<unsigned> {
        Value v = red.getArg(argName);
        if (auto a = dyn_cast_or_null<BlockArgument>(v))
          return a.getArgNumber();
        return std::nullopt;
      };
      for (llvm::StringRef a : {"weight", "bias"})
        if (Value v = red.getArg(a); v && !isNone(v) && !affine(a))
          return unsupported(kernel, "layer_norm " + a + " is not an input");
      os << "    double s = 0.0;\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x0 = inputValue();
      os << "      s += " << x0 << ";\n    }\n"
         << "    const double mean = " << reduce("s", "0.0", "Sum") << " / "
         << cols << ".0;\n    double q = 0.0;\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x1 = inputValue();
      os << "      const double d = " << x1 << " - mean;\n      q += d * d;\n    }\n"
         << "    const double rstd = 1.0 / sqrt(" << reduce("q", "0.0", "Sum")
         << " / "
         << cols << ".0 + " << floatLiteral(*eps) << ");\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x = inputValue();
      std::string y = "(float)((" + x + " - mean) * rstd)";
      if (auto w = affine("weight"))
        y += " * in" + std::to_string(*w) + "[c]";
      if (auto b = affine("bias"))
        y += " + in" + std::to_string(*b) + "[c]";
      os << "      const float red = " << y << "; // " << displayName(red) << "\n";
      names.clear();
      names[red->getResult(0)] = "red";
      if (auto e = emitOps(post, "i", space, os, "      "))
        return std::move(e);
      writeOutputs("      ");
      os << "    }\n  }\n";
    } else {
      bool logSoftmax = combine->second == llvm::StringRef("LogSoftmax");
      os << "    float m = -kb::inf();\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x0 = inputValue(); // may emit a load line first
      os << "      m = kb::nanmax(m, " << x0 << ");\n    }\n"
         << "    m = " << reduce("m", "-kb::inf()", "Max") << ";\n"
         << "    float s = 0.f;\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x1 = inputValue();
      // __fsub_rn: never contracted into an FMA with a multiply in the
      // prologue. fma(v, c, -m) would use the unrounded v * c, so the row's
      // maximum minus m would be its rounding error (up to 1e30 at 2.6e37),
      // and expf of it Inf, not 1.
      os << "      s += expf(__fsub_rn(" << x1 << ", m));\n    }\n"
         << "    s = " << reduce("s", "0.f", "Sum") << ";\n";
      loopHead();
      if (auto e = prologue("      "))
        return std::move(e);
      std::string x = inputValue();
      os << "      const float red = "
         << (logSoftmax ? "__fsub_rn(" + x + ", m) - logf(s)"
                        : "expf(__fsub_rn(" + x + ", m)) / s")
         << "; // " << displayName(red) << "\n";
      names.clear();
      names[red->getResult(0)] = "red";
      if (auto e = emitOps(post, "i", space, os, "      "))
        return std::move(e);
      writeOutputs("      ");
      os << "    }\n  }\n";
    }

    for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || !isF32Tensor(t))
        return unsupported(kernel, "input " + llvm::Twine(k) +
                                       " is not a static float32 tensor");
      out.inputs.push_back({"in" + std::to_string(k),
                            {t.getShape().begin(), t.getShape().end()}});
    }
    for (auto [k, v] : llvm::enumerate(yield.getValues()))
      out.outputs.push_back({"out" + std::to_string(k),
                             {outType.getShape().begin(), outType.getShape().end()}});
    std::string src;
    llvm::raw_string_ostream sr(src);
    sr << "// " << out.name << ": generated by kb-rewrite from "
       << (kernel.getAnchor() ? "the epilogue of " + kernel.getAnchor()->str()
                              : std::string("an anchorless chain"))
       << "\n// " << displayName(red) << " of " << rows << " rows x " << cols
       << " elements, one " << (warpRow ? "warp" : "block")
       << " per row; the pointwise prologue is recomputed "
          "on each pass instead of stored.\n"
       << cudaPrelude() << "\nextern \"C\" __global__ void __launch_bounds__(256)\n"
       << out.name << "(";
    for (size_t k = 0; k < out.inputs.size(); ++k)
      sr << "const float* __restrict__ in" << k << ", ";
    for (size_t k = 0; k < out.outputs.size(); ++k)
      sr << "float* __restrict__ out" << k
         << (k + 1 < out.outputs.size() ? ", " : "");
    sr << ") {\n" << text << "}\n";
    out.source = std::move(src);
    out.grid = {warpRow ? "min(ceil_div(" + std::to_string(rows) +
                              ", 8), sm_count * 16)"
                        : "min(" + std::to_string(rows) + ", sm_count * 16)",
                "1", "1"};
    out.block = {"256", "1", "1"};
    out.referenceIR = referenceIR(yield);
    return out;
  }

  llvm::Expected<std::string> render(AtenOp op, const ArgSpec &arg, Value v) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    if (isNone(v)) {
      // An absent bound of a clamp-like op is unbounded on that side.
      if (llvm::StringRef(arg.name).contains("max"))
        return std::string("kb::inf()");
      if (llvm::StringRef(arg.name).contains("min"))
        return std::string("(-kb::inf())");
      return unsupported(kernel, "None for operand '" + arg.name + "' of '" +
                                     displayName(op) + "'");
    }
    if (auto c = v.getDefiningOp<ConstantOp>()) {
      if (auto s = dyn_cast<StringAttr>(c.getValue()))
        return cString(s.getValue());
      if (auto n = getConstantNumber(v))
        return floatLiteral(*n);
    }
    return unsupported(kernel, "operand '" + arg.name + "' of '" +
                                   displayName(op) + "' is not a scalar constant");
  }

  llvm::Expected<std::string> substitute(AtenOp op, const OpInfo &info) {
    std::string expr = info.cuda.str();
    if (expr.empty())
      return unsupported(kernel, "'" + displayName(op) + "' has no CUDA expression");
    for (auto [idx, arg] : llvm::enumerate(info.args)) {
      std::string key = "{" + arg.name + "}";
      if (expr.find(key) == std::string::npos)
        continue;
      auto r = render(op, arg, op.getArgs()[idx]);
      if (!r)
        return r.takeError();
      for (size_t p; (p = expr.find(key)) != std::string::npos;)
        expr.replace(p, key.size(), *r);
    }
    return expr;
  }

  /// The region's ops as TorchScript IR text (what kb-verify executes with
  /// libtorch): constants become prim::Constant, in-place ops run out of
  /// place so the reference never writes its inputs.
  std::string referenceIR(YieldOp yield) {
    Block &body = kernel.getBody().front();
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DenseMap<Value, std::string> ir;
    os << "graph(";
    for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
      ir[arg] = "%in" + std::to_string(k);
      os << (k ? ", " : "") << ir[arg] << " : Tensor";
    }
    os << "):\n";
    unsigned id = 0;
    auto fresh = [&] { return "%v" + std::to_string(id++); };
    for (Operation &op : body.without_terminator()) {
      if (auto c = dyn_cast<ConstantOp>(op)) {
        std::string n = fresh();
        ir[c] = n;
        Attribute a = c.getValue();
        if (isa<NoneType>(c.getType()))
          os << "  " << n << " : NoneType = prim::Constant()\n";
        else if (auto s = dyn_cast<StringAttr>(a))
          os << "  " << n << " : str = prim::Constant[value=" << cString(s.getValue()) << "]()\n";
        else if (auto b = dyn_cast<BoolAttr>(a))
          os << "  " << n << " : bool = prim::Constant[value=" << (b.getValue() ? 1 : 0) << "]()\n";
        else if (auto i = dyn_cast<IntegerAttr>(a))
          os << "  " << n << " : int = prim::Constant[value=" << i.getInt() << "]()\n";
        else if (auto f = dyn_cast<FloatAttr>(a)) {
          std::string lit = floatLiteral(f.getValueAsDouble());
          lit.pop_back(); // drop the 'f' suffix
          os << "  " << n << " : float = prim::Constant[value=" << lit << "]()\n";
        } else if (auto arr = dyn_cast<ArrayAttr>(a)) {
          std::vector<std::string> elems;
          for (Attribute e : arr) {
            std::string en = fresh();
            os << "  " << en << " : int = prim::Constant[value="
               << cast<IntegerAttr>(e).getInt() << "]()\n";
            elems.push_back(en);
          }
          os << "  " << n << " : int[] = prim::ListConstruct(" << llvm::join(elems, ", ") << ")\n";
        }
        continue;
      }
      if (auto l = dyn_cast<ListOp>(op)) {
        std::string n = fresh();
        ir[l] = n;
        std::vector<std::string> elems;
        for (Value e : l.getElements())
          elems.push_back(ir.lookup(e));
        os << "  " << n << " : int[] = prim::ListConstruct(" << llvm::join(elems, ", ") << ")\n";
        continue;
      }
      auto aten = cast<AtenOp>(op);
      std::string n = fresh();
      ir[aten->getResult(0)] = n;
      std::vector<std::string> args;
      for (Value a : aten.getArgs())
        args.push_back(ir.lookup(a));
      os << "  " << n << " : Tensor = aten::" << aten.getName() << "("
         << llvm::join(args, ", ") << ")\n";
    }
    std::vector<std::string> rets;
    for (Value v : yield.getValues())
      rets.push_back(ir.lookup(v));
    os << "  return (" << llvm::join(rets, ", ") << ")\n";
    return text;
  }

  KernelOp kernel;
  ArrayRef<int64_t> space;
  llvm::DenseMap<Value, std::string> names;
  unsigned tmp = 0;
};

} // namespace

llvm::Expected<EmittedKernel> kb::emitKernel(KernelOp kernel) {
  return Emitter(kernel).run();
}
