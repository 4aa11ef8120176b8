// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Data movement: resize, gather, layout_transform, reshape, pad, concat, slice.

// Resize on physical axes: an NHWC image doubles H and W.
// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x4x4x8xf32>, %y: tensor<1x8x4x4xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) {
  // CHECK: %{{.*}} = op.resize %x {scales = array<f64: 1.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00>, mode = "linear"} : tensor<1x4x4x8xf32> -> tensor<1x8x8x8xf32>
  %0 = op.resize %x {scales = array<f64: 1.0, 2.0, 2.0, 1.0>, mode = "linear", coordinate_transformation_mode = "half_pixel"} : tensor<1x4x4x8xf32> -> tensor<1x8x8x8xf32>
  // CHECK: %{{.*}} = op.resize %y {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  %1 = op.resize %y {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
  func.return %0, %1 : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%table: tensor<50x32xf32>, %ids: tensor<2x8xi64>, %x: tensor<2x8x32xf32>, %i: tensor<i64>) -> (tensor<2x8x32xf32>, tensor<2x32xf32>) {
  // CHECK: %{{.*}} = op.gather %table, %ids {axis = 0 : i64} : (tensor<50x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
  %0 = op.gather %table, %ids {axis = 0 : i64} : (tensor<50x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
  // A scalar index removes the axis: BERT's pooler picks the first token.
  // CHECK: %{{.*}} = op.gather %x, %i {axis = 1 : i64} : (tensor<2x8x32xf32>, tensor<i64>) -> tensor<2x32xf32>
  %1 = op.gather %x, %i {axis = 1 : i64} : (tensor<2x8x32xf32>, tensor<i64>) -> tensor<2x32xf32>
  func.return %0, %1 : tensor<2x8x32xf32>, tensor<2x32xf32>
}

// CHECK-LABEL: func.func @layout_transform
func.func @layout_transform(%x: tensor<1x3x8x6xf32>, %w: tensor<16x3x3x3xf16>) -> (tensor<1x8x6x3xf32>, tensor<16x3x3x3xf16>) {
  // NCHW -> NHWC
  // CHECK: %{{.*}} = op.layout_transform %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x6xf32> -> tensor<1x8x6x3xf32>
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x6xf32> -> tensor<1x8x6x3xf32>
  // OIHW -> OHWI
  // CHECK: %{{.*}} = op.layout_transform %w {perm = array<i64: 0, 2, 3, 1>} : tensor<16x3x3x3xf16> -> tensor<16x3x3x3xf16>
  %1 = op.layout_transform %w {perm = array<i64: 0, 2, 3, 1>} : tensor<16x3x3x3xf16> -> tensor<16x3x3x3xf16>
  func.return %0, %1 : tensor<1x8x6x3xf32>, tensor<16x3x3x3xf16>
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x64x1x1xf32>, %y: tensor<1xi64>) -> (tensor<2x64xf32>, tensor<i64>) {
  // CHECK: %{{.*}} = op.reshape %x : tensor<2x64x1x1xf32> -> tensor<2x64xf32>
  %0 = op.reshape %x : tensor<2x64x1x1xf32> -> tensor<2x64xf32>
  // CHECK: %{{.*}} = op.reshape %y : tensor<1xi64> -> tensor<i64>
  %1 = op.reshape %y : tensor<1xi64> -> tensor<i64>
  func.return %0, %1 : tensor<2x64xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<1x4x4x3xf32>, %y: tensor<2x5xf32>) -> (tensor<1x6x6x3xf32>, tensor<4x5xf32>, tensor<2x8xf32>) {
  // The default mode and value are elided.
  // CHECK: %{{.*}} = op.pad %x {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>} : tensor<1x4x4x3xf32> -> tensor<1x6x6x3xf32>
  %0 = op.pad %x {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, mode = "constant", value = 0.0 : f64} : tensor<1x4x4x3xf32> -> tensor<1x6x6x3xf32>
  // CHECK: %{{.*}} = op.pad %y {pads = array<i64: 1, 0, 1, 0>, mode = "reflect"} : tensor<2x5xf32> -> tensor<4x5xf32>
  %1 = op.pad %y {pads = array<i64: 1, 0, 1, 0>, mode = "reflect"} : tensor<2x5xf32> -> tensor<4x5xf32>
  // CHECK: %{{.*}} = op.pad %y {pads = array<i64: 0, 1, 0, 2>, value = -1.500000e+00 : f64} : tensor<2x5xf32> -> tensor<2x8xf32>
  %2 = op.pad %y {pads = array<i64: 0, 1, 0, 2>, value = -1.5 : f64} : tensor<2x5xf32> -> tensor<2x8xf32>
  func.return %0, %1, %2 : tensor<1x6x6x3xf32>, tensor<4x5xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<1x8x8x16xf32>, %b: tensor<1x8x8x8xf32>, %c: tensor<1x8x8x8xf32>) -> tensor<1x8x8x32xf32> {
  // CHECK: %{{.*}} = op.concat %a, %b, %c {axis = -1 : i64} : (tensor<1x8x8x16xf32>, tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x32xf32>
  %0 = op.concat %a, %b, %c {axis = -1 : i64} : (tensor<1x8x8x16xf32>, tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x32xf32>
  func.return %0 : tensor<1x8x8x32xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<2x96x8xf32>) -> (tensor<2x32x8xf32>, tensor<2x48x4xf32>) {
  // CHECK: %{{.*}} = op.slice %x {starts = array<i64: 32>, ends = array<i64: 64>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x96x8xf32> -> tensor<2x32x8xf32>
  %0 = op.slice %x {starts = array<i64: 32>, ends = array<i64: 64>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x96x8xf32> -> tensor<2x32x8xf32>
  // Negative steps walk backwards; ends past the dimension clamp.
  // CHECK: %{{.*}} = op.slice %x {starts = array<i64: -1, 0>, ends = array<i64: -1000, 100>, axes = array<i64: 1, 2>, steps = array<i64: -2, 2>} : tensor<2x96x8xf32> -> tensor<2x48x4xf32>
  %1 = op.slice %x {starts = array<i64: -1, 0>, ends = array<i64: -1000, 100>, axes = array<i64: 1, 2>, steps = array<i64: -2, 2>} : tensor<2x96x8xf32> -> tensor<2x48x4xf32>
  func.return %0, %1 : tensor<2x32x8xf32>, tensor<2x48x4xf32>
}
