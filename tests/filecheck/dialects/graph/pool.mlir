// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// max_pool2d, avg_pool2d (ONNX MaxPool / AveragePool, NCHW) and global_avg_pool.

// CHECK-LABEL: func.func @max_pool2d_kernel_only
func.func @max_pool2d_kernel_only(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// Explicit defaults (strides 1, zero pads, dilations 1) are elided; kernel_shape is required and stays.
// CHECK-LABEL: func.func @max_pool2d_explicit_defaults
func.func @max_pool2d_explicit_defaults(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// ResNet's stem pool: 3x3, stride 2, pad 1: 112 -> 56.
// CHECK-LABEL: func.func @max_pool2d_strides_pads
func.func @max_pool2d_strides_pads(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  func.return %0 : tensor<1x64x56x56xf32>
}

// ceil_mode keeps the partial last window: 5 -> 3 instead of 2.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode
func.func @max_pool2d_ceil_mode(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x1x5x5xf32> -> tensor<1x1x2x2xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  %1 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x1x5x5xf32> -> tensor<1x1x2x2xf32>
  func.return %0, %1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
}

// With ceil_mode, a window that would start in the right padding is dropped: 3 (pad 1+1) -> 2.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode_last_window
func.func @max_pool2d_ceil_mode_last_window(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<1x1x3x3xf32> -> tensor<1x1x2x2xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<1x1x3x3xf32> -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}

// Dilation 2 makes a 3x3 kernel span 5: 7 -> 3. Non-square kernel and strides.
// CHECK-LABEL: func.func @max_pool2d_dilations
func.func @max_pool2d_dilations(%x: tensor<1x2x7x7xf16>) -> (tensor<1x2x3x3xf16>, tensor<1x2x6x2xf16>) {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 2>} : tensor<1x2x7x7xf16> -> tensor<1x2x3x3xf16>
  // CHECK-NEXT: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 3>, strides = array<i64: 1, 3>} : tensor<1x2x7x7xf16> -> tensor<1x2x6x2xf16>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 2>} : tensor<1x2x7x7xf16> -> tensor<1x2x3x3xf16>
  %1 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 3>, strides = array<i64: 1, 3>} : tensor<1x2x7x7xf16> -> tensor<1x2x6x2xf16>
  func.return %0, %1 : tensor<1x2x3x3xf16>, tensor<1x2x6x2xf16>
}

// CHECK-LABEL: func.func @avg_pool2d
func.func @avg_pool2d(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  // CHECK-NOT: count_include_pad
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @avg_pool2d_count_include_pad
func.func @avg_pool2d_count_include_pad(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// 7 with kernel 3, stride 2, pad 0+1: floor gives 3, ceil gives 4.
// CHECK-LABEL: func.func @avg_pool2d_ceil_mode
func.func @avg_pool2d_ceil_mode(%x: tensor<2x3x7x7xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>) {
  // CHECK: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, ceil_mode, count_include_pad} : tensor<2x3x7x7xf32> -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : tensor<2x3x7x7xf32> -> tensor<2x3x3x3xf32>
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, ceil_mode, count_include_pad} : tensor<2x3x7x7xf32> -> tensor<2x3x4x4xf32>
  %1 = graph.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : tensor<2x3x7x7xf32> -> tensor<2x3x3x3xf32>
  func.return %0, %1 : tensor<2x3x4x4xf32>, tensor<2x3x3x3xf32>
}

// CHECK-LABEL: func.func @global_avg_pool
func.func @global_avg_pool(%x: tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32> {
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} : tensor<1x2048x7x7xf32> -> tensor<1x2048x1x1xf32>
  %0 = graph.global_avg_pool %x : tensor<1x2048x7x7xf32> -> tensor<1x2048x1x1xf32>
  func.return %0 : tensor<1x2048x1x1xf32>
}

// Any number of spatial axes: 1-D and 3-D.
// CHECK-LABEL: func.func @global_avg_pool_ranks
func.func @global_avg_pool_ranks(%x: tensor<2x4x10xf32>, %y: tensor<1x2x3x4x5xf16>) -> (tensor<2x4x1xf32>, tensor<1x2x1x1x1xf16>) {
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} : tensor<2x4x10xf32> -> tensor<2x4x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.global_avg_pool %{{.*}} : tensor<1x2x3x4x5xf16> -> tensor<1x2x1x1x1xf16>
  %0 = graph.global_avg_pool %x : tensor<2x4x10xf32> -> tensor<2x4x1xf32>
  %1 = graph.global_avg_pool %y : tensor<1x2x3x4x5xf16> -> tensor<1x2x1x1x1xf16>
  func.return %0, %1 : tensor<2x4x1xf32>, tensor<1x2x1x1x1xf16>
}
