// RUN: bolt-opt %s -p convert-layout | filecheck %s
// RUN: bolt-opt %s -p 'convert-layout{layout=NHWC}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'convert-layout{layout=NWHC}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: error: bad argument for pass 'convert-layout': layout must be one of NCHW, NHWC, got 'NWHC'

// STATS:      convert-layout
// STATS-DAG:  31 transposes inserted
// STATS-DAG:  12 weights transposed
// STATS-DAG:  13 convs converted
// STATS-DAG:  2 pools converted
// STATS-DAG:  1 batchnorms rewritten
// STATS-DAG:  17 transposes cancelled
// STATS-DAG:  15 transposes left
// STATS-DAG:  - left graph.transpose at {{.*}}convert-layout.mlir:{{[0-9]+}}:3 (perm [0, 2, 3, 1]): it reads a model input and feeds graph.conv2d, graph.sum
// STATS-DAG:  - left graph.transpose at {{.*}}convert-layout.mlir:{{[0-9]+}}:3 (perm [0, 3, 1, 2]): it reads graph.max_pool2d and feeds func.return
// STATS-DAG:  - left graph.transpose at {{.*}}convert-layout.mlir:{{[0-9]+}}:3 (perm [0, 3, 1, 2]): it reads graph.conv2d and feeds graph.add

// A conv, a per-channel scale, a relu and a pool: one transpose in, one out. The OIHW
// weight is transposed to OHWI at compile time (2x2x1x2 -> 2x1x2x2), and the [C,1,1]
// scale broadcast from the right becomes [1,1,C].
// CHECK-LABEL: func.func @conv_scale_relu_pool
func.func @conv_scale_relu_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x3xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]], {{\[}}[{{\[}}5.000000e+00, 7.000000e+00], [6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x2x2xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x4x4x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x4x3x2xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense<{{\[}}[{{\[}}5.000000e-01, 2.000000e+00]]]> : tensor<1x1x2xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[C]], %[[S]] : (tensor<1x4x3x2xf32>, tensor<1x1x2xf32>) -> tensor<1x4x3x2xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[M]] : tensor<1x4x3x2xf32>
  // CHECK-NEXT: %[[P:.*]] = graph.max_pool2d %[[R]] {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, ceil_mode, layout = "NHWC"} : tensor<1x4x3x2xf32> -> tensor<1x4x3x2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x3x2xf32> -> tensor<1x2x4x3xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %w = graph.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]], [[[5.0, 6.0]], [[7.0, 8.0]]]]> : tensor<2x2x1x2xf32>
  %s = graph.constant dense<[[[0.5]], [[2.0]]]> : tensor<2x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x4x3xf32>
  %1 = graph.mul %0, %s : (tensor<1x2x4x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x3xf32>
  %2 = graph.relu %1 : tensor<1x2x4x3xf32>
  %3 = graph.max_pool2d %2 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<1x2x4x3xf32> -> tensor<1x2x4x3xf32>
  func.return %3 : tensor<1x2x4x3xf32>
}

// A residual block: the add of two transposed values and a [C,1,1] constant moves
// past the transposes, which then cancel against the next conv's.
// CHECK-LABEL: func.func @residual
func.func @residual(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x5x5xf32> -> tensor<1x5x5x3xf32>
  // CHECK:      %[[A:.*]] = graph.conv2d %[[X]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[A]] : tensor<1x5x5x3xf32>
  // CHECK:      %[[B:.*]] = graph.conv2d %[[R]], %{{.*}} {layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[K:.*]] = graph.constant dense<{{\[}}[{{\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]]]> : tensor<1x1x3xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.sum %[[B]], %[[X]], %[[K]] : (tensor<1x5x5x3xf32>, tensor<1x5x5x3xf32>, tensor<1x1x3xf32>) -> tensor<1x5x5x3xf32>
  // CHECK-NEXT: %[[Z:.*]] = graph.relu %[[S]] : tensor<1x5x5x3xf32>
  // CHECK:      %[[C:.*]] = graph.conv2d %[[Z]], %{{.*}} {layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[Y:.*]] = graph.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>}
  // CHECK-NEXT: func.return %[[Y]]
  %w3 = graph.constant dense<0.1> : tensor<3x3x3x3xf32>
  %w1 = graph.constant dense<0.2> : tensor<3x3x1x1xf32>
  %k = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = graph.relu %0 : tensor<1x3x5x5xf32>
  %2 = graph.conv2d %1, %w1 : (tensor<1x3x5x5xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x5x5xf32>
  %3 = graph.sum %2, %x, %k : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>, tensor<3x1x1xf32>) -> tensor<1x3x5x5xf32>
  %4 = graph.relu %3 : tensor<1x3x5x5xf32>
  %5 = graph.conv2d %4, %w1 : (tensor<1x3x5x5xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x5x5xf32>
  func.return %5 : tensor<1x3x5x5xf32>
}

// The classifier: global_avg_pool's NHWC result 1x1x1xC only moves size-1 dims on its
// way back to NCHW: a reshape, merged into the flatten. No transpose before the gemm.
// CHECK-LABEL: func.func @classifier
func.func @classifier(%x: tensor<1x3x6x6xf32>) -> tensor<1x2xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d
  // CHECK-NEXT: %[[P:.*]] = graph.global_avg_pool %[[C]] {layout = "NHWC"} : tensor<1x6x6x4xf32> -> tensor<1x1x1x4xf32>
  // CHECK-NEXT: %[[F:.*]] = graph.flatten %[[P]] : tensor<1x1x1x4xf32> -> tensor<1x4xf32>
  // CHECK:      graph.gemm %[[F]]
  %w = graph.constant dense<0.1> : tensor<4x3x3x3xf32>
  %fc = graph.constant dense<0.5> : tensor<2x4xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = graph.global_avg_pool %0 : tensor<1x4x6x6xf32> -> tensor<1x4x1x1xf32>
  %2 = graph.flatten %1 : tensor<1x4x1x1xf32> -> tensor<1x4xf32>
  %3 = graph.gemm %2, %fc {trans_b} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  func.return %3 : tensor<1x2xf32>
}

// A batch_norm between two convs becomes a multiply and an add by per-channel
// constants shaped [C], which broadcast along the NHWC channels.
// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense<[2.000000e+00, 1.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.constant dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[C]], %[[S]] : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[M]], %[[T]] : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  // CHECK:      graph.conv2d %[[A]]
  // CHECK-NOT:  graph.batch_norm
  %w = graph.constant dense<0.3> : tensor<2x2x1x1xf32>
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.25, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %0, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = graph.conv2d %1, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %2 : tensor<1x2x4x4xf32>
}

