// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// The convs' and pools' `layout` ("NCHW", the default, or "NHWC") and the convs'
// `filter_layout` (conv2d: "OIHW" or "OHWI"; conv_transpose2d: "IOHW" or "IHWO").
// In NHWC, pads, strides, dilations and kernel_shape keep their (H, W) meaning.

// NHWC with an OHWI (M x kH x kW x C/group) filter: 1x8x8x3 -> 1x8x8x16.
// CHECK-LABEL: func.func @conv2d_nhwc
func.func @conv2d_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %0 = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  func.return %0 : tensor<1x8x8x16xf32>
}

// Strides stay (H, W): H = (9-3)/2+1 = 4, W = (10-3)/3+1 = 3.
// CHECK-LABEL: func.func @conv2d_nhwc_strided
func.func @conv2d_nhwc_strided(%x: tensor<2x9x10x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x3x4xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 3>, layout = "NHWC", filter_layout = "OHWI"} : (tensor<2x9x10x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x4xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 3>, layout = "NHWC", filter_layout = "OHWI"} : (tensor<2x9x10x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x4xf32>
  func.return %0 : tensor<2x4x3x4xf32>
}

// The two are independent: NHWC data with an OIHW filter (4x2x3x1: a 3x1 kernel) ...
// CHECK-LABEL: func.func @conv2d_nhwc_oihw
func.func @conv2d_nhwc_oihw(%x: tensor<1x6x6x2xf32>, %w: tensor<4x2x3x1xf32>) -> tensor<1x4x6x4xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {layout = "NHWC"} : (tensor<1x6x6x2xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x6x4xf32>
  %0 = graph.conv2d %x, %w {layout = "NHWC"} : (tensor<1x6x6x2xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x6x4xf32>
  func.return %0 : tensor<1x4x6x4xf32>
}

// ... and NCHW data with an OHWI filter (4x3x1x2: a 3x1 kernel over 2 channels).
// CHECK-LABEL: func.func @conv2d_nchw_ohwi
func.func @conv2d_nchw_ohwi(%x: tensor<1x2x6x6xf32>, %w: tensor<4x3x1x2xf32>) -> tensor<1x4x4x6xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {filter_layout = "OHWI"} : (tensor<1x2x6x6xf32>, tensor<4x3x1x2xf32>) -> tensor<1x4x4x6xf32>
  %0 = graph.conv2d %x, %w {filter_layout = "OHWI"} : (tensor<1x2x6x6xf32>, tensor<4x3x1x2xf32>) -> tensor<1x4x4x6xf32>
  func.return %0 : tensor<1x4x4x6xf32>
}

// Depthwise in NHWC: the OHWI filter is M x kH x kW x 1.
// CHECK-LABEL: func.func @conv2d_nhwc_depthwise
func.func @conv2d_nhwc_depthwise(%x: tensor<1x16x16x32xf16>, %w: tensor<32x3x3x1xf16>) -> tensor<1x16x16x32xf16> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, group = 32 : i64, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>) -> tensor<1x16x16x32xf16>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, group = 32 : i64, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>) -> tensor<1x16x16x32xf16>
  func.return %0 : tensor<1x16x16x32xf16>
}

