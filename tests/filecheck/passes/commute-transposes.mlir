// RUN: bolt-opt %s -p commute-transposes | filecheck %s
// RUN: bolt-opt %s -p commute-transposes --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      commute-transposes
// STATS-NEXT:   3 transposes moved down
// STATS-NEXT:   5 reshapes moved up
// STATS-NEXT:   1 transposes moved up
// STATS-NEXT:   2 reshapes composed
// STATS-NEXT:   2 transposes cancelled
// STATS-NEXT:   1 transposes composed
// STATS-NEXT:   1 reshapes removed

// torch.onnx's nn.MultiheadAttention, input side: [B, S, E] is made sequence-first
// before the projection and its bias. The transpose moves below both, to the heads'
// reshapes: the projection reads the LayerNorm's [B, S, E] rows.
// CHECK-LABEL: func.func @projection_of_sequence_first
func.func @projection_of_sequence_first(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>) -> tensor<1x5x2x3x8xf32> {
  // CHECK-NEXT: %[[N:.*]] = op.unary relu %x
  // CHECK-NEXT: %[[G:.*]] = op.gemm %[[N]], %w : (tensor<2x5x8xf32>, tensor<8x24xf32>) -> tensor<2x5x24xf32>
  // CHECK-NEXT: %[[A:.*]] = op.binary add %b, %[[G]] : (tensor<24xf32>, tensor<2x5x24xf32>) -> tensor<2x5x24xf32>
  // CHECK-NEXT: %[[T:.*]] = op.layout_transform %[[A]] {perm = array<i64: 1, 0, 2>} : tensor<2x5x24xf32> -> tensor<5x2x24xf32>
  // CHECK-NEXT: %[[R:.*]] = op.reshape %[[T]] : tensor<5x2x24xf32> -> tensor<1x5x2x3x8xf32>
  // CHECK-NEXT: func.return %[[R]]
  %n = op.unary relu %x : tensor<2x5x8xf32>
  %t = op.layout_transform %n {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32> -> tensor<5x2x8xf32>
  %g = op.gemm %t, %w : (tensor<5x2x8xf32>, tensor<8x24xf32>) -> tensor<5x2x24xf32>
  %a = op.binary add %b, %g : (tensor<24xf32>, tensor<5x2x24xf32>) -> tensor<5x2x24xf32>
  %r = op.reshape %a : tensor<5x2x24xf32> -> tensor<1x5x2x3x8xf32>
  func.return %r : tensor<1x5x2x3x8xf32>
}

// Output side: the heads' [S·B, E] rows are projected, reshaped to [S, B, E] and made
// batch-first for the residual add. The reshape and the transpose move above the GEMM,
// so that the GEMM's result meets the add (fuse-epilogue takes it as the residual); the
// two reshapes of the heads are one.
// CHECK-LABEL: func.func @projection_to_batch_first
func.func @projection_to_batch_first(%heads: tensor<5x2x2x4xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %x: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: %[[S:.*]] = op.reshape %heads : tensor<5x2x2x4xf32> -> tensor<5x2x8xf32>
  // CHECK-NEXT: %[[T:.*]] = op.layout_transform %[[S]] {perm = array<i64: 1, 0, 2>} : tensor<5x2x8xf32> -> tensor<2x5x8xf32>
  // CHECK-NEXT: %[[G:.*]] = op.gemm %[[T]], %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<2x5x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NEXT: %[[A:.*]] = op.binary add %x, %[[G]]
  %r = op.reshape %heads : tensor<5x2x2x4xf32> -> tensor<10x8xf32>
  %g = op.gemm %r, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias>} : (tensor<10x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<10x8xf32>
  %s = op.reshape %g : tensor<10x8xf32> -> tensor<5x2x8xf32>
  %t = op.layout_transform %s {perm = array<i64: 1, 0, 2>} : tensor<5x2x8xf32> -> tensor<2x5x8xf32>
  %a = op.binary add %x, %t : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  func.return %a : tensor<2x5x8xf32>
}

// Two leading transposes on either side of a projection: the first moves down to the
// second and they cancel; the GEMM then reads %x as it is.
// CHECK-LABEL: func.func @transposes_that_meet
func.func @transposes_that_meet(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: %[[G:.*]] = op.gemm %x, %w : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NEXT: func.return %[[G]]
  %t = op.layout_transform %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32> -> tensor<5x2x8xf32>
  %g = op.gemm %t, %w : (tensor<5x2x8xf32>, tensor<8x8xf32>) -> tensor<5x2x8xf32>
  %u = op.layout_transform %g {perm = array<i64: 1, 0, 2>} : tensor<5x2x8xf32> -> tensor<2x5x8xf32>
  func.return %u : tensor<2x5x8xf32>
}

// Transposes that meet compose into one; an identity permutation is no transpose.
// CHECK-LABEL: func.func @compose
func.func @compose(%x: tensor<2x3x4x5xf32>) -> (tensor<4x2x3x5xf32>, tensor<2x3x4x5xf32>) {
  // CHECK-NEXT: %[[T:.*]] = op.layout_transform %x {perm = array<i64: 2, 0, 1, 3>} : tensor<2x3x4x5xf32> -> tensor<4x2x3x5xf32>
  // CHECK-NEXT: func.return %[[T]], %x
  %a = op.layout_transform %x {perm = array<i64: 1, 0, 2, 3>} : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
  %b = op.layout_transform %a {perm = array<i64: 2, 1, 0, 3>} : tensor<3x2x4x5xf32> -> tensor<4x2x3x5xf32>
  %i = op.layout_transform %x {perm = array<i64: 0, 1, 2, 3>} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  func.return %b, %i : tensor<4x2x3x5xf32>, tensor<2x3x4x5xf32>
}

// Left alone: between a LayerNorm and a residual add (no data movement on either side),
// a GEMM with a residual, a transpose of the last axis, a GEMM of two activations.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<2x5x8xf32>, %w: tensor<8x8xf32>, %s: tensor<8xf32>, %y: tensor<5x2x8xf32>, %z: tensor<5x8x2xf32>, %v: tensor<2x8xf32>) -> (tensor<5x2x8xf32>, tensor<10x8xf32>, tensor<40x8xf32>, tensor<2x5x2xf32>) {
  // CHECK:      op.layer_norm
  // CHECK-NEXT: op.layout_transform %{{.*}} {perm = array<i64: 1, 0, 2>}
  // CHECK-NEXT: op.gemm
  // CHECK-NEXT: op.binary add
  // CHECK-NEXT: op.layout_transform %x {perm = array<i64: 1, 0, 2>}
  // CHECK-NEXT: op.gemm %{{.*}}, %w residual %y
  // CHECK-NEXT: op.reshape
  // CHECK-NEXT: op.layout_transform %x {perm = array<i64: 1, 2, 0>}
  // CHECK-NEXT: op.gemm
  // CHECK-NEXT: op.reshape
  // CHECK-NEXT: op.layout_transform %x {perm = array<i64: 1, 0, 2>}
  // CHECK-NEXT: op.gemm %{{.*}}, %z
  // CHECK-NEXT: op.layout_transform
  %n = op.layer_norm %x, %s {axis = -1 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %t = op.layout_transform %n {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32> -> tensor<5x2x8xf32>
  %g = op.gemm %t, %w : (tensor<5x2x8xf32>, tensor<8x8xf32>) -> tensor<5x2x8xf32>
  %a = op.binary add %y, %g : (tensor<5x2x8xf32>, tensor<5x2x8xf32>) -> tensor<5x2x8xf32>
  %t2 = op.layout_transform %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32> -> tensor<5x2x8xf32>
  %r = op.gemm %t2, %w residual %y {epilogue = #op.epilogue<residual = add>} : (tensor<5x2x8xf32>, tensor<8x8xf32>, tensor<5x2x8xf32>) -> tensor<5x2x8xf32>
  %r2 = op.reshape %r : tensor<5x2x8xf32> -> tensor<10x8xf32>
  %t3 = op.layout_transform %x {perm = array<i64: 1, 2, 0>} : tensor<2x5x8xf32> -> tensor<5x8x2xf32>
  %g3 = op.gemm %t3, %v : (tensor<5x8x2xf32>, tensor<2x8xf32>) -> tensor<5x8x8xf32>
  %r3 = op.reshape %g3 : tensor<5x8x8xf32> -> tensor<40x8xf32>
  %t4 = op.layout_transform %x {perm = array<i64: 1, 0, 2>} : tensor<2x5x8xf32> -> tensor<5x2x8xf32>
  %g4 = op.gemm %t4, %z : (tensor<5x2x8xf32>, tensor<5x8x2xf32>) -> tensor<5x2x2xf32>
  %o4 = op.layout_transform %g4 {perm = array<i64: 1, 0, 2>} : tensor<5x2x2xf32> -> tensor<2x5x2xf32>
  func.return %a, %r2, %r3, %o4 : tensor<5x2x8xf32>, tensor<10x8xf32>, tensor<40x8xf32>, tensor<2x5x2xf32>
}

// Batch 1: the exporter's transposes are reshapes, and the residual add runs on
// [S, 1, E]. The reshape after the projection and its bias moves above them, so that
// the GEMM meets the add (fuse-epilogue's residual).
// CHECK-LABEL: func.func @reshape_before_residual
func.func @reshape_before_residual(%h: tensor<1x5x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>, %x: tensor<5x1x8xf32>) -> tensor<5x1x8xf32> {
  // CHECK-NEXT: %[[R:.*]] = op.reshape %h : tensor<1x5x16xf32> -> tensor<5x1x16xf32>
  // CHECK-NEXT: %[[G:.*]] = op.gemm %[[R]], %w : (tensor<5x1x16xf32>, tensor<16x8xf32>) -> tensor<5x1x8xf32>
  // CHECK-NEXT: %[[B:.*]] = op.binary add %[[G]], %b : (tensor<5x1x8xf32>, tensor<8xf32>) -> tensor<5x1x8xf32>
  // CHECK-NEXT: %[[A:.*]] = op.binary add %x, %[[B]]
  %g = op.gemm %h, %w : (tensor<1x5x16xf32>, tensor<16x8xf32>) -> tensor<1x5x8xf32>
  %c = op.binary add %g, %b : (tensor<1x5x8xf32>, tensor<8xf32>) -> tensor<1x5x8xf32>
  %r = op.reshape %c : tensor<1x5x8xf32> -> tensor<5x1x8xf32>
  %a = op.binary add %x, %r : (tensor<5x1x8xf32>, tensor<5x1x8xf32>) -> tensor<5x1x8xf32>
  func.return %a : tensor<5x1x8xf32>
}

// torch.export's nn.Linear on [B, S, E]: a 2-D addmm on a view, then a view back, then
// the activation. The view back moves above the GEMM, so that the GELU meets the GEMM
// (fuse-epilogue's activation), and the two views of %h cancel: the GEMM reads %h.
// CHECK-LABEL: func.func @reshape_before_activation
func.func @reshape_before_activation(%h: tensor<1x5x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<1x5x8xf32> {
  // CHECK-NEXT: %[[G:.*]] = op.gemm %h, %w : (tensor<1x5x16xf32>, tensor<16x8xf32>) -> tensor<1x5x8xf32>
  // CHECK-NEXT: %[[B:.*]] = op.binary add %[[G]], %b : (tensor<1x5x8xf32>, tensor<8xf32>) -> tensor<1x5x8xf32>
  // CHECK-NEXT: %[[A:.*]] = op.unary gelu %[[B]] : tensor<1x5x8xf32>
  // CHECK-NEXT: func.return %[[A]]
  %v = op.reshape %h : tensor<1x5x16xf32> -> tensor<5x16xf32>
  %g = op.gemm %v, %w : (tensor<5x16xf32>, tensor<16x8xf32>) -> tensor<5x8xf32>
  %c = op.binary add %g, %b : (tensor<5x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  %r = op.reshape %c : tensor<5x8xf32> -> tensor<1x5x8xf32>
  %a = op.unary gelu %r : tensor<1x5x8xf32>
  func.return %a : tensor<1x5x8xf32>
}

// A reshape of a reshape is one reshape.
// CHECK-LABEL: func.func @reshapes_compose
func.func @reshapes_compose(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  // CHECK-NEXT: %[[R:.*]] = op.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  // CHECK-NEXT: func.return %[[R]]
  %a = op.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = op.reshape %a : tensor<6x4xf32> -> tensor<4x6xf32>
  func.return %b : tensor<4x6xf32>
}
