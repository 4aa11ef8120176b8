// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// conv2d and conv_transpose2d (ONNX Conv / ConvTranspose, NCHW).

// The function's graph.name argument and result attributes survive the round trip.
// CHECK-LABEL: func.func @conv2d_bias
// CHECK-SAME: (%{{.*}}: tensor<1x3x8x8xf32> {graph.name = "gpu_0/data_0"}, %{{.*}}: tensor<16x3x3x3xf32>, %{{.*}}: tensor<16xf32>)
// CHECK-SAME: -> (tensor<1x16x6x6xf32> {graph.name = "gpu_0/conv1_1"})
func.func @conv2d_bias(%x: tensor<1x3x8x8xf32> {graph.name = "gpu_0/data_0"}, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> (tensor<1x16x6x6xf32> {graph.name = "gpu_0/conv1_1"}) {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  %0 = graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// CHECK-LABEL: func.func @conv2d_no_bias
func.func @conv2d_no_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// Attributes spelled at their default values are not printed.
// CHECK-LABEL: func.func @conv2d_explicit_defaults
func.func @conv2d_explicit_defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  // CHECK-NOT: strides
  // CHECK-NOT: dilations
  // CHECK-NOT: group
  // CHECK: func.return
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// ResNet's stem: 7x7, stride 2, pad 3: 224 -> 112.
// CHECK-LABEL: func.func @conv2d_strides_pads
func.func @conv2d_strides_pads(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>) -> tensor<1x64x112x112xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  func.return %0 : tensor<1x64x112x112xf32>
}

// Pads are top, left, bottom, right: H = 8+0+2-3+1 = 8, W = 8+1+3-3+1 = 10.
// CHECK-LABEL: func.func @conv2d_asymmetric_pads
func.func @conv2d_asymmetric_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x10xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 0, 1, 2, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x10xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 0, 1, 2, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x10xf32>
  func.return %0 : tensor<1x4x8x10xf32>
}

// Non-square strides, the result rounds down: H = (9-3)/2+1 = 4, W = (9-3)/3+1 = 3.
// CHECK-LABEL: func.func @conv2d_uneven_strides
func.func @conv2d_uneven_strides(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x3xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 3>} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x3xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 3>} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x3xf32>
  func.return %0 : tensor<2x4x4x3xf32>
}

// Dilation 2 turns a 3x3 kernel into a 5x5 window: 10 -> 6.
// CHECK-LABEL: func.func @conv2d_dilations
func.func @conv2d_dilations(%x: tensor<1x4x10x10xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>} : (tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %0 = graph.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// Two groups: the weight holds 4 / 2 = 2 input channels.
// CHECK-LABEL: func.func @conv2d_grouped
func.func @conv2d_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// Depthwise (group = channels), "same" padding.
// CHECK-LABEL: func.func @conv2d_depthwise
func.func @conv2d_depthwise(%x: tensor<1x32x16x16xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, group = 32 : i64} : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, group = 32 : i64} : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  func.return %0 : tensor<1x32x16x16xf32>
}

// Depthwise with a channel multiplier of 2.
// CHECK-LABEL: func.func @conv2d_depthwise_multiplier
func.func @conv2d_depthwise_multiplier(%x: tensor<1x8x4x4xf16>, %w: tensor<16x1x3x3xf16>, %b: tensor<16xf16>) -> tensor<1x16x2x2xf16> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {group = 8 : i64} : (tensor<1x8x4x4xf16>, tensor<16x1x3x3xf16>, tensor<16xf16>) -> tensor<1x16x2x2xf16>
  %0 = graph.conv2d %x, %w, %b {group = 8 : i64} : (tensor<1x8x4x4xf16>, tensor<16x1x3x3xf16>, tensor<16xf16>) -> tensor<1x16x2x2xf16>
  func.return %0 : tensor<1x16x2x2xf16>
}

// Every attribute at a non-default value at once.
// CHECK-LABEL: func.func @conv2d_all_attributes
func.func @conv2d_all_attributes(%x: tensor<1x6x12x12xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32> {
  // CHECK: %{{.*}} = graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 2, 2>, group = 3 : i64} : (tensor<1x6x12x12xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 2, 2>, group = 3 : i64} : (tensor<1x6x12x12xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  func.return %0 : tensor<1x6x5x5xf32>
}

// ConvTranspose: weight is C x (M/group) x kH x kW; stride 2, pad 1, 4x4 kernel doubles the size.
// CHECK-LABEL: func.func @conv_transpose2d_bias
func.func @conv_transpose2d_bias(%x: tensor<1x16x4x4xf32>, %w: tensor<16x8x4x4xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<16x8x4x4xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<16x8x4x4xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @conv_transpose2d_no_bias
func.func @conv_transpose2d_no_bias(%x: tensor<1x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %0 = graph.conv_transpose2d %x, %w : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}

// The default output_padding is elided like the others.
// CHECK-LABEL: func.func @conv_transpose2d_explicit_defaults
func.func @conv_transpose2d_explicit_defaults(%x: tensor<1x2x3x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  // CHECK-NOT: output_padding
  // CHECK: func.return
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}

// output_padding adds to the bottom/right: 2*3 + 1 + 2 + 1 - 2 = 8.
// CHECK-LABEL: func.func @conv_transpose2d_output_padding
func.func @conv_transpose2d_output_padding(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// Grouped: the output has (M/group) * group = 2 * 2 channels.
// CHECK-LABEL: func.func @conv_transpose2d_grouped
func.func @conv_transpose2d_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// Dilation 2, and output_padding 1 that is smaller than the dilation (stride 1).
// CHECK-LABEL: func.func @conv_transpose2d_dilations
func.func @conv_transpose2d_dilations(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x7xf32> {
  // CHECK: %{{.*}} = graph.conv_transpose2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, output_padding = array<i64: 1, 0>} : (tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x7xf32>
  %0 = graph.conv_transpose2d %x, %w {dilations = array<i64: 2, 2>, output_padding = array<i64: 1, 0>} : (tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x7xf32>
  func.return %0 : tensor<1x2x8x7xf32>
}
