// The options rewrite sets (its numerics policy, docs/numerics.md): ops whose
// last bits differ from ATen's stay in ATen where a TF32 convolution, a step
// op or a singular op downstream would magnify the difference, and their
// consumers form regions of their own.
// RUN: kb-opt %s --kb-classify --kb-form-regions="norms-before-tf32=false reductions-before-steps=false" --split-input-file | FileCheck %s
// The defaults fuse them (what `analyze` and `codegen` show).
// RUN: kb-opt %s --kb-classify --kb-form-regions --split-input-file | FileCheck %s --check-prefix=FUSED

// A softmax whose result reaches a comparison, over rows longer than
// ATen's warp softmax takes (1024): the comparison, the mask's use and the
// loss's mean (a 0-d result of a real tensor) are one region.
// CHECK-LABEL: func.func @softmax_then_step
// CHECK:       kb.aten "log_softmax"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<f32>) {
// CHECK-NEXT:    kb.aten "ge"
// CHECK-NEXT:    kb.aten "to"
// CHECK-NEXT:    kb.aten "mul"
// CHECK-NEXT:    %[[M:.*]] = kb.aten "mean"
// CHECK-NEXT:    kb.yield %[[M]]
// FUSED-LABEL: func.func @softmax_then_step
// FUSED:       kb.region attributes {id = 0 : i64} -> (tensor<64x2048xf32>) {
// FUSED-NEXT:    kb.aten "log_softmax"
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

// -----

