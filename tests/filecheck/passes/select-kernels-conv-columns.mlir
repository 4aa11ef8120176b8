// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 conv_columns=power2}' | filecheck %s --check-prefix=POWER2
// RUN: not bolt-opt %s -p 'select-kernels{conv_columns=wide}' 2>&1 | filecheck %s --check-prefix=OPTION

// RepVGG-A0's 3x3s at batch 32 on 96 and 192 channels: the 3.x conv's tile is as wide as
// the output channels (128x96: 196 CTAs; 64x192: 98), where 64- and 128-wide tiles would
// pad a quarter of N. 256 channels keep 128-wide tiles (64x128: 98 CTAs). conv_columns=power2 keeps 64 or 128.

// OPTION:     {{^}}error: conv_columns must be one of cover, power2; got 'wide'{{$}}
// OPTION-NOT: Traceback

// CHECK-LABEL:  func.func @stage2
// CHECK:        kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 128, 96, 64>
// POWER2-LABEL: func.func @stage2
// POWER2:       kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 128, 128, 64>
func.func @stage2(%x: tensor<32x28x28x96xf16>, %w: tensor<96x3x3x96xf16>, %b: tensor<96xf16>) -> tensor<32x28x28x96xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x28x28x96xf16>, tensor<96x3x3x96xf16>, tensor<96xf16>) -> tensor<32x28x28x96xf16>
  func.return %0 : tensor<32x28x28x96xf16>
}

// CHECK-LABEL:  func.func @stage3
// CHECK:        kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 64, 192, 64>
// POWER2-LABEL: func.func @stage3
// POWER2:       kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 64, 128, 64>
func.func @stage3(%x: tensor<32x14x14x192xf16>, %w: tensor<192x3x3x192xf16>, %b: tensor<192xf16>) -> tensor<32x14x14x192xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x14x14x192xf16>, tensor<192x3x3x192xf16>, tensor<192xf16>) -> tensor<32x14x14x192xf16>
  func.return %0 : tensor<32x14x14x192xf16>
}

// CHECK-LABEL:  func.func @wide
// CHECK:        kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 64, 128, 64>
func.func @wide(%x: tensor<32x14x14x256xf16>, %w: tensor<256x3x3x256xf16>, %b: tensor<256xf16>) -> tensor<32x14x14x256xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x14x14x256xf16>, tensor<256x3x3x256xf16>, tensor<256xf16>) -> tensor<32x14x14x256xf16>
  func.return %0 : tensor<32x14x14x256xf16>
}
