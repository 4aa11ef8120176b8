// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of the convs' and pools' layouts, one per input chunk.

func.func @conv2d_bad_layout(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op layout must be one of NCHW, NHWC, got 'NWHC'
  %0 = graph.conv2d %x, %w {layout = "NWHC"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_bad_filter_layout(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op filter_layout must be one of OIHW, OHWI, got 'HWIO'
  %0 = graph.conv2d %x, %w {filter_layout = "HWIO"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

// conv_transpose2d names its filter dims by its own input (I = C) and output (O = M/group) channels.
func.func @conv_transpose2d_conv_filter_layout(%x: tensor<1x4x4x16xf32>, %w: tensor<16x4x4x8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op filter_layout must be one of IOHW, IHWO, got 'OHWI'
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x4x4x16xf32>, tensor<16x4x4x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// -----

// NHWC reads the channels from the last dim: 3, but the OHWI weight holds 4.
func.func @conv2d_nhwc_weight_channels(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op weight has 4 input channels per group, expected 3 (= 3 / group 1)
  %0 = graph.conv2d %x, %w {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

// An OIHW weight read as OHWI: 16x3x3x8 holds 8 input channels, not 3.
func.func @conv2d_nhwc_filter_mismatch(%x: tensor<1x8x8x8xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op weight has 3 input channels per group, expected 8 (= 8 / group 1)
  %0 = graph.conv2d %x, %w {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

// An NHWC conv gives an NHWC result.
func.func @conv2d_nhwc_nchw_result(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op result type tensor<1x16x6x6xf32> does not match tensor<1x6x6x16xf32>, inferred from its operands and attributes
  %0 = graph.conv2d %x, %w {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_transpose2d_nhwc_channels(%x: tensor<1x4x4x16xf32>, %w: tensor<8x4x4x16xf32>) -> tensor<1x8x8x16xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op weight has 8 input channels, expected 16
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "IHWO"} : (tensor<1x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<1x8x8x16xf32>
  func.return %0 : tensor<1x8x8x16xf32>
}

// -----

func.func @max_pool2d_bad_layout(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op layout must be one of NCHW, NHWC, got 'nhwc'
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, layout = "nhwc"} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// -----

func.func @avg_pool2d_nhwc_rank(%x: tensor<8x8x4xf32>) -> tensor<4x4x4xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.avg_pool2d' op expects a 4-D NHWC input, got tensor<8x8x4xf32>
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<8x8x4xf32> -> tensor<4x4x4xf32>
  func.return %0 : tensor<4x4x4xf32>
}

// -----

// An NHWC pool windows H and W, the middle dims: 1x8x8x4 -> 1x4x4x4, not 1x8x4x2.
func.func @max_pool2d_nhwc_result(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x4x2xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op result type tensor<1x8x4x2xf32> does not match tensor<1x4x4x4xf32>, inferred from its operands and attributes
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x8x8x4xf32> -> tensor<1x8x4x2xf32>
  func.return %0 : tensor<1x8x4x2xf32>
}

// -----

func.func @global_avg_pool_nhwc_result(%x: tensor<1x7x7x64xf32>) -> tensor<1x7x1x1xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.global_avg_pool' op result type tensor<1x7x1x1xf32> does not match tensor<1x1x1x64xf32>, inferred from its operands and attributes
  %0 = graph.global_avg_pool %x {layout = "NHWC"} : tensor<1x7x7x64xf32> -> tensor<1x7x1x1xf32>
  func.return %0 : tensor<1x7x1x1xf32>
}

// -----

func.func @global_avg_pool_bad_layout(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
  // CHECK: layout_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.global_avg_pool' op layout must be one of NCHW, NHWC, got 'CHW'
  %0 = graph.global_avg_pool %x {layout = "CHW"} : tensor<1x64x7x7xf32> -> tensor<1x64x1x1xf32>
  func.return %0 : tensor<1x64x1x1xf32>
}
