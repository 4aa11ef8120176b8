// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80 few_channels=cutlass}' | filecheck %s --check-prefixes=CHECK,SM80
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 cutlass=2 few_channels=cutlass}' | filecheck %s --check-prefixes=CHECK,SM90
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s --check-prefix=HOPPER
// RUN: not bolt-opt %s -p 'select-kernels{cutlass=4}' 2>&1 | filecheck %s --check-prefix=GENERATION
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'select-kernels{arch=sm70}' 2>&1 | filecheck %s --check-prefix=ARCH
// RUN: not bolt-opt %s -p 'select-kernels{selector=random}' 2>&1 | filecheck %s --check-prefix=SELECTOR
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 depthwise=cutlass}' | filecheck %s --check-prefix=CUTLASS-DW
// RUN: not bolt-opt %s -p 'select-kernels{depthwise=winograd}' 2>&1 | filecheck %s --check-prefix=DEPTHWISE
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s --check-prefix=STEM
// RUN: not bolt-opt %s -p 'select-kernels{few_channels=im2col}' 2>&1 | filecheck %s --check-prefix=FEW-CHANNELS
// FEW-CHANNELS: error: few_channels must be one of stem, cutlass; got 'im2col'

// select-kernels writes each GEMM's, conv's and b2b op's template parameters as its
// `kernel` attribute; b2b ops that example 13 cannot run are split back into two ops.

// ARCH:     {{^}}error: arch must be one of sm80, sm90; got 'sm70'{{$}}
// ARCH-NOT: Traceback
// GENERATION: {{^}}error: cutlass must be 2 (2.x kernels only) or 3 (3.x on sm90 where it runs), got 4{{$}}
// SELECTOR:     {{^}}error: unknown kernel selector 'random'; known: heuristic, db, tune{{$}}
// SELECTOR-NOT: Traceback
// DEPTHWISE:     {{^}}error: depthwise must be one of direct, cutlass; got 'winograd'{{$}}
// DEPTHWISE-NOT: Traceback

// STATS:      select-kernels
// STATS-DAG:  {{^ +}}8 op.gemm kernels chosen
// STATS-DAG:  {{^ +}}9 op.conv2d kernels chosen
// STATS-DAG:  2 op.b2b_gemm kernels chosen
// STATS-DAG:  1 op.b2b_conv2d kernels chosen
// STATS-DAG:  1 op.b2b_gemm unfused
// STATS-DAG:  1 op.b2b_conv2d unfused

// A big GEMM fills the GPU without split-k; a big grid is rasterized in groups (swizzle).
// With 2.x kernels the shape takes the 128x64 tile for the A100's 108 SMs and 256x128 for
// the H200's 132. By default an sm90 target takes a CUTLASS 3.x instance (arch "sm90"):
// a cooperative tile, as many stages as fit (0), a cluster.
// HOPPER-LABEL: func.func @big_gemm
// HOPPER:       kernel = {family = "gemm", arch = "sm90"
// HOPPER-SAME:  stages = 0 : i64
// HOPPER-SAME:  cluster = array<i64: {{[12]}}, 1, 1>, kernel_schedule = "cooperative"}
// CHECK-LABEL: func.func @big_gemm
// CHECK:       op.gemm
// CHECK-SAME:  kernel = {family = "gemm", arch = "{{sm80|sm90}}"
// SM80-SAME:   threadblock = array<i64: 128, 64, 32>, warp = array<i64: 64, 32, 32>, instruction = array<i64: 16, 8, 16>, stages = 5 : i64
// SM90-SAME:   threadblock = array<i64: 256, 128, 32>, warp = array<i64: 64, 64, 32>, instruction = array<i64: 16, 8, 16>, stages = 4 : i64
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>, swizzle = 4 : i64, split_k = 1 : i64}
func.func @big_gemm(%x: tensor<2048x512xf16>) -> tensor<2048x2048xf16> {
  %w = op.constant dense<0.5> : tensor<2048x512xf16>
  %b = op.constant dense<0.25> : tensor<2048xf16>
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias, relu>} : (tensor<2048x512xf16>, tensor<2048x512xf16>, tensor<2048xf16>) -> tensor<2048x2048xf16>
  func.return %0 : tensor<2048x2048xf16>
}

