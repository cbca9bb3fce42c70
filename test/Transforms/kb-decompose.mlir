// RUN: kb-opt %s --kb-decompose --split-input-file | FileCheck %s

// cosine_similarity is a reduction of its own (the "cosine" recipe), not
// a composite.
// CHECK-LABEL: func.func @cosine_similarity_kept
// CHECK: kb.aten "cosine_similarity"
func.func @cosine_similarity_kept(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> tensor<64xf32> {
  %d = kb.constant {value = -1 : i64} : i64
  %e = kb.constant {value = 1.000000e-08 : f64} : f64
  %0 = kb.aten "cosine_similarity"(%x, %y, %d, %e) : (tensor<64x32xf32>, tensor<64x32xf32>, i64, f64) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// pairwise_distance: the p-norm of x1 - x2 + eps over the last dim.
// CHECK-LABEL: func.func @pairwise_distance
// CHECK:      %[[D:.*]] = kb.aten "sub"(%arg0, %arg1, %{{.*}}) {overload = "Tensor"}
// CHECK:      %[[A:.*]] = kb.aten "add"(%[[D]], %{{.*}}, %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[N:.*]] = kb.aten "linalg_vector_norm"(%[[A]], {{.*}}) : ({{.*}}) -> tensor<8x1xf32>
// CHECK:      return %[[N]]
func.func @pairwise_distance(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x1xf32> {
  %p = kb.constant {value = 3.000000e+00 : f64} : f64
  %e = kb.constant {value = 1.000000e-06 : f64} : f64
  %k = kb.constant {value = true} : i1
  %0 = kb.aten "pairwise_distance"(%x, %y, %p, %e, %k) : (tensor<8x16xf32>, tensor<8x16xf32>, f64, f64, i1) -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

// triplet_margin_loss with swap: the negative distance is the smaller of
// d(anchor, negative) and d(positive, negative); mean reduction.
// CHECK-LABEL: func.func @triplet_swap
// CHECK-COUNT-3: kb.aten "linalg_vector_norm"
// CHECK:      %[[NEG:.*]] = kb.aten "min"({{.*}}) {overload = "other"}
// CHECK:      %[[M:.*]] = kb.aten "add"({{.*}}) {overload = "Scalar"}
// CHECK:      %[[G:.*]] = kb.aten "sub"(%[[M]], %[[NEG]], %{{.*}}) {overload = "Tensor"}
// CHECK:      %[[C:.*]] = kb.aten "clamp_min"(%[[G]],
// CHECK:      %[[R:.*]] = kb.aten "mean"(%[[C]], %{{.*}}) : (tensor<8xf32>, none) -> tensor<f32>
// CHECK:      return %[[R]]
func.func @triplet_swap(%a: tensor<8x16xf32>, %p: tensor<8x16xf32>, %n: tensor<8x16xf32>) -> tensor<f32> {
  %m = kb.constant {value = 1.500000e+00 : f64} : f64
  %two = kb.constant {value = 2.000000e+00 : f64} : f64
  %e = kb.constant {value = 1.000000e-06 : f64} : f64
  %s = kb.constant {value = true} : i1
  %r = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "triplet_margin_loss"(%a, %p, %n, %m, %two, %e, %s, %r) : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, f64, f64, f64, i1, i64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// mse_loss reduced: (x - t) * (x - t), then its sum.
// CHECK-LABEL: func.func @mse_sum
// CHECK:      %[[D:.*]] = kb.aten "sub"(%arg0, %arg1,
// CHECK:      %[[SQ:.*]] = kb.aten "mul"(%[[D]], %[[D]]) {overload = "Tensor"}
// CHECK:      %[[S:.*]] = kb.aten "sum"(%[[SQ]], %{{.*}}) : (tensor<4x8xf32>, none) -> tensor<f32>
// CHECK:      return %[[S]]
func.func @mse_sum(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %r = kb.constant {value = 2 : i64} : i64
  %0 = kb.aten "mse_loss"(%x, %t, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, i64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Unreduced, mse_loss's one-kernel rounding reaches the consumer bit for
// bit: ATen keeps it.
// CHECK-LABEL: func.func @mse_unreduced_kept
// CHECK: kb.aten "mse_loss"
func.func @mse_unreduced_kept(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = kb.constant {value = 0 : i64} : i64
  %0 = kb.aten "mse_loss"(%x, %t, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, i64) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// l1_loss is ATen's own composite (|x - t|, then the reduction): expanded
// unreduced too.
// CHECK-LABEL: func.func @l1_unreduced
// CHECK:      %[[D:.*]] = kb.aten "sub"(%arg0, %arg1,
// CHECK:      %[[A:.*]] = kb.aten "abs"(%[[D]])
// CHECK-NOT:  kb.aten
// CHECK:      return %[[A]]
func.func @l1_unreduced(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = kb.constant {value = 0 : i64} : i64
  %0 = kb.aten "l1_loss"(%x, %t, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, i64) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// smooth_l1_loss: z < beta ? 0.5 z z / beta : z - beta / 2.
// CHECK-LABEL: func.func @smooth_l1
// CHECK:      %[[Z:.*]] = kb.aten "abs"
// CHECK:      %[[H:.*]] = kb.aten "mul"(%[[Z]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[HZ:.*]] = kb.aten "mul"(%[[H]], %[[Z]]) {overload = "Tensor"}
// CHECK:      %[[Q:.*]] = kb.aten "div"(%[[HZ]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[HALFB:.*]] = kb.constant {value = 2.500000e-01 : f64} : f64
// CHECK:      %[[L:.*]] = kb.aten "sub"(%[[Z]], %[[HALFB]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[LT:.*]] = kb.aten "lt"(%[[Z]], %{{.*}}) {overload = "Scalar"} : (tensor<4x8xf32>, f64) -> tensor<4x8xi1>
// CHECK:      %[[W:.*]] = kb.aten "where"(%[[LT]], %[[Q]], %[[L]]) {overload = "self"}
// CHECK:      kb.aten "mean"(%[[W]],
func.func @smooth_l1(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %r = kb.constant {value = 1 : i64} : i64
  %b = kb.constant {value = 5.000000e-01 : f64} : f64
  %0 = kb.aten "smooth_l1_loss"(%x, %t, %r, %b) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, f64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ATen: smooth L1 with beta 0 is the L1 loss.
// CHECK-LABEL: func.func @smooth_l1_beta_zero
// CHECK:      %[[Z:.*]] = kb.aten "abs"
// CHECK-NOT:  kb.aten
// CHECK:      %[[M:.*]] = kb.aten "mean"(%[[Z]],
// CHECK-NEXT: return %[[M]]
func.func @smooth_l1_beta_zero(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %r = kb.constant {value = 1 : i64} : i64
  %b = kb.constant {value = 0.000000e+00 : f64} : f64
  %0 = kb.aten "smooth_l1_loss"(%x, %t, %r, %b) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, f64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// huber_loss: z < delta ? 0.5 z z : delta (z - delta / 2).
// CHECK-LABEL: func.func @huber
// CHECK:      %[[Z:.*]] = kb.aten "abs"
// CHECK:      %[[H:.*]] = kb.aten "mul"(%[[Z]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[Q:.*]] = kb.aten "mul"(%[[H]], %[[Z]]) {overload = "Tensor"}
// CHECK:      %[[S:.*]] = kb.aten "sub"(%[[Z]], %{{.*}}, %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[L:.*]] = kb.aten "mul"(%[[S]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[LT:.*]] = kb.aten "lt"(%[[Z]],
// CHECK:      %[[W:.*]] = kb.aten "where"(%[[LT]], %[[Q]], %[[L]])
// CHECK:      kb.aten "sum"(%[[W]],
func.func @huber(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %r = kb.constant {value = 2 : i64} : i64
  %d = kb.constant {value = 2.000000e+00 : f64} : f64
  %0 = kb.aten "huber_loss"(%x, %t, %r, %d) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, f64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// kl_div: xlogy(t, t) - t * x, or with log_target exp(t) * (t - x).
// CHECK-LABEL: func.func @kl_div
// CHECK:      %[[XL:.*]] = kb.aten "xlogy"(%arg1, %arg1) {overload = "Tensor"}
// CHECK:      %[[TX:.*]] = kb.aten "mul"(%arg1, %arg0) {overload = "Tensor"}
// CHECK:      %[[D:.*]] = kb.aten "sub"(%[[XL]], %[[TX]],
// CHECK:      kb.aten "sum"(%[[D]],
// CHECK:      %[[E:.*]] = kb.aten "exp"(%arg1)
// CHECK:      %[[D2:.*]] = kb.aten "sub"(%arg1, %arg0,
// CHECK:      %[[P:.*]] = kb.aten "mul"(%[[E]], %[[D2]]) {overload = "Tensor"}
// CHECK:      return {{.*}}, %[[P]]
func.func @kl_div(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %sum = kb.constant {value = 2 : i64} : i64
  %none = kb.constant {value = 0 : i64} : i64
  %f = kb.constant {value = false} : i1
  %tr = kb.constant {value = true} : i1
  %0 = kb.aten "kl_div"(%x, %t, %sum, %f) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, i1) -> tensor<f32>
  %1 = kb.aten "kl_div"(%x, %t, %none, %tr) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, i1) -> tensor<4x8xf32>
  return %0, %1 : tensor<f32>, tensor<4x8xf32>
}

// -----

// BCE with logits: (1 - t) x - log_sigmoid(x); with a weight ATen runs it.
// CHECK-LABEL: func.func @bce_with_logits
// CHECK:      %[[OM:.*]] = kb.aten "rsub"(%arg1, %{{.*}}, %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[M:.*]] = kb.aten "mul"(%[[OM]], %arg0) {overload = "Tensor"}
// CHECK:      %[[LS:.*]] = kb.aten "log_sigmoid"(%arg0)
// CHECK:      %[[D:.*]] = kb.aten "sub"(%[[M]], %[[LS]],
// CHECK:      kb.aten "mean"(%[[D]],
// CHECK:      kb.aten "binary_cross_entropy_with_logits"(%arg0, %arg1, %arg2,
func.func @bce_with_logits(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %r = kb.constant {value = 1 : i64} : i64
  %none = kb.constant {value} : none
  %0 = kb.aten "binary_cross_entropy_with_logits"(%x, %t, %none, %none, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, none, none, i64) -> tensor<f32>
  %1 = kb.aten "binary_cross_entropy_with_logits"(%x, %t, %w, %none, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, none, i64) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// -----

// Only static float32 operands and a constant reduction are expanded: a
// float64 loss and one whose reduction is computed stay as ATen runs them.
// CHECK-LABEL: func.func @kept_f64_and_dynamic_reduction
// CHECK:       kb.aten "mse_loss"(%arg0, %arg1,
// CHECK:       kb.aten "l1_loss"(%arg2, %arg3, %arg4)
// CHECK-NOT:   kb.aten "sub"
func.func @kept_f64_and_dynamic_reduction(%x: tensor<4x8xf64>, %t: tensor<4x8xf64>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %r: i64) -> (tensor<f64>, tensor<f32>) {
  %mean = kb.constant {value = 1 : i64} : i64
  %0 = kb.aten "mse_loss"(%x, %t, %mean) : (tensor<4x8xf64>, tensor<4x8xf64>, i64) -> tensor<f64>
  %1 = kb.aten "l1_loss"(%a, %b, %r) : (tensor<4x8xf32>, tensor<4x8xf32>, i64) -> tensor<f32>
  return %0, %1 : tensor<f64>, tensor<f32>
}

// -----

// ATen rejects a Huber delta of 0: the op is left for ATen's error, and no
// op of a partial expansion stays behind.
// CHECK-LABEL: func.func @huber_zero_delta_kept
// CHECK-NOT:   kb.aten "abs"
// CHECK:       kb.aten "huber_loss"
func.func @huber_zero_delta_kept(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<f32> {
  %r = kb.constant {value = 1 : i64} : i64
  %d = kb.constant {value = 0.000000e+00 : f64} : f64
  %0 = kb.aten "huber_loss"(%x, %t, %r, %d) : (tensor<4x8xf32>, tensor<4x8xf32>, i64, f64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// cross_entropy_loss with class indices: logsumexp over the classes minus
// each row's target element (clamped into range, gathered), ignored targets
// masked to 0; mean divides the sum by the count of kept targets.
// CHECK-LABEL: func.func @cross_entropy_mean
// CHECK:      %[[I:.*]] = kb.aten "clamp"(%arg1, {{.*}}) : (tensor<64xi64>, i64, i64) -> tensor<64xi64>
// CHECK:      %[[U:.*]] = kb.aten "unsqueeze"(%[[I]],
// CHECK:      %[[G:.*]] = kb.aten "gather"(%arg0, %{{.*}}, %[[U]], %{{.*}}) : ({{.*}}) -> tensor<64x1xf32>
// CHECK:      %[[X:.*]] = kb.aten "squeeze"(%[[G]], %{{.*}}) {overload = "dim"}
// CHECK:      %[[K:.*]] = kb.aten "ne"(%arg1, %{{.*}}) {overload = "Scalar"} : (tensor<64xi64>, i64) -> tensor<64xi1>
// CHECK:      %[[KF:.*]] = kb.aten "to"(%[[K]], {{.*}}) {overload = "dtype"}
// CHECK:      %[[L:.*]] = kb.aten "logsumexp"(%arg0, {{.*}}) : ({{.*}}) -> tensor<64xf32>
// CHECK:      %[[D:.*]] = kb.aten "sub"(%[[L]], %[[X]], %{{.*}}) {overload = "Tensor"}
// CHECK:      %[[Z:.*]] = kb.aten "eq"(%[[KF]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[M:.*]] = kb.aten "masked_fill"(%[[D]], %[[Z]], %{{.*}}) {overload = "Scalar"}
// CHECK:      %[[S:.*]] = kb.aten "sum"(%[[M]], %{{.*}}) : (tensor<64xf32>, none) -> tensor<f32>
// CHECK:      %[[C:.*]] = kb.aten "sum"(%[[KF]], %{{.*}}) : (tensor<64xf32>, none) -> tensor<f32>
// CHECK:      %[[R:.*]] = kb.aten "div"(%[[S]], %[[C]]) {overload = "Tensor"}
// CHECK:      return %[[R]]
func.func @cross_entropy_mean(%x: tensor<64x10xf32>, %t: tensor<64xi64>) -> tensor<f32> {
  %none = kb.constant {value} : none
  %mean = kb.constant {value = 1 : i64} : i64
  %ii = kb.constant {value = -100 : i64} : i64
  %ls = kb.constant {value = 0.000000e+00 : f64} : f64
  %0 = kb.aten "cross_entropy_loss"(%x, %t, %none, %mean, %ii, %ls) : (tensor<64x10xf32>, tensor<64xi64>, none, i64, i64, f64) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Unreduced: the masked row losses themselves.
// CHECK-LABEL: func.func @cross_entropy_none
// CHECK:      %[[M:.*]] = kb.aten "masked_fill"
// CHECK-NOT:  kb.aten "sum"
// CHECK:      return %[[M]]
func.func @cross_entropy_none(%x: tensor<8x5x7xf32>, %t: tensor<8x7xi64>) -> tensor<8x7xf32> {
  %none = kb.constant {value} : none
  %r = kb.constant {value = 0 : i64} : i64
  %ii = kb.constant {value = 2 : i64} : i64
  %ls = kb.constant {value = 0.000000e+00 : f64} : f64
  %0 = kb.aten "cross_entropy_loss"(%x, %t, %none, %r, %ii, %ls) : (tensor<8x5x7xf32>, tensor<8x7xi64>, none, i64, i64, f64) -> tensor<8x7xf32>
  return %0 : tensor<8x7xf32>
}

// -----

// Class weights, label smoothing and class probabilities are ATen's other
// formulas: the op stays.
// CHECK-LABEL: func.func @cross_entropy_kept
// CHECK-COUNT-3: kb.aten "cross_entropy_loss"
// CHECK-NOT:  kb.aten "logsumexp"
func.func @cross_entropy_kept(%x: tensor<64x10xf32>, %t: tensor<64xi64>, %w: tensor<10xf32>, %p: tensor<64x10xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %none = kb.constant {value} : none
  %mean = kb.constant {value = 1 : i64} : i64
  %ii = kb.constant {value = -100 : i64} : i64
  %ls0 = kb.constant {value = 0.000000e+00 : f64} : f64
  %ls = kb.constant {value = 1.000000e-01 : f64} : f64
  %0 = kb.aten "cross_entropy_loss"(%x, %t, %w, %mean, %ii, %ls0) : (tensor<64x10xf32>, tensor<64xi64>, tensor<10xf32>, i64, i64, f64) -> tensor<f32>
  %1 = kb.aten "cross_entropy_loss"(%x, %t, %none, %mean, %ii, %ls) : (tensor<64x10xf32>, tensor<64xi64>, none, i64, i64, f64) -> tensor<f32>
  %2 = kb.aten "cross_entropy_loss"(%x, %p, %none, %mean, %ii, %ls0) : (tensor<64x10xf32>, tensor<64x10xf32>, none, i64, i64, f64) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// SDPA with a position bias that is a permuted view (t5's relative
// attention bias, last-dim stride 8): every fused kernel refuses it, so
// ATen runs its math path, written out op for op. The scale is 1: no
// multiplications (x * 1 changes no bit); torch >= 2.5 (enable_gqa)
// normalises with _safe_softmax.
// CHECK-LABEL: func.func @sdpa_strided_mask
// CHECK-NOT:  "mul"
// CHECK:      %[[KT:.*]] = kb.aten "transpose"(%arg1, {{.*}}) {overload = "int"} : ({{.*}}) -> tensor<2x8x64x16xf32, [8192, 64, 1, 512]>
// CHECK:      %[[S:.*]] = kb.aten "matmul"(%arg0, %[[KT]]) : ({{.*}}) -> tensor<2x8x16x16xf32>
// CHECK:      %[[A:.*]] = kb.aten "add"(%[[S]], %arg3, %{{.*}}) {overload = "Tensor"}
// CHECK:      %[[P:.*]] = kb.aten "_safe_softmax"(%[[A]], %{{.*}}, %{{.*}}) : (tensor<2x8x16x16xf32>, i64, none) -> tensor<2x8x16x16xf32>
// CHECK:      %[[O:.*]] = kb.aten "matmul"(%[[P]], %arg2)
// CHECK-NOT:  scaled_dot_product_attention
// CHECK:      return %[[O]]
func.func @sdpa_strided_mask(%q: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %k: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %v: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %m: tensor<1x8x16x16xf32, [8, 1, 128, 8]>) -> tensor<2x8x16x64xf32> {
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %s = kb.constant {value = 1.000000e+00 : f64} : f64
  %g = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %m, %p, %c, %s, %g) : (tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<1x8x16x16xf32, [8, 1, 128, 8]>, f64, i1, f64, i1) -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// The default scale 1/sqrt(64): q and k^T each times its square root
// (64^-0.25), as ATen splits it; before torch 2.5 (no enable_gqa) the
// math path's softmax is the plain one. The strided operand here is v.
// CHECK-LABEL: func.func @sdpa_default_scale
// CHECK:      %[[Q:.*]] = kb.aten "mul"(%arg0, %[[F:.*]]) {overload = "Scalar"}
// CHECK:      %[[KT:.*]] = kb.aten "transpose"(%arg1,
// CHECK:      %[[K:.*]] = kb.aten "mul"(%[[KT]], %[[F2:.*]]) {overload = "Scalar"}
// CHECK:      %[[S:.*]] = kb.aten "matmul"(%[[Q]], %[[K]])
// CHECK-NOT:  "add"
// CHECK:      %[[P:.*]] = kb.aten "softmax"(%[[S]], {{.*}}) {overload = "int"}
// CHECK:      kb.aten "matmul"(%[[P]], %arg2)
func.func @sdpa_default_scale(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>) -> tensor<2x4x16x64xf32> {
  %n = kb.constant {value} : none
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %n, %p, %c, %n) {overload = "nogqa"} : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>, none, f64, i1, none) -> tensor<2x4x16x64xf32>
  return %0 : tensor<2x4x16x64xf32>
}

// -----

// Last dims of stride 1 (BERT's permuted heads): the fused kernels take
// it, SDPA stays.
// CHECK-LABEL: func.func @sdpa_fused_kept
// CHECK:      kb.aten "scaled_dot_product_attention"
// CHECK-NOT:  "matmul"
func.func @sdpa_fused_kept(%q: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %k: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %v: tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, %m: tensor<1x8x16x16xf32>) -> tensor<2x8x16x64xf32> {
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %s = kb.constant {value = 1.250000e-01 : f64} : f64
  %g = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %m, %p, %c, %s, %g) : (tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<2x8x16x64xf32, [8192, 64, 512, 1]>, tensor<1x8x16x16xf32>, f64, i1, f64, i1) -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

// Causal attention and dropout keep their ATen forms (the math path builds
// its mask, or draws random numbers).
// CHECK-LABEL: func.func @sdpa_causal_kept
// CHECK:      kb.aten "scaled_dot_product_attention"
// CHECK:      kb.aten "scaled_dot_product_attention"
// CHECK-NOT:  "matmul"
func.func @sdpa_causal_kept(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>) -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) {
  %n = kb.constant {value} : none
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %d = kb.constant {value = 1.000000e-01 : f64} : f64
  %t = kb.constant {value = true} : i1
  %f = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %n, %p, %t, %n, %f) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>, none, f64, i1, none, i1) -> tensor<2x4x16x64xf32>
  %1 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %n, %d, %f, %n, %f) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>, none, f64, i1, none, i1) -> tensor<2x4x16x64xf32>
  return %0, %1 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
}

// -----

// A negative scale multiplies q by -sqrt(|scale|) and k^T by sqrt(|scale|),
// as ATen does; a 2-d strided mask broadcasts over batch and heads.
// CHECK-LABEL: func.func @sdpa_negative_scale_2d_mask
// CHECK:      kb.constant {value = -5.000000e-01 : f64}
// CHECK:      kb.aten "mul"(%arg0,
// CHECK:      kb.constant {value = 5.000000e-01 : f64}
// CHECK:      kb.aten "mul"(
// CHECK:      %[[S:.*]] = kb.aten "matmul"
// CHECK:      kb.aten "add"(%[[S]], %arg3,
// CHECK:      kb.aten "_safe_softmax"
func.func @sdpa_negative_scale_2d_mask(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %m: tensor<16x16xf32, [1, 16]>) -> tensor<2x4x16x64xf32> {
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %s = kb.constant {value = -2.500000e-01 : f64} : f64
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %m, %p, %c, %s, %c) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<16x16xf32, [1, 16]>, f64, i1, f64, i1) -> tensor<2x4x16x64xf32>
  return %0 : tensor<2x4x16x64xf32>
}

// -----

// A mask that would grow the scores (a batch of 4 against q's 2: ATen
// rejects it) and a bool mask keep SDPA.
// CHECK-LABEL: func.func @sdpa_mask_kept
// CHECK-COUNT-2: kb.aten "scaled_dot_product_attention"
// CHECK-NOT:  "matmul"
func.func @sdpa_mask_kept(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %m: tensor<4x4x16x16xf32, [1024, 1, 64, 4]>, %b: tensor<16x16xi1, [1, 16]>) -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) {
  %n = kb.constant {value} : none
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %m, %p, %c, %n, %c) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4x4x16x16xf32, [1024, 1, 64, 4]>, f64, i1, none, i1) -> tensor<2x4x16x64xf32>
  %1 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %b, %p, %c, %n, %c) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<16x16xi1, [1, 16]>, f64, i1, none, i1) -> tensor<2x4x16x64xf32>
  return %0, %1 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
}

// -----

// A traced result with other strides than the math path's row-major
// matmul came from a fused kernel (and its readers expect that layout):
// SDPA stays.
// CHECK-LABEL: func.func @sdpa_strided_result_kept
// CHECK:      kb.aten "scaled_dot_product_attention"
// CHECK-NOT:  "matmul"
func.func @sdpa_strided_result_kept(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>) -> tensor<2x4x16x64xf32, [4096, 64, 256, 1]> {
  %n = kb.constant {value} : none
  %p = kb.constant {value = 0.000000e+00 : f64} : f64
  %c = kb.constant {value = false} : i1
  %0 = kb.aten "scaled_dot_product_attention"(%q, %k, %v, %n, %p, %c, %n, %c) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32, [4096, 1024, 1, 16]>, none, f64, i1, none, i1) -> tensor<2x4x16x64xf32, [4096, 64, 256, 1]>
  return %0 : tensor<2x4x16x64xf32, [4096, 64, 256, 1]>
}
