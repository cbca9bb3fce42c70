// RUN: kb-opt %s --kb-gemm-operand-layouts --split-input-file | FileCheck %s

// ResMLP's Affine norm before the channel MLP: the residual stream stays
// transposed, the norm's output (read only by fc1's linear) becomes
// row-major in the kernel and at the launch.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         %[[ADD:.*]] = kb.aten "add"{{.*}} -> tensor<4x49x96xf32, [4704, 1, 49]>
// CHECK:         %[[AFF:.*]] = kb.aten "addcmul"{{.*}} -> tensor<4x49x96xf32>
// CHECK:         kb.yield %[[ADD]], %[[AFF]] : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>
// CHECK-LABEL: func.func @affine_before_linear
// CHECK:         %[[L:.*]]:2 = kb.launch @kb_region_0{{.*}} -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>)
// CHECK:         kb.aten "linear"(%[[L]]#1, {{.*}}) {kind = "anchor"} : (tensor<4x49x96xf32>,
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<1x1x96xf32>):
    %one = kb.constant {value = 1 : i64} : i64
    %0 = kb.aten "add"(%a, %b, %one) {kind = "elementwise", overload = "Tensor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, i64) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "addcmul"(%w, %w, %0, %one) {kind = "broadcast"} : (tensor<1x1x96xf32>, tensor<1x1x96xf32>, tensor<4x49x96xf32, [4704, 1, 49]>, i64) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>
  }
  func.func @affine_before_linear(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<1x1x96xf32>, %fw: tensor<384x96xf32>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x384xf32>) {
    %none = kb.constant {value} : none
    %0:2 = kb.launch @kb_region_0(%a, %b, %w) : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<1x1x96xf32>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>)
    %1 = kb.aten "linear"(%0#1, %fw, %none) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<384x96xf32>, none) -> tensor<4x49x384xf32>
    return %0#0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x384xf32>
  }
}

// -----

// An output that is also returned (or read by anything but a folding GEMM
// operand) keeps the layout the trace recorded; so does bmm's operand,
// which cuBLAS reads transposed as it is, and linear's weight.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>
// CHECK-LABEL: func.func @other_users
// CHECK:         kb.launch @kb_region_0{{.*}} -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>)
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>):
    %0 = kb.aten "relu"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "tanh"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>
  }
  func.func @other_users(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %fw: tensor<384x96xf32>, %m: tensor<4x96x8xf32>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x384xf32>, tensor<4x49x8xf32>) {
    %none = kb.constant {value} : none
    %0:2 = kb.launch @kb_region_0(%a) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>)
    %1 = kb.aten "linear"(%0#0, %fw, %none) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<384x96xf32>, none) -> tensor<4x49x384xf32>
    %2 = kb.aten "bmm"(%0#1, %m) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x96x8xf32>) -> tensor<4x49x8xf32>
    return %0#0, %1, %2 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x384xf32>, tensor<4x49x8xf32>
  }
}

// -----

// matmul folds a first operand of rank 3 into a matrix as linear does; so
// does a row kernel over the last dim (a softmax over dim 2) write its
// output row-major; a softmax over another dim keeps its layout (its
// kernel walks the traced layout's rows).
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}} : tensor<4x49x96xf32>
// CHECK-LABEL: kb.kernel @kb_region_1
// CHECK:         kb.yield %{{.*}} : tensor<4x49x96xf32>
// CHECK-LABEL: kb.kernel @kb_region_2
// CHECK:         kb.yield %{{.*}} : tensor<4x49x96xf32, [4704, 1, 49]>
// CHECK-LABEL: func.func @matmul_and_reduction
// CHECK:         kb.aten "matmul"({{.*}}) {kind = "anchor"} : (tensor<4x49x96xf32>,
// CHECK:         kb.aten "matmul"({{.*}}) {kind = "anchor"} : (tensor<4x49x96xf32>,
// CHECK:         kb.aten "matmul"({{.*}}) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>,
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>):
    %0 = kb.aten "relu"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0 : tensor<4x49x96xf32, [4704, 1, 49]>
  }
  kb.kernel @kb_region_1 attributes {id = 1 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>):
    %none = kb.constant {value} : none
    %two = kb.constant {value = 2 : i64} : i64
    %0 = kb.aten "softmax"(%a, %two, %none) {kind = "reduction", overload = "int"} : (tensor<4x49x96xf32, [4704, 1, 49]>, i64, none) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0 : tensor<4x49x96xf32, [4704, 1, 49]>
  }
  kb.kernel @kb_region_2 attributes {id = 2 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>):
    %none = kb.constant {value} : none
    %one = kb.constant {value = 1 : i64} : i64
    %0 = kb.aten "softmax"(%a, %one, %none) {kind = "reduction", overload = "int"} : (tensor<4x49x96xf32, [4704, 1, 49]>, i64, none) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0 : tensor<4x49x96xf32, [4704, 1, 49]>
  }
  func.func @matmul_and_reduction(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %m: tensor<96x8xf32>) -> (tensor<4x49x8xf32>, tensor<4x49x8xf32>, tensor<4x49x8xf32>) {
    %0 = kb.launch @kb_region_0(%a) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "matmul"(%0, %m) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96x8xf32>) -> tensor<4x49x8xf32>
    %2 = kb.launch @kb_region_1(%a) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %3 = kb.aten "matmul"(%2, %m) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96x8xf32>) -> tensor<4x49x8xf32>
    %4 = kb.launch @kb_region_2(%a) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %5 = kb.aten "matmul"(%4, %m) {kind = "anchor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96x8xf32>) -> tensor<4x49x8xf32>
    return %1, %3, %5 : tensor<4x49x8xf32>, tensor<4x49x8xf32>, tensor<4x49x8xf32>
  }
}

