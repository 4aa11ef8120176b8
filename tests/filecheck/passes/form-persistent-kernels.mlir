// RUN: bolt-opt %s -p form-persistent-kernels | filecheck %s
// RUN: bolt-opt %s -p form-persistent-kernels --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      form-persistent-kernels
// STATS-DAG:  3 persistent kernels formed
// STATS-DAG:  2 op.b2b_gemm formed
// STATS-DAG:  1 op.b2b_conv2d formed
// STATS-DAG:  6 persistent kernels refused

// Two linears with bias + relu, then bias only: one persistent kernel.
// CHECK-LABEL: func.func @mlp
// CHECK-NEXT:  %w0 = op.constant
// CHECK-NEXT:  %b0 = op.constant
// CHECK-NEXT:  %w1 = op.constant
// CHECK-NEXT:  %b1 = op.constant
// CHECK-NEXT:  %[[Y:.*]] = op.b2b_gemm %x, %w0, %w1 bias0 %b0 bias1 %b1 {layout_b0 = "col", layout_b1 = "col", epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<bias>} : (tensor<64x32xf16>, tensor<128x32xf16>, tensor<16x128xf16>, tensor<128xf16>, tensor<16xf16>) -> tensor<64x16xf16>
// CHECK-NEXT:  func.return %[[Y]] : tensor<64x16xf16>
func.func @mlp(%x: tensor<64x32xf16>) -> tensor<64x16xf16> {
  %w0 = op.constant dense<0.5> : tensor<128x32xf16>
  %b0 = op.constant dense<0.25> : tensor<128xf16>
  %w1 = op.constant dense<0.5> : tensor<16x128xf16>
  %b1 = op.constant dense<0.25> : tensor<16xf16>
  %0 = op.gemm %x, %w0 bias %b0 {layout_b = "col", epilogue = #op.epilogue<bias, relu>} : (tensor<64x32xf16>, tensor<128x32xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %1 = op.gemm %0, %w1 bias %b1 {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<64x128xf16>, tensor<16x128xf16>, tensor<16xf16>) -> tensor<64x16xf16>
  func.return %1 : tensor<64x16xf16>
}

// A 3x3 stride-2 conv, then a 1x1 conv: the b2b conv takes the first conv's window.
// CHECK-LABEL: func.func @conv_then_pointwise
// CHECK:       %[[Y:.*]] = op.b2b_conv2d %x, %w0, %w1 bias0 %b0 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, silu>, epilogue1 = #op.epilogue<relu>} : (tensor<2x8x8x16xf16>, tensor<64x3x3x16xf16>, tensor<32x1x1x64xf16>, tensor<64xf16>) -> tensor<2x4x4x32xf16>
// CHECK-NEXT:  func.return %[[Y]]
func.func @conv_then_pointwise(%x: tensor<2x8x8x16xf16>) -> tensor<2x4x4x32xf16> {
  %w0 = op.constant dense<0.5> : tensor<64x3x3x16xf16>
  %b0 = op.constant dense<0.25> : tensor<64xf16>
  %w1 = op.constant dense<0.5> : tensor<32x1x1x64xf16>
  %0 = op.conv2d %x, %w0 bias %b0 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, silu>} : (tensor<2x8x8x16xf16>, tensor<64x3x3x16xf16>, tensor<64xf16>) -> tensor<2x4x4x64xf16>
  %1 = op.conv2d %0, %w1 {epilogue = #op.epilogue<relu>} : (tensor<2x4x4x64xf16>, tensor<32x1x1x64xf16>) -> tensor<2x4x4x32xf16>
  func.return %1 : tensor<2x4x4x32xf16>
}

// Three GEMMs: the first two fuse, the third stays.
// CHECK-LABEL: func.func @three_gemms
// CHECK:       %[[H:.*]] = op.b2b_gemm %x, %w0, %w1 : (tensor<8x16xf16>, tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
// CHECK-NEXT:  %[[Y:.*]] = op.gemm %[[H]], %w2 : (tensor<8x32xf16>, tensor<32x8xf16>) -> tensor<8x8xf16>
func.func @three_gemms(%x: tensor<8x16xf16>) -> tensor<8x8xf16> {
  %w0 = op.constant dense<0.5> : tensor<16x32xf16>
  %w1 = op.constant dense<0.5> : tensor<32x32xf16>
  %w2 = op.constant dense<0.5> : tensor<32x8xf16>
  %0 = op.gemm %x, %w0 : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
  %1 = op.gemm %0, %w1 : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  %2 = op.gemm %1, %w2 : (tensor<8x32xf16>, tensor<32x8xf16>) -> tensor<8x8xf16>
  func.return %2 : tensor<8x8xf16>
}

// Refused pairs stay as they are; the notes say why.
// CHECK-LABEL: func.func @refused_gemms
// CHECK-NOT:   op.b2b_gemm
// CHECK:       func.return
func.func @refused_gemms(%x: tensor<8x16xf16>, %y: tensor<8x16xf32>) -> (tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf32>) {
  %wide = op.constant dense<0.5> : tensor<16x512xf16>
  %back = op.constant dense<0.5> : tensor<512x16xf16>
  // STATS: refused op.gemm at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: first N is 512 > 256
  %0 = op.gemm %x, %wide : (tensor<8x16xf16>, tensor<16x512xf16>) -> tensor<8x512xf16>
  %1 = op.gemm %0, %back : (tensor<8x512xf16>, tensor<512x16xf16>) -> tensor<8x16xf16>
  %w = op.constant dense<0.5> : tensor<16x16xf16>
  // STATS: refused op.gemm at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: intermediate has another user
  %2 = op.gemm %x, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  %3 = op.gemm %2, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  // STATS: refused op.gemm at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: first epilogue has a residual
  %4 = op.gemm %x, %w residual %x {epilogue = #op.epilogue<residual = add>} : (tensor<8x16xf16>, tensor<16x16xf16>, tensor<8x16xf16>) -> tensor<8x16xf16>
  %5 = op.gemm %4, %w : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
  %w32 = op.constant dense<0.5> : tensor<16x16xf32>
  // STATS: refused op.gemm at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: not fp16 (the pair computes in f32)
  %6 = op.gemm %y, %w32 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %7 = op.gemm %6, %w32 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  func.return %1, %3, %5, %2, %7 : tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf32>
}

// CHECK-LABEL: func.func @refused_convs
// CHECK-NOT:   op.b2b_conv2d
// CHECK:       func.return
func.func @refused_convs(%x: tensor<1x8x8x16xf16>) -> (tensor<1x8x8x16xf16>, tensor<1x4x4x16xf16>) {
  %w0 = op.constant dense<0.5> : tensor<16x3x3x16xf16>
  // STATS: refused op.conv2d at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: second conv is 3x3
  %0 = op.conv2d %x, %w0 {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<relu>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x16xf16>) -> tensor<1x8x8x16xf16>
  %1 = op.conv2d %0, %w0 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf16>, tensor<16x3x3x16xf16>) -> tensor<1x8x8x16xf16>
  %w1 = op.constant dense<0.5> : tensor<16x1x1x16xf16>
  // STATS: refused op.conv2d at {{.*}}form-persistent-kernels.mlir:[[# @LINE + 1]]:3: second conv has stride 2x2
  %2 = op.conv2d %x, %w1 : (tensor<1x8x8x16xf16>, tensor<16x1x1x16xf16>) -> tensor<1x8x8x16xf16>
  %3 = op.conv2d %2, %w1 {strides = array<i64: 2, 2>} : (tensor<1x8x8x16xf16>, tensor<16x1x1x16xf16>) -> tensor<1x4x4x16xf16>
  func.return %1, %3 : tensor<1x8x8x16xf16>, tensor<1x4x4x16xf16>
}
