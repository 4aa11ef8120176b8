// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of graph.space_to_depth refuses, one per input chunk.

func.func @not_divisible(%x: tensor<1x3x7x8xf32>) -> tensor<1x12x3x4xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.space_to_depth' op blocksize 2 must divide the input's height 7 and width 8
  %0 = graph.space_to_depth %x {blocksize = 2 : i64} : tensor<1x3x7x8xf32> -> tensor<1x12x3x4xf32>
  func.return %0 : tensor<1x12x3x4xf32>
}

// -----

func.func @wrong_result(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.space_to_depth' op result type tensor<1x3x4x4xf32> does not match tensor<1x12x4x4xf32>, inferred from its operands and attributes
  %0 = graph.space_to_depth %x {blocksize = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @rank(%x: tensor<3x8x8xf32>) -> tensor<12x4x4xf32> {
  // CHECK: space_to_depth_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.space_to_depth' op expects a 4-D N×C×H×W input, got tensor<3x8x8xf32>
  %0 = graph.space_to_depth %x {blocksize = 2 : i64} : tensor<3x8x8xf32> -> tensor<12x4x4xf32>
  func.return %0 : tensor<12x4x4xf32>
}
