// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.softmax, op.layer_norm and op.reduce.

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x4x8x8xf32>, %y: tensor<3x5xf16>) -> (tensor<2x4x8x8xf32>, tensor<3x5xf16>) {
  // CHECK: %{{.*}} = op.softmax %x {axis = -1 : i64} : tensor<2x4x8x8xf32>
  %0 = op.softmax %x {axis = -1 : i64} : tensor<2x4x8x8xf32>
  // CHECK: %{{.*}} = op.softmax %y {axis = 0 : i64} : tensor<3x5xf16>
  %1 = op.softmax %y {axis = 0 : i64} : tensor<3x5xf16>
  func.return %0, %1 : tensor<2x4x8x8xf32>, tensor<3x5xf16>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>, %g2: tensor<8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  // CHECK: %{{.*}} = op.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.000000e-12 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %0 = op.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-12 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // Without a bias, normalizing the last two axes.
  // CHECK: %{{.*}} = op.layer_norm %x, %g2 {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
  %1 = op.layer_norm %x, %g2 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
  func.return %0, %1 : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<2x3x4x5xf32>, %i: tensor<4x6xi32>) -> (tensor<2x3x1x1xf32>, tensor<3x5xf32>, tensor<4xi32>) {
  // CHECK: %{{.*}} = op.reduce %x {kind = "mean", axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  %0 = op.reduce %x {kind = "mean", axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  // CHECK: %{{.*}} = op.reduce %x {kind = "sum", axes = array<i64: 0, -2>} : tensor<2x3x4x5xf32> -> tensor<3x5xf32>
  %1 = op.reduce %x {kind = "sum", axes = array<i64: 0, -2>} : tensor<2x3x4x5xf32> -> tensor<3x5xf32>
  // CHECK: %{{.*}} = op.reduce %i {kind = "max", axes = array<i64: 1>} : tensor<4x6xi32> -> tensor<4xi32>
  %2 = op.reduce %i {kind = "max", axes = array<i64: 1>} : tensor<4x6xi32> -> tensor<4xi32>
  func.return %0, %1, %2 : tensor<2x3x1x1xf32>, tensor<3x5xf32>, tensor<4xi32>
}
