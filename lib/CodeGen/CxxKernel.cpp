//===- CxxKernel.cpp - Fused functions for libtorch C++ chains ------------===//
//
// A rewritable C++ chain becomes one host function of kb_kernels.cu: a
// shape-generic kernel over the chain's input (scalar and float4 forms),
// guards, and the chain's own ATen ops as the fallback. The element
// expression of each op comes from the chain's classified kb IR through
// OpExpression.h, as the graph kernels' do; only a module whose table row
// gives its own expression (KB_CXX_MODULE) is expanded from the plan.
//
//===----------------------------------------------------------------------===//

#include "CxxKernelParts.h"
#include "kb/CodeGen/OpExpression.h"
#include "kb/CodeGen/OpTemplate.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Transforms/OpUtils.h"

#include "llvm/ADT/STLExtras.h"

using llvm::StringRef;

namespace kb::codegen::cxx {

std::string operandName(const CxxRewritePlan &p, int idx) {
  const CxxOperand &o = p.operands[idx];
  switch (o.kind) {
  case CxxOperand::Tensor:
  case CxxOperand::ModuleTensor:
    return "a" + std::to_string(idx);
  case CxxOperand::Scalar:
  case CxxOperand::ModuleOption:
  case CxxOperand::Int:
  case CxxOperand::Bool:
  case CxxOperand::IntList:
  case CxxOperand::ModuleIntList:
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

bool isTensor(const CxxOperand &o) {
  return o.kind == CxxOperand::Tensor || o.kind == CxxOperand::ModuleTensor;
}

namespace {

/// The expression a module row substitutes for its op, or "".
StringRef moduleCuda(const CxxRewritePlan &p, const CxxPlanOp &op) {
  if (op.module < 0)
    return "";
  StringRef type = p.operands[op.module].type;
  const CxxModuleInfo *m = cxxModule(
      type.rsplit("::").second.empty() ? type : type.rsplit("::").second);
  return m ? m->cuda : "";
}

} // namespace

/// The result of op `j` under `prefix` ("t" in the element function, "r" in
/// the fallback), or the chain's input `in` when j < 0.
std::string valueName(int j, StringRef prefix, StringRef in) {
  return j < 0 ? in.str() : prefix.str() + std::to_string(j);
}

namespace {

/// Whether an op reads anything but the previous op's result as the
/// chain's value (`x * torch::sigmoid(x)`).
bool readsTwice(const CxxRewritePlan &p) {
  return llvm::any_of(p.ops,
                      [](const CxxPlanOp &o) { return o.selfBack != 1; }) ||
         llvm::any_of(p.operands, [](const CxxOperand &o) {
           return o.kind == CxxOperand::Value;
         });
}

} // namespace

namespace {

/// A module op whose row in OpSemantics.def's KB_CXX_MODULE table gives its
/// own expression (a dropout module in eval mode, a batch norm module's
/// running statistics) as a device expression over `self`.
llvm::Expected<std::string> moduleExpr(const CxxRewritePlan &p,
                                       const CxxPlanOp &op, StringRef cuda,
                                       const std::string &self) {
  std::vector<std::string> names = {"self"}, values = {self};
  for (const auto &[name, idx] : op.named) {
    names.push_back(name);
    values.push_back(isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                               : operandName(p, idx));
  }
  auto expr =
      expandTemplate(cuda, names, [&](size_t k) -> llvm::Expected<std::string> {
        return values[k];
      });
  if (!expr)
    return expr.takeError();
  if (expr->find('{') != std::string::npos)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "module expression '" + cuda.str() +
                                       "' names an unknown operand");
  return expr;
}

/// A schema default (OpSemantics.def spells them as TorchScript does) as a
/// C++ argument of the ATen call.
std::string cxxDefault(StringRef text) {
  if (text == "False" || text == "True")
    return text == "True" ? "true" : "false";
  if (text == "None")
    return "c10::nullopt";
  if (text == "[]")
    return "{}";
  return text.str();
}

/// Op k's arguments other than the chain's value, as the fallback's ATen
/// call passes them: C++ calls omit trailing operands only, so one left out
/// before a given one (set through an options object) passes the schema
/// default; the chain's value read again is the result `back` ops before
/// (under `prefix`, or the input `in`).
std::vector<std::string> fallbackArgs(const CxxRewritePlan &p, size_t k,
                                      StringRef prefix, StringRef in) {
  const CxxPlanOp &op = p.ops[k];
  size_t given = 0;
  for (size_t a = 0; a < op.args.size(); ++a)
    if (op.args[a] >= 0)
      given = a + 1;
  const OpInfo *row = rowOf(op);
  std::vector<std::string> args;
  for (size_t a = 0; a < given; ++a) {
    int idx = op.args[a];
    unsigned pos = op.schemaPos(a);
    // A number where the schema takes float (a layer norm's eps): ATen's
    // C++ signature takes a double, which at::Scalar does not convert to.
    bool toDouble = idx >= 0 && row && row->args[pos].type == ArgType::Float &&
                    p.operands[idx].kind == CxxOperand::Scalar;
    args.push_back(
        idx < 0
            ? (row ? cxxDefault(row->args[pos].defaultValue) : std::string())
        : p.operands[idx].kind == CxxOperand::Value
            ? valueName((int)k - p.operands[idx].back, prefix, in)
            : operandName(p, idx) + (toDouble ? ".to<double>()" : ""));
  }
  return args;
}

/// Op k's ATen call, the chain's value `self` at its schema position
/// (CxxPlanOp::chainArg; the operands before it are all given: the call
/// passed them positionally), or op k as an in-place method of `self`.
std::string fallbackCall(const CxxRewritePlan &p, size_t k, StringRef self,
                         StringRef prefix, StringRef in) {
  const CxxPlanOp &op = p.ops[k];
  std::vector<std::string> args = fallbackArgs(p, k, prefix, in);
  if (!op.inPlace)
    args.insert(args.begin() + std::min<size_t>(op.chainArg, args.size()),
                self.str());
  std::string joined;
  for (const std::string &a : args)
    joined += (joined.empty() ? "" : ", ") + a;
  return op.inPlace ? self.str() + "." + op.op + "_(" + joined + ")"
                    : "at::" + op.op + "(" + joined + ")";
}

} // namespace

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
      s += r + fallbackCall(p, k, self, "r", "in") + ";\n";
    }
    return s + "    return r" + std::to_string(p.ops.size() - 1) + ";\n";
  }
  std::string s = "    at::Tensor t = in;\n";
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const CxxPlanOp &op = p.ops[k];
    if (op.module >= 0) { // the module itself, options and all
      s += "    t = " + operandName(p, op.module) + ".forward(t);\n";
      continue;
    }
    s += "    " + std::string(op.inPlace ? "" : "t = ") +
         fallbackCall(p, k, "t", "r", "in") + ";\n";
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

