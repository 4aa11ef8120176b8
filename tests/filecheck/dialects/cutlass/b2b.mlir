// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Back-to-back kernels (CUTLASS example 13): two GEMMs, or a conv and a 1x1 conv, in one
// kernel; `tile` is the first GEMM's, `tile1` the second's, and the intermediate lives in
// the register file or in shared memory.

// Register-file residency: every warp holds whole rows (warp N = threadblock N).
// CHECK-LABEL: func.func @b2b_gemm_register
func.func @b2b_gemm_register(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>, %c0: tensor<64xf16>, %c1: tensor<128xf16>) -> tensor<256x128xf16> {
  // CHECK: %{{.*}} = cutlass.b2b_gemm %a, %b0, %b1 bias0 %c0 bias1 %c1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [16, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [16, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>, epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<bias, gelu>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>, tensor<64xf16>, tensor<128xf16>) -> tensor<256x128xf16>
  %0 = cutlass.b2b_gemm %a, %b0, %b1 bias0 %c0 bias1 %c1 {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [16, 64, 32], instruction = [16, 8, 16], stages = 3>,
        tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [16, 128, 32], instruction = [16, 8, 16], stages = 3>,
        residency = "register", alignment = array<i64: 8, 8, 8>,
        epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<bias, gelu>}
     : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>, tensor<64xf16>, tensor<128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// Shared-memory residency, a batched A, no biases, identity epilogues (not printed); the
// second tile's N (64) covers N1 = 48.
// CHECK-LABEL: func.func @b2b_gemm_shared
func.func @b2b_gemm_shared(%a: tensor<2x64x32xf16>, %b0: tensor<128x32xf16>, %b1: tensor<48x128xf16>) -> tensor<2x64x48xf16> {
  // CHECK: %{{.*}} = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, residency = "shared", alignment = array<i64: 8, 8, 8>} : (tensor<2x64x32xf16>, tensor<128x32xf16>, tensor<48x128xf16>) -> tensor<2x64x48xf16>
  // CHECK-NOT: epilogue
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>,
        tile1 = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>,
        residency = "shared", alignment = array<i64: 8, 8, 8>, epilogue0 = #op.epilogue<>, epilogue1 = #op.epilogue<>}
     : (tensor<2x64x32xf16>, tensor<128x32xf16>, tensor<48x128xf16>) -> tensor<2x64x48xf16>
  func.return %0 : tensor<2x64x48xf16>
}

// A 3x3 conv then a 1x1 conv, the intermediate in registers.
// CHECK-LABEL: func.func @b2b_conv_register
func.func @b2b_conv_register(%x: tensor<2x8x8x64xf16>, %w0: tensor<64x3x3x64xf16>, %w1: tensor<32x1x1x64xf16>, %c0: tensor<64xf16>) -> tensor<2x4x4x32xf16> {
  // CHECK: %{{.*}} = cutlass.b2b_conv2d %x, %w0, %w1 bias0 %c0 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 32, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, silu>, epilogue1 = #op.epilogue<relu>} : (tensor<2x8x8x64xf16>, tensor<64x3x3x64xf16>, tensor<32x1x1x64xf16>, tensor<64xf16>) -> tensor<2x4x4x32xf16>
  %0 = cutlass.b2b_conv2d %x, %w0, %w1 bias0 %c0 {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>,
        tile1 = #cutlass.tile<threadblock = [64, 32, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>,
        residency = "register", alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
        epilogue0 = #op.epilogue<bias, silu>, epilogue1 = #op.epilogue<relu>}
     : (tensor<2x8x8x64xf16>, tensor<64x3x3x64xf16>, tensor<32x1x1x64xf16>, tensor<64xf16>) -> tensor<2x4x4x32xf16>
  func.return %0 : tensor<2x4x4x32xf16>
}

// The intermediate in shared memory, alpha in the second epilogue.
// CHECK-LABEL: func.func @b2b_conv_shared
func.func @b2b_conv_shared(%x: tensor<2x8x8x64xf16>, %w0: tensor<64x3x3x64xf16>, %w1: tensor<128x1x1x64xf16>, %c0: tensor<64xf16>, %c1: tensor<128xf16>) -> tensor<2x8x8x128xf16> {
  // CHECK: %{{.*}} = cutlass.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, residency = "shared", alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, silu>, epilogue1 = #op.epilogue<alpha = 0.5, bias, relu>} : (tensor<2x8x8x64xf16>, tensor<64x3x3x64xf16>, tensor<128x1x1x64xf16>, tensor<64xf16>, tensor<128xf16>) -> tensor<2x8x8x128xf16>
  %0 = cutlass.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>,
        tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>,
        residency = "shared", alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>,
        epilogue0 = #op.epilogue<bias, silu>, epilogue1 = #op.epilogue<alpha = 0.5, bias, relu>}
     : (tensor<2x8x8x64xf16>, tensor<64x3x3x64xf16>, tensor<128x1x1x64xf16>, tensor<64xf16>, tensor<128xf16>) -> tensor<2x8x8x128xf16>
  func.return %0 : tensor<2x8x8x128xf16>
}
