// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Back-to-back (persistent) kernels: two GEMMs or two convs, each with its own
// bias + activation epilogue; the intermediate never leaves the chip.

// CHECK-LABEL: func.func @b2b_gemm_plain
func.func @b2b_gemm_plain(%a: tensor<4x8xf32>, %b0: tensor<8x16xf32>, %b1: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %{{.*}} = op.b2b_gemm %a, %b0, %b1 : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // CHECK-NOT: epilogue
  // CHECK-NOT: layout
  // CHECK: func.return
  %0 = op.b2b_gemm %a, %b0, %b1 {layout_a = "row", epilogue0 = #op.epilogue<>, epilogue1 = #op.epilogue<>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// A transformer MLP: Linear + GELU, then Linear, both weights "col" (N x K).
// CHECK-LABEL: func.func @b2b_gemm_mlp
func.func @b2b_gemm_mlp(%x: tensor<2x8x32xf16>, %w0: tensor<64x32xf16>, %c0: tensor<64xf16>, %w1: tensor<32x64xf16>, %c1: tensor<32xf16>) -> tensor<2x8x32xf16> {
  // CHECK: %{{.*}} = op.b2b_gemm %x, %w0, %w1 bias0 %c0 bias1 %c1 {layout_b0 = "col", layout_b1 = "col", epilogue0 = #op.epilogue<bias, gelu>, epilogue1 = #op.epilogue<bias>} : (tensor<2x8x32xf16>, tensor<64x32xf16>, tensor<32x64xf16>, tensor<64xf16>, tensor<32xf16>) -> tensor<2x8x32xf16>
  %0 = op.b2b_gemm %x, %w0, %w1 bias0 %c0 bias1 %c1 {layout_b0 = "col", layout_b1 = "col", epilogue0 = #op.epilogue<bias, gelu>, epilogue1 = #op.epilogue<bias>} : (tensor<2x8x32xf16>, tensor<64x32xf16>, tensor<32x64xf16>, tensor<64xf16>, tensor<32xf16>) -> tensor<2x8x32xf16>
  func.return %0 : tensor<2x8x32xf16>
}

// Only the second bias, and a "col" A (stored K x M).
// CHECK-LABEL: func.func @b2b_gemm_second_bias
func.func @b2b_gemm_second_bias(%at: tensor<8x4xf32>, %b0: tensor<8x16xf32>, %b1: tensor<16x8xf32>, %c1: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %{{.*}} = op.b2b_gemm %at, %b0, %b1 bias1 %c1 {layout_a = "col", epilogue0 = #op.epilogue<alpha = 0.5, relu>, epilogue1 = #op.epilogue<bias, sigmoid>} : (tensor<8x4xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = op.b2b_gemm %at, %b0, %b1 bias1 %c1 {layout_a = "col", epilogue0 = #op.epilogue<alpha = 0.5, relu>, epilogue1 = #op.epilogue<bias, sigmoid>} : (tensor<8x4xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// A 3x3 conv then a 1x1 conv (NHWC, OHWI), as in a MobileNet block.
// CHECK-LABEL: func.func @b2b_conv2d_nhwc
func.func @b2b_conv2d_nhwc(%x: tensor<1x8x8x4xf32>, %w0: tensor<16x3x3x4xf32>, %c0: tensor<16xf32>, %w1: tensor<8x1x1x16xf32>, %c1: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: %{{.*}} = op.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<bias>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8x1x1x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  // CHECK-NOT: filter_layout
  %0 = op.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {layout = "NHWC", filter_layout = "OHWI", pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<bias>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8x1x1x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// NCHW / OIHW, the first conv strided and dilated, no biases.
// CHECK-LABEL: func.func @b2b_conv2d_nchw
func.func @b2b_conv2d_nchw(%x: tensor<2x4x9x9xf32>, %w0: tensor<6x4x3x3xf32>, %w1: tensor<5x6x1x1xf32>) -> tensor<2x5x3x3xf32> {
  // CHECK: %{{.*}} = op.b2b_conv2d %x, %w0, %w1 {layout = "NCHW", filter_layout = "OIHW", strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, epilogue0 = #op.epilogue<leaky_relu(0.2)>} : (tensor<2x4x9x9xf32>, tensor<6x4x3x3xf32>, tensor<5x6x1x1xf32>) -> tensor<2x5x3x3xf32>
  %0 = op.b2b_conv2d %x, %w0, %w1 {layout = "NCHW", filter_layout = "OIHW", strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, epilogue0 = #op.epilogue<leaky_relu(0.2)>} : (tensor<2x4x9x9xf32>, tensor<6x4x3x3xf32>, tensor<5x6x1x1xf32>) -> tensor<2x5x3x3xf32>
  func.return %0 : tensor<2x5x3x3xf32>
}
