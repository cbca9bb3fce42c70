// RUN: kb-opt %s --kb-classify --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @anchor_and_elementwise
func.func @anchor_and_elementwise(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: kb.aten "linear"{{.*}}kind = "anchor"
  %0 = kb.aten "linear"(%x, %w, %b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: kb.aten "relu"{{.*}}kind = "elementwise"
  %1 = kb.aten "relu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// An elementwise op whose operand shapes differ from its result broadcasts.
// CHECK-LABEL: func.func @broadcast_add
func.func @broadcast_add(%x: tensor<2x3x4x4xf32>, %b: tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  // CHECK: kb.aten "add"{{.*}}kind = "broadcast"
  %0 = kb.aten "add"(%x, %b, %one) {overload = "Tensor"} : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>, i64) -> tensor<2x3x4x4xf32>
  // CHECK: kb.aten "add"{{.*}}kind = "elementwise"
  %1 = kb.aten "add"(%0, %0, %one) {overload = "Tensor"} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, i64) -> tensor<2x3x4x4xf32>
  return %1 : tensor<2x3x4x4xf32>
}

// -----

// batch_norm is a reduction in training mode and a per-channel affine with
// running statistics.
// CHECK-LABEL: func.func @batch_norm_modes
func.func @batch_norm_modes(%x: tensor<2x3x4x4xf32>, %w: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %m = kb.constant {value = 1.000000e-01 : f64} : f64
  %e = kb.constant {value = 1.000000e-05 : f64} : f64
  // CHECK: kb.aten "batch_norm"{{.*}}kind = "reduction"
  %0 = kb.aten "batch_norm"(%x, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, i1, f64, f64, i1) -> tensor<2x3x4x4xf32>
  // CHECK: kb.aten "batch_norm"{{.*}}kind = "broadcast"
  %1 = kb.aten "batch_norm"(%x, %w, %w, %w, %w, %f, %m, %e, %t) : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, i1, f64, f64, i1) -> tensor<2x3x4x4xf32>
  return %0, %1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// dropout is an identity when nothing is dropped, opaque (random) otherwise.
// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = kb.constant {value = 0.000000e+00 : f64} : f64
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %t = kb.constant {value = true} : i1
  // CHECK: kb.aten "dropout"{{.*}}kind = "injective"
  %0 = kb.aten "dropout"(%x, %zero, %t) : (tensor<8xf32>, f64, i1) -> tensor<8xf32>
  // CHECK: kb.aten "dropout"{{.*}}kind = "opaque"
  %1 = kb.aten "dropout"(%x, %half, %t) : (tensor<8xf32>, f64, i1) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @views_pools_and_host
func.func @views_pools_and_host(%x: tensor<2x4x8x8xf32>) -> (tensor<2x256xf32>, tensor<2x4x4x4xf32>, i64) {
  %one = kb.constant {value = 1 : i64} : i64
  %m1 = kb.constant {value = -1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %f = kb.constant {value = false} : i1
  %k = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %d = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  // CHECK: kb.aten "flatten"{{.*}}kind = "injective"
  %0 = kb.aten "flatten"(%x, %one, %m1) {overload = "using_ints"} : (tensor<2x4x8x8xf32>, i64, i64) -> tensor<2x256xf32>
  // CHECK: kb.aten "max_pool2d"{{.*}}kind = "reduction"
  %1 = kb.aten "max_pool2d"(%x, %k, %k, %p, %d, %f) : (tensor<2x4x8x8xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x4x4xf32>
  // CHECK: kb.aten "size"{{.*}}kind = "host"
  %2 = kb.aten "size"(%x, %zero) {overload = "int"} : (tensor<2x4x8x8xf32>, i64) -> i64
  return %0, %1, %2 : tensor<2x256xf32>, tensor<2x4x4x4xf32>, i64
}

// -----

// einsum (MaxViT's attention: 44 a forward) is a GEMM anchor as torch.einsum
// runs it, its bias add and softmax an epilogue.
// CHECK-LABEL: func.func @einsum_anchor
func.func @einsum_anchor(%q: tensor<2x3x49x32xf32>, %k: tensor<2x3x49x32xf32>, %b: tensor<1x3x49x49xf32>) -> tensor<2x3x49x49xf32> {
  %eq = kb.constant {value = "bhid,bhjd->bhij"} : !kb.str
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %m1 = kb.constant {value = -1 : i64} : i64
  %l = kb.list(%q, %k) : (tensor<2x3x49x32xf32>, tensor<2x3x49x32xf32>) -> !kb.list<tensor<*x!kb.unknown>>
  // CHECK: kb.aten "einsum"{{.*}}kind = "anchor"
  %0 = kb.aten "einsum"(%eq, %l, %none) : (!kb.str, !kb.list<tensor<*x!kb.unknown>>, none) -> tensor<2x3x49x49xf32>
  // CHECK: kb.aten "add"{{.*}}kind = "broadcast"
  %1 = kb.aten "add"(%0, %b, %one) {overload = "Tensor"} : (tensor<2x3x49x49xf32>, tensor<1x3x49x49xf32>, i64) -> tensor<2x3x49x49xf32>
  // CHECK: kb.aten "softmax"{{.*}}kind = "reduction"
  %2 = kb.aten "softmax"(%1, %m1, %none) {overload = "int"} : (tensor<2x3x49x49xf32>, i64, none) -> tensor<2x3x49x49xf32>
  return %2 : tensor<2x3x49x49xf32>
}
