// RUN: bolt-opt %s -p fold-batchnorm | filecheck %s
// RUN: bolt-opt %s -p fold-batchnorm --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      fold-batchnorm
// STATS-NEXT:   3 batchnorms folded into conv
// STATS-NEXT:   2 batchnorms folded into gemm
// STATS-NEXT:   4 batchnorms turned into scale and shift
// STATS-NEXT:   - graph.batch_norm at {{.*}}fold-batchnorm.mlir:{{[0-9]+}}:3 not folded into graph.conv2d at {{.*}}: its result has other users
// STATS-NEXT:   - graph.batch_norm at {{.*}} not folded into graph.conv2d at {{.*}}: its layout is not NCHW
// STATS-NEXT:   - left graph.batch_norm at {{.*}} alone: its statistics are not constants

// Every BN below has s = scale / sqrt(variance + epsilon) = [2, 1.5] and
// t = bias - mean * s = [0, -2.5] (epsilon 0, variance [1, 4]).

// conv(x, W, b) then BN: conv(x, W * s, b * s + t).
// CHECK-LABEL: func.func @conv_with_bias
func.func @conv_with_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[2.000000e+00]]], [{{\[}}[3.000000e+00]]]]> : tensor<2x1x1x1xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<[2.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %{{.*}}, %[[W]], %[[B]] : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  // CHECK-NOT: graph.batch_norm
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w, %b : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %1 : tensor<1x2x4x4xf32>
}

// A conv without bias gets one (t); strides, pads and group stay.
// CHECK-LABEL: func.func @depthwise_conv_without_bias
func.func @depthwise_conv_without_bias(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense_resource<{{.*}}> : tensor<2x1x3x3xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %{{.*}}, %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64}
  // CHECK-NEXT: func.return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<2x1x3x3xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x2x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %1 : tensor<1x2x3x3xf32>
}

// conv_transpose2d's output channels are its weight's axis 1.
// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[2.000000e+00]], {{\[}}[1.500000e+00]]]]> : tensor<1x2x1x1xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv_transpose2d %{{.*}}, %[[W]], %[[B]]
  // CHECK-NEXT: func.return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<1x2x1x1xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv_transpose2d %x, %w : (tensor<1x1x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %1 : tensor<1x2x3x3xf32>
}

// gemm then BN: the BN's channels are the gemm's columns: B's rows with trans_b, and
// C becomes s * beta * C + t (beta goes back to its default, 1).
// CHECK-LABEL: func.func @gemm
func.func @gemm(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<{{\[}}[2.000000e+00, 2.000000e+00, 2.000000e+00], [1.500000e+00, 1.500000e+00, 1.500000e+00]]> : tensor<2x3xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<[4.000000e+00, 5.000000e-01]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.gemm %{{.*}}, %[[B]], %[[C]] {alpha = 5.000000e-01 : f32, trans_b} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %b = graph.constant dense<1.0> : tensor<2x3xf32>
  %c = graph.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, trans_b} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %1 : tensor<4x2xf32>
}

// A 2-D matmul then BN becomes a gemm with C = t.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<{{\[}}[2.000000e+00, 1.500000e+00], [2.000000e+00, 1.500000e+00], [2.000000e+00, 1.500000e+00]]> : tensor<3x2xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.gemm %{{.*}}, %[[B]], %[[C]] : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %b = graph.constant dense<1.0> : tensor<3x2xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.matmul %a, %b : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %1 : tensor<4x2xf32>
}

// A BN on a graph input: x * s + t with s and t of shape [C, 1, 1].
// CHECK-LABEL: func.func @lone
func.func @lone(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense<{{\[}}[{{\[}}2.000000e+00]], {{\[}}[1.500000e+00]]]> : tensor<2x1x1xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.constant dense<{{\[}}[{{\[}}0.000000e+00]], {{\[}}[-2.500000e+00]]]> : tensor<2x1x1xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[X:.*]], %[[S]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[M]], %[[T]] : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: func.return %[[A]]
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// Rank 2: s and t of shape [C].
// CHECK-LABEL: func.func @lone_rank2
func.func @lone_rank2(%x: tensor<5x2xf32>) -> tensor<5x2xf32> {
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense<[2.000000e+00, 1.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.constant dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %{{.*}}, %[[S]]
  // CHECK-NEXT: %{{.*}} = graph.add %[[M]], %[[T]]
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<5x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}

// The conv has another user: it stays as it is, and the BN becomes scale and shift.
// CHECK-LABEL: func.func @conv_with_other_users
func.func @conv_with_other_users(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK:      %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], {{\[}}[{{\[}}2.000000e+00]]]]>
  // CHECK:      %[[C:.*]] = graph.conv2d %{{.*}}, %[[W]]
  // CHECK:      %[[M:.*]] = graph.mul %[[C]], %{{.*}}
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[M]], %{{.*}}
  // CHECK-NEXT: func.return %[[A]], %[[C]]
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %1, %0 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// After an NHWC conv, the BN's axis 1 is H, not the conv's channels: no fold.
// CHECK-LABEL: func.func @nhwc_conv
func.func @nhwc_conv(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x3xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d %{{.*}}, %{{.*}} {layout = "NHWC"}
  // CHECK:      %[[M:.*]] = graph.mul %[[C]], %{{.*}}
  // CHECK-NEXT: %{{.*}} = graph.add %[[M]], %{{.*}}
  %w = graph.constant dense<1.0> : tensor<3x1x1x1xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {layout = "NHWC"} : (tensor<1x2x2x1xf32>, tensor<3x1x1x1xf32>) -> tensor<1x2x2x3xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x3xf32>
  func.return %1 : tensor<1x2x2x3xf32>
}

// Statistics that are not constants: the BN stays.
// CHECK-LABEL: func.func @dynamic_statistics
func.func @dynamic_statistics(%x: tensor<1x2x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK: %[[Y:.*]] = graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  // CHECK-NEXT: func.return %[[Y]]
  // CHECK-NOT: graph.mul
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %0 = graph.batch_norm %x, %one, %one, %mean, %one : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}
