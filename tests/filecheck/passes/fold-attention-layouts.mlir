// RUN: bolt-opt %s -p fold-attention-layouts | filecheck %s
// RUN: bolt-opt %s -p fold-attention-layouts --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      fold-attention-layouts
// STATS-NEXT:   3 attentions read through views
// STATS-NEXT:  14 copies removed
// STATS-NEXT:   - left op.attention at {{.*}}fold-attention-layouts.mlir:{{[0-9]+}}:{{[0-9]+}} behind copies: its q, k and v are no view of one layout that removes them

// nn.MultiheadAttention as torch.onnx writes it (after commute-transposes): the packed
// projection %y [B, S, 3·E] made sequence-first, unpacked by a transpose and three
// gathers, each head moved to the front; the result made [S, B, E] and batch-first
// again. q, k and v are the packed projection read "BS3HD", and the result's chain is
// a reshape of the [B, S, H, D] result: eight copies and two transposes go.
// CHECK-LABEL: func.func @multihead_packed
func.func @multihead_packed(%y: tensor<2x5x24xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: %[[P:.*]] = op.reshape %y : tensor<2x5x24xf32> -> tensor<2x5x3x2x4xf32>
  // CHECK-NEXT: %[[A:.*]] = op.attention %[[P]] {layout = "BS3HD", scale = 5.000000e-01 : f32} : (tensor<2x5x3x2x4xf32>) -> tensor<2x5x2x4xf32>
  // CHECK-NEXT: %[[R:.*]] = op.reshape %[[A]] : tensor<2x5x2x4xf32> -> tensor<2x5x8xf32>
  // CHECK-NEXT: func.return %[[R]]
  %t = op.layout_transform %y {perm = array<i64: 1, 0, 2>} : tensor<2x5x24xf32> -> tensor<5x2x24xf32>
  %u = op.reshape %t : tensor<5x2x24xf32> -> tensor<1x5x2x3x8xf32>
  %p = op.layout_transform %u {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x5x2x3x8xf32> -> tensor<3x5x2x1x8xf32>
  %s = op.reshape %p : tensor<3x5x2x1x8xf32> -> tensor<3x5x2x8xf32>
  %c0 = op.constant dense<0> : tensor<i64>
  %c1 = op.constant dense<1> : tensor<i64>
  %c2 = op.constant dense<2> : tensor<i64>
  %q0 = op.gather %s, %c0 {axis = 0 : i64} : (tensor<3x5x2x8xf32>, tensor<i64>) -> tensor<5x2x8xf32>
  %k0 = op.gather %s, %c1 {axis = 0 : i64} : (tensor<3x5x2x8xf32>, tensor<i64>) -> tensor<5x2x8xf32>
  %v0 = op.gather %s, %c2 {axis = 0 : i64} : (tensor<3x5x2x8xf32>, tensor<i64>) -> tensor<5x2x8xf32>
  %q1 = op.reshape %q0 : tensor<5x2x8xf32> -> tensor<5x4x4xf32>
  %k1 = op.reshape %k0 : tensor<5x2x8xf32> -> tensor<5x4x4xf32>
  %v1 = op.reshape %v0 : tensor<5x2x8xf32> -> tensor<5x4x4xf32>
  %q2 = op.layout_transform %q1 {perm = array<i64: 1, 0, 2>} : tensor<5x4x4xf32> -> tensor<4x5x4xf32>
  %k2 = op.layout_transform %k1 {perm = array<i64: 1, 0, 2>} : tensor<5x4x4xf32> -> tensor<4x5x4xf32>
  %v2 = op.layout_transform %v1 {perm = array<i64: 1, 0, 2>} : tensor<5x4x4xf32> -> tensor<4x5x4xf32>
  %q = op.reshape %q2 : tensor<4x5x4xf32> -> tensor<2x2x5x4xf32>
  %k = op.reshape %k2 : tensor<4x5x4xf32> -> tensor<2x2x5x4xf32>
  %v = op.reshape %v2 : tensor<4x5x4xf32> -> tensor<2x2x5x4xf32>
  %a = op.attention %q k %k v %v {scale = 0.5 : f32} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  %o1 = op.layout_transform %a {perm = array<i64: 2, 0, 1, 3>} : tensor<2x2x5x4xf32> -> tensor<5x2x2x4xf32>
  %o2 = op.reshape %o1 : tensor<5x2x2x4xf32> -> tensor<10x8xf32>
  %o3 = op.reshape %o2 : tensor<10x8xf32> -> tensor<5x2x8xf32>
  %o4 = op.layout_transform %o3 {perm = array<i64: 1, 0, 2>} : tensor<5x2x8xf32> -> tensor<2x5x8xf32>
  func.return %o4 : tensor<2x5x8xf32>
}

// Three [B, S, E] projections, each split into heads and moved to the front (a bias
// broadcasting to the scores stays as it is): "BSHD" over the projections. The result
// keeps its heads-first users, so one transpose is added for three removed.
// CHECK-LABEL: func.func @heads_to_front
func.func @heads_to_front(%x: tensor<2x5x8xf32>, %y: tensor<2x5x8xf32>, %z: tensor<2x5x8xf32>, %m: tensor<2x1x1x5xf32>) -> tensor<2x2x5x4xf32> {
  // CHECK-NEXT: %[[Q:.*]] = op.reshape %x : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  // CHECK-NEXT: %[[K:.*]] = op.reshape %y : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  // CHECK-NEXT: %[[V:.*]] = op.reshape %z : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  // CHECK-NEXT: %[[A:.*]] = op.attention %[[Q]] k %[[K]] v %[[V]] bias %m {layout = "BSHD", scale = 5.000000e-01 : f32}
  // CHECK-NEXT: %[[T:.*]] = op.layout_transform %[[A]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  // CHECK-NEXT: func.return %[[T]]
  %q0 = op.reshape %x : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %k0 = op.reshape %y : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %v0 = op.reshape %z : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %q = op.layout_transform %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %k = op.layout_transform %k0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %v = op.layout_transform %v0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %a = op.attention %q k %k v %v bias %m {scale = 0.5 : f32} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x4xf32>
  func.return %a : tensor<2x2x5x4xf32>
}

// A causal attention in "BSHD" whose k is transposed to heads-first and back: the
// transposes are a view of %y, read directly; the layout stays.
// CHECK-LABEL: func.func @there_and_back
func.func @there_and_back(%q: tensor<1x5x2x4xf32>, %y: tensor<1x5x2x4xf32>, %v: tensor<1x5x2x4xf32>) -> tensor<1x5x2x4xf32> {
  // CHECK-NEXT: %[[A:.*]] = op.attention %q k %y v %v {layout = "BSHD", scale = 5.000000e-01 : f32, causal}
  // CHECK-NEXT: func.return %[[A]]
  %t = op.layout_transform %y {perm = array<i64: 0, 2, 1, 3>} : tensor<1x5x2x4xf32> -> tensor<1x2x5x4xf32>
  %k = op.layout_transform %t {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x5x4xf32> -> tensor<1x5x2x4xf32>
  %a = op.attention %q k %k v %v {layout = "BSHD", scale = 0.5 : f32, causal} : (tensor<1x5x2x4xf32>, tensor<1x5x2x4xf32>, tensor<1x5x2x4xf32>) -> tensor<1x5x2x4xf32>
  func.return %a : tensor<1x5x2x4xf32>
}

// Left alone: q is stored with S and D swapped, which no layout reads.
// CHECK-LABEL: func.func @no_layout
func.func @no_layout(%x: tensor<2x2x4x5xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  // CHECK-NEXT: %[[Q:.*]] = op.layout_transform %x
  // CHECK-NEXT: op.attention %[[Q]] k %k v %v {scale
  %q = op.layout_transform %x {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x4x5xf32> -> tensor<2x2x5x4xf32>
  %a = op.attention %q k %k v %v {scale = 0.5 : f32} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  func.return %a : tensor<2x2x5x4xf32>
}