// -----

// MLP-Mixer's token MLP reads `norm1(x).transpose(1, 2)`: the LayerNorm's
// output is stored with its last two dims swapped, so that the transpose
// linear reads is row-major (ATen copied it before the GEMM); the row
// kernel stages that one transposed output. Beside a residual output kept
// transposed (a second staged output) it stays row-major.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32>, tensor<4x49x96xf32, [4704, 1, 49]>
// CHECK-LABEL: kb.kernel @kb_region_1
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>
// CHECK-LABEL: func.func @token_mlp_operand
// CHECK:         %[[A:.*]]:2 = kb.launch @kb_region_0{{.*}} -> (tensor<4x49x96xf32>, tensor<4x49x96xf32, [4704, 1, 49]>)
// CHECK:         %[[T:.*]] = kb.aten "transpose"(%[[A]]#1, {{.*}}) -> tensor<4x96x49xf32>
// CHECK:         kb.aten "linear"(%[[T]], {{.*}} : (tensor<4x96x49xf32>,
// CHECK:         %[[B:.*]]:2 = kb.launch @kb_region_1{{.*}} -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>)
// CHECK:         kb.aten "transpose"(%[[B]]#1, {{.*}}) -> tensor<4x96x49xf32, [4704, 1, 96]>
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32>, %b: tensor<4x49x96xf32>, %w: tensor<96xf32>):
    %one = kb.constant {value = 1 : i64} : i64
    %c = kb.constant {value = 96 : i64} : i64
    %shape = kb.list(%c) : (i64) -> !kb.list<i64>
    %eps = kb.constant {value = 1.0E-6 : f64} : f64
    %t = kb.constant {value = true} : i1
    %0 = kb.aten "add"(%a, %b, %one) {kind = "elementwise", overload = "Tensor"} : (tensor<4x49x96xf32>, tensor<4x49x96xf32>, i64) -> tensor<4x49x96xf32>
    %1 = kb.aten "layer_norm"(%0, %shape, %w, %w, %eps, %t) {kind = "reduction"} : (tensor<4x49x96xf32>, !kb.list<i64>, tensor<96xf32>, tensor<96xf32>, f64, i1) -> tensor<4x49x96xf32>
    kb.yield %0, %1 : tensor<4x49x96xf32>, tensor<4x49x96xf32>
  }
  kb.kernel @kb_region_1 attributes {id = 1 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<96xf32>):
    %one = kb.constant {value = 1 : i64} : i64
    %c = kb.constant {value = 96 : i64} : i64
    %shape = kb.list(%c) : (i64) -> !kb.list<i64>
    %eps = kb.constant {value = 1.0E-6 : f64} : f64
    %t = kb.constant {value = true} : i1
    %0 = kb.aten "add"(%a, %b, %one) {kind = "elementwise", overload = "Tensor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, i64) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "layer_norm"(%0, %shape, %w, %w, %eps, %t) {kind = "reduction"} : (tensor<4x49x96xf32, [4704, 1, 49]>, !kb.list<i64>, tensor<96xf32>, tensor<96xf32>, f64, i1) -> tensor<4x49x96xf32>
    kb.yield %0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>
  }
  func.func @token_mlp_operand(%a: tensor<4x49x96xf32>, %b: tensor<4x49x96xf32>, %ta: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<96xf32>, %fw: tensor<24x49xf32>) -> (tensor<4x49x96xf32>, tensor<4x96x24xf32>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x96x24xf32>) {
    %none = kb.constant {value} : none
    %one = kb.constant {value = 1 : i64} : i64
    %two = kb.constant {value = 2 : i64} : i64
    %0:2 = kb.launch @kb_region_0(%a, %b, %w) : (tensor<4x49x96xf32>, tensor<4x49x96xf32>, tensor<96xf32>) -> (tensor<4x49x96xf32>, tensor<4x49x96xf32>)
    %1 = kb.aten "transpose"(%0#1, %one, %two) {kind = "injective", overload = "int"} : (tensor<4x49x96xf32>, i64, i64) -> tensor<4x96x49xf32, [4704, 1, 96]>
    %2 = kb.aten "linear"(%1, %fw, %none) {kind = "anchor"} : (tensor<4x96x49xf32, [4704, 1, 96]>, tensor<24x49xf32>, none) -> tensor<4x96x24xf32>
    %3:2 = kb.launch @kb_region_1(%ta, %ta, %w) : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96xf32>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>)
    %4 = kb.aten "transpose"(%3#1, %one, %two) {kind = "injective", overload = "int"} : (tensor<4x49x96xf32>, i64, i64) -> tensor<4x96x49xf32, [4704, 1, 96]>
    %5 = kb.aten "linear"(%4, %fw, %none) {kind = "anchor"} : (tensor<4x96x49xf32, [4704, 1, 96]>, tensor<24x49xf32>, none) -> tensor<4x96x24xf32>
    return %0#0, %2, %3#0, %5 : tensor<4x49x96xf32>, tensor<4x96x24xf32>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x96x24xf32>
  }
}

