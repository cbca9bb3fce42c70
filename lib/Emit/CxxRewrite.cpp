//===- CxxRewrite.cpp - Fused calls for libtorch C++ chains ---------------===//

#include "kb/Emit/CxxRewrite.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Support/InputFile.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstdio>
#include <set>

using llvm::formatv;
using llvm::StringRef;

namespace kb {
namespace {

/// A fused function's section in kb_kernels.h and .cu, so that a later run
/// into the same files keeps the functions it does not generate again.
std::string beginMark(llvm::StringRef name) {
  return "// kb-rewrite: begin " + name.str() + "\n";
}
std::string endMark(llvm::StringRef name) {
  return "// kb-rewrite: end " + name.str() + "\n";
}

const OpInfo *rowOf(const CxxPlanOp &op) {
  for (const OpInfo *row : lookupOverloads(op.op))
    if (row->overload == op.overload)
      return row;
  return nullptr;
}

std::string operandName(const CxxRewritePlan &p, int idx) {
  const CxxOperand &o = p.operands[idx];
  switch (o.kind) {
  case CxxOperand::Tensor:
  case CxxOperand::ModuleTensor:
    return "a" + std::to_string(idx);
  case CxxOperand::Scalar:
  case CxxOperand::ModuleOption:
    return "s" + std::to_string(idx);
  case CxxOperand::String:
    return o.text;
  case CxxOperand::Module:
    return "m" + std::to_string(idx);
  case CxxOperand::Value: // named by its position (valueName)
    return "";
  }
  return "";
}

/// A literal of the source's number text (a default of the op table) as
/// the graph path writes it; "" when it is not a number.
std::string floatLiteral(StringRef text) {
  double v = 0;
  if (text.getAsDouble(v))
    return "";
  return codegen::floatLiteral(v);
}

bool isTensor(const CxxOperand &o) {
  return o.kind == CxxOperand::Tensor || o.kind == CxxOperand::ModuleTensor;
}

/// The expression a module row substitutes for its op, or "".
StringRef moduleCuda(const CxxRewritePlan &p, const CxxPlanOp &op) {
  if (op.module < 0)
    return "";
  StringRef type = p.operands[op.module].type;
  const CxxModuleInfo *m = cxxModule(
      type.rsplit("::").second.empty() ? type : type.rsplit("::").second);
  return m ? m->cuda : "";
}

/// The result of op `j` under `prefix` ("t" in the element function, "r" in
/// the fallback), or the chain's input `in` when j < 0.
std::string valueName(int j, StringRef prefix, StringRef in) {
  return j < 0 ? in.str() : prefix.str() + std::to_string(j);
}

/// Whether an op reads anything but the previous op's result as the
/// chain's value (`x * torch::sigmoid(x)`).
bool readsTwice(const CxxRewritePlan &p) {
  return llvm::any_of(p.ops,
                      [](const CxxPlanOp &o) { return o.selfBack != 1; }) ||
         llvm::any_of(p.operands, [](const CxxOperand &o) {
           return o.kind == CxxOperand::Value;
         });
}

/// One op (number k of the chain) as a device expression over `self`, from
/// its table row (or its module row's expression).
llvm::Expected<std::string> deviceExpr(const CxxRewritePlan &p,
                                       const CxxPlanOp &op, size_t pos,
                                       const std::string &self) {
  if (StringRef cuda = moduleCuda(p, op); !cuda.empty()) {
    std::vector<std::string> names = {"self"}, values = {self};
    for (const auto &[name, idx] : op.named) {
      names.push_back(name);
      values.push_back(isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                                 : operandName(p, idx));
    }
    auto expr = codegen::expandTemplate(
        cuda, names,
        [&](size_t k) -> llvm::Expected<std::string> { return values[k]; });
    if (!expr)
      return expr.takeError();
    if (expr->find('{') != std::string::npos)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "module expression '" + cuda.str() +
                                         "' names an unknown operand");
    return expr;
  }
  const OpInfo *row = rowOf(op);
  if (!row || row->cuda.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + op.op + "' has no CUDA expression");
  return codegen::expandTemplate(
      *row, [&](size_t k) -> llvm::Expected<std::string> {
        const ArgSpec &arg = row->args[k];
        std::string val;
        int idx = k == 0 ? -2 : op.args[k - 1];
        if (k == 0) {
          val = self;
        } else if (idx >= 0 && p.operands[idx].kind == CxxOperand::Value) {
          val = valueName((int)pos - p.operands[idx].back, "t", "x");
        } else if (idx >= 0 && p.operands[idx].kind == CxxOperand::String) {
          // A string literal of the source ("tanh"): its first character.
          val = deviceStringOption(StringRef(p.operands[idx].text).trim('"'));
        } else if (idx >= 0) {
          val = isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                          : operandName(p, idx);
        } else if (!arg.defaultValue.empty()) {
          // A string default ("none"): the helpers take its first character.
          val = arg.defaultValue.front() == '"'
                    ? deviceStringOption(StringRef(arg.defaultValue).trim('"'))
                    : floatLiteral(arg.defaultValue);
        } else if (arg.optional) {
          // An absent bound is no bound on that side.
          val = codegen::absentOperand(arg).value_or("");
        }
        if (val.empty())
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "no value for operand '" + arg.name +
                                             "' of '" + op.op + "'");
        return val;
      });
}

