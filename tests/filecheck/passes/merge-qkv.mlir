// RUN: bolt-opt %s -p merge-qkv | filecheck %s
// RUN: bolt-opt %s -p merge-qkv --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      merge-qkv
// STATS-NEXT:   1 projections merged
// STATS-NEXT:   1 packed splits read
// STATS-NEXT:   - left op.attention at {{.*}}merge-qkv.mlir:{{[0-9]+}}:{{[0-9]+}} alone: the projections differ in input, shape, layout or epilogue

// Three projections of %x with their biases: one GEMM over the joined weights (new
// weights, their values checked by tests/passes/test_attention_passes.py), read packed.
// CHECK-LABEL: func.func @three_gemms
func.func @three_gemms(%x: tensor<2x4x8xf32>, %m: tensor<2x1x1x4xf32>) -> tensor<2x4x2x4xf32> {
  // CHECK-NEXT: %[[W:.*]] = op.constant dense_resource<wq.qkv_weight> : tensor<8x24xf32>
  // CHECK-NEXT: %[[B:.*]] = op.constant dense_resource<wq.qkv_bias> : tensor<24xf32>
  // CHECK-NEXT: %[[G:.*]] = op.gemm %x, %[[W]] bias %[[B]] {epilogue = #op.epilogue<bias>} : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
  // CHECK-NEXT: %[[P:.*]] = op.reshape %[[G]] : tensor<2x4x24xf32> -> tensor<2x4x3x2x4xf32>
  // CHECK-NEXT: %[[A:.*]] = op.attention %[[P]] bias %m {layout = "BS3HD", scale = 5.000000e-01 : f32} : (tensor<2x4x3x2x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x4x2x4xf32>
  // CHECK-NEXT: func.return %[[A]]
  %wq = op.constant dense<0.5> : tensor<8x8xf32>
  %wk = op.constant dense<0.25> : tensor<8x8xf32>
  %wv = op.constant dense<0.125> : tensor<8x8xf32>
  %bq = op.constant dense<1.0> : tensor<8xf32>
  %bk = op.constant dense<2.0> : tensor<8xf32>
  %bv = op.constant dense<3.0> : tensor<8xf32>
  %q = op.gemm %x, %wq bias %bq {epilogue = #op.epilogue<bias>} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %k = op.gemm %x, %wk bias %bk {epilogue = #op.epilogue<bias>} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %v = op.gemm %x, %wv bias %bv {epilogue = #op.epilogue<bias>} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %qh = op.reshape %q : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %kh = op.reshape %k : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %vh = op.reshape %v : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %a = op.attention %qh k %kh v %vh bias %m {layout = "BSHD", scale = 0.5 : f32} : (tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x4x2x4xf32>
  func.return %a : tensor<2x4x2x4xf32>
}

// GPT-2's c_attn: one GEMM split in three along N; the attention reads the GEMM as it is.
// CHECK-LABEL: func.func @split_projection
func.func @split_projection(%qkv: tensor<1x4x24xf32>) -> tensor<1x4x2x4xf32> {
  // CHECK-NEXT: %[[P:.*]] = op.reshape %qkv : tensor<1x4x24xf32> -> tensor<1x4x3x2x4xf32>
  // CHECK-NEXT: %[[A:.*]] = op.attention %[[P]] {layout = "BS3HD", scale = 5.000000e-01 : f32, causal}
  // CHECK-NEXT: func.return %[[A]]
  %q = op.slice %qkv {starts = array<i64: 0>, ends = array<i64: 8>, axes = array<i64: 2>, steps = array<i64: 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %k = op.slice %qkv {starts = array<i64: 8>, ends = array<i64: 16>, axes = array<i64: -1>, steps = array<i64: 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %v = op.slice %qkv {starts = array<i64: 16>, ends = array<i64: 24>, axes = array<i64: 2>, steps = array<i64: 1>} : tensor<1x4x24xf32> -> tensor<1x4x8xf32>
  %qh = op.reshape %q : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %kh = op.reshape %k : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %vh = op.reshape %v : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %a = op.attention %qh k %kh v %vh {layout = "BSHD", scale = 0.5 : f32, causal} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  func.return %a : tensor<1x4x2x4xf32>
}

// Left alone: V is projected from another input (cross-attention's K and V would be).
// CHECK-LABEL: func.func @other_input
func.func @other_input(%x: tensor<1x4x8xf32>, %y: tensor<1x4x8xf32>) -> tensor<1x4x2x4xf32> {
  // CHECK: op.attention %{{.*}} k %{{.*}} v %{{.*}} {layout = "BSHD"
  %w = op.constant dense<0.5> : tensor<8x8xf32>
  %q = op.gemm %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %k = op.gemm %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %v = op.gemm %y, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %qh = op.reshape %q : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %kh = op.reshape %k : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %vh = op.reshape %v : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %a = op.attention %qh k %kh v %vh {layout = "BSHD", scale = 0.5 : f32} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x4xf32>
  func.return %a : tensor<1x4x2x4xf32>
}
