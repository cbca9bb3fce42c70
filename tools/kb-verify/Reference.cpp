//===- Reference.cpp - The region's original ops, run by libtorch ---------===//
//
// The interpreter runs the graph as written (torch::jit::Code +
// InterpreterState): no graph-executor optimisation or fusion, so the
// reference is eager ATen op by op.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TensorChecks.h"
#include "TorchCompat.h"

#include <cuda_runtime.h>

#include <unordered_map>

using namespace kb::verify;

namespace {
/// The graph the float64 truth runs: every floating `dtype` operand (the
/// `aten::to(x, 6)` autocast writes before a layer norm it keeps in float32,
/// softmax's `dtype=`) names float64 instead. Otherwise the truth would be
/// narrowed midway, and the narrowed value would meet the float64 copies of
/// the other operands (a float32 input with float64 weights: layer_norm
/// refuses the mix).
std::shared_ptr<torch::jit::Graph> widened(torch::jit::Graph &g) {
  using namespace torch::jit;
  std::shared_ptr<Graph> copy = g.copy();
  for (Node *n : copy->nodes()) {
    const c10::FunctionSchema *schema = n->maybeSchema();
    if (!schema)
      continue;
    const auto &args = schema->arguments();
    for (size_t i = 0; i < n->inputs().size() && i < args.size(); ++i) {
      if (args[i].name() != "dtype")
        continue;
      c10::optional<c10::IValue> c = toIValue(n->input(i));
      if (!c || !c->isInt())
        continue;
      auto type = static_cast<at::ScalarType>(c->toInt());
      if (!at::isFloatingType(type) || type == at::kDouble)
        continue;
      WithInsertPoint here(n);
      n->replaceInput(i,
                      copy->insertConstant(static_cast<int64_t>(at::kDouble)));
    }
  }
  return copy;
}
} // namespace

struct Reference::Impl {
  std::shared_ptr<torch::jit::Graph> graph;
  std::unique_ptr<torch::jit::Code> code;
  std::shared_ptr<torch::jit::Graph> graph64;
  std::unique_ptr<torch::jit::Code> code64; // the float64 truth's

  std::vector<at::Tensor> runWith(const std::vector<at::Tensor> &inputs,
                                  bool truth = false) const {
    torch::jit::InterpreterState state(truth ? *code64 : *code);
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    state.run(stack);
    std::vector<at::Tensor> out;
    for (const c10::IValue &v : stack)
      appendTensors(v, out);
    return out;
  }

  /// The graph's result `v` (a tensor or a tuple of them) as tensors.
  static void appendTensors(const c10::IValue &v,
                            std::vector<at::Tensor> &out) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (const c10::IValue &e : v.toTupleRef().elements())
        out.push_back(e.toTensor());
    } else {
      throw std::runtime_error("the reference graph returned a non-tensor");
    }
  }

  /// One op of the graph as a graph of its own: the op, clones of its
  /// constant operands, its other operands as inputs.
  struct Step {
    std::shared_ptr<torch::jit::Graph> graph;
    std::unique_ptr<torch::jit::Code> code;
    std::vector<torch::jit::Value *> operands, results;
  };
  std::vector<Step> steps; // empty when an op has blocks (no region has)

  void buildSteps() {
    using namespace torch::jit;
    for (Node *n : graph->nodes()) {
      if (n->kind() == prim::Constant)
        continue;
      if (!n->blocks().empty()) {
        steps.clear();
        return;
      }
      Step s;
      s.graph = std::make_shared<Graph>();
      std::unordered_map<Value *, Value *> map;
      for (Value *v : n->inputs()) {
        if (map.count(v))
          continue;
        if (v->node()->kind() == prim::Constant) {
          Node *c = s.graph->createClone(v->node(), [](Value *) -> Value * {
            throw std::runtime_error("a constant with operands");
          });
          s.graph->appendNode(c);
          map[v] = c->output();
        } else {
          map[v] = s.graph->addInput()->setType(v->type());
          s.operands.push_back(v);
        }
      }
      Node *op = s.graph->createClone(n, [&](Value *v) { return map.at(v); });
      s.graph->appendNode(op);
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        s.graph->registerOutput(op->output(i));
        s.results.push_back(n->output(i));
      }
      s.code = std::make_unique<Code>(s.graph, "reference step");
      steps.push_back(std::move(s));
    }
  }

  /// The graph op by op in float64, each op's floating results rounded to
  /// float32 (correctly rounded, then widened again for the next op): what
  /// a faithful fp32 evaluation of each op gives. Empty without steps or
  /// when an op fails: this reference only ever excuses, so without it the
  /// comparison is the stricter one.
  std::vector<at::Tensor> runStepwise(const std::vector<at::Tensor> &inputs,
                                      at::ScalarType storage) const try {
    using namespace torch::jit;
    if (steps.empty())
      return {};
    std::unordered_map<Value *, c10::IValue> env;
    auto value = [&](Value *v) -> c10::IValue {
      auto it = env.find(v);
      if (it != env.end())
        return it->second;
      if (auto c = toIValue(v)) // a constant the graph returns
        return *c;
      throw std::runtime_error("a value the steps never computed");
    };
    for (size_t i = 0; i < inputs.size() && i < graph->inputs().size(); ++i)
      env[graph->inputs()[i]] = inputs[i];
    for (const Step &s : steps) {
      Stack stack;
      for (Value *v : s.operands)
        stack.push_back(value(v));
      InterpreterState(*s.code).run(stack);
      if (stack.size() != s.results.size())
        return {};
      for (size_t i = 0; i < stack.size(); ++i) {
        c10::IValue r = stack[i];
        if (r.isTensor() && r.toTensor().is_floating_point())
          r = r.toTensor().to(storage).to(torch::kFloat64);
        env[s.results[i]] = r;
      }
    }
    std::vector<at::Tensor> out;
    for (Value *v : graph->outputs())
      appendTensors(value(v), out);
    return out;
  } catch (const std::exception &) {
    return {};
  }
};