/// The chain through ATen, exactly as written (in-place ops stay in place):
/// the guard and autograd fallback.
std::string referenceBody(const CxxRewritePlan &p) {
  if (readsTwice(p)) {
    // The chain's values are read twice: each op's result is kept (no
    // in-place ops: the plan refuses those here).
    std::string s;
    for (size_t k = 0; k < p.ops.size(); ++k) {
      const CxxPlanOp &op = p.ops[k];
      std::string self = valueName((int)k - op.selfBack, "r", "in");
      std::string r = "    at::Tensor r" + std::to_string(k) + " = ";
      if (op.module >= 0) {
        s += r + operandName(p, op.module) + ".forward(" + self + ");\n";
        continue;
      }
      size_t given = 0;
      for (size_t a = 0; a < op.args.size(); ++a)
        if (op.args[a] >= 0)
          given = a + 1;
      const OpInfo *row = rowOf(op);
      std::string args;
      for (size_t a = 0; a < given; ++a) {
        int idx = op.args[a];
        args +=
            ", " + (idx < 0 ? (row ? row->args[a + 1].defaultValue : "")
                    : p.operands[idx].kind == CxxOperand::Value
                        ? valueName((int)k - p.operands[idx].back, "r", "in")
                        : operandName(p, idx));
      }
      s += r + "at::" + op.op + "(" + self + args + ");\n";
    }
    return s + "    return r" + std::to_string(p.ops.size() - 1) + ";\n";
  }
  std::string s = "    at::Tensor t = in;\n";
  for (const CxxPlanOp &op : p.ops) {
    if (op.module >= 0) { // the module itself, options and all
      s += "    t = " + operandName(p, op.module) + ".forward(t);\n";
      continue;
    }
    // C++ calls omit trailing operands only: one left out before a given
    // one (set through an options object) passes the schema default.
    size_t given = 0;
    for (size_t k = 0; k < op.args.size(); ++k)
      if (op.args[k] >= 0)
        given = k + 1;
    const OpInfo *row = rowOf(op);
    std::string args;
    for (size_t k = 0; k < given; ++k)
      args += (args.empty() ? "" : ", ") +
              (op.args[k] >= 0 ? operandName(p, op.args[k])
               : row           ? row->args[k + 1].defaultValue
                               : std::string());
    if (op.inPlace)
      s += "    t." + op.op + "_(" + args + ");\n";
    else
      s += "    t = at::" + op.op + "(t" + (args.empty() ? "" : ", " + args) +
           ");\n";
  }
  return s + "    return t;\n";
}

std::string params(const CxxRewritePlan &p) {
  std::string s = "const at::Tensor& in";
  for (size_t i = 0; i < p.operands.size(); ++i)
    if (p.operands[i].kind == CxxOperand::Tensor)
      s += ", const at::Tensor& a" + std::to_string(i);
    else if (p.operands[i].kind == CxxOperand::Scalar)
      s += ", const at::Scalar& s" + std::to_string(i);
    else if (p.operands[i].kind == CxxOperand::Module)
      s += ", " + p.operands[i].type + "& m" + std::to_string(i);
  return s;
}

