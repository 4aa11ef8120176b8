// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// softmax, layer_norm and the reductions.

// The default axis (-1) is elided, another axis is printed.
// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x10xf32>) -> (tensor<2x10xf32>, tensor<2x10xf32>, tensor<2x10xf32>) {
  // CHECK: %{{.*}} = graph.softmax %{{.*}} : tensor<2x10xf32>
  // CHECK-NEXT: %{{.*}} = graph.softmax %{{.*}} : tensor<2x10xf32>
  // CHECK-NEXT: %{{.*}} = graph.softmax %{{.*}} {axis = 0 : i64} : tensor<2x10xf32>
  %0 = graph.softmax %x : tensor<2x10xf32>
  %1 = graph.softmax %x {axis = -1 : i64} : tensor<2x10xf32>
  %2 = graph.softmax %x {axis = 0 : i64} : tensor<2x10xf32>
  func.return %0, %1, %2 : tensor<2x10xf32>, tensor<2x10xf32>, tensor<2x10xf32>
}

// Attention scores: softmax over axis 1 of 4-D, spelled -3 too.
// CHECK-LABEL: func.func @softmax_rank4
func.func @softmax_rank4(%x: tensor<1x12x8x8xf16>) -> (tensor<1x12x8x8xf16>, tensor<1x12x8x8xf16>) {
  // CHECK: %{{.*}} = graph.softmax %{{.*}} {axis = 1 : i64} : tensor<1x12x8x8xf16>
  // CHECK-NEXT: %{{.*}} = graph.softmax %{{.*}} {axis = -3 : i64} : tensor<1x12x8x8xf16>
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<1x12x8x8xf16>
  %1 = graph.softmax %x {axis = -3 : i64} : tensor<1x12x8x8xf16>
  func.return %0, %1 : tensor<1x12x8x8xf16>, tensor<1x12x8x8xf16>
}

// CHECK-LABEL: func.func @layer_norm_bias
func.func @layer_norm_bias(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // CHECK: %{{.*}} = graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %0 = graph.layer_norm %x, %s, %b : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  func.return %0 : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @layer_norm_no_bias
func.func @layer_norm_no_bias(%x: tensor<2x16x64xf32>, %s: tensor<64xf32>) -> tensor<2x16x64xf32> {
  // CHECK: %{{.*}} = graph.layer_norm %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %0 = graph.layer_norm %x, %s {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  func.return %0 : tensor<2x16x64xf32>
}

// Normalizing the last two axes; scale and bias broadcast to 16x64.
// CHECK-LABEL: func.func @layer_norm_axis
func.func @layer_norm_axis(%x: tensor<2x16x64xf32>, %s: tensor<16x64xf32>, %b: tensor<1x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  // CHECK: %{{.*}} = graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-06 : f32} : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
  // CHECK-NEXT: %{{.*}} = graph.layer_norm %{{.*}}, %{{.*}} {axis = -2 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  %0 = graph.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
  %1 = graph.layer_norm %x, %s {axis = -2 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  func.return %0, %1 : tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// keepdims keeps the reduced axes as size 1; without it they go.
// CHECK-LABEL: func.func @reduce_mean
func.func @reduce_mean(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3xf32>) {
  // CHECK: %{{.*}} = graph.reduce_mean %{{.*}} {axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.reduce_mean %{{.*}} {axes = array<i64: 2, 3>} : tensor<2x3x4x5xf32> -> tensor<2x3xf32>
  %0 = graph.reduce_mean %x {axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: 2, 3>} : tensor<2x3x4x5xf32> -> tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x3xf32>
}

// Negative axes, in any order; reducing every axis gives a rank-0 tensor.
// CHECK-LABEL: func.func @reduce_sum
func.func @reduce_sum(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) -> (tensor<3xf32>, tensor<1x3x1xf32>, tensor<i64>) {
  // CHECK: %{{.*}} = graph.reduce_sum %{{.*}} {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = graph.reduce_sum %{{.*}} {axes = array<i64: 2, -3>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.reduce_sum %{{.*}} {axes = array<i64: 0, 1>} : tensor<2x3xi64> -> tensor<i64>
  %0 = graph.reduce_sum %x {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = graph.reduce_sum %x {axes = array<i64: 2, -3>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %2 = graph.reduce_sum %i {axes = array<i64: 0, 1>} : tensor<2x3xi64> -> tensor<i64>
  func.return %0, %1, %2 : tensor<3xf32>, tensor<1x3x1xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @reduce_max
func.func @reduce_max(%x: tensor<4x6xf32>, %i: tensor<4x6xi32>) -> (tensor<4x1xf32>, tensor<6xi32>) {
  // CHECK: %{{.*}} = graph.reduce_max %{{.*}} {axes = array<i64: 1>, keepdims} : tensor<4x6xf32> -> tensor<4x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.reduce_max %{{.*}} {axes = array<i64: 0>} : tensor<4x6xi32> -> tensor<6xi32>
  %0 = graph.reduce_max %x {axes = array<i64: 1>, keepdims} : tensor<4x6xf32> -> tensor<4x1xf32>
  %1 = graph.reduce_max %i {axes = array<i64: 0>} : tensor<4x6xi32> -> tensor<6xi32>
  func.return %0, %1 : tensor<4x1xf32>, tensor<6xi32>
}
