// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// cutlass.gemm: one GemmUniversal instance. Properties at their default (op_class
// "tensorop", swizzle 1, split_k 1, row layouts, the identity epilogue) are not printed.

// CHECK-LABEL: func.func @gemm_f16
func.func @gemm_f16(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128xf16>) -> tensor<256x128xf16> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b bias %c {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu>} : (tensor<256x64xf16>, tensor<64x128xf16>, tensor<128xf16>) -> tensor<256x128xf16>
  // CHECK-NOT: op_class
  // CHECK-NOT: swizzle
  // CHECK-NOT: split_k
  // CHECK: func.return
  %0 = cutlass.gemm %a, %b bias %c {arch = "sm80", op_class = "tensorop", accumulator = f32, swizzle = 1 : i64, split_k = 1 : i64, layout_a = "row", layout_b = "row",
        tile = #cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>,
        alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu>}
     : (tensor<256x64xf16>, tensor<64x128xf16>, tensor<128xf16>) -> tensor<256x128xf16>
  func.return %0 : tensor<256x128xf16>
}

// No epilogue at all: `epilogue` is left out.
// CHECK-LABEL: func.func @gemm_plain
func.func @gemm_plain(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf16> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 5>, alignment = array<i64: 8, 8, 8>} : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, epilogue = #op.epilogue<>,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 5>,
        alignment = array<i64: 8, 8, 8>} : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  func.return %0 : tensor<64x64xf16>
}

// Batched: A carries the batch and B is shared; then both carry it.
// CHECK-LABEL: func.func @gemm_batched
func.func @gemm_batched(%a: tensor<4x64x32xf16>, %b: tensor<32x64xf16>, %bb: tensor<4x32x64xf16>) -> (tensor<4x64x64xf16>, tensor<4x64x64xf16>) {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 4>, alignment = array<i64: 8, 8, 8>} : (tensor<4x64x32xf16>, tensor<32x64xf16>) -> tensor<4x64x64xf16>
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 4>,
        alignment = array<i64: 8, 8, 8>} : (tensor<4x64x32xf16>, tensor<32x64xf16>) -> tensor<4x64x64xf16>
  // CHECK: %{{.*}} = cutlass.gemm %a, %bb {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 4>, alignment = array<i64: 8, 8, 8>} : (tensor<4x64x32xf16>, tensor<4x32x64xf16>) -> tensor<4x64x64xf16>
  %1 = cutlass.gemm %a, %bb {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 4>,
        alignment = array<i64: 8, 8, 8>} : (tensor<4x64x32xf16>, tensor<4x32x64xf16>) -> tensor<4x64x64xf16>
  func.return %0, %1 : tensor<4x64x64xf16>, tensor<4x64x64xf16>
}

// Column-major A (stored K x M: its contiguous dimension is M = 40) and B (a Linear
// weight, N x K): A's alignment divides M, B's divides K.
// CHECK-LABEL: func.func @gemm_col_layouts
func.func @gemm_col_layouts(%at: tensor<64x40xf16>, %w: tensor<16x64xf16>) -> tensor<40x16xf16> {
  // CHECK: %{{.*}} = cutlass.gemm %at, %w {arch = "sm80", accumulator = f32, layout_a = "col", layout_b = "col", tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>, alignment = array<i64: 8, 8, 8>} : (tensor<64x40xf16>, tensor<16x64xf16>) -> tensor<40x16xf16>
  %0 = cutlass.gemm %at, %w {arch = "sm80", accumulator = f32, layout_a = "col", layout_b = "col",
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>,
        alignment = array<i64: 8, 8, 8>} : (tensor<64x40xf16>, tensor<16x64xf16>) -> tensor<40x16xf16>
  func.return %0 : tensor<40x16xf16>
}

// Serial split-k: 4 slices of K = 4096, a swizzled grid.
// CHECK-LABEL: func.func @gemm_split_k
func.func @gemm_split_k(%a: tensor<32x4096xf16>, %w: tensor<4096x4096xf16>, %c: tensor<4096xf16>) -> tensor<32x4096xf16> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %w bias %c {arch = "sm80", accumulator = f32, split_k = 4 : i64, swizzle = 4 : i64, tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 5>, alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x4096xf16>, tensor<4096x4096xf16>, tensor<4096xf16>) -> tensor<32x4096xf16>
  %0 = cutlass.gemm %a, %w bias %c {arch = "sm80", accumulator = f32, split_k = 4 : i64, swizzle = 4 : i64,
        tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 5>,
        alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu>}
     : (tensor<32x4096xf16>, tensor<4096x4096xf16>, tensor<4096xf16>) -> tensor<32x4096xf16>
  func.return %0 : tensor<32x4096xf16>
}

// TF32: f32 operands, the m16n8k8 instruction, 4-element (128-bit) accesses.
// CHECK-LABEL: func.func @gemm_tf32
func.func @gemm_tf32(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 16], warp = [64, 32, 16], instruction = [16, 8, 8], stages = 4>, alignment = array<i64: 4, 4, 4>, epilogue = #op.epilogue<alpha = 0.5, gelu>} : (tensor<128x64xf32>, tensor<64x96xf32>) -> tensor<128x96xf32>
  %0 = cutlass.gemm %a, %b {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 64, 16], warp = [64, 32, 16], instruction = [16, 8, 8], stages = 4>,
        alignment = array<i64: 4, 4, 4>, epilogue = #op.epilogue<alpha = 0.5, gelu>} : (tensor<128x64xf32>, tensor<64x96xf32>) -> tensor<128x96xf32>
  func.return %0 : tensor<128x96xf32>
}

