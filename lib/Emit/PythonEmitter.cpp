//===- PythonEmitter.cpp - kb IR back to PyTorch calls --------------------===//
//
// Every aten op becomes `torch.ops.aten.<name>(...)` with the traced
// operands, so ATen picks the same overload and the same library kernel as
// the traced model did (the anchors stay cuBLAS/cuDNN by construction, and
// no op needs a Python-side table). Constants print as Python literals that
// round-trip exactly (%.17g for doubles).
//
//===----------------------------------------------------------------------===//
#include "kb/Emit/PythonEmitter.h"
#include "kb/Emit/LibraryEpilogue.h"
#include "kb/Emit/PythonLiteral.h"
#include "kb/IR/KbDialect.h"
#include "kb/Transforms/OpUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace kb {
namespace {

/// Whether `arg` of `op` is the constant bool `want` in the trace.
bool isConstantBool(AtenOp op, llvm::StringRef arg, bool want) {
  Value v = op.getArg(arg);
  auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!c)
    return false;
  auto lit = pythonScalarLiteral(c.getValue(), c.getType());
  return lit && *lit == (want ? "True" : "False");
}

/// A forward (not transposed) convolution in TF32: its channels-last
/// operands are rounded as cuDNN's NCHW path rounds them (Program.cl in
/// runtime/kb_runtime.py), so that both layouts agree.
bool isTf32ForwardConv(AtenOp conv) {
  return isConstantBool(conv, "transposed", false) &&
         isConstantBool(conv, "allow_tf32", true);
}