const char *kSupport = R"(namespace kb_rewrite {
namespace detail {

// How a tensor operand broadcasts against the chain's input (a contiguous
// float32 tensor): mode 0 same layout, 1 one value, 2 one varying dim of
// stride 1 (a per-channel bias), 3 general strides.
struct Operand {
  const float* p;
  int mode, rank;
  bool narrow; // every index fits 32 bits: cheaper division
  long long inner, count;
  long long size[8], stride[8];
  __device__ __forceinline__ float load(long long i) const {
    switch (mode) {
    case 0: return p[i];
    case 1: return p[0];
    case 2:
      return narrow ? p[((unsigned)i / (unsigned)inner) % (unsigned)count]
                    : p[(i / inner) % count];
    default: {
      long long off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        off += (i % size[d]) * stride[d];
        i /= size[d];
      }
      return p[off];
    }
    }
  }
  // The operand at the 4 elements of float4 q (vec4() below holds).
  __device__ __forceinline__ float4 load4(long long q) const {
    if (mode == 0)
      return reinterpret_cast<const float4*>(p)[q];
    const float v = load(4 * q);
    return make_float4(v, v, v, v);
  }
};

// Whether the float4 kernel may run: 16-byte aligned whole float4s, and
// every operand the same over each float4 or read as float4s.
inline bool vec4(const at::Tensor& t) {
  return t.numel() % 4 == 0 &&
         reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}
inline bool vec4(const Operand& o) {
  return o.mode == 1 || (o.mode == 2 && o.inner % 4 == 0) ||
         (o.mode == 0 && reinterpret_cast<uintptr_t>(o.p) % 16 == 0);
}

// The fused kernel runs only on what it was written for; anything else runs
// the original ATen ops.
inline bool usable(const at::Tensor& in) {
  return in.defined() && in.is_cuda() && in.scalar_type() == at::kFloat &&
         in.is_contiguous() && in.numel() > 0 && in.dim() <= 8;
}

inline bool needsGrad(std::initializer_list<const at::Tensor*> ts) {
  if (!c10::GradMode::is_enabled())
    return false;
  for (const at::Tensor* t : ts)
    if (t->defined() && t->requires_grad())
      return true;
  return false;
}

// False when the op's result would not have `in`'s shape, dtype and device.
inline bool operand(const at::Tensor& o, const at::Tensor& in, Operand& out) {
  if (!o.defined() || !o.is_cuda() || o.get_device() != in.get_device() ||
      o.scalar_type() != at::kFloat || o.dim() > in.dim())
    return false;
  const int rank = (int)in.dim(), lead = rank - (int)o.dim();
  out = Operand{};
  out.p = o.data_ptr<float>();
  out.rank = rank;
  out.narrow = in.numel() < (1LL << 32);
  bool full = true, zero = true;
  int varying = 0, dim = -1;
  long long expect = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const long long size = in.size(d);
    long long stride = 0;
    if (d >= lead) {
      const long long os = o.size(d - lead);
      if (os != size && os != 1)
        return false;
      stride = os == 1 ? 0 : o.stride(d - lead);
    }
    out.size[d] = size;
    out.stride[d] = stride;
    if (size != 1) {
      full = full && stride == expect;
      if (stride != 0) {
        zero = false;
        ++varying;
        dim = d;
      }
    }
    expect *= size;
  }
  if (full) {
    out.mode = 0;
  } else if (zero) {
    out.mode = 1;
  } else if (varying == 1 && out.stride[dim] == 1) {
    out.mode = 2;
    out.count = in.size(dim);
    out.inner = 1;
    for (int d = dim + 1; d < rank; ++d)
      out.inner *= in.size(d);
  } else {
    out.mode = 3;
  }
  return true;
}

// A module's per-channel tensor (batch norm statistics): one float32 value
// per channel (dim 1) of `in`, contiguous on its device.
inline bool perChannel(const at::Tensor& v, const at::Tensor& in) {
  return v.defined() && v.dim() == 1 && in.dim() >= 2 &&
         v.size(0) == in.size(1) && v.is_cuda() &&
         v.get_device() == in.get_device() && v.scalar_type() == at::kFloat &&
         v.is_contiguous();
}

// The channel (dim 1) of element i of a contiguous tensor; one division
// per element for all per-channel operands, in 32 bits when it fits.
__device__ __forceinline__ long long channelOf(long long i, long long inner,
                                               long long channels) {
  return i < (1LL << 32) && inner < (1LL << 32)
             ? (long long)(((unsigned)i / (unsigned)inner) % (unsigned)channels)
             : (i / inner) % channels;
}

inline unsigned blocks(long long n) {
  long long b = (n + 255) / 256;
  return (unsigned)(b < (1LL << 30) ? b : (1LL << 30));
}

} // namespace detail
} // namespace kb_rewrite
)";

