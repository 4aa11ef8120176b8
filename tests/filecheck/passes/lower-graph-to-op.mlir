// RUN: bolt-opt %s -p lower-graph-to-op --split-input-file | filecheck %s
// RUN: bolt-opt %s -p lower-graph-to-op --split-input-file | bolt-opt --split-input-file > /dev/null

// lower-graph-to-op: what each graph op becomes in the op dialect. Layouts are kept as
// the graph ops carry them (NCHW here); GEMM and conv biases go into the epilogue.

// A conv's bias becomes an epilogue bias; the ReLU after it stays a separate op.unary
// (fusing it is fuse-epilogue's job). Value names and the function's names survive.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%x: tensor<1x3x8x8xf32> {graph.name = "image:0"}, %w: tensor<16x3x3x3xf32>)
// CHECK-SAME: -> (tensor<1x16x4x4xf32> {graph.name = "features"})
func.func @conv2d(%x: tensor<1x3x8x8xf32> {graph.name = "image:0"}, %w: tensor<16x3x3x3xf32>) -> (tensor<1x16x4x4xf32> {graph.name = "features"}) {
  // CHECK-NEXT: %[[B:.*]] = op.constant dense<2.500000e-01> : tensor<16xf32>
  // CHECK-NEXT: %[[C:.*]] = op.conv2d %x, %w bias %[[B]] {layout = "NCHW", filter_layout = "OIHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  // CHECK-NEXT: %[[R:.*]] = op.unary relu %[[C]] : tensor<1x16x4x4xf32>
  // CHECK-NEXT: func.return %[[R]]
  // CHECK-NOT: graph.
  %b = graph.constant dense<0.25> : tensor<16xf32>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  %1 = graph.relu %0 : tensor<1x16x4x4xf32>
  func.return %1 : tensor<1x16x4x4xf32>
}

// -----

