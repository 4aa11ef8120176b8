// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Shape and data movement: reshape, expand, flatten, transpose, concat, split, slice,
// pad, resize, squeeze, unsqueeze, gather.

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<1x2048x1x1xf32>, %y: tensor<2x3x4xi64>, %z: tensor<1x1xf32>) -> (tensor<1x2048xf32>, tensor<4x6xi64>, tensor<f32>) {
  // CHECK: %{{.*}} = graph.reshape %{{.*}} : tensor<1x2048x1x1xf32> -> tensor<1x2048xf32>
  // CHECK-NEXT: %{{.*}} = graph.reshape %{{.*}} : tensor<2x3x4xi64> -> tensor<4x6xi64>
  // CHECK-NEXT: %{{.*}} = graph.reshape %{{.*}} : tensor<1x1xf32> -> tensor<f32>
  %0 = graph.reshape %x : tensor<1x2048x1x1xf32> -> tensor<1x2048xf32>
  %1 = graph.reshape %y : tensor<2x3x4xi64> -> tensor<4x6xi64>
  %2 = graph.reshape %z : tensor<1x1xf32> -> tensor<f32>
  func.return %0, %1, %2 : tensor<1x2048xf32>, tensor<4x6xi64>, tensor<f32>
}

// CHECK-LABEL: func.func @expand
func.func @expand(%x: tensor<3x1xf32>, %y: tensor<1xi64>) -> (tensor<2x3x4xf32>, tensor<4xi64>, tensor<3x1xf32>) {
  // CHECK: %{{.*}} = graph.expand %{{.*}} : tensor<3x1xf32> -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.expand %{{.*}} : tensor<1xi64> -> tensor<4xi64>
  // CHECK-NEXT: %{{.*}} = graph.expand %{{.*}} : tensor<3x1xf32> -> tensor<3x1xf32>
  %0 = graph.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %1 = graph.expand %y : tensor<1xi64> -> tensor<4xi64>
  %2 = graph.expand %x : tensor<3x1xf32> -> tensor<3x1xf32>
  func.return %0, %1, %2 : tensor<2x3x4xf32>, tensor<4xi64>, tensor<3x1xf32>
}

// The default axis (1) is elided; axis 0 and axis = rank put a 1 first / last.
// CHECK-LABEL: func.func @flatten
func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<2x12xf32>, tensor<1x24xf32>, tensor<24x1xf32>, tensor<6x4xf32>) {
  // CHECK: %{{.*}} = graph.flatten %{{.*}} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: %{{.*}} = graph.flatten %{{.*}} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: %{{.*}} = graph.flatten %{{.*}} {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<1x24xf32>
  // CHECK-NEXT: %{{.*}} = graph.flatten %{{.*}} {axis = 3 : i64} : tensor<2x3x4xf32> -> tensor<24x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.flatten %{{.*}} {axis = -1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = graph.flatten %x : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %1 = graph.flatten %x {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %2 = graph.flatten %x {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<1x24xf32>
  %3 = graph.flatten %x {axis = 3 : i64} : tensor<2x3x4xf32> -> tensor<24x1xf32>
  %4 = graph.flatten %x {axis = -1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  func.return %0, %1, %2, %3, %4 : tensor<2x12xf32>, tensor<2x12xf32>, tensor<1x24xf32>, tensor<24x1xf32>, tensor<6x4xf32>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x3x4x5xf32>, %y: tensor<2x7xi1>) -> (tensor<1x4x5x3xf32>, tensor<7x2xi1>) {
  // CHECK: %{{.*}} = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.transpose %{{.*}} {perm = array<i64: 1, 0>} : tensor<2x7xi1> -> tensor<7x2xi1>
  %0 = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  %1 = graph.transpose %y {perm = array<i64: 1, 0>} : tensor<2x7xi1> -> tensor<7x2xi1>
  func.return %0, %1 : tensor<1x4x5x3xf32>, tensor<7x2xi1>
}

// Three inputs along the channels, and along a negative axis.
// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<1x2x4x4xf32>, %b: tensor<1x3x4x4xf32>, %c: tensor<1x5x4x4xf32>, %d: tensor<2x3xi64>, %e: tensor<2x1xi64>) -> (tensor<1x10x4x4xf32>, tensor<2x4xi64>) {
  // CHECK: %{{.*}} = graph.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>) -> tensor<1x10x4x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.concat %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x4xi64>
  %0 = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>) -> tensor<1x10x4x4xf32>
  %1 = graph.concat %d, %e {axis = -1 : i64} : (tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x4xi64>
  func.return %0, %1 : tensor<1x10x4x4xf32>, tensor<2x4xi64>
}

