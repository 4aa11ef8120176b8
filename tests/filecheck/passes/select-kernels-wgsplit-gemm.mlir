// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 split_gemms=wgsplit}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 split_gemms=wgsplit},lower-op-to-cutlass' | filecheck %s --check-prefix=LOWERED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 split_gemms=cutlass}' | filecheck %s --check-prefix=CUTLASS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80 split_gemms=wgsplit}' | filecheck %s --check-prefix=SM80
// RUN: not bolt-opt %s -p 'select-kernels{split_gemms=streamk}' 2>&1 | filecheck %s --check-prefix=OPTION

// With split_gemms=wgsplit (the default), a GEMM of at most 256 rows on sm90 with K at least 4 N (BERT b1's
// FFN2: 128 rows, a K x N weight) runs on our kernel with K split among a cluster's CTAs and
// their warp groups, its tile (rows, columns, cluster CTAs); lower-op-to-cutlass
// leaves it an op.gemm with its whole epilogue. 384 rows stay CUTLASS's, as does a K under 4 N
// (the output projection); so does everything under split_gemms=cutlass and on sm80.

// OPTION:     {{^}}error: split_gemms must be one of cutlass, wgsplit; got 'streamk'{{$}}
// OPTION-NOT: Traceback

// CHECK-LABEL: func.func @ffn2
// CHECK:       op.gemm %x, %w bias %b residual %r
// CHECK-SAME:  kernel = {family = "wgsplit_gemm", arch = "sm90", threadblock = array<i64: 64, 32, 2>
// LOWERED-LABEL: func.func @ffn2
// LOWERED-NOT:   cutlass.
// LOWERED:       op.gemm %x, %w bias %b residual %r
// LOWERED-SAME:  epilogue = #op.epilogue<bias, residual = add>
// LOWERED-SAME:  family = "wgsplit_gemm"
// CUTLASS-LABEL: func.func @ffn2
// CUTLASS:       kernel = {family = "gemm", arch = "sm90", threadblock = array<i64: 64, 32, 64>
// SM80-LABEL:    func.func @ffn2
// SM80:          kernel = {family = "gemm", arch = "sm80"
func.func @ffn2(%x: tensor<128x3072xf16>, %w: tensor<3072x768xf16>, %b: tensor<768xf16>, %r: tensor<128x768xf16>) -> tensor<128x768xf16> {
  %0 = op.gemm %x, %w bias %b residual %r {layout_b = "row", epilogue = #op.epilogue<bias, residual = add>} : (tensor<128x3072xf16>, tensor<3072x768xf16>, tensor<768xf16>, tensor<128x768xf16>) -> tensor<128x768xf16>
  func.return %0 : tensor<128x768xf16>
}

// CHECK-LABEL: func.func @rows384
// CHECK:       kernel = {family = "gemm", arch = "sm90"
func.func @rows384(%x: tensor<384x768xf16>, %w: tensor<768x768xf16>) -> tensor<384x768xf16> {
  %0 = op.gemm %x, %w {layout_b = "col"} : (tensor<384x768xf16>, tensor<768x768xf16>) -> tensor<384x768xf16>
  func.return %0 : tensor<384x768xf16>
}

// CHECK-LABEL: func.func @outproj
// CHECK:       kernel = {family = "gemm", arch = "sm90"
func.func @outproj(%x: tensor<128x768xf16>, %w: tensor<768x768xf16>) -> tensor<128x768xf16> {
  %0 = op.gemm %x, %w {layout_b = "col"} : (tensor<128x768xf16>, tensor<768x768xf16>) -> tensor<128x768xf16>
  func.return %0 : tensor<128x768xf16>
}
