// RUN: kb-opt %s --kb-simplify --split-input-file | FileCheck %s

// relu is idempotent; leaky_relu with a finite slope >= 0 after relu is the
// identity.
// CHECK-LABEL: func.func @after_relu
// CHECK:      %[[R:.*]] = kb.aten "relu"(%arg0)
// CHECK-NOT:  kb.aten
// CHECK:      return %[[R]], %[[R]]
func.func @after_relu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = kb.constant {value = 1.000000e-02 : f64} : f64
  %0 = kb.aten "relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kb.aten "relu"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = kb.aten "leaky_relu"(%0, %s) : (tensor<8xf32>, f64) -> tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A negative slope would turn relu's +0 into -0: not an identity.
// CHECK-LABEL: func.func @negative_slope_kept
// CHECK: kb.aten "leaky_relu"
func.func @negative_slope_kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = kb.constant {value = -1.000000e-01 : f64} : f64
  %0 = kb.aten "relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kb.aten "leaky_relu"(%0, %s) : (tensor<8xf32>, f64) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @merge_clamps
// CHECK-DAG:  %[[LO:.*]] = kb.constant {value = 0.000000e+00 : f64} : f64
// CHECK-DAG:  %[[HI:.*]] = kb.constant {value = 3.000000e+00 : f64} : f64
// CHECK:      %[[C:.*]] = kb.aten "clamp"(%arg0, %[[LO]], %[[HI]])
// CHECK-NOT:  kb.aten
// CHECK:      return %[[C]]
func.func @merge_clamps(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = kb.constant {value = -2.000000e+00 : f64} : f64
  %b = kb.constant {value = 5.000000e+00 : f64} : f64
  %c = kb.constant {value = 0.000000e+00 : f64} : f64
  %d = kb.constant {value = 3.000000e+00 : f64} : f64
  %0 = kb.aten "clamp"(%x, %a, %b) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %1 = kb.aten "clamp"(%0, %c, %d) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Bounds merge in the order fmax/fmin give zeros (-0 < +0): clamp_min(-0)
// then clamp_min(+0) is clamp_min(+0), which turns -0 into +0 as the pair
// does; std::max(-0.0, 0.0) would have kept -0.
// CHECK-LABEL: func.func @merge_signed_zero_bounds
// CHECK:      %[[LO:.*]] = kb.constant {value = 0.000000e+00 : f64} : f64
// CHECK:      kb.aten "clamp"(%arg0, %[[LO]], %{{.*}})
// CHECK:      %[[HI:.*]] = kb.constant {value = -0.000000e+00 : f64} : f64
// CHECK:      kb.aten "clamp"(%arg1, %{{.*}}, %[[HI]])
func.func @merge_signed_zero_bounds(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %nz = kb.constant {value = -0.000000e+00 : f64} : f64
  %pz = kb.constant {value = 0.000000e+00 : f64} : f64
  %five = kb.constant {value = 5.000000e+00 : f64} : f64
  %m5 = kb.constant {value = -5.000000e+00 : f64} : f64
  %0 = kb.aten "clamp"(%x, %nz, %five) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %1 = kb.aten "clamp"(%0, %pz, %five) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %2 = kb.aten "clamp"(%y, %m5, %pz) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %3 = kb.aten "clamp"(%2, %m5, %nz) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  return %1, %3 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Disjoint intervals give a constant; that is left alone.
// CHECK-LABEL: func.func @disjoint_clamps_kept
// CHECK-COUNT-2: kb.aten "clamp"
func.func @disjoint_clamps_kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = kb.constant {value = 0.000000e+00 : f64} : f64
  %b = kb.constant {value = 1.000000e+00 : f64} : f64
  %c = kb.constant {value = 2.000000e+00 : f64} : f64
  %d = kb.constant {value = 3.000000e+00 : f64} : f64
  %0 = kb.aten "clamp"(%x, %a, %b) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %1 = kb.aten "clamp"(%0, %c, %d) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// KernelBench level 2 task 2: clamp(0,1), *2, clamp(0,1), /2 is clamp(0, 0.5).
// The scale factor arrives as a 0-d tensor literal, as the tracer wraps it.
// CHECK-LABEL: func.func @scale_around_clamp
// CHECK-DAG:  %[[LO:.*]] = kb.constant {value = 0.000000e+00 : f64} : f64
// CHECK-DAG:  %[[HI:.*]] = kb.constant {value = 5.000000e-01 : f64} : f64
// CHECK:      %[[C:.*]] = kb.aten "clamp"(%arg0, %[[LO]], %[[HI]])
// CHECK-NOT:  kb.aten
// CHECK:      return %[[C]]
func.func @scale_around_clamp(%x: tensor<8xf32>) -> tensor<8xf32> {
  %lo = kb.constant {value = 0.000000e+00 : f64} : f64
  %hi = kb.constant {value = 1.000000e+00 : f64} : f64
  %two = kb.constant {value = 2.000000e+00 : f64} : tensor<f64>
  %0 = kb.aten "clamp"(%x, %lo, %hi) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %1 = kb.aten "mul"(%0, %two) {overload = "Tensor"} : (tensor<8xf32>, tensor<f64>) -> tensor<8xf32>
  %2 = kb.aten "clamp"(%1, %lo, %hi) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %3 = kb.aten "div"(%2, %two) {overload = "Tensor"} : (tensor<8xf32>, tensor<f64>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// A bound whose half is not exact in fp32 blocks the rewrite.
// CHECK-LABEL: func.func @scale_inexact_bound_kept
// CHECK: kb.aten "mul"
// CHECK: kb.aten "div"
func.func @scale_inexact_bound_kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %lo = kb.constant {value = 1.401298464324817e-45 : f64} : f64
  %hi = kb.constant {value = 1.000000e+00 : f64} : f64
  %two = kb.constant {value = 2.000000e+00 : f64} : f64
  %1 = kb.aten "mul"(%x, %two) {overload = "Scalar"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %2 = kb.aten "clamp"(%1, %lo, %hi) : (tensor<8xf32>, f64, f64) -> tensor<8xf32>
  %3 = kb.aten "div"(%2, %two) {overload = "Scalar"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// x*1, x/1, x-0 and x+(-0) are x for every IEEE value; x+0 is not (-0+0=+0).
// CHECK-LABEL: func.func @identities
// CHECK-NOT:  kb.aten "mul"
// CHECK-NOT:  kb.aten "div"
// CHECK-NOT:  kb.aten "sub"
// CHECK:      %[[ADD:.*]] = kb.aten "add"(%arg0, %{{.*}}, %{{.*}}) {overload = "Scalar"}
// CHECK-NOT:  kb.aten
// CHECK:      return %arg0, %arg0, %arg0, %arg0, %[[ADD]]
func.func @identities(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %one = kb.constant {value = 1.000000e+00 : f64} : f64
  %zero = kb.constant {value = 0.000000e+00 : f64} : f64
  %nzero = kb.constant {value = -0.000000e+00 : f64} : f64
  %alpha = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "mul"(%x, %one) {overload = "Scalar"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %1 = kb.aten "div"(%x, %one) {overload = "Scalar"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %2 = kb.aten "sub"(%x, %zero, %alpha) {overload = "Scalar"} : (tensor<8xf32>, f64, i64) -> tensor<8xf32>
  %3 = kb.aten "add"(%x, %nzero, %alpha) {overload = "Scalar"} : (tensor<8xf32>, f64, i64) -> tensor<8xf32>
  %4 = kb.aten "add"(%x, %zero, %alpha) {overload = "Scalar"} : (tensor<8xf32>, f64, i64) -> tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Forwarding x would alias it with a tensor that is later mutated in place.
// CHECK-LABEL: func.func @inplace_blocks_identity
// CHECK: kb.aten "mul"
// CHECK: kb.aten "relu"{{.*}}inplace
func.func @inplace_blocks_identity(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = kb.constant {value = 1.000000e+00 : f64} : f64
  %0 = kb.aten "mul"(%x, %one) {overload = "Scalar"} : (tensor<8xf32>, f64) -> tensor<8xf32>
  %1 = kb.aten "relu"(%0) {inplace} : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// dropout with p = 0 in training mode drops nothing.
// CHECK-LABEL: func.func @dropout_zero
// CHECK-NOT: kb.aten "dropout"
// CHECK: return %arg0
func.func @dropout_zero(%x: tensor<8xf32>) -> tensor<8xf32> {
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %t = kb.constant {value = true} : i1
  %0 = kb.aten "dropout"(%x, %p, %t) : (tensor<8xf32>, f64, i1) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A convolution's bias moves into its elementwise epilogue: the convolution
// runs without bias and an add of the [C,1,1] view joins the chain.
// CHECK-LABEL: func.func @conv_bias_into_epilogue
// CHECK:      %[[NONE:.*]] = kb.constant {value} : none
// CHECK:      %[[CONV:.*]] = kb.aten "conv2d"(%arg0, %arg1, %[[NONE]],
// CHECK:      %[[SHAPE:.*]] = kb.list(
// CHECK:      %[[VIEW:.*]] = kb.aten "view"(%arg2, %[[SHAPE]]) {{.*}} -> tensor<4x1x1xf32>
// CHECK:      %[[ADD:.*]] = kb.aten "add"(%[[CONV]], %[[VIEW]], %{{.*}}) {{.*}}overload = "Tensor"
// CHECK:      kb.aten "relu"(%[[ADD]])
func.func @conv_bias_into_epilogue(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x6x6xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "conv2d"(%x, %w, %b, %s, %p, %s, %one) : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %1 = kb.aten "relu"(%0) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %1 : tensor<2x4x6x6xf32>
}

// -----

// A pooling reads each window through the add (max and mean of x + b are
// what ATen computes after its in-place bias pass), so the bias moves too.
// CHECK-LABEL: func.func @conv_bias_into_pool
// CHECK:      %[[CONV:.*]] = kb.aten "conv2d"(%arg0, %arg1, %{{.*}},
// CHECK:      %[[VIEW:.*]] = kb.aten "view"(%arg2, %{{.*}}) {{.*}} -> tensor<4x1x1xf32>
// CHECK:      %[[ADD:.*]] = kb.aten "add"(%[[CONV]], %[[VIEW]], %{{.*}})
// CHECK:      kb.aten "max_pool2d"(%[[ADD]],
func.func @conv_bias_into_pool(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %false = kb.constant {value = false} : i1
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %k = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "conv2d"(%x, %w, %b, %s, %p, %s, %one) : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %1 = kb.aten "max_pool2d"(%0, %k, %k, %p, %s, %false) : (tensor<2x4x6x6xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x3x3xf32>
  return %1 : tensor<2x4x3x3xf32>
}

// -----

// Grouped convolutions that are not depthwise run in cuDNN, and ATen adds
// their bias in a pass of its own as for groups == 1: it moves too.
// CHECK-LABEL: func.func @grouped_conv_bias_into_epilogue
// CHECK:      %[[CONV:.*]] = kb.aten "conv2d"(%arg0, %arg1, %{{.*}},
// CHECK:      %[[VIEW:.*]] = kb.aten "view"(%arg2, %{{.*}}) {{.*}} -> tensor<4x1x1xf32>
// CHECK:      %[[ADD:.*]] = kb.aten "add"(%[[CONV]], %[[VIEW]], %{{.*}})
// CHECK:      kb.aten "relu"(%[[ADD]])
func.func @grouped_conv_bias_into_epilogue(%x: tensor<2x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x6x6xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "conv2d"(%x, %w, %b, %s, %p, %s, %two) : (tensor<2x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %1 = kb.aten "relu"(%0) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %1 : tensor<2x4x6x6xf32>
}

// -----

// A transposed convolution whose output the epilogue reads twice
// (`x * sigmoid(x)`): both reads go through the one add (ATen adds a
// transposed convolution's bias in a pass of its own too).
// CHECK-LABEL: func.func @conv_transpose_bias_two_uses
// CHECK:      %[[CONV:.*]] = kb.aten "conv_transpose2d"(%arg0, %arg1, %{{.*}},
// CHECK:      %[[VIEW:.*]] = kb.aten "view"(%arg2, %{{.*}}) {{.*}} -> tensor<4x1x1xf32>
// CHECK:      %[[ADD:.*]] = kb.aten "add"(%[[CONV]], %[[VIEW]], %{{.*}})
// CHECK:      %[[SIG:.*]] = kb.aten "sigmoid"(%[[ADD]])
// CHECK:      kb.aten "mul"(%[[ADD]], %[[SIG]])
func.func @conv_transpose_bias_two_uses(%x: tensor<2x3x8x8xf32>, %w: tensor<3x4x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x10x10xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "conv_transpose2d"(%x, %w, %b, %s, %p, %p, %one, %s) {overload = "input"} : (tensor<2x3x8x8xf32>, tensor<3x4x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64, !kb.list<i64>) -> tensor<2x4x10x10xf32>
  %1 = kb.aten "sigmoid"(%0) : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %2 = kb.aten "mul"(%0, %1) {overload = "Tensor"} : (tensor<2x4x10x10xf32>, tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  return %2 : tensor<2x4x10x10xf32>
}

// -----

// Left alone: no epilogue (the add would be a pass of its own), depthwise
// convolutions (groups == input channels: ATen's own kernels start their
// sums from the bias), and a convolution with a use outside the epilogue.
// CHECK-LABEL: func.func @conv_bias_stays
// CHECK-NOT:  kb.aten "view"
// CHECK:      return
func.func @conv_bias_stays(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>, %w2: tensor<4x4x3x3xf32>, %b: tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %one = kb.constant {value = 1 : i64} : i64
  %four = kb.constant {value = 4 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "conv2d"(%x, %w2, %b, %s, %p, %s, %one) : (tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %1 = kb.aten "conv2d"(%x, %w, %b, %s, %p, %s, %four) : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %2 = kb.aten "relu"(%1) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %3 = kb.aten "conv2d"(%x, %w2, %b, %s, %p, %s, %one) : (tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i64) -> tensor<2x4x6x6xf32>
  %4 = kb.aten "relu"(%3) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %0, %2, %3, %4 : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}

// -----

// The size of a static dim is a number (negative dims count from the end);
// the tensor it was read from is then used by its other consumers only.
// CHECK-LABEL: func.func @static_size
// CHECK-NOT:  kb.aten "size"
// CHECK-DAG:  %[[A:.*]] = kb.constant {value = 7 : i64} : i64
// CHECK-DAG:  %[[B:.*]] = kb.constant {value = 5 : i64} : i64
// CHECK:      return %[[A]], %[[B]]
func.func @static_size(%x: tensor<7x5xf32>) -> (i64, i64) {
  %zero = kb.constant {value = 0 : i64} : i64
  %last = kb.constant {value = -1 : i64} : i64
  %0 = kb.aten "size"(%x, %zero) {overload = "int"} : (tensor<7x5xf32>, i64) -> i64
  %1 = kb.aten "size"(%x, %last) {overload = "int"} : (tensor<7x5xf32>, i64) -> i64
  return %0, %1 : i64, i64
}

// -----

// Left alone: a dynamic dim and a dim out of range (ATen raises there).
// CHECK-LABEL: func.func @size_stays
// CHECK-COUNT-2: kb.aten "size"
func.func @size_stays(%x: tensor<?x5xf32>) -> (i64, i64) {
  %zero = kb.constant {value = 0 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %0 = kb.aten "size"(%x, %zero) {overload = "int"} : (tensor<?x5xf32>, i64) -> i64
  %1 = kb.aten "size"(%x, %two) {overload = "int"} : (tensor<?x5xf32>, i64) -> i64
  return %0, %1 : i64, i64
}

// -----

// JIT autocast's casts return their operand itself when they do not cast
// (the result's type is the operand's); a cast that casts stays.
// CHECK-LABEL: func.func @autocast_identity
// CHECK-NOT:  "_autocast_to_reduced_precision"(%arg0
// CHECK:      %[[F:.*]] = kb.aten "_autocast_to_full_precision"(%arg0
// CHECK-SAME: -> tensor<8xf32>
// CHECK:      return %arg0, %[[F]]
func.func @autocast_identity(%x: tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xf32>) {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %bf = kb.constant {value = 15 : i64} : i64
  %0 = kb.aten "_autocast_to_reduced_precision"(%x, %t, %f, %bf, %bf) : (tensor<8xbf16>, i1, i1, i64, i64) -> tensor<8xbf16>
  %1 = kb.aten "_autocast_to_full_precision"(%x, %t, %f) : (tensor<8xbf16>, i1, i1) -> tensor<8xf32>
  return %0, %1 : tensor<8xbf16>, tensor<8xf32>
}

// -----

// Reductions over dims of size 1 that keep them: amax is the element
// itself; sum and mean are +0 + x (ATen's reduce starts from +0), which
// only turns -0 into +0: add(x, +0.0). A reduction that drops the dims, one
// with a dtype and one over a dim of size 2 are kept.
// CHECK-LABEL: func.func @unit_reductions
// CHECK-NOT:  kb.aten "amax"
// CHECK-NOT:  kb.aten "mean"
// CHECK:      %[[Z:.*]] = kb.constant {value = 0.000000e+00 : f64} : f64
// CHECK:      %[[A:.*]] = kb.aten "add"(%arg0, %[[Z]], %{{.*}}) {{.*}}overload = "Scalar"
// CHECK:      %[[D:.*]] = kb.aten "sum"(%arg0,
// CHECK-SAME: -> tensor<4x8xf32>
// CHECK:      %[[T:.*]] = kb.aten "sum"(%arg0,
// CHECK-SAME: -> tensor<4x8x1x1xf64>
// CHECK:      %[[W:.*]] = kb.aten "amax"(%arg1,
// CHECK:      return %arg0, %[[A]], %[[D]], %[[T]], %[[W]]
func.func @unit_reductions(%x: tensor<4x8x1x1xf32>, %y: tensor<4x8x2x1xf32>) -> (tensor<4x8x1x1xf32>, tensor<4x8x1x1xf32>, tensor<4x8xf32>, tensor<4x8x1x1xf64>, tensor<4x8x1x1xf32>) {
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %dims = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %true = kb.constant {value = true} : i1
  %false = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %f64 = kb.constant {value = 7 : i64} : i64
  %0 = kb.aten "amax"(%x, %dims, %true) : (tensor<4x8x1x1xf32>, !kb.list<i64>, i1) -> tensor<4x8x1x1xf32>
  %1 = kb.aten "mean"(%x, %dims, %true, %none) {overload = "dim"} : (tensor<4x8x1x1xf32>, !kb.list<i64>, i1, none) -> tensor<4x8x1x1xf32>
  %2 = kb.aten "sum"(%x, %dims, %false, %none) {overload = "dim_IntList"} : (tensor<4x8x1x1xf32>, !kb.list<i64>, i1, none) -> tensor<4x8xf32>
  %3 = kb.aten "sum"(%x, %dims, %true, %f64) {overload = "dim_IntList"} : (tensor<4x8x1x1xf32>, !kb.list<i64>, i1, i64) -> tensor<4x8x1x1xf64>
  %4 = kb.aten "amax"(%y, %dims, %true) : (tensor<4x8x2x1xf32>, !kb.list<i64>, i1) -> tensor<4x8x1x1xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8x1x1xf32>, tensor<4x8x1x1xf32>, tensor<4x8xf32>, tensor<4x8x1x1xf64>, tensor<4x8x1x1xf32>
}