/// The chain's place, by file name only: generated files stay the same
/// wherever the sources are checked out.
std::string where(const CxxChain &c) {
  return formatv("{0}:{1} in {2}: {3}", llvm::sys::path::filename(c.file),
                 c.anchor.line, c.function, c.summary());
}

} // namespace

namespace {
std::string signatureOf(const CxxRewritePlan &p) {
  std::string key = p.writesInput ? "inplace;" : "out;";
  for (const CxxPlanOp &op : p.ops) {
    key += op.op + "." + op.overload + (op.inPlace ? "_" : "") +
           (op.selfBack != 1 ? "@" + std::to_string(op.selfBack) : "") + "(";
    if (op.module >= 0) {
      key += p.operands[op.module].type;
      for (const auto &[name, idx] : op.named)
        key += " " + name;
      for (const auto &[name, val] : op.pinned)
        key += " " + name + "=" + val;
    }
    for (int idx : op.args)
      key += idx < 0 ? std::string("-")
             : p.operands[idx].kind == CxxOperand::Value
                 ? "@" + std::to_string(p.operands[idx].back)
             : p.operands[idx].kind == CxxOperand::String
                 ? p.operands[idx].text
                 : std::to_string(idx) +
                       (p.operands[idx].kind == CxxOperand::Tensor ? "t" : "s");
    key += ")";
  }
  return key;
}
} // namespace

std::string cxxFusedName(const CxxRewritePlan &p) {
  std::string key = signatureOf(p);
  char buf[32];
  std::snprintf(buf, sizeof buf, "kb_fused_%08llx",
                (unsigned long long)(llvm::xxh3_64bits(key) & 0xffffffffULL));
  return buf;
}

