// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of op.depthwise_pointwise_conv2d refuses, one per input chunk.

func.func @first_not_depthwise(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x16xf16>, %pw: tensor<8x1x1x16xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op the first filter must be depthwise (16xRxSx1 for 16 channels), got tensor<16x3x3x16xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x16xf16>, tensor<8x1x1x16xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}

// -----

func.func @second_not_1x1(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x3x3x16xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op the second filter must be 1x1 over 16 channels (Kx1x1x16), got tensor<8x3x3x16xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>, tensor<8x3x3x16xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}

// -----

func.func @wrong_result(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x1x1x16xf16>) -> tensor<1x8x8x16xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op result type tensor<1x8x8x16xf16> does not match
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>, tensor<8x1x1x16xf16>) -> tensor<1x8x8x16xf16>
  func.return %0 : tensor<1x8x8x16xf16>
}

// -----

func.func @residual_on_the_depthwise_conv(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x1x1x16xf16>, %r: tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op the depthwise conv's epilogue takes no residual
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<residual = add>, epilogue1 = #op.epilogue<residual = add>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>, tensor<8x1x1x16xf16>, tensor<1x8x8x8xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}

// -----

func.func @bias_of_the_wrong_conv(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x1x1x16xf16>, %b: tensor<8xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op bias must have shape 16, got tensor<8xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw bias0 %b {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>, tensor<8x1x1x16xf16>, tensor<8xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}

// -----

func.func @expansion_to_other_channels(%x: tensor<1x8x8x8xf16>, %we: tensor<32x1x1x8xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x1x1x16xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op the expansion must be 1x1 from 8 to the depthwise conv's 16 channels (16x1x1x8), got tensor<32x1x1x8xf16>
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw expand %we {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf16>, tensor<16x3x3x1xf16>, tensor<8x1x1x16xf16>, tensor<32x1x1x8xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}

// -----

func.func @expansion_bias_without_expansion(%x: tensor<1x8x8x16xf16>, %dw: tensor<16x3x3x1xf16>, %pw: tensor<8x1x1x16xf16>, %be: tensor<16xf16>) -> tensor<1x8x8x8xf16> {
  // CHECK: depthwise_pointwise_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.depthwise_pointwise_conv2d' op an expansion bias or epilogue without an expansion filter
  %0 = op.depthwise_pointwise_conv2d %x, %dw, %pw expand_bias %be {pads = array<i64: 1, 1, 1, 1>, expand_epilogue = #op.epilogue<bias>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x1xf16>, tensor<8x1x1x16xf16>, tensor<16xf16>) -> tensor<1x8x8x8xf16>
  func.return %0 : tensor<1x8x8x8xf16>
}
