// RUN: kb-opt %s --kb-sink-views --split-input-file | FileCheck %s

// timm's LinearNorm: a training batch norm over the (tokens, channels)
// flattening, viewed back, then hardswish. The hardswish reads the norm's
// result and the view follows it.
// CHECK-LABEL: func.func @unary_after_norm
// CHECK:      %[[BN:.*]] = kb.aten "batch_norm"
// CHECK-NEXT: %[[H:.*]] = kb.aten "hardswish"(%[[BN]]) : (tensor<12x8xf32>) -> tensor<12x8xf32>
// CHECK-NEXT: %[[V:.*]] = kb.aten "reshape_as"(%[[H]], %arg0) : (tensor<12x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[V]]
func.func @unary_after_norm(%x: tensor<3x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %rm: tensor<8xf32>, %rv: tensor<8xf32>) -> tensor<3x4x8xf32> {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %t = kb.constant {value = true} : i1
  %mom = kb.constant {value = 1.000000e-01 : f64} : f64
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %0 = kb.aten "flatten"(%x, %zero, %one) {overload = "using_ints"} : (tensor<3x4x8xf32>, i64, i64) -> tensor<12x8xf32>
  %1 = kb.aten "batch_norm"(%0, %w, %b, %rm, %rv, %t, %mom, %eps, %t) : (tensor<12x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, i1, f64, f64, i1) -> tensor<12x8xf32>
  %2 = kb.aten "reshape_as"(%1, %x) : (tensor<12x8xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %3 = kb.aten "hardswish"(%2) : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  return %3 : tensor<3x4x8xf32>
}

// -----

// A chain sinks one op at a time; the residual operand (an argument of the
// view's shape) is viewed to the norm's shape, a per-channel operand is
// read as it is (the view leaves the last dim alone).
// CHECK-LABEL: func.func @residual_chain
// CHECK:      %[[T:.*]] = kb.aten "tanh"(%arg0) : (tensor<12x8xf32>) -> tensor<12x8xf32>
// CHECK:      %[[R:.*]] = kb.aten "reshape"(%arg1, %{{.*}}) {{.*}}: (tensor<3x4x8xf32>, !kb.list<i64>) -> tensor<12x8xf32>
// CHECK-NEXT: %[[A:.*]] = kb.aten "add"(%[[R]], %[[T]], %{{.*}}) {overload = "Tensor"} : (tensor<12x8xf32>, tensor<12x8xf32>, i64) -> tensor<12x8xf32>
// CHECK-NEXT: %[[M:.*]] = kb.aten "mul"(%[[A]], %arg2) {overload = "Tensor"} : (tensor<12x8xf32>, tensor<8xf32>) -> tensor<12x8xf32>
// CHECK-NEXT: %[[V:.*]] = kb.aten "view"(%[[M]], %{{.*}}) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[V]]
func.func @residual_chain(%y: tensor<12x8xf32>, %x: tensor<3x4x8xf32>, %c: tensor<8xf32>) -> tensor<3x4x8xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %d0 = kb.constant {value = 3 : i64} : i64
  %d1 = kb.constant {value = 4 : i64} : i64
  %d2 = kb.constant {value = 8 : i64} : i64
  %shape = kb.list(%d0, %d1, %d2) : (i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "tanh"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %1 = kb.aten "view"(%0, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %2 = kb.aten "add"(%x, %1, %one) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<3x4x8xf32>, i64) -> tensor<3x4x8xf32>
  %3 = kb.aten "mul"(%2, %c) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<8xf32>) -> tensor<3x4x8xf32>
  return %3 : tensor<3x4x8xf32>
}

// -----