llvm::Expected<CxxRewriteOutput>
rewriteCxx(const CxxAnalysis &analysis,
           const std::map<std::string, std::string> &includeFor) {
  CxxRewriteOutput out;
  std::map<std::string, clang::tooling::Replacements> reps;
  std::map<std::string, unsigned> firstEdit;
  std::set<std::string> defined;
  std::string decls, defs;
  bool usesModules = false; // the header then needs torch::nn's classes
  for (const CxxChain &c : analysis.chains) {
    const CxxRewritePlan &p = c.plan;
    if (!p.whyNot.empty()) {
      out.functions.push_back("");
      continue;
    }
    std::string name = cxxFusedName(p);
    for (const CxxOperand &o : p.operands)
      usesModules |= o.kind == CxxOperand::Module;
    if (defined.insert(name).second) {
      // The chain per element, called by the scalar and the float4 kernel.
      std::string body;
      for (size_t k = 0; k < p.ops.size(); ++k) {
        auto e = deviceExpr(p, p.ops[k], k,
                            valueName((int)k - p.ops[k].selfBack, "t", "x"));
        if (!e)
          return e.takeError();
        body += "  const float t" + std::to_string(k) + " = " + *e +
                "; // aten::" + p.ops[k].op + "\n";
      }
      std::string kparams, kargs, eparams = "float x";
      // Per operand: its element-function argument in the scalar kernel, in
      // lane L of the float4 kernel, and the float4 kernel's loads.
      std::string scalarArgs, loads4, vecGuards;
      std::vector<std::string> laneArgs(4);
      const char *lanes[] = {"x", "y", "z", "w"};
      std::string guards, tensors = "&in", moduleGuards, derived;
      bool perChannel = false;
      for (size_t k = 0; k < p.ops.size(); ++k) {
        const CxxPlanOp &op = p.ops[k];
        if (op.module < 0)
          continue;
        std::string m = operandName(p, op.module);
        if (op.evalOnly)
          moduleGuards +=
              "  if (" + m + ".is_training())\n    return reference();\n";
        for (const auto &[name, val] : op.pinned)
          moduleGuards += "  if (" + m + ".options." + name + "() != " + val +
                          ")\n    return reference();\n";
        // Only the first op's input can be seen by others: a module that
        // would write it runs as written.
        if (op.inplaceOpt && k == 0)
          moduleGuards +=
              "  if (" + m + ".options.inplace())\n    return reference();\n";
      }
      for (size_t i = 0; i < p.operands.size(); ++i) {
        std::string I = std::to_string(i);
        const CxxOperand &o = p.operands[i];
        if (o.kind == CxxOperand::ModuleOption)
          derived += "  const at::Scalar s" + I + " = " +
                     operandName(p, o.owner) + ".options." + o.text + "();\n";
        else if (o.kind == CxxOperand::ModuleTensor)
          derived += "  const at::Tensor& a" + I + " = " +
                     operandName(p, o.owner) + "." + o.text + ";\n";
      }
      for (size_t i = 0; i < p.operands.size(); ++i) {
        std::string I = std::to_string(i);
        if (isTensor(p.operands[i]) ||
            p.operands[i].kind == CxxOperand::Scalar ||
            p.operands[i].kind == CxxOperand::ModuleOption)
          eparams +=
              isTensor(p.operands[i]) ? ", float v" + I : ", float s" + I;
        if (p.operands[i].kind == CxxOperand::ModuleTensor) {
          scalarArgs += ", a" + I + "[ch]";
          loads4 += "    const float v" + I + " = a" + I + "[ch];\n";
          for (int l = 0; l < 4; ++l)
            laneArgs[l] += ", v" + I;
        } else if (isTensor(p.operands[i])) {
          scalarArgs += ", a" + I + ".load(i)";
          loads4 += "    const float4 v" + I + " = a" + I + ".load4(q);\n";
          for (int l = 0; l < 4; ++l)
            laneArgs[l] += ", v" + I + "." + lanes[l];
          vecGuards += " && kb_rewrite::detail::vec4(o" + I + ")";
        } else if (p.operands[i].kind == CxxOperand::Scalar ||
                   p.operands[i].kind == CxxOperand::ModuleOption) {
          scalarArgs += ", s" + I;
          for (int l = 0; l < 4; ++l)
            laneArgs[l] += ", s" + I;
        }
        if (p.operands[i].kind == CxxOperand::ModuleTensor) {
          kparams += ", const float* __restrict__ a" + I;
          kargs += ", a" + I + ".data_ptr<float>()";
          tensors += ", &a" + I;
          guards += "  if (!kb_rewrite::detail::perChannel(a" + I +
                    ", in))\n    return reference();\n";
          perChannel = true;
        } else if (isTensor(p.operands[i])) {
          kparams += ", kb_rewrite::detail::Operand a" + I;
          kargs += ", o" + I;
          tensors += ", &a" + I;
          guards += "  kb_rewrite::detail::Operand o" + I +
                    ";\n  if (!kb_rewrite::detail::operand(a" + I + ", in, o" +
                    I + "))\n    return reference();\n";
        } else if (p.operands[i].kind == CxxOperand::Scalar ||
                   p.operands[i].kind == CxxOperand::ModuleOption) {
          kparams += ", float s" + I;
          kargs += ", s" + I + ".to<float>()";
        }
      }
      std::string chLine, chLine4;
      if (perChannel) {
        kparams += ", long long inner, long long channels";
        kargs += ", inner, in.size(1)";
        chLine = "    const long long ch = kb_rewrite::detail::channelOf(i, "
                 "inner, channels);\n";
        chLine4 = "    const long long ch = kb_rewrite::detail::channelOf(4 * "
                  "q, inner, channels);\n";
        vecGuards += " && inner % 4 == 0";
      }
      std::string sig = "at::Tensor " + name + "(" + params(p) + ")";
      decls += beginMark(name) + "/// " + where(c) + "\n" + sig + ";\n" +
               endMark(name) + "\n";
      defs += beginMark(name);
      size_t defsStart = defs.size();
      defs += "// " + where(c) + "\n";
      defs += "// In and out may be the same tensor (in-place chains): no "
              "__restrict__.\n";
      defs += "static __device__ __forceinline__ float " + name + "_element(" +
              eparams + ") {\n" + body + "  return t" +
              std::to_string(p.ops.size() - 1) + ";\n}\n\n";
      defs += "__global__ void __launch_bounds__(256)\n" + name +
              "_kernel(const float* in, float* out, long long n" + kparams +
              ") {\n  for (long long i = (long long)blockIdx.x * blockDim.x + "
              "threadIdx.x; i < n;\n       i += (long long)gridDim.x * "
              "blockDim.x) {\n" +
              chLine + "    out[i] = " + name + "_element(in[i]" + scalarArgs +
              ");\n  }\n}\n\n";
      // A float4 per thread (16-byte accesses), operands loaded once per
      // float4 where the 4 lanes share them.
      std::string lanesText;
      for (int l = 0; l < 4; ++l)
        lanesText += std::string("    r.") + lanes[l] + " = " + name +
                     "_element(x." + lanes[l] + laneArgs[l] + ");\n";
      defs += "__global__ void __launch_bounds__(256)\n" + name +
              "_kernel4(const float* in, float* out, long long nv" + kparams +
              ") {\n  for (long long q = (long long)blockIdx.x * blockDim.x + "
              "threadIdx.x; q < nv;\n       q += (long long)gridDim.x * "
              "blockDim.x) {\n    const float4 x = reinterpret_cast<const "
              "float4*>(in)[q];\n" +
              chLine4 + loads4 + "    float4 r;\n" + lanesText +
              "    reinterpret_cast<float4*>(out)[q] = r;\n  }\n}\n\n";
      defs +=
          sig + " {\n  auto reference = [&]() {\n" + referenceBody(p) +
          "  };\n  if (kb_rewrite::testing::forceReference() ||\n"
          "      !kb_rewrite::detail::usable(in))\n    return "
          "reference();\n" +
          moduleGuards + derived + "  if (kb_rewrite::detail::needsGrad({" +
          tensors + "}))\n    return reference();\n" + guards +
          "  c10::cuda::CUDAGuard device(in.device());\n" +
          (p.writesInput ? "  at::Tensor out = in; // the chain was in place\n"
                         : "  at::Tensor out = at::empty_like(in);\n") +
          (perChannel ? "  const long long inner = in.numel() / (in.size(0) * "
                        "in.size(1));\n"
                      : "") +
          "  const auto stream = at::cuda::getCurrentCUDAStream();\n"
          "  const float* pin = in.data_ptr<float>();\n"
          "  float* pout = out.data_ptr<float>();\n"
          "  if (kb_rewrite::detail::vec4(in) && "
          "kb_rewrite::detail::vec4(out)" +
          vecGuards + ")\n    " + name +
          "_kernel4<<<kb_rewrite::detail::blocks(in.numel() / 4), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel() / 4" +
          kargs + ");\n  else\n    " + name +
          "_kernel<<<kb_rewrite::detail::blocks(in.numel()), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel()" +
          kargs + ");\n" +
          "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
          "  ++kb_rewrite::testing::fusedLaunches();\n  return out;\n}\n\n";
      // The hash skips the first comment line (where the chain was found):
      // moving code around does not change the kernel.
      StringRef text = StringRef(defs).drop_front(defsStart);
      text = text.drop_until([](char ch) { return ch == '\n'; });
      char hash[32];
      std::snprintf(hash, sizeof hash, "xxh3:%016llx",
                    (unsigned long long)llvm::xxh3_64bits(text));
      defs += endMark(name);
      std::string chain; // the ops replaced (a partial plan: its last ones)
      for (const CxxPlanOp &o : p.ops)
        chain += (chain.empty() ? "" : " -> ") + o.op + (o.inPlace ? "_" : "");
      out.lock[name] = {signatureOf(p), hash, chain,
                        formatv("{0}:{1} in {2}",
                                llvm::sys::path::filename(c.file),
                                c.anchor.line, c.function)};
    }
    std::string call = "kb_rewrite::" + name + "(" + p.input;
    for (const CxxOperand &o : p.operands)
      if (o.kind == CxxOperand::Tensor || o.kind == CxxOperand::Scalar ||
          o.kind == CxxOperand::Module)
        call += ", " + o.text;
    call += ")";
    clang::tooling::Replacement r(c.file, p.begin, p.end - p.begin,
                                  p.prefix + call + p.suffix);
    if (auto err = reps[c.file].add(r))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          formatv(
              "{0}:{1}: conflicting replacements ({2}); nothing was written",
              c.file, c.anchor.line, llvm::toString(std::move(err))));
    unsigned firstByte = p.begin;
    for (auto [b, e] : p.removals) {
      if (auto err = reps[c.file].add(
              clang::tooling::Replacement(c.file, b, e - b, "")))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            formatv("{0}:{1}: conflicting replacements ({2}); nothing was "
                    "written",
                    c.file, c.anchor.line, llvm::toString(std::move(err))));
      firstByte = std::min(firstByte, b);
    }
    auto [it, fresh] = firstEdit.emplace(c.file, firstByte);
    if (!fresh)
      it->second = std::min(it->second, firstByte);
    out.functions.push_back(name);
    ++out.rewritten;
  }

  for (auto &[file, fileReps] : reps) {
    auto buf = readInputFile(file);
    if (!buf)
      return buf.takeError();
    StringRef code = (*buf)->getBuffer();
    // The include goes after the last #include before the first edit.
    size_t insertAt = 0;
    for (size_t pos = 0; pos < firstEdit[file] && pos < code.size();) {
      size_t eol = code.find('\n', pos);
      StringRef line =
          code.slice(pos, eol == StringRef::npos ? code.size() : eol);
      if (line.ltrim().starts_with("#include"))
        insertAt = eol == StringRef::npos ? code.size() : eol + 1;
      if (eol == StringRef::npos)
        break;
      pos = eol + 1;
    }
    auto inc = includeFor.find(file);
    std::string spelling =
        inc == includeFor.end() ? "kb_kernels.h" : inc->second;
    std::string text =
        "#include \"" + spelling + "\" // kb-rewrite: fused kernels\n";
    if (insertAt == code.size() && !code.empty() && code.back() != '\n')
      text = "\n" + text;
    if (auto err =
            fileReps.add(clang::tooling::Replacement(file, insertAt, 0, text)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     file + ": " +
                                         llvm::toString(std::move(err)));
    auto rewritten = clang::tooling::applyAllReplacements(code, fileReps);
    if (!rewritten)
      return rewritten.takeError();
    out.files[file] = *rewritten;
  }

  out.decls = std::move(decls);
  out.defs = std::move(defs);
  out.usesModules = usesModules;
  assembleCxxKernels(out);
  return out;
}

