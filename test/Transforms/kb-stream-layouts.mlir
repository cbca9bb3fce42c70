// RUN: kb-opt %s --kb-stream-layouts --split-input-file | FileCheck %s

// MLP-Mixer's residual stream between two LayerNorm kernels: read by
// nothing but the next row kernel, it is written and read row-major, and
// the reader records which input it made row-major.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32>, tensor<4x49x96xf32>
// CHECK-LABEL: kb.kernel @kb_region_1
// CHECK-SAME:    kb.relaid = [1]
// CHECK:         ^bb0(%{{.*}}: tensor<4x49x96xf32>, %{{.*}}: tensor<4x49x96xf32>, %{{.*}}: tensor<96xf32>):
// CHECK-LABEL: func.func @residual_stream
// CHECK:         %[[P:.*]]:2 = kb.launch @kb_region_0{{.*}} -> (tensor<4x49x96xf32>, tensor<4x49x96xf32>)
// CHECK:         kb.launch @kb_region_1(%{{.*}}, %[[P]]#0, %{{.*}}) : (tensor<4x49x96xf32>, tensor<4x49x96xf32>, tensor<96xf32>)
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
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
  kb.kernel @kb_region_1 attributes {id = 1 : i64, inputs = []} {
  ^bb0(%f: tensor<4x49x96xf32>, %x: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<96xf32>):
    %one = kb.constant {value = 1 : i64} : i64
    %c = kb.constant {value = 96 : i64} : i64
    %shape = kb.list(%c) : (i64) -> !kb.list<i64>
    %eps = kb.constant {value = 1.0E-6 : f64} : f64
    %t = kb.constant {value = true} : i1
    %0 = kb.aten "add"(%x, %f, %one) {kind = "elementwise", overload = "Tensor"} : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>, i64) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "layer_norm"(%0, %shape, %w, %w, %eps, %t) {kind = "reduction"} : (tensor<4x49x96xf32, [4704, 1, 49]>, !kb.list<i64>, tensor<96xf32>, tensor<96xf32>, f64, i1) -> tensor<4x49x96xf32>
    kb.yield %1 : tensor<4x49x96xf32>
  }
  func.func @residual_stream(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x49x96xf32, [4704, 1, 49]>, %w: tensor<96xf32>, %f: tensor<4x49x96xf32>) -> (tensor<4x49x96xf32>, tensor<4x49x96xf32>) {
    %0:2 = kb.launch @kb_region_0(%a, %b, %w) : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96xf32>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>)
    %1 = kb.launch @kb_region_1(%f, %0#0, %w) : (tensor<4x49x96xf32>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<96xf32>) -> tensor<4x49x96xf32>
    return %0#1, %1 : tensor<4x49x96xf32>, tensor<4x49x96xf32>
  }
}

// -----

