// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of op.space_to_depth refuses, one per input chunk.

func.func @too_few_channels(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op result type tensor<1x4x4x8xf32> does not match 1x4x4x12 (NHWC, at least 12 channels)
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x8xf32>
  func.return %0 : tensor<1x4x4x8xf32>
}

// -----

func.func @wrong_pixels(%x: tensor<1x3x8x8xf32>) -> tensor<1x5x5x12xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op result type tensor<1x5x5x12xf32> does not match 1x4x4x12 (NHWC, at least 12 channels)
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x5x5x12xf32>
  func.return %0 : tensor<1x5x5x12xf32>
}

// -----

func.func @padded_not_divisible(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x12xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op blocksize 2 must divide the padded height 11 and width 8
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 0, 0, 0>} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  func.return %0 : tensor<1x4x4x12xf32>
}

// -----

func.func @integer_conversion(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x12xi32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op converts only between float types, got f32 to i32
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xi32>
  func.return %0 : tensor<1x4x4x12xi32>
}

// -----

func.func @bad_layout(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x12xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op layout must be one of NHWC, NCHW, got 'NWHC'
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NWHC"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  func.return %0 : tensor<1x4x4x12xf32>
}

// -----

func.func @pads_length(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x12xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.space_to_depth' op pads must have 4 values, got 2
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  func.return %0 : tensor<1x4x4x12xf32>
}
