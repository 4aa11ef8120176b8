// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of op.attention, one per chunk.

func.func @packed_with_k(%qkv: tensor<2x16x3x4x64xf16>, %k: tensor<2x4x16x64xf16>) -> tensor<2x16x4x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op layout "BS3HD" takes only q, the packed [B, S, 3, H, D] projection
  %0 = op.attention %qkv k %k {layout = "BS3HD", scale = 0.125 : f32} : (tensor<2x16x3x4x64xf16>, tensor<2x4x16x64xf16>) -> tensor<2x16x4x64xf16>
  func.return %0 : tensor<2x16x4x64xf16>
}

// -----

func.func @packed_not_three(%qkv: tensor<2x16x2x4x64xf16>) -> tensor<2x16x4x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op layout "BS3HD" expects q of shape [B, S, 3, H, D], got 2x16x2x4x64
  %0 = op.attention %qkv {layout = "BS3HD", scale = 0.125 : f32} : (tensor<2x16x2x4x64xf16>) -> tensor<2x16x4x64xf16>
  func.return %0 : tensor<2x16x4x64xf16>
}

// -----

func.func @missing_v(%q: tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op layout "BHSD" takes q, k and v
  %0 = op.attention %q k %q {scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @bad_layout(%q: tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op layout must be one of BHSD, BSHD, BS3HD, got 'SBHD'
  %0 = op.attention %q k %q v %q {layout = "SBHD", scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @head_size_mismatch(%q: tensor<2x4x8x64xf16>, %k: tensor<2x4x8x32xf16>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op k 2x4x8x32 does not match q 2x4x8x64 in batch, heads or head size
  %0 = op.attention %q k %k v %q {scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x32xf16>, tensor<2x4x8x64xf16>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @boolean_bias(%q: tensor<2x4x8x64xf16>, %m: tensor<2x1x1x8xi1>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op bias must be a float tensor, got tensor<2x1x1x8xi1>
  %0 = op.attention %q k %q v %q bias %m {scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x1x1x8xi1>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @bias_shape(%q: tensor<2x4x8x64xf16>, %m: tensor<2x1x8x4xf16>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op bias tensor<2x1x8x4xf16> does not broadcast to the scores 2x4x8x8
  %0 = op.attention %q k %q v %q bias %m {scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x1x8x4xf16>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @key_lengths_type(%q: tensor<2x4x8x64xf16>, %len: tensor<2xi64>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op key_lengths must be tensor<2xi32>, got tensor<2xi64>
  %0 = op.attention %q k %q v %q key_lengths %len {scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2x4x8x64xf16>, tensor<2xi64>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @bshd_result(%q: tensor<2x8x4x64xf16>) -> tensor<2x4x8x64xf16> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op result type tensor<2x4x8x64xf16> does not match tensor<2x8x4x64xf16>, inferred from the operands and attributes
  %0 = op.attention %q k %q v %q {layout = "BSHD", scale = 0.125 : f32} : (tensor<2x8x4x64xf16>, tensor<2x8x4x64xf16>, tensor<2x8x4x64xf16>) -> tensor<2x4x8x64xf16>
  func.return %0 : tensor<2x4x8x64xf16>
}

// -----

func.func @int_inputs(%q: tensor<2x4x8x64xi32>) -> tensor<2x4x8x64xi32> {
  // CHECK: attention_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.attention' op expects floating-point q, k and v, got tensor<2x4x8x64xi32>
  %0 = op.attention %q k %q v %q {scale = 0.125 : f32} : (tensor<2x4x8x64xi32>, tensor<2x4x8x64xi32>, tensor<2x4x8x64xi32>) -> tensor<2x4x8x64xi32>
  func.return %0 : tensor<2x4x8x64xi32>
}