// Grouped, NHWC / OHWI (as convert-layout leaves it), without a bias: an identity epilogue.
// CHECK-LABEL: func.func @conv2d_nhwc_grouped
func.func @conv2d_nhwc_grouped(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x2xf32>) -> tensor<1x8x8x8xf32> {
  // CHECK-NEXT: %{{.*}} = op.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32>) -> tensor<1x8x8x8xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, group = 2 : i64, layout = "NHWC", filter_layout = "OHWI"} : (tensor<1x8x8x4xf32>, tensor<8x3x3x2xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}

// -----

// conv_transpose2d: IOHW filters, the bias into the epilogue, output_padding kept.
// CHECK-LABEL: func.func @conv_transpose2d
func.func @conv_transpose2d(%x: tensor<1x8x4x4xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK-NEXT: %{{.*}} = op.conv_transpose2d %x, %w bias %b {layout = "NCHW", filter_layout = "IOHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias>, output_padding = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %0 = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// -----

// Gemm: trans flags become "col" layouts, alpha and beta go into the epilogue with a
// per-column C as the bias.
// CHECK-LABEL: func.func @gemm_bias
func.func @gemm_bias(%a: tensor<8x4xf32>, %w: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %{{.*}} = op.gemm %a, %w bias %c {layout_a = "col", layout_b = "col", epilogue = #op.epilogue<alpha = 0.5, beta = 2.0, bias>} : (tensor<8x4xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: func.return
  %0 = graph.gemm %a, %w, %c {trans_a, trans_b, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<8x4xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// A C of shape [1, N] is reshaped to the bias [N].
// CHECK-LABEL: func.func @gemm_row_bias
func.func @gemm_row_bias(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: tensor<1x16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[BIAS:.*]] = op.reshape %c : tensor<1x16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %{{.*}} = op.gemm %a, %w bias %[[BIAS]] {epilogue = #op.epilogue<bias>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %0 = graph.gemm %a, %w, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// A C of shape [M, N] is added after the GEMM, scaled by beta first.
// CHECK-LABEL: func.func @gemm_full_c
func.func @gemm_full_c(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[P:.*]] = op.gemm %a, %w {epilogue = #op.epilogue<alpha = 2.0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %[[BETA:.*]] = op.constant dense<-3.000000e+00> : tensor<f32>
  // CHECK-NEXT: %[[SCALED:.*]] = op.binary mul %c, %[[BETA]] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %[[SUM:.*]] = op.binary add %[[P]], %[[SCALED]] : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: func.return %[[SUM]]
  %0 = graph.gemm %a, %w, %c {alpha = 2.0 : f32, beta = -3.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// With beta = 1, an [M, 1] C is added as it is.
// CHECK-LABEL: func.func @gemm_column_c
func.func @gemm_column_c(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: tensor<4x1xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[P:.*]] = op.gemm %a, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = op.binary add %[[P]], %c : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %0 = graph.gemm %a, %w, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// -----

// MatMul: batched operands map directly; 1-D operands are reshaped to matrices and the
// product back to numpy.matmul's shape.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<16xf32>, %m: tensor<3x16x5xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>, tensor<3x5xf32>, tensor<f32>) {
  // CHECK-NEXT: %{{.*}} = op.gemm %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = graph.matmul %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %[[COLUMN:.*]] = op.reshape %v : tensor<16xf32> -> tensor<16x1xf32>
  // CHECK-NEXT: %[[P1:.*]] = op.gemm %q, %[[COLUMN]] : (tensor<2x4x8x16xf32>, tensor<16x1xf32>) -> tensor<2x4x8x1xf32>
  // CHECK-NEXT: %{{.*}} = op.reshape %[[P1]] : tensor<2x4x8x1xf32> -> tensor<2x4x8xf32>
  %1 = graph.matmul %q, %v : (tensor<2x4x8x16xf32>, tensor<16xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: %[[ROW:.*]] = op.reshape %v : tensor<16xf32> -> tensor<1x16xf32>
  // CHECK-NEXT: %[[P2:.*]] = op.gemm %[[ROW]], %m : (tensor<1x16xf32>, tensor<3x16x5xf32>) -> tensor<3x1x5xf32>
  // CHECK-NEXT: %{{.*}} = op.reshape %[[P2]] : tensor<3x1x5xf32> -> tensor<3x5xf32>
  %2 = graph.matmul %v, %m : (tensor<16xf32>, tensor<3x16x5xf32>) -> tensor<3x5xf32>
  // Both 1-D: a dot product, to a scalar.
  // CHECK: op.gemm %{{.*}}, %{{.*}} : (tensor<1x16xf32>, tensor<16x1xf32>) -> tensor<1x1xf32>
  // CHECK-NEXT: op.reshape %{{.*}} : tensor<1x1xf32> -> tensor<f32>
  %3 = graph.matmul %v, %v : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  func.return %0, %1, %2, %3 : tensor<2x4x8x8xf32>, tensor<2x4x8xf32>, tensor<3x5xf32>, tensor<f32>
}

// -----

// batch_norm with constant parameters: one per-channel scale and one shift, computed at
// compile time (scale = gamma / sqrt(var + eps) = 2 / sqrt(4) = 1, shift = beta - mean * scale).
// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // CHECK: %[[SCALE:.*]] = op.constant dense<1.000000e+00> : tensor<4x1x1xf32>
  // CHECK-NEXT: %[[SHIFT:.*]] = op.constant dense<-5.000000e-01> : tensor<4x1x1xf32>
  // CHECK-NEXT: %[[SCALED:.*]] = op.binary mul %x, %[[SCALE]] : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  // CHECK-NEXT: %[[OUT:.*]] = op.binary add %[[SCALED]], %[[SHIFT]] : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  // CHECK-NEXT: func.return %[[OUT]]
  %gamma = graph.constant dense<2.0> : tensor<4xf32>
  %beta = graph.constant dense<0.5> : tensor<4xf32>
  %mean = graph.constant dense<1.0> : tensor<4xf32>
  %var = graph.constant dense<4.0> : tensor<4xf32>
  %0 = graph.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  func.return %0 : tensor<1x4x3x3xf32>
}

// -----

// batch_norm with run-time parameters: the scale and shift are computed in the graph.
// CHECK-LABEL: func.func @batch_norm_runtime
func.func @batch_norm_runtime(%x: tensor<2x4x5xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x5xf32> {
  // CHECK-NEXT: %[[EPS:.*]] = op.constant dense<1.000000e-05> : tensor<f32>
  // CHECK-NEXT: op.binary add %v, %[[EPS]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: op.unary sqrt
  // CHECK: op.unary reciprocal
  // CHECK: %[[SCALE:.*]] = op.binary mul %g, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: op.reshape %{{.*}} : tensor<4xf32> -> tensor<4x1xf32>
  // CHECK: op.binary mul %x, %{{.*}} : (tensor<2x4x5xf32>, tensor<4x1xf32>) -> tensor<2x4x5xf32>
  // CHECK-NEXT: op.binary add %{{.*}}, %{{.*}} : (tensor<2x4x5xf32>, tensor<4x1xf32>) -> tensor<2x4x5xf32>
  %0 = graph.batch_norm %x, %g, %b, %m, %v : (tensor<2x4x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5xf32>
  func.return %0 : tensor<2x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x4x8x8xf32>, %y: tensor<1x8x8x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<1x1x1x4xf32>) {
  // CHECK-NEXT: op.pool2d %x {kind = "max", layout = "NCHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, kernel_shape = array<i64: 3, 3>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: op.pool2d %x {kind = "avg", layout = "NCHW", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, kernel_shape = array<i64: 3, 3>, count_include_pad} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %1 = graph.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // global_avg_pool -> pool2d global_avg, in either layout.
  // CHECK-NEXT: op.pool2d %x {kind = "global_avg", layout = "NCHW"} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %2 = graph.global_avg_pool %x : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  // CHECK-NEXT: op.pool2d %y {kind = "global_avg"} : tensor<1x8x8x4xf32> -> tensor<1x1x1x4xf32>
  %3 = graph.global_avg_pool %y {layout = "NHWC"} : tensor<1x8x8x4xf32> -> tensor<1x1x1x4xf32>
  func.return %0, %1, %2, %3 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<1x1x1x4xf32>
}

// -----

// A 1×1 window at stride 1 with no padding copies its input (VGG's adaptive average pool
// at 224²): it lowers to nothing and its users read the input. A 1×1 window at stride 2
// stays a pool.
// CHECK-LABEL: func.func @identity_pools
func.func @identity_pools(%x: tensor<1x4x7x7xf32>) -> (tensor<1x4x7x7xf32>, tensor<1x4x4x4xf32>) {
  // CHECK-NEXT: %[[R:.*]] = op.unary relu %x
  // CHECK-NEXT: %[[S:.*]] = op.pool2d %x {kind = "max", layout = "NCHW", strides = array<i64: 2, 2>, kernel_shape = array<i64: 1, 1>}
  // CHECK-NEXT: func.return %[[R]], %[[S]]
  %0 = graph.avg_pool2d %x {kernel_shape = array<i64: 1, 1>} : tensor<1x4x7x7xf32> -> tensor<1x4x7x7xf32>
  %1 = graph.max_pool2d %0 {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<1x4x7x7xf32> -> tensor<1x4x7x7xf32>
  %2 = graph.relu %1 : tensor<1x4x7x7xf32>
  %3 = graph.max_pool2d %x {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x7x7xf32> -> tensor<1x4x4x4xf32>
  func.return %2, %3 : tensor<1x4x7x7xf32>, tensor<1x4x4x4xf32>
}

// -----

// global_avg_pool of another rank is a mean over the spatial axes, wherever the
// layout puts the channels.
// CHECK-LABEL: func.func @global_avg_pool_rank3
func.func @global_avg_pool_rank3(%x: tensor<2x3x5xf32>) -> (tensor<2x3x1xf32>, tensor<2x1x5xf32>) {
  // CHECK-NEXT: op.reduce %x {kind = "mean", axes = array<i64: 2>, keepdims} : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
  %0 = graph.global_avg_pool %x : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
  // CHECK-NEXT: op.reduce %x {kind = "mean", axes = array<i64: 1>, keepdims} : tensor<2x3x5xf32> -> tensor<2x1x5xf32>
  %1 = graph.global_avg_pool %x {layout = "NHWC"} : tensor<2x3x5xf32> -> tensor<2x1x5xf32>
  func.return %0, %1 : tensor<2x3x1xf32>, tensor<2x1x5xf32>
}

// -----

// split -> one slice per piece.
// CHECK-LABEL: func.func @split
func.func @split(%x: tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x7xf32>) {
  // CHECK-NEXT: %[[A:.*]] = op.slice %x {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x10xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[B:.*]] = op.slice %x {starts = array<i64: 3>, ends = array<i64: 10>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x10xf32> -> tensor<2x7xf32>
  // CHECK-NEXT: func.return %[[A]], %[[B]]
  %0, %1 = graph.split %x {axis = 1 : i64, sizes = array<i64: 3, 7>} : tensor<2x10xf32> -> tensor<2x3xf32>, tensor<2x7xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x7xf32>
}

// -----

// sum -> a chain of adds; a broadcast single operand -> an identity op.elementwise.
// CHECK-LABEL: func.func @sum
func.func @sum(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-NEXT: %[[AB:.*]] = op.binary add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[ABC:.*]] = op.binary add %[[AB]], %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %0 = graph.sum %a, %b, %c : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[ONE:.*]] = op.binary add %a, %a
  %1 = graph.sum %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %[[ABC]], %[[ONE]]
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @sum_single_operand
func.func @sum_single_operand(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: func.return %a
  %0 = graph.sum %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// expand -> op.elementwise whose body yields its argument: a broadcast.
// CHECK-LABEL: func.func @expand
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %{{.*}} = op.elementwise (%x) {
  // CHECK-NEXT: ^{{.*}}(%[[E:.*]]: f32):
  // CHECK-NEXT: op.yield %[[E]] : f32
  // CHECK-NEXT: } : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = graph.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// The reshape family (reshape, flatten, squeeze, unsqueeze) -> op.reshape; transpose ->
// op.layout_transform.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x1x4xf32>) -> (tensor<6x4xf32>, tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<1x2x3x1x4xf32>, tensor<2x4x3x1xf32>) {
  // CHECK-NEXT: op.reshape %x : tensor<2x3x1x4xf32> -> tensor<6x4xf32>
  %0 = graph.reshape %x : tensor<2x3x1x4xf32> -> tensor<6x4xf32>
  // CHECK-NEXT: op.reshape %x : tensor<2x3x1x4xf32> -> tensor<2x12xf32>
  %1 = graph.flatten %x : tensor<2x3x1x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: op.reshape %x : tensor<2x3x1x4xf32> -> tensor<2x3x4xf32>
  %2 = graph.squeeze %x {axes = array<i64: 2>} : tensor<2x3x1x4xf32> -> tensor<2x3x4xf32>
  // CHECK-NEXT: op.reshape %x : tensor<2x3x1x4xf32> -> tensor<1x2x3x1x4xf32>
  %3 = graph.unsqueeze %x {axes = array<i64: 0>} : tensor<2x3x1x4xf32> -> tensor<1x2x3x1x4xf32>
  // CHECK-NEXT: op.layout_transform %x {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x1x4xf32> -> tensor<2x4x3x1xf32>
  %4 = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<2x3x1x4xf32> -> tensor<2x4x3x1xf32>
  func.return %0, %1, %2, %3, %4 : tensor<6x4xf32>, tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<1x2x3x1x4xf32>, tensor<2x4x3x1xf32>
}

// -----

// Activations and math -> op.unary with their arguments (graph's f32 attributes, widened
// to f64); a missing clip bound becomes the largest finite f64.
// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: op.unary leaky_relu %x {args = array<f64: 2.500000e-01>} : tensor<4xf32>
  %0 = graph.leaky_relu %x {alpha = 0.25 : f32} : tensor<4xf32>
  // CHECK-NEXT: op.unary gelu_tanh %x : tensor<4xf32>
  %1 = graph.gelu %x {approximate = "tanh"} : tensor<4xf32>
  // CHECK-NEXT: op.unary hardsigmoid %x {args = array<f64: 0.20000000298023224, 5.000000e-01>} : tensor<4xf32>
  %2 = graph.hardsigmoid %x : tensor<4xf32>
  // CHECK-NEXT: op.unary clip %x {args = array<f64: -1.7976931348623157e+308, 6.000000e+00>} : tensor<4xf32>
  %3 = graph.clip %x {max = 6.0 : f64} : tensor<4xf32>
  // CHECK-NEXT: op.unary erf %x : tensor<4xf32>
  %4 = graph.erf %x : tensor<4xf32>
  // CHECK-NEXT: op.unary reciprocal %x : tensor<4xf32>
  %5 = graph.reciprocal %x : tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Binary ops -> op.binary; where -> op.select; cast -> op.cast.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf16>) {
  // CHECK-NEXT: %[[D:.*]] = op.binary div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = graph.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[E:.*]] = op.binary equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: op.select %[[E]], %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = graph.where %1, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: op.cast %[[D]] {saturate = false} : tensor<2x3xf32> to tensor<2x3xf16>
  %3 = graph.cast %0 {saturate = false} : tensor<2x3xf32> to tensor<2x3xf16>
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf16>
}

// Comparisons and the logical ops -> op.binary of the same name; not -> op.unary not.
// CHECK-LABEL: func.func @compare_and_logical
func.func @compare_and_logical(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %m: tensor<3xi1>) -> tensor<2x3xi1> {
  // CHECK-NEXT: %[[GT:.*]] = op.binary greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[GE:.*]] = op.binary greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[LT:.*]] = op.binary less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[LE:.*]] = op.binary less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[NOT:.*]] = op.unary not %m : tensor<3xi1>
  // CHECK-NEXT: %[[AND:.*]] = op.binary and %[[GT]], %[[NOT]] : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[OR:.*]] = op.binary or %[[GE]], %[[LT]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[XOR:.*]] = op.binary xor %[[AND]], %[[OR]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: op.binary and %[[XOR]], %[[LE]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %0 = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %3 = graph.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %4 = graph.not %m : tensor<3xi1>
  %5 = graph.and %0, %4 : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %6 = graph.or %1, %2 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %7 = graph.xor %5, %6 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %8 = graph.and %7, %3 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %8 : tensor<2x3xi1>
}

// -----

// Normalization, reduction and data movement keep their attributes.
// CHECK-LABEL: func.func @others
func.func @others(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %t: tensor<10x16xf32>, %i: tensor<2x8xi64>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x1x16xf32>, tensor<2x8x16xf32>, tensor<2x16x16xf32>, tensor<2x4x16xf32>, tensor<2x10x16xf32>) {
  // CHECK-NEXT: op.softmax %x {axis = 1 : i64} : tensor<2x8x16xf32>
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<2x8x16xf32>
  // CHECK-NEXT: op.layer_norm %x, %g {axis = -1 : i64, epsilon = 1.000000e-12 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %1 = graph.layer_norm %x, %g {epsilon = 1.0e-12 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  // CHECK-NEXT: op.reduce %x {kind = "max", axes = array<i64: 1>, keepdims} : tensor<2x8x16xf32> -> tensor<2x1x16xf32>
  %2 = graph.reduce_max %x {axes = array<i64: 1>, keepdims} : tensor<2x8x16xf32> -> tensor<2x1x16xf32>
  // CHECK-NEXT: op.gather %t, %i {axis = 0 : i64} : (tensor<10x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %3 = graph.gather %t, %i : (tensor<10x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  // CHECK-NEXT: op.concat %x, %x {axis = 1 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  %4 = graph.concat %x, %x {axis = 1 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  // CHECK-NEXT: op.slice %x {starts = array<i64: 0>, ends = array<i64: 8>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  %5 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 8>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  // CHECK-NEXT: op.pad %x {pads = array<i64: 0, 1, 0, 0, 1, 0>, mode = "edge"} : tensor<2x8x16xf32> -> tensor<2x10x16xf32>
  %6 = graph.pad %x {pads = array<i64: 0, 1, 0, 0, 1, 0>, mode = "edge"} : tensor<2x8x16xf32> -> tensor<2x10x16xf32>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x1x16xf32>, tensor<2x8x16xf32>, tensor<2x16x16xf32>, tensor<2x4x16xf32>, tensor<2x10x16xf32>
}

// -----

// A cumulative sum keeps its axis and flags, and its element type (integers too).
// CHECK-LABEL: func.func @cumsum
func.func @cumsum(%x: tensor<2x8x16xf32>, %i: tensor<2x8xi64>) -> (tensor<2x8x16xf32>, tensor<2x8xi64>) {
  // CHECK-NEXT: op.cumsum %x {axis = -2 : i64, exclusive, reverse} : tensor<2x8x16xf32>
  %0 = graph.cumsum %x {axis = -2 : i64, exclusive, reverse} : tensor<2x8x16xf32>
  // CHECK-NEXT: op.cumsum %i {axis = 1 : i64} : tensor<2x8xi64>
  %1 = graph.cumsum %i {axis = 1 : i64} : tensor<2x8xi64>
  func.return %0, %1 : tensor<2x8x16xf32>, tensor<2x8xi64>
}

// -----

// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK-NEXT: op.resize %x {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  %0 = graph.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}