// CHECK-LABEL: func.func @concat_single
func.func @concat_single(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: %{{.*}} = graph.concat %{{.*}} {axis = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %0 = graph.concat %a {axis = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// Three results, of unequal sizes.
// CHECK-LABEL: func.func @split_three
func.func @split_three(%x: tensor<2x12x5xf32>) -> (tensor<2x2x5xf32>, tensor<2x4x5xf32>, tensor<2x6x5xf32>) {
  // CHECK: %[[A:.*]], %[[B:.*]], %[[C:.*]] = graph.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 2, 4, 6>} : tensor<2x12x5xf32> -> tensor<2x2x5xf32>, tensor<2x4x5xf32>, tensor<2x6x5xf32>
  // CHECK-NEXT: func.return %[[A]], %[[B]], %[[C]] : tensor<2x2x5xf32>, tensor<2x4x5xf32>, tensor<2x6x5xf32>
  %0:3 = graph.split %x {axis = 1 : i64, sizes = array<i64: 2, 4, 6>} : tensor<2x12x5xf32> -> tensor<2x2x5xf32>, tensor<2x4x5xf32>, tensor<2x6x5xf32>
  func.return %0#0, %0#1, %0#2 : tensor<2x2x5xf32>, tensor<2x4x5xf32>, tensor<2x6x5xf32>
}

// The default axis (0) is elided; the results can be used one by one.
// CHECK-LABEL: func.func @split_default_axis
func.func @split_default_axis(%x: tensor<6x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  // CHECK: %[[A:.*]], %[[B:.*]] = graph.split %{{.*}} {sizes = array<i64: 3, 3>} : tensor<6x3xf32> -> tensor<3x3xf32>, tensor<3x3xf32>
  // CHECK-NEXT: func.return %[[B]], %[[A]] : tensor<3x3xf32>, tensor<3x3xf32>
  %0:2 = graph.split %x {axis = 0 : i64, sizes = array<i64: 3, 3>} : tensor<6x3xf32> -> tensor<3x3xf32>, tensor<3x3xf32>
  func.return %0#1, %0#0 : tensor<3x3xf32>, tensor<3x3xf32>
}

// CHECK-LABEL: func.func @split_negative_axis
func.func @split_negative_axis(%x: tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x5xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = graph.split %{{.*}} {axis = -1 : i64, sizes = array<i64: 3, 5>} : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x5xf32>
  %0:2 = graph.split %x {axis = -1 : i64, sizes = array<i64: 3, 5>} : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x5xf32>
  func.return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x10xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: 1, 2>, ends = array<i64: 3, 9>, axes = array<i64: 0, 1>, steps = array<i64: 1, 2>} : tensor<4x10xf32> -> tensor<2x4xf32>
  %0 = graph.slice %x {starts = array<i64: 1, 2>, ends = array<i64: 3, 9>, axes = array<i64: 0, 1>, steps = array<i64: 1, 2>} : tensor<4x10xf32> -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// Negative steps walk backwards: the whole axis reversed (ends = INT64_MIN), and 8, 6, 4.
// CHECK-LABEL: func.func @slice_negative_steps
func.func @slice_negative_steps(%x: tensor<10xf32>) -> (tensor<10xf32>, tensor<3xf32>, tensor<4xf32>) {
  // CHECK: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 0>, steps = array<i64: -1>} : tensor<10xf32> -> tensor<10xf32>
  // CHECK-NEXT: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: 8>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: -2>} : tensor<10xf32> -> tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: 100>, ends = array<i64: -100>, axes = array<i64: -1>, steps = array<i64: -3>} : tensor<10xf32> -> tensor<4xf32>
  %0 = graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 0>, steps = array<i64: -1>} : tensor<10xf32> -> tensor<10xf32>
  %1 = graph.slice %x {starts = array<i64: 8>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: -2>} : tensor<10xf32> -> tensor<3xf32>
  %2 = graph.slice %x {starts = array<i64: 100>, ends = array<i64: -100>, axes = array<i64: -1>, steps = array<i64: -3>} : tensor<10xf32> -> tensor<4xf32>
  func.return %0, %1, %2 : tensor<10xf32>, tensor<3xf32>, tensor<4xf32>
}

// Out-of-range ends clamp (INT64_MAX means "to the end"), negative starts count from
// the end, axes may come in any order and leave other axes whole, an empty range gives 0.
// CHECK-LABEL: func.func @slice_clamp
func.func @slice_clamp(%x: tensor<2x5x7xf32>) -> (tensor<2x2x7xf32>, tensor<2x5x0xf32>) {
  // CHECK: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: -2>, ends = array<i64: 9223372036854775807>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x5x7xf32> -> tensor<2x2x7xf32>
  // CHECK-NEXT: %{{.*}} = graph.slice %{{.*}} {starts = array<i64: 5, 0>, ends = array<i64: 3, 100>, axes = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<2x5x7xf32> -> tensor<2x5x0xf32>
  %0 = graph.slice %x {starts = array<i64: -2>, ends = array<i64: 9223372036854775807>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x5x7xf32> -> tensor<2x2x7xf32>
  %1 = graph.slice %x {starts = array<i64: 5, 0>, ends = array<i64: 3, 100>, axes = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<2x5x7xf32> -> tensor<2x5x0xf32>
  func.return %0, %1 : tensor<2x2x7xf32>, tensor<2x5x0xf32>
}

// Constant mode and value 0.0 are the defaults and are elided; pads are all begins, then all ends.
// CHECK-LABEL: func.func @pad_constant
func.func @pad_constant(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x6x8xf32>, tensor<1x3x6x8xf32>) {
  // CHECK: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 2>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 0, 0, 0, 0, 0, 0, 2, 4>, value = -1.000000e+00 : f64} : tensor<1x3x4x4xf32> -> tensor<1x3x6x8xf32>
  %0 = graph.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 2>, mode = "constant", value = 0.0 : f64} : tensor<1x3x4x4xf32> -> tensor<1x3x6x8xf32>
  %1 = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 2, 4>, value = -1.0 : f64} : tensor<1x3x4x4xf32> -> tensor<1x3x6x8xf32>
  func.return %0, %1 : tensor<1x3x6x8xf32>, tensor<1x3x6x8xf32>
}

// CHECK-LABEL: func.func @pad_edge
func.func @pad_edge(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // CHECK: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 1, 1, 1, 2>, mode = "edge"} : tensor<2x3xf32> -> tensor<4x6xf32>
  %0 = graph.pad %x {pads = array<i64: 1, 1, 1, 2>, mode = "edge"} : tensor<2x3xf32> -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// Reflect pads must be smaller than the axis: 2 < 3 and 1 < 3 here.
// CHECK-LABEL: func.func @pad_reflect
func.func @pad_reflect(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x6x5xf32> {
  // CHECK: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 0, 0, 2, 1, 0, 0, 1, 1>, mode = "reflect"} : tensor<1x1x3x3xf32> -> tensor<1x1x6x5xf32>
  %0 = graph.pad %x {pads = array<i64: 0, 0, 2, 1, 0, 0, 1, 1>, mode = "reflect"} : tensor<1x1x3x3xf32> -> tensor<1x1x6x5xf32>
  func.return %0 : tensor<1x1x6x5xf32>
}

// Negative pads crop; pad also takes integers.
// CHECK-LABEL: func.func @pad_negative
func.func @pad_negative(%x: tensor<5x5xi64>) -> tensor<3x6xi64> {
  // CHECK: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: -1, 2, -1, -1>, value = 7.000000e+00 : f64} : tensor<5x5xi64> -> tensor<3x6xi64>
  %0 = graph.pad %x {pads = array<i64: -1, 2, -1, -1>, value = 7.0 : f64} : tensor<5x5xi64> -> tensor<3x6xi64>
  func.return %0 : tensor<3x6xi64>
}

// Wrap pads as if the axis were a ring; pads larger than the axis go round it more than once.
// CHECK-LABEL: func.func @pad_wrap
func.func @pad_wrap(%x: tensor<2x3xf32>, %y: tensor<1x2x3x3xi32>) -> (tensor<9x5xf32>, tensor<1x2x7x5xi32>) {
  // CHECK: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 3, 0, 4, 2>, mode = "wrap"} : tensor<2x3xf32> -> tensor<9x5xf32>
  // CHECK-NEXT: %{{.*}} = graph.pad %{{.*}} {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>, mode = "wrap"} : tensor<1x2x3x3xi32> -> tensor<1x2x7x5xi32>
  %0 = graph.pad %x {pads = array<i64: 3, 0, 4, 2>, mode = "wrap"} : tensor<2x3xf32> -> tensor<9x5xf32>
  %1 = graph.pad %y {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>, mode = "wrap"} : tensor<1x2x3x3xi32> -> tensor<1x2x7x5xi32>
  func.return %0, %1 : tensor<9x5xf32>, tensor<1x2x7x5xi32>
}

// Nearest with its defaults (half_pixel, round_prefer_floor): only the scales are printed.
// CHECK-LABEL: func.func @resize_nearest
func.func @resize_nearest(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0, %1 : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
}

// The other nearest rounding modes and coordinate transformations (the YOLO upsample is
// nearest / asymmetric / floor).
// CHECK-LABEL: func.func @resize_nearest_modes
func.func @resize_nearest_modes(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "align_corners", nearest_mode = "ceil"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, nearest_mode = "round_prefer_ceil"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "align_corners", nearest_mode = "ceil"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  %2 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, nearest_mode = "round_prefer_ceil"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  func.return %0, %1, %2 : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// CHECK-LABEL: func.func @resize_linear
func.func @resize_linear(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "linear"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0, %1 : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
}

// Downscaling, and a scale whose product is not whole (5 * 1.5 = 7.5 gives 7).
// CHECK-LABEL: func.func @resize_fractional
func.func @resize_fractional(%x: tensor<1x1x8x5xf16>) -> tensor<1x1x4x7xf16> {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, 1.500000e+00>, mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x1x8x5xf16> -> tensor<1x1x4x7xf16>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 0.5, 1.5>, mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x1x8x5xf16> -> tensor<1x1x4x7xf16>
  func.return %0 : tensor<1x1x4x7xf16>
}

// Cubic: the default cubic_coeff_a (-0.75) is elided, another one is printed;
// exclude_outside is a unit attribute.
// CHECK-LABEL: func.func @resize_cubic
func.func @resize_cubic(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x2x6xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "cubic"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, 1.500000e+00>, mode = "cubic", coordinate_transformation_mode = "align_corners", exclude_outside} : tensor<1x3x4x4xf32> -> tensor<1x3x2x6xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "cubic", cubic_coeff_a = -0.75 : f32} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "cubic", cubic_coeff_a = -0.5 : f32, exclude_outside} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %2 = graph.resize %x {scales = array<f64: 1.0, 1.0, 0.5, 1.5>, mode = "cubic", coordinate_transformation_mode = "align_corners", exclude_outside} : tensor<1x3x4x4xf32> -> tensor<1x3x2x6xf32>
  func.return %0, %1, %2 : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x2x6xf32>
}

// half_pixel_symmetric, where the product is not whole (5 * 1.5 = 7.5 gives 7).
// CHECK-LABEL: func.func @resize_half_pixel_symmetric
func.func @resize_half_pixel_symmetric(%x: tensor<1x2x5x4xf32>) -> (tensor<1x2x7x2xf32>, tensor<1x2x7x2xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 1.500000e+00, 5.000000e-01>, coordinate_transformation_mode = "half_pixel_symmetric"} : tensor<1x2x5x4xf32> -> tensor<1x2x7x2xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 1.500000e+00, 5.000000e-01>, mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric"} : tensor<1x2x5x4xf32> -> tensor<1x2x7x2xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 1.5, 0.5>, coordinate_transformation_mode = "half_pixel_symmetric"} : tensor<1x2x5x4xf32> -> tensor<1x2x7x2xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 1.5, 0.5>, mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric"} : tensor<1x2x5x4xf32> -> tensor<1x2x7x2xf32>
  func.return %0, %1 : tensor<1x2x7x2xf32>, tensor<1x2x7x2xf32>
}

