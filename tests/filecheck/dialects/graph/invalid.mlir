// RUN: bolt-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of the graph dialect, one per input chunk: every message names the
// op and says what is wrong and what was expected.

// ============================================================================ constant

func.func @constant_type(%x: tensor<2xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.constant' op result type tensor<3xf32> does not match tensor<2xf32>, inferred from its operands and attributes
  %0 = "graph.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// ============================================================================== unary

// -----

func.func @leaky_relu_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.leaky_relu' op expects a floating-point tensor, got element type i32
  %0 = graph.leaky_relu %x : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @sqrt_int(%x: tensor<4xi64>) -> tensor<4xi64> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.sqrt' op expects a floating-point tensor, got element type i64
  %0 = graph.sqrt %x : tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// -----

func.func @gelu_bad_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gelu' op approximate must be one of none, tanh, got 'fast'
  %0 = graph.gelu %x {approximate = "fast"} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @relu_type_changes(%x: tensor<4xf32>) -> tensor<4xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.relu' op result 'output' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>
  %0 = "graph.relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @sigmoid_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.sigmoid' op expects statically shaped tensors, got tensor<?x4xf32>
  %0 = graph.sigmoid %x : tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

func.func @cast_shape(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.cast' op cast changes the shape: tensor<2x3xf32> to tensor<6xf16>
  %0 = graph.cast %x : tensor<2x3xf32> to tensor<6xf16>
  func.return %0 : tensor<6xf16>
}

// -----

func.func @cast_bad_round_mode(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.cast' op round_mode must be one of up, down, nearest, got 'zero'
  %0 = graph.cast %x {round_mode = "zero"} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  func.return %0 : tensor<4xf8E8M0FNU>
}

// ======================================================================== elementwise

// -----

func.func @add_bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.add' op shapes 2x3 and 4x3 do not broadcast
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @mul_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.mul' op operands must share one element type, got f16, f32
  %0 = graph.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @sub_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.sub' op result type tensor<3xf32> does not match tensor<2x3xf32>, inferred from its operands and attributes
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @pow_mixed_types(%a: tensor<3xi32>, %b: tensor<3xf32>) -> tensor<3xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pow' op operands must share one element type, got f32, i32
  %0 = graph.pow %a, %b : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @equal_not_i1(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.equal' op result type tensor<3xf32> does not match tensor<3xi1>, inferred from its operands and attributes
  %0 = graph.equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @greater_not_i1(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.greater' op result type tensor<3xi32> does not match tensor<3xi1>, inferred from its operands and attributes
  %0 = graph.greater %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @less_element_types(%a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xi1> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.less' op operands must share one element type, got f16, f32
  %0 = graph.less %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @and_float(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.and' op expects i1 tensors, got tensor<3xf32>
  %0 = graph.and %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @not_integer(%x: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.not' op expects i1 tensors, got tensor<3xi32>
  %0 = graph.not %x : tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @sum_no_operands() -> tensor<f32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.sum' op expects at least one operand
  %0 = "graph.sum"() : () -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sum_bad_broadcast(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.sum' op shapes 2 and 2 and 3 do not broadcast
  %0 = graph.sum %a, %b, %c : (tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @where_float_condition(%c: tensor<4xf32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.where' op condition must be an i1 tensor, got tensor<4xf32>
  %0 = graph.where %c, %x, %y : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @where_value_types(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.where' op the two values must share one element type, got f32, i64
  %0 = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @where_condition_broadcast(%c: tensor<3xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.where' op shapes 3 and 4 and 4 do not broadcast
  %0 = graph.where %c, %x, %y : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// =============================================================================== conv

// -----

func.func @conv2d_group_channels(%x: tensor<1x8x8x8xf32>, %w: tensor<16x2x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op weight has 2 input channels per group, expected 4 (= 8 / group 2)
  %0 = graph.conv2d %x, %w {group = 2 : i64} : (tensor<1x8x8x8xf32>, tensor<16x2x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_weight_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op weight has 4 input channels per group, expected 3 (= 3 / group 1)
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_group_divides(%x: tensor<1x6x8x8xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op group 4 must divide input channels 6 and output channels 8
  %0 = graph.conv2d %x, %w {group = 4 : i64} : (tensor<1x6x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %0 : tensor<1x8x6x6xf32>
}

// -----

func.func @conv2d_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op group must be positive, got 0
  %0 = graph.conv2d %x, %w {group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %0 : tensor<1x8x6x6xf32>
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op bias must have shape 16, got tensor<8xf32>
  %0 = graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<8xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op result type tensor<1x16x8x8xf32> does not match tensor<1x16x6x6xf32>, inferred from its operands and attributes
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  func.return %0 : tensor<1x16x8x8xf32>
}

// -----

func.func @conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op expects a 4-D input and a 4-D weight, got tensor<3x8x8xf32> and tensor<16x3x3x3xf32>
  %0 = graph.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<16x6x6xf32>
  func.return %0 : tensor<16x6x6xf32>
}

// -----

func.func @conv2d_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x3x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op strides must have 2 values, got 1
  %0 = graph.conv2d %x, %w {strides = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x3x3xf32>
  func.return %0 : tensor<1x16x3x3xf32>
}

// -----

func.func @conv2d_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op dilations must be positive, got [1, 0]
  %0 = graph.conv2d %x, %w {dilations = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_negative_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op pads must not be negative, got [0, -1, 0, 1]
  %0 = graph.conv2d %x, %w {pads = array<i64: 0, -1, 0, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv2d_window_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op window of extent 3 does not fit an input of 2 padded by 0+0
  %0 = graph.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return %0 : tensor<1x4x1x1xf32>
}

// -----

func.func @conv2d_int(%x: tensor<1x3x8x8xi32>, %w: tensor<16x3x3x3xi32>) -> tensor<1x16x6x6xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op expects a floating-point tensor, got element type i32
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xi32>, tensor<16x3x3x3xi32>) -> tensor<1x16x6x6xi32>
  func.return %0 : tensor<1x16x6x6xi32>
}

// -----

func.func @conv2d_float_array(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv2d' op Expected attribute i64 but got f64
  %0 = "graph.conv2d"(%x, %w) <{strides = array<f64: 1.0, 1.0>}> : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @conv_transpose2d_weight_channels(%x: tensor<1x16x4x4xf32>, %w: tensor<8x16x4x4xf32>) -> tensor<1x16x7x7xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op weight has 8 input channels, expected 16
  %0 = graph.conv_transpose2d %x, %w : (tensor<1x16x4x4xf32>, tensor<8x16x4x4xf32>) -> tensor<1x16x7x7xf32>
  func.return %0 : tensor<1x16x7x7xf32>
}

// -----

func.func @conv_transpose2d_bias_shape(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op bias must have shape 4, got tensor<2xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>) -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// -----

func.func @conv_transpose2d_output_padding(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x10x10xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op output_padding 2 must be smaller than its stride or dilation
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x10x10xf32>
  func.return %0 : tensor<1x4x10x10xf32>
}

// -----

func.func @conv_transpose2d_result_shape(%x: tensor<1x16x4x4xf32>, %w: tensor<16x8x4x4xf32>) -> tensor<1x16x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.conv_transpose2d' op result type tensor<1x16x8x8xf32> does not match tensor<1x8x8x8xf32>, inferred from its operands and attributes
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<16x8x4x4xf32>) -> tensor<1x16x8x8xf32>
  func.return %0 : tensor<1x16x8x8xf32>
}

// ========================================================================== linalg

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.matmul' op matmul contraction mismatch: 2x3 times 4x5
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_batch_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<5x3x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.matmul' op shapes 2 and 5 do not broadcast
  %0 = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<5x3x6xf32>
  func.return %0 : tensor<5x3x6xf32>
}

// -----

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.matmul' op matmul operands must have rank 1 or more
  %0 = graph.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gemm' op contraction mismatch: op(A) is 2x3 but op(B) is 4x5
  %0 = graph.gemm %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// Without trans_b the 1000x2048 weight does not fit.
func.func @gemm_missing_trans_b(%a: tensor<1x2048xf32>, %b: tensor<1000x2048xf32>) -> tensor<1x1000xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gemm' op contraction mismatch: op(A) is 1x2048 but op(B) is 1000x2048
  %0 = graph.gemm %a, %b : (tensor<1x2048xf32>, tensor<1000x2048xf32>) -> tensor<1x1000xf32>
  func.return %0 : tensor<1x1000xf32>
}

// -----

func.func @gemm_c_broadcast(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gemm' op C of shape 3 does not broadcast to 2x4
  %0 = graph.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// C may only broadcast to M x N, not grow it.
func.func @gemm_c_too_big(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<5x2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gemm' op C of shape 5x2x4 does not broadcast to 2x4
  %0 = graph.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<5x2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gemm' op expects 2-D A and B, got tensor<2x2x3xf32> and tensor<3x4xf32>
  %0 = graph.gemm %a, %b : (tensor<2x2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_norm_scale_shape(%x: tensor<1x8x4x4xf32>, %s: tensor<4xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.batch_norm' op scale must have shape 8 (the channels), got tensor<4xf32>
  %0 = graph.batch_norm %x, %s, %b, %m, %v : (tensor<1x8x4x4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @batch_norm_variance_shape(%x: tensor<1x8x4x4xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<1x8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.batch_norm' op variance must have shape 8 (the channels), got tensor<1x8xf32>
  %0 = graph.batch_norm %x, %s, %b, %m, %v : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @batch_norm_epsilon(%x: tensor<1x8x4x4xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.batch_norm' op epsilon must not be negative
  %0 = graph.batch_norm %x, %s, %b, %m, %v {epsilon = -1.0e-05 : f32} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// ============================================================================= pool

// -----

func.func @max_pool2d_kernel_length(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op kernel_shape must have 2 values, got 3
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// -----

func.func @max_pool2d_pads_vs_kernel(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x11x11xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op pads [2, 2, 2, 2] must be smaller than the kernel [2, 2]
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x11x11xf32>
  func.return %0 : tensor<1x4x11x11xf32>
}

// -----

func.func @max_pool2d_zero_stride(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op strides must be positive, got [0, 1]
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// -----

// ceil_mode changes the size: 5 with kernel 2, stride 2 gives 3, not 2.
func.func @max_pool2d_ceil_result(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.max_pool2d' op result type tensor<1x1x2x2xf32> does not match tensor<1x1x3x3xf32>, inferred from its operands and attributes
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode} : tensor<1x1x5x5xf32> -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @avg_pool2d_rank(%x: tensor<4x8x8xf32>) -> tensor<4x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.avg_pool2d' op expects a 4-D NCHW input, got tensor<4x8x8xf32>
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  func.return %0 : tensor<4x4x4xf32>
}

// -----

// avg_pool2d has no dilations.
func.func @avg_pool2d_dilations(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.avg_pool2d' op property 'dilations' is not defined by the operation 'graph.avg_pool2d'
  %0 = "graph.avg_pool2d"(%x) <{kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @avg_pool2d_int(%x: tensor<1x4x8x8xi32>) -> tensor<1x4x4x4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.avg_pool2d' op expects a floating-point tensor, got element type i32
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x8x8xi32> -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}

// -----

func.func @global_avg_pool_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.global_avg_pool' op expects an input of rank 3 or more, got tensor<4x8xf32>
  %0 = graph.global_avg_pool %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

func.func @global_avg_pool_result(%x: tensor<1x8x7x7xf32>) -> tensor<1x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.global_avg_pool' op result type tensor<1x8xf32> does not match tensor<1x8x1x1xf32>, inferred from its operands and attributes
  %0 = graph.global_avg_pool %x : tensor<1x8x7x7xf32> -> tensor<1x8xf32>
  func.return %0 : tensor<1x8xf32>
}

// ==================================================================== normalization

// -----

func.func @softmax_axis(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.softmax' op axis 2 is out of range for rank 2
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x10xf32>
  func.return %0 : tensor<2x10xf32>
}

// -----

func.func @softmax_int(%x: tensor<2x10xi32>) -> tensor<2x10xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.softmax' op expects a floating-point tensor, got element type i32
  %0 = graph.softmax %x : tensor<2x10xi32>
  func.return %0 : tensor<2x10xi32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x16x64xf32>, %s: tensor<16xf32>) -> tensor<2x16x64xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.layer_norm' op scale tensor<16xf32> does not broadcast to the normalized shape 64
  %0 = graph.layer_norm %x, %s : (tensor<2x16x64xf32>, tensor<16xf32>) -> tensor<2x16x64xf32>
  func.return %0 : tensor<2x16x64xf32>
}

// -----

// The scale may broadcast to the normalized shape, not beyond it.
func.func @layer_norm_scale_rank(%x: tensor<2x16x64xf32>, %s: tensor<2x1x64xf32>) -> tensor<2x16x64xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.layer_norm' op scale tensor<2x1x64xf32> does not broadcast to the normalized shape 64
  %0 = graph.layer_norm %x, %s : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  func.return %0 : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x16x64xf32>, %s: tensor<16x64xf32>, %b: tensor<16x1x64xf32>) -> tensor<2x16x64xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.layer_norm' op bias tensor<16x1x64xf32> does not broadcast to the normalized shape 16x64
  %0 = graph.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x1x64xf32>) -> tensor<2x16x64xf32>
  func.return %0 : tensor<2x16x64xf32>
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x64xf32>, %s: tensor<64xf32>) -> tensor<2x64xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.layer_norm' op epsilon must not be negative
  %0 = graph.layer_norm %x, %s {epsilon = -1.0 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  func.return %0 : tensor<2x64xf32>
}

// -----

func.func @reduce_repeated_axes(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reduce_sum' op axes [1, -2] repeat an axis
  %0 = graph.reduce_sum %x {axes = array<i64: 1, -2>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reduce_max' op axes 3 is out of range for rank 3
  %0 = graph.reduce_max %x {axes = array<i64: 3>} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reduce_mean' op axes must name at least one axis
  %0 = graph.reduce_mean %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_mean_int(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reduce_mean' op expects a floating-point tensor, got element type i32
  %0 = graph.reduce_mean %x {axes = array<i64: 1>} : tensor<2x3xi32> -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

// Without keepdims the reduced axis goes.
func.func @reduce_keepdims_result(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reduce_sum' op result type tensor<2x1xf32> does not match tensor<2xf32>, inferred from its operands and attributes
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// ==================================================================== data movement

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reshape' op cannot reshape 6 elements into 4x2 (8 elements)
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.reshape' op changes the element type: tensor<2x3xf32> to tensor<6xf16>
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  func.return %0 : tensor<6xf16>
}

// -----

func.func @expand_bad(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.expand' op 3x2 does not expand to 3x4
  %0 = graph.expand %x : tensor<3x2xf32> -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

// The target shape must hold the broadcast: 3x1 and 4 broadcast to 3x4, not to 4.
func.func @expand_lower_rank(%x: tensor<3x1xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.expand' op 3x1 does not expand to 4
  %0 = graph.expand %x : tensor<3x1xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @flatten_axis(%x: tensor<2x3x4xf32>) -> tensor<24x1xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.flatten' op axis 4 is out of range for rank 3
  %0 = graph.flatten %x {axis = 4 : i64} : tensor<2x3x4xf32> -> tensor<24x1xf32>
  func.return %0 : tensor<24x1xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.transpose' op perm [1, 1, 2] is not a permutation of 3 axes
  %0 = graph.transpose %x {perm = array<i64: 1, 1, 2>} : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  func.return %0 : tensor<3x3x4xf32>
}

// -----

func.func @transpose_perm_length(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.transpose' op perm [1, 0] is not a permutation of 3 axes
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// An f64 perm is rejected (it used to crash the verifier).
func.func @transpose_float_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.transpose' op Expected attribute i64 but got f64
  %0 = "graph.transpose"(%x) <{perm = array<f64: 1.0, 0.0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.transpose' op result type tensor<4x3x2xf32> does not match tensor<3x4x2xf32>, inferred from its operands and attributes
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  func.return %0 : tensor<4x3x2xf32>
}

// -----

func.func @concat_mismatch(%a: tensor<1x2x4x4xf32>, %b: tensor<1x3x5x4xf32>) -> tensor<1x5x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.concat' op operand tensor<1x3x5x4xf32> does not match tensor<1x2x4x4xf32> outside axis 1
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x5x4xf32>) -> tensor<1x5x4x4xf32>
  func.return %0 : tensor<1x5x4x4xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.concat' op operand tensor<3xf32> does not match tensor<2x3xf32> outside axis 1
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.concat' op axis -3 is out of range for rank 2
  %0 = graph.concat %a, %b {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.concat' op operands must share one element type, got f32, i64
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @split_sizes_sum(%x: tensor<2x12xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.split' op sizes [5, 5] do not add up to dimension 1 of size 12
  %0:2 = graph.split %x {axis = 1 : i64, sizes = array<i64: 5, 5>} : tensor<2x12xf32> -> tensor<2x5xf32>, tensor<2x5xf32>
  func.return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

func.func @split_negative_size(%x: tensor<4xf32>) -> (tensor<6xf32>, tensor<2xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.split' op sizes must not be negative, got [6, -2]
  %0:2 = "graph.split"(%x) <{sizes = array<i64: 6, -2>}> : (tensor<4xf32>) -> (tensor<6xf32>, tensor<2xf32>)
  func.return %0#0, %0#1 : tensor<6xf32>, tensor<2xf32>
}

// -----

// Three sizes but two results.
func.func @split_result_count(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.split' op result type tensor<2xf32>, tensor<2xf32> does not match tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, inferred from its operands and attributes
  %0:2 = graph.split %x {sizes = array<i64: 2, 2, 2>} : tensor<6xf32> -> tensor<2xf32>, tensor<2xf32>
  func.return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<10xf32>) -> tensor<10xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.slice' op slice steps must not be 0
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 10>, axes = array<i64: 0>, steps = array<i64: 0>} : tensor<10xf32> -> tensor<10xf32>
  func.return %0 : tensor<10xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x10xf32>) -> tensor<2x10xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.slice' op starts, ends, axes and steps must have the same length
  %0 = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: 1>} : tensor<4x10xf32> -> tensor<2x10xf32>
  func.return %0 : tensor<2x10xf32>
}

// -----

func.func @slice_repeated_axes(%x: tensor<4x10xf32>) -> tensor<2x10xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.slice' op axes [0, -2] repeat an axis
  %0 = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 2>, axes = array<i64: 0, -2>, steps = array<i64: 1, 1>} : tensor<4x10xf32> -> tensor<2x10xf32>
  func.return %0 : tensor<2x10xf32>
}

// -----

// A negative step from 8 down to 2 (exclusive) visits 8, 6, 4: 3 elements, not 4.
func.func @slice_negative_step_result(%x: tensor<10xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.slice' op result type tensor<4xf32> does not match tensor<3xf32>, inferred from its operands and attributes
  %0 = graph.slice %x {starts = array<i64: 8>, ends = array<i64: 2>, axes = array<i64: 0>, steps = array<i64: -2>} : tensor<10xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @pad_bad_mode(%x: tensor<2x3xf32>) -> tensor<4x5xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pad' op mode must be one of constant, edge, reflect, wrap, got 'symmetric'
  %0 = graph.pad %x {pads = array<i64: 1, 1, 1, 1>, mode = "symmetric"} : tensor<2x3xf32> -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_reflect_too_large(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x9x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pad' op reflect padding of axis 2 must be smaller than its size 3
  %0 = graph.pad %x {pads = array<i64: 0, 0, 3, 0, 0, 0, 3, 0>, mode = "reflect"} : tensor<1x1x3x3xf32> -> tensor<1x1x9x3xf32>
  func.return %0 : tensor<1x1x9x3xf32>
}

// -----

func.func @pad_length(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pad' op pads must have 4 values, got 2
  %0 = graph.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @pad_crop_too_much(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pad' op pads [0, -2, 0, -2] crop more than the input 2x3 holds
  %0 = graph.pad %x {pads = array<i64: 0, -2, 0, -2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_result(%x: tensor<2x3xf32>) -> tensor<4x5xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.pad' op result type tensor<4x5xf32> does not match tensor<3x5xf32>, inferred from its operands and attributes
  %0 = graph.pad %x {pads = array<i64: 1, 1, 0, 1>, mode = "edge"} : tensor<2x3xf32> -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @resize_bad_mode(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op mode must be one of nearest, linear, cubic, got 'lanczos'
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "lanczos"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_bad_coordinate_mode(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op coordinate_transformation_mode must be one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize, got 'center'
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "center"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_crop_without_roi(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op tf_crop_and_resize needs a roi
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "tf_crop_and_resize"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

// A roi means nothing to the other coordinate modes.
func.func @resize_roi_without_crop(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op roi is only used by tf_crop_and_resize
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_transformation_mode = "align_corners", roi = array<f64: 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

// The roi holds a start and an end for every axis: 8 values for a rank-4 input.
func.func @resize_roi_length(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op roi must have 8 values, got 4
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 1.5, 1.5>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.25, 0.25, 0.75, 0.75>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @resize_bad_nearest_mode(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil, got 'round'
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, nearest_mode = "round"} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_scale_mismatch(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x12xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op axis 3: size 4 scaled by 2.0 cannot give 12
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}

// -----

func.func @resize_scales_length(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op scales must have 4 values, got 2
  %0 = graph.resize %x {scales = array<f64: 2.0, 2.0>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @resize_zero_scale(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x0x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op scales must be positive, got [1.0, 1.0, 0.0, 1.0]
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 0.0, 1.0>} : tensor<1x3x4x4xf32> -> tensor<1x3x0x4xf32>
  func.return %0 : tensor<1x3x0x4xf32>
}

// -----

func.func @resize_int(%x: tensor<1x3x4x4xi32>) -> tensor<1x3x8x8xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.resize' op expects floating-point tensors of one element type, got tensor<1x3x4x4xi32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x4x4xi32> -> tensor<1x3x8x8xi32>
  func.return %0 : tensor<1x3x8x8xi32>
}

// -----

func.func @squeeze_not_one(%x: tensor<1x3x1xf32>) -> tensor<1xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.squeeze' op cannot squeeze axis 1 of size 3
  %0 = graph.squeeze %x {axes = array<i64: 1, 2>} : tensor<1x3x1xf32> -> tensor<1xf32>
  func.return %0 : tensor<1xf32>
}

// -----

func.func @unsqueeze_axis(%x: tensor<3x4xf32>) -> tensor<3x4x1xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.unsqueeze' op axes 3 is out of range for rank 3
  %0 = graph.unsqueeze %x {axes = array<i64: 3>} : tensor<3x4xf32> -> tensor<3x4x1xf32>
  func.return %0 : tensor<3x4x1xf32>
}

// -----

func.func @gather_float_indices(%x: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gather' op indices must be i32 or i64, got tensor<3xf32>
  %0 = graph.gather %x, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_i16_indices(%x: tensor<10x4xf32>, %i: tensor<3xi16>) -> tensor<3x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gather' op indices must be i32 or i64, got tensor<3xi16>
  %0 = graph.gather %x, %i : (tensor<10x4xf32>, tensor<3xi16>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_axis(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<10x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gather' op axis 2 is out of range for rank 2
  %0 = graph.gather %x, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x3xf32>
  func.return %0 : tensor<10x3xf32>
}

// -----

func.func @gather_result(%x: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<6x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'graph.gather' op result type tensor<6x4xf32> does not match tensor<2x3x4xf32>, inferred from its operands and attributes
  %0 = graph.gather %x, %i : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<6x4xf32>
  func.return %0 : tensor<6x4xf32>
}
