// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.gemm: layouts, batching, and every form of the `#op.epilogue<...>` attribute:
//   out = act2(act(alpha * acc + beta * bias) (+|*) residual)

// CHECK-LABEL: func.func @gemm_plain
func.func @gemm_plain(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: %{{.*}} = op.gemm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %0 = op.gemm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// Layouts and an epilogue spelled at their defaults are not printed.
// CHECK-LABEL: func.func @gemm_explicit_defaults
func.func @gemm_explicit_defaults(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: %{{.*}} = op.gemm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NOT: layout
  // CHECK-NOT: epilogue
  // CHECK: func.return
  %0 = op.gemm %a, %b {layout_a = "row", layout_b = "row", epilogue = #op.epilogue<>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// An epilogue whose items are all at their defaults is the identity, and is elided too.
// CHECK-LABEL: func.func @gemm_identity_epilogue_spelled_out
func.func @gemm_identity_epilogue_spelled_out(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: %{{.*}} = op.gemm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NOT: epilogue
  // CHECK: func.return
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<alpha = 1.0, beta = 1, none>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// A is stored K x M ("col"), B is stored N x K ("col", a Linear layer's weight).
// CHECK-LABEL: func.func @gemm_col_layouts
func.func @gemm_col_layouts(%at: tensor<8x4xf32>, %bt: tensor<16x8xf32>, %b: tensor<8x16xf32>, %a: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: %{{.*}} = op.gemm %at, %bt {layout_a = "col", layout_b = "col"} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %0 = op.gemm %at, %bt {layout_a = "col", layout_b = "col"} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // CHECK: %{{.*}} = op.gemm %at, %b {layout_a = "col"} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = op.gemm %at, %b {layout_a = "col"} : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: %{{.*}} = op.gemm %a, %bt {layout_b = "col"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %2 = op.gemm %a, %bt {layout_b = "col"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// Leading batch dimensions broadcast: attention's batched GEMMs.
// CHECK-LABEL: func.func @gemm_batched
func.func @gemm_batched(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>, %k: tensor<2x4x8x16xf32>, %x: tensor<3x1x4x8xf32>, %w: tensor<2x8x5xf32>, %v: tensor<6x8xf16>, %y: tensor<5x6x8xf16>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<3x2x4x5xf32>, tensor<5x6x6xf16>) {
  // CHECK: %{{.*}} = op.gemm %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = op.gemm %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  // Q @ K^T with K as a "col" B operand.
  // CHECK: %{{.*}} = op.gemm %q, %k {layout_b = "col"} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %1 = op.gemm %q, %k {layout_b = "col"} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: %{{.*}} = op.gemm %x, %w : (tensor<3x1x4x8xf32>, tensor<2x8x5xf32>) -> tensor<3x2x4x5xf32>
  %2 = op.gemm %x, %w : (tensor<3x1x4x8xf32>, tensor<2x8x5xf32>) -> tensor<3x2x4x5xf32>
  // A 2-D A against a batched B, in f16.
  // CHECK: %{{.*}} = op.gemm %v, %y {layout_b = "col"} : (tensor<6x8xf16>, tensor<5x6x8xf16>) -> tensor<5x6x6xf16>
  %3 = op.gemm %v, %y {layout_b = "col"} : (tensor<6x8xf16>, tensor<5x6x8xf16>) -> tensor<5x6x6xf16>
  func.return %0, %1, %2, %3 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<3x2x4x5xf32>, tensor<5x6x6xf16>
}

// CHECK-LABEL: func.func @epilogue_bias
func.func @epilogue_bias(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: %{{.*}} = op.gemm %a, %b bias %bias {epilogue = #op.epilogue<bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %0 = op.gemm %a, %b bias %bias {epilogue = #op.epilogue<bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// Every activation, with its arguments printed as floats.
// CHECK-LABEL: func.func @epilogue_activations
func.func @epilogue_activations(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<relu>}
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<relu>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<clip(0.0, 6.0)>}
  %1 = op.gemm %a, %b {epilogue = #op.epilogue<clip(0, 6)>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<gelu>}
  %2 = op.gemm %a, %b {epilogue = #op.epilogue<gelu>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<gelu_tanh>}
  %3 = op.gemm %a, %b {epilogue = #op.epilogue<gelu_tanh>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<sigmoid>}
  %4 = op.gemm %a, %b {epilogue = #op.epilogue<sigmoid>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<silu>}
  %5 = op.gemm %a, %b {epilogue = #op.epilogue<silu>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<hardswish>}
  %6 = op.gemm %a, %b {epilogue = #op.epilogue<hardswish>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<tanh>}
  %7 = op.gemm %a, %b {epilogue = #op.epilogue<tanh>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<leaky_relu(0.1)>}
  %8 = op.gemm %a, %b {epilogue = #op.epilogue<leaky_relu(0.1)>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<hardsigmoid(0.2, 0.5)>}
  %9 = op.gemm %a, %b {epilogue = #op.epilogue<hardsigmoid(0.2, 0.5)>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // A clip without a lower bound, as lower-graph-to-op writes it.
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<clip(-1.7976931348623157e+308, 6.0)>}
  %10 = op.gemm %a, %b {epilogue = #op.epilogue<clip(-1.7976931348623157e+308, 6.0)>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %10 : tensor<4x16xf32>
}

// alpha and beta; beta scales the bias.
// CHECK-LABEL: func.func @epilogue_alpha_beta
func.func @epilogue_alpha_beta(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: op.gemm %a, %b {epilogue = #op.epilogue<alpha = 0.125>}
  %0 = op.gemm %a, %b {epilogue = #op.epilogue<alpha = 0.125>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK: op.gemm %a, %b bias %bias {epilogue = #op.epilogue<alpha = -2.0, beta = 0.5, bias>}
  %1 = op.gemm %a, %b bias %bias {epilogue = #op.epilogue<alpha = -2.0, beta = 0.5, bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // Numbers that Python writes in exponent form without a decimal point still read back.
  // CHECK: op.gemm %a, %b bias %bias {epilogue = #op.epilogue<alpha = 1.0e-05, beta = 1.0e+16, bias, leaky_relu(1.0e-20)>}
  %2 = op.gemm %a, %b bias %bias {epilogue = #op.epilogue<alpha = 1.0e-05, beta = 1.0e+16, bias, leaky_relu(1.0e-20)>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @epilogue_residual
func.func @epilogue_residual(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: %{{.*}} = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = add>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = add>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK: %{{.*}} = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = mul>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = op.gemm %a, %b residual %r {epilogue = #op.epilogue<residual = mul>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// Everything at once; the items print in their canonical order, whatever order they were
// written in: alpha, beta, bias, activation, residual, then the second activation.
// CHECK-LABEL: func.func @epilogue_everything
func.func @epilogue_everything(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>, %r: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: %{{.*}} = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<alpha = 0.5, beta = 2.0, bias, leaky_relu(0.1), residual = add, then clip(0.0, 6.0)>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<then clip(0.0, 6.0), residual = add, leaky_relu(0.1), bias, beta = 2.0, alpha = 0.5>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK: %{{.*}} = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<bias, residual = mul, then sigmoid>}
  // CHECK-SAME: : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NOT: layout_b
  %1 = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<bias, residual = mul, then sigmoid>, layout_b = "row"} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// A bias of a batched GEMM is per output column (N).
// CHECK-LABEL: func.func @epilogue_batched_bias_residual
func.func @epilogue_batched_bias_residual(%a: tensor<2x3x8xf16>, %b: tensor<8x5xf16>, %bias: tensor<5xf16>, %r: tensor<2x3x5xf16>) -> tensor<2x3x5xf16> {
  // CHECK: %{{.*}} = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<bias, gelu, residual = add>} : (tensor<2x3x8xf16>, tensor<8x5xf16>, tensor<5xf16>, tensor<2x3x5xf16>) -> tensor<2x3x5xf16>
  %0 = op.gemm %a, %b bias %bias residual %r {epilogue = #op.epilogue<bias, gelu, residual = add>} : (tensor<2x3x8xf16>, tensor<8x5xf16>, tensor<5xf16>, tensor<2x3x5xf16>) -> tensor<2x3x5xf16>
  func.return %0 : tensor<2x3x5xf16>
}