// -----

// The other output keeps a layout the tiled kernel cannot write beside a
// row-major one (dims 1 and 2 swapped, not the last two): it would be
// stored a float a sector, so both keep their traced layout (ATen copies
// the linear's operand, as eager does).
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<2x8x8x32xf32, [2048, 32, 256, 1]>
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<2x8x8x32xf32, [2048, 32, 256, 1]>):
    %0 = kb.aten "relu"(%a) {kind = "elementwise"} : (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>) -> tensor<2x8x8x32xf32, [2048, 32, 256, 1]>
    %1 = kb.aten "tanh"(%a) {kind = "elementwise"} : (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>) -> tensor<2x8x8x32xf32, [2048, 32, 256, 1]>
    kb.yield %0, %1 : tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<2x8x8x32xf32, [2048, 32, 256, 1]>
  }
  func.func @channels_last_beside(%a: tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, %fw: tensor<16x32xf32>) -> (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<2x8x8x16xf32>) {
    %none = kb.constant {value} : none
    %0:2 = kb.launch @kb_region_0(%a) : (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>) -> (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<2x8x8x32xf32, [2048, 32, 256, 1]>)
    %1 = kb.aten "linear"(%0#1, %fw, %none) {kind = "anchor"} : (tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<16x32xf32>, none) -> tensor<2x8x8x16xf32>
    return %0#0, %1 : tensor<2x8x8x32xf32, [2048, 32, 256, 1]>, tensor<2x8x8x16xf32>
  }
}

// -----

// The tiles read inputs of the outputs' shape only in those two layouts:
// beside an input kept channels-last, the output a linear reads keeps the
// traced layout (the float4 kernel walks it).
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>
// CHECK-LABEL: func.func @other_input_layout
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, %b: tensor<2x16x32x32xf32, [16384, 1, 512, 16]>):
    %one = kb.constant {value = 1 : i64} : i64
    %0 = kb.aten "add"(%a, %b, %one) {kind = "elementwise", overload = "Tensor"} : (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x32xf32, [16384, 1, 512, 16]>, i64) -> tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>
    %1 = kb.aten "relu"(%0) {kind = "elementwise"} : (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>) -> tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>
    kb.yield %0, %1 : tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>
  }
  func.func @other_input_layout(%a: tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, %b: tensor<2x16x32x32xf32, [16384, 1, 512, 16]>, %fw: tensor<8x32xf32>) -> (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x8xf32>) {
    %none = kb.constant {value} : none
    %0:2 = kb.launch @kb_region_0(%a, %b) : (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x32xf32, [16384, 1, 512, 16]>) -> (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>)
    %1 = kb.aten "linear"(%0#1, %fw, %none) {kind = "anchor"} : (tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<8x32xf32>, none) -> tensor<2x16x32x8xf32>
    return %0#0, %1 : tensor<2x16x32x32xf32, [16384, 1024, 1, 32]>, tensor<2x16x32x8xf32>
  }
}