// bf16, with a SIMT op class and an odd N (alignment 1 for B and C).
// CHECK-LABEL: func.func @gemm_bf16
func.func @gemm_bf16(%a: tensor<64x32xbf16>, %b: tensor<32x13xbf16>) -> tensor<64x13xbf16> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b {arch = "sm80", op_class = "simt", accumulator = f32, tile = #cutlass.tile<threadblock = [64, 64, 8], warp = [32, 32, 8], instruction = [1, 1, 1], stages = 2>, alignment = array<i64: 8, 1, 1>} : (tensor<64x32xbf16>, tensor<32x13xbf16>) -> tensor<64x13xbf16>
  %0 = cutlass.gemm %a, %b {arch = "sm80", op_class = "simt", accumulator = f32,
        tile = #cutlass.tile<threadblock = [64, 64, 8], warp = [32, 32, 8], instruction = [1, 1, 1], stages = 2>,
        alignment = array<i64: 8, 1, 1>} : (tensor<64x32xbf16>, tensor<32x13xbf16>) -> tensor<64x13xbf16>
  func.return %0 : tensor<64x13xbf16>
}

// The residual block: bias, relu, the residual added, relu again.
// CHECK-LABEL: func.func @gemm_residual
func.func @gemm_residual(%a: tensor<128x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64xbf16>, %r: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  // CHECK: %{{.*}} = cutlass.gemm %a, %b bias %c residual %r {arch = "sm80", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 4>, alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu, residual = add, then relu>} : (tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>, tensor<128x64xbf16>) -> tensor<128x64xbf16>
  %0 = cutlass.gemm %a, %b bias %c residual %r {arch = "sm80", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 64, 32], warp = [64, 32, 32], instruction = [16, 8, 16], stages = 4>,
        alignment = array<i64: 8, 8, 8>, epilogue = #op.epilogue<bias, relu, residual = add, then relu>}
     : (tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>, tensor<128x64xbf16>) -> tensor<128x64xbf16>
  func.return %0 : tensor<128x64xbf16>
}

// sm90: a thread-block cluster and a kernel schedule (3.x parameters).
// CHECK-LABEL: func.func @gemm_sm90
func.func @gemm_sm90(%a: tensor<4096x768xf16>, %w: tensor<3072x768xf16>, %c: tensor<3072xf16>) -> (tensor<4096x3072xf16>, tensor<4096x3072xf16>, tensor<4096x3072xf16>) {
  // CHECK: %{{.*}} = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 4>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 2, 1, 1>, kernel_schedule = "cooperative", layout_b = "col", epilogue = #op.epilogue<bias, relu>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  %0 = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 4>,
        alignment = array<i64: 8, 8, 8>, cluster = array<i64: 2, 1, 1>, kernel_schedule = "cooperative", layout_b = "col",
        epilogue = #op.epilogue<bias, relu>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  // CHECK: %{{.*}} = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 5>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 2, 1>, kernel_schedule = "pingpong", layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  %1 = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 5>,
        alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 2, 1>, kernel_schedule = "pingpong", layout_b = "col",
        epilogue = #op.epilogue<bias>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  // The cooperative kernel on the stream-K scheduler.
  // CHECK: %{{.*}} = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [128, 256, 64], warp = [64, 256, 64], instruction = [64, 256, 16], stages = 0>, alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 1, 1>, kernel_schedule = "streamk", layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  %3 = cutlass.gemm %a, %w bias %c {arch = "sm90", accumulator = f32,
        tile = #cutlass.tile<threadblock = [128, 256, 64], warp = [64, 256, 64], instruction = [64, 256, 16], stages = 0>,
        alignment = array<i64: 8, 8, 8>, cluster = array<i64: 1, 1, 1>, kernel_schedule = "streamk", layout_b = "col",
        epilogue = #op.epilogue<bias>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  // Without a cluster or a schedule, CUTLASS picks ("auto").
  // CHECK: %{{.*}} = cutlass.gemm %a, %w {arch = "sm90", accumulator = f32, tile = #cutlass.tile<threadblock = [256, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 3>, alignment = array<i64: 8, 8, 8>, kernel_schedule = "auto", layout_b = "col"} : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
  %2 = cutlass.gemm %a, %w {arch = "sm90", accumulator = f32,
        tile = #cutlass.tile<threadblock = [256, 128, 64], warp = [64, 128, 64], instruction = [64, 128, 16], stages = 3>,
        alignment = array<i64: 8, 8, 8>, kernel_schedule = "auto", layout_b = "col"} : (tensor<4096x768xf16>, tensor<3072x768xf16>) -> tensor<4096x3072xf16>
  func.return %0, %1, %2 : tensor<4096x3072xf16>, tensor<4096x3072xf16>, tensor<4096x3072xf16>
}