void assembleCxxKernels(CxxRewriteOutput &out) {
  out.header =
      "// Generated by kb-rewrite: fused pointwise chains of libtorch C++ "
      "code.\n"
      "// Each function runs one CUDA kernel when its guards hold and the\n"
      "// chain's original ATen ops otherwise (also when autograd needs "
      "them).\n"
      "#pragma once\n#include <ATen/ATen.h>\n" +
      std::string(out.usesModules ? "#include <torch/nn.h>\n" : "") +
      "\nnamespace kb_rewrite {\n\n" + out.decls +
      "namespace testing {\n"
      "/// For kb-verify --cxx: run every function's original ATen ops, and\n"
      "/// count the fused kernels launched.\n"
      "bool &forceReference();\nunsigned long long &fusedLaunches();\n"
      "} // namespace testing\n\n} // namespace kb_rewrite\n";
  out.source =
      "// Generated by kb-rewrite (see kb_kernels.h).\n"
      "#include \"kb_kernels.h\"\n\n#include <ATen/cuda/CUDAContext.h>\n"
      "#include <c10/core/GradMode.h>\n#include "
      "<c10/cuda/CUDAException.h>\n#include <c10/cuda/CUDAGuard.h>\n\n" +
      cudaPrelude().str() + "\n" + kSupport + "\nnamespace kb_rewrite {\n\n" +
      "namespace testing {\n"
      "bool &forceReference() {\n  static bool force = false;\n"
      "  return force;\n}\n"
      "unsigned long long &fusedLaunches() {\n"
      "  static unsigned long long n = 0;\n  return n;\n}\n"
      "} // namespace testing\n\n" +
      out.defs + "} // namespace kb_rewrite\n";
}