llvm::Expected<std::string> elementOps(const CxxRewritePlan &p,
                                       const ImportedChain &ir, size_t begin,
                                       size_t end, bool fast,
                                       bool &approximate) {
  if (ir.ops.size() != p.ops.size())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the chain's IR lacks some of its ops");
  // The element function's names for the IR's values: its parameter `x`
  // (the anchor's result), the operands' parameters, earlier ops' results.
  OperandNames names;
  // (A copy of the handle: FuncOp's accessors are not const.)
  names[mlir::func::FuncOp(ir.fn).getArgument(0)] = "x";
  for (auto [v, idx] : ir.operandValues)
    if (p.operands[idx].kind != CxxOperand::String)
      names[v] = isTensor(p.operands[idx]) ? "v" + std::to_string(idx)
                                           : operandName(p, idx);
  for (size_t k = 0; k < begin; ++k)
    names[ir.ops[k]->getResult(0)] = "t" + std::to_string(k);
  std::string body;
  for (size_t k = begin; k < end; ++k) {
    auto aten = llvm::cast<AtenOp>(ir.ops[k]);
    llvm::Expected<std::string> e = std::string();
    if (StringRef cuda = moduleCuda(p, p.ops[k]); !cuda.empty()) {
      e = moduleExpr(p, p.ops[k], cuda,
                     valueName((int)k - p.ops[k].selfBack, "t", "x"));
    } else {
      // kb-classify's kind, the graph path's rule, decides what is
      // pointwise (the planner asked the same rule).
      OpKind kind = getKind(aten);
      if (kind != OpKind::Elementwise && kind != OpKind::Broadcast)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "'" + p.ops[k].op +
                "' is not pointwise (kb-classify: " + kindName(kind) + ")");
      e = pointwiseExpression(aten, names);
    }
    if (!e)
      return e.takeError();
    names[aten->getResult(0)] = "t" + std::to_string(k);
    // The prelude's exact helpers have approximate twins in
    // kb_rewrite::fast (cxxKernelSupport), so exact and --fast-math
    // functions can share one kb_kernels.cu.
    if (fast)
      for (const char *helper : {"sigmoid(", "silu(", "mish("}) {
        std::string from = std::string("kb::") + helper;
        for (size_t at = e->find(from); at != std::string::npos;
             at = e->find(from, at)) {
          e->replace(at, from.size(),
                     "kb_rewrite::fast::" + std::string(helper));
          approximate = true;
        }
      }
    body += "  const float t" + std::to_string(k) + " = " + *e +
            "; // aten::" + p.ops[k].op + "\n";
  }
  return body;
}