bool isPythonIdentifier(llvm::StringRef s) {
  static const char *const keywords[] = {
      "False",  "None",   "True",    "and",      "as",       "assert", "async",
      "await",  "break",  "class",   "continue", "def",      "del",    "elif",
      "else",   "except", "finally", "for",      "from",     "global", "if",
      "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
      "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(llvm::isAlnum(c) || c == '_'))
      return false;
  for (const char *k : keywords)
    if (s == k)
      return false;
  return true;
}

std::string pyFloat(double d) {
  if (std::isnan(d))
    return "float(\"nan\")";
  if (std::isinf(d))
    return d > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.17g", d);
  os.flush();
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string torchDtype(Type t) {
  if (t.isF32())
    return "torch.float32";
  if (t.isF64())
    return "torch.float64";
  if (t.isF16())
    return "torch.float16";
  if (t.isBF16())
    return "torch.bfloat16";
  if (t.isInteger(1))
    return "torch.bool";
  if (t.isInteger(64))
    return "torch.int64";
  if (t.isInteger(32))
    return "torch.int32";
  if (t.isInteger(16))
    return "torch.int16";
  if (t.isUnsignedInteger(8))
    return "torch.uint8";
  if (t.isInteger(8))
    return "torch.int8";
  return "";
}

class Emitter {
public:
  explicit Emitter(const std::map<std::string, unsigned> &regionIndex)
      : regionIndex(regionIndex) {}

  llvm::Error emitFunction(llvm::StringRef header, Block &block,
                           llvm::ArrayRef<std::string> argNames,
                           llvm::raw_ostream &os) {
    names.clear();
    counter = 0;
    os << header << "\n";
    for (auto [arg, name] : llvm::zip(block.getArguments(), argNames))
      names[arg] = name;
    for (Operation &op : block)
      if (auto err = emitOp(op, os))
        return err;
    return llvm::Error::success();
  }

private:
  /// "graph.txt:12:3: msg": the graph line of the op (the first file
  /// location of a fused one).
  llvm::Error fail(Operation *op, const llvm::Twine &msg) {
    std::string where;
    op->getLoc()->walk([&](Location l) {
      if (auto f = dyn_cast<FileLineColLoc>(l); f && where.empty())
        where = (f.getFilename().str() + ":" + std::to_string(f.getLine()) +
                 ":" + std::to_string(f.getColumn()));
      return WalkResult::advance();
    });
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   (where.empty() ? "" : where + ": ") +
                                       msg.str());
  }

  std::string fresh(Value v) {
    std::string n = "v" + std::to_string(counter++);
    names[v] = n;
    return n;
  }

  std::string use(Value v) {
    auto it = names.find(v);
    return it == names.end() ? "None" : it->second;
  }

  /// The operands' names, comma-separated; `wrap(i, name)`, when given,
  /// renders operand i instead (K.cl around a convolution's inputs).
  std::string
  args(ValueRange operands,
       llvm::function_ref<std::string(size_t, std::string)> wrap = nullptr) {
    std::string s;
    for (auto [i, v] : llvm::enumerate(operands))
      s += (i ? ", " : "") + (wrap ? wrap(i, use(v)) : use(v));
    return s;
  }

  /// "a, b = " / "a, = " / "" for the results of `op`.
  std::string assign(Operation *op) {
    if (op->getNumResults() == 0)
      return "";
    std::string s;
    for (auto [i, r] : llvm::enumerate(op->getResults()))
      s += (i ? ", " : "") + fresh(r);
    return s + (op->getNumResults() == 1 ? " = " : " = ");
  }

  /// "(3, 2, )": a Python tuple of the tensor's sizes.
  static std::string shapeTuple(RankedTensorType t) {
    std::string dims;
    for (int64_t d : t.getShape())
      dims += std::to_string(d) + ", ";
    return "(" + dims + ")";
  }

  llvm::Expected<std::string> literal(Operation *op, Attribute a, Type t) {
    if (auto scalar = pythonScalarLiteral(a, t))
      return *scalar;
    auto tensor = cast<TensorType>(t);
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      if (i.getType().isInteger(1))
        return std::string(i.getInt() ? "True" : "False");
      return "torch.tensor(" + std::to_string(i.getInt()) +
             ", dtype=" + torchDtype(tensor.getElementType()) + ")";
    }
    if (auto f = dyn_cast<FloatAttr>(a)) {
      std::string dt = torchDtype(tensor.getElementType());
      if (dt.empty())
        return fail(op, "a tensor constant of an unsupported dtype");
      return "torch.tensor(" + pyFloat(f.getValueAsDouble()) + ", dtype=" + dt +
             ")";
    }
    // An empty tensor (torch prints "[ CPUFloatType{0} ]"): no values to
    // lose, so it has an exact Python form.
    if (auto ranked = dyn_cast<RankedTensorType>(tensor);
        isa<StringAttr>(a) && ranked && ranked.hasStaticShape() &&
        ranked.getNumElements() == 0) {
      std::string dt = torchDtype(ranked.getElementType());
      if (dt.empty())
        return fail(op, "a tensor constant of an unsupported dtype");
      return "torch.empty(" + shapeTuple(ranked) + ", dtype=" + dt + ")";
    }
    // A tensor constant whose exact values kb-export recorded (params.json
    // "constants"): a literal list, every float printed with 17 digits
    // (a float32 widened to a double round-trips), so ModelNew's source
    // holds it exactly and loads no data file.
    if (auto dense = dyn_cast<DenseElementsAttr>(a)) {
      auto ranked = cast<RankedTensorType>(dense.getType());
      Type elem = ranked.getElementType();
      std::string dt = torchDtype(elem);
      if (dt.empty())
        return fail(op, "a tensor constant of an unsupported dtype");
      std::string values;
      llvm::raw_string_ostream vs(values);
      bool first = true;
      auto sep = [&] {
        vs << (first ? "" : ", ");
        first = false;
      };
      if (isa<FloatType>(elem)) {
        for (const APFloat &f : dense.getValues<APFloat>()) {
          bool lost;
          APFloat d = f;
          d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
          sep();
          vs << pyFloat(d.convertToDouble());
        }
      } else if (elem.isInteger(1)) {
        for (bool b : dense.getValues<bool>()) {
          sep();
          vs << (b ? "True" : "False");
        }
      } else if (auto it = dyn_cast<IntegerType>(elem)) {
        for (const APInt &i : dense.getValues<APInt>()) {
          sep();
          if (it.isUnsigned()) // uint8
            vs << i.getZExtValue();
          else
            vs << i.getSExtValue();
        }
      } else {
        return fail(op, "a tensor constant of an unsupported dtype");
      }
      return "torch.tensor([" + values + "], dtype=" + dt + ").reshape(" +
             shapeTuple(ranked) + ")";
    }
    if (auto s = dyn_cast<StringAttr>(a))
      return fail(op, "a non-scalar tensor constant (" + s.getValue() +
                          ") has no Python form: its exact values come from "
                          "kb-export's params.json (\"constants\", up to "
                          "262144 elements); re-export the graph with this "
                          "kb-export, or register a larger one as a buffer");
    return fail(op, "a constant kb-rewrite cannot print as Python");
  }

  std::string attribute(std::string base, llvm::StringRef path) {
    llvm::SmallVector<llvm::StringRef> parts;
    path.split(parts, '.');
    for (llvm::StringRef p : parts)
      base = isPythonIdentifier(p)
                 ? base + "." + p.str()
                 : "getattr(" + base + ", " + pyStringLiteral(p) + ")";
    return base;
  }

  /// An op of a tensor constant and other constants only (`torch.tensor(0.)
  /// .to("cuda")` in transformers' masking_utils), whose result nothing
  /// updates in place: computed once (Program.const), so no forward copies
  /// host memory to the GPU, which a CUDA graph capture cannot hold.
  /// The device operand's position of a 0-d `new_ones` / `new_zeros` /
  /// `new_full` whose users are all elementwise ops, made on the CPU: a
  /// 0-d CPU tensor is a scalar every elementwise CUDA op reads on the
  /// host, so no fill kernel runs for it (transformers' causal mask:
  /// `new_ones((), dtype=bool) & mask`, LLaMA). The capture failure first
  /// blamed on it was torch.ops.aten.__and__'s overload resolution
  /// (bench/probes/capture_and.py; kb_runtime.OpCall now calls the
  /// resolved overload).
  static std::optional<unsigned> hostScalarDevice(OpaqueOp o) {
    llvm::StringRef n = o.getName();
    std::optional<unsigned> device;
    if (n == "aten::new_ones" || n == "aten::new_zeros")
      device = 4;
    else if (n == "aten::new_full")
      device = 5;
    auto t = o->getNumResults() == 1
                 ? dyn_cast<RankedTensorType>(o->getResult(0).getType())
                 : nullptr;
    if (!device || !t || t.getRank() != 0 || o.getArgs().size() <= *device ||
        !isNone(o.getArgs()[*device]))
      return std::nullopt;
    static const llvm::StringRef kBitwise[] = {
        "aten::__and__",     "aten::__or__",     "aten::__xor__",
        "aten::bitwise_and", "aten::bitwise_or", "aten::bitwise_xor",
        "aten::logical_and", "aten::logical_or", "aten::logical_xor"};
    for (Operation *user : o->getResult(0).getUsers()) {
      auto opaque = dyn_cast<OpaqueOp>(user);
      bool elementwise =
          (opaque && llvm::is_contained(kBitwise, opaque.getName())) ||
          (isa<AtenOp>(user) && (getKind(user) == OpKind::Elementwise ||
                                 getKind(user) == OpKind::Broadcast));
      if (!elementwise || llvm::none_of(user->getOperands(), [&](Value v) {
            auto r = dyn_cast<RankedTensorType>(v.getType());
            return v != o->getResult(0) && r && r.getRank() > 0;
          }))
        return std::nullopt;
    }
    return device;
  }

  std::string argsWithDevice(ValueRange vs, unsigned device) {
    std::string out;
    for (auto [i, v] : llvm::enumerate(vs))
      out += (i ? ", " : "") + (i == device ? std::string("\"cpu\"") : use(v));
    return out;
  }

  /// The operand indices of an attention op's mask and is_causal flag when
  /// the mask is a tensor the same on every call (OpUtils'
  /// isGuardedConstant); the runtime may trade one for the other, so both
  /// must be there.
  std::optional<std::pair<unsigned, unsigned>> constantMaskOperands(AtenOp a) {
    const OpInfo *info = a.getInfo();
    if (!info || info->style != OpStyle::Attention)
      return std::nullopt;
    std::optional<unsigned> mask = info->argIndex("attn_mask");
    std::optional<unsigned> causal = info->argIndex("is_causal");
    unsigned n = a.getArgs().size();
    if (!mask || !causal || *mask >= n || *causal >= n)
      return std::nullopt;
    Value m = a.getArgs()[*mask];
    if (!isa<RankedTensorType>(m.getType()) || !isGuardedConstant(m))
      return std::nullopt;
    return std::make_pair(*mask, *causal);
  }

  bool fromConstantsOnly(AtenOp a) {
    bool tensorConstant = false;
    for (Value v : a.getArgs()) {
      Operation *d = v.getDefiningOp();
      if (auto l = dyn_cast_or_null<ListOp>(d)) {
        if (!llvm::all_of(l.getElements(), [](Value e) {
              return e.getDefiningOp<ConstantOp>();
            }))
          return false;
        continue;
      }
      if (!isa_and_nonnull<ConstantOp>(d))
        return false;
      tensorConstant |= isa<TensorType>(v.getType());
    }
    if (!tensorConstant || a.getInplace())
      return false;
    // Kernels write only their outputs (and buffers they update, which are
    // parameters): a launch reads the value as any op does.
    for (Value r : a->getResults())
      for (Operation *u : r.getUsers()) {
        auto ua = dyn_cast<AtenOp>(u);
        if (!(ua && !ua.getInplace()) && !isa<LaunchOp>(u))
          return false;
      }
    return true;
  }

  llvm::Error emitOp(Operation &op, llvm::raw_ostream &os) {
    const char *ind = "    ";
    if (auto c = dyn_cast<ConstantOp>(op)) {
      auto lit = literal(&op, c.getValue(), c.getType());
      if (!lit)
        return lit.takeError();
      // Scalars are inlined; tensors get a name.
      if (!isa<TensorType>(c.getType())) {
        names[c.getResult()] = *lit;
        return llvm::Error::success();
      }
      // A recorded tensor constant is built once, at import, as the trace
      // holds one tensor for every call (a mask of 512 x 512 is 262144
      // numbers: never per forward).
      if (isa<DenseElementsAttr>(c.getValue())) {
        std::string n = "_kb_const" + std::to_string(constants++);
        sites.push_back(n + " = " + *lit);
        os << ind << fresh(c.getResult()) << " = " << n << "\n";
        return llvm::Error::success();
      }
      os << ind << fresh(c.getResult()) << " = " << *lit << "\n";
      return llvm::Error::success();
    }
    if (auto p = dyn_cast<ParameterOp>(op)) {
      os << ind << fresh(p.getResult()) << " = "
         << attribute("self", p.getName()) << "\n";
      return llvm::Error::success();
    }
    if (auto l = dyn_cast<ListOp>(op)) {
      names[l.getResult()] = "[" + args(l.getElements()) + "]";
      return llvm::Error::success();
    }
    if (auto a = dyn_cast<AtenOp>(op)) {
      if (auto lib = libAnchors.find(&op); lib != libAnchors.end()) {
        // The launch it feeds is computed here, by K.lib: the library call
        // or this op then the region (the launch reads nothing else).
        auto [launch, index] = lib->second;
        std::string lhs = assign(launch);
        lhs = lhs.substr(0, lhs.size() - 3) + ", = ";
        os << ind << lhs << "K.lib(" << index << ", _kb_lib_" << index << ", "
           << site("aten", a.getName()) << ", (" << args(a.getArgs())
           << ",))\n";
        return llvm::Error::success();
      }
      std::string name = a.getName().str() + (a.getInplace() ? "_" : "");
      if (a.getInplace() && llvm::StringRef(a.getName()).ends_with("_"))
        name = a.getName().str();
      std::string argText = args(a.getArgs());
      if (auto cl = clConvs.find(&op); cl != clConvs.end()) {
        const char *tf32 = isTf32ForwardConv(a) ? ", tf32=True" : "";
        auto in = dyn_cast<RankedTensorType>(a.getArgs()[0].getType());
        if (in && in.getRank() == 3) {
          // A 1-d convolution has no channels-last format: the runtime runs
          // it as a 2-d one over [N, C, 1, L] when that layout is in use.
          os << ind << assign(&op) << "K.conv1d(" << cl->second << ", "
             << site("aten", name) << ", " << argText << tf32 << ")\n";
          return llvm::Error::success();
        }
        argText = args(a.getArgs(), [&](size_t i, std::string u) {
          return i < 2 ? "K.cl(" + std::to_string(cl->second) + ", " + u +
                             tf32 + ")"
                       : u;
        });
      }
      if (auto mc = constantMaskOperands(a)) {
        // A mask that is the same on every call (transformers' traced
        // masks): the runtime drops it once it has seen it all zeros, or
        // makes it is_causal once it has seen the causal pattern, as eager
        // transformers does outside a trace, so SDPA takes eager's fused
        // kernel instead of its math path.
        auto [m, c] = *mc;
        std::string n = std::to_string(attnMasks++);
        os << ind << "_m" << n << ", _c" << n << " = K.attn_mask(" << n << ", "
           << use(a.getArgs()[m]) << ", " << use(a.getArgs()[c]) << ")\n";
        argText = args(a.getArgs(), [&](size_t i, std::string u) {
          return i == m ? "_m" + n : i == c ? "_c" + n : u;
        });
      }
      if (fromConstantsOnly(a)) {
        os << ind << assign(&op) << "K.const(" << consts++
           << ", lambda: " << site("aten", name) << "(" << argText << "))\n";
        return llvm::Error::success();
      }
      os << ind << assign(&op) << site("aten", name) << "(" << argText << ")\n";
      return llvm::Error::success();
    }
    if (auto l = dyn_cast<LaunchOp>(op)) {
      if (libLaunches.count(&op))
        return llvm::Error::success(); // computed at its anchor
      auto it = regionIndex.find(l.getKernel().str());
      if (it == regionIndex.end())
        return fail(&op, "launch of an unknown kernel @" + l.getKernel());
      std::string tuple = args(l.getArgs());
      if (l.getArgs().size() == 1)
        tuple += ",";
      std::string lhs = assign(&op);
      if (l.getNumResults() == 1)
        lhs = lhs.substr(0, lhs.size() - 3) + ", = ";
      os << ind << lhs << "K.call(" << it->second << ", (" << tuple << "))\n";
      return llvm::Error::success();
    }
    if (auto o = dyn_cast<OpaqueOp>(op)) {
      llvm::StringRef n = o.getName();
      if (o->getNumRegions() != 0)
        return fail(&op, n + " has nested blocks (host control flow); "
                             "kb-rewrite rewrites straight-line graphs only");
      if (n == "prim::TupleConstruct") {
        std::string t = args(o.getArgs());
        os << ind << assign(&op) << "(" << t
           << (o.getArgs().size() == 1 ? ",)" : ")") << "\n";
        return llvm::Error::success();
      }
      if (n == "prim::TupleUnpack" || n == "prim::ListUnpack") {
        std::string lhs = assign(&op);
        if (o.getNumResults() == 1)
          lhs = lhs.substr(0, lhs.size() - 3) + ", = ";
        os << ind << lhs << args(o.getArgs()) << "\n";
        return llvm::Error::success();
      }
      auto [ns, opName] = n.split("::");
      if (opName.empty() || !isPythonIdentifier(ns) ||
          !isPythonIdentifier(opName.rtrim('_').empty() ? "x" : opName))
        return fail(&op, "no Python form for '" + n + "'");
      std::string lhs = assign(&op);
      std::string argText = args(o.getArgs());
      if (auto device = hostScalarDevice(o))
        argText = argsWithDevice(o.getArgs(), *device);
      os << ind << lhs << site(ns, opName) << "(" << argText << ")\n";
      return llvm::Error::success();
    }
    if (auto r = dyn_cast<RegionOp>(op)) {
      // A region left inline (not outlined): its ops, then its yields.
      Block &body = r.getBody().front();
      for (Operation &inner : body.without_terminator())
        if (auto err = emitOp(inner, os))
          return err;
      auto y = cast<YieldOp>(body.getTerminator());
      for (auto [res, v] : llvm::zip(r.getResults(), y.getValues()))
        names[res] = use(v);
      return llvm::Error::success();
    }
    if (auto y = dyn_cast<YieldOp>(op)) {
      os << ind << "return (" << args(y.getValues())
         << (y.getValues().size() == 1 ? ",)" : ")") << "\n";
      return llvm::Error::success();
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands() == 1)
        os << ind << "return " << use(ret.getOperand(0)) << "\n";
      else
        os << ind << "return (" << args(ret.getOperands()) << ")\n";
      return llvm::Error::success();
    }
    return fail(&op,
                "no Python form for '" + op.getName().getStringRef() + "'");
  }

  /// One call site object per op: it binds the traced positional operands
  /// to the schema (keyword-only ones like gelu's `approximate` or add's
  /// `alpha` included) on first use (kb_runtime.OpCall).
  std::string site(llvm::StringRef ns, llvm::StringRef opName) {
    std::string n = "_op" + std::to_string(sites.size()) + "_" + opName.str();
    sites.push_back(n + " = kb_runtime.OpCall(\"" + ns.str() + "\", \"" +
                    opName.str() + "\")");
    return n;
  }

  unsigned constants = 0;

