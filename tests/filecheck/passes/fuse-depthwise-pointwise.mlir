// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-depthwise-pointwise' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-depthwise-pointwise,lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-depthwise-pointwise{expand=true}' | filecheck %s --check-prefix=EXPAND
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-depthwise-pointwise{sms=14}' | filecheck %s --check-prefix=WAVE14
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-depthwise-pointwise{sms=13}' | filecheck %s --check-prefix=WAVE13

// MobileNetV2's inverted residual after its expansion: a 3x3 depthwise conv (bias, ReLU6)
// on 192 channels at 28², then the 1x1 projection to 32 channels with the block's skip
// connection. The pair becomes one op.depthwise_pointwise_conv2d on our kernel: the
// 192-channel intermediate stays in shared memory.

// With `sms` (the default pipeline passes the target's multiprocessors) only a grid of one
// wave fuses: 28 rows in 2-row tiles are 14 CTAs.
// CHECK-LABEL: func.func @project_with_skip
// WAVE14-LABEL: func.func @project_with_skip
// WAVE14-NEXT:  op.depthwise_pointwise_conv2d
// WAVE13-LABEL: func.func @project_with_skip
// WAVE13-NEXT:  op.conv2d %x, %dw
// WAVE13-NEXT:  op.conv2d %0, %pw
// CHECK-NEXT:  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %r
// CHECK-SAME:  pads = array<i64: 1, 1, 1, 1>
// CHECK-SAME:  epilogue0 = #op.epilogue<bias, clip(0.0, 6.0)>, epilogue1 = #op.epilogue<bias, residual = add>
// CHECK-SAME:  family = "depthwise_pointwise", arch = "sm80", threadblock = array<i64: 2, 4, 8>
// CHECK-SAME:  -> tensor<1x28x28x32xf16>
// CHECK-NEXT:  func.return %0
func.func @project_with_skip(%x: tensor<1x28x28x192xf16>, %dw: tensor<192x3x3x1xf16>, %b0: tensor<192xf16>, %pw: tensor<32x1x1x192xf16>, %b1: tensor<32xf16>, %r: tensor<1x28x28x32xf16>) -> tensor<1x28x28x32xf16> {
  %0 = op.conv2d %x, %dw bias %b0 {pads = array<i64: 1, 1, 1, 1>, groups = 192 : i64, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x28x28x192xf16>, tensor<192x3x3x1xf16>, tensor<192xf16>) -> tensor<1x28x28x192xf16>
  %1 = op.conv2d %0, %pw bias %b1 residual %r {epilogue = #op.epilogue<bias, residual = add>} : (tensor<1x28x28x192xf16>, tensor<32x1x1x192xf16>, tensor<32xf16>, tensor<1x28x28x32xf16>) -> tensor<1x28x28x32xf16>
  func.return %1 : tensor<1x28x28x32xf16>
}

// The depthwise result has a second user: it must be written, so the pair stays.
// CHECK-LABEL: func.func @second_user
// CHECK:       op.conv2d %x, %dw
// CHECK:       op.conv2d %0, %pw
func.func @second_user(%x: tensor<1x28x28x192xf16>, %dw: tensor<192x3x3x1xf16>, %pw: tensor<32x1x1x192xf16>) -> (tensor<1x28x28x32xf16>, tensor<1x28x28x192xf16>) {
  %0 = op.conv2d %x, %dw {pads = array<i64: 1, 1, 1, 1>, groups = 192 : i64} : (tensor<1x28x28x192xf16>, tensor<192x3x3x1xf16>) -> tensor<1x28x28x192xf16>
  %1 = op.conv2d %0, %pw : (tensor<1x28x28x192xf16>, tensor<32x1x1x192xf16>) -> tensor<1x28x28x32xf16>
  func.return %1, %0 : tensor<1x28x28x32xf16>, tensor<1x28x28x192xf16>
}

// 200 channels are not a multiple of 16 (the 1x1 conv's k16 chunks): the pair stays.
// CHECK-LABEL: func.func @odd_channels
// CHECK:       op.conv2d %x, %dw
// CHECK:       op.conv2d %0, %pw
func.func @odd_channels(%x: tensor<1x28x28x200xf16>, %dw: tensor<200x3x3x1xf16>, %pw: tensor<32x1x1x200xf16>) -> tensor<1x28x28x32xf16> {
  %0 = op.conv2d %x, %dw {pads = array<i64: 1, 1, 1, 1>, groups = 200 : i64} : (tensor<1x28x28x200xf16>, tensor<200x3x3x1xf16>) -> tensor<1x28x28x200xf16>
  %1 = op.conv2d %0, %pw : (tensor<1x28x28x200xf16>, tensor<32x1x1x200xf16>) -> tensor<1x28x28x32xf16>
  func.return %1 : tensor<1x28x28x32xf16>
}

// The whole block: with expand=true the 1x1 expansion before the depthwise conv joins too,
// and the 192-channel tensors never leave the chip; without it the expansion stays.
// CHECK-LABEL: func.func @block
// CHECK:       op.conv2d %x, %we
// CHECK-NEXT:  op.depthwise_pointwise_conv2d %0, %dw, %pw
// EXPAND-LABEL: func.func @block
// EXPAND-NEXT:  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b0 bias1 %b1 residual %x expand %we expand_bias %be
// EXPAND-SAME:  expand_epilogue = #op.epilogue<bias, clip(0.0, 6.0)>
// EXPAND-SAME:  family = "depthwise_pointwise"
// EXPAND-NEXT:  func.return %0
func.func @block(%x: tensor<1x28x28x32xf16>, %we: tensor<192x1x1x32xf16>, %be: tensor<192xf16>, %dw: tensor<192x3x3x1xf16>, %b0: tensor<192xf16>, %pw: tensor<32x1x1x192xf16>, %b1: tensor<32xf16>) -> tensor<1x28x28x32xf16> {
  %0 = op.conv2d %x, %we bias %be {epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x28x28x32xf16>, tensor<192x1x1x32xf16>, tensor<192xf16>) -> tensor<1x28x28x192xf16>
  %1 = op.conv2d %0, %dw bias %b0 {pads = array<i64: 1, 1, 1, 1>, groups = 192 : i64, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x28x28x192xf16>, tensor<192x3x3x1xf16>, tensor<192xf16>) -> tensor<1x28x28x192xf16>
  %2 = op.conv2d %1, %pw bias %b1 residual %x {epilogue = #op.epilogue<bias, residual = add>} : (tensor<1x28x28x192xf16>, tensor<32x1x1x192xf16>, tensor<32xf16>, tensor<1x28x28x32xf16>) -> tensor<1x28x28x32xf16>
  func.return %2 : tensor<1x28x28x32xf16>
}

// STATS:      fuse-depthwise-pointwise
// STATS-NEXT: 2 depthwise convs fused with the 1x1 conv after them
// STATS:      lower-op-to-cutlass
// STATS:      2 depthwise_pointwise kernels (op.depthwise_pointwise_conv2d kept)
