// kb-rewrite rewrite over chains inside torch::nn::Sequential members, as
// tutorials build their layers (the CNN tutorial of prabhuomkar/pytorch-cpp:
// `Sequential layer1{Conv2d(...), BatchNorm2d(16), Functional(torch::relu),
// MaxPool2d(...)}`, then `x = layer1->forward(x)`). The call says nothing of
// its ops; the places that set the member do, when they build it from one
// list of modules and the class never changes the list. The call is
// replaced by its items as calls: those up to the chain's anchor stay
// module calls, those after it are the fused function's ops, each item
// named through kb_rewrite::kb_item, which checks the list at run time.
// Items between two anchors are a chain of their own, its call inside the
// later items' (stacked, tailed).
// HIPIFY style: the CHECK lines describe the rewritten copy and kernels.
// REQUIRES: libtorch
// RUN: rm -rf %t && kb-rewrite rewrite %s -o %t --verify-harness -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file %t/cxx-rewrite-sequential.cpp
// RUN: FileCheck %s --check-prefix=H --input-file %t/kb_kernels.h
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/cxx-rewrite-sequential.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t %t/kb_verify_harness.cpp
// RUN: kb-rewrite analyze %s -- %torch_cxx_flags | FileCheck %s --check-prefix=WHY
// The chains in kb IR, the items' options arguments of the types their
// schema operands have (a pool's int[] window, its bool ceil_mode).
// RUN: kb-rewrite analyze %s --emit=kb -- %torch_cxx_flags > %t/chains.mlir
// RUN: kb-opt %t/chains.mlir --kb-classify | FileCheck %s --check-prefix=IR
#include <torch/torch.h>