unsigned keepEarlierKernels(CxxRewriteOutput &out, StringRef header,
                            StringRef source) {
  // Sections of the earlier files, by function: decls from the header,
  // definitions from the source; a function this run generates again is
  // this run's.
  auto sections = [](StringRef text) {
    std::map<std::string, std::string> found;
    StringRef begin = "// kb-rewrite: begin ";
    for (size_t pos = text.find(begin); pos != StringRef::npos;
         pos = text.find(begin, pos + 1)) {
      size_t nameEnd = text.find('\n', pos);
      if (nameEnd == StringRef::npos)
        break;
      std::string name = text.slice(pos + begin.size(), nameEnd).trim().str();
      std::string end = endMark(name);
      size_t stop = text.find(end, nameEnd);
      if (stop == StringRef::npos)
        break; // a cut file: what follows is not a whole section
      found[name] = text.slice(pos, stop + end.size()).str();
    }
    return found;
  };
  std::map<std::string, std::string> decls = sections(header),
                                     defs = sections(source);
  std::set<std::string> now(out.functions.begin(), out.functions.end());
  unsigned kept = 0;
  for (const auto &[name, decl] : decls) {
    auto def = defs.find(name);
    if (now.count(name) || def == defs.end())
      continue;
    out.decls += decl + "\n";
    out.defs += def->second;
    ++kept;
  }
  if (header.contains("#include <torch/nn.h>"))
    out.usesModules = true;
  assembleCxxKernels(out);
  return kept;
}

