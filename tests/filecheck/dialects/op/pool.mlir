// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.pool2d: max, avg, global_avg and global_max, in NHWC (the default) or NCHW.

// CHECK-LABEL: func.func @max_pool_nhwc
func.func @max_pool_nhwc(%x: tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32> {
  // CHECK: %{{.*}} = op.pool2d %x {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x16xf32> -> tensor<1x4x4x16xf32>
  %0 = op.pool2d %x {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x16xf32> -> tensor<1x4x4x16xf32>
  func.return %0 : tensor<1x4x4x16xf32>
}

// Defaults (NHWC, stride 1, no pads, no dilation) are elided.
// CHECK-LABEL: func.func @max_pool_explicit_defaults
func.func @max_pool_explicit_defaults(%x: tensor<1x8x8x16xi8>) -> tensor<1x7x7x16xi8> {
  // CHECK: %{{.*}} = op.pool2d %x {kind = "max", kernel_shape = array<i64: 2, 2>} : tensor<1x8x8x16xi8> -> tensor<1x7x7x16xi8>
  %0 = op.pool2d %x {kind = "max", kernel_shape = array<i64: 2, 2>, layout = "NHWC", strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x8x8x16xi8> -> tensor<1x7x7x16xi8>
  func.return %0 : tensor<1x7x7x16xi8>
}

// NCHW, dilated, ceil_mode: 9 with a 5-wide window, stride 2, rounds up to 3.
// CHECK-LABEL: func.func @max_pool_nchw
func.func @max_pool_nchw(%x: tensor<2x3x9x9xf32>) -> tensor<2x3x3x3xf32> {
  // CHECK: %{{.*}} = op.pool2d %x {kind = "max", layout = "NCHW", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, ceil_mode} : tensor<2x3x9x9xf32> -> tensor<2x3x3x3xf32>
  %0 = op.pool2d %x {kind = "max", layout = "NCHW", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, ceil_mode} : tensor<2x3x9x9xf32> -> tensor<2x3x3x3xf32>
  func.return %0 : tensor<2x3x3x3xf32>
}

// CHECK-LABEL: func.func @avg_pool
func.func @avg_pool(%x: tensor<1x7x7x8xf32>, %y: tensor<1x8x7x7xf16>) -> (tensor<1x4x4x8xf32>, tensor<1x8x1x1xf16>) {
  // CHECK: %{{.*}} = op.pool2d %x {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x7x7x8xf32> -> tensor<1x4x4x8xf32>
  %0 = op.pool2d %x {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x7x7x8xf32> -> tensor<1x4x4x8xf32>
  // ResNet-50's final 7x7 average pool, NCHW.
  // CHECK: %{{.*}} = op.pool2d %y {kind = "avg", layout = "NCHW", kernel_shape = array<i64: 7, 7>} : tensor<1x8x7x7xf16> -> tensor<1x8x1x1xf16>
  %1 = op.pool2d %y {kind = "avg", layout = "NCHW", kernel_shape = array<i64: 7, 7>} : tensor<1x8x7x7xf16> -> tensor<1x8x1x1xf16>
  func.return %0, %1 : tensor<1x4x4x8xf32>, tensor<1x8x1x1xf16>
}

// Global pools need no window.
// CHECK-LABEL: func.func @global_pools
func.func @global_pools(%x: tensor<2x7x7x64xf32>, %y: tensor<2x64x7x5xf32>) -> (tensor<2x1x1x64xf32>, tensor<2x64x1x1xf32>, tensor<2x1x1x64xf32>) {
  // CHECK: %{{.*}} = op.pool2d %x {kind = "global_avg"} : tensor<2x7x7x64xf32> -> tensor<2x1x1x64xf32>
  %0 = op.pool2d %x {kind = "global_avg"} : tensor<2x7x7x64xf32> -> tensor<2x1x1x64xf32>
  // CHECK: %{{.*}} = op.pool2d %y {kind = "global_avg", layout = "NCHW"} : tensor<2x64x7x5xf32> -> tensor<2x64x1x1xf32>
  %1 = op.pool2d %y {kind = "global_avg", layout = "NCHW"} : tensor<2x64x7x5xf32> -> tensor<2x64x1x1xf32>
  // CHECK: %{{.*}} = op.pool2d %x {kind = "global_max"} : tensor<2x7x7x64xf32> -> tensor<2x1x1x64xf32>
  %2 = op.pool2d %x {kind = "global_max"} : tensor<2x7x7x64xf32> -> tensor<2x1x1x64xf32>
  func.return %0, %1, %2 : tensor<2x1x1x64xf32>, tensor<2x64x1x1xf32>, tensor<2x1x1x64xf32>
}