struct ConvNetImpl : torch::nn::Module {
  torch::nn::Sequential layer1{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5).stride(1).padding(2)),
      torch::nn::BatchNorm2d(16), torch::nn::Functional(torch::relu),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2))};
  torch::nn::Sequential head{nullptr};
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Sequential act{torch::nn::BatchNorm2d(16), torch::nn::ReLU()};
  torch::nn::Sequential grown{torch::nn::BatchNorm2d(16), torch::nn::ReLU()};
  torch::nn::Sequential custom{torch::nn::Conv2d(16, 16, 3),
                               torch::nn::Flatten(), torch::nn::ReLU()};
  torch::nn::Sequential flat{torch::nn::Conv2d(1, 4, 3), torch::nn::Flatten(),
                             torch::nn::Linear(64, 10), torch::nn::ReLU()};
  ConvNetImpl() {
    register_module("layer1", layer1);
    head = register_module(
        "head", torch::nn::Sequential(torch::nn::Linear(64, 32),
                                      torch::nn::ReLU(), torch::nn::Dropout(0.5),
                                      torch::nn::Linear(32, 10)));
    conv = register_module("conv", torch::nn::Conv2d(1, 16, 3));
    grown->push_back(torch::nn::Tanh());
  }
  // The tutorial's layer: conv, then three fused items.
  torch::Tensor features(torch::Tensor x) {
    x = layer1->forward(x);
    return x;
  }
  // The last anchor is item 3: the items up to it stay calls, in order,
  // but ReLU and Dropout between the two Linears, a chain of their own.
  torch::Tensor classify(torch::Tensor x) {
    return torch::log_softmax(head->forward(x) * 2.0, 1);
  }
  // No anchor inside: its items continue the chain of the conv before it.
  torch::Tensor activate(torch::Tensor x) {
    x = conv->forward(x);
    x = act->forward(x);
    return x;
  }
  // The list changes in the constructor: its items are not known.
  torch::Tensor changed(torch::Tensor x) {
    x = conv->forward(x);
    x = x * 2.0;
    x = grown->forward(x);
    return x;
  }
  // Flatten, a module the op table does not list, ends the chain before
  // the Sequential.
  torch::Tensor viewed(torch::Tensor x) {
    x = conv->forward(x);
    x = x * 2.0;
    x = custom->forward(x);
    return x;
  }
  // Flatten before the last anchor: called as its own class, as each item.
  torch::Tensor flattened(torch::Tensor x) {
    return torch::log_softmax(flat->forward(x), 1);
  }
  // Two anchors, a chain after each: the first one's call stands inside
  // the items after it (one function serves both: they compute the same).
  torch::nn::Sequential deep{torch::nn::Conv2d(1, 8, 3),
                             torch::nn::BatchNorm2d(8), torch::nn::ReLU(),
                             torch::nn::Conv2d(8, 8, 3),
                             torch::nn::BatchNorm2d(8), torch::nn::ReLU()};
  torch::Tensor stacked(torch::Tensor x) {
    x = deep->forward(x);
    return x;
  }
  // Ends in an anchor: its one chain owns the call, the last conv around it.
  torch::nn::Sequential tail{torch::nn::Conv2d(1, 8, 3),
                             torch::nn::BatchNorm2d(8), torch::nn::Tanh(),
                             torch::nn::Conv2d(8, 8, 3)};
  torch::Tensor tailed(torch::Tensor x) { return tail->forward(x); }
};
// A local Sequential, as DCGAN's main() builds its generator: known when
// its declaration builds it and the function only calls, moves, trains or
// saves it. Its last chain is a single op: the call is its items with the
// two inner chains' fused calls.
torch::Tensor sample(torch::Tensor noise) {
  torch::nn::Sequential generator(
      torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(100, 64, 4)),
      torch::nn::BatchNorm2d(64), torch::nn::Functional(torch::relu),
      torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(64, 32, 4)),
      torch::nn::BatchNorm2d(32), torch::nn::Functional(torch::relu),
      torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(32, 1, 4)),
      torch::nn::Functional(torch::tanh));
  generator->eval();
  torch::Tensor fake = generator->forward(noise);
  torch::save(generator, "generator.pt");
  return fake;
}
// DCGAN's discriminator: a Functional with a number bound after the input
// is that op with the number as its next operand (the literal is the same
// at the call).
torch::Tensor judge(torch::Tensor x) {
  torch::nn::Sequential discriminator(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 64, 4).stride(2)),
      torch::nn::BatchNorm2d(64),
      torch::nn::Functional(torch::leaky_relu, 0.2),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 1, 3)),
      torch::nn::Functional(torch::sigmoid));
  return discriminator->forward(x);
}
// A local whose list grows: not known.
torch::Tensor grownLocal(torch::Tensor x) {
  torch::nn::Sequential net(torch::nn::Linear(4, 4), torch::nn::ReLU());
  net->push_back(torch::nn::Tanh());
  return net->forward(x) * 2.0;
}
// CHECK-LABEL: torch::Tensor features(torch::Tensor x) {
// CHECK-NEXT: x = kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(layer1, 0, 4).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(layer1, 1, 4), kb_rewrite::kb_item<torch::nn::MaxPool2dImpl>(layer1, 3, 4));
// CHECK-LABEL: torch::Tensor classify(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::LinearImpl>(head, 3, 4).forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::LinearImpl>(head, 0, 4).forward(x), kb_rewrite::kb_item<torch::nn::ReLUImpl>(head, 1, 4), kb_rewrite::kb_item<torch::nn::DropoutImpl>(head, 2, 4))), 2.0);
// CHECK-LABEL: torch::Tensor activate(torch::Tensor x) {
// CHECK-NEXT: x = conv->forward(x);
// CHECK-NEXT: x = kb_rewrite::kb_fused_{{[0-9a-f]+}}(x, kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(act, 0, 2), kb_rewrite::kb_item<torch::nn::ReLUImpl>(act, 1, 2));
// CHECK-NEXT: return x;
// CHECK-LABEL: torch::Tensor changed(torch::Tensor x) {
// CHECK-NEXT: x = conv->forward(x);
// CHECK-NEXT: x = x * 2.0;
// CHECK-NEXT: x = grown->forward(x);
// CHECK-LABEL: torch::Tensor viewed(torch::Tensor x) {
// CHECK: x = custom->forward(x);
// CHECK-LABEL: torch::Tensor flattened(torch::Tensor x) {
// CHECK-NEXT: return kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::LinearImpl>(flat, 2, 4).forward(kb_rewrite::kb_item<torch::nn::FlattenImpl>(flat, 1, 4).forward(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(flat, 0, 4).forward(x))), kb_rewrite::kb_item<torch::nn::ReLUImpl>(flat, 3, 4));
// CHECK-LABEL: torch::Tensor stacked(torch::Tensor x) {
// CHECK-NEXT: x = kb_rewrite::[[F:kb_fused_[0-9a-f]+]](kb_rewrite::kb_item<torch::nn::Conv2dImpl>(deep, 3, 6).forward(kb_rewrite::[[F]](kb_rewrite::kb_item<torch::nn::Conv2dImpl>(deep, 0, 6).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(deep, 1, 6), kb_rewrite::kb_item<torch::nn::ReLUImpl>(deep, 2, 6))), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(deep, 4, 6), kb_rewrite::kb_item<torch::nn::ReLUImpl>(deep, 5, 6));
// CHECK-NEXT: return x;
// CHECK-LABEL: torch::Tensor tailed(torch::Tensor x) { return kb_rewrite::kb_item<torch::nn::Conv2dImpl>(tail, 3, 4).forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(tail, 0, 4).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(tail, 1, 4), kb_rewrite::kb_item<torch::nn::TanhImpl>(tail, 2, 4))); }
// CHECK-LABEL: torch::Tensor sample(torch::Tensor noise) {
// CHECK: torch::Tensor fake = kb_rewrite::kb_item<torch::nn::FunctionalImpl>(generator, 7, 8).forward(kb_rewrite::kb_item<torch::nn::ConvTranspose2dImpl>(generator, 6, 8).forward(kb_rewrite::[[G:kb_fused_[0-9a-f]+]](kb_rewrite::kb_item<torch::nn::ConvTranspose2dImpl>(generator, 3, 8).forward(kb_rewrite::[[G]](kb_rewrite::kb_item<torch::nn::ConvTranspose2dImpl>(generator, 0, 8).forward(noise), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(generator, 1, 8))), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(generator, 4, 8))));
// CHECK-LABEL: torch::Tensor judge(torch::Tensor x) {
// CHECK: return kb_rewrite::kb_item<torch::nn::FunctionalImpl>(discriminator, 4, 5).forward(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(discriminator, 3, 5).forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(discriminator, 0, 5).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(discriminator, 1, 5), 0.2)));
// CHECK-LABEL: torch::Tensor grownLocal(torch::Tensor x) {
// CHECK: return net->forward(x) * 2.0;

