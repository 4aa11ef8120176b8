// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of op.space_to_depth_conv2d refuses, one per input chunk.

func.func @too_few_filter_channels(%image: tensor<1x3x8x8xf32>, %w: tensor<64x2x2x8xf16>) -> tensor<1x3x3x64xf16> {
  // CHECK: space_to_depth_conv_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth_conv2d' op the filter takes 8 input channels, fewer than the 12 the image's 2x2 blocks fill
  %0 = op.space_to_depth_conv2d %image, %w {blocksize = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<64x2x2x8xf16>) -> tensor<1x3x3x64xf16>
  func.return %0 : tensor<1x3x3x64xf16>
}

// -----

func.func @block_does_not_divide(%image: tensor<1x3x7x8xf32>, %w: tensor<64x2x2x16xf16>) -> tensor<1x3x3x64xf16> {
  // CHECK: space_to_depth_conv_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth_conv2d' op blocksize 2 must divide the padded height 7 and width 8
  %0 = op.space_to_depth_conv2d %image, %w {blocksize = 2 : i64} : (tensor<1x3x7x8xf32>, tensor<64x2x2x16xf16>) -> tensor<1x3x3x64xf16>
  func.return %0 : tensor<1x3x3x64xf16>
}

// -----

func.func @result_of_the_image_type(%image: tensor<1x3x8x8xf32>, %w: tensor<64x2x2x16xf16>) -> tensor<1x3x3x64xf32> {
  // CHECK: space_to_depth_conv_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth_conv2d' op result type tensor<1x3x3x64xf32> does not match
  %0 = op.space_to_depth_conv2d %image, %w {blocksize = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<64x2x2x16xf16>) -> tensor<1x3x3x64xf32>
  func.return %0 : tensor<1x3x3x64xf32>
}
