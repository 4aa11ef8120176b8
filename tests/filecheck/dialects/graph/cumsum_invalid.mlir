// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// What the verifier of graph.cumsum refuses, one per input chunk.

func.func @axis_out_of_range(%x: tensor<2x16xi32>) -> tensor<2x16xi32> {
  // CHECK: cumsum_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.cumsum' op axis 2 is out of range for rank 2
  %0 = graph.cumsum %x {axis = 2 : i64} : tensor<2x16xi32>
  func.return %0 : tensor<2x16xi32>
}

// -----

func.func @boolean(%x: tensor<2x16xi1>) -> tensor<2x16xi1> {
  // CHECK: cumsum_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.cumsum' op expects a float or integer tensor, got tensor<2x16xi1>
  %0 = graph.cumsum %x {axis = 1 : i64} : tensor<2x16xi1>
  func.return %0 : tensor<2x16xi1>
}

// -----

func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  // CHECK: cumsum_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.cumsum' op axis 0 is out of range for rank 0
  %0 = graph.cumsum %x {axis = 0 : i64} : tensor<f32>
  func.return %0 : tensor<f32>
}
