// The db selector: the fastest recorded candidate where the tuning database has the op,
// the heuristic elsewhere; cutlass=2 takes the fastest recorded 2.x candidate.
// RUN: rm -f %t.sqlite && bolt-tune db import %S/Inputs/tuning-gemm.json --tuning-db %t.sqlite
// RUN: bolt-opt %s -p 'select-kernels{selector=db tuning_db="%t.sqlite" arch=sm90 sms=132}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=db tuning_db="%t.sqlite" arch=sm90 sms=132 cutlass=2}' | filecheck %s --check-prefix=TWO
// RUN: bolt-opt %s -p 'select-kernels{selector=db tuning_db="%t.sqlite" arch=sm90 sms=132}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=db tuning_db="%t.missing" arch=sm90}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @main
// The record's fastest: a 128x192 ping-pong tile with a 2x1 cluster.
// CHECK: op.gemm
// CHECK-SAME: threadblock = array<i64: 128, 192, 64>
// CHECK-SAME: cluster = array<i64: 2, 1, 1>, kernel_schedule = "pingpong"
// Not in the database: the heuristic's.
// CHECK: op.gemm
// CHECK-SAME: arch = "sm90"
// TWO-LABEL: func.func @main
// TWO: op.gemm
// TWO-SAME: arch = "sm80"
// TWO-SAME: threadblock = array<i64: 128, 256, 32>
// STATS: select-kernels
// STATS-DAG: 1 kernels from the heuristic
// STATS-DAG: 1 kernels from the tuning database
// MISSING: 2 kernels from the heuristic
// MISSING: no tuning database at {{.*}}.missing: every kernel is the heuristic's (untuned)
func.func @main(%x: tensor<4096x768xf16>, %w: tensor<3072x768xf16>, %bias: tensor<3072xf16>, %w2: tensor<1024x3072xf16>) -> tensor<4096x1024xf16> {
  %0 = op.gemm %x, %w bias %bias {layout_b = "col", epilogue = #op.epilogue<bias, relu>} : (tensor<4096x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<4096x3072xf16>
  %1 = op.gemm %0, %w2 {layout_b = "col", epilogue = #op.epilogue<relu>} : (tensor<4096x3072xf16>, tensor<1024x3072xf16>) -> tensor<4096x1024xf16>
  func.return %1 : tensor<4096x1024xf16>
}