std::string cxxLockJson(const CxxRewriteOutput &out) {
  llvm::json::Object kernels;
  for (const auto &[name, e] : out.lock) {
    llvm::json::Object k{{"signature", e.signature}, {"source_hash", e.hash},
                         {"origin", "codegen"},      {"verdict", e.verdict},
                         {"chain", e.chain},         {"first_seen_at", e.where}};
    if (!e.evidence.empty()) {
      llvm::json::Object ev;
      for (const char *key : {"cases", "fused_cases", "fallback_cases",
                              "skipped_shapes", "max_err", "detail"})
        if (const llvm::json::Value *v = e.evidence.get(key))
          ev[key] = *v;
      k["evidence"] = std::move(ev);
    }
    kernels[name] = std::move(k);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << formatv(
      "{0:2}",
      llvm::json::Value(llvm::json::Object{
          {"schema_version", 1},
          {"toolchain", llvm::json::Object{{"kb_rewrite", "0.1.0"},
                                           {"llvm", LLVM_VERSION_STRING}}},
          {"kernels", std::move(kernels)}}));
  return text + "\n";
}

std::set<std::string> lockedRejections(StringRef lockText) {
  std::set<std::string> out;
  auto parsed = llvm::json::parse(lockText);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return out; // checkCxxLock reports it
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *kernels =
      root ? root->getObject("kernels") : nullptr;
  if (!kernels)
    return out;
  for (const auto &[name, e] : *kernels)
    if (const llvm::json::Object *k = e.getAsObject())
      if (k->getString("verdict").value_or("") == "rejected")
        out.insert(name.str());
  return out;
}

llvm::Error checkCxxLock(StringRef lockPath, StringRef lockText,
                         const CxxRewriteOutput &out) {
  auto parsed = llvm::json::parse(lockText);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        lockPath + ": not a lock file: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *kernels =
      parsed->getAsObject() ? parsed->getAsObject()->getObject("kernels")
                            : nullptr;
  if (!kernels)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   lockPath + ": no \"kernels\" object");
  std::string problems;
  for (const auto &[name, e] : out.lock) {
    const llvm::json::Object *k = kernels->getObject(name);
    if (!k)
      problems += "\n  " + name + " (" + e.where + ": " + e.chain +
                  ") is not in the lock";
    else if (k->getString("source_hash").value_or("") != e.hash)
      problems += "\n  " + name + " (" + e.where +
                  "): the generated source "
                  "differs from the locked one (" +
                  k->getString("source_hash").value_or("?").str() + " vs " +
                  e.hash + ")";
  }
  if (problems.empty())
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      lockPath +
          ": the rewrite does not match the lock file; nothing was "
          "written (run with --update-lock to accept the new kernels):" +
          problems);
}

std::string cxxRewriteJson(const CxxAnalysis &analysis,
                           const CxxRewriteOutput &out,
                           const std::vector<std::string> &written) {
  llvm::json::Array chains;
  for (size_t i = 0; i < analysis.chains.size(); ++i) {
    const CxxChain &c = analysis.chains[i];
    std::string fn = i < out.functions.size() ? out.functions[i] : "";
    llvm::json::Array ops;
    for (const CxxOpSite &o : c.ops)
      ops.push_back(o.op + (o.inPlace ? "_" : ""));
    llvm::json::Object o{{"file", c.file},
                         {"function", c.function},
                         {"line", c.anchor.line},
                         {"anchor", c.anchor.op},
                         {"ops", std::move(ops)},
                         {"summary", c.summary()},
                         {"action", fn.empty() ? "left" : "rewritten"}};
    if (fn.empty())
      o["reason"] = c.plan.whyNot;
    else
      o["fused"] = fn;
    if (!fn.empty() && !c.plan.partial.empty())
      o["partial"] = c.plan.partial;
    chains.push_back(std::move(o));
  }
  llvm::json::Array skipped;
  for (const CxxSkip &s : analysis.skipped)
    skipped.push_back(llvm::json::Object{{"file", s.file},
                                         {"function", s.function},
                                         {"line", s.line},
                                         {"reason", s.reason}});
  llvm::json::Array files;
  for (const std::string &w : written)
    files.push_back(w);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                             {"chains", std::move(chains)},
                             {"skipped", std::move(skipped)},
                             {"rewritten", out.rewritten},
                             {"written", std::move(files)}}));
  return text + "\n";
}

} // namespace kb