Reference::Reference(const std::string &irText) : impl(new Impl) {
  impl->graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(irText, impl->graph.get());
  impl->code = std::make_unique<torch::jit::Code>(impl->graph, "reference");
  impl->graph64 = widened(*impl->graph);
  impl->code64 =
      std::make_unique<torch::jit::Code>(impl->graph64, "float64 reference");
  impl->buildSteps();
}

Reference::~Reference() = default;

ReferenceOutputs Reference::run(const std::vector<at::Tensor> &inputs,
                                bool sensitivity) const {
  torch::NoGradGuard noGrad;
  // Masks stay bool (where's condition); floats run in the given type.
  auto copies = [&](at::ScalarType type) {
    std::vector<at::Tensor> out;
    for (const at::Tensor &t : inputs)
      out.push_back(t.to(t.scalar_type() == at::kBool ? at::kBool : type,
                         /*non_blocking=*/false, /*copy=*/true));
    return out;
  };
  // A region over 16-bit tensors: eager and the op-by-op evaluation round
  // to that type, and a perturbation of one of its ulps is what rounding
  // its inputs moves the truth by. (Autocast regions mixing types take the
  // 16-bit one: both only ever excuse.)
  at::ScalarType storage = torch::kFloat32;
  for (const at::Tensor &t : inputs)
    if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16)
      storage = t.scalar_type();
  const int mantissa = formatOf(storage).mantissa;
  ReferenceOutputs r;
  std::vector<at::Tensor> out64 =
      impl->runWith(copies(torch::kFloat64), /*truth=*/true);
  for (const at::Tensor &t : out64)
    r.truth64.push_back(t.to(torch::kFloat64).contiguous());
  out64.clear(); // the float64 temporaries go before the float32 run
  if (sensitivity) {
    // The perturbation and its mirror image: a clamp after an
    // ill-conditioned value (a mean over +-3e38 and ordinary values, then
    // clamp_min) hides the move on one side, so one draw can report a
    // sensitivity of the clamp's bound alone (gen-20261231 task 1).
    std::vector<at::Tensor> draws;
    for (const at::Tensor &t : inputs)
      draws.push_back(at::rand_like(t, t.options().dtype(torch::kFloat64))
                          .mul_(2)
                          .sub_(1)
                          .mul_(std::ldexp(1.0, -mantissa)));
    for (double sign : {1.0, -1.0}) {
      std::vector<at::Tensor> shaken = copies(torch::kFloat64);
      for (size_t i = 0; i < shaken.size(); ++i)
        if (shaken[i].scalar_type() != at::kBool) // a mask is not perturbed
          shaken[i].mul_(draws[i].mul(sign).add_(1));
      std::vector<at::Tensor> outs = impl->runWith(shaken, /*truth=*/true);
      for (size_t o = 0; o < outs.size() && o < r.truth64.size(); ++o) {
        at::Tensor moved =
            (outs[o].to(torch::kFloat64).contiguous() - r.truth64[o])
                .abs()
                .nan_to_num(0.0, 0.0, 0.0);
        if (r.sens64.size() <= o)
          r.sens64.push_back(moved);
        else
          r.sens64[o] = at::maximum(r.sens64[o], moved);
      }
    }
    // Op by op in fp32, each op correctly rounded: an intermediate beyond
    // float32's range is +-Inf here as in any fp32 kernel, and the next
    // op's fp32 semantics (hardswish(-Inf) = NaN) follow from it, where the
    // float64 truth stays finite and eager's own order may too.
    std::vector<at::Tensor> steps =
        impl->runStepwise(copies(torch::kFloat64), storage);
    if (steps.size() == r.truth64.size())
      for (const at::Tensor &t : steps)
        r.step32.push_back(t.scalar_type() == torch::kLong
                               ? at::Tensor()
                               : t.to(torch::kFloat32).contiguous());
  }
  // Indices (argmax / argmin) stay int64: as float32 they would be exact
  // only below 2^24.
  // Eager on the inputs in their own types (copies: in-place ops).
  std::vector<at::Tensor> own;
  for (const at::Tensor &t : inputs)
    own.push_back(t.clone());
  for (const at::Tensor &t : impl->runWith(own)) {
    r.outTypes.push_back(t.scalar_type());
    r.eager32.push_back(t.scalar_type() == torch::kLong
                            ? t.contiguous()
                            : t.to(torch::kFloat32).contiguous());
  }
  if (r.truth64.size() != r.eager32.size())
    throw std::runtime_error("reference returned different output counts");
  return r;
}

std::vector<double> Reference::timeEager(const std::vector<at::Tensor> &inputs,
                                         void *stream, int device, int warmup,
                                         int runs, void (*flush)(void *),
                                         void *flushArg) const {
  std::vector<double> times;
  if (!usesCuda())
    return times;
  torch::NoGradGuard noGrad;
  const std::vector<at::Tensor> &in = inputs;
  cudaDeviceSynchronize();
  compat::StreamScope scope(stream, device);
  auto s = static_cast<cudaStream_t>(stream);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < warmup + runs; ++i) {
    flush(flushArg);
    cudaEventRecord(start, s);
    auto out = impl->runWith(in);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= warmup)
      times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return times;
}

std::string Reference::torchVersion() { return TORCH_VERSION; }

bool Reference::usesCuda() { return compat::torchHasCuda(); }