ChainParts chainParts(const CxxRewritePlan &p) {
  ChainParts c;
  std::string &postParams = c.postParams, &postArgs = c.postArgs;
  std::string &kparams = c.kparams, &kargs = c.kargs, &eparams = c.eparams;
  eparams = "float x";
  // Per operand: its element-function argument in the scalar kernel, in
  // lane L of the float4 kernel, and the float4 kernel's loads.
  std::string &scalarArgs = c.scalarArgs, &loads4 = c.loads4,
              &vecGuards = c.vecGuards;
  std::vector<std::string> &laneArgs = c.laneArgs;
  laneArgs.resize(4);
  std::string &guards = c.guards, &tensors = c.tensors,
              &moduleGuards = c.moduleGuards, &derived = c.derived;
  tensors = "&in";
  bool &perChannel = c.perChannel;
  const char *lanes[] = {"x", "y", "z", "w"};
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
      derived += std::string("  const ") +
                 (o.optionType == ArgType::Int    ? "int64_t"
                  : o.optionType == ArgType::Bool ? "bool"
                                                  : "at::Scalar") +
                 " s" + I + " = " + operandName(p, o.owner) + ".options." +
                 o.text + "();\n";
    else if (o.kind == CxxOperand::ModuleTensor)
      derived += "  const at::Tensor& a" + I + " = " + operandName(p, o.owner) +
                 "." + o.text + ";\n";
    else if (o.kind == CxxOperand::ModuleIntList)
      derived += "  const at::IntArrayRef s" + I + " = " +
                 operandName(p, o.owner) + ".options." + o.text + "();\n";
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    std::string I = std::to_string(i);
    // A stage module's int and bool options: host values of its geometry.
    if (p.operands[i].kind == CxxOperand::ModuleOption &&
        (p.operands[i].optionType == ArgType::Int ||
         p.operands[i].optionType == ArgType::Bool))
      continue;
    if (isStageTensor(p, i)) {
      // Read along the stage's rows (a layer norm's weight, bias): a
      // pointer, null where the tensor is undefined; the stage's geometry
      // checks its size against the rows (normGeometry).
      kparams += ", const float* __restrict__ a" + I;
      kargs += ", p" + I;
      tensors += ", &a" + I;
      continue;
    }
    if (isTensor(p.operands[i]) || p.operands[i].kind == CxxOperand::Scalar ||
        p.operands[i].kind == CxxOperand::ModuleOption)
      eparams += isTensor(p.operands[i]) ? ", float v" + I : ", float s" + I;
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
                ";\n  if (!kb_rewrite::detail::operand(a" + I + ", in, o" + I +
                "))\n    return reference();\n";
    } else if (p.operands[i].kind == CxxOperand::Scalar ||
               p.operands[i].kind == CxxOperand::ModuleOption) {
      kparams += ", float s" + I;
      kargs += ", s" + I + ".to<float>()";
      postParams += ", float s" + I;
      postArgs += ", s" + I;
    }
  }
  std::string &chLine = c.chLine, &chLine4 = c.chLine4;
  if (perChannel) {
    kparams += ", long long inner, long long channels";
    kargs += ", inner, in.size(1)";
    chLine = "    const long long ch = kb_rewrite::detail::channelOf(i, "
             "inner, channels);\n";
    chLine4 = "    const long long ch = kb_rewrite::detail::channelOf(4 * "
              "q, inner, channels);\n";
    vecGuards += " && inner % 4 == 0";
  }
  c.sig = "(" + params(p) + ")";
  return c;
}

