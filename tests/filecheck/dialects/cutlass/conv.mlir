// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// cutlass.conv2d_fprop (implicit GEMM, NHWC x KRSC) with each iterator algorithm, and
// cutlass.depthwise_conv2d_fprop (the direct depthwise conv).

// The optimized iterator (the default, not printed): C = 64 in 8-element accesses.
// CHECK-LABEL: func.func @conv_optimized
func.func @conv_optimized(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>, %c: tensor<64xf16>) -> tensor<2x16x16x64xf16> {
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x, %w bias %c {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>, swizzle = 4 : i64, alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<2x16x16x64xf16>
  // CHECK-NOT: iterator_algorithm
  // CHECK: func.return
  %0 = cutlass.conv2d_fprop %x, %w bias %c {arch = "sm80", accumulator = f32, iterator_algorithm = "optimized",
        tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>,
        swizzle = 4 : i64, alignment = array<i64: 8, 8, 8>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
        dilations = array<i64: 1, 1>, split_k = 1 : i64, epilogue = #op.epilogue<bias, relu>}
     : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<2x16x16x64xf16>
  func.return %0 : tensor<2x16x16x64xf16>
}

// The analytic iterator takes any C: 12 channels in 4-element accesses; strided,
// dilated, with split-k and a residual.
// CHECK-LABEL: func.func @conv_analytic
func.func @conv_analytic(%x: tensor<1x17x17x12xf16>, %w: tensor<32x3x3x12xf16>, %r: tensor<1x7x7x32xf16>) -> tensor<1x7x7x32xf16> {
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x, %w residual %r {arch = "sm80", accumulator = f32, iterator_algorithm = "analytic", tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 4, 4, 8>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, dilations = array<i64: 2, 2>, split_k = 2 : i64, epilogue = #op.epilogue<residual = add>} : (tensor<1x17x17x12xf16>, tensor<32x3x3x12xf16>, tensor<1x7x7x32xf16>) -> tensor<1x7x7x32xf16>
  %0 = cutlass.conv2d_fprop %x, %w residual %r {arch = "sm80", accumulator = f32, iterator_algorithm = "analytic",
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>,
        alignment = array<i64: 4, 4, 8>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, dilations = array<i64: 2, 2>,
        split_k = 2 : i64, epilogue = #op.epilogue<residual = add>}
     : (tensor<1x17x17x12xf16>, tensor<32x3x3x12xf16>, tensor<1x7x7x32xf16>) -> tensor<1x7x7x32xf16>
  func.return %0 : tensor<1x7x7x32xf16>
}

// Fixed channels: an image's 3 channels padded to 4 (or C = 8), C = the alignment.
// CHECK-LABEL: func.func @conv_fixed_channels
func.func @conv_fixed_channels(%x4: tensor<2x32x32x4xf16>, %w4: tensor<64x7x7x4xf16>, %x8: tensor<2x32x32x8xf16>, %w8: tensor<64x7x7x8xf16>) -> (tensor<2x16x16x64xf16>, tensor<2x16x16x64xf16>) {
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x4, %w4 {arch = "sm80", accumulator = f32, iterator_algorithm = "fixed_channels", tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>, alignment = array<i64: 4, 4, 8>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<relu>} : (tensor<2x32x32x4xf16>, tensor<64x7x7x4xf16>) -> tensor<2x16x16x64xf16>
  %0 = cutlass.conv2d_fprop %x4, %w4 {arch = "sm80", accumulator = f32, iterator_algorithm = "fixed_channels",
        tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>,
        alignment = array<i64: 4, 4, 8>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<relu>}
     : (tensor<2x32x32x4xf16>, tensor<64x7x7x4xf16>) -> tensor<2x16x16x64xf16>
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x8, %w8 {arch = "sm80", accumulator = f32, iterator_algorithm = "fixed_channels", tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>, alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<2x32x32x8xf16>, tensor<64x7x7x8xf16>) -> tensor<2x16x16x64xf16>
  %1 = cutlass.conv2d_fprop %x8, %w8 {arch = "sm80", accumulator = f32, iterator_algorithm = "fixed_channels",
        tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 5>,
        alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
     : (tensor<2x32x32x8xf16>, tensor<64x7x7x8xf16>) -> tensor<2x16x16x64xf16>
  func.return %0, %1 : tensor<2x16x16x64xf16>, tensor<2x16x16x64xf16>
}

// Few channels: C = 3 read one element at a time, C = 2 two at a time; f32 (TF32).
// CHECK-LABEL: func.func @conv_few_channels
func.func @conv_few_channels(%x3: tensor<1x8x8x3xf32>, %w3: tensor<16x3x3x3xf32>, %x2: tensor<1x8x8x2xf32>, %w2: tensor<16x3x3x2xf32>) -> (tensor<1x6x6x16xf32>, tensor<1x6x6x16xf32>) {
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x3, %w3 {arch = "sm80", accumulator = f32, iterator_algorithm = "few_channels", tile = #cutlass.tile<threadblock = [64, 64, 16], warp = [32, 32, 16], instruction = [16, 8, 8], stages = 3>, alignment = array<i64: 1, 1, 4>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  %0 = cutlass.conv2d_fprop %x3, %w3 {arch = "sm80", accumulator = f32, iterator_algorithm = "few_channels",
        tile = #cutlass.tile<threadblock = [64, 64, 16], warp = [32, 32, 16], instruction = [16, 8, 8], stages = 3>,
        alignment = array<i64: 1, 1, 4>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x2, %w2 {arch = "sm80", accumulator = f32, iterator_algorithm = "few_channels", tile = #cutlass.tile<threadblock = [64, 64, 16], warp = [32, 32, 16], instruction = [16, 8, 8], stages = 3>, alignment = array<i64: 2, 2, 4>} : (tensor<1x8x8x2xf32>, tensor<16x3x3x2xf32>) -> tensor<1x6x6x16xf32>
  %1 = cutlass.conv2d_fprop %x2, %w2 {arch = "sm80", accumulator = f32, iterator_algorithm = "few_channels",
        tile = #cutlass.tile<threadblock = [64, 64, 16], warp = [32, 32, 16], instruction = [16, 8, 8], stages = 3>,
        alignment = array<i64: 2, 2, 4>} : (tensor<1x8x8x2xf32>, tensor<16x3x3x2xf32>) -> tensor<1x6x6x16xf32>
  func.return %0, %1 : tensor<1x6x6x16xf32>, tensor<1x6x6x16xf32>
}

// The direct depthwise conv: a SIMT kernel, K x R x S x 1 filter, K = C; its tile is
// (output pixels, channels, filter taps).
// CHECK-LABEL: func.func @depthwise
func.func @depthwise(%x: tensor<1x16x16x32xf16>, %w: tensor<32x3x3x1xf16>, %c: tensor<32xf16>) -> tensor<1x8x8x32xf16> {
  // CHECK: %{{.*}} = cutlass.depthwise_conv2d_fprop %x, %w bias %c {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 32, 9], warp = [16, 32, 9], instruction = [1, 1, 1], stages = 3>, alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<1x8x8x32xf16>
  %0 = cutlass.depthwise_conv2d_fprop %x, %w bias %c {arch = "sm80", op_class = "simt", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 32, 9], warp = [16, 32, 9], instruction = [1, 1, 1], stages = 3>,
        alignment = array<i64: 8, 8, 8>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>}
     : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<1x8x8x32xf16>
  func.return %0 : tensor<1x8x8x32xf16>
}

// A 5x5 dilated depthwise conv with a residual, f32.
// CHECK-LABEL: func.func @depthwise_residual
func.func @depthwise_residual(%x: tensor<2x12x12x8xf32>, %w: tensor<8x5x5x1xf32>, %r: tensor<2x12x12x8xf32>) -> tensor<2x12x12x8xf32> {
  // CHECK: %{{.*}} = cutlass.depthwise_conv2d_fprop %x, %w residual %r {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 8, 25], warp = [16, 8, 25], instruction = [1, 1, 1], stages = 2>, alignment = array<i64: 4, 4, 4>, pads = array<i64: 4, 4, 4, 4>, dilations = array<i64: 2, 2>, epilogue = #op.epilogue<residual = add>} : (tensor<2x12x12x8xf32>, tensor<8x5x5x1xf32>, tensor<2x12x12x8xf32>) -> tensor<2x12x12x8xf32>
  %0 = cutlass.depthwise_conv2d_fprop %x, %w residual %r {arch = "sm80", op_class = "simt", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 8, 25], warp = [16, 8, 25], instruction = [1, 1, 1], stages = 2>,
        alignment = array<i64: 4, 4, 4>, pads = array<i64: 4, 4, 4, 4>, dilations = array<i64: 2, 2>, epilogue = #op.epilogue<residual = add>}
     : (tensor<2x12x12x8xf32>, tensor<8x5x5x1xf32>, tensor<2x12x12x8xf32>) -> tensor<2x12x12x8xf32>
  func.return %0 : tensor<2x12x12x8xf32>
}

// sm90: a conv with a cluster and a kernel schedule.
// CHECK-LABEL: func.func @conv_sm90
func.func @conv_sm90(%x: tensor<32x28x28x128xf16>, %w: tensor<128x3x3x128xf16>, %c: tensor<128xf16>) -> tensor<32x28x28x128xf16> {
  // CHECK: %{{.*}} = cutlass.conv2d_fprop %x, %w bias %c {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 4>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 1, 1>, kernel_schedule = "cooperative", pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x28x28x128xf16>, tensor<128x3x3x128xf16>, tensor<128xf16>) -> tensor<32x28x28x128xf16>
  %0 = cutlass.conv2d_fprop %x, %w bias %c {arch = "sm90", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 4>,
        alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 1, 1>, kernel_schedule = "cooperative", pads = array<i64: 1, 1, 1, 1>,
        epilogue = #op.epilogue<bias, relu>} : (tensor<32x28x28x128xf16>, tensor<128x3x3x128xf16>, tensor<128xf16>) -> tensor<32x28x28x128xf16>
  func.return %0 : tensor<32x28x28x128xf16>
}
