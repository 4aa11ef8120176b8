// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80}' | filecheck %s --check-prefix=SM80
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' | filecheck %s --check-prefix=LOWERED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 small_m=cutlass},lower-op-to-cutlass' | filecheck %s --check-prefix=CUTLASS
// RUN: not bolt-opt %s -p 'select-kernels{small_m=gemv}' 2>&1 | filecheck %s --check-prefix=OPTION

// A GEMM with few rows (a batch-1 classifier) and an N x K weight runs on our
// weight-streaming kernel (skinny_gemm, plain CUDA: an "sm80" choice on either target),
// its tile a CTA's weight rows x warps x unroll. lower-op-to-cutlass leaves it an op.gemm
// with its whole epilogue; small_m=cutlass keeps CUTLASS's GEMM. Up to 32 rows (a batch-32
// classifier: four column blocks) are ours; 48 rows stay CUTLASS's.

// OPTION:     {{^}}error: small_m must be one of skinny, cutlass; got 'gemv'{{$}}
// OPTION-NOT: Traceback

// CHECK-LABEL: func.func @classifier
// CHECK:       op.gemm %x, %w bias %b
// CHECK-SAME:  kernel = {family = "skinny_gemm", arch = "sm80", threadblock = array<i64: 8, 16, 4>
// SM80-LABEL: func.func @classifier
// SM80:       kernel = {family = "skinny_gemm", arch = "sm80", threadblock = array<i64: 8, 16, 4>
// SM80-LABEL: func.func @batch48
// SM80:       kernel = {family = "gemm"
// LOWERED-LABEL: func.func @classifier
// LOWERED-NOT:   cutlass.
// LOWERED:       op.gemm %x, %w bias %b
// LOWERED-SAME:  epilogue = #op.epilogue<bias, relu>
// LOWERED-SAME:  family = "skinny_gemm"
// LOWERED-NOT:   op.elementwise
// CUTLASS-LABEL: func.func @classifier
// CUTLASS:       cutlass.gemm %x, %w bias %b
func.func @classifier(%x: tensor<1x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> tensor<1x1000xf16> {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias, relu>} : (tensor<1x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<1x1000xf16>
  func.return %0 : tensor<1x1000xf16>
}

// CHECK-LABEL: func.func @batch32
// CHECK:       kernel = {family = "skinny_gemm", arch = "sm80", threadblock = array<i64: 8, 16, 1>
// LOWERED-LABEL: func.func @batch32
// LOWERED-NOT:   cutlass.
// LOWERED:       family = "skinny_gemm"
func.func @batch32(%x: tensor<32x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> tensor<32x1000xf16> {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<32x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<32x1000xf16>
  func.return %0 : tensor<32x1000xf16>
}

// CHECK-LABEL: func.func @batch48
// CHECK:       kernel = {family = "gemm"
// LOWERED-LABEL: func.func @batch48
// LOWERED:       cutlass.gemm
func.func @batch48(%x: tensor<48x2048xf16>, %w: tensor<1000x2048xf16>, %b: tensor<1000xf16>) -> tensor<48x1000xf16> {
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<48x2048xf16>, tensor<1000x2048xf16>, tensor<1000xf16>) -> tensor<48x1000xf16>
  func.return %0 : tensor<48x1000xf16>
}

// STATS: lower-op-to-cutlass
// STATS: 2 skinny_gemm kernels (op.gemm kept)