std::string hostFunction(const CxxRewritePlan &p, const ChainParts &c,
                         StringRef sig, StringRef literals,
                         StringRef beforeDevice, StringRef afterDevice,
                         StringRef launch) {
  return sig.str() + " {\n" + literals.str() + "  auto reference = [&]() {\n" +
         referenceBody(p) +
         "  };\n  if (kb_rewrite::testing::forceReference() ||\n"
         "      !kb_rewrite::detail::usable(in))\n    return reference();\n" +
         c.moduleGuards + c.derived + "  if (kb_rewrite::detail::needsGrad({" +
         c.tensors + "}))\n    return reference();\n" + c.guards +
         beforeDevice.str() + "  c10::cuda::CUDAGuard device(in.device());\n" +
         afterDevice.str() +
         (c.perChannel ? "  const long long inner = in.numel() / (in.size(0) * "
                         "in.size(1));\n"
                       : "") +
         "  const auto stream = at::cuda::getCurrentCUDAStream();\n"
         "  const float* pin = in.data_ptr<float>();\n"
         "  float* pout = out.data_ptr<float>();\n" +
         launch.str() +
         "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n"
         "  ++kb_rewrite::testing::fusedLaunches();\n  return out;\n}\n\n";
}

namespace {

/// A pointwise chain: one kernel over the input's elements, in a scalar and
/// a float4 form.
llvm::Expected<CxxFunction> emitPointwise(const CxxRewritePlan &p,
                                          const ImportedChain &ir,
                                          const std::string &name,
                                          StringRef where, bool fast) {
  // The chain per element, called by the scalar and the float4 kernel.
  bool approximate = false;
  auto body = elementOps(p, ir, 0, p.ops.size(), fast, approximate);
  if (!body)
    return body.takeError();
  const ChainParts c = chainParts(p);
  const std::string &kparams = c.kparams, &kargs = c.kargs,
                    &eparams = c.eparams, &scalarArgs = c.scalarArgs,
                    &loads4 = c.loads4, &vecGuards = c.vecGuards,
                    &chLine = c.chLine, &chLine4 = c.chLine4;
  const std::vector<std::string> &laneArgs = c.laneArgs;
  const char *lanes[] = {"x", "y", "z", "w"};
  std::string sig = "at::Tensor " + name + c.sig;
  CxxFunction fn;
  fn.approximate = approximate;
  fn.decl = "/// " + where.str() + "\n" + sig + ";\n";
  std::string &defs = fn.def;
  defs += "// " + where.str() + "\n";
  defs += "// In and out may be the same tensor (in-place chains): no "
          "__restrict__.\n";
  defs += "static __device__ __forceinline__ float " + name + "_element(" +
          eparams + ") {\n" + *body + "  return t" +
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
  defs += hostFunction(
      p, c, sig, "", "",
      p.writesInput ? "  at::Tensor out = in; // the chain was in place\n"
                    : "  at::Tensor out = at::empty_like(in);\n",
      "  if (kb_rewrite::detail::vec4(in) && "
      "kb_rewrite::detail::vec4(out)" +
          vecGuards + ")\n    " + name +
          "_kernel4<<<kb_rewrite::detail::blocks(in.numel() / 4), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel() / 4" +
          kargs + ");\n  else\n    " + name +
          "_kernel<<<kb_rewrite::detail::blocks(in.numel()), 256, 0, "
          "stream>>>(\n        pin, pout, in.numel()" +
          kargs + ");\n");
  return fn;
}

} // namespace

} // namespace kb::codegen::cxx

namespace kb::codegen {

llvm::Expected<CxxFunction> emitCxxFunction(const CxxChain &c,
                                            const ImportedChain &ir,
                                            StringRef name, StringRef where,
                                            bool fastMath) {
  if (c.plan.stage >= 0)
    return cxx::emitStageFunction(c.plan, ir, name.str(), where, fastMath);
  return cxx::emitPointwise(c.plan, ir, name.str(), where, fastMath);
}

} // namespace kb::codegen
