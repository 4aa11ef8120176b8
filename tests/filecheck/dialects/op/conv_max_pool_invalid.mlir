// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of op.conv2d_max_pool refuses, one per input chunk.

func.func @pool_does_not_divide(%x: tensor<1x6x6x16xf16>, %w: tensor<64x3x3x16xf16>) -> tensor<1x1x1x64xf16> {
  // CHECK: conv_max_pool_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d_max_pool' op pool 4 must be at least 2 and divide the conv's output 6x6
  %0 = op.conv2d_max_pool %x, %w {pads = array<i64: 1, 1, 1, 1>, pool = 4 : i64} : (tensor<1x6x6x16xf16>, tensor<64x3x3x16xf16>) -> tensor<1x1x1x64xf16>
  func.return %0 : tensor<1x1x1x64xf16>
}

// -----

func.func @unpooled_result(%x: tensor<1x6x6x16xf16>, %w: tensor<64x3x3x16xf16>) -> tensor<1x6x6x64xf16> {
  // CHECK: conv_max_pool_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d_max_pool' op result type tensor<1x6x6x64xf16> does not match
  %0 = op.conv2d_max_pool %x, %w {pads = array<i64: 1, 1, 1, 1>, pool = 2 : i64} : (tensor<1x6x6x16xf16>, tensor<64x3x3x16xf16>) -> tensor<1x6x6x64xf16>
  func.return %0 : tensor<1x6x6x64xf16>
}

// -----

func.func @residual(%x: tensor<1x6x6x16xf16>, %w: tensor<64x3x3x16xf16>, %r: tensor<1x3x3x64xf16>) -> tensor<1x3x3x64xf16> {
  // CHECK: conv_max_pool_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d_max_pool' op a pooled conv takes no residual
  %0 = op.conv2d_max_pool %x, %w residual %r {pads = array<i64: 1, 1, 1, 1>, pool = 2 : i64, epilogue = #op.epilogue<residual = add>} : (tensor<1x6x6x16xf16>, tensor<64x3x3x16xf16>, tensor<1x3x3x64xf16>) -> tensor<1x3x3x64xf16>
  func.return %0 : tensor<1x3x3x64xf16>
}
