// RUN: bolt-opt %s -p fuse-epilogue | filecheck %s
// RUN: bolt-opt %s -p fuse-epilogue | bolt-opt -p fuse-epilogue | filecheck %s
// RUN: bolt-opt %s -p fuse-epilogue --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// The epilogue is `act2(act(alpha * acc + beta * bias) <residual add|mul> residual)`; each
// op.unary/op.binary that directly follows a GEMM or conv, in that order, moves into it.
// Running the pass twice changes nothing more (second RUN line).

// STATS:      fuse-epilogue
// STATS-NEXT:   12 bias fused
// STATS-NEXT:    3 activation relu fused
// STATS-NEXT:    2 activation clip fused
// STATS-NEXT:    2 activation gelu fused
// STATS-NEXT:    1 activation gelu_tanh fused
// STATS-NEXT:    1 activation sigmoid fused
// STATS-NEXT:    1 activation silu fused
// STATS-NEXT:    1 activation hardswish fused
// STATS-NEXT:    1 activation tanh fused
// STATS-NEXT:    1 activation leaky_relu fused
// STATS-NEXT:    1 activation hardsigmoid fused
// STATS-NEXT:    3 residual add fused
// STATS-NEXT:    2 residual mul fused
// STATS-NEXT:    2 activation relu after the residual fused
// STATS-NEXT:    1 activation tanh after the residual fused
// STATS-NOT:  {{[0-9]}}

// ------------------------------------------------------------------------------ bias

// A per-channel [K, 1, 1] constant on an NCHW conv becomes a [K] bias.
// CHECK-LABEL: func.func @conv_nchw_bias_k11
func.func @conv_nchw_bias_k11(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK-NOT:  op.binary
  // CHECK:      %[[B:[0-9]+]] = op.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  // CHECK-NEXT: %[[Y:.*]] = op.conv2d %x, %w bias %[[B]] {layout = "NCHW", filter_layout = "OIHW", epilogue = #op.epilogue<bias>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: func.return %[[Y]] : tensor<1x4x4x4xf32>
  %b = op.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = op.binary add %0, %b : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
  func.return %1 : tensor<1x4x4x4xf32>
}

