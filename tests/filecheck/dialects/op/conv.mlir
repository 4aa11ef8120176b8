// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.conv2d (NHWC activations with OHWI filters by default, or NCHW with OIHW) and
// op.conv_transpose2d (IHWO or IOHW filters), with their fused epilogues.

// CHECK-LABEL: func.func @conv2d_nhwc
func.func @conv2d_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: %{{.*}} = op.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  %0 = op.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// Every property at its default is elided.
// CHECK-LABEL: func.func @conv2d_explicit_defaults
func.func @conv2d_explicit_defaults(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: %{{.*}} = op.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  // CHECK-NOT: layout
  // CHECK-NOT: strides
  // CHECK-NOT: pads
  // CHECK-NOT: dilations
  // CHECK-NOT: groups
  // CHECK-NOT: epilogue
  // CHECK: func.return
  %0 = op.conv2d %x, %w {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, epilogue = #op.epilogue<>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// CHECK-LABEL: func.func @conv2d_nchw
func.func @conv2d_nchw(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: %{{.*}} = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// Stride 2 with pads 1 (top, left, bottom, right): 9 -> 5; dilation 2: 10 -> 6.
// CHECK-LABEL: func.func @conv2d_window
func.func @conv2d_window(%x: tensor<1x9x9x4xf32>, %w: tensor<8x3x3x4xf32>, %y: tensor<2x10x10x4xf16>, %v: tensor<4x3x3x4xf16>) -> (tensor<1x5x5x8xf32>, tensor<2x6x6x4xf16>) {
  // CHECK: %{{.*}} = op.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x5x5x8xf32>
  %0 = op.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x5x5x8xf32>
  // CHECK: %{{.*}} = op.conv2d %y, %v {dilations = array<i64: 2, 2>} : (tensor<2x10x10x4xf16>, tensor<4x3x3x4xf16>) -> tensor<2x6x6x4xf16>
  %1 = op.conv2d %y, %v {dilations = array<i64: 2, 2>} : (tensor<2x10x10x4xf16>, tensor<4x3x3x4xf16>) -> tensor<2x6x6x4xf16>
  func.return %0, %1 : tensor<1x5x5x8xf32>, tensor<2x6x6x4xf16>
}

// Two groups: the filter holds 4 / 2 = 2 input channels.
// CHECK-LABEL: func.func @conv2d_grouped
func.func @conv2d_grouped(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x2xf32>, %xn: tensor<1x4x8x8xf32>, %wn: tensor<8x2x3x3xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) {
  // CHECK: %{{.*}} = op.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32>) -> tensor<1x8x8x8xf32>
  %0 = op.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32>) -> tensor<1x8x8x8xf32>
  // CHECK: %{{.*}} = op.conv2d %xn, %wn {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x8x8xf32>
  %1 = op.conv2d %xn, %wn {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0, %1 : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>
}

// Depthwise: groups = channels, one input channel per filter.
// CHECK-LABEL: func.func @conv2d_depthwise
func.func @conv2d_depthwise(%x: tensor<1x16x16x32xf32>, %w: tensor<32x3x3x1xf32>, %bias: tensor<32xf32>) -> tensor<1x16x16x32xf32> {
  // CHECK: %{{.*}} = op.conv2d %x, %w bias %bias {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x16x16x32xf32>, tensor<32x3x3x1xf32>, tensor<32xf32>) -> tensor<1x16x16x32xf32>
  %0 = op.conv2d %x, %w bias %bias {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x16x16x32xf32>, tensor<32x3x3x1xf32>, tensor<32xf32>) -> tensor<1x16x16x32xf32>
  func.return %0 : tensor<1x16x16x32xf32>
}

// A ResNet block's second conv: bias, residual add, then ReLU, in one kernel.
// CHECK-LABEL: func.func @conv2d_epilogue
func.func @conv2d_epilogue(%x: tensor<2x8x8x16xf32>, %w: tensor<16x3x3x16xf32>, %bias: tensor<16xf32>, %r: tensor<2x8x8x16xf32>, %xn: tensor<2x16x8x8xf32>, %wn: tensor<16x16x3x3xf32>, %rn: tensor<2x16x8x8xf32>) -> (tensor<2x8x8x16xf32>, tensor<2x16x8x8xf32>) {
  // CHECK: %{{.*}} = op.conv2d %x, %w bias %bias residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, residual = add, then relu>} : (tensor<2x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>, tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %0 = op.conv2d %x, %w bias %bias residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, residual = add, then relu>} : (tensor<2x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>, tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  // NCHW: the bias is still per output channel, the residual the output's shape.
  // CHECK: %{{.*}} = op.conv2d %xn, %wn bias %bias residual %rn {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<alpha = 0.5, bias, silu, residual = mul>}
  %1 = op.conv2d %xn, %wn bias %bias residual %rn {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<alpha = 0.5, bias, silu, residual = mul>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  func.return %0, %1 : tensor<2x8x8x16xf32>, tensor<2x16x8x8xf32>
}

// The filter layout need not follow the activation layout.
// CHECK-LABEL: func.func @conv2d_mixed_layouts
func.func @conv2d_mixed_layouts(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: %{{.*}} = op.conv2d %x, %w {layout = "NCHW"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OHWI"} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// conv_transpose2d, NHWC with IHWO filters (C x kH x kW x K/groups): stride 2 doubles.
// CHECK-LABEL: func.func @conv_transpose2d_nhwc
func.func @conv_transpose2d_nhwc(%x: tensor<1x4x4x8xf32>, %w: tensor<8x2x2x4xf32>) -> tensor<1x8x8x4xf32> {
  // CHECK: %{{.*}} = op.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x4x8xf32>, tensor<8x2x2x4xf32>) -> tensor<1x8x8x4xf32>
  // CHECK-NOT: filter_layout
  // CHECK-NOT: output_padding
  %0 = op.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, filter_layout = "IHWO", output_padding = array<i64: 0, 0>} : (tensor<1x4x4x8xf32>, tensor<8x2x2x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %0 : tensor<1x8x8x4xf32>
}

// NCHW with IOHW filters, pads and output_padding: (4-1)*2 + 3 - 2 + 1 = 8.
// CHECK-LABEL: func.func @conv_transpose2d_nchw
func.func @conv_transpose2d_nchw(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: %{{.*}} = op.conv_transpose2d %x, %w bias %bias {layout = "NCHW", filter_layout = "IOHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %0 = op.conv_transpose2d %x, %w bias %bias {layout = "NCHW", filter_layout = "IOHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// Two groups: K = 3 per group x 2 groups = 6 output channels.
// CHECK-LABEL: func.func @conv_transpose2d_grouped
func.func @conv_transpose2d_grouped(%x: tensor<1x4x4x8xf32>, %w: tensor<8x3x3x3xf32>, %r: tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32> {
  // CHECK: %{{.*}} = op.conv_transpose2d %x, %w residual %r {groups = 2 : i64, epilogue = #op.epilogue<residual = add>} : (tensor<1x4x4x8xf32>, tensor<8x3x3x3xf32>, tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %0 = op.conv_transpose2d %x, %w residual %r {groups = 2 : i64, epilogue = #op.epilogue<residual = add>} : (tensor<1x4x4x8xf32>, tensor<8x3x3x3xf32>, tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// op.conv2d_max_pool: the conv, its epilogue, then a max pool of pool x pool windows at
// stride pool (fuse-conv-pool makes it for the halo conv); the result is the pooled shape.
// CHECK-LABEL: func.func @conv2d_max_pool
func.func @conv2d_max_pool(%x: tensor<1x8x8x16xf16>, %w: tensor<64x3x3x16xf16>, %b: tensor<64xf16>) -> tensor<1x4x4x64xf16> {
  // CHECK: %{{.*}} = op.conv2d_max_pool %x, %w bias %b {pads = array<i64: 1, 1, 1, 1>, pool = 2 : i64, epilogue = #op.epilogue<bias, relu>} : (tensor<1x8x8x16xf16>, tensor<64x3x3x16xf16>, tensor<64xf16>) -> tensor<1x4x4x64xf16>
  %0 = op.conv2d_max_pool %x, %w bias %b {pads = array<i64: 1, 1, 1, 1>, pool = 2 : i64, epilogue = #op.epilogue<bias, relu>} : (tensor<1x8x8x16xf16>, tensor<64x3x3x16xf16>, tensor<64xf16>) -> tensor<1x4x4x64xf16>
  func.return %0 : tensor<1x4x4x64xf16>
}

// op.space_to_depth_conv2d: an NCHW image padded by image_pads and blocked 2x2 into 12 of
// the filter's 16 channels (the rest zero, rounded to f16), then the conv: ResNet-50's stem
// as one kernel (fuse-conv-space-to-depth).
// CHECK-LABEL: func.func @space_to_depth_conv2d
func.func @space_to_depth_conv2d(%image: tensor<2x3x32x32xf32>, %w: tensor<64x4x4x16xf16>, %b: tensor<64xf16>) -> tensor<2x16x16x64xf16> {
  // CHECK: %{{.*}} = op.space_to_depth_conv2d %image, %w bias %b {blocksize = 2 : i64, image_pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<bias, relu>} : (tensor<2x3x32x32xf32>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<2x16x16x64xf16>
  %0 = op.space_to_depth_conv2d %image, %w bias %b {blocksize = 2 : i64, image_layout = "NCHW", image_pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<bias, relu>} : (tensor<2x3x32x32xf32>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<2x16x16x64xf16>
  func.return %0 : tensor<2x16x16x64xf16>
}