// tf_crop_and_resize samples the roi (all starts, then all ends) at any output size; the
// default extrapolation_value (0.0) is elided, another one is printed.
// CHECK-LABEL: func.func @resize_tf_crop_and_resize
func.func @resize_tf_crop_and_resize(%x: tensor<1x3x4x5xf32>) -> (tensor<1x3x3x7xf32>, tensor<1x3x1x4xf32>) {
  // CHECK: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 7.500000e-01, 1.400000e+00>, mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.000000e+00, 0.000000e+00, 2.500000e-01, -5.000000e-01, 1.000000e+00, 1.000000e+00, 7.500000e-01, 1.500000e+00>, extrapolation_value = -1.000000e+00 : f32} : tensor<1x3x4x5xf32> -> tensor<1x3x3x7xf32>
  // CHECK-NEXT: %{{.*}} = graph.resize %{{.*}} {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.500000e-01, 8.000000e-01>, mode = "cubic", coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.000000e+00, 0.000000e+00, 4.000000e-01, 9.000000e-01, 1.000000e+00, 1.000000e+00, 6.000000e-01, 1.000000e-01>} : tensor<1x3x4x5xf32> -> tensor<1x3x1x4xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 0.75, 1.4>, mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 0.25, -0.5, 1.0, 1.0, 0.75, 1.5>, extrapolation_value = -1.0 : f32} : tensor<1x3x4x5xf32> -> tensor<1x3x3x7xf32>
  %1 = graph.resize %x {scales = array<f64: 1.0, 1.0, 0.25, 0.8>, mode = "cubic", coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 0.4, 0.9, 1.0, 1.0, 0.6, 0.1>, extrapolation_value = 0.0 : f32} : tensor<1x3x4x5xf32> -> tensor<1x3x1x4xf32>
  func.return %0, %1 : tensor<1x3x3x7xf32>, tensor<1x3x1x4xf32>
}

