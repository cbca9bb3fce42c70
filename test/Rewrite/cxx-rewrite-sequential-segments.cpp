// kb-rewrite rewrite over a torch::nn::Sequential call with a chain after
// each of its anchors (`{Conv2d, BatchNorm2d, ReLU, Conv2d, BatchNorm2d,
// Tanh}`, as VGG-style bodies are built): the chain between the two convs
// has no edit of its own; its call stands inside the later items' call,
// and where one of the two is not used (a rejection recorded in the lock)
// its items are called one by one again, the other chain still fused.
// REQUIRES: libtorch
// RUN: rm -rf %t && mkdir %t
// RUN: kb-rewrite rewrite %s -o %t/both --update-lock --lock %t/kb.lock.json -- %torch_cxx_flags | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=BOTH --input-file %t/both/cxx-rewrite-sequential-segments.cpp
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t/both %t/both/cxx-rewrite-sequential-segments.cpp
// The chain after the last anchor rejected: the call's items as calls,
// the inner chain's fused call among them.
// RUN: sed '/"batch_norm -> tanh"/,/verdict/ s/"unverified"/"rejected"/' %t/kb.lock.json > %t/outer.lock.json
// RUN: kb-rewrite rewrite %s -o %t/outer --lock %t/outer.lock.json -- %torch_cxx_flags | FileCheck %s --check-prefix=OUTERLOG
// RUN: FileCheck %s --check-prefix=OUTER --input-file %t/outer/cxx-rewrite-sequential-segments.cpp
// RUN: FileCheck %s --check-prefix=OUTERK --input-file %t/outer/kb_kernels.cu
// RUN: %clangxx -fsyntax-only %torch_cxx_flags -I%t/outer %t/outer/cxx-rewrite-sequential-segments.cpp
// The inner chain rejected: its items unrolled inside the outer call.
// RUN: sed '/"batch_norm -> relu"/,/verdict/ s/"unverified"/"rejected"/' %t/kb.lock.json > %t/inner.lock.json
// RUN: kb-rewrite rewrite %s -o %t/inner --lock %t/inner.lock.json -- %torch_cxx_flags | FileCheck %s --check-prefix=INNERLOG
// RUN: FileCheck %s --check-prefix=INNER --input-file %t/inner/cxx-rewrite-sequential-segments.cpp
// Both rejected: the source as it was.
// RUN: sed '/verdict/ s/"unverified"/"rejected"/' %t/kb.lock.json > %t/none.lock.json
// RUN: kb-rewrite rewrite %s -o %t/none --lock %t/none.lock.json -- %torch_cxx_flags | FileCheck %s --check-prefix=NONE
// RUN: grep -v "fused kernels$" %t/none/cxx-rewrite-sequential-segments.cpp | diff - %s
#include <torch/torch.h>

struct NetImpl : torch::nn::Module {
  torch::nn::Sequential body{
      torch::nn::Conv2d(3, 8, 3), torch::nn::BatchNorm2d(8), torch::nn::ReLU(),
      torch::nn::Conv2d(8, 8, 3), torch::nn::BatchNorm2d(8), torch::nn::Tanh()};
  NetImpl() { register_module("body", body); }
  torch::Tensor forward(torch::Tensor x) {
    x = body->forward(x);
    return x;
  }
};

// LOG: fusable epilogue after conv2d: batch_norm -> relu (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG-NEXT: {{.*}}: fusable epilogue after conv2d: batch_norm -> tanh (2 ops)
// LOG-NEXT: rewritten: kb_rewrite::kb_fused_{{[0-9a-f]+}} [unverified]
// LOG: 2 of 2 chains rewritten

// BOTH-LABEL: torch::Tensor forward(torch::Tensor x) {
// BOTH-NEXT: x = kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 3, 6).forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 0, 6).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 1, 6), kb_rewrite::kb_item<torch::nn::ReLUImpl>(body, 2, 6))), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 4, 6), kb_rewrite::kb_item<torch::nn::TanhImpl>(body, 5, 6));
// BOTH-NEXT: return x;

// OUTERLOG: batch_norm -> relu (2 ops)
// OUTERLOG-NEXT: rewritten: kb_rewrite::[[IN:kb_fused_[0-9a-f]+]]
// OUTERLOG: batch_norm -> tanh (2 ops)
// OUTERLOG-NEXT: left as is: the lock file records kb-verify's rejection
// OUTERLOG: 1 of 2 chains rewritten
// OUTER-LABEL: torch::Tensor forward(torch::Tensor x) {
// OUTER-NEXT: x = kb_rewrite::kb_item<torch::nn::TanhImpl>(body, 5, 6).forward(kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 4, 6).forward(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 3, 6).forward(kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 0, 6).forward(x), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 1, 6), kb_rewrite::kb_item<torch::nn::ReLUImpl>(body, 2, 6)))));
// Only the function used is generated.
// OUTERK: // kb-rewrite: begin kb_fused_
// OUTERK-NOT: // kb-rewrite: begin kb_fused_

// INNERLOG: batch_norm -> relu (2 ops)
// INNERLOG-NEXT: left as is: the lock file records kb-verify's rejection
// INNERLOG: 1 of 2 chains rewritten
// INNER-LABEL: torch::Tensor forward(torch::Tensor x) {
// INNER-NEXT: x = kb_rewrite::kb_fused_{{[0-9a-f]+}}(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 3, 6).forward(kb_rewrite::kb_item<torch::nn::ReLUImpl>(body, 2, 6).forward(kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 1, 6).forward(kb_rewrite::kb_item<torch::nn::Conv2dImpl>(body, 0, 6).forward(x)))), kb_rewrite::kb_item<torch::nn::BatchNorm2dImpl>(body, 4, 6), kb_rewrite::kb_item<torch::nn::TanhImpl>(body, 5, 6));

// NONE: 0 of 2 chains rewritten