// Large K, small M x N: under one wave of tiles, so slices of K fill the GPU.
// CHECK-LABEL: func.func @split_k_gemm
// CHECK:       op.gemm
// CHECK-SAME:  family = "gemm"
// CHECK-SAME:  threadblock = array<i64: 64, 64, 32>
// SM80-SAME:   split_k = 7 : i64}
// SM90-SAME:   split_k = 8 : i64}
func.func @split_k_gemm(%x: tensor<256x4096xf16>) -> tensor<256x256xf16> {
  %w = op.constant dense<0.5> : tensor<4096x256xf16>
  %0 = op.gemm %x, %w : (tensor<256x4096xf16>, tensor<4096x256xf16>) -> tensor<256x256xf16>
  func.return %0 : tensor<256x256xf16>
}

// The same small grid with a residual add after a bias: CUTLASS's residual block cannot
// run on split-k slices, so the whole K stays in one slice (and the fusion in the kernel).
// CHECK-LABEL: func.func @residual_gemm_keeps_one_slice
// CHECK:       op.gemm
// CHECK-SAME:  family = "gemm"
// CHECK-SAME:  split_k = 1 : i64}
func.func @residual_gemm_keeps_one_slice(%x: tensor<128x3072xf16>, %r: tensor<128x768xf16>) -> tensor<128x768xf16> {
  %w = op.constant dense<0.5> : tensor<3072x768xf16>
  %b = op.constant dense<0.25> : tensor<768xf16>
  %0 = op.gemm %x, %w bias %b residual %r {epilogue = #op.epilogue<bias, residual = add>} : (tensor<128x3072xf16>, tensor<3072x768xf16>, tensor<768xf16>, tensor<128x768xf16>) -> tensor<128x768xf16>
  func.return %0 : tensor<128x768xf16>
}

// f32 runs on TF32 tensor cores: a 16x8x8 instruction and half the K tile. A batched
// GEMM fills the GPU with its batch: no split-k. Odd extents narrow the alignments.
// CHECK-LABEL: func.func @tf32_and_batched
// CHECK:       op.gemm
// CHECK-SAME:  family = "gemm"
// CHECK-SAME:  threadblock = array<i64: {{[0-9]+}}, {{[0-9]+}}, 16>, warp = array<i64: {{[0-9]+}}, {{[0-9]+}}, 16>, instruction = array<i64: 16, 8, 8>
// CHECK-SAME:  alignment = array<i64: 4, 4, 4>
// CHECK:       op.gemm
// CHECK-SAME:  family = "gemm"
// CHECK-SAME:  instruction = array<i64: 16, 8, 16>
// CHECK-SAME:  split_k = 1 : i64}
// CHECK:       op.gemm
// CHECK-SAME:  family = "gemm"
// CHECK-SAME:  alignment = array<i64: 2, 1, 1>
func.func @tf32_and_batched(%x: tensor<128x1024xf32>, %q: tensor<12x128x64xf16>, %k: tensor<12x64x4096xf16>, %o: tensor<10x6xf16>) -> (tensor<128x256xf32>, tensor<12x128x4096xf16>, tensor<10x5xf16>) {
  %w = op.constant dense<0.5> : tensor<1024x256xf32>
  %0 = op.gemm %x, %w : (tensor<128x1024xf32>, tensor<1024x256xf32>) -> tensor<128x256xf32>
  %1 = op.gemm %q, %k : (tensor<12x128x64xf16>, tensor<12x64x4096xf16>) -> tensor<12x128x4096xf16>
  %w2 = op.constant dense<0.5> : tensor<6x5xf16>
  %2 = op.gemm %o, %w2 : (tensor<10x6xf16>, tensor<6x5xf16>) -> tensor<10x5xf16>
  func.return %0, %1, %2 : tensor<128x256xf32>, tensor<12x128x4096xf16>, tensor<10x5xf16>
}

// Convs: channels that 128-bit accesses divide take the optimized iterator; the padded
// first layer of an image model (C = 4) the fixed-channels one with 4-element accesses;
// C = 3 the few-channels one; other odd channel counts the analytic one.
// CHECK-LABEL: func.func @convs
// CHECK:       op.conv2d %x, %w1
// CHECK-SAME:  family = "conv2d_fprop"
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>
// CHECK-SAME:  iterator_algorithm = "optimized"
// CHECK:       op.conv2d %image4, %w2
// CHECK-SAME:  family = "conv2d_fprop"
// CHECK-SAME:  alignment = array<i64: 4, 4, 8>
// CHECK-SAME:  iterator_algorithm = "fixed_channels"
// CHECK:       op.conv2d %image3, %w3
// CHECK-SAME:  family = "conv2d_fprop"
// CHECK-SAME:  alignment = array<i64: 1, 1, 8>
// CHECK-SAME:  iterator_algorithm = "few_channels"
// CHECK:       op.conv2d %odd, %w4
// CHECK-SAME:  family = "conv2d_fprop"
// CHECK-SAME:  alignment = array<i64: 4, 4, 8>
// CHECK-SAME:  iterator_algorithm = "analytic"
// CHECK:       op.conv2d %image3f32, %w5
// CHECK-SAME:  family = "conv2d_fprop"
// CHECK-SAME:  instruction = array<i64: 16, 8, 8>
// CHECK-SAME:  alignment = array<i64: 1, 1, 4>
// CHECK-SAME:  iterator_algorithm = "few_channels"
// By default (few_channels=stem) the convs on at most 16 channels of f16 or bf16 run on
// our own kernel (an "sm80" choice on either target, its tile rows x columns x fragments
// per warp); 64 channels are not its (the halo conv's on sm90, at 0.4 tiles a
// multiprocessor here) and f32 stays CUTLASS's.
// STEM-LABEL: func.func @convs
// STEM:       op.conv2d %x, %w1
// STEM-SAME:  family = "halo_conv", arch = "sm90"
// STEM:       op.conv2d %image4, %w2
// STEM-SAME:  family = "stem_conv", arch = "sm80", threadblock = array<i64: 4, 16, 1>
// STEM:       op.conv2d %image3, %w3
// STEM-SAME:  family = "stem_conv"
// STEM:       op.conv2d %odd, %w4
// STEM-SAME:  family = "stem_conv", arch = "sm80", threadblock = array<i64: 8, 8, 1>
// STEM:       op.conv2d %image3f32, %w5
// STEM-SAME:  family = "conv2d_fprop"
func.func @convs(%x: tensor<2x28x28x64xf16>, %image4: tensor<1x32x32x4xf16>, %image3: tensor<1x32x32x3xf16>, %odd: tensor<1x8x8x12xf16>, %image3f32: tensor<1x16x16x3xf32>) -> (tensor<2x28x28x128xf16>, tensor<1x16x16x64xf16>, tensor<1x16x16x64xf16>, tensor<1x8x8x16xf16>, tensor<1x16x16x32xf32>) {
  %w1 = op.constant dense<0.5> : tensor<128x3x3x64xf16>
  %0 = op.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<relu>} : (tensor<2x28x28x64xf16>, tensor<128x3x3x64xf16>) -> tensor<2x28x28x128xf16>
  %w2 = op.constant dense<0.5> : tensor<64x7x7x4xf16>
  %1 = op.conv2d %image4, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x32x32x4xf16>, tensor<64x7x7x4xf16>) -> tensor<1x16x16x64xf16>
  %w3 = op.constant dense<0.5> : tensor<64x7x7x3xf16>
  %2 = op.conv2d %image3, %w3 {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x32x32x3xf16>, tensor<64x7x7x3xf16>) -> tensor<1x16x16x64xf16>
  %w4 = op.constant dense<0.5> : tensor<16x3x3x12xf16>
  %3 = op.conv2d %odd, %w4 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x12xf16>, tensor<16x3x3x12xf16>) -> tensor<1x8x8x16xf16>
  %w5 = op.constant dense<0.5> : tensor<32x3x3x3xf32>
  %4 = op.conv2d %image3f32, %w5 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x16x3xf32>, tensor<32x3x3x3xf32>) -> tensor<1x16x16x32xf32>
  func.return %0, %1, %2, %3, %4 : tensor<2x28x28x128xf16>, tensor<1x16x16x64xf16>, tensor<1x16x16x64xf16>, tensor<1x8x8x16xf16>, tensor<1x16x16x32xf32>
}

