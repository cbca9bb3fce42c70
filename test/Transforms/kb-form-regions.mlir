// RUN: kb-opt %s --kb-classify --kb-form-regions --split-input-file | FileCheck %s

// An anchor takes its elementwise/broadcast epilogue.
// CHECK-LABEL: func.func @anchor_epilogue
// CHECK:       %[[R:.*]] = kb.region attributes {anchor = "aten::_convolution", id = 0 : i64} -> (tensor<2x8x6x6xf32>) {
// CHECK-NEXT:    kb.aten "_convolution"
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    %[[ADD:.*]] = kb.aten "add"
// CHECK-NEXT:    kb.yield %[[ADD]]
// CHECK:       return %[[R]]
func.func @anchor_epilogue(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8x1x1xf32>) -> tensor<2x8x6x6xf32> {
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

// A lone anchor stays in the library and is reported.
// CHECK-LABEL: func.func @lone_anchor
// CHECK-NOT:   kb.region
// CHECK:       kb.aten "mm"{{.*}}kb.unfused = "anchor without a fusable consumer: stays in cuBLAS/cuDNN"
func.func @lone_anchor(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = kb.aten "mm"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A reduction may join and ends the pre-reduction part; pointwise ops on the
// reduced value follow it (mean -> tanh); a second reduction opens a new
// region.
// CHECK-LABEL: func.func @reduction_epilogue
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x4xf32>) {
// CHECK-NEXT:    kb.aten "hardtanh"
// CHECK-NEXT:    kb.aten "mean"
// CHECK-NEXT:    %[[T:.*]] = kb.aten "tanh"
// CHECK-NEXT:    kb.yield %[[T]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<2xf32>) {
// CHECK-NEXT:    kb.aten "sum"
func.func @reduction_epilogue(%x: tensor<2x4x8x8xf32>) -> tensor<2xf32> {
  %lo = kb.constant {value = -1.000000e+00 : f64} : f64
  %hi = kb.constant {value = 1.000000e+00 : f64} : f64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %dims = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %d1 = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "hardtanh"(%x, %lo, %hi) : (tensor<2x4x8x8xf32>, f64, f64) -> tensor<2x4x8x8xf32>
  %1 = kb.aten "mean"(%0, %dims, %f, %none) {overload = "dim"} : (tensor<2x4x8x8xf32>, !kb.list<i64>, i1, none) -> tensor<2x4xf32>
  %2 = kb.aten "tanh"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = kb.aten "sum"(%2, %d1, %f, %none) {overload = "dim_IntList"} : (tensor<2x4xf32>, !kb.list<i64>, i1, none) -> tensor<2xf32>
  return %3 : tensor<2xf32>
}

// -----

// A value before a reduction that is also used outside the group would be
// an output of another shape than the sum's, which no kernel writes: the
// sum starts its own region and reads the relu from memory (a norm or a
// softmax, whose kernels write every element, may still join).
// CHECK-LABEL: func.func @early_value_used_outside
// CHECK:       %[[R0:.*]] = kb.region attributes {id = 0 : i64} -> (tensor<4x16xf32>) {
// CHECK-NEXT:    %[[A:.*]] = kb.aten "relu"
// CHECK-NEXT:    kb.yield %[[A]]
// CHECK:       %[[R1:.*]] = kb.region attributes {id = 1 : i64} -> (tensor<4xf32>) {
// CHECK-NEXT:    kb.aten "sum"(%[[R0]],
// CHECK:       return %[[R0]], %[[R1]]
func.func @early_value_used_outside(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  %one = kb.constant {value = 1 : i64} : i64
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %d1 = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "relu"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = kb.aten "sum"(%0, %d1, %f, %none) {overload = "dim_IntList"} : (tensor<4x16xf32>, !kb.list<i64>, i1, none) -> tensor<4xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4xf32>
}

// -----

// The int64 indices of an argmax are written by its kernel, but integer
// arithmetic on them does not join its region (only float values flow
// between a region's ops): the argmax keeps a region of its own, and the
// integer op stays in ATen.
// CHECK-LABEL: func.func @argmax_index_consumer
// CHECK:       %[[R0:.*]] = kb.region attributes {id = 0 : i64} -> (tensor<4xi64>) {
// CHECK-NEXT:    %[[A:.*]] = kb.aten "argmax"
// CHECK-NEXT:    kb.yield %[[A]]
// CHECK:       kb.aten "mul"(%[[R0]], %{{.*}}) {kb.unfused = "integer tensors, and bools computed from masks, stay in ATen (kernels read float and bool tensors and write floats)"
// CHECK-NOT:   kb.region
func.func @argmax_index_consumer(%x: tensor<4x16xf32>, %two: tensor<i64>) -> tensor<4xi64> {
  %one = kb.constant {value = 1 : i64} : i64
  %f = kb.constant {value = false} : i1
  %0 = kb.aten "argmax"(%x, %one, %f) : (tensor<4x16xf32>, i64, i1) -> tensor<4xi64>
  %1 = kb.aten "mul"(%0, %two) {overload = "Tensor"} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}

// -----

// A value used inside and outside the region is yielded as well.
// CHECK-LABEL: func.func @multi_use
// CHECK:       %[[R:.*]]:2 = kb.region attributes {anchor = "aten::linear", id = 0 : i64} -> (tensor<4x16xf32>, tensor<4x16xf32>) {
// CHECK:         %[[L:.*]] = kb.aten "linear"
// CHECK-NEXT:    %[[S:.*]] = kb.aten "sigmoid"(%[[L]])
// CHECK-NEXT:    %[[M:.*]] = kb.aten "mul"(%[[L]], %[[S]])
// CHECK-NEXT:    kb.yield %[[S]], %[[M]]
// CHECK:       return %[[R]]#1, %[[R]]#0
func.func @multi_use(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %none = kb.constant {value} : none
  %0 = kb.aten "linear"(%x, %w, %none) : (tensor<4x8xf32>, tensor<16x8xf32>, none) -> tensor<4x16xf32>
  %1 = kb.aten "sigmoid"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kb.aten "mul"(%0, %1) {overload = "Tensor"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// %2 uses %0 (in region 0) and %1, which depends on region 0 through an op
// outside it: joining would make the region depend on itself, so %2 starts
// its own region after the opaque op.
// CHECK-LABEL: func.func @no_cycle
// CHECK:       %[[R0:.*]] = kb.region attributes {id = 0 : i64}
// CHECK-NEXT:    kb.aten "exp"
// CHECK:       %[[O:.*]] = kb.opaque "aten::my_op"(%[[R0]])
// CHECK:       kb.region attributes {id = 1 : i64}
// CHECK-NEXT:    kb.aten "add"(%[[R0]], %[[O]]
func.func @no_cycle(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kb.opaque "aten::my_op"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = kb.aten "add"(%0, %1, %one) {overload = "Tensor"} : (tensor<8xf32>, tensor<8xf32>, i64) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// An unrelated op between two members that uses the first one is moved after
// the region, keeping the block in a valid order.
// CHECK-LABEL: func.func @interleaved
// CHECK:       %[[R:.*]]:2 = kb.region
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    kb.aten "neg"
// CHECK:       kb.opaque "aten::my_op"(%[[R]]#0)
func.func @interleaved(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = kb.aten "relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kb.opaque "aten::my_op"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = kb.aten "neg"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Ops of different iteration spaces do not share a region; views and control
// flow are reported.
// CHECK-LABEL: func.func @boundaries
// CHECK:       kb.aten "view"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.aten "relu"{{.*}}kb.unfused = "inside control flow"
// CHECK:       kb.unfused = "control flow (prim::If/prim::Loop) is kept as is"
func.func @boundaries(%x: tensor<2x8xf32>, %c: i1) -> (tensor<16xf32>, tensor<2x8xf32>) {
  %n = kb.constant {value = 16 : i64} : i64
  %shape = kb.list(%n) : (i64) -> !kb.list<i64>
  %0 = kb.aten "view"(%x, %shape) : (tensor<2x8xf32>, !kb.list<i64>) -> tensor<16xf32>
  %1 = kb.opaque "prim::If"(%c) {
    %r = kb.aten "relu"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    kb.yield %r : tensor<2x8xf32>
  }, {
    kb.yield %x : tensor<2x8xf32>
  } : (i1) -> tensor<2x8xf32>
  return %0, %1 : tensor<16xf32>, tensor<2x8xf32>
}

// -----

// A window pooling may feed another reduction in the same region (each pooled
// element is computed from a window of the previous stage): max_pool2d ->
// hardtanh -> mean -> tanh is one region after the anchor.
// CHECK-LABEL: func.func @pool_then_mean
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<1x1x1x1xf32>) {
// CHECK-NEXT:    kb.aten "max_pool2d"
// CHECK-NEXT:    kb.aten "hardtanh"
// CHECK-NEXT:    kb.aten "mean"
// CHECK-NEXT:    kb.aten "tanh"
func.func @pool_then_mean(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x1x1xf32> {
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %lo = kb.constant {value = -1.000000e+00 : f64} : f64
  %hi = kb.constant {value = 1.000000e+00 : f64} : f64
  %k = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %d = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %dims = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "max_pool2d"(%x, %k, %k, %p, %d, %f) : (tensor<1x1x4x4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<1x1x2x2xf32>
  %1 = kb.aten "hardtanh"(%0, %lo, %hi) : (tensor<1x1x2x2xf32>, f64, f64) -> tensor<1x1x2x2xf32>
  %2 = kb.aten "mean"(%1, %dims, %t, %none) {overload = "dim"} : (tensor<1x1x2x2xf32>, !kb.list<i64>, i1, none) -> tensor<1x1x1x1xf32>
  %3 = kb.aten "tanh"(%2) : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %3 : tensor<1x1x1x1xf32>
}

// -----

// An op whose operands come from two anchorless pointwise groups over its
// shape joins the first and takes the second along (the mask and the
// negation of `where(x < t, x, -x)` open groups of their own when their
// producer stays outside). A group with a reduction is tried first and
// takes the pointwise group along: the add joins the softmax's group, so
// the softmax is never written to memory.
// CHECK-LABEL: func.func @sibling_groups
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x64xf32>) {
// CHECK-NEXT:    kb.aten "lt"
// CHECK-NEXT:    kb.aten "neg"
// CHECK-NEXT:    kb.aten "where"
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    %[[A:.*]] = kb.aten "add"
// CHECK-NEXT:    kb.yield %[[A]]
// CHECK-NOT:   kb.region
func.func @sibling_groups(%x: tensor<8x64xf32>, %t: tensor<64xf32>) -> tensor<8x64xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %0 = kb.aten "lt"(%x, %t) {overload = "Tensor"} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xi1>
  %1 = kb.aten "neg"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = kb.aten "where"(%0, %x, %1) {overload = "self"} : (tensor<8x64xi1>, tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = kb.aten "softmax"(%x, %one, %none) {overload = "int"} : (tensor<8x64xf32>, i64, none) -> tensor<8x64xf32>
  %4 = kb.aten "add"(%2, %3, %one) {overload = "Tensor"} : (tensor<8x64xf32>, tensor<8x64xf32>, i64) -> tensor<8x64xf32>
  return %4 : tensor<8x64xf32>
}

// -----

// A per-channel mask computed from a parameter alone joins the region that
// broadcasts it (its ops run at the broadcast index); a parameter op with
// another user outside keeps its own region.
// CHECK-LABEL: func.func @broadcast_leaf
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x64xf32>) {
// CHECK-NEXT:    kb.aten "hardswish"
// CHECK-NEXT:    kb.aten "gt"
// CHECK-NEXT:    kb.aten "where"
// CHECK-NEXT:    %[[A:.*]] = kb.aten "add"
// CHECK-NEXT:    kb.yield %[[A]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<64xf32>) {
// CHECK-NEXT:    %[[B:.*]] = kb.aten "abs"
// CHECK-NEXT:    kb.yield %[[B]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<8x64xf32>) {
// CHECK-NEXT:    %[[D:.*]] = kb.aten "div"
// CHECK-NEXT:    kb.yield %[[D]]
func.func @broadcast_leaf(%x: tensor<8x64xf32>, %p: tensor<64xf32>, %q: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>) {
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0.0 : f64} : f64
  %0 = kb.aten "hardswish"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %1 = kb.aten "gt"(%p, %zero) {overload = "Scalar"} : (tensor<64xf32>, f64) -> tensor<64xi1>
  %2 = kb.aten "where"(%1, %0, %q) {overload = "self"} : (tensor<64xi1>, tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %3 = kb.aten "add"(%2, %0, %one) {overload = "Tensor"} : (tensor<8x64xf32>, tensor<8x64xf32>, i64) -> tensor<8x64xf32>
  %4 = kb.aten "abs"(%q) : (tensor<64xf32>) -> tensor<64xf32>
  %5 = kb.aten "div"(%x, %4) {overload = "Tensor"} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %3, %5, %4 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>
}

// -----

// A pointwise op of the convolution's epilogue that reads only the
// convolution's result, and whose one user is in the next region (the
// comparison after the softmax over dim 0), moves into that region: it
// reads the convolution's result there instead of a written copy.
// CHECK-LABEL: func.func @pointwise_sinks_into_consumer
// CHECK:       %[[E:[0-9]+]]:2 = kb.region attributes {anchor = "aten::_convolution", id = 0 : i64} -> (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>) {
// CHECK-NEXT:    %[[C:.*]] = kb.aten "_convolution"
// CHECK-NEXT:    kb.aten "log_softmax"
// CHECK-NEXT:    %[[A:.*]] = kb.aten "add"
// CHECK-NEXT:    kb.yield %[[C]], %[[A]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<4x8x6x6xf32>) {
// CHECK-NEXT:    kb.aten "softmax"(%[[E]]#1
// CHECK-NEXT:    kb.aten "clamp"
// CHECK-NEXT:    kb.aten "clamp"(%[[E]]#0
// CHECK-NEXT:    kb.aten "eq"
// CHECK-NEXT:    kb.aten "where"
func.func @pointwise_sinks_into_consumer(%x: tensor<4x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<4x8x6x6xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %lo = kb.constant {value = -1 : i64} : i64
  %z = kb.constant {value = 0.000000e+00 : f64} : f64
  %f = kb.constant {value = false} : i1
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "_convolution"(%x, %w, %none, %s, %p, %s, %f, %p, %one, %f, %f, %f, %f) : (tensor<4x4x8x8xf32>, tensor<8x4x3x3xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<4x8x6x6xf32>
  %1 = kb.aten "log_softmax"(%0, %three, %none) {overload = "int"} : (tensor<4x8x6x6xf32>, i64, none) -> tensor<4x8x6x6xf32>
  %2 = kb.aten "add"(%1, %0, %one) {overload = "Tensor"} : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>, i64) -> tensor<4x8x6x6xf32>
  %3 = kb.aten "softmax"(%2, %zero, %none) {overload = "int"} : (tensor<4x8x6x6xf32>, i64, none) -> tensor<4x8x6x6xf32>
  %4 = kb.aten "clamp"(%3, %lo, %one) : (tensor<4x8x6x6xf32>, i64, i64) -> tensor<4x8x6x6xf32>
  %5 = kb.aten "clamp"(%0, %lo, %one) : (tensor<4x8x6x6xf32>, i64, i64) -> tensor<4x8x6x6xf32>
  %6 = kb.aten "eq"(%4, %5) {overload = "Tensor"} : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xi1>
  %7 = kb.aten "where"(%6, %z, %3) {overload = "ScalarSelf"} : (tensor<4x8x6x6xi1>, f64, tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xf32>
  return %7 : tensor<4x8x6x6xf32>
}

// -----

// A convolution's bias add read by two regions (`v.mean(0)` and
// `v - mean` before a pooling) is copied into both: each reads the convolution's result and
// the bias, the sum is never written, and the convolution runs alone.
// CHECK-LABEL: func.func @pointwise_copied_into_consumers
// CHECK:       %[[C:.*]] = kb.aten "_convolution"{{.*}}kb.unfused = "anchor without a fusable consumer
// CHECK:       %[[M:.*]] = kb.region attributes {id = 0 : i64} -> (tensor<1x512x32x8xf32>) {
// CHECK-NEXT:    %[[A:.*]] = kb.aten "add"(%[[C]], %arg2
// CHECK-NEXT:    kb.aten "mean"(%[[A]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<961x512x7x7xf32>) {
// CHECK-NEXT:    %[[B:.*]] = kb.aten "add"(%[[C]], %arg2
// CHECK-NEXT:    kb.aten "sub"(%[[B]], %[[M]]
// CHECK-NEXT:    kb.aten "adaptive_max_pool2d"
// CHECK-NOT:   kb.region
func.func @pointwise_copied_into_consumers(%x: tensor<961x8x64x16xf32>, %w: tensor<512x8x5x5xf32>, %b: tensor<512x1x1xf32>) -> tensor<961x512x7x7xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %two = kb.constant {value = 2 : i64} : i64
  %s = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %dl = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %op = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %d = kb.list(%zero) : (i64) -> !kb.list<i64>
  %0 = kb.aten "_convolution"(%x, %w, %none, %s, %p, %dl, %f, %op, %one, %f, %f, %f, %f) : (tensor<961x8x64x16xf32>, tensor<512x8x5x5xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<961x512x32x8xf32>
  %1 = kb.aten "add"(%0, %b, %one) {overload = "Tensor"} : (tensor<961x512x32x8xf32>, tensor<512x1x1xf32>, i64) -> tensor<961x512x32x8xf32>
  %2 = kb.aten "mean"(%1, %d, %t, %none) {overload = "dim"} : (tensor<961x512x32x8xf32>, !kb.list<i64>, i1, none) -> tensor<1x512x32x8xf32>
  %3 = kb.aten "sub"(%1, %2, %one) {overload = "Tensor"} : (tensor<961x512x32x8xf32>, tensor<1x512x32x8xf32>, i64) -> tensor<961x512x32x8xf32>
  %seven = kb.constant {value = 7 : i64} : i64
  %o = kb.list(%seven, %seven) : (i64, i64) -> !kb.list<i64>
  %4:2 = kb.aten "adaptive_max_pool2d"(%3, %o) : (tensor<961x512x32x8xf32>, !kb.list<i64>) -> (tensor<961x512x7x7xf32>, tensor<961x512x7x7xi64>)
  return %4#0 : tensor<961x512x7x7xf32>
}

// -----

// An anchor's epilogue (the residual `h = x + o(a)`) reduced over its rows
// by an RMS norm while the next residual add reads h too: the epilogue
// moves into the norm's region, which writes h and the norm; the linear
// runs alone.
// CHECK-LABEL: func.func @epilogue_moves_into_row_reduction
// CHECK:       %[[L:.*]] = kb.aten "linear"(%arg1{{.*}}kb.unfused = "anchor without a fusable consumer
// CHECK:       %[[R:.*]]:2 = kb.region attributes {id = 0 : i64} -> (tensor<16x256x512xf32>, tensor<16x256x512xf32>) {
// CHECK-NEXT:    %[[H:.*]] = kb.aten "add"(%arg0, %[[L]]
// CHECK-NEXT:    kb.aten "pow"(%[[H]]
// CHECK-NEXT:    kb.aten "mean"
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.aten "rsqrt"
// CHECK-NEXT:    %[[N:.*]] = kb.aten "mul"(%[[H]]
// CHECK-NEXT:    kb.yield %[[H]], %[[N]]
// CHECK:       kb.region attributes {anchor = "aten::linear", id = 1 : i64}
// CHECK-NEXT:    %[[F:.*]] = kb.aten "linear"(%[[R]]#1
// CHECK-NEXT:    kb.aten "add"(%[[R]]#0, %[[F]]
// CHECK-NOT:   kb.region
func.func @epilogue_moves_into_row_reduction(%x: tensor<16x256x512xf32>, %a: tensor<16x256x512xf32>, %w1: tensor<512x512xf32>, %w2: tensor<512x512xf32>) -> tensor<16x256x512xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %last = kb.constant {value = -1 : i64} : i64
  %eps = kb.constant {value = 1.000000e-06 : f64} : f64
  %t = kb.constant {value = true} : i1
  %d = kb.list(%last) : (i64) -> !kb.list<i64>
  %0 = kb.aten "linear"(%a, %w1, %none) : (tensor<16x256x512xf32>, tensor<512x512xf32>, none) -> tensor<16x256x512xf32>
  %1 = kb.aten "add"(%x, %0, %one) {overload = "Tensor"} : (tensor<16x256x512xf32>, tensor<16x256x512xf32>, i64) -> tensor<16x256x512xf32>
  %2 = kb.aten "pow"(%1, %two) {overload = "Tensor_Scalar"} : (tensor<16x256x512xf32>, i64) -> tensor<16x256x512xf32>
  %3 = kb.aten "mean"(%2, %d, %t, %none) {overload = "dim"} : (tensor<16x256x512xf32>, !kb.list<i64>, i1, none) -> tensor<16x256x1xf32>
  %4 = kb.aten "add"(%3, %eps, %one) {overload = "Scalar"} : (tensor<16x256x1xf32>, f64, i64) -> tensor<16x256x1xf32>
  %5 = kb.aten "rsqrt"(%4) : (tensor<16x256x1xf32>) -> tensor<16x256x1xf32>
  %6 = kb.aten "mul"(%1, %5) {overload = "Tensor"} : (tensor<16x256x512xf32>, tensor<16x256x1xf32>) -> tensor<16x256x512xf32>
  %7 = kb.aten "linear"(%6, %w2, %none) : (tensor<16x256x512xf32>, tensor<512x512xf32>, none) -> tensor<16x256x512xf32>
  %8 = kb.aten "add"(%1, %7, %one) {overload = "Tensor"} : (tensor<16x256x512xf32>, tensor<16x256x512xf32>, i64) -> tensor<16x256x512xf32>
  return %8 : tensor<16x256x512xf32>
}

// -----

// A shape-changing reduction of a pointwise chain whose value is also used
// elsewhere (`v.mean(0)` beside `v * v`) gets its own copy of the chain:
// the mean's region computes it from x, and the product joins the original
// chain, so v is never written.
// CHECK-LABEL: func.func @reduction_recomputes_chain
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "tanh"(%arg0)
// CHECK-NEXT:    %[[V:.*]] = kb.aten "mul"
// CHECK-NEXT:    kb.aten "mul"(%[[V]], %[[V]])
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<1x64xf32>) {
// CHECK-NEXT:    kb.aten "tanh"(%arg0)
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    kb.aten "mean"
// CHECK-NOT:   kb.region
func.func @reduction_recomputes_chain(%x: tensor<32x64xf32>) -> (tensor<1x64xf32>, tensor<32x64xf32>) {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %t = kb.constant {value = true} : i1
  %d = kb.list(%zero) : (i64) -> !kb.list<i64>
  %0 = kb.aten "tanh"(%x) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %1 = kb.aten "mul"(%0, %x) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %2 = kb.aten "mean"(%1, %d, %t, %none) {overload = "dim"} : (tensor<32x64xf32>, !kb.list<i64>, i1, none) -> tensor<1x64xf32>
  %3 = kb.aten "mul"(%1, %1) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  return %2, %3 : tensor<1x64xf32>, tensor<32x64xf32>
}

// -----

// A pointwise op combining a keepdim reduction's result with the rows it
// reduced (`v - v.mean(0, keepdim=True)`) joins the reduction's region:
// the row kernel writes it per element once the row's mean is known. So
// do ops of the result's shape whose users all do the same (`(u - m) /
// (m + 1)`).
// CHECK-LABEL: func.func @reduction_broadcast_back
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "tanh"(%arg0)
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    kb.aten "mean"
// CHECK-NEXT:    kb.aten "sub"
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.aten "div"
// CHECK-NOT:   kb.region
func.func @reduction_broadcast_back(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %t = kb.constant {value = true} : i1
  %d = kb.list(%zero) : (i64) -> !kb.list<i64>
  %0 = kb.aten "tanh"(%x) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %1 = kb.aten "mul"(%0, %x) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %2 = kb.aten "mean"(%1, %d, %t, %none) {overload = "dim"} : (tensor<32x64xf32>, !kb.list<i64>, i1, none) -> tensor<1x64xf32>
  %3 = kb.aten "sub"(%1, %2, %one) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<1x64xf32>, i64) -> tensor<32x64xf32>
  %4 = kb.aten "add"(%2, %one, %one) {overload = "Scalar"} : (tensor<1x64xf32>, i64, i64) -> tensor<1x64xf32>
  %5 = kb.aten "div"(%3, %4) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<1x64xf32>) -> tensor<32x64xf32>
  return %5 : tensor<32x64xf32>
}

// -----

// The result used elsewhere too (returned) keeps the subtraction out: the
// region would write outputs of two shapes.
// CHECK-LABEL: func.func @reduction_used_elsewhere_not_broadcast_back
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x1xf32>) {
// CHECK-NEXT:    kb.aten "sum"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "sub"
func.func @reduction_used_elsewhere_not_broadcast_back(%x: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32x1xf32>) {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %t = kb.constant {value = true} : i1
  %d = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "sum"(%x, %d, %t, %none) {overload = "dim_IntList"} : (tensor<32x64xf32>, !kb.list<i64>, i1, none) -> tensor<32x1xf32>
  %1 = kb.aten "sub"(%x, %0, %one) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<32x1xf32>, i64) -> tensor<32x64xf32>
  return %1, %0 : tensor<32x64xf32>, tensor<32x1xf32>
}

// -----

// An op reading two full-size tensors stays where it is: in the consumer's
// region it would read both instead of its one result.
// CHECK-LABEL: func.func @two_operand_op_does_not_sink
// CHECK:       kb.region attributes {anchor = "aten::_convolution", id = 0 : i64}
// CHECK-NEXT:    kb.aten "_convolution"
// CHECK-NEXT:    kb.aten "log_softmax"
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.aten "mul"(%{{.*}}, %arg2)
// CHECK:       kb.region attributes {id = 1 : i64}
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    kb.aten "eq"
func.func @two_operand_op_does_not_sink(%x: tensor<4x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %y: tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xi1> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %f = kb.constant {value = false} : i1
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "_convolution"(%x, %w, %none, %s, %p, %s, %f, %p, %one, %f, %f, %f, %f) : (tensor<4x4x8x8xf32>, tensor<8x4x3x3xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<4x8x6x6xf32>
  %1 = kb.aten "log_softmax"(%0, %three, %none) {overload = "int"} : (tensor<4x8x6x6xf32>, i64, none) -> tensor<4x8x6x6xf32>
  %2 = kb.aten "add"(%1, %0, %one) {overload = "Tensor"} : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>, i64) -> tensor<4x8x6x6xf32>
  %3 = kb.aten "mul"(%0, %y) {overload = "Tensor"} : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xf32>
  %4 = kb.aten "softmax"(%2, %zero, %none) {overload = "int"} : (tensor<4x8x6x6xf32>, i64, none) -> tensor<4x8x6x6xf32>
  %5 = kb.aten "eq"(%4, %3) {overload = "Tensor"} : (tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>) -> tensor<4x8x6x6xi1>
  return %5 : tensor<4x8x6x6xi1>
}

// -----

// Few long rows (4 of 8192) are not broadcast back: the row kernel would
// split each row over blocks with a grid barrier before the element pass.
// CHECK-LABEL: func.func @few_long_rows_not_broadcast_back
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<4x1xf32>) {
// CHECK-NEXT:    kb.aten "amax"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<4x8192xf32>) {
// CHECK-NEXT:    kb.aten "sub"
func.func @few_long_rows_not_broadcast_back(%x: tensor<4x8192xf32>) -> tensor<4x8192xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %t = kb.constant {value = true} : i1
  %d = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "amax"(%x, %d, %t) : (tensor<4x8192xf32>, !kb.list<i64>, i1) -> tensor<4x1xf32>
  %1 = kb.aten "sub"(%x, %0, %one) {overload = "Tensor"} : (tensor<4x8192xf32>, tensor<4x1xf32>, i64) -> tensor<4x8192xf32>
  return %1 : tensor<4x8192xf32>
}

// -----

// A pooling whose windows overlap does not follow another pooling in its
// region (it would recompute each pooled value once per window holding it:
// 81 reads an output for 3x3 over 3x3); one whose windows tile its input
// does.
// CHECK-LABEL: func.func @pool_after_pool
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x4x8x8xf32>) {
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    kb.aten "max_pool2d"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<2x4x2x2xf32>) {
// CHECK-NEXT:    kb.aten "max_pool2d"
// CHECK-NEXT:    kb.aten "avg_pool2d"
// CHECK-NOT:   kb.region
func.func @pool_after_pool(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x2x2xf32> {
  %none = kb.constant {value} : none
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %k3 = kb.list(%three, %three) : (i64, i64) -> !kb.list<i64>
  %s1 = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %k2 = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p0 = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %p1 = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %r = kb.aten "relu"(%x) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = kb.aten "max_pool2d"(%r, %k3, %s1, %p1, %s1, %f) : (tensor<2x4x8x8xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x8x8xf32>
  %1 = kb.aten "max_pool2d"(%0, %k3, %k2, %p1, %s1, %f) : (tensor<2x4x8x8xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x4x4xf32>
  %2 = kb.aten "avg_pool2d"(%1, %k2, %k2, %p0, %f, %t, %none) : (tensor<2x4x4x4xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, i1, none) -> tensor<2x4x2x2xf32>
  return %2 : tensor<2x4x2x2xf32>
}

// -----

// Adaptive windows overlap where the output does not divide the input (7 ->
// 3: windows [0, 3), [2, 5), [4, 7)); where it does (8 -> 4) they tile it.
// CHECK-LABEL: func.func @adaptive_pool_after_pool
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x4x7x7xf32>) {
// CHECK-NEXT:    kb.aten "max_pool2d"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<2x4x3x3xf32>) {
// CHECK-NEXT:    kb.aten "adaptive_avg_pool2d"
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<2x4x4x4xf32>) {
// CHECK-NEXT:    kb.aten "max_pool2d"
// CHECK-NEXT:    kb.aten "adaptive_avg_pool2d"
func.func @adaptive_pool_after_pool(%x: tensor<2x4x14x14xf32>, %y: tensor<2x4x16x16xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x4x4xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %four = kb.constant {value = 4 : i64} : i64
  %f = kb.constant {value = false} : i1
  %k2 = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p0 = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %d1 = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %o3 = kb.list(%three, %three) : (i64, i64) -> !kb.list<i64>
  %o4 = kb.list(%four, %four) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "max_pool2d"(%x, %k2, %k2, %p0, %d1, %f) : (tensor<2x4x14x14xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x7x7xf32>
  %1 = kb.aten "adaptive_avg_pool2d"(%0, %o3) : (tensor<2x4x7x7xf32>, !kb.list<i64>) -> tensor<2x4x3x3xf32>
  %2 = kb.aten "max_pool2d"(%y, %k2, %k2, %p0, %d1, %f) : (tensor<2x4x16x16xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x8x8xf32>
  %3 = kb.aten "adaptive_avg_pool2d"(%2, %o4) : (tensor<2x4x8x8xf32>, !kb.list<i64>) -> tensor<2x4x4x4xf32>
  return %1, %3 : tensor<2x4x3x3xf32>, tensor<2x4x4x4xf32>
}

// -----

// After a pooling, the last reduction's rows are pooled values: an op over
// the pooling's input shape is not broadcast back (no row kernel holds
// those elements; the region would get no kernel).
// CHECK-LABEL: func.func @pooled_reduction_not_broadcast_back
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x4x1x1xf32>) {
// CHECK:         kb.aten "max_pool2d"
// CHECK-NEXT:    kb.aten "mean"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<2x4x8x8xf32>) {
// CHECK-NEXT:    kb.aten "mul"
func.func @pooled_reduction_not_broadcast_back(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %k = kb.list(%two, %two) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %dl = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %d = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %r = kb.aten "relu"(%x) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = kb.aten "max_pool2d"(%r, %k, %k, %p, %dl, %f) : (tensor<2x4x8x8xf32>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1) -> tensor<2x4x4x4xf32>
  %1 = kb.aten "mean"(%0, %d, %t, %none) {overload = "dim"} : (tensor<2x4x4x4xf32>, !kb.list<i64>, i1, none) -> tensor<2x4x1x1xf32>
  %2 = kb.aten "mul"(%x, %1) {overload = "Tensor"} : (tensor<2x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<2x4x8x8xf32>
  return %2 : tensor<2x4x8x8xf32>
}

// -----

// Integer tensors (token ids, positions) stay in ATen: a kernel reads
// float32 and bool tensors only, and such an op in a region would leave the
// whole region without a kernel (LLaMA's causal mask: ne, le, eq, where on
// position ids). The bool mask ATen computes from them is a kernel input:
// the where that reads it is fused with the comparison of floats it feeds;
// the mask's cast to float alone stays in ATen (a lone cast is a copy,
// nothing to fuse).
// CHECK-LABEL: func.func @integer_ops_stay_masks_join
// CHECK:       %[[M:.*]] = kb.aten "ne"(%arg1, {{.*}}kb.unfused = "integer tensors
// CHECK:       kb.aten "to"(%[[M]], {{.*}}kb.unfused = "a lone dtype cast: ATen's copy moves each byte once, nothing to fuse"
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x16xf32>) {
// CHECK-NEXT:    %[[W:.*]] = kb.aten "where"(%[[M]], %arg0, %arg2)
// CHECK-NEXT:    kb.aten "gt"(%[[W]],
// CHECK-NEXT:    kb.aten "where"
// CHECK-NEXT:    kb.yield
func.func @integer_ops_stay_masks_join(%x: tensor<8x16xf32>, %ids: tensor<8x16xi64>, %zero: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %pad = kb.constant {value = 0 : i64} : i64
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %dt = kb.constant {value = 6 : i64} : i64
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %m = kb.aten "ne"(%ids, %pad) {overload = "Scalar"} : (tensor<8x16xi64>, i64) -> tensor<8x16xi1>
  %mf = kb.aten "to"(%m, %dt, %f, %f, %none) {overload = "dtype"} : (tensor<8x16xi1>, i64, i1, i1, none) -> tensor<8x16xf32>
  %0 = kb.aten "where"(%m, %x, %zero) {overload = "self"} : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %1 = kb.aten "gt"(%0, %half) {overload = "Scalar"} : (tensor<8x16xf32>, f64) -> tensor<8x16xi1>
  %2 = kb.aten "where"(%1, %0, %zero) {overload = "self"} : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %2, %mf : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A norm, softmax or plain reduction over other rows may follow a training
// batch norm: one region, whose kernel computes the batch norm's statistics
// first and evaluates it per element in the second's rows (CrossRow.cpp).
// A reduction of at most 16 elements per output (one thread per output in
// the kernel), or a second training batch norm, starts a region of its own.
// CHECK-LABEL: func.func @cross_row
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    kb.aten "batch_norm"
// CHECK-NEXT:    kb.aten "tanh"
// CHECK-NEXT:    %[[L:.*]] = kb.aten "layer_norm"
// CHECK-NEXT:    kb.yield %[[L]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<64xf32>) {
// CHECK-NEXT:    kb.aten "batch_norm"
// CHECK-NEXT:    %[[S:.*]] = kb.aten "sum"
// CHECK-NEXT:    kb.yield %[[S]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    %[[C:.*]] = kb.aten "batch_norm"
// CHECK-NEXT:    kb.yield %[[C]]
// CHECK:       kb.region attributes {id = 3 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    %[[D:.*]] = kb.aten "batch_norm"
// CHECK-NEXT:    kb.yield %[[D]]
// CHECK:       kb.region attributes {id = 4 : i64} -> (tensor<64x8xf32>) {
// CHECK-NEXT:    %[[E:.*]] = kb.aten "batch_norm"
// CHECK-NEXT:    kb.yield %[[E]]
// CHECK:       kb.region attributes {id = 5 : i64} -> (tensor<64xf32>) {
// CHECK-NEXT:    %[[F:.*]] = kb.aten "sum"
// CHECK-NEXT:    kb.yield %[[F]]
func.func @cross_row(%x: tensor<64x32xf32>, %w: tensor<32xf32>, %y: tensor<64x8xf32>, %v: tensor<8xf32>) -> (tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<64xf32>) {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %m = kb.constant {value = 1.000000e-01 : f64} : f64
  %e = kb.constant {value = 1.000000e-05 : f64} : f64
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %n32 = kb.constant {value = 32 : i64} : i64
  %shape = kb.list(%n32) : (i64) -> !kb.list<i64>
  %dims = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "batch_norm"(%x, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<64x32xf32>
  %1 = kb.aten "tanh"(%0) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %2 = kb.aten "layer_norm"(%1, %shape, %none, %none, %e, %t) : (tensor<64x32xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<64x32xf32>
  %3 = kb.aten "batch_norm"(%x, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<64x32xf32>
  %4 = kb.aten "sum"(%3, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<64x32xf32>, !kb.list<i64>, i1, none) -> tensor<64xf32>
  %5 = kb.aten "batch_norm"(%x, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<64x32xf32>
  %6 = kb.aten "batch_norm"(%5, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<64x32xf32>
  %7 = kb.aten "batch_norm"(%y, %v, %v, %v, %v, %t, %m, %e, %t) : (tensor<64x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, i1, f64, f64, i1) -> tensor<64x8xf32>
  %8 = kb.aten "sum"(%7, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<64x8xf32>, !kb.list<i64>, i1, none) -> tensor<64xf32>
  return %2, %4, %6, %8 : tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<64xf32>
}

// -----

// After an anchor or pointwise ops, a training batch norm still takes a
// following stage over other rows (a softmax over dim 0 here): its
// statistics are one read of its input in either case. A softmax there
// takes only a stage over the same rows held in registers, so a softmax
// over dim 0 after it starts a region of its own.
// CHECK-LABEL: func.func @cross_row_after_pointwise
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.aten "batch_norm"
// CHECK-NEXT:    %[[S:.*]] = kb.aten "softmax"
// CHECK-NEXT:    kb.yield %[[S]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    %[[T:.*]] = kb.aten "softmax"
// CHECK-NEXT:    kb.yield %[[T]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<64x32xf32>) {
// CHECK-NEXT:    %[[U:.*]] = kb.aten "softmax"
// CHECK-NEXT:    kb.yield %[[U]]
func.func @cross_row_after_pointwise(%x: tensor<64x32xf32>, %w: tensor<32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %t = kb.constant {value = true} : i1
  %m = kb.constant {value = 1.000000e-01 : f64} : f64
  %e = kb.constant {value = 1.000000e-05 : f64} : f64
  %none = kb.constant {value} : none
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %alpha = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "add"(%x, %w, %alpha) {overload = "Tensor"} : (tensor<64x32xf32>, tensor<32xf32>, i64) -> tensor<64x32xf32>
  %1 = kb.aten "batch_norm"(%0, %w, %w, %w, %w, %t, %m, %e, %t) : (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<64x32xf32>
  %2 = kb.aten "softmax"(%1, %zero, %none) {overload = "int"} : (tensor<64x32xf32>, i64, none) -> tensor<64x32xf32>
  %3 = kb.aten "add"(%x, %w, %alpha) {overload = "Tensor"} : (tensor<64x32xf32>, tensor<32xf32>, i64) -> tensor<64x32xf32>
  %4 = kb.aten "softmax"(%3, %one, %none) {overload = "int"} : (tensor<64x32xf32>, i64, none) -> tensor<64x32xf32>
  %5 = kb.aten "softmax"(%4, %zero, %none) {overload = "int"} : (tensor<64x32xf32>, i64, none) -> tensor<64x32xf32>
  return %2, %5 : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// A softmax over short rows (fewer than 4096 elements) is followed in its
// region only by a stage over the same rows (a layer norm of the same
// last dim: the block holding a row computes its statistics); a sum over
// every element starts a region of its own (a statistics phase of one
// block a row of 64 would idle most of the block).
// CHECK-LABEL: func.func @cross_row_short_softmax
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    %[[L:.*]] = kb.aten "layer_norm"
// CHECK-NEXT:    kb.yield %[[L]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "log_softmax"
// CHECK-NEXT:    %[[M:.*]] = kb.aten "mul"
// CHECK-NEXT:    kb.yield %[[M]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<f32>) {
// CHECK-NEXT:    %[[S:.*]] = kb.aten "sum"
// CHECK-NEXT:    kb.yield %[[S]]
func.func @cross_row_short_softmax(%x: tensor<32x64xf32>, %y: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<f32>) {
  %t = kb.constant {value = true} : i1
  %e = kb.constant {value = 1.000000e-05 : f64} : f64
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %n64 = kb.constant {value = 64 : i64} : i64
  %shape = kb.list(%n64) : (i64) -> !kb.list<i64>
  %0 = kb.aten "softmax"(%x, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %1 = kb.aten "layer_norm"(%0, %shape, %none, %none, %e, %t) : (tensor<32x64xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<32x64xf32>
  %2 = kb.aten "log_softmax"(%x, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %3 = kb.aten "mul"(%y, %2) {overload = "Tensor"} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %4 = kb.aten "sum"(%3, %none) : (tensor<32x64xf32>, none) -> tensor<f32>
  return %1, %4 : tensor<32x64xf32>, tensor<f32>
}

// -----

// After an anchor the softmax is the group's only reduction though not its
// firstReduction (set for shape-changing reductions and one opening the
// group); a second log_softmax over the same rows joins it where the code
// generator holds the rows in registers (at most 1024 elements: the
// softmax's statistics then come from the held row, one read). Rows of
// 2048 keep two regions: their statistics would re-read the row and
// re-evaluate the anchor's epilogue in each pass (run102, seed 20261313
// task 2 before the held statistics: 0.124 ms merged against 0.070 +
// 0.048 split). So do rows of at most 16, which a softmax alone stages
// through shared memory.
// CHECK-LABEL: func.func @softmax_after_anchor_softmax
// CHECK:       kb.region attributes {anchor = "aten::matmul", id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "matmul"
// CHECK-NEXT:    kb.aten "log_softmax"
// CHECK-NEXT:    %[[L:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[L]]
// CHECK:       kb.region attributes {anchor = "aten::matmul", id = 1 : i64} -> (tensor<8x2048xf32>) {
// CHECK-NEXT:    kb.aten "matmul"
// CHECK-NEXT:    %[[A:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[A]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<8x2048xf32>) {
// CHECK-NEXT:    %[[B:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[B]]
// CHECK:       kb.region attributes {anchor = "aten::matmul", id = 3 : i64} -> (tensor<64x16xf32>) {
// CHECK-NEXT:    kb.aten "matmul"
// CHECK-NEXT:    %[[C:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[C]]
// CHECK:       kb.region attributes {id = 4 : i64} -> (tensor<64x16xf32>) {
// CHECK-NEXT:    %[[D:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[D]]
func.func @softmax_after_anchor_softmax(%x: tensor<32x16xf32>, %w: tensor<16x64xf32>, %y: tensor<8x16xf32>, %u: tensor<16x2048xf32>, %z: tensor<64x16xf32>, %t: tensor<16x16xf32>) -> (tensor<32x64xf32>, tensor<8x2048xf32>, tensor<64x16xf32>) {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "matmul"(%x, %w) : (tensor<32x16xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
  %1 = kb.aten "log_softmax"(%0, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %2 = kb.aten "log_softmax"(%1, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %3 = kb.aten "matmul"(%y, %u) : (tensor<8x16xf32>, tensor<16x2048xf32>) -> tensor<8x2048xf32>
  %4 = kb.aten "log_softmax"(%3, %one, %none) {overload = "int"} : (tensor<8x2048xf32>, i64, none) -> tensor<8x2048xf32>
  %5 = kb.aten "log_softmax"(%4, %one, %none) {overload = "int"} : (tensor<8x2048xf32>, i64, none) -> tensor<8x2048xf32>
  %6 = kb.aten "matmul"(%z, %t) : (tensor<64x16xf32>, tensor<16x16xf32>) -> tensor<64x16xf32>
  %7 = kb.aten "log_softmax"(%6, %one, %none) {overload = "int"} : (tensor<64x16xf32>, i64, none) -> tensor<64x16xf32>
  %8 = kb.aten "log_softmax"(%7, %one, %none) {overload = "int"} : (tensor<64x16xf32>, i64, none) -> tensor<64x16xf32>
  return %2, %5, %8 : tensor<32x64xf32>, tensor<8x2048xf32>, tensor<64x16xf32>
}

// -----

// An op that opens a group (its other operand an input) takes along a
// parameter's few-element chain that only it broadcasts, as it would on
// joining a group: one region, no [4, 1] tensor written.
// CHECK-LABEL: func.func @leaf_into_new_group
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x4x16xf32>) {
// CHECK-NEXT:    kb.aten "abs"
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    %[[D:.*]] = kb.aten "div"
// CHECK-NEXT:    kb.yield %[[D]]
// CHECK-NOT:   kb.region
func.func @leaf_into_new_group(%x: tensor<8x4x16xf32>, %p: tensor<4x1xf32>) -> tensor<8x4x16xf32> {
  %one = kb.constant {value = 1.000000e+00 : f64} : f64
  %ione = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "abs"(%p) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = kb.aten "add"(%0, %one, %ione) {overload = "Scalar"} : (tensor<4x1xf32>, f64, i64) -> tensor<4x1xf32>
  %2 = kb.aten "div"(%x, %1) {overload = "Tensor"} : (tensor<8x4x16xf32>, tensor<4x1xf32>) -> tensor<8x4x16xf32>
  return %2 : tensor<8x4x16xf32>
}

// -----

// Two convolutions meet in one epilogue (NF-ResNet's shortcut: the first
// convolution's bias add is an anchorless group the second's chain takes
// along): the region's anchor goes first, ahead of the earlier sibling, so
// the outline hoists the convolution and not the add.
// CHECK-LABEL: func.func @two_convolutions
// CHECK:       %[[A:.*]] = kb.aten "_convolution"(%arg0, %arg1{{.*}}kb.unfused = "anchor without a fusable consumer
// CHECK:       kb.region attributes {anchor = "aten::_convolution", id = 0 : i64} -> (tensor<2x8x8x8xf32>) {
// CHECK-NEXT:    %[[B:.*]] = kb.aten "_convolution"(%arg0, %arg3
// CHECK-NEXT:    %[[BA:.*]] = kb.aten "add"(%[[A]], %arg2
// CHECK-NEXT:    %[[BB:.*]] = kb.aten "add"(%[[B]], %arg4
// CHECK-NEXT:    %[[M:.*]] = kb.aten "mul"(%[[BB]], %arg5)
// CHECK-NEXT:    %[[S:.*]] = kb.aten "add"(%[[M]], %[[BA]]
// CHECK-NEXT:    %[[R:.*]] = kb.aten "relu"(%[[S]])
// CHECK-NEXT:    kb.yield %[[R]]
func.func @two_convolutions(%x: tensor<2x4x8x8xf32>, %wa: tensor<8x4x1x1xf32>, %ba: tensor<8x1x1xf32>, %wb: tensor<8x4x1x1xf32>, %bb: tensor<8x1x1xf32>, %alpha: tensor<f64>) -> tensor<2x8x8x8xf32> {
  %none = kb.constant {value} : none
  %one = kb.constant {value = 1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %f = kb.constant {value = false} : i1
  %s = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "_convolution"(%x, %wa, %none, %s, %p, %s, %f, %p, %one, %f, %f, %f, %f) : (tensor<2x4x8x8xf32>, tensor<8x4x1x1xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<2x8x8x8xf32>
  %1 = kb.aten "add"(%0, %ba, %one) {overload = "Tensor"} : (tensor<2x8x8x8xf32>, tensor<8x1x1xf32>, i64) -> tensor<2x8x8x8xf32>
  %2 = kb.aten "_convolution"(%x, %wb, %none, %s, %p, %s, %f, %p, %one, %f, %f, %f, %f) : (tensor<2x4x8x8xf32>, tensor<8x4x1x1xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<2x8x8x8xf32>
  %3 = kb.aten "add"(%2, %bb, %one) {overload = "Tensor"} : (tensor<2x8x8x8xf32>, tensor<8x1x1xf32>, i64) -> tensor<2x8x8x8xf32>
  %4 = kb.aten "mul"(%3, %alpha) {overload = "Tensor"} : (tensor<2x8x8x8xf32>, tensor<f64>) -> tensor<2x8x8x8xf32>
  %5 = kb.aten "add"(%4, %1, %one) {overload = "Tensor"} : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, i64) -> tensor<2x8x8x8xf32>
  %6 = kb.aten "relu"(%5) : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %6 : tensor<2x8x8x8xf32>
}

// -----

// Bool logic over masks (GPT-NeoX: a causal mask cast to bool and and-ed
// with the padding mask) makes a bool that a region would have to write:
// the cast stays in ATen; the where reading its result is fused.
// CHECK-LABEL: func.func @bool_logic_over_masks_stays
// CHECK:       %[[C:.*]] = kb.aten "to"(%arg1, {{.*}}kb.unfused = "integer tensors
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x16xf32>) {
// CHECK-NEXT:    kb.aten "where"(%[[C]], %arg0, %arg2)
// CHECK-NEXT:    kb.yield
func.func @bool_logic_over_masks_stays(%x: tensor<8x16xf32>, %m: tensor<8x16xi1>, %zero: tensor<f32>) -> tensor<8x16xf32> {
  %dt = kb.constant {value = 11 : i64} : i64
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %0 = kb.aten "to"(%m, %dt, %f, %f, %none) {overload = "dtype"} : (tensor<8x16xi1>, i64, i1, i1, none) -> tensor<8x16xi1>
  %1 = kb.aten "where"(%0, %x, %zero) {overload = "self"} : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// A cat of tensors of one rank opens a group over its shape with its list;
// a pointwise group computing a listed tensor and read by nothing else
// comes along (rotate_half's neg), and the cat's pointwise consumers join.
// CHECK-LABEL: func.func @cat_rotate_half
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<4x16xf32>) {
// CHECK-NEXT:    %[[N:.*]] = kb.aten "neg"(%arg1)
// CHECK-NEXT:    %[[L:.*]] = kb.list(%[[N]], %arg0)
// CHECK-NEXT:    %[[C:.*]] = kb.aten "cat"(%[[L]],
// CHECK-NEXT:    %[[M:.*]] = kb.aten "mul"(%[[C]], %arg2)
// CHECK-NEXT:    kb.yield %[[M]]
// CHECK-NOT:   kb.region
func.func @cat_rotate_half(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %sin: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %d = kb.constant {value = -1 : i64} : i64
  %0 = kb.aten "neg"(%x2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kb.list(%0, %x1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> !kb.list<tensor<*x!kb.unknown>>
  %2 = kb.aten "cat"(%1, %d) : (!kb.list<tensor<*x!kb.unknown>>, i64) -> tensor<4x16xf32>
  %3 = kb.aten "mul"(%2, %sin) {overload = "Tensor"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// -----

// A listed tensor also used elsewhere keeps its own region (its value is
// written for the other user; the cat reads it); a cat of a tensor
// constant (GPT-2's empty one) stays in ATen.
// CHECK-LABEL: func.func @cat_shared_producer_and_constant
// CHECK:       %[[R:.*]] = kb.region attributes {id = 0 : i64} -> (tensor<4x8xf32>) {
// CHECK-NEXT:    kb.aten "relu"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<4x16xf32>) {
// CHECK-NEXT:    kb.list(%[[R]], %arg1)
// CHECK-NEXT:    kb.aten "cat"
// CHECK:       kb.aten "cat"({{.*}}kb.unfused = "data movement
func.func @cat_shared_producer_and_constant(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %d = kb.constant {value = 1 : i64} : i64
  %z = kb.constant {value = dense<> : tensor<0x8xf32>} : tensor<0x8xf32>
  %0 = kb.aten "relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = kb.list(%0, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> !kb.list<tensor<*x!kb.unknown>>
  %2 = kb.aten "cat"(%1, %d) : (!kb.list<tensor<*x!kb.unknown>>, i64) -> tensor<4x16xf32>
  %3 = kb.list(%y, %z) : (tensor<4x8xf32>, tensor<0x8xf32>) -> !kb.list<tensor<*x!kb.unknown>>
  %zero = kb.constant {value = 0 : i64} : i64
  %4 = kb.aten "cat"(%3, %zero) : (!kb.list<tensor<*x!kb.unknown>>, i64) -> tensor<4x8xf32>
  return %2, %0, %4 : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A 0-d bool (rewrite makes such a factory result a CPU scalar, which a
// kernel's guard refuses) is no kernel input: the where reading it stays in
// ATen, its float consumer is fused alone.
// CHECK-LABEL: func.func @zero_d_mask_stays
// CHECK:       %[[W:.*]] = kb.aten "where"(%arg1, %arg0, %arg2) {kb.unfused = "integer tensors
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x16xf32>) {
// CHECK-NEXT:    kb.aten "relu"(%[[W]])
func.func @zero_d_mask_stays(%x: tensor<8x16xf32>, %flag: tensor<i1>, %zero: tensor<f32>) -> tensor<8x16xf32> {
  %0 = kb.aten "where"(%flag, %x, %zero) {overload = "self"} : (tensor<i1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %1 = kb.aten "relu"(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// A layer norm over the last dim, then a stage over the same rows (a
// softmax, a layer norm of that dim, a sum over it) whose input comes
// from the norm: one region, the lane group holding a row computes the
// norm's statistics from it (codegen-row-norm-first). A softmax over
// another dim, or a norm whose value is also read outside, keeps two.
// CHECK-LABEL: func.func @same_row_after_layer_norm
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    kb.aten "layer_norm"
// CHECK-NEXT:    %[[S:.*]] = kb.aten "softmax"
// CHECK-NEXT:    kb.yield %[[S]]
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<32xf32>) {
// CHECK-NEXT:    kb.aten "layer_norm"
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    %[[U:.*]] = kb.aten "sum"
// CHECK-NEXT:    kb.yield %[[U]]
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    %[[L:.*]] = kb.aten "layer_norm"
// CHECK-NEXT:    kb.yield %[[L]]
// CHECK:       kb.region attributes {id = 3 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    %[[T:.*]] = kb.aten "softmax"
// CHECK-NEXT:    kb.yield %[[T]]
// CHECK:       kb.region attributes {id = 4 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    %[[K:.*]] = kb.aten "layer_norm"
// CHECK-NEXT:    kb.yield %[[K]]
// CHECK:       kb.region attributes {id = 5 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    %[[V:.*]] = kb.aten "log_softmax"
// CHECK-NEXT:    kb.yield %[[V]]
func.func @same_row_after_layer_norm(%x: tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %e = kb.constant {value = 1.000000e-05 : f64} : f64
  %two = kb.constant {value = 2.000000e+00 : f64} : f64
  %none = kb.constant {value} : none
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %n64 = kb.constant {value = 64 : i64} : i64
  %shape = kb.list(%n64) : (i64) -> !kb.list<i64>
  %d1 = kb.list(%one) : (i64) -> !kb.list<i64>
  %0 = kb.aten "mul"(%x, %two) {overload = "Scalar"} : (tensor<32x64xf32>, f64) -> tensor<32x64xf32>
  %1 = kb.aten "layer_norm"(%0, %shape, %none, %none, %e, %t) : (tensor<32x64xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<32x64xf32>
  %2 = kb.aten "softmax"(%1, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %3 = kb.aten "layer_norm"(%x, %shape, %none, %none, %e, %t) : (tensor<32x64xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<32x64xf32>
  %4 = kb.aten "relu"(%3) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %5 = kb.aten "sum"(%4, %d1, %f, %none) {overload = "dim_IntList"} : (tensor<32x64xf32>, !kb.list<i64>, i1, none) -> tensor<32xf32>
  %6 = kb.aten "layer_norm"(%x, %shape, %none, %none, %e, %t) : (tensor<32x64xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<32x64xf32>
  %7 = kb.aten "softmax"(%6, %zero, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  %8 = kb.aten "layer_norm"(%x, %shape, %none, %none, %e, %t) : (tensor<32x64xf32>, !kb.list<i64>, none, none, f64, i1) -> tensor<32x64xf32>
  %9 = kb.aten "log_softmax"(%8, %one, %none) {overload = "int"} : (tensor<32x64xf32>, i64, none) -> tensor<32x64xf32>
  return %2, %5, %7, %8, %9 : tensor<32x64xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>
}

// -----

// A flat view (view, reshape, flatten, squeeze, ...) of a value of a
// group's pointwise stage joins the group, which goes on in the view's
// shape: Swin's shifted-window scores are viewed as [B, nW, heads, N, N]
// for the mask's add and back for the softmax (one kernel, not three). A
// size list computed on the host becomes the traced shape.
// CHECK-LABEL: func.func @flat_view_continues_stage
// CHECK:       %[[B:.*]] = kb.constant {value = 2 : i64} : i64
// CHECK:       %[[L:.*]] = kb.list(%[[B]], %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64) -> !kb.list<i64>
// CHECK-NEXT:  kb.region attributes {id = 0 : i64} -> (tensor<8x3x16xf32>) {
// CHECK-NEXT:    %[[A:.*]] = kb.aten "add"(%arg0, %arg1
// CHECK-NEXT:    %[[V:.*]] = kb.aten "view"(%[[A]], %[[L]]) {{.*}} -> tensor<2x4x3x16xf32>
// CHECK-NEXT:    %[[M:.*]] = kb.aten "add"(%[[V]], %arg2
// CHECK-NEXT:    %[[W:.*]] = kb.aten "view"(%[[M]], %{{.*}}) {{.*}} -> tensor<8x3x16xf32>
// CHECK-NEXT:    %[[S:.*]] = kb.aten "softmax"(%[[W]]
// CHECK-NEXT:    kb.yield %[[S]]
func.func @flat_view_continues_stage(%x: tensor<8x3x16xf32>, %bias: tensor<1x3x16xf32>, %mask: tensor<1x4x1x16xf32>, %b: i64) -> tensor<8x3x16xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %m1 = kb.constant {value = -1 : i64} : i64
  %c3 = kb.constant {value = 3 : i64} : i64
  %c4 = kb.constant {value = 4 : i64} : i64
  %c16 = kb.constant {value = 16 : i64} : i64
  %none = kb.constant {value} : none
  %split = kb.list(%b, %c4, %c3, %c16) : (i64, i64, i64, i64) -> !kb.list<i64>
  %back = kb.list(%m1, %c3, %c16) : (i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "add"(%x, %bias, %one) {overload = "Tensor"} : (tensor<8x3x16xf32>, tensor<1x3x16xf32>, i64) -> tensor<8x3x16xf32>
  %1 = kb.aten "view"(%0, %split) : (tensor<8x3x16xf32>, !kb.list<i64>) -> tensor<2x4x3x16xf32>
  %2 = kb.aten "add"(%1, %mask, %one) {overload = "Tensor"} : (tensor<2x4x3x16xf32>, tensor<1x4x1x16xf32>, i64) -> tensor<2x4x3x16xf32>
  %3 = kb.aten "view"(%2, %back) : (tensor<2x4x3x16xf32>, !kb.list<i64>) -> tensor<8x3x16xf32>
  %4 = kb.aten "softmax"(%3, %m1, %none) {overload = "int"} : (tensor<8x3x16xf32>, i64, none) -> tensor<8x3x16xf32>
  return %4 : tensor<8x3x16xf32>
}

// -----

// A view no later member reads leaves the group (a region ending in a view
// would write its input twice); a view after a reduction starts nothing
// (the row kernels index the reduced stage in its own shape); a view whose
// dim the host computes stays out.
// CHECK-LABEL: func.func @flat_view_boundaries
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x8xf32>) {
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "view"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<2x8xf32>) {
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "flatten"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<16xf32>) {
// CHECK-NEXT:    kb.aten "neg"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.region attributes {id = 3 : i64} -> (tensor<2x8xf32>) {
// CHECK-NEXT:    kb.aten "exp"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "unsqueeze"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 4 : i64} -> (tensor<1x2x8xf32>) {
// CHECK-NEXT:    kb.aten "abs"
// CHECK-NEXT:    kb.yield
func.func @flat_view_boundaries(%x: tensor<2x8xf32>, %d: i64) -> (tensor<16xf32>, tensor<16xf32>, tensor<1x2x8xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %n = kb.constant {value = 16 : i64} : i64
  %none = kb.constant {value} : none
  %shape = kb.list(%n) : (i64) -> !kb.list<i64>
  %0 = kb.aten "relu"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = kb.aten "view"(%0, %shape) : (tensor<2x8xf32>, !kb.list<i64>) -> tensor<16xf32>
  %2 = kb.aten "softmax"(%x, %one, %none) {overload = "int"} : (tensor<2x8xf32>, i64, none) -> tensor<2x8xf32>
  %3 = kb.aten "flatten"(%2, %zero, %one) {overload = "using_ints"} : (tensor<2x8xf32>, i64, i64) -> tensor<16xf32>
  %4 = kb.aten "neg"(%3) : (tensor<16xf32>) -> tensor<16xf32>
  %5 = kb.aten "exp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %6 = kb.aten "unsqueeze"(%5, %d) : (tensor<2x8xf32>, i64) -> tensor<1x2x8xf32>
  %7 = kb.aten "abs"(%6) : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  return %1, %4, %7 : tensor<16xf32>, tensor<16xf32>, tensor<1x2x8xf32>
}

// -----

// Index maps that copy in eager (a reshape of a permuted tensor, a roll)
// join the anchor's epilogue: the residual add reads the GEMM's result
// where the copies would have put it (Swin's window reverse). Views of the
// anchor's result that copy nothing stay out (the kernel reads the result
// through their strides either way).
// CHECK-LABEL: func.func @index_maps_after_anchor
// CHECK:       kb.region attributes {anchor = "aten::matmul", id = 0 : i64} -> (tensor<2x4x4x8xf32>) {
// CHECK-NEXT:    kb.aten "matmul"
// CHECK-NEXT:    kb.aten "view"
// CHECK-NEXT:    kb.aten "permute"
// CHECK-NEXT:    kb.aten "reshape"
// CHECK-NEXT:    kb.aten "roll"
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "transpose"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<8x4x4xf32>) {
// CHECK-NEXT:    kb.aten "relu"
// CHECK-NEXT:    kb.yield
func.func @index_maps_after_anchor(%a: tensor<8x4x4xf32>, %b: tensor<8x4x8xf32>, %x: tensor<2x4x4x8xf32>) -> (tensor<2x4x4x8xf32>, tensor<8x4x4xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %four = kb.constant {value = 4 : i64} : i64
  %five = kb.constant {value = 5 : i64} : i64
  %eight = kb.constant {value = 8 : i64} : i64
  %s1 = kb.list(%two, %two, %two, %two, %two, %eight) : (i64, i64, i64, i64, i64, i64) -> !kb.list<i64>
  %p = kb.list(%zero, %one, %three, %two, %four, %five) : (i64, i64, i64, i64, i64, i64) -> !kb.list<i64>
  %s2 = kb.list(%two, %four, %four, %eight) : (i64, i64, i64, i64) -> !kb.list<i64>
  %sh = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %dims = kb.list(%one, %two) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "matmul"(%a, %b) : (tensor<8x4x4xf32>, tensor<8x4x8xf32>) -> tensor<8x4x8xf32>
  %1 = kb.aten "view"(%0, %s1) : (tensor<8x4x8xf32>, !kb.list<i64>) -> tensor<2x2x2x2x2x8xf32>
  %2 = kb.aten "permute"(%1, %p) : (tensor<2x2x2x2x2x8xf32>, !kb.list<i64>) -> tensor<2x2x2x2x2x8xf32, [128, 64, 16, 32, 8, 1]>
  %3 = kb.aten "reshape"(%2, %s2) : (tensor<2x2x2x2x2x8xf32, [128, 64, 16, 32, 8, 1]>, !kb.list<i64>) -> tensor<2x4x4x8xf32>
  %4 = kb.aten "roll"(%3, %sh, %dims) : (tensor<2x4x4x8xf32>, !kb.list<i64>, !kb.list<i64>) -> tensor<2x4x4x8xf32>
  %5 = kb.aten "add"(%x, %4, %one) {overload = "Tensor"} : (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>, i64) -> tensor<2x4x4x8xf32>
  %6 = kb.aten "matmul"(%a, %a) : (tensor<8x4x4xf32>, tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %7 = kb.aten "transpose"(%6, %one, %two) {overload = "int"} : (tensor<8x4x4xf32>, i64, i64) -> tensor<8x4x4xf32, [16, 1, 4]>
  %8 = kb.aten "relu"(%7) : (tensor<8x4x4xf32, [16, 1, 4]>) -> tensor<8x4x4xf32>
  return %5, %8 : tensor<2x4x4x8xf32>, tensor<8x4x4xf32>
}

// -----

// An index map whose value something besides one joining op reads stays
// out (the kernel would write what eager's view never writes: a qkv
// permute whose k feeds a matmul); a pad and a select of a pointwise
// stage join it.
// CHECK-LABEL: func.func @index_maps_read_once
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<2x3x8xf32>) {
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "permute"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 2 : i64} -> (tensor<5x10xf32>) {
// CHECK-NEXT:    kb.aten "exp"
// CHECK-NEXT:    kb.aten "constant_pad_nd"
// CHECK-NEXT:    kb.aten "select"
// CHECK-NEXT:    kb.aten "neg"
// CHECK-NEXT:    kb.yield
func.func @index_maps_read_once(%x: tensor<2x3x8xf32>, %y: tensor<3x4x8xf32>) -> (tensor<3x2x8xf32>, tensor<3x2x8xf32>, tensor<5x10xf32>) {
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %p = kb.list(%one, %zero, %two) : (i64, i64, i64) -> !kb.list<i64>
  %pads = kb.list(%one, %one, %zero, %one) : (i64, i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "mul"(%x, %half) {overload = "Scalar"} : (tensor<2x3x8xf32>, f64) -> tensor<2x3x8xf32>
  %1 = kb.aten "permute"(%0, %p) : (tensor<2x3x8xf32>, !kb.list<i64>) -> tensor<3x2x8xf32, [8, 24, 1]>
  %2 = kb.aten "relu"(%1) : (tensor<3x2x8xf32, [8, 24, 1]>) -> tensor<3x2x8xf32>
  %3 = kb.aten "matmul"(%1, %y) : (tensor<3x2x8xf32, [8, 24, 1]>, tensor<3x4x8xf32>) -> tensor<3x2x8xf32>
  %4 = kb.aten "exp"(%y) : (tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  %5 = kb.aten "constant_pad_nd"(%4, %pads, %half) : (tensor<3x4x8xf32>, !kb.list<i64>, f64) -> tensor<3x5x10xf32>
  %6 = kb.aten "select"(%5, %zero, %one) {overload = "int"} : (tensor<3x5x10xf32>, i64, i64) -> tensor<5x10xf32>
  %7 = kb.aten "neg"(%6) : (tensor<5x10xf32>) -> tensor<5x10xf32>
  return %2, %3, %7 : tensor<3x2x8xf32>, tensor<3x2x8xf32>, tensor<5x10xf32>
}

// -----

// A map joins no group whose values something outside reads: the kernel
// would write them in their shape beside the values after the map, and
// kernels write outputs of one shape (`y = x * 3; return y, tanh(y[:,
// 5])` stays two regions, both generated).
// CHECK-LABEL: func.func @index_map_after_escaping_value
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<3x4x5xf32>) {
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    kb.yield
// CHECK:       kb.aten "select"{{.*}}kb.unfused = "view/identity: no data to fuse"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<3x5xf32>) {
// CHECK-NEXT:    kb.aten "tanh"
// CHECK-NEXT:    kb.yield
func.func @index_map_after_escaping_value(%x: tensor<3x4x5xf32>) -> (tensor<3x4x5xf32>, tensor<3x5xf32>) {
  %one = kb.constant {value = 1 : i64} : i64
  %three = kb.constant {value = 3.000000e+00 : f64} : f64
  %0 = kb.aten "mul"(%x, %three) {overload = "Scalar"} : (tensor<3x4x5xf32>, f64) -> tensor<3x4x5xf32>
  %1 = kb.aten "select"(%0, %one, %one) {overload = "int"} : (tensor<3x4x5xf32>, i64, i64) -> tensor<3x5xf32>
  %2 = kb.aten "tanh"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0, %2 : tensor<3x4x5xf32>, tensor<3x5xf32>
}
