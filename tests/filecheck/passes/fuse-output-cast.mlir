// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-output-cast' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-output-cast' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 small_m=cutlass},fuse-output-cast' | filecheck %s --check-prefix=CUTLASS

// A batch-1 classifier on our few-rows GEMM (skinny_gemm) writes the model's f32 output
// itself: the cast after it is gone. A GEMM whose result has another user, and one on
// CUTLASS's kernel (48 rows, or small_m=cutlass), keep their casts.

// CHECK-LABEL: func.func @classifier
// CHECK-NEXT:  %0 = op.gemm %x, %w bias %b
// CHECK-SAME:  family = "skinny_gemm"
// CHECK-SAME:  -> tensor<1x1000xf32>
// CHECK-NEXT:  func.return %0 : tensor<1x1000xf32>
// CUTLASS-LABEL: func.func @classifier
// CUTLASS:       op.gemm
// CUTLASS-SAME:  -> tensor<1x1000xf16>
// CUTLASS:       op.elementwise
func.func @classifier(%x: tensor<1x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> tensor<1x1000xf32> {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<1x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<1x1000xf16>
  %1 = op.elementwise (%0) {
  ^bb0(%v: f16):
    %w32 = arith.extf %v : f16 to f32
    op.yield %w32 : f32
  } : (tensor<1x1000xf16>) -> tensor<1x1000xf32>
  func.return %1 : tensor<1x1000xf32>
}

// CHECK-LABEL: func.func @two_users
// CHECK:       op.gemm
// CHECK-SAME:  -> tensor<1x1000xf16>
// CHECK:       op.elementwise
func.func @two_users(%x: tensor<1x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> (tensor<1x1000xf32>, tensor<1x1000xf16>) {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<1x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<1x1000xf16>
  %1 = op.elementwise (%0) {
  ^bb0(%v: f16):
    %w32 = arith.extf %v : f16 to f32
    op.yield %w32 : f32
  } : (tensor<1x1000xf16>) -> tensor<1x1000xf32>
  func.return %1, %0 : tensor<1x1000xf32>, tensor<1x1000xf16>
}

// CHECK-LABEL: func.func @batch48
// CHECK:       kernel = {family = "gemm"
// CHECK-SAME:  -> tensor<48x1000xf16>
// CHECK:       op.elementwise
func.func @batch48(%x: tensor<48x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> tensor<48x1000xf32> {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<48x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<48x1000xf16>
  %1 = op.elementwise (%0) {
  ^bb0(%v: f16):
    %w32 = arith.extf %v : f16 to f32
    op.yield %w32 : f32
  } : (tensor<48x1000xf16>) -> tensor<48x1000xf32>
  func.return %1 : tensor<48x1000xf32>
}

// STATS:      fuse-output-cast
// STATS-NEXT: 1 output casts fused into skinny_gemm
