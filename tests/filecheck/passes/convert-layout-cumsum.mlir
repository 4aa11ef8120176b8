// RUN: bolt-opt %s -p convert-layout | filecheck %s

// convert-layout moves transposes through graph.cumsum as through softmax: its axis is
// remapped into the channels-last order (C: 1 -> 3, H: 2 -> 1), so the transposes
// between two NHWC convs cancel.

// CHECK-LABEL: func.func @cumsum_between_convs
func.func @cumsum_between_convs(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  // CHECK:      %[[A:.*]] = graph.conv2d %[[X]], %{{.*}} {layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[C:.*]] = graph.cumsum %[[A]] {axis = 3 : i64, exclusive} : tensor<1x4x4x2xf32>
  // CHECK-NEXT: %[[H:.*]] = graph.cumsum %[[C]] {axis = 1 : i64, reverse} : tensor<1x4x4x2xf32>
  // CHECK:      %[[B:.*]] = graph.conv2d %[[H]], %{{.*}} {layout = "NHWC", filter_layout = "OHWI"}
  // CHECK-NEXT: %[[Y:.*]] = graph.transpose %[[B]] {perm = array<i64: 0, 3, 1, 2>}
  // CHECK-NEXT: func.return %[[Y]]
  %w = graph.constant dense<0.5> : tensor<2x2x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.cumsum %0 {axis = 1 : i64, exclusive} : tensor<1x2x4x4xf32>
  %2 = graph.cumsum %1 {axis = -2 : i64, reverse} : tensor<1x2x4x4xf32>
  %3 = graph.conv2d %2, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %3 : tensor<1x2x4x4xf32>
}