// A depthwise conv (groups = C = K) runs on our own kernel, built for sm80 and sm90 alike
// (an "sm80" choice on either target): one thread's tile is 1 row x 4 columns (Q = 16) x
// 8 channels (16 bytes of f16). With depthwise=cutlass it is CUTLASS's direct SIMT conv:
// the tile's K is the filter's taps and the instruction is 1x1x1. A grouped conv that is
// not depthwise still gets an implicit-GEMM choice (lower-op-to-cutlass leaves it, for
// want of a template).
// CHECK-LABEL: func.func @depthwise_and_grouped
// CHECK:       op.conv2d %x, %dw
// CHECK-SAME:  groups = 32
// CHECK-SAME:  kernel = {family = "depthwise_direct", arch = "sm80"
// CHECK-SAME:  threadblock = array<i64: 1, 4, 8>, warp = array<i64: 1, 4, 8>, instruction = array<i64: 1, 1, 1>
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>
// CHECK:       op.conv2d %x, %grouped
// CHECK-SAME:  groups = 2
// CHECK-SAME:  kernel = {family = "conv2d_fprop"
// CUTLASS-DW-LABEL: func.func @depthwise_and_grouped
// CUTLASS-DW:       op.conv2d %x, %dw
// CUTLASS-DW-SAME:  groups = 32
// CUTLASS-DW-SAME:  kernel = {family = "depthwise_conv2d_fprop", arch = "sm80"
// CUTLASS-DW-SAME:  threadblock = array<i64: {{[0-9]+}}, 32, 9>, warp = array<i64: 16, 32, 9>, instruction = array<i64: 1, 1, 1>
// CUTLASS-DW-SAME:  alignment = array<i64: 8, 8, 8>
func.func @depthwise_and_grouped(%x: tensor<1x16x16x32xf16>) -> (tensor<1x16x16x32xf16>, tensor<1x16x16x32xf16>) {
  %dw = op.constant dense<0.5> : tensor<32x3x3x1xf16>
  %0 = op.conv2d %x, %dw {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<relu>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>) -> tensor<1x16x16x32xf16>
  %grouped = op.constant dense<0.5> : tensor<32x3x3x16xf16>
  %1 = op.conv2d %x, %grouped {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x16xf16>) -> tensor<1x16x16x32xf16>
  func.return %0, %1 : tensor<1x16x16x32xf16>, tensor<1x16x16x32xf16>
}