// CHECK-LABEL: func.func @squeeze
func.func @squeeze(%x: tensor<1x2048x1x1xf32>, %y: tensor<3x1xi64>) -> (tensor<1x2048xf32>, tensor<3xi64>) {
  // CHECK: %{{.*}} = graph.squeeze %{{.*}} {axes = array<i64: 2, 3>} : tensor<1x2048x1x1xf32> -> tensor<1x2048xf32>
  // CHECK-NEXT: %{{.*}} = graph.squeeze %{{.*}} {axes = array<i64: -1>} : tensor<3x1xi64> -> tensor<3xi64>
  %0 = graph.squeeze %x {axes = array<i64: 2, 3>} : tensor<1x2048x1x1xf32> -> tensor<1x2048xf32>
  %1 = graph.squeeze %y {axes = array<i64: -1>} : tensor<3x1xi64> -> tensor<3xi64>
  func.return %0, %1 : tensor<1x2048xf32>, tensor<3xi64>
}

// Unsqueeze axes index the result: 3x4 with axes 1, -1 gives 3x1x4x1.
// CHECK-LABEL: func.func @unsqueeze
func.func @unsqueeze(%x: tensor<3x4xf32>, %s: tensor<i64>) -> (tensor<1x3x4xf32>, tensor<3x1x4x1xf32>, tensor<1xi64>) {
  // CHECK: %{{.*}} = graph.unsqueeze %{{.*}} {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<1x3x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.unsqueeze %{{.*}} {axes = array<i64: 1, -1>} : tensor<3x4xf32> -> tensor<3x1x4x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.unsqueeze %{{.*}} {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %0 = graph.unsqueeze %x {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<1x3x4xf32>
  %1 = graph.unsqueeze %x {axes = array<i64: 1, -1>} : tensor<3x4xf32> -> tensor<3x1x4x1xf32>
  %2 = graph.unsqueeze %s {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  func.return %0, %1, %2 : tensor<1x3x4xf32>, tensor<3x1x4x1xf32>, tensor<1xi64>
}

// An embedding lookup: i64 indices, the default axis 0 (elided).
// CHECK-LABEL: func.func @gather_embedding
func.func @gather_embedding(%table: tensor<1000x64xf32>, %ids: tensor<2x8xi64>) -> tensor<2x8x64xf32> {
  // CHECK: %{{.*}} = graph.gather %{{.*}}, %{{.*}} : (tensor<1000x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
  %0 = graph.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
  func.return %0 : tensor<2x8x64xf32>
}

// i32 indices along axis 1; rank-0 indices drop the axis (negative axis too).
// CHECK-LABEL: func.func @gather_axis
func.func @gather_axis(%x: tensor<2x5x3xf32>, %i: tensor<4xi32>, %s: tensor<i64>) -> (tensor<2x4x3xf32>, tensor<2x5xf32>) {
  // CHECK: %{{.*}} = graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<4xi32>) -> tensor<2x4x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x5x3xf32>, tensor<i64>) -> tensor<2x5xf32>
  %0 = graph.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<4xi32>) -> tensor<2x4x3xf32>
  %1 = graph.gather %x, %s {axis = -1 : i64} : (tensor<2x5x3xf32>, tensor<i64>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x4x3xf32>, tensor<2x5xf32>
}
