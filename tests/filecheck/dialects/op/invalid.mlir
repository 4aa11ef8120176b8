// RUN: bolt-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Verifier (and epilogue parser) errors of the op dialect, one per input chunk: every
// message names the op and says what is wrong.

// ============================================================================ epilogue

func.func @bias_flag_without_operand(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op the epilogue's bias flag and the bias operand disagree
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<bias, relu>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @bias_operand_without_flag(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>, %c: tensor<16xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op the epilogue's bias flag and the bias operand disagree
  %0 = op.conv2d %x, %w bias %c {epilogue = #op.epilogue<relu>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @residual_operand_without_residual(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op the epilogue's residual and the residual operand disagree
  %0 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<relu>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @residual_without_operand(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op the epilogue's residual and the residual operand disagree
  %0 = op.conv2d %x, %w {epilogue = #op.epilogue<residual = mul>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

// The bias is per output column (N = 16), not per row.
func.func @gemm_bias_wrong_size(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op bias must have shape 16, got tensor<4xf32>
  %0 = op.gemm %a, %b bias %c {epilogue = #op.epilogue<bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// NCHW: the bias is per output channel (16), not per input channel.
func.func @conv_bias_wrong_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %c: tensor<3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op bias must have shape 16, got tensor<3xf32>
  %0 = op.conv2d %x, %w bias %c {layout = "NCHW", filter_layout = "OIHW", epilogue = #op.epilogue<bias>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<3xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}

// -----

func.func @residual_wrong_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<1x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op residual type tensor<1x16xf32> must be the output type tensor<4x16xf32>
  %0 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = add>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @unknown_activation(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: unknown activation 'swish'; known: none, relu, clip, gelu, gelu_tanh, sigmoid, silu, hardswish, tanh, leaky_relu, hardsigmoid
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<swish>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @activation_missing_argument(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: activation leaky_relu takes 1 argument, got 0
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<leaky_relu>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @activation_extra_argument(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: activation relu takes 0 arguments, got 1
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<relu(1.0)>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @second_activation_wrong_arity(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: activation clip takes 2 arguments, got 1
  %0 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = add, then clip(6.0)>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// Two activations before the residual would silently lose one.
func.func @two_activations(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the epilogue has an activation twice
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<relu, sigmoid>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @alpha_twice(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the epilogue has alpha twice
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<alpha = 2.0, alpha = 0.5>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @unknown_residual_kind(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: Expected one of 'add', 'mul' (residual kind)
  %0 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = sub>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @second_activation_without_residual(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: a second activation needs a residual before it
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<relu, then sigmoid>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// ================================================================================ gemm

// -----

func.func @gemm_contraction_mismatch(%a: tensor<4x8xf32>, %b: tensor<6x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op contraction mismatch: A is 4x8 but B is 6x16
  %0 = op.gemm %a, %b : (tensor<4x8xf32>, tensor<6x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// A "col" B is stored N x K: 8x16 read as col is N = 8, K = 16, which does not match A's K = 8.
func.func @gemm_col_contraction_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op contraction mismatch: A is 4x8 but B is 16x8
  %0 = op.gemm %a, %b {layout_b = "col"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

func.func @gemm_bad_layout(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op layout_a must be one of row, col, got 'column'
  %0 = op.gemm %a, %b {layout_a = "column"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

func.func @gemm_wrong_result(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op {{.*}} 2 and 3 do not broadcast
  %0 = op.gemm %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  func.return %0 : tensor<2x4x16xf32>
}

// -----

func.func @gemm_result_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op result type tensor<16x4xf32> does not match tensor<4x16xf32>, inferred from the operands and attributes
  %0 = op.gemm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<16x4xf32>
  func.return %0 : tensor<16x4xf32>
}

// -----

func.func @gemm_rank1(%a: tensor<8xf32>, %b: tensor<8x16xf32>) -> tensor<16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op GEMM operands need rank 2 or more, got 1 and 2
  %0 = op.gemm %a, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @gemm_mixed_types(%a: tensor<4x8xf16>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gemm' op A and B must share one element type
  %0 = op.gemm %a, %b : (tensor<4x8xf16>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// ================================================================================ conv

// -----

func.func @conv_bad_layout(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op layout must be one of NHWC, NCHW, got 'NWHC'
  %0 = op.conv2d %x, %w {layout = "NWHC"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

// A transposed conv's filter layout is not a conv's.
func.func @conv_bad_filter_layout(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op filter_layout must be one of OHWI, OIHW, got 'IHWO'
  %0 = op.conv2d %x, %w {filter_layout = "IHWO"} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @conv_transpose_bad_filter_layout(%x: tensor<1x4x4x8xf32>, %w: tensor<8x2x2x4xf32>) -> tensor<1x5x5x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv_transpose2d' op filter_layout must be one of IHWO, IOHW, got 'OHWI'
  %0 = op.conv_transpose2d %x, %w {filter_layout = "OHWI"} : (tensor<1x4x4x8xf32>, tensor<8x2x2x4xf32>) -> tensor<1x5x5x4xf32>
  func.return %0 : tensor<1x5x5x4xf32>
}

// -----

func.func @conv_groups_not_dividing(%x: tensor<1x8x8x6xf32>, %w: tensor<8x3x3x2xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op groups 4 must divide input channels 6 and output channels 8
  %0 = op.conv2d %x, %w {groups = 4 : i64} : (tensor<1x8x8x6xf32>, tensor<8x3x3x2xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

func.func @conv_filter_channels(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op filter has 4 input channels per group, expected 2
  %0 = op.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

func.func @conv_transpose_groups_not_dividing(%x: tensor<1x4x4x6xf32>, %w: tensor<6x3x3x2xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv_transpose2d' op filter has 6 input channels for an input of 6 in 4 groups
  %0 = op.conv_transpose2d %x, %w {groups = 4 : i64} : (tensor<1x4x4x6xf32>, tensor<6x3x3x2xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

func.func @conv_result_type(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op result type tensor<1x8x8x16xf32> does not match tensor<1x6x6x16xf32>, inferred from the operands and attributes
  %0 = op.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32>
  func.return %0 : tensor<1x8x8x16xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op strides must be positive
  %0 = op.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @conv_mixed_types(%x: tensor<1x8x8x3xf16>, %w: tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.conv2d' op the input and the filter must share one element type, got f16 and f32
  %0 = op.conv2d %x, %w : (tensor<1x8x8x3xf16>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf16>
  func.return %0 : tensor<1x6x6x16xf16>
}

// ================================================================================= b2b

// -----

func.func @b2b_conv_second_not_1x1(%x: tensor<1x8x8x4xf32>, %w0: tensor<16x3x3x4xf32>, %w1: tensor<8x3x3x16xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_conv2d' op the second conv must be 1x1, got a 3x3 filter
  %0 = op.b2b_conv2d %x, %w0, %w1 : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8x3x3x16xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

func.func @b2b_conv_channels(%x: tensor<1x8x8x4xf32>, %w0: tensor<16x3x3x4xf32>, %w1: tensor<8x1x1x12xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_conv2d' op filter has 12 input channels per group, expected 16
  %0 = op.b2b_conv2d %x, %w0, %w1 : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8x1x1x12xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

func.func @b2b_gemm_epilogue_residual(%a: tensor<4x8xf32>, %b0: tensor<8x16xf32>, %b1: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_gemm' op back-to-back epilogues take no residual
  %0 = op.b2b_gemm %a, %b0, %b1 {epilogue1 = #op.epilogue<residual = add>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

func.func @b2b_conv_epilogue_residual(%x: tensor<1x8x8x4xf32>, %w0: tensor<16x3x3x4xf32>, %w1: tensor<8x1x1x16xf32>) -> tensor<1x6x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_conv2d' op back-to-back epilogues take no residual
  %0 = op.b2b_conv2d %x, %w0, %w1 {epilogue0 = #op.epilogue<relu, residual = mul>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8x1x1x16xf32>) -> tensor<1x6x6x8xf32>
  func.return %0 : tensor<1x6x6x8xf32>
}

// -----

// bias0 is per intermediate column (N0 = 16).
func.func @b2b_gemm_bias_size(%a: tensor<4x8xf32>, %b0: tensor<8x16xf32>, %b1: tensor<16x8xf32>, %c0: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_gemm' op bias must have shape 16, got tensor<8xf32>
  %0 = op.b2b_gemm %a, %b0, %b1 bias0 %c0 {epilogue0 = #op.epilogue<bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

func.func @b2b_gemm_mixed_types(%a: tensor<4x8xf16>, %b0: tensor<8x16xf16>, %b1: tensor<16x8xf32>) -> tensor<4x8xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.b2b_gemm' op A, B0 and B1 must share one element type, got f16 and f32
  %0 = op.b2b_gemm %a, %b0, %b1 : (tensor<4x8xf16>, tensor<8x16xf16>, tensor<16x8xf32>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// ================================================================================ pool

// -----

func.func @pool_without_kernel_shape(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pool2d' op a max pool needs kernel_shape
  %0 = op.pool2d %x {kind = "max", strides = array<i64: 2, 2>} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @pool_unknown_kind(%x: tensor<1x8x8x4xf32>) -> tensor<1x1x1x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pool2d' op kind must be one of max, avg, global_avg, global_max, got 'sum'
  %0 = op.pool2d %x {kind = "sum"} : tensor<1x8x8x4xf32> -> tensor<1x1x1x4xf32>
  func.return %0 : tensor<1x1x1x4xf32>
}

// -----

func.func @avg_pool_int(%x: tensor<1x8x8x4xi32>) -> tensor<1x1x1x4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pool2d' op average pooling needs a floating-point tensor
  %0 = op.pool2d %x {kind = "global_avg"} : tensor<1x8x8x4xi32> -> tensor<1x1x1x4xi32>
  func.return %0 : tensor<1x1x1x4xi32>
}

// -----

func.func @avg_pool_dilated(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pool2d' op an avg pool takes no dilations, got [2, 2]
  %0 = op.pool2d %x {kind = "avg", kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 2>} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// ========================================================================= elementwise

// -----

func.func @elementwise_argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.elementwise' op body argument f16 does not match the input's element type f32
  %0 = op.elementwise (%x) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    op.yield %w : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @elementwise_argument_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.elementwise' op the body takes 1 arguments for 2 inputs
  %0 = op.elementwise (%x, %y) {
  ^bb0(%e: f32):
    op.yield %e : f32
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @elementwise_yield_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.elementwise' op the yielded value must have the output's element type
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    op.yield %e : f32
  } : (tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @elementwise_not_broadcasting(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.elementwise' op input tensor<3xf32> does not broadcast to the result shape (2, 4)
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    op.yield %e : f32
  } : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @yield_outside_elementwise(%x: f32) -> f32 {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.yield' op {{.*}}expects parent op 'op.elementwise'
  op.yield %x : f32
}

// -----

func.func @unary_unknown_fn(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op fn must be one of relu, clip, gelu, {{.*}}, reciprocal, not, got 'swish'
  %0 = op.unary swish %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @unary_missing_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op clip takes 2 arguments, got 1
  %0 = op.unary clip %x {args = array<f64: 6.0>} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @unary_extra_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op exp takes 0 arguments, got 1
  %0 = op.unary exp %x {args = array<f64: 2.0>} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @unary_float_only(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op sigmoid needs a floating-point tensor
  %0 = op.unary sigmoid %x : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @binary_operand_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op operands must share one element type
  %0 = op.binary add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @binary_unknown_fn(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op fn must be one of add, sub, mul, div, pow, equal, greater, greater_equal, less, less_equal, and, or, xor, got 'max'
  %0 = op.binary max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @binary_equal_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op result element type must be i1
  %0 = op.binary equal %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @binary_comparison_result(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op result element type must be i1
  %0 = op.binary greater_equal %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @binary_logical_operands(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op xor needs i1 operands
  %0 = op.binary xor %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @unary_not_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op not needs an i1 tensor
  %0 = op.unary not %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @binary_not_broadcasting(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.binary' op result shape (3, 3) is not the broadcast shape (2, 3)
  %0 = op.binary add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}

// -----

func.func @select_condition_not_i1(%c: tensor<4xi32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.select' op the condition must be i1
  %0 = op.select %c, %a, %b : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @select_value_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.select' op the two values and the result must share one element type, got f32, f16 and f32
  %0 = op.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @cast_shape(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.cast' op cast keeps the shape
  %0 = op.cast %x : tensor<2x3xf32> to tensor<6xf16>
  func.return %0 : tensor<6xf16>
}

// -----

func.func @cast_round_mode(%x: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.cast' op round_mode must be one of up, down, nearest, got 'even'
  %0 = op.cast %x {round_mode = "even"} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  func.return %0 : tensor<4xf8E8M0FNU>
}

// ======================================================================= data movement

// -----

func.func @layout_transform_not_a_permutation(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.layout_transform' op perm [0, 2, 2, 1] is not a permutation of 4 axes
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 2, 1>} : tensor<1x3x8x8xf32> -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @layout_transform_wrong_rank(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.layout_transform' op perm [0, 2, 1] is not a permutation of 4 axes
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 1>} : tensor<1x3x8x8xf32> -> tensor<1x8x3xf32>
  func.return %0 : tensor<1x8x3xf32>
}

// -----

func.func @layout_transform_result(%x: tensor<1x3x8x6xf32>) -> tensor<1x6x8x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.layout_transform' op result type tensor<1x6x8x3xf32> does not match tensor<1x8x6x3xf32>
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x6xf32> -> tensor<1x6x8x3xf32>
  func.return %0 : tensor<1x6x8x3xf32>
}

// -----

func.func @reshape_element_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.reshape' op cannot reshape tensor<2x3xf32> into tensor<7xf32>
  %0 = op.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.reshape' op reshape keeps the element type
  %0 = op.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  func.return %0 : tensor<6xf16>
}

// -----

func.func @pad_mode(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pad' op mode must be one of constant, edge, reflect, wrap, got 'symmetric'
  %0 = op.pad %x {pads = array<i64: 1, 0, 1, 0>, mode = "symmetric"} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @pad_length(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.pad' op pads must have 4 values
  %0 = op.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.concat' op operand tensor<3x3xf32> does not match tensor<2x3xf32> outside axis 1
  %0 = op.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x6xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.concat' op operands must share one element type, got f32 and f16
  %0 = op.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_nothing() -> tensor<0xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.concat' op expects at least one operand
  %0 = "op.concat"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  func.return %0 : tensor<0xf32>
}

// -----

func.func @slice_result(%x: tensor<2x96xf32>) -> tensor<2x33xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.slice' op result type tensor<2x33xf32> does not match tensor<2x32xf32>
  %0 = op.slice %x {starts = array<i64: 32>, ends = array<i64: 64>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x96xf32> -> tensor<2x33xf32>
  func.return %0 : tensor<2x33xf32>
}

// -----

func.func @gather_result(%t: tensor<50x32xf32>, %i: tensor<8xi64>) -> tensor<8x50xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gather' op result type tensor<8x50xf32> does not match tensor<8x32xf32>
  %0 = op.gather %t, %i {axis = 0 : i64} : (tensor<50x32xf32>, tensor<8xi64>) -> tensor<8x50xf32>
  func.return %0 : tensor<8x50xf32>
}

// -----

func.func @gather_float_indices(%t: tensor<50x32xf32>, %i: tensor<8xf32>) -> tensor<8x32xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.gather' op indices must be i32 or i64, got tensor<8xf32>
  %0 = op.gather %t, %i {axis = 0 : i64} : (tensor<50x32xf32>, tensor<8xf32>) -> tensor<8x32xf32>
  func.return %0 : tensor<8x32xf32>
}

// -----

func.func @resize_shape(%x: tensor<1x4x4x8xf32>) -> tensor<1x8x6x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.resize' op axis 2: size 4 scaled by 2.0 cannot give 6
  %0 = op.resize %x {scales = array<f64: 1.0, 2.0, 2.0, 1.0>} : tensor<1x4x4x8xf32> -> tensor<1x8x6x8xf32>
  func.return %0 : tensor<1x8x6x8xf32>
}

// -----

func.func @resize_mode(%x: tensor<1x4x4x8xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.resize' op mode must be one of nearest, linear, cubic, got 'bilinear'
  %0 = op.resize %x {scales = array<f64: 1.0, 2.0, 2.0, 1.0>, mode = "bilinear"} : tensor<1x4x4x8xf32> -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.softmax' op axis 2 is out of range for rank 2
  %0 = op.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8x32xf32>, %g: tensor<16xf32>) -> tensor<2x8x32xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.layer_norm' op tensor<16xf32> does not broadcast to the normalized shape (32,)
  %0 = op.layer_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x32xf32>, tensor<16xf32>) -> tensor<2x8x32xf32>
  func.return %0 : tensor<2x8x32xf32>
}

// -----

func.func @reduce_kind(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.reduce' op kind must be one of mean, sum, max, got 'min'
  %0 = op.reduce %x {kind = "min", axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @constant_type(%x: tensor<2xf32>) -> tensor<3xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.constant' op result type tensor<3xf32> does not match the value's tensor<2xf32>
  %0 = "op.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'op.unary' op expects statically shaped tensors, got tensor<?x4xf32>
  %0 = op.unary relu %x : tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
