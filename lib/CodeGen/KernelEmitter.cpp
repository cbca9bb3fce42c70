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
    std::string bodyText;
    llvm::raw_string_ostream os(bodyText);
    for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || !isF32Tensor(t) || t.getRank() > (int64_t)space.size())
        return unsupported(kernel, "input " + llvm::Twine(k) +
                                       " is not a static float32 tensor "
                                       "broadcasting to the output");
      std::string name = "v" + std::to_string(k);
      os << "    const float " << name << " = in" << k << "["
         << broadcastOffset(t.getShape(), space) << "];\n";
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
      os << "    const float " << name << " = " << expr << "; // "
         << displayName(aten) << "\n";
      names[aten->getResult(0)] = name;
    }
    for (auto [k, v] : llvm::enumerate(yield.getValues())) {
      os << "    out" << k << "[i] = " << names.lookup(v) << ";\n";
      out.outputs.push_back({"out" + std::to_string(k),
                             {space.begin(), space.end()}});
    }

    int64_t n = 1;
    for (int64_t d : space)
      n *= d;
    std::string src;
    llvm::raw_string_ostream s(src);
    s << "// " << out.name << ": generated by kb-rewrite from "
      << (kernel.getAnchor() ? "the epilogue of " + kernel.getAnchor()->str()
                             : std::string("an anchorless chain"))
      << "\n// One grid-stride pass over " << n
      << " elements; inputs are read once, outputs written once.\n"
      << cudaPrelude() << "\nextern \"C\" __global__ void __launch_bounds__(256)\n"
      << out.name << "(";
    for (size_t k = 0; k < out.inputs.size(); ++k)
      s << "const float* __restrict__ in" << k << ", ";
    for (size_t k = 0; k < out.outputs.size(); ++k)
      s << "float* __restrict__ out" << k
        << (k + 1 < out.outputs.size() ? ", " : "");
    s << ") {\n  const long long n = " << n << "LL;\n"
      << "  for (long long i = (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; i < n;\n       i += (long long)gridDim.x * blockDim.x) "
         "{\n"
      << bodyText << "  }\n}\n";
    out.source = std::move(src);
    out.grid = {"min(ceil_div(" + std::to_string(n) + ", 256), sm_count * 32)",
                "1", "1"};
    out.block = {"256", "1", "1"};
    out.referenceIR = referenceIR(yield);
    return out;
  }

private:
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
};

} // namespace

llvm::Expected<EmittedKernel> kb::emitKernel(KernelOp kernel) {
  return Emitter(kernel).run();
}
