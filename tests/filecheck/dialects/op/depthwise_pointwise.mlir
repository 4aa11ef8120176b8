// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.depthwise_pointwise_conv2d: a depthwise conv, then a 1x1 conv of its output, in one
// kernel (MobileNetV2's inverted residual after its expansion). Each conv has its own
// epilogue; the second may add the block's skip connection.

// CHECK-LABEL: func.func @project_with_skip
func.func @project_with_skip(%x: tensor<2x28x28x192xf16>, %dw: tensor<192x3x3x1xf16>, %b0: tensor<192xf16>, %pw: tensor<32x1x1x192xf16>, %b1: tensor<32xf16>, %r: tensor<2x28x28x32xf16>) -> tensor<2x28x28x32xf16> {
  // CHECK: %{{.*}} = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, clip(0.0, 6.0)>, epilogue1 = #op.epilogue<bias, residual = add>} : (tensor<2x28x28x192xf16>, tensor<192x3x3x1xf16>, tensor<32x1x1x192xf16>, tensor<192xf16>, tensor<32xf16>, tensor<2x28x28x32xf16>) -> tensor<2x28x28x32xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, clip(0.0, 6.0)>, epilogue1 = #op.epilogue<bias, residual = add>} : (tensor<2x28x28x192xf16>, tensor<192x3x3x1xf16>, tensor<32x1x1x192xf16>, tensor<192xf16>, tensor<32xf16>, tensor<2x28x28x32xf16>) -> tensor<2x28x28x32xf16>
  func.return %0 : tensor<2x28x28x32xf16>
}

// -----

// Stride 2 and no biases: the window is the depthwise conv's.
// CHECK-LABEL: func.func @strided
func.func @strided(%x: tensor<1x56x56x144xf16>, %dw: tensor<144x3x3x1xf16>, %pw: tensor<32x1x1x144xf16>) -> tensor<1x28x28x32xf16> {
  // CHECK: %{{.*}} = op.depthwise_pointwise_conv2d %x, %dw, %pw {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x56x56x144xf16>, tensor<144x3x3x1xf16>, tensor<32x1x1x144xf16>) -> tensor<1x28x28x32xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x56x56x144xf16>, tensor<144x3x3x1xf16>, tensor<32x1x1x144xf16>) -> tensor<1x28x28x32xf16>
  func.return %0 : tensor<1x28x28x32xf16>
}

// -----

// With an expansion: the whole inverted residual (1x1 from 32 to 192 channels, depthwise,
// 1x1 to 32 with the block's input added).
// CHECK-LABEL: func.func @inverted_residual
func.func @inverted_residual(%x: tensor<2x28x28x32xf16>, %we: tensor<192x1x1x32xf16>, %be: tensor<192xf16>, %dw: tensor<192x3x3x1xf16>, %b0: tensor<192xf16>, %pw: tensor<32x1x1x192xf16>, %b1: tensor<32xf16>) -> tensor<2x28x28x32xf16> {
  // CHECK: %{{.*}} = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %x expand %we expand_bias %be {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, clip(0.0, 6.0)>, epilogue1 = #op.epilogue<bias, residual = add>, expand_epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<2x28x28x32xf16>, tensor<192x3x3x1xf16>, tensor<32x1x1x192xf16>, tensor<192xf16>, tensor<32xf16>, tensor<2x28x28x32xf16>, tensor<192x1x1x32xf16>, tensor<192xf16>) -> tensor<2x28x28x32xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %x expand %we expand_bias %be {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, clip(0.0, 6.0)>, epilogue1 = #op.epilogue<bias, residual = add>, expand_epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<2x28x28x32xf16>, tensor<192x3x3x1xf16>, tensor<32x1x1x192xf16>, tensor<192xf16>, tensor<32xf16>, tensor<2x28x28x32xf16>, tensor<192x1x1x32xf16>, tensor<192xf16>) -> tensor<2x28x28x32xf16>
  func.return %0 : tensor<2x28x28x32xf16>
}