// Back-to-back GEMMs stay fused when example 13 runs them: the first threadblock tile
// covers N0, the second N1. The intermediate stays in the register file while a warp
// holds a whole row of it (N0 <= 64), in shared memory after.
// CHECK-LABEL: func.func @b2b_gemms
// CHECK:       op.b2b_gemm %x, %w0, %w1
// CHECK-SAME:  kernel = {family = "b2b_gemm"
// CHECK-SAME:  threadblock = array<i64: 64, 64, 32>, warp = array<i64: 32, 64, 32>
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>
// CHECK-SAME:  threadblock1 = array<i64: 64, 128, 32>, warp1 = array<i64: 32, 128, 32>, residency = "register"
// CHECK:       op.b2b_gemm %x, %w2, %w3
// CHECK-SAME:  kernel = {family = "b2b_gemm"
// CHECK-SAME:  threadblock = array<i64: 64, 128, 32>, warp = array<i64: 32, 64, 32>
// CHECK-SAME:  threadblock1 = array<i64: 64, 64, 32>, warp1 = array<i64: 32, 32, 32>, residency = "shared"
func.func @b2b_gemms(%x: tensor<256x64xf16>) -> (tensor<256x128xf16>, tensor<256x64xf16>) {
  %w0 = op.constant dense<0.5> : tensor<64x64xf16>
  %w1 = op.constant dense<0.5> : tensor<128x64xf16>
  %0 = op.b2b_gemm %x, %w0, %w1 {layout_b0 = "col", layout_b1 = "col", epilogue0 = #op.epilogue<relu>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  %w2 = op.constant dense<0.5> : tensor<64x128xf16>
  %w3 = op.constant dense<0.5> : tensor<128x64xf16>
  %1 = op.b2b_gemm %x, %w2, %w3 {epilogue0 = #op.epilogue<relu>} : (tensor<256x64xf16>, tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<256x64xf16>
  func.return %0, %1 : tensor<256x128xf16>, tensor<256x64xf16>
}

// Example 13 is f16 only: a bf16 pair is split back into two GEMMs, each with its own
// choice, the epilogues and biases where they were.
// CHECK-LABEL: func.func @b2b_gemm_unfused
// CHECK-NOT:   op.b2b_gemm
// CHECK:       %[[H:.*]] = op.gemm %x, %w0 bias %b0
// CHECK-SAME:  epilogue = #op.epilogue<bias, relu>
// CHECK-SAME:  kernel = {family = "gemm"
// CHECK-NEXT:  %[[Y:.*]] = op.gemm %[[H]], %w1
// CHECK-SAME:  epilogue = #op.epilogue<gelu>
// CHECK-SAME:  kernel = {family = "gemm"
// CHECK-NEXT:  func.return %[[Y]]
func.func @b2b_gemm_unfused(%x: tensor<64x32xbf16>) -> tensor<64x16xbf16> {
  %w0 = op.constant dense<0.5> : tensor<32x64xbf16>
  %b0 = op.constant dense<0.25> : tensor<64xbf16>
  %w1 = op.constant dense<0.5> : tensor<64x16xbf16>
  %0 = op.b2b_gemm %x, %w0, %w1 bias0 %b0 {epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<gelu>} : (tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x16xbf16>, tensor<64xbf16>) -> tensor<64x16xbf16>
  func.return %0 : tensor<64x16xbf16>
}

// A conv and a 1x1 conv: fused when the channels suit example 13's 128-bit accesses,
// split back into two convs when N1 (24) is not a multiple of 16; the first keeps the
// window, the second is 1x1.
// CHECK-LABEL: func.func @b2b_convs
// CHECK:       op.b2b_conv2d %x, %w0, %w1
// CHECK-SAME:  kernel = {family = "b2b_conv2d"
// CHECK-SAME:  threadblock = array<i64: 64, 32, 32>
// CHECK-SAME:  threadblock1 = array<i64: 64, 64, 32>
// CHECK-SAME:  residency = "register"
// CHECK-NOT:   op.b2b_conv2d
// CHECK:       %[[H:.*]] = op.conv2d %x, %w0
// CHECK-SAME:  strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>
// CHECK-SAME:  kernel = {family = "conv2d_fprop"
// CHECK-NEXT:  op.conv2d %[[H]], %w2
// CHECK-NOT:   strides
// CHECK-SAME:  kernel = {family = "conv2d_fprop"
func.func @b2b_convs(%x: tensor<2x8x8x16xf16>) -> (tensor<2x4x4x64xf16>, tensor<2x4x4x24xf16>) {
  %w0 = op.constant dense<0.5> : tensor<32x3x3x16xf16>
  %w1 = op.constant dense<0.5> : tensor<64x1x1x32xf16>
  %0 = op.b2b_conv2d %x, %w0, %w1 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<relu>} : (tensor<2x8x8x16xf16>, tensor<32x3x3x16xf16>, tensor<64x1x1x32xf16>) -> tensor<2x4x4x64xf16>
  %w2 = op.constant dense<0.5> : tensor<24x1x1x32xf16>
  %1 = op.b2b_conv2d %x, %w0, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<relu>} : (tensor<2x8x8x16xf16>, tensor<32x3x3x16xf16>, tensor<24x1x1x32xf16>) -> tensor<2x4x4x24xf16>
  func.return %0, %1 : tensor<2x4x4x64xf16>, tensor<2x4x4x24xf16>
}