public:
  std::vector<std::string> sites;
  /// Convolutions whose output feeds a channels-last-capable region.
  llvm::DenseMap<Operation *, unsigned> clConvs;
  /// Anchors with a library form of the launch they feed: that launch and
  /// its region index.
  llvm::DenseMap<Operation *, std::pair<Operation *, unsigned>> libAnchors;
  llvm::DenseSet<Operation *> libLaunches;

private:
  const std::map<std::string, unsigned> &regionIndex;
  llvm::DenseMap<Value, std::string> names;
  unsigned counter = 0;
  /// Program.const's keys.
  unsigned consts = 0;
  unsigned attnMasks = 0;
};

} // namespace

llvm::Expected<PythonProgram>
emitPython(ModuleOp module, const std::map<std::string, unsigned> &regionIndex,
           const std::set<std::string> &channelsLast,
           const std::set<std::string> &readsOnly,
           const std::set<std::string> &convert) {
  PythonProgram prog;
  Emitter emitter(regionIndex);
  // The convolution a channels-last-capable launch reads as its input 0.
  auto anchorConv = [](LaunchOp launch) -> AtenOp {
    if (launch.getArgs().empty())
      return nullptr;
    auto conv = launch.getArgs()[0].getDefiningOp<AtenOp>();
    if (!conv || conv.getName() != "_convolution" ||
        !launch.getArgs()[0].hasOneUse())
      return nullptr;
    return conv;
  };
  // Launches whose kernels run channels-last: "reads" variants (outputs in
  // the traced layout) always, full variants (channels-last outputs) while
  // every user of their results takes channels-last data as it is: the
  // graph's return, a later channels-last launch's operand other than its
  // convolution's output (_call_cl keeps or copies it), a convolution that
  // feeds a channels-last launch (its input converted anyway) or whose
  // users take its channels-last output, max pooling whose users do, and a
  // global average pool (its [N, C, 1, 1] is contiguous in both layouts).
  // Anything else (a view would see new strides, a kernel of the traced
  // layout would fail its guard) keeps the launch out. So a network of
  // such blocks runs channels-last from its input to its head, with no
  // transpose around each convolution (cuDNN's NCHW path makes two:
  // bench/NOTES.md, session 45).
  llvm::DenseMap<Operation *, AtenOp> clLaunches; // launch -> its anchor
  module.walk([&](LaunchOp launch) {
    if (channelsLast.count(launch.getKernel().str()))
      if (AtenOp conv = anchorConv(launch))
        clLaunches[launch] = conv;
  });
  // anchorConv's result has one use, input 0 of its launch.
  auto anchorsClLaunch = [&](AtenOp conv) {
    Value r = conv->getResult(0);
    return r.hasOneUse() && clLaunches.count(*r.user_begin()) &&
           clLaunches.lookup(*r.user_begin()) == conv;
  };
  std::function<bool(OpOperand &)> takesChannelsLast = [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp>(user))
      return true;
    if (auto launch = dyn_cast<LaunchOp>(user))
      return clLaunches.count(launch) &&
             use.getOperandNumber() > launch.getArgs().getBeginOperandIndex();
    auto aten = dyn_cast<AtenOp>(user);
    if (!aten || use.getOperandNumber() != 0)
      return false;
    StringRef op = aten.getName();
    // A convolution that anchors no channels-last launch (a downsampling
    // branch, its result another operand of one) reads channels-last
    // input as it is and returns channels-last output.
    if (op == "_convolution")
      return anchorsClLaunch(aten) ||
             llvm::all_of(aten->getResult(0).getUses(), takesChannelsLast);
    if (op == "max_pool2d")
      return llvm::all_of(aten->getResult(0).getUses(), takesChannelsLast);
    if (op == "adaptive_avg_pool2d") {
      auto t = dyn_cast<RankedTensorType>(aten->getResult(0).getType());
      return t && t.getRank() == 4 && t.getShape()[2] == 1 &&
             t.getShape()[3] == 1;
    }
    return false;
  };
  // Dropping a full variant can disqualify the users of others: to a
  // fixpoint.
  for (bool changed = true; changed;) {
    changed = false;
    auto launches = llvm::to_vector(llvm::make_first_range(clLaunches));
    for (Operation *launch : launches) {
      if (readsOnly.count(cast<LaunchOp>(launch).getKernel().str()))
        continue;
      bool keeps = llvm::all_of(launch->getResults(), [&](Value r) {
        return llvm::all_of(r.getUses(), takesChannelsLast);
      });
      if (!keeps) {
        clLaunches.erase(launch);
        changed = true;
      }
    }
  }
  module.walk([&](LaunchOp launch) {
    std::string name = launch.getKernel().str();
    if (auto it = clLaunches.find(launch); it != clLaunches.end()) {
      emitter.clConvs[it->second] = regionIndex.at(name);
      prog.channelsLast.insert(name);
      return;
    }
    // A region without a channels-last kernel whose convolution may still
    // run channels-last: the runtime gives the kernel an NCHW copy.
    if (!convert.count(name) || channelsLast.count(name))
      return;
    AtenOp conv = anchorConv(launch);
    // A library form (a cuDNN epilogue) keeps its anchor as it is.
    if (!conv || matchLibraryEpilogue(launch, module))
      return;
    emitter.clConvs[conv] = regionIndex.at(name);
    prog.convert.insert(name);
  });
  // Library forms (cuBLASLt / cuDNN epilogues), where no channels-last
  // variant competes for the anchor.
  module.walk([&](LaunchOp launch) {
    auto it = regionIndex.find(launch.getKernel().str());
    if (it == regionIndex.end())
      return;
    auto m = matchLibraryEpilogue(launch, module);
    if (!m || emitter.clConvs.count(m->anchor))
      return;
    emitter.libAnchors[m->anchor] = {launch, it->second};
    emitter.libLaunches.insert(launch);
    std::string helper = "def _kb_lib_" + std::to_string(it->second) + "(";
    for (auto [i, p] : llvm::enumerate(m->params))
      helper += (i ? ", " : "") + p;
    helper += "):\n    # " + m->row->library.str() + "\n    return (" +
              m->call + ",)\n";
    prog.library[launch.getKernel().str()] = {m->row->library.str(), m->call};
    prog.libraryHelpers += helper + "\n\n";
  });
  llvm::raw_string_ostream refs(prog.references);
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    Block &body = kernel.getBody().front();
    llvm::SmallVector<std::string> argNames;
    std::string header = "def _" + kernel.getSymName().str() + "_reference(";
    for (unsigned i = 0; i < body.getNumArguments(); ++i) {
      argNames.push_back("in" + std::to_string(i));
      header += (i ? ", " : "") + argNames.back();
    }
    header += "):";
    std::string one;
    llvm::raw_string_ostream oneOs(one);
    if (auto err = emitter.emitFunction(header, body, argNames, oneOs))
      return std::move(err);
    oneOs.flush();
    prog.referenceOf[kernel.getSymName().str()] = one;
    refs << one << "\n\n";
  }
  refs.flush();

  func::FuncOp forward;
  for (auto f : module.getOps<func::FuncOp>())
    if (f.getName() == "forward")
      forward = f;
  if (!forward)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the module has no forward function");
  Block &entry = forward.getBody().front();
  llvm::SmallVector<std::string> argNames;
  std::string header = "def _kb_forward(self, K";
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    argNames.push_back("a" + std::to_string(i));
    header += ", " + argNames.back();
  }
  header += "):";
  prog.numArgs = entry.getNumArguments();
  llvm::raw_string_ostream fwd(prog.forward);
  if (auto err = emitter.emitFunction(header, entry, argNames, fwd))
    return std::move(err);
  fwd.flush();
  for (const std::string &line : emitter.sites)
    prog.sites += line + "\n";
  return prog;
}

} // namespace kb
