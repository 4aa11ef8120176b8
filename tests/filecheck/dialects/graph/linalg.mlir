// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// matmul (numpy.matmul), gemm (ONNX Gemm) and batch_norm (inference BatchNormalization).

// CHECK-LABEL: func.func @matmul_2d
func.func @matmul_2d(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// Batch dimensions broadcast: 2x1 and 5 give 2x5.
// CHECK-LABEL: func.func @matmul_batched_broadcast
func.func @matmul_batched_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  // CHECK: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  %0 = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  func.return %0 : tensor<2x5x3x6xf32>
}

// A 1-D operand is a row (left) or a column (right); its unit axis is dropped.
// CHECK-LABEL: func.func @matmul_vectors
func.func @matmul_vectors(%v: tensor<3xf32>, %m: tensor<3x4xf32>, %n: tensor<2x3xf32>, %bm: tensor<5x3x4xf32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<f32>, tensor<5x4xf32>) {
  // CHECK: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  // CHECK-NEXT: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  // CHECK-NEXT: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<5x3x4xf32>) -> tensor<5x4xf32>
  %0 = graph.matmul %v, %m : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %1 = graph.matmul %n, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  %2 = graph.matmul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %3 = graph.matmul %v, %bm : (tensor<3xf32>, tensor<5x3x4xf32>) -> tensor<5x4xf32>
  func.return %0, %1, %2, %3 : tensor<4xf32>, tensor<2xf32>, tensor<f32>, tensor<5x4xf32>
}

// CHECK-LABEL: func.func @matmul_int
func.func @matmul_int(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x2xi32> {
  // CHECK: %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  %0 = graph.matmul %a, %b : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  func.return %0 : tensor<2x2xi32>
}

// CHECK-LABEL: func.func @gemm_no_c
func.func @gemm_no_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = graph.gemm %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// alpha = beta = 1.0 are the defaults and are elided.
// CHECK-LABEL: func.func @gemm_explicit_defaults
func.func @gemm_explicit_defaults(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %0 = graph.gemm %a, %b, %c {alpha = 1.0 : f32, beta = 1.0 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// The classifier of an ONNX model: Gemm with transB and a bias row.
// CHECK-LABEL: func.func @gemm_trans_b
func.func @gemm_trans_b(%a: tensor<1x2048xf32>, %b: tensor<1000x2048xf32>, %c: tensor<1000xf32>) -> tensor<1x1000xf32> {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  %0 = graph.gemm %a, %b, %c {trans_b} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  func.return %0 : tensor<1x1000xf32>
}

// CHECK-LABEL: func.func @gemm_trans_a
func.func @gemm_trans_a(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}} {trans_a} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = graph.gemm %a, %b {trans_a} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// Everything at once; C is a full M x N matrix.
// CHECK-LABEL: func.func @gemm_all_attributes
func.func @gemm_all_attributes(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a, trans_b} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = graph.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, trans_a, trans_b} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// C broadcasts to M x N: a scalar, a column, a rank-0 tensor.
// CHECK-LABEL: func.func @gemm_c_broadcast
func.func @gemm_c_broadcast(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c1: tensor<1xf32>, %c2: tensor<2x1xf32>, %c0: tensor<f32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {beta = 0.000000e+00 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = -1.000000e+00 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %0 = graph.gemm %a, %b, %c1 {beta = 0.0 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  %1 = graph.gemm %a, %b, %c2 : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %2 = graph.gemm %a, %b, %c0 {alpha = -1.0 : f32} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x8x4x4xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: %{{.*}} = graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %0 = graph.batch_norm %x, %s, %b, %m, %v : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// The default epsilon (1e-5) is elided, another one is printed; rank 2 (N x C) input.
// CHECK-LABEL: func.func @batch_norm_epsilon
func.func @batch_norm_epsilon(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %{{.*}} = graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-03 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
