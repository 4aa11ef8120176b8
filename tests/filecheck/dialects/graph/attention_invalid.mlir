// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of graph.attention, one per chunk.

func.func @rank(%q: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op q, k and v must be 4-D, got ranks 3, 3 and 3
  %0 = graph.attention %q, %q, %q {scale = 0.25 : f32} : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  func.return %0 : tensor<4x8x16xf32>
}

// -----

func.func @v_keys(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op v 2x4x6x16 does not match k 2x4x8x16 in batch, heads or keys
  %0 = graph.attention %q, %q, %v {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @mixed_types(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf16>) -> tensor<2x4x8x16xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op q, k and v must share one element type, got f16, f32
  %0 = graph.attention %q, %k, %q {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf16>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @mask_shape(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x4xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op mask tensor<2x1x1x4xf32> does not broadcast to the scores 2x4x8x8
  %0 = graph.attention %q, %q, %q, %m {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x4xf32>) -> tensor<2x4x8x16xf32>
  func.return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @mask_int(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xi64>) -> tensor<2x4x8x16xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op mask must be a float or i1 tensor, got tensor<2x1x1x8xi64>
  %0 = graph.attention %q, %q, %q, %m {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xi64>) -> tensor<2x4x8x16xf32>
  func.return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @result(%q: tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.attention' op result type tensor<2x4x8x8xf32> does not match tensor<2x4x8x16xf32>, inferred from its operands and attributes
  %0 = graph.attention %q, %q, %q {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  func.return %0 : tensor<2x4x8x8xf32>
}
