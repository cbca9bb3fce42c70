// The whole pipeline `kb-rewrite rewrite` runs (buildRewritePipeline): the
// analysis passes then outline, with rewrite's options: a softmax whose
// result reaches a comparison stays in ATen and its consumers become one
// kernel.
// RUN: kb-opt %s --kb-rewrite-pipeline="norms-before-tf32=false reductions-before-steps=false" --split-input-file | FileCheck %s
// With the defaults (`kb-rewrite codegen`), the softmax joins the kernel.
// RUN: kb-opt %s --kb-rewrite-pipeline --split-input-file | FileCheck %s --check-prefix=FUSED
// The analysis pipeline alone (`kb-rewrite analyze`) forms regions and
// outlines nothing.
// RUN: kb-opt %s --kb-analysis-pipeline --split-input-file | FileCheck %s --check-prefix=ANALYSIS

// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK-NOT:     kb.aten "log_softmax"
// CHECK:         kb.aten "ge"
// CHECK:         kb.aten "mean"
// CHECK-LABEL: func.func @softmax_then_step
// CHECK:         kb.aten "log_softmax"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// CHECK:         kb.launch @kb_region_0
// FUSED-LABEL: kb.kernel @kb_region_0
// FUSED:         kb.aten "log_softmax"
// FUSED:         kb.aten "ge"
// FUSED-LABEL: func.func @softmax_then_step
// FUSED-NOT:     kb.aten "log_softmax"
// FUSED:         kb.launch @kb_region_0
// ANALYSIS-LABEL: func.func @softmax_then_step
// ANALYSIS:       kb.region attributes {id = 0 : i64}
// ANALYSIS-NEXT:    kb.aten "log_softmax"
// ANALYSIS-NOT:   kb.kernel
func.func @softmax_then_step(%x: tensor<64x2048xf32>) -> tensor<f32> {
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %c = kb.constant {value = -4.320000e-01 : f64} : f64
  %six = kb.constant {value = 6 : i64} : i64
  %f = kb.constant {value = false} : i1
  %0 = kb.aten "log_softmax"(%x, %one, %none) {overload = "int"} : (tensor<64x2048xf32>, i64, none) -> tensor<64x2048xf32>
  %1 = kb.aten "ge"(%0, %c) {overload = "Scalar"} : (tensor<64x2048xf32>, f64) -> tensor<64x2048xi1>
  %2 = kb.aten "to"(%1, %six, %f, %f, %none) {overload = "dtype"} : (tensor<64x2048xi1>, i64, i1, i1, none) -> tensor<64x2048xf32>
  %3 = kb.aten "mul"(%2, %0) {overload = "Tensor"} : (tensor<64x2048xf32>, tensor<64x2048xf32>) -> tensor<64x2048xf32>
  %4 = kb.aten "mean"(%3, %none) : (tensor<64x2048xf32>, none) -> tensor<f32>
  return %4 : tensor<f32>
}