// LOG: fusable epilogue after conv2d: batch_norm -> relu -> max_pool2d (3 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: relu -> dropout (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: mul -> log_softmax (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after linear: relu -> log_softmax (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG-NEXT: cxx-rewrite-sequential.cpp:{{[0-9]+}}: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv2d: batch_norm -> tanh (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: fusable epilogue after conv_transpose2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG-NEXT: {{.*}}: fusable epilogue after conv_transpose2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG-NEXT: {{.*}}: fusable epilogue after conv_transpose2d: tanh (1 op)
// LOG-NEXT: left as is: a single op
// LOG: fusable epilogue after conv2d: batch_norm -> leaky_relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG-NEXT: {{.*}}: fusable epilogue after conv2d: sigmoid (1 op)
// LOG-NEXT: left as is: a single op
// LOG: 11 of 15 chains rewritten

// The helper stops a list changed since the rewrite.
// (cxx-sequential-item.test runs it.)
// H: T &kb_item(const torch::nn::Sequential &s, size_t i, size_t n) {
// H-NEXT: TORCH_CHECK(s->size() == n,
// H: T *m = s->ptr(i)->template as<T>();
// H-NEXT: TORCH_CHECK(m,

// WHY-LABEL: in ConvNetImpl::features: fusable epilogue after conv2d: batch_norm -> relu -> max_pool2d (3 ops)
// WHY-NEXT: anchor layer1->forward(x) (item 0)
// WHY-NEXT: batch_norm  layer1->forward(x) (item 1)
// WHY-LABEL: in ConvNetImpl::changed: fusable epilogue after conv2d: mul (1 op)
// WHY: ends: the items of Sequential 'grown' are not known: its list may change at line 46
// WHY-LABEL: in ConvNetImpl::viewed: fusable epilogue after conv2d: mul (1 op)
// WHY: ends: item 1 of Sequential 'custom' is a module the op-semantics table does not list (FlattenImpl)

// IR-LABEL: func.func @ConvNetImpl__features_0(
// IR-SAME: %arg6: !kb.list<i64> {kb.source = "kb_rewrite::kb_item<torch::nn::MaxPool2dImpl>(layer1, 3, 4).kernel_size"}
// IR-SAME: %arg10: i1 {kb.source = "kb_rewrite::kb_item<torch::nn::MaxPool2dImpl>(layer1, 3, 4).ceil_mode"}
// IR: kb.aten "batch_norm"({{.*}}) {kind = "broadcast"}
// IR-NEXT: kb.aten "relu"
// IR-NEXT: kb.aten "max_pool2d"(%{{[0-9]+}}, %arg6, %arg7, %arg8, %arg9, %arg10) {kind = "reduction"}