// Concat along the channels: the axis becomes 3.
// CHECK-LABEL: func.func @concat
func.func @concat(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32>
  %w2 = graph.constant dense<0.3> : tensor<2x2x1x1xf32>
  %w1 = graph.constant dense<0.4> : tensor<1x2x1x1xf32>
  %w3 = graph.constant dense<0.5> : tensor<3x3x1x1xf32>
  %0 = graph.conv2d %x, %w2 : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.conv2d %x, %w1 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.concat %0, %1 {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x4x4xf32>
  %3 = graph.conv2d %2, %w3 : (tensor<1x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x4x4xf32>
  func.return %3 : tensor<1x3x4x4xf32>
}

// A channel shuffle (ShuffleNet): in NHWC it is reshape, transpose of the two channel
// factors, reshape; the layout transposes move through the reshapes and cancel.
// CHECK-LABEL: func.func @channel_shuffle
func.func @channel_shuffle(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // CHECK:      %[[A:.*]] = graph.conv2d
  // CHECK-NEXT: %[[S:.*]] = graph.reshape %[[A]] : tensor<1x3x3x4xf32> -> tensor<1x3x3x2x2xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[S]] {perm = array<i64: 0, 1, 2, 4, 3>} : tensor<1x3x3x2x2xf32> -> tensor<1x3x3x2x2xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.reshape %[[T]] : tensor<1x3x3x2x2xf32> -> tensor<1x3x3x4xf32>
  // CHECK:      graph.conv2d %[[M]]
  %w = graph.constant dense<0.25> : tensor<4x4x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %1 = graph.reshape %0 : tensor<1x4x3x3xf32> -> tensor<1x2x2x3x3xf32>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x2x2x3x3xf32> -> tensor<1x2x2x3x3xf32>
  %3 = graph.reshape %2 : tensor<1x2x2x3x3xf32> -> tensor<1x4x3x3xf32>
  %4 = graph.conv2d %3, %w : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %4 : tensor<1x4x3x3xf32>
}

// ------------------------------------------------------------------- left alone

// No conv or pool: nothing changes.
// CHECK-LABEL: func.func @no_convs
func.func @no_convs(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: %[[M:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[M]] : tensor<2x4xf32>
  // CHECK-NEXT: func.return %[[R]]
  %0 = graph.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = graph.relu %0 : tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}

// Already NHWC with an OHWI filter: nothing changes.
// CHECK-LABEL: func.func @already_nhwc
func.func @already_nhwc(%x: tensor<1x4x4x2xf32>, %w: tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32> {
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %{{.*}}, %{{.*}} {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: func.return %[[C]]
  %0 = graph.conv2d %x, %w {layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
  func.return %0 : tensor<1x4x4x3xf32>
}

// An add whose other operand is an NCHW value nothing transposes stays behind the
// conv's transpose; so does a batch_norm with statistics known only at run time. A
// filter that is not a constant gets a transpose of its own.
// CHECK-LABEL: func.func @stays_behind
func.func @stays_behind(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %other: tensor<1x2x4x4xf32>, %mean: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK:      %[[X:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  // CHECK-NEXT: %[[W:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<2x2x3x3xf32> -> tensor<2x3x3x2xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[T]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK:      graph.batch_norm %[[A]]
  %ones = graph.constant dense<1.0> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.add %0, %other : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = graph.batch_norm %1, %ones, %ones, %mean, %ones : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %2 : tensor<1x2x4x4xf32>
}