// Both operands are views of values of the norm's shape: the add reads
// both inputs, and neither view is left (a dead view would keep its input
// a region output).
// CHECK-LABEL: func.func @two_views
// CHECK:      %[[A:.*]] = kb.aten "add"(%{{.*}}, %{{.*}}, %{{.*}}) {overload = "Tensor"} : (tensor<12x8xf32>, tensor<12x8xf32>, i64) -> tensor<12x8xf32>
// CHECK-NEXT: %[[V:.*]] = kb.aten "view"(%[[A]], %{{.*}}) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[V]]
func.func @two_views(%y: tensor<12x8xf32>, %z: tensor<12x8xf32>) -> tensor<3x4x8xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %d0 = kb.constant {value = 3 : i64} : i64
  %d1 = kb.constant {value = 4 : i64} : i64
  %d2 = kb.constant {value = 8 : i64} : i64
  %shape = kb.list(%d0, %d1, %d2) : (i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "sigmoid"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %1 = kb.aten "view"(%0, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %2 = kb.aten "exp"(%z) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %3 = kb.aten "view"(%2, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %4 = kb.aten "add"(%1, %3, %one) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<3x4x8xf32>, i64) -> tensor<3x4x8xf32>
  return %4 : tensor<3x4x8xf32>
}

// -----

// Left in place: an operand broadcast over a dim the view merges ([4, 1]
// spans the token dim of [3, 4, 8]); an in-place op; an eval batch norm (its channel dim is dim 1, not the
// last); a view of an argument (no region to join); and an operand of the
// view's shape that a pointwise op makes for the add alone (the add joins
// that op's region instead).
// CHECK-LABEL: func.func @kept
// CHECK:      kb.aten "view"
// CHECK-NEXT: kb.aten "add"({{.*}}) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<4x1xf32>, i64) -> tensor<3x4x8xf32>
// CHECK:      kb.aten "view"
// CHECK-NEXT: kb.aten "relu"({{.*}}) {inplace} : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
// CHECK:      kb.aten "view"
// CHECK-NEXT: kb.aten "batch_norm"({{.*}}) : (tensor<3x4x8xf32>,
// CHECK:      kb.aten "view"(%arg0, {{.*}}) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
// CHECK-NEXT: kb.aten "neg"({{.*}}) : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
// CHECK:      kb.aten "view"
// CHECK-NEXT: %[[E:.*]] = kb.aten "exp"(%arg5)
// CHECK-NEXT: kb.aten "sub"({{.*}}, %[[E]], {{.*}}) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<3x4x8xf32>, i64) -> tensor<3x4x8xf32>
func.func @kept(%y: tensor<12x8xf32>, %m: tensor<4x1xf32>, %p: tensor<8x12xf32>, %c: tensor<4xf32>, %rv: tensor<4xf32>, %x: tensor<3x4x8xf32>) -> (tensor<3x4x8xf32>, tensor<12x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %mom = kb.constant {value = 1.000000e-01 : f64} : f64
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %d0 = kb.constant {value = 3 : i64} : i64
  %d1 = kb.constant {value = 4 : i64} : i64
  %d2 = kb.constant {value = 8 : i64} : i64
  %d3 = kb.constant {value = 12 : i64} : i64
  %shape = kb.list(%d0, %d1, %d2) : (i64, i64, i64) -> !kb.list<i64>
  %flat = kb.list(%d3, %d2) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "tanh"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %1 = kb.aten "view"(%0, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %2 = kb.aten "add"(%1, %m, %one) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<4x1xf32>, i64) -> tensor<3x4x8xf32>
  %6 = kb.aten "relu"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %7 = kb.aten "exp"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %8 = kb.aten "view"(%7, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %9 = kb.aten "relu"(%8) {inplace} : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %10 = kb.aten "log"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %11 = kb.aten "view"(%10, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %12 = kb.aten "batch_norm"(%11, %c, %c, %c, %rv, %f, %mom, %eps, %t) : (tensor<3x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i1, f64, f64, i1) -> tensor<3x4x8xf32>
  %13 = kb.aten "view"(%y, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %14 = kb.aten "neg"(%13) : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %15 = kb.aten "sin"(%y) : (tensor<12x8xf32>) -> tensor<12x8xf32>
  %16 = kb.aten "view"(%15, %shape) : (tensor<12x8xf32>, !kb.list<i64>) -> tensor<3x4x8xf32>
  %17 = kb.aten "exp"(%x) : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %18 = kb.aten "sub"(%16, %17, %one) {overload = "Tensor"} : (tensor<3x4x8xf32>, tensor<3x4x8xf32>, i64) -> tensor<3x4x8xf32>
  return %2, %6, %9, %12, %14, %18 : tensor<3x4x8xf32>, tensor<12x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>
}

// -----

// A reshape of a strided tensor is a copy into row-major order; the
// pointwise op after it reads the strided tensor instead (its kernel
// writes row-major), and the reshape of its result is a view: attention's
// `(attn @ v).transpose(1, 2).reshape(B, N, C)` before LeViT's hardswish.
// The copy stays, as a `contiguous` marked to join the op's region (an
// identity in the kernel, ATen's copy in the region's reference ops).
// The neg of the strided tensor's unsqueeze (a view, no copy) is left:
// its result keeps the strides, as eager's does. So is the relu of an
// expanded tensor's reshape (zero strides: not a permuted dense layout).
// CHECK-LABEL: func.func @copying_reshape
// CHECK:      %[[T:.*]] = kb.aten "transpose"
// CHECK-NEXT: %[[H:.*]] = kb.aten "hardswish"(%[[T]]) : (tensor<2x3x4x8xf32, [96, 8, 24, 1]>) -> tensor<2x3x4x8xf32>
// CHECK-NEXT: %[[Z:.*]] = kb.constant {value = 0 : i64} : i64
// CHECK-NEXT: %[[C:.*]] = kb.aten "contiguous"(%[[H]], %[[Z]]) {kb.row_major_copy, kind = "elementwise"} : (tensor<2x3x4x8xf32>, i64) -> tensor<2x3x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = kb.aten "reshape"(%[[C]], %{{.*}}) : (tensor<2x3x4x8xf32>, !kb.list<i64>) -> tensor<2x3x32xf32>
// CHECK:      %[[U:.*]] = kb.aten "unsqueeze"(%[[T]], %{{.*}}) : (tensor<2x3x4x8xf32, [96, 8, 24, 1]>, i64) -> tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>
// CHECK-NEXT: kb.aten "neg"(%[[U]])
// CHECK:      %[[E:.*]] = kb.aten "reshape"(%arg1, %{{.*}}) : (tensor<2x3x8xf32, [0, 0, 1]>, !kb.list<i64>) -> tensor<6x8xf32>
// CHECK-NEXT: kb.aten "relu"(%[[E]])
// CHECK:      return %[[R]],
func.func @copying_reshape(%a: tensor<2x4x3x8xf32>, %x: tensor<2x3x8xf32, [0, 0, 1]>) -> (tensor<2x3x32xf32>, tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>, tensor<6x8xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %d0 = kb.constant {value = 2 : i64} : i64
  %d1 = kb.constant {value = 3 : i64} : i64
  %d2 = kb.constant {value = 32 : i64} : i64
  %shape = kb.list(%d0, %d1, %d2) : (i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "transpose"(%a, %one, %two) {overload = "int"} : (tensor<2x4x3x8xf32>, i64, i64) -> tensor<2x3x4x8xf32, [96, 8, 24, 1]>
  %1 = kb.aten "reshape"(%0, %shape) : (tensor<2x3x4x8xf32, [96, 8, 24, 1]>, !kb.list<i64>) -> tensor<2x3x32xf32>
  %2 = kb.aten "hardswish"(%1) : (tensor<2x3x32xf32>) -> tensor<2x3x32xf32>
  %3 = kb.aten "unsqueeze"(%0, %zero) : (tensor<2x3x4x8xf32, [96, 8, 24, 1]>, i64) -> tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>
  %4 = kb.aten "neg"(%3) : (tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>) -> tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>
  %d6 = kb.constant {value = 6 : i64} : i64
  %d8 = kb.constant {value = 8 : i64} : i64
  %flat = kb.list(%d6, %d8) : (i64, i64) -> !kb.list<i64>
  %5 = kb.aten "reshape"(%x, %flat) : (tensor<2x3x8xf32, [0, 0, 1]>, !kb.list<i64>) -> tensor<6x8xf32>
  %6 = kb.aten "relu"(%5) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %2, %4, %6 : tensor<2x3x32xf32>, tensor<1x2x3x4x8xf32, [192, 96, 8, 24, 1]>, tensor<6x8xf32>
}
