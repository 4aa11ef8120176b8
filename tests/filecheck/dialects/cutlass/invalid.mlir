// RUN: bolt-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Verifier (and #cutlass.tile parser) errors of the cutlass dialect, one per input chunk:
// each rule CUTLASS imposes on a template instance, with its message.

// The warp tile must divide the threadblock tile (checked as the tile is parsed).
func.func @warp_does_not_divide(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the warp shape [48, 64, 32] does not divide [128, 128, 32]
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [48, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The instruction must divide the warp tile.
func.func @instruction_does_not_divide(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the instruction shape [16, 8, 16] does not divide [64, 64, 8]
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 8], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A multistage main loop needs two stages at least.
func.func @one_stage(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: stages must be 2 or more (or 0: as many as fit, on sm90), got 1
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 1>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// "As many stages as fit" is a 3.x choice.
func.func @auto_stages_on_sm80(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op stages = 0 (as many as fit in shared memory) is a 3.x (sm90) choice
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 0>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Six stages of a 256x128x64 f16 tile need 288 KiB; an A100 block gets 163 KiB.
func.func @stages_over_shared_memory_sm80(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op 6 stages of this tile need 294912 bytes of shared memory; sm80 has 166912
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [256, 128, 64], warp = [64, 64, 64], instruction = [16, 8, 16], stages = 6>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Four stages of it (192 KiB) fit an H100's 227 KiB, five do not.
func.func @stages_over_shared_memory_sm90(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op 5 stages of this tile need 245760 bytes of shared memory; sm90 has 232448
  %0 = cutlass.gemm %a, %b {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [256, 128, 64], warp = [64, 64, 64], instruction = [16, 8, 16], stages = 5>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Row-major A: the alignment divides K (36).
func.func @alignment_a_row(%a: tensor<256x36xf16>, %b: tensor<36x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment 8 does not divide A's contiguous dimension (36)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 4, 8>} : (tensor<256x36xf16>, tensor<36x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Column-major A (stored K x M): the alignment divides M (36), not K.
func.func @alignment_a_col(%a: tensor<64x36xf16>, %b: tensor<64x128xf16>) -> tensor<36x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment 8 does not divide A's contiguous dimension (36)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, layout_a = "col"} : (tensor<64x36xf16>, tensor<64x128xf16>) -> tensor<36x128xf16>
  func.return %0 : tensor<36x128xf16>
}

// -----

// Row-major B: the alignment divides N (100).
func.func @alignment_b_row(%a: tensor<256x64xf16>, %b: tensor<64x100xf16>) -> tensor<256x100xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment 8 does not divide B's contiguous dimension (100)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 4>} : (tensor<256x64xf16>, tensor<64x100xf16>) -> tensor<256x100xf16>
  func.return %0 : tensor<256x100xf16>
}

// -----

// Column-major B (a Linear weight, N x K): the alignment divides K (36).
func.func @alignment_b_col(%a: tensor<256x36xf16>, %b: tensor<128x36xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment 8 does not divide B's contiguous dimension (36)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 4, 8, 8>, layout_b = "col"} : (tensor<256x36xf16>, tensor<128x36xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The output's alignment divides N (100).
func.func @alignment_c(%a: tensor<256x64xf16>, %b: tensor<64x100xf16>) -> tensor<256x100xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment 8 does not divide C's contiguous dimension (N) (100)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 4, 8>} : (tensor<256x64xf16>, tensor<64x100xf16>) -> tensor<256x100xf16>
  func.return %0 : tensor<256x100xf16>
}

// -----

// 8 f32 elements are 256 bits: CUTLASS's widest access is 128.
func.func @alignment_wider_than_128_bits(%a: tensor<256x64xf32>, %b: tensor<64x128xf32>) -> tensor<256x128xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment of A (8 elements) must be 1 to 128 bits wide
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 16], warp = [64, 64, 16], instruction = [16, 8, 8], stages = 3>, alignment = array<i64: 8, 4, 4>} : (tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<256x128xf32>
  func.return %0 : tensor<256x128xf32>
}

// -----

// An alignment is at least one element.
func.func @alignment_zero(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment of C (0 elements) must be 1 to 128 bits wide
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 0>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A, B and C each have an alignment.
func.func @alignment_two_values(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op alignment needs three values (A, B, C)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A thread-block cluster is a Hopper (3.x) parameter.
func.func @cluster_on_sm80(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op cluster and kernel_schedule are sm90 parameters
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 2, 1, 1>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// So is a kernel schedule.
func.func @kernel_schedule_on_sm80(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op cluster and kernel_schedule are sm90 parameters
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, kernel_schedule = "cooperative"} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A cluster has three positive sizes.
func.func @bad_cluster(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op cluster needs three positive sizes (M, N, K), got [2, 0]
  %0 = cutlass.gemm %a, %b {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 2, 0>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @bad_kernel_schedule(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op kernel_schedule must be one of auto, cooperative, pingpong, warpspecialized, streamk, got 'warp_specialized'
  %0 = cutlass.gemm %a, %b {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, kernel_schedule = "warp_specialized"} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @bad_arch(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op arch must be one of sm80, sm90, got 'sm70'
  %0 = cutlass.gemm %a, %b {arch = "sm70", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @bad_op_class(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op op_class must be one of tensorop, simt, got 'wmma'
  %0 = cutlass.gemm %a, %b {arch = "sm80", op_class = "wmma", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The threadblock swizzle's log tile is 1, 2, 4 or 8.
func.func @bad_swizzle(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op swizzle must be 1, 2, 4 or 8, got 3
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, swizzle = 3 : i64} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// No more slices than K (64) has elements.
func.func @split_k_over_k(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op split_k must be between 1 and K (64), got 128
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, split_k = 128 : i64} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @split_k_zero(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op split_k must be between 1 and K (64), got 0
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, split_k = 0 : i64} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @gemm_wrong_result(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.gemm' op result type tensor<256x64xf16> does not match tensor<256x128xf16>, inferred from the operands and attributes
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x64xf16>
  func.return %0 : tensor<256x64xf16>
}

// -----

// The fixed-channels iterator reads exactly C = alignment channels per access.
func.func @fixed_channels_c_not_alignment(%x: tensor<2x16x16x8xf16>, %w: tensor<64x3x3x8xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op the fixed-channels iterator needs C (8) equal to the A alignment (4)
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 4, 4, 8>, iterator_algorithm = "fixed_channels"} : (tensor<2x16x16x8xf16>, tensor<64x3x3x8xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

// The few-channels iterator is for a handful of channels, not 64.
func.func @few_channels_large_c(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op the few-channels iterator needs a small C (64) that the A alignment divides
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, iterator_algorithm = "few_channels"} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @few_channels_alignment(%x: tensor<2x16x16x3xf16>, %w: tensor<64x3x3x3xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op the few-channels iterator needs a small C (3) that the A alignment divides
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 2, 1, 8>, iterator_algorithm = "few_channels"} : (tensor<2x16x16x3xf16>, tensor<64x3x3x3xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

// The optimized (and analytic) iterators read C in alignment-sized pieces: 8 does not divide 12.
func.func @optimized_alignment(%x: tensor<2x16x16x12xf16>, %w: tensor<64x3x3x12xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op alignment 8 does not divide the input channels (12)
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 4, 8>} : (tensor<2x16x16x12xf16>, tensor<64x3x3x12xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @filter_alignment(%x: tensor<2x16x16x12xf16>, %w: tensor<64x3x3x12xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op alignment 8 does not divide the filter's input channels (12)
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 4, 8, 8>, iterator_algorithm = "analytic"} : (tensor<2x16x16x12xf16>, tensor<64x3x3x12xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @output_alignment(%x: tensor<2x16x16x64xf16>, %w: tensor<60x3x3x64xf16>) -> tensor<2x14x14x60xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op alignment 8 does not divide the output channels (60)
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<2x16x16x64xf16>, tensor<60x3x3x64xf16>) -> tensor<2x14x14x60xf16>
  func.return %0 : tensor<2x14x14x60xf16>
}

// -----

func.func @bad_iterator(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op iterator_algorithm must be one of analytic, optimized, fixed_channels, few_channels, got 'precomputed'
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, iterator_algorithm = "precomputed"} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @conv_split_k_zero(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op split_k must be positive
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, split_k = 0 : i64} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

// A window needs two strides, four pads and two dilations.
func.func @conv_short_strides(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op strides must have 2 values, got 1
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, strides = array<i64: 1>} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @conv_negative_pad(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op pads must not be negative, got [0, -1, 0, 0]
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, pads = array<i64: 0, -1, 0, 0>} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @conv_rank(%x: tensor<2x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op expects 4-D activations and filters, got tensor<2x16x64xf16>
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<2x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16>
  func.return %0 : tensor<2x14x14x64xf16>
}

// -----

func.func @conv_wrong_result(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x16x16x64xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.conv2d_fprop' op result type tensor<2x16x16x64xf16> does not match tensor<2x14x14x64xf16>, inferred from the operands and attributes
  %0 = cutlass.conv2d_fprop %x, %w {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x16x16x64xf16>
  func.return %0 : tensor<2x16x16x64xf16>
}

// -----

// A depthwise conv has one filter per channel: K = C.
func.func @depthwise_k_not_c(%x: tensor<2x16x16x64xf16>, %w: tensor<128x3x3x1xf16>) -> tensor<2x14x14x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.depthwise_conv2d_fprop' op a depthwise conv has as many output channels as input channels
  %0 = cutlass.depthwise_conv2d_fprop %x, %w {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 9], warp = [16, 64, 9], instruction = [1, 1, 1], stages = 2>, alignment = array<i64: 8, 8, 8>} : (tensor<2x16x16x64xf16>, tensor<128x3x3x1xf16>) -> tensor<2x14x14x128xf16>
  func.return %0 : tensor<2x14x14x128xf16>
}

// -----

// Its input is read in alignment-sized pieces of C too.
func.func @depthwise_alignment(%x: tensor<2x16x16x12xf16>, %w: tensor<12x3x3x1xf16>) -> tensor<2x14x14x12xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.depthwise_conv2d_fprop' op alignment 8 does not divide the input channels (12)
  %0 = cutlass.depthwise_conv2d_fprop %x, %w {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 9], warp = [16, 64, 9], instruction = [1, 1, 1], stages = 2>, alignment = array<i64: 8, 8, 4>} : (tensor<2x16x16x12xf16>, tensor<12x3x3x1xf16>) -> tensor<2x14x14x12xf16>
  func.return %0 : tensor<2x14x14x12xf16>
}

// -----

func.func @depthwise_output_alignment(%x: tensor<2x16x16x12xf16>, %w: tensor<12x3x3x1xf16>) -> tensor<2x14x14x12xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.depthwise_conv2d_fprop' op alignment 8 does not divide the channels (12)
  %0 = cutlass.depthwise_conv2d_fprop %x, %w {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 9], warp = [16, 64, 9], instruction = [1, 1, 1], stages = 2>, alignment = array<i64: 4, 4, 8>} : (tensor<2x16x16x12xf16>, tensor<12x3x3x1xf16>) -> tensor<2x14x14x12xf16>
  func.return %0 : tensor<2x14x14x12xf16>
}

// -----

// Each threadblock computes whole rows of the intermediate: the first tile's N is N0 (64).
func.func @b2b_first_n(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op the first threadblock tile's N (128) must be the first N (64)
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The second tile covers N1 (128).
func.func @b2b_second_n(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op the second threadblock tile's N (64) must cover the second N (128)
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Both GEMMs walk the same rows.
func.func @b2b_different_m(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op both threadblock tiles must have the same M
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// Both GEMMs run on one threadblock's warps: 2 and 4 differ.
func.func @b2b_different_warps(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op both GEMMs must use the same number of warps, got 2 and 4
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, residency = "shared", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// In the register file, a warp holds whole rows: warp N = threadblock N.
func.func @b2b_register_warp_n(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op register-file residency needs each warp tile's N to equal its threadblock's N
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// ... and both warp tiles share M.
func.func @b2b_register_warp_m(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op register-file residency needs both warp tiles to have the same M
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [64, 128, 16], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

func.func @b2b_bad_residency(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op residency must be one of register, shared, got 'global'
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "global", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A back-to-back kernel has no residual operand.
func.func @b2b_residual(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op back-to-back epilogues take no residual
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>, epilogue1 = #op.epilogue<residual = add>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// A (M x K0) and B0 (N0 x K0) are read along K0 = 36.
func.func @b2b_alignment_k0(%a: tensor<256x36xf16>, %b0: tensor<64x36xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_gemm' op alignment 8 does not divide A's contiguous dimension (K0) (36)
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x36xf16>, tensor<64x36xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The second tile follows the tile rules too.
func.func @b2b_tile1_warp(%a: tensor<256x64xf16>, %b0: tensor<64x64xf16>, %b1: tensor<128x64xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the warp shape [24, 128, 32] does not divide [64, 128, 32]
  %0 = cutlass.b2b_gemm %a, %b0, %b1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [24, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<128x64xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// The second conv of a b2b conv is a 1x1 conv.
func.func @b2b_conv_second_not_1x1(%x: tensor<2x8x8x64xf16>, %w0: tensor<64x3x3x64xf16>, %w1: tensor<32x3x3x64xf16>) -> tensor<2x6x6x32xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_conv2d' op the second conv must be 1x1, got a 3x3 filter
  %0 = cutlass.b2b_conv2d %x, %w0, %w1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 32, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x64xf16>, tensor<64x3x3x64xf16>, tensor<32x3x3x64xf16>) -> tensor<2x6x6x32xf16>
  func.return %0 : tensor<2x6x6x32xf16>
}

// -----

// A b2b conv reads C = 12 channels in alignment-sized pieces.
func.func @b2b_conv_alignment(%x: tensor<2x8x8x12xf16>, %w0: tensor<64x3x3x12xf16>, %w1: tensor<32x1x1x64xf16>) -> tensor<2x8x8x32xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'cutlass.b2b_conv2d' op alignment 8 does not divide the input channels (12)
  %0 = cutlass.b2b_conv2d %x, %w0, %w1 {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>, tile1 = #cutlass.tile<threadblock = [64, 32, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, residency = "register", alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x12xf16>, tensor<64x3x3x12xf16>, tensor<32x1x1x64xf16>) -> tensor<2x8x8x32xf16>
  func.return %0 : tensor<2x8x8x32xf16>
}

// -----

// #cutlass.tile parse errors (--parsing-diagnostics): three sizes per shape,
func.func @tile_two_sizes(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: threadblock needs 3 sizes (M, N, K)
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// the keys in order,
func.func @tile_order(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: Expected 'threadblock'
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<warp = [64, 64, 32], threadblock = [128, 128, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// -----

// and the stages.
func.func @tile_no_stages(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>) -> tensor<256x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: Expected ','
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16]>, alignment = array<i64: 8, 8, 8>} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}