// [1, K, 1, 1] on the left of the add, and a transposed NCHW conv.
// CHECK-LABEL: func.func @conv_transpose_nchw_bias_1k11
func.func @conv_transpose_nchw_bias_1k11(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK-NOT:  op.binary
  // CHECK:      %[[B:[0-9]+]] = op.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = op.conv_transpose2d %x, %w bias %[[B]] {layout = "NCHW", filter_layout = "IOHW", strides = array<i64: 2, 2>, epilogue = #op.epilogue<bias>}
  // CHECK-NEXT: func.return %[[Y]]
  %b = op.constant dense<[[[[0.5]], [[-0.5]]]]> : tensor<1x2x1x1xf32>
  %0 = op.conv_transpose2d %x, %w {layout = "NCHW", filter_layout = "IOHW", strides = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %1 = op.binary add %b, %0 : (tensor<1x2x1x1xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  func.return %1 : tensor<1x2x8x8xf32>
}

// NHWC: the channels are the last axis, [K] and [1, 1, 1, K] are biases.
// CHECK-LABEL: func.func @conv_nhwc_bias
func.func @conv_nhwc_bias(%x: tensor<1x6x6x3xf32>, %w: tensor<4x3x3x3xf32>, %u: tensor<3x2x2x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x12x12x4xf32>) {
  // CHECK-NOT:  op.binary
  // A [K] constant is the bias as it is: no copy.
  // CHECK:      %[[Y:.*]] = op.conv2d %x, %w bias %b1 {epilogue = #op.epilogue<bias>} : (tensor<1x6x6x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK:      %[[B2:[0-9]+]] = op.constant dense<[4.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.conv_transpose2d %x, %u bias %[[B2]] {strides = array<i64: 2, 2>, epilogue = #op.epilogue<bias>} : (tensor<1x6x6x3xf32>, tensor<3x2x2x4xf32>, tensor<4xf32>) -> tensor<1x12x12x4xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[Z]]
  %b1 = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b2 = op.constant dense<[[[[4.0, 3.0, 2.0, 1.0]]]]> : tensor<1x1x1x4xf32>
  %0 = op.conv2d %x, %w : (tensor<1x6x6x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = op.binary add %0, %b1 : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %2 = op.conv_transpose2d %x, %u {strides = array<i64: 2, 2>} : (tensor<1x6x6x3xf32>, tensor<3x2x2x4xf32>) -> tensor<1x12x12x4xf32>
  %3 = op.binary add %b2, %2 : (tensor<1x1x1x4xf32>, tensor<1x12x12x4xf32>) -> tensor<1x12x12x4xf32>
  func.return %1, %3 : tensor<1x4x4x4xf32>, tensor<1x12x12x4xf32>
}

// A GEMM's channels are its columns: [N] and [1, N]; a batched GEMM too.
// CHECK-LABEL: func.func @gemm_bias
func.func @gemm_bias(%a: tensor<2x8xf32>, %w: tensor<4x8xf32>, %q: tensor<3x2x8xf32>) -> (tensor<2x4xf32>, tensor<3x2x4xf32>) {
  // CHECK-NOT:  op.binary
  // CHECK:      %[[B:[0-9]+]] = op.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  // CHECK-NEXT: %[[Y:.*]] = op.gemm %a, %w bias %[[B]] {layout_b = "col", epilogue = #op.epilogue<alpha = 0.5, bias>} : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK:      %[[Z:.*]] = op.gemm %q, %w bias %c {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<3x2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<3x2x4xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[Z]]
  %b = op.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %c = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = op.gemm %a, %w {layout_b = "col", epilogue = #op.epilogue<alpha = 0.5>} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = op.binary add %0, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %2 = op.gemm %q, %w {layout_b = "col"} : (tensor<3x2x8xf32>, tensor<4x8xf32>) -> tensor<3x2x4xf32>
  %3 = op.binary add %2, %c : (tensor<3x2x4xf32>, tensor<4xf32>) -> tensor<3x2x4xf32>
  func.return %1, %3 : tensor<2x4xf32>, tensor<3x2x4xf32>
}

// A bias that is not a constant: used as it is when it is [N], reshaped otherwise.
// CHECK-LABEL: func.func @bias_from_arguments
func.func @bias_from_arguments(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>, %c: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NEXT: %[[Y:.*]] = op.gemm %a, %w bias %b {epilogue = #op.epilogue<bias>}
  // CHECK-NEXT: %[[R:.*]] = op.reshape %c : tensor<1x4xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.gemm %a, %w bias %[[R]] {epilogue = #op.epilogue<bias>}
  // CHECK-NEXT: func.return %[[Y]], %[[Z]]
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.binary add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = op.binary add %c, %2 : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1, %3 : tensor<2x4xf32>, tensor<2x4xf32>
}

// A second constant bias is added into the first: [1, 2, 3, 4] + [0.5, 0.5, -3, 1].
// CHECK-LABEL: func.func @second_bias_summed
func.func @second_bias_summed(%x: tensor<1x2x2x8xf32>, %w: tensor<4x1x1x8xf32>) -> tensor<1x2x2x4xf32> {
  // CHECK-NOT:  op.binary
  // CHECK:      %[[B:[0-9]+]] = op.constant dense<[1.500000e+00, 2.500000e+00, 0.000000e+00, 5.000000e+00]> : tensor<4xf32>
  // CHECK-NEXT: %[[Y:.*]] = op.conv2d %x, %w bias %[[B]] {epilogue = #op.epilogue<bias>}
  // CHECK-NEXT: func.return %[[Y]]
  %b = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c = op.constant dense<[[[[0.5, 0.5, -3.0, 1.0]]]]> : tensor<1x1x1x4xf32>
  %0 = op.conv2d %x, %w bias %b {epilogue = #op.epilogue<bias>} : (tensor<1x2x2x8xf32>, tensor<4x1x1x8xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %1 = op.binary add %0, %c : (tensor<1x2x2x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %1 : tensor<1x2x2x4xf32>
}

// ----------------------------------------------------------------------- activations

// Every epilogue activation, with its arguments; clip's open bound is the largest double.
// CHECK-LABEL: func.func @activations
func.func @activations(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NOT:  op.unary
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<relu>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<clip(0.0, 6.0)>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<clip(-1.7976931348623157e+308, 6.0)>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<gelu>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<gelu_tanh>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<sigmoid>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<silu>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<hardswish>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<tanh>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<leaky_relu(0.01)>}
  // CHECK-NEXT: op.gemm %a, %w {epilogue = #op.epilogue<hardsigmoid(0.2, 0.5)>}
  // CHECK-NEXT: func.return
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.unary relu %0 : tensor<2x4xf32>
  %2 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = op.unary clip %2 {args = array<f64: 0.0, 6.0>} : tensor<2x4xf32>
  %4 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %5 = op.unary clip %4 {args = array<f64: -1.7976931348623157e+308, 6.0>} : tensor<2x4xf32>
  %6 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %7 = op.unary gelu %6 : tensor<2x4xf32>
  %8 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %9 = op.unary gelu_tanh %8 : tensor<2x4xf32>
  %10 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %11 = op.unary sigmoid %10 : tensor<2x4xf32>
  %12 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %13 = op.unary silu %12 : tensor<2x4xf32>
  %14 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %15 = op.unary hardswish %14 : tensor<2x4xf32>
  %16 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %17 = op.unary tanh %16 : tensor<2x4xf32>
  %18 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %19 = op.unary leaky_relu %18 {args = array<f64: 0.01>} : tensor<2x4xf32>
  %20 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %21 = op.unary hardsigmoid %20 {args = array<f64: 0.2, 0.5>} : tensor<2x4xf32>
  func.return %1, %3, %5, %7, %9, %11, %13, %15, %17, %19, %21 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// Bias then activation, on a conv.
// CHECK-LABEL: func.func @bias_then_activation
func.func @bias_then_activation(%x: tensor<1x4x4x3xf32>, %w: tensor<2x1x1x3xf32>) -> tensor<1x4x4x2xf32> {
  // CHECK-NOT:  op.unary
  // CHECK:      op.conv2d %x, %w bias %{{.*}} {epilogue = #op.epilogue<bias, relu>}
  // CHECK-NEXT: func.return
  %b = op.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = op.conv2d %x, %w : (tensor<1x4x4x3xf32>, tensor<2x1x1x3xf32>) -> tensor<1x4x4x2xf32>
  %1 = op.binary add %0, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = op.unary relu %1 : tensor<1x4x4x2xf32>
  func.return %2 : tensor<1x4x4x2xf32>
}

// ------------------------------------------------------------------------- residuals

// A tensor of the output's type, added or multiplied, on either side.
// CHECK-LABEL: func.func @residuals
func.func @residuals(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NOT:  op.binary
  // CHECK-NEXT: %[[Y:.*]] = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = add>} : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = mul>} : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[Z]]
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.binary add %0, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = op.binary mul %r, %2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1, %3 : tensor<2x4xf32>, tensor<2x4xf32>
}

// ResNet's block end: conv, bias, + identity, relu: one conv.
// CHECK-LABEL: func.func @resnet_block
func.func @resnet_block(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK-NOT:  op.binary
  // CHECK-NOT:  op.unary
  // CHECK:      %[[B:[0-9]+]] = op.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  // CHECK-NEXT: %[[Y:.*]] = op.conv2d %x, %w bias %[[B]] residual %x {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, residual = add, then relu>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: func.return %[[Y]] : tensor<1x4x6x6xf32>
  %b = op.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = op.binary add %0, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = op.binary add %x, %1 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %3 = op.unary relu %2 : tensor<1x4x6x6xf32>
  func.return %3 : tensor<1x4x6x6xf32>
}

// Every step: alpha from before, bias, activation, residual, second activation.
// CHECK-LABEL: func.func @whole_epilogue
func.func @whole_epilogue(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK-NOT:  op.binary
  // CHECK-NOT:  op.unary
  // CHECK:      op.gemm %a, %w bias %{{.*}} residual %r {epilogue = #op.epilogue<alpha = 0.5, bias, gelu, residual = mul, then tanh>}
  // CHECK-NEXT: func.return
  %b = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = op.gemm %a, %w {epilogue = #op.epilogue<alpha = 0.5>} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.binary add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = op.unary gelu %1 : tensor<2x4xf32>
  %3 = op.binary mul %2, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = op.unary tanh %3 : tensor<2x4xf32>
  func.return %4 : tensor<2x4xf32>
}

// ------------------------------------------------------------------------ left alone

// The result has two users: nothing moves.
// CHECK-LABEL: func.func @two_users
func.func @two_users(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NEXT: %[[Y:.*]] = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.unary relu %[[Y]] : tensor<2x4xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[Z]]
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.unary relu %0 : tensor<2x4xf32>
  func.return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// After `then relu` there is no room for the sigmoid; after a residual no bias, and no
// second residual.
// CHECK-LABEL: func.func @after_the_last_step
func.func @after_the_last_step(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK:      %[[Y:.*]] = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = add, then relu>}
  // CHECK-NEXT: %[[S:.*]] = op.unary sigmoid %[[Y]] : tensor<2x4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = add>}
  // CHECK-NEXT: %[[B:.*]] = op.binary add %[[Z]], %{{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %[[V:.*]] = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = mul>}
  // CHECK-NEXT: %[[M:.*]] = op.binary add %[[V]], %r
  // CHECK-NEXT: func.return %[[S]], %[[B]], %[[M]]
  %b = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = add>} : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = op.unary relu %0 : tensor<2x4xf32>
  %2 = op.unary sigmoid %1 : tensor<2x4xf32>
  %3 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %4 = op.binary add %3, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = op.binary add %4, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %6 = op.gemm %a, %w residual %r {epilogue = #op.epilogue<residual = mul>} : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %7 = op.binary add %6, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2, %5, %7 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A bias after the activation would be added before it: out of order, left.
// CHECK-LABEL: func.func @bias_after_activation
func.func @bias_after_activation(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK:      %[[Y:.*]] = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW", epilogue = #op.epilogue<relu>}
  // CHECK-NEXT: %[[Z:.*]] = op.binary add %[[Y]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: func.return %[[Z]]
  %b = op.constant dense<[[[0.5]], [[-0.5]]]> : tensor<2x1x1xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = op.unary relu %0 : tensor<1x2x4x4xf32>
  %2 = op.binary add %1, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %2 : tensor<1x2x4x4xf32>
}

// [W] against an NCHW output broadcasts along W; [1, 1, H, W] along the pixels; a
// GEMM's [M, 1] along its rows: none of them is a bias.
// CHECK-LABEL: func.func @not_per_channel
func.func @not_per_channel(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x1x1xf32>, %p: tensor<1x1x4x4xf32>, %a: tensor<2x8xf32>, %v: tensor<8x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<2x4xf32>) {
  // CHECK:      %[[Y:.*]] = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"}
  // CHECK-NEXT: %{{.*}} = op.binary add %[[Y]], %{{.*}} : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %[[Z:.*]] = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"}
  // CHECK-NEXT: %{{.*}} = op.binary add %[[Z]], %p : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %[[G:.*]] = op.gemm %a, %v :
  // CHECK-NEXT: %{{.*}} = op.binary add %[[G]], %{{.*}} : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return
  %b = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %rows = op.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %1 = op.binary add %0, %b : (tensor<1x4x4x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %2 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"} : (tensor<1x3x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %3 = op.binary add %2, %p : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  %4 = op.gemm %a, %v : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %5 = op.binary add %4, %rows : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %1, %3, %5 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<2x4xf32>
}

// exp and erf are math, not epilogue activations; sub and per-channel mul are not fused.
// CHECK-LABEL: func.func @not_epilogue_ops
func.func @not_epilogue_ops(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK:      %[[Y0:.*]] = op.gemm %a, %w :
  // CHECK-NEXT: op.unary exp %[[Y0]]
  // CHECK-NEXT: %[[Y1:.*]] = op.gemm %a, %w :
  // CHECK-NEXT: op.unary erf %[[Y1]]
  // CHECK-NEXT: %[[Y2:.*]] = op.gemm %a, %w :
  // CHECK-NEXT: op.binary sub %[[Y2]], %r
  // CHECK-NEXT: %[[Y3:.*]] = op.gemm %a, %w :
  // CHECK-NEXT: op.binary mul %[[Y3]], %{{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return
  %s = op.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.unary exp %0 : tensor<2x4xf32>
  %2 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = op.unary erf %2 : tensor<2x4xf32>
  %4 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %5 = op.binary sub %4, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %6 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %7 = op.binary mul %6, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1, %3, %5, %7 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A residual of another shape broadcasts the output up: not the output's type.
// CHECK-LABEL: func.func @residual_shape_differs
func.func @residual_shape_differs(%a: tensor<2x8xf32>, %w: tensor<8x4xf32>, %r: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = op.gemm %a, %w :
  // CHECK-NEXT: op.binary add %[[Y]], %r : (tensor<2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  // CHECK-NEXT: func.return
  %0 = op.gemm %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = op.binary add %0, %r : (tensor<2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  func.return %1 : tensor<3x2x4xf32>
}
