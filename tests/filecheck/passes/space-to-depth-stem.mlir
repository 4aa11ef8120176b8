// RUN: bolt-opt %s -p space-to-depth-stem | filecheck %s
// RUN: bolt-opt %s -p space-to-depth-stem --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      space-to-depth-stem
// STATS-NEXT:   6 convs blocked
// STATS-NEXT:   - left graph.conv2d at {{.*}}space-to-depth-stem.mlir:{{[0-9]+}}:{{[0-9]+}} alone: its 1×1 kernel is smaller than its stride 2
// STATS-NEXT:   - left graph.conv2d at {{.*}} alone: it is grouped
// STATS-NEXT:   - left graph.conv2d at {{.*}} alone: its weight is not a constant
// STATS-NEXT:   - left graph.conv2d at {{.*}} alone: its strides [2, 1] differ

// A 3×3/2 pad 1 conv on one channel: pad by 1 (6 + 2 = 8 rows and columns, 4 blocks),
// block 2×2, then a 2×2/1 conv on 4 channels. The blocked weight of filter 0 (taps 1..9)
// is channel (by, bx) = (0, 0): [1 3; 7 9], (0, 1): [2 0; 8 0], (1, 0): [4 6; 0 0],
// (1, 1): [5 0; 0 0]; of filter 1 (all ones) [1 1; 1 1], [1 0; 1 0], [1 1; 0 0], [1 0; 0 0].
// CHECK-LABEL: func.func @small
func.func @small(%x: tensor<1x1x6x6xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK:      %[[B:.*]] = graph.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
  // CHECK-NEXT: %[[P:.*]] = graph.pad %{{.*}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<1x1x6x6xf32> -> tensor<1x1x8x8xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.space_to_depth %[[P]] {blocksize = 2 : i64} : tensor<1x1x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense_resource<[[NAME:w.blocked_weight]]> : tensor<2x4x2x2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %[[S]], %[[W]], %[[B]] : (tensor<1x4x4x4xf32>, tensor<2x4x2x2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]]> : tensor<2x1x3x3xf32>
  %b = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// ResNet-50's stem: 7×7/2 pad 3 on 3 channels -> pad 3 (224 + 6 = 230 = 2 · 115), 4×4/1
// on 12 channels: 115 - 4 + 1 = 112.
// CHECK-LABEL: func.func @resnet_stem
func.func @resnet_stem(%x: tensor<2x3x224x224xf32>) -> tensor<2x64x112x112xf32> {
  // CHECK:      graph.pad %{{.*}} {pads = array<i64: 0, 0, 3, 3, 0, 0, 3, 3>} : tensor<2x3x224x224xf32> -> tensor<2x3x230x230xf32>
  // CHECK-NEXT: graph.space_to_depth %{{.*}} {blocksize = 2 : i64} : tensor<2x3x230x230xf32> -> tensor<2x12x115x115xf32>
  // CHECK-NEXT: graph.constant dense_resource<conv1.blocked_weight> : tensor<64x12x4x4xf32>
  // CHECK-NEXT: graph.conv2d %{{.*}}, %{{.*}} : (tensor<2x12x115x115xf32>, tensor<64x12x4x4xf32>) -> tensor<2x64x112x112xf32>
  %conv1.weight = graph.constant dense<0.5> : tensor<64x3x7x7xf32>
  %0 = graph.conv2d %x, %conv1.weight {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<2x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<2x64x112x112xf32>
  func.return %0 : tensor<2x64x112x112xf32>
}

// Odd sizes: 33×31, 3×3/2 pad 1 gives 17×16, read as (17 + 1)·2 = 36 rows and
// (16 + 1)·2 = 34 columns: the bottom pad grows to 2, the right pad to 2.
// A 2×2/2 conv on 11×11 gives 5×5 and never reads the last row and column: the pad
// crops them (-1), leaving 10×10.
// CHECK-LABEL: func.func @odd_sizes
func.func @odd_sizes(%x: tensor<3x2x33x31xf32>, %y: tensor<1x3x11x11xf32>) -> (tensor<3x4x17x16xf32>, tensor<1x8x5x5xf32>) {
  // CHECK:      graph.pad %{{.*}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 2, 2>} : tensor<3x2x33x31xf32> -> tensor<3x2x36x34xf32>
  // CHECK-NEXT: graph.space_to_depth %{{.*}} {blocksize = 2 : i64} : tensor<3x2x36x34xf32> -> tensor<3x8x18x17xf32>
  // CHECK:      graph.conv2d %{{.*}}, %{{.*}} : (tensor<3x8x18x17xf32>, tensor<4x8x2x2xf32>) -> tensor<3x4x17x16xf32>
  // CHECK:      graph.pad %{{.*}} {pads = array<i64: 0, 0, 0, 0, 0, 0, -1, -1>} : tensor<1x3x11x11xf32> -> tensor<1x3x10x10xf32>
  // CHECK-NEXT: graph.space_to_depth %{{.*}} {blocksize = 2 : i64} : tensor<1x3x10x10xf32> -> tensor<1x12x5x5xf32>
  // CHECK:      graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x12x5x5xf32>, tensor<8x12x1x1xf32>) -> tensor<1x8x5x5xf32>
  %w = graph.constant dense<1.0> : tensor<4x2x3x3xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<3x2x33x31xf32>, tensor<4x2x3x3xf32>) -> tensor<3x4x17x16xf32>
  %v = graph.constant dense<1.0> : tensor<8x3x2x2xf32>
  %1 = graph.conv2d %y, %v {strides = array<i64: 2, 2>} : (tensor<1x3x11x11xf32>, tensor<8x3x2x2xf32>) -> tensor<1x8x5x5xf32>
  func.return %0, %1 : tensor<3x4x17x16xf32>, tensor<1x8x5x5xf32>
}

// A stride of 4 on one channel: 8×8 / 4 pad 2 on 16×16 gives 4×4; 2×2/1 on 16 channels
// over (4 + 1)·4 = 20 rows and columns (no pad needed at the end: 16 + 2 + 2).
// CHECK-LABEL: func.func @stride_four
func.func @stride_four(%x: tensor<1x1x16x16xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK:      graph.pad %{{.*}} {pads = array<i64: 0, 0, 2, 2, 0, 0, 2, 2>} : tensor<1x1x16x16xf32> -> tensor<1x1x20x20xf32>
  // CHECK-NEXT: graph.space_to_depth %{{.*}} {blocksize = 4 : i64} : tensor<1x1x20x20xf32> -> tensor<1x16x5x5xf32>
  // CHECK:      graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x16x5x5xf32>, tensor<2x16x2x2xf32>) -> tensor<1x2x4x4xf32>
  %w = graph.constant dense<1.0> : tensor<2x1x8x8xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 4, 4>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x1x16x16xf32>, tensor<2x1x8x8xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// A vision transformer's patch embedding, 16×16/16 unpadded on 3 channels: blocked whatever
// C·s² (768), it becomes a 1×1 conv, a GEMM over 768 channels.
// CHECK-LABEL: func.func @vit_patches
func.func @vit_patches(%x: tensor<2x3x224x224xf32>) -> tensor<2x768x14x14xf32> {
  // CHECK-NOT:  graph.pad
  // CHECK:      graph.space_to_depth %{{.*}} {blocksize = 16 : i64} : tensor<2x3x224x224xf32> -> tensor<2x768x14x14xf32>
  // CHECK-NEXT: graph.constant dense_resource<patch.blocked_weight> : tensor<768x768x1x1xf32>
  // CHECK-NEXT: graph.conv2d %{{.*}}, %{{.*}} : (tensor<2x768x14x14xf32>, tensor<768x768x1x1xf32>) -> tensor<2x768x14x14xf32>
  %patch.weight = graph.constant dense<0.25> : tensor<768x3x16x16xf32>
  %0 = graph.conv2d %x, %patch.weight {strides = array<i64: 16, 16>} : (tensor<2x3x224x224xf32>, tensor<768x3x16x16xf32>) -> tensor<2x768x14x14xf32>
  func.return %0 : tensor<2x768x14x14xf32>
}

// Left alone: stride 1, more than 16 blocked channels (5 · 4 = 20), and, with a note,
// a kernel smaller than the stride, groups, a weight computed at run time, unequal
// strides.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<1x3x8x8xf32>, %y: tensor<1x5x8x8xf32>, %z: tensor<1x4x8x8xf32>, %r: tensor<4x3x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) {
  // CHECK-NOT: graph.space_to_depth
  // CHECK-NOT: graph.pad
  %w = graph.constant dense<1.0> : tensor<4x3x3x3xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %v = graph.constant dense<1.0> : tensor<4x5x3x3xf32>
  %1 = graph.conv2d %y, %v {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x5x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x4x4xf32>
  %u = graph.constant dense<1.0> : tensor<4x3x1x1xf32>
  %2 = graph.conv2d %x, %u {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %g = graph.constant dense<1.0> : tensor<4x2x3x3xf32>
  %3 = graph.conv2d %z, %g {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  %4 = graph.conv2d %x, %r {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %5 = graph.conv2d %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x8xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>
}

// The blocked weight's values, stored outside the IR.
// CHECK: [[NAME]]: "0x04000000
// CHECK-SAME: 0000803F000040400000E0400000104100000040000000000000004100000000000080400000C04000000000000000000000A0400000000000000000000000000000803F0000803F0000803F0000803F0000803F000000000000803F000000000000803F0000803F00000000000000000000803F000000000000000000000000"