// The defaults, NCHW and OIHW, are not printed.
// CHECK-LABEL: func.func @conv2d_explicit_default_layouts
func.func @conv2d_explicit_default_layouts(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  // CHECK-NOT: layout
  // CHECK: func.return
  %0 = graph.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// conv_transpose2d in NHWC with an IHWO (C x kH x kW x M/group) filter: 4x4 -> 8x8.
// CHECK-LABEL: func.func @conv_transpose2d_nhwc
func.func @conv_transpose2d_nhwc(%x: tensor<1x4x4x16xf32>, %w: tensor<16x4x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "IHWO"} : (tensor<1x4x4x16xf32>, tensor<16x4x4x8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "IHWO"} : (tensor<1x4x4x16xf32>, tensor<16x4x4x8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// Grouped: (M/group) * group = 2 * 2 output channels.
// CHECK-LABEL: func.func @conv_transpose2d_nhwc_grouped
func.func @conv_transpose2d_nhwc_grouped(%x: tensor<1x5x5x4xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<1x7x7x4xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} {group = 2 : i64, layout = "NHWC", filter_layout = "IHWO"} : (tensor<1x5x5x4xf32>, tensor<4x3x3x2xf32>) -> tensor<1x7x7x4xf32>
  %0 = graph.conv_transpose2d %x, %w {group = 2 : i64, layout = "NHWC", filter_layout = "IHWO"} : (tensor<1x5x5x4xf32>, tensor<4x3x3x2xf32>) -> tensor<1x7x7x4xf32>
  func.return %0 : tensor<1x7x7x4xf32>
}

// conv_transpose2d's default filter layout is IOHW (ONNX's C x M/group x kH x kW).
// CHECK-LABEL: func.func @conv_transpose2d_explicit_default_layouts
func.func @conv_transpose2d_explicit_default_layouts(%x: tensor<1x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  // CHECK-NOT: layout
  // CHECK: func.return
  %0 = graph.conv_transpose2d %x, %w {layout = "NCHW", filter_layout = "IOHW"} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}

// Pools in NHWC: ceil_mode gives a 4th window, 7 -> 4.
// CHECK-LABEL: func.func @max_pool2d_nhwc
func.func @max_pool2d_nhwc(%x: tensor<1x7x7x3xf32>) -> tensor<1x4x4x3xf32> {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode, layout = "NHWC"} : tensor<1x7x7x3xf32> -> tensor<1x4x4x3xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode, layout = "NHWC"} : tensor<1x7x7x3xf32> -> tensor<1x4x4x3xf32>
  func.return %0 : tensor<1x4x4x3xf32>
}

// CHECK-LABEL: func.func @avg_pool2d_nhwc
func.func @avg_pool2d_nhwc(%x: tensor<1x8x9x5xf32>) -> tensor<1x8x9x5xf32> {
  // CHECK: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad, layout = "NHWC"} : tensor<1x8x9x5xf32> -> tensor<1x8x9x5xf32>
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad, layout = "NHWC"} : tensor<1x8x9x5xf32> -> tensor<1x8x9x5xf32>
  func.return %0 : tensor<1x8x9x5xf32>
}

// global_avg_pool in NHWC keeps the channels last, at any rank.
// CHECK-LABEL: func.func @global_avg_pool_nhwc
func.func @global_avg_pool_nhwc(%x: tensor<1x7x7x2048xf32>, %y: tensor<2x10x4xf32>, %z: tensor<1x3x4x5x2xf16>) -> (tensor<1x1x1x2048xf32>, tensor<2x1x4xf32>, tensor<1x1x1x1x2xf16>) {
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} {layout = "NHWC"} : tensor<1x7x7x2048xf32> -> tensor<1x1x1x2048xf32>
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} {layout = "NHWC"} : tensor<2x10x4xf32> -> tensor<2x1x4xf32>
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} {layout = "NHWC"} : tensor<1x3x4x5x2xf16> -> tensor<1x1x1x1x2xf16>
  %0 = graph.global_avg_pool %x {layout = "NHWC"} : tensor<1x7x7x2048xf32> -> tensor<1x1x1x2048xf32>
  %1 = graph.global_avg_pool %y {layout = "NHWC"} : tensor<2x10x4xf32> -> tensor<2x1x4xf32>
  %2 = graph.global_avg_pool %z {layout = "NHWC"} : tensor<1x3x4x5x2xf16> -> tensor<1x1x1x1x2xf16>
  func.return %0, %1, %2 : tensor<1x1x1x2048xf32>, tensor<2x1x4xf32>, tensor<1x1x1x1x2xf16>
}

// CHECK-LABEL: func.func @pools_explicit_default_layout
func.func @pools_explicit_default_layout(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x7x7xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) {
  // CHECK: %{{.*}} = graph.max_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  // CHECK: %{{.*}} = graph.avg_pool2d %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK: %{{.*}} = graph.global_avg_pool %{{.*}} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  // CHECK-NOT: layout
  // CHECK: func.return
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, layout = "NCHW"} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  %1 = graph.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW"} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %2 = graph.global_avg_pool %x {layout = "NCHW"} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  func.return %0, %1, %2 : tensor<1x4x7x7xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>
}