// Rows of at most 1024: the code generator computes the softmax in ATen's
// warp-softmax order (bit-identical to eager, kb-verify confirms), so it
// joins the comparison's region in both modes (the mean, a second
// reduction, is a region of its own).
// CHECK-LABEL: func.func @softmax_aten_order_then_step
// CHECK-NOT:   kb.unfused
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<64x256xf32>) {
// CHECK-NEXT:    kb.aten "log_softmax"
// CHECK-NEXT:    kb.aten "ge"
// CHECK-NEXT:    kb.aten "to"
// CHECK-NEXT:    kb.aten "mul"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<f32>) {
// CHECK-NEXT:    kb.aten "mean"
// FUSED-LABEL: func.func @softmax_aten_order_then_step
// FUSED:       kb.region attributes {id = 0 : i64} -> (tensor<64x256xf32>) {
// FUSED-NEXT:    kb.aten "log_softmax"
func.func @softmax_aten_order_then_step(%x: tensor<64x256xf32>) -> tensor<f32> {
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %c = kb.constant {value = -4.320000e-01 : f64} : f64
  %six = kb.constant {value = 6 : i64} : i64
  %f = kb.constant {value = false} : i1
  %0 = kb.aten "log_softmax"(%x, %one, %none) {overload = "int"} : (tensor<64x256xf32>, i64, none) -> tensor<64x256xf32>
  %1 = kb.aten "ge"(%0, %c) {overload = "Scalar"} : (tensor<64x256xf32>, f64) -> tensor<64x256xi1>
  %2 = kb.aten "to"(%1, %six, %f, %f, %none) {overload = "dtype"} : (tensor<64x256xi1>, i64, i1, i1, none) -> tensor<64x256xf32>
  %3 = kb.aten "mul"(%2, %0) {overload = "Tensor"} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %4 = kb.aten "mean"(%3, %none) : (tensor<64x256xf32>, none) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// ATen dispatches a softmax on the elements after its dim: one followed
// only by size-1 dims is a last-dim softmax there, in the warp order for
// at most 1024 elements (joins the comparison), else in the block order
// the generator does not play (stays).
// CHECK-LABEL: func.func @softmax_unit_inner_then_step
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<64x256x1xi1>) {
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    kb.aten "gt"
// CHECK:       kb.aten "softmax"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<64x2048x1xi1>) {
// CHECK-NEXT:    kb.aten "gt"
func.func @softmax_unit_inner_then_step(%x: tensor<64x256x1xf32>, %y: tensor<64x2048x1xf32>) -> (tensor<64x256x1xi1>, tensor<64x2048x1xi1>) {
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %c = kb.constant {value = 2.000000e-02 : f64} : f64
  %0 = kb.aten "softmax"(%x, %one, %none) {overload = "int"} : (tensor<64x256x1xf32>, i64, none) -> tensor<64x256x1xf32>
  %1 = kb.aten "gt"(%0, %c) {overload = "Scalar"} : (tensor<64x256x1xf32>, f64) -> tensor<64x256x1xi1>
  %2 = kb.aten "softmax"(%y, %one, %none) {overload = "int"} : (tensor<64x2048x1xf32>, i64, none) -> tensor<64x2048x1xf32>
  %3 = kb.aten "gt"(%2, %c) {overload = "Scalar"} : (tensor<64x2048x1xf32>, f64) -> tensor<64x2048x1xi1>
  return %1, %3 : tensor<64x256x1xi1>, tensor<64x2048x1xi1>
}

// -----

// A centring norm whose result reaches a singular op (log): the norm stays,
// log and tanh are fused; the prologue before the norm is fused too.
// CHECK-LABEL: func.func @norm_then_log
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<8x16x64xf32>) {
// CHECK-NEXT:    kb.aten "sub"
// CHECK:       kb.aten "instance_norm"{{.*}}kb.unfused = "a norm whose result reaches a singular op stays in ATen; its consumers are fused"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<8x16x64xf32>) {
// CHECK-NEXT:    kb.aten "abs"
// CHECK-NEXT:    kb.aten "log"
// CHECK-NEXT:    %[[T:.*]] = kb.aten "tanh"
// CHECK-NEXT:    kb.yield %[[T]]
// FUSED-LABEL: func.func @norm_then_log
// FUSED:       kb.region attributes {id = 0 : i64} -> (tensor<8x16x64xf32>) {
// FUSED-NEXT:    kb.aten "sub"
// FUSED-NEXT:    kb.aten "instance_norm"
func.func @norm_then_log(%x: tensor<8x16x64xf32>) -> tensor<8x16x64xf32> {
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %mom = kb.constant {value = 1.000000e-01 : f64} : f64
  %t = kb.constant {value = true} : i1
  %none = kb.constant {value} : none
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %one = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "sub"(%x, %half, %one) {overload = "Scalar"} : (tensor<8x16x64xf32>, f64, i64) -> tensor<8x16x64xf32>
  %1 = kb.aten "instance_norm"(%0, %none, %none, %none, %none, %t, %mom, %eps, %t) : (tensor<8x16x64xf32>, none, none, none, none, i1, f64, f64, i1) -> tensor<8x16x64xf32>
  %2 = kb.aten "abs"(%1) : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %3 = kb.aten "log"(%2) : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %4 = kb.aten "tanh"(%3) : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %4 : tensor<8x16x64xf32>
}

// -----

// pow with a constant exponent: |x|^1.5 and x^2 have bounded slopes at 0,
// so the norms before them are fused; x^0.5 is singular and x^1.5 of a
// signed base is NaN below 0 (a sign flipped near 0 would differ): their
// norms stay.
// CHECK-LABEL: func.func @norm_then_pow
// CHECK:       kb.region attributes {id = 0 : i64}
// CHECK-NEXT:    kb.aten "instance_norm"
// CHECK-NEXT:    kb.aten "abs"
// CHECK-NEXT:    kb.aten "pow"
// CHECK:       kb.region attributes {id = 1 : i64}
// CHECK-NEXT:    kb.aten "instance_norm"
// CHECK-NEXT:    kb.aten "pow"
// CHECK:       kb.aten "instance_norm"{{.*}}kb.unfused = "a norm whose result reaches a singular op stays in ATen; its consumers are fused"
// CHECK:       kb.aten "instance_norm"{{.*}}kb.unfused = "a norm whose result reaches a singular op stays in ATen; its consumers are fused"
func.func @norm_then_pow(%x: tensor<8x16x64xf32>) -> (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>) {
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %mom = kb.constant {value = 1.000000e-01 : f64} : f64
  %t = kb.constant {value = true} : i1
  %none = kb.constant {value} : none
  %p15 = kb.constant {value = 1.500000e+00 : f64} : f64
  %p2 = kb.constant {value = 2 : i64} : i64
  %p05 = kb.constant {value = 5.000000e-01 : f64} : f64
  %n0 = kb.aten "instance_norm"(%x, %none, %none, %none, %none, %t, %mom, %eps, %t) : (tensor<8x16x64xf32>, none, none, none, none, i1, f64, f64, i1) -> tensor<8x16x64xf32>
  %a0 = kb.aten "abs"(%n0) : (tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %r0 = kb.aten "pow"(%a0, %p15) {overload = "Tensor_Scalar"} : (tensor<8x16x64xf32>, f64) -> tensor<8x16x64xf32>
  %n1 = kb.aten "instance_norm"(%x, %none, %none, %none, %none, %t, %mom, %eps, %t) : (tensor<8x16x64xf32>, none, none, none, none, i1, f64, f64, i1) -> tensor<8x16x64xf32>
  %r1 = kb.aten "pow"(%n1, %p2) {overload = "Tensor_Scalar"} : (tensor<8x16x64xf32>, i64) -> tensor<8x16x64xf32>
  %n2 = kb.aten "instance_norm"(%x, %none, %none, %none, %none, %t, %mom, %eps, %t) : (tensor<8x16x64xf32>, none, none, none, none, i1, f64, f64, i1) -> tensor<8x16x64xf32>
  %r2 = kb.aten "pow"(%n2, %p05) {overload = "Tensor_Scalar"} : (tensor<8x16x64xf32>, f64) -> tensor<8x16x64xf32>
  %n3 = kb.aten "instance_norm"(%x, %none, %none, %none, %none, %t, %mom, %eps, %t) : (tensor<8x16x64xf32>, none, none, none, none, i1, f64, f64, i1) -> tensor<8x16x64xf32>
  %r3 = kb.aten "pow"(%n3, %p15) {overload = "Tensor_Scalar"} : (tensor<8x16x64xf32>, f64) -> tensor<8x16x64xf32>
  return %r0, %r1, %r2, %r3 : tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>
}

// -----

// Neither rule applies: a softmax followed by continuous ops joins as usual.
// CHECK-LABEL: func.func @softmax_continuous
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<64x256xf32>) {
// CHECK-NEXT:    kb.aten "softmax"
// CHECK-NEXT:    %[[T:.*]] = kb.aten "tanh"
// CHECK-NEXT:    kb.yield %[[T]]
// CHECK-NOT:   kb.unfused
func.func @softmax_continuous(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %0 = kb.aten "softmax"(%x, %one, %none) {overload = "int"} : (tensor<64x256xf32>, i64, none) -> tensor<64x256xf32>
  %1 = kb.aten "tanh"(%0) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}

// -----

// A training-mode batch norm whose result feeds a TF32 convolution (through
// relu): only cuDNN's own batch norm passes 1e-4 there; relu is fused.
// CHECK-LABEL: func.func @norm_before_conv
// CHECK:       kb.aten "batch_norm"{{.*}}kb.unfused = "a norm whose result feeds a TF32 convolution stays in ATen; its consumers are fused"
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<4x32x16x16xf32>) {
// CHECK-NEXT:    %[[R:.*]] = kb.aten "relu"
// CHECK-NEXT:    kb.yield %[[R]]
// CHECK:       kb.aten "_convolution"
// FUSED-LABEL: func.func @norm_before_conv
// FUSED:       kb.region attributes {id = 0 : i64} -> (tensor<4x32x16x16xf32>) {
// FUSED-NEXT:    kb.aten "batch_norm"
// FUSED-NEXT:    kb.aten "relu"
func.func @norm_before_conv(%x: tensor<4x32x16x16xf32>, %w: tensor<32x32x3x3xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>, %rm: tensor<32xf32>, %rv: tensor<32xf32>) -> tensor<4x32x16x16xf32> {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %mom = kb.constant {value = 1.000000e-01 : f64} : f64
  %ones = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %zeros = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "batch_norm"(%x, %g, %b, %rm, %rv, %t, %mom, %eps, %t) : (tensor<4x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, i1, f64, f64, i1) -> tensor<4x32x16x16xf32>
  %1 = kb.aten "relu"(%0) : (tensor<4x32x16x16xf32>) -> tensor<4x32x16x16xf32>
  %2 = kb.aten "_convolution"(%1, %w, %none, %ones, %ones, %ones, %f, %zeros, %one, %f, %f, %t, %t) : (tensor<4x32x16x16xf32>, tensor<32x32x3x3xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<4x32x16x16xf32>
  return %2 : tensor<4x32x16x16xf32>
}

// -----

// A layer norm the generator computes in ATen's order joins before a TF32
// convolution too (SegFormer's `x.transpose(1, 2).view(...)` into its
// convolutions): rewrite keeps its kernel only if kb-verify finds no bit
// differing from eager (rewrite-exact-before-tf32.test).
// CHECK-LABEL: func.func @layer_norm_before_conv
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<4x256x32xf32>) {
// CHECK-NEXT:    kb.aten "add"
// CHECK-NEXT:    kb.aten "layer_norm"
// CHECK:       kb.aten "transpose"
// CHECK:       kb.aten "_convolution"
func.func @layer_norm_before_conv(%x: tensor<4x256x32xf32>, %y: tensor<4x256x32xf32>, %w: tensor<32x32x3x3xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<4x32x16x16xf32> {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %c16 = kb.constant {value = 16 : i64} : i64
  %c32 = kb.constant {value = 32 : i64} : i64
  %c4 = kb.constant {value = 4 : i64} : i64
  %none = kb.constant {value} : none
  %eps = kb.constant {value = 1.000000e-05 : f64} : f64
  %ones = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %zeros = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %shape = kb.list(%c32) : (i64) -> !kb.list<i64>
  %view = kb.list(%c4, %c32, %c16, %c16) : (i64, i64, i64, i64) -> !kb.list<i64>
  %0 = kb.aten "add"(%x, %y, %one) {overload = "Tensor"} : (tensor<4x256x32xf32>, tensor<4x256x32xf32>, i64) -> tensor<4x256x32xf32>
  %1 = kb.aten "layer_norm"(%0, %shape, %g, %b, %eps, %t) : (tensor<4x256x32xf32>, !kb.list<i64>, tensor<32xf32>, tensor<32xf32>, f64, i1) -> tensor<4x256x32xf32>
  %2 = kb.aten "transpose"(%1, %one, %two) {overload = "int"} : (tensor<4x256x32xf32>, i64, i64) -> tensor<4x32x256xf32>
  %3 = kb.aten "view"(%2, %view) : (tensor<4x32x256xf32>, !kb.list<i64>) -> tensor<4x32x16x16xf32>
  %4 = kb.aten "_convolution"(%3, %w, %none, %ones, %ones, %ones, %f, %zeros, %one, %f, %f, %t, %t) : (tensor<4x32x16x16xf32>, tensor<32x32x3x3xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<4x32x16x16xf32>
  return %4 : tensor<4x32x16x16xf32>
}

// -----

// A squeeze-excitation's mean before its 1x1 convolution stays in ATen
// under rewrite's policy, so the SiLU both the mean and the rescale read is
// not copied into the mean's region (ATen would compute it a second time):
// it stays a region whose result both read. The defaults copy it.
// CHECK-LABEL: func.func @no_copy_into_kept_reduction
// CHECK:       %[[S:.*]] = kb.region attributes {id = 0 : i64} -> (tensor<4x32x16x16xf32>) {
// CHECK-NEXT:    kb.aten "silu"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<4x32x1x1xf32>) {
// CHECK-NEXT:    kb.aten "mean"(%[[S]]
// FUSED-LABEL: func.func @no_copy_into_kept_reduction
// FUSED:       kb.region attributes {id = 0 : i64} -> (tensor<4x32x1x1xf32>) {
// FUSED-NEXT:    kb.aten "silu"
// FUSED-NEXT:    kb.aten "mean"
func.func @no_copy_into_kept_reduction(%x: tensor<4x32x16x16xf32>, %w: tensor<32x32x1x1xf32>) -> tensor<4x32x16x16xf32> {
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %zero = kb.constant {value = 0 : i64} : i64
  %one = kb.constant {value = 1 : i64} : i64
  %two = kb.constant {value = 2 : i64} : i64
  %three = kb.constant {value = 3 : i64} : i64
  %none = kb.constant {value} : none
  %ones = kb.list(%one, %one) : (i64, i64) -> !kb.list<i64>
  %zeros = kb.list(%zero, %zero) : (i64, i64) -> !kb.list<i64>
  %hw = kb.list(%two, %three) : (i64, i64) -> !kb.list<i64>
  %0 = kb.aten "silu"(%x) : (tensor<4x32x16x16xf32>) -> tensor<4x32x16x16xf32>
  %1 = kb.aten "mean"(%0, %hw, %t, %none) {overload = "dim"} : (tensor<4x32x16x16xf32>, !kb.list<i64>, i1, none) -> tensor<4x32x1x1xf32>
  %2 = kb.aten "_convolution"(%1, %w, %none, %ones, %zeros, %ones, %f, %zeros, %one, %f, %f, %t, %t) : (tensor<4x32x1x1xf32>, tensor<32x32x1x1xf32>, none, !kb.list<i64>, !kb.list<i64>, !kb.list<i64>, i1, !kb.list<i64>, i64, i1, i1, i1, i1) -> tensor<4x32x1x1xf32>
  %3 = kb.aten "sigmoid"(%2) : (tensor<4x32x1x1xf32>) -> tensor<4x32x1x1xf32>
  %4 = kb.aten "mul"(%0, %3) {overload = "Tensor"} : (tensor<4x32x16x16xf32>, tensor<4x32x1x1xf32>) -> tensor<4x32x16x16xf32>
  return %4 : tensor<4x32x16x16xf32>
}

// -----

// A sum over trailing rows in ATen's reduce order (a warp a row of 1024
// elements, or a block a row) rounds as eager's: it joins the comparison.
// Over 32 rows of 262144 ATen splits each row over CTAs, an order the
// generator does not play (bench/probes/aten_sum_order.py): that sum stays
// in ATen.
// CHECK-LABEL: func.func @sum_rows_then_step
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<256xf32>) {
// CHECK-NEXT:    kb.aten "sum"{{.*}}(tensor<256x1024xf32>
// CHECK-NEXT:    kb.aten "gt"
// CHECK-NEXT:    kb.aten "to"
// CHECK:       kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"{{.*}}(tensor<32x262144xf32>
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<32xf32>) {
// CHECK-NEXT:    kb.aten "gt"
// CHECK-NEXT:    kb.aten "to"
// FUSED-LABEL: func.func @sum_rows_then_step
// FUSED:       kb.region attributes {id = 1 : i64} -> (tensor<32xf32>) {
// FUSED-NEXT:    kb.aten "sum"
func.func @sum_rows_then_step(%z: tensor<256x1024xf32>, %v: tensor<32x262144xf32>) -> (tensor<256xf32>, tensor<32xf32>) {
  %m1 = kb.constant {value = -1 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %c = kb.constant {value = 2.500000e-01 : f64} : f64
  %six = kb.constant {value = 6 : i64} : i64
  %0 = kb.aten "sum"(%z, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<256x1024xf32>, !kb.list<i64>, i1, none) -> tensor<256xf32>
  %1 = kb.aten "gt"(%0, %c) {overload = "Scalar"} : (tensor<256xf32>, f64) -> tensor<256xi1>
  %2 = kb.aten "to"(%1, %six, %f, %f, %none) {overload = "dtype"} : (tensor<256xi1>, i64, i1, i1, none) -> tensor<256xf32>
  %3 = kb.aten "sum"(%v, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x262144xf32>, !kb.list<i64>, i1, none) -> tensor<32xf32>
  %4 = kb.aten "gt"(%3, %c) {overload = "Scalar"} : (tensor<32xf32>, f64) -> tensor<32xi1>
  %5 = kb.aten "to"(%4, %six, %f, %f, %none) {overload = "dtype"} : (tensor<32xi1>, i64, i1, i1, none) -> tensor<32xf32>
  return %2, %5 : tensor<256xf32>, tensor<32xf32>
}

// -----

// max.dim steps through its indices only: a sum whose result reaches only
// the values of a max.dim forms a region (seed 20261236 task 1's form); one
// whose max's indices are used stays in ATen.
// CHECK-LABEL: func.func @sum_then_max_values
// CHECK-NOT:   kb.unfused
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "sum"
// CHECK:       kb.region attributes {id = 1 : i64} -> (tensor<1x64xf32>) {
// CHECK-NEXT:    %[[V:.*]]:2 = kb.aten "max"
// CHECK-NEXT:    kb.yield %[[V]]#0 :
// FUSED-LABEL: func.func @sum_then_max_values
func.func @sum_then_max_values(%x: tensor<32x64x16xf32>) -> tensor<1x64xf32> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1:2 = kb.aten "max"(%0, %zero, %t) {overload = "dim"} : (tensor<32x64xf32>, i64, i1) -> (tensor<1x64xf32>, tensor<1x64xi64>)
  return %1#0 : tensor<1x64xf32>
}

// -----

// topk steps through its indices only (KB_STEP_OP's RESULT column): the
// values of the k largest move with their input's last bits.
// CHECK-LABEL: func.func @sum_then_topk_values
// CHECK-NOT:   kb.unfused
// CHECK:       kb.region attributes {id = 0 : i64} -> (tensor<32x64xf32>) {
// CHECK-NEXT:    kb.aten "sum"
// CHECK:       kb.opaque "aten::topk"
// FUSED-LABEL: func.func @sum_then_topk_values
func.func @sum_then_topk_values(%x: tensor<32x64x16xf32>) -> tensor<32x5xf32> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %k = kb.constant {value = 5 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1:2 = kb.opaque "aten::topk"(%0, %k, %m1, %t, %t) : (tensor<32x64xf32>, i64, i64, i1, i1) -> (tensor<32x5xf32>, tensor<32x5xi64>)
  return %1#0 : tensor<32x5xf32>
}

// -----

// CHECK-LABEL: func.func @sum_then_topk_indices
// CHECK:       kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// FUSED-LABEL: func.func @sum_then_topk_indices
func.func @sum_then_topk_indices(%x: tensor<32x64x16xf32>) -> tensor<32x5xi64> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %k = kb.constant {value = 5 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1:2 = kb.opaque "aten::topk"(%0, %k, %m1, %t, %t) : (tensor<32x64xf32>, i64, i64, i1, i1) -> (tensor<32x5xf32>, tensor<32x5xi64>)
  return %1#1 : tensor<32x5xi64>
}

// -----

// CHECK-LABEL: func.func @sum_then_max_indices
// CHECK:       kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// FUSED-LABEL: func.func @sum_then_max_indices
func.func @sum_then_max_indices(%x: tensor<32x64x16xf32>) -> (tensor<1x64xf32>, tensor<1x64xi64>) {
  %m1 = kb.constant {value = -1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1:2 = kb.aten "max"(%0, %zero, %t) {overload = "dim"} : (tensor<32x64xf32>, i64, i1) -> (tensor<1x64xf32>, tensor<1x64xi64>)
  return %1#0, %1#1 : tensor<1x64xf32>, tensor<1x64xi64>
}

// -----

// A step whose input's range holds no jump (ValueRange.cpp): relu then
// hardtanh keep the quotient by |p| + 1 (at least 1) in [0, 0.542], where
// trunc is 0, so no last bit of the sum can change it: the sum joins.
// CHECK-LABEL: func.func @sum_then_trunc_of_bounded
// CHECK-NOT:   kb.unfused
// CHECK:       kb.region attributes {id = 0 : i64}
// CHECK-NEXT:    kb.aten "sum"
// FUSED-LABEL: func.func @sum_then_trunc_of_bounded
func.func @sum_then_trunc_of_bounded(%x: tensor<32x64x16xf32>, %p: tensor<64xf32>) -> tensor<32x64xf32> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %one = kb.constant {value = 1 : i64} : i64
  %lo = kb.constant {value = -1.128000e+00 : f64} : f64
  %hi = kb.constant {value = 5.420000e-01 : f64} : f64
  %mode = kb.constant {value = "trunc"} : !kb.str
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1 = kb.aten "relu"(%0) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %2 = kb.aten "hardtanh"(%1, %lo, %hi) : (tensor<32x64xf32>, f64, f64) -> tensor<32x64xf32>
  %3 = kb.aten "abs"(%p) : (tensor<64xf32>) -> tensor<64xf32>
  %4 = kb.aten "add"(%3, %one, %one) {overload = "Scalar"} : (tensor<64xf32>, i64, i64) -> tensor<64xf32>
  %5 = kb.aten "div"(%2, %4, %mode) {overload = "Tensor_mode"} : (tensor<32x64xf32>, tensor<64xf32>, !kb.str) -> tensor<32x64xf32>
  return %5 : tensor<32x64xf32>
}

// -----

// Without the upper clamp the quotient reaches 1, where trunc jumps: the
// sum stays in ATen.
// CHECK-LABEL: func.func @sum_then_trunc_of_unbounded
// CHECK:       kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// FUSED-LABEL: func.func @sum_then_trunc_of_unbounded
func.func @sum_then_trunc_of_unbounded(%x: tensor<32x64x16xf32>, %p: tensor<64xf32>) -> tensor<32x64xf32> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %one = kb.constant {value = 1 : i64} : i64
  %mode = kb.constant {value = "trunc"} : !kb.str
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1 = kb.aten "relu"(%0) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %3 = kb.aten "abs"(%p) : (tensor<64xf32>) -> tensor<64xf32>
  %4 = kb.aten "add"(%3, %one, %one) {overload = "Scalar"} : (tensor<64xf32>, i64, i64) -> tensor<64xf32>
  %5 = kb.aten "div"(%1, %4, %mode) {overload = "Tensor_mode"} : (tensor<32x64xf32>, tensor<64xf32>, !kb.str) -> tensor<32x64xf32>
  return %5 : tensor<32x64xf32>
}

// -----

// A comparison with a constant outside the value's range is constant:
// sigmoid's [0, 1] never exceeds 1.5; but it can exceed 0.5.
// CHECK-LABEL: func.func @sum_then_compare
// CHECK:       kb.region attributes {id = 0 : i64}
// CHECK-NEXT:    kb.aten "sum"
// CHECK-NEXT:    kb.aten "sigmoid"
// CHECK-NEXT:    kb.aten "gt"
// CHECK:       kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// CHECK:       kb.region attributes {id = 1 : i64}
// CHECK-NEXT:    kb.aten "sigmoid"
// CHECK-NEXT:    kb.aten "lt"
// FUSED-LABEL: func.func @sum_then_compare
func.func @sum_then_compare(%x: tensor<32x64x16xf32>, %y: tensor<32x64x16xf32>) -> (tensor<32x64xi1>, tensor<32x64xi1>) {
  %m1 = kb.constant {value = -1 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %none = kb.constant {value} : none
  %f = kb.constant {value = false} : i1
  %big = kb.constant {value = 1.500000e+00 : f64} : f64
  %half = kb.constant {value = 5.000000e-01 : f64} : f64
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %1 = kb.aten "sigmoid"(%0) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %2 = kb.aten "gt"(%1, %big) {overload = "Scalar"} : (tensor<32x64xf32>, f64) -> tensor<32x64xi1>
  %3 = kb.aten "sum"(%y, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<32x64x16xf32>, !kb.list<i64>, i1, none) -> tensor<32x64xf32>
  %4 = kb.aten "sigmoid"(%3) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %5 = kb.aten "lt"(%4, %half) {overload = "Scalar"} : (tensor<32x64xf32>, f64) -> tensor<32x64xi1>
  return %2, %5 : tensor<32x64xi1>, tensor<32x64xi1>
}

// -----

// Softmax over a dim of size 1 is exactly 1 (and log_softmax 0) whatever
// its input rounded to, so the comparison after it cannot flip and the
// variance joins a region (seed 20261330 task 2's var -> std(keepdim) ->
// softmax(dim=0) -> gt). Over a dim of size 2 the softmax's value follows
// the sum's last bits: that sum stays in ATen.
// CHECK-LABEL: func.func @var_then_unit_softmax_step
// CHECK-NOT:     stays in ATen
// CHECK:         kb.aten "var"
// CHECK-NOT:     stays in ATen
// CHECK-LABEL: func.func @sum_then_pair_softmax_step
// CHECK:         kb.aten "sum"{{.*}}kb.unfused = "a reduction whose result reaches a step op stays in ATen; its consumers are fused"
// FUSED-LABEL: func.func @var_then_unit_softmax_step
func.func @var_then_unit_softmax_step(%x: tensor<64x128xf32>) -> tensor<1x128xi1> {
  %zero = kb.constant {value = 0 : i64} : i64
  %dims = kb.list(%zero) : (i64) -> !kb.list<i64>
  %f = kb.constant {value = false} : i1
  %t = kb.constant {value = true} : i1
  %none = kb.constant {value} : none
  %c = kb.constant {value = 1.800000e-01 : f64} : f64
  %0 = kb.aten "var"(%x, %dims, %f, %t) {overload = "dim"} : (tensor<64x128xf32>, !kb.list<i64>, i1, i1) -> tensor<1x128xf32>
  %1 = kb.aten "softmax"(%0, %zero, %none) {overload = "int"} : (tensor<1x128xf32>, i64, none) -> tensor<1x128xf32>
  %2 = kb.aten "gt"(%1, %c) {overload = "Scalar"} : (tensor<1x128xf32>, f64) -> tensor<1x128xi1>
  return %2 : tensor<1x128xi1>
}
func.func @sum_then_pair_softmax_step(%x: tensor<2x128x16xf32>) -> tensor<2x128xi1> {
  %m1 = kb.constant {value = -1 : i64} : i64
  %zero = kb.constant {value = 0 : i64} : i64
  %dims = kb.list(%m1) : (i64) -> !kb.list<i64>
  %f = kb.constant {value = false} : i1
  %none = kb.constant {value} : none
  %c = kb.constant {value = 1.800000e-01 : f64} : f64
  %0 = kb.aten "sum"(%x, %dims, %f, %none) {overload = "dim_IntList"} : (tensor<2x128x16xf32>, !kb.list<i64>, i1, none) -> tensor<2x128xf32>
  %1 = kb.aten "softmax"(%0, %zero, %none) {overload = "int"} : (tensor<2x128xf32>, i64, none) -> tensor<2x128xf32>
  %2 = kb.aten "gt"(%1, %c) {overload = "Scalar"} : (tensor<2x128xf32>, f64) -> tensor<2x128xi1>
  return %2 : tensor<2x128xi1>
}