// Readers that do not walk rows of the last dim keep the traced layout: a
// pointwise kernel (it walks its outputs' layout), a softmax over the
// middle dim; so does a value the function returns.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>
// CHECK-LABEL: kb.kernel @kb_region_1
// CHECK-NOT:     kb.relaid
// CHECK:         ^bb0(%{{.*}}: tensor<4x49x96xf32, [4704, 1, 49]>):
// CHECK-LABEL: kb.kernel @kb_region_2
// CHECK-NOT:     kb.relaid
// CHECK:         ^bb0(%{{.*}}: tensor<4x49x96xf32, [4704, 1, 49]>):
// CHECK-LABEL: kb.kernel @kb_region_3
// CHECK-NOT:     kb.relaid
// CHECK:         ^bb0(%{{.*}}: tensor<4x49x96xf32, [4704, 1, 49]>):
// CHECK-LABEL: func.func @other_readers
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>):
    %0 = kb.aten "relu"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "tanh"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>
  }
  kb.kernel @kb_region_1 attributes {id = 1 : i64, inputs = []} {
  ^bb0(%x: tensor<4x49x96xf32, [4704, 1, 49]>):
    %0 = kb.aten "sigmoid"(%x) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0 : tensor<4x49x96xf32, [4704, 1, 49]>
  }
  kb.kernel @kb_region_2 attributes {id = 2 : i64, inputs = []} {
  ^bb0(%x: tensor<4x49x96xf32, [4704, 1, 49]>):
    %one = kb.constant {value = 1 : i64} : i64
    %none = kb.constant {value} : none
    %0 = kb.aten "softmax"(%x, %one, %none) {kind = "reduction", overload = "int"} : (tensor<4x49x96xf32, [4704, 1, 49]>, i64, none) -> tensor<4x49x96xf32, [4704, 1, 49]>
    kb.yield %0 : tensor<4x49x96xf32, [4704, 1, 49]>
  }
  kb.kernel @kb_region_3 attributes {id = 3 : i64, inputs = []} {
  ^bb0(%x: tensor<4x49x96xf32, [4704, 1, 49]>):
    %two = kb.constant {value = 2 : i64} : i64
    %none = kb.constant {value} : none
    %0 = kb.aten "softmax"(%x, %two, %none) {kind = "reduction", overload = "int"} : (tensor<4x49x96xf32, [4704, 1, 49]>, i64, none) -> tensor<4x49x96xf32>
    kb.yield %0 : tensor<4x49x96xf32>
  }
  func.func @other_readers(%a: tensor<4x49x96xf32, [4704, 1, 49]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>) {
    %0:2 = kb.launch @kb_region_0(%a) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>)
    %1 = kb.launch @kb_region_1(%0#0) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %2 = kb.launch @kb_region_2(%0#1) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %3 = kb.launch @kb_region_3(%0#1) : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32>
    return %1, %2, %3 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x49x96xf32>
  }
}

// -----

// A row kernel that yields its argument as it is would change its own
// output's layout with it; a layout too narrow for tiles (8 tokens) and a
// value the function returns keep theirs.
// CHECK-LABEL: kb.kernel @kb_region_0
// CHECK:         kb.yield %{{.*}}, %{{.*}} : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32, [768, 1, 8]>
// CHECK-LABEL: kb.kernel @kb_region_1
// CHECK-NOT:     kb.relaid
// CHECK:         ^bb0(%{{.*}}: tensor<4x49x96xf32, [4704, 1, 49]>, %{{.*}}: tensor<4x8x96xf32, [768, 1, 8]>):
// CHECK-LABEL: func.func @kept
module {
  kb.kernel @kb_region_0 attributes {id = 0 : i64, inputs = []} {
  ^bb0(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x8x96xf32, [768, 1, 8]>):
    %0 = kb.aten "relu"(%a) {kind = "elementwise"} : (tensor<4x49x96xf32, [4704, 1, 49]>) -> tensor<4x49x96xf32, [4704, 1, 49]>
    %1 = kb.aten "relu"(%b) {kind = "elementwise"} : (tensor<4x8x96xf32, [768, 1, 8]>) -> tensor<4x8x96xf32, [768, 1, 8]>
    kb.yield %0, %1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32, [768, 1, 8]>
  }
  kb.kernel @kb_region_1 attributes {id = 1 : i64, inputs = []} {
  ^bb0(%x: tensor<4x49x96xf32, [4704, 1, 49]>, %y: tensor<4x8x96xf32, [768, 1, 8]>):
    %two = kb.constant {value = 2 : i64} : i64
    %none = kb.constant {value} : none
    %0 = kb.aten "softmax"(%y, %two, %none) {kind = "reduction", overload = "int"} : (tensor<4x8x96xf32, [768, 1, 8]>, i64, none) -> tensor<4x8x96xf32>
    kb.yield %x, %0 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32>
  }
  func.func @kept(%a: tensor<4x49x96xf32, [4704, 1, 49]>, %b: tensor<4x8x96xf32, [768, 1, 8]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32>) {
    %0:2 = kb.launch @kb_region_0(%a, %b) : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32, [768, 1, 8]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32, [768, 1, 8]>)
    %1:2 = kb.launch @kb_region_1(%0#0, %0#1) : (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32, [768, 1, 8]>) -> (tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32>)
    return %1#0, %1#1 : tensor<4x49x96xf32, [4704, 1, 49]>, tensor<4x8x96xf32>
  }
}
