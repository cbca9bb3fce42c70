// RUN: kb-opt %s --kb-classify --kb-form-regions --kb-outline --split-input-file | FileCheck %s

// The anchor stays in the function; the epilogue becomes an isolated kernel
// whose inputs record their role and broadcast pattern. Constants are cloned
// into the kernel.
// CHECK-LABEL: kb.kernel @kb_region_0 attributes {anchor = "aten::_convolution", id = 0 : i64, inputs = [{broadcast = array<i64: 0, 0, 0, 0>, role = "anchor-output"}, {broadcast = array<i64: 1, 0, 1, 1>, name = "bias", role = "parameter"}]} {
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<2x8x6x6xf32>, %[[B:.*]]: tensor<8x1x1xf32>):
// CHECK-NEXT:    %[[ONE:.*]] = kb.constant {value = 1 : i64} : i64
// CHECK-NEXT:    %[[R:.*]] = kb.aten "relu"(%[[A]])
// CHECK-NEXT:    %[[ADD:.*]] = kb.aten "add"(%[[R]], %[[B]], %[[ONE]])
// CHECK-NEXT:    kb.yield %[[ADD]]
// CHECK-LABEL: func.func @anchor_epilogue
// CHECK:         %[[BIAS:.*]] = kb.parameter "bias"
// CHECK:         %[[C:.*]] = kb.aten "_convolution"
// CHECK-NEXT:    %[[L:.*]] = kb.launch @kb_region_0(%[[C]], %[[BIAS]]) : (tensor<2x8x6x6xf32>, tensor<8x1x1xf32>) -> tensor<2x8x6x6xf32>
// CHECK-NEXT:    return %[[L]]
func.func @anchor_epilogue(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32> {
  %b = kb.parameter "bias" : tensor<8x1x1xf32>
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %f = kb.constant {value = false} : i1
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "_convolution"(%x, %w, %none, %s, %p, %s, %f, %p, %one, %f, %f, %f, %f) : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<2x8x6x6xf32>
  %1 = kb.aten "relu"(%0) : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %2 = kb.aten "add"(%1, %b, %one) {overload = "Tensor"} : (tensor<2x8x6x6xf32>, tensor<8x1x1xf32>, i64) -> tensor<2x8x6x6xf32>
  return %2 : tensor<2x8x6x6xf32>
}

// -----

// A reduction kernel iterates over its input's shape; a reduced value that
// is also returned is a second output.
// CHECK-LABEL: kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = [{broadcast = array<i64: 0, 0, 0, 0>, role = "activation"}]} {
// CHECK:         kb.list
// CHECK:         kb.aten "mean"
// CHECK:         kb.aten "tanh"
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK-LABEL: func.func @reduction
// CHECK:         %[[L:.*]]:2 = kb.launch @kb_region_0(%arg0)
// CHECK:         return %[[L]]#1, %[[L]]#0
func.func @reduction(%x: tensor<2x4x8x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %dims = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "mean"(%x, %dims, %f, %none) {overload = "dim"} : (tensor<2x4x8x8xf32>, !kb.list<i64>, i1, none) -> tensor<2x4xf32>
  %1 = kb.aten "tanh"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1, %0 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// The anchor's result used outside as well (a residual) is read from the
// anchor; the kernel yields only what it computes.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         %[[R:.*]] = kb.aten "relu"
// CHECK-NEXT:    kb.yield %[[R]] : tensor<4x16xf32>
// CHECK-LABEL: func.func @anchor_also_used_outside
// CHECK:         %[[L:.*]] = kb.aten "linear"
// CHECK-NEXT:    %[[K:.*]] = kb.launch @kb_region_0(%[[L]]) : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK:         kb.opaque "aten::my_op"(%[[L]], %[[K]])
func.func @anchor_also_used_outside(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %none = kb.constant {value} : none
  %0 = kb.aten "linear"(%x, %w, %none) : (tensor<4x8xf32>, tensor<16x8xf32>, none) -> tensor<4x16xf32>
  %1 = kb.aten "relu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kb.opaque "aten::my_op"(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
