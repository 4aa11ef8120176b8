// RUN: bolt-opt %s -p reparameterize-branches | filecheck %s
// RUN: bolt-opt %s -p reparameterize-branches --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      reparameterize-branches
// STATS-NEXT:   6 branches merged
// STATS-NEXT:   - graph.conv2d at {{.*}}reparameterize-branches.mlir:{{[0-9]+}}:3 not merged into graph.conv2d at {{.*}}: its group differs from the 3x3 conv's
// STATS-NEXT:   - graph.conv2d at {{.*}} not merged into graph.conv2d at {{.*}}: its result has other users
// STATS-NOT:    not merged

// RepVGG after fold-batchnorm: 3x3 (W3 = 1, b3 = 0.5) + 1x1 (W1 = 2, b1 = 0.25) +
// identity (x * 3 - 1). One 3x3 conv: W3 + W1 + 3 at the center, bias 0.5 + 0.25 - 1.
// CHECK-LABEL: func.func @three_branches
func.func @three_branches(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 6.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]]]> : tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<-2.500000e-01> : tensor<1xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %[[X:.*]], %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[Y]]
  // CHECK-NEXT: func.return %[[R]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %b3 = graph.constant dense<0.5> : tensor<1xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %b1 = graph.constant dense<0.25> : tensor<1xf32>
  %s = graph.constant dense<3.0> : tensor<1x1x1xf32>
  %t = graph.constant dense<-1.0> : tensor<1x1x1xf32>
  %0 = graph.conv2d %x, %w3, %b3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.conv2d %x, %w1, %b1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.add %0, %1 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %3 = graph.mul %x, %s : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %4 = graph.add %3, %t : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %5 = graph.add %2, %4 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %6 = graph.relu %5 : tensor<1x1x4x4xf32>
  func.return %6 : tensor<1x1x4x4xf32>
}

// The same sum nested the other way, operands swapped: (t + s * x) + (1x1 + 3x3).
// CHECK-LABEL: func.func @three_branches_nested
func.func @three_branches_nested(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 6.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]]]> : tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<-2.500000e-01> : tensor<1xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %{{.*}}, %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: func.return %[[Y]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %b3 = graph.constant dense<0.5> : tensor<1xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %b1 = graph.constant dense<0.25> : tensor<1xf32>
  %s = graph.constant dense<3.0> : tensor<1x1x1xf32>
  %t = graph.constant dense<-1.0> : tensor<1x1x1xf32>
  %0 = graph.conv2d %x, %w3, %b3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.conv2d %x, %w1, %b1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.mul %s, %x : (tensor<1x1x1xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %3 = graph.add %t, %2 : (tensor<1x1x1xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %4 = graph.add %1, %0 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %5 = graph.add %3, %4 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %5 : tensor<1x1x4x4xf32>
}

// Two branches at stride 2 (a stage start): 3x3 + 1x1, no biases; the merged conv
// gets a zero bias and keeps the stride.
// CHECK-LABEL: func.func @two_branches_strided
func.func @two_branches_strided(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00], [1.000000e+00, 3.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]]]> : tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<0.000000e+00> : tensor<1xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %{{.*}}, %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: func.return %[[Y]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %1 = graph.conv2d %x, %w1 {strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
  %2 = graph.add %0, %1 : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %2 : tensor<1x1x3x3xf32>
}

// Depthwise 3x3 + plain identity: each channel's kernel gets 1 at its center.
// CHECK-LABEL: func.func @depthwise_identity
func.func @depthwise_identity(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense_resource<w3.merged_weight> : tensor<2x1x3x3xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<0.000000e+00> : tensor<2xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.conv2d %{{.*}}, %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>, group = 2 : i64}
  // CHECK-NEXT: func.return %[[Y]]
  %w3 = graph.constant dense<1.0> : tensor<2x1x3x3xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.add %x, %0 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %1 : tensor<1x2x4x4xf32>
}

// A summand that is no branch of x (the residual y) is added to the merged conv.
// CHECK-LABEL: func.func @other_summand
func.func @other_summand(%x: tensor<1x1x4x4xf32>, %y: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d %[[X:.*]], %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: %[[R:.*]] = graph.add %[[C]], %[[Y:.*]] :
  // CHECK-NEXT: func.return %[[R]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.add %0, %y : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.conv2d %x, %w1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %3 = graph.add %1, %2 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %3 : tensor<1x1x4x4xf32>
}

// Left alone: the 1x1 conv has another group (noted).
// CHECK-LABEL: func.func @different_groups
func.func @different_groups(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK:      %[[A:.*]] = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: %[[B:.*]] = graph.conv2d %{{.*}}, %{{.*}} {group = 2 : i64}
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[A]], %[[B]]
  // CHECK-NEXT: func.return %[[S]]
  %w3 = graph.constant dense<1.0> : tensor<2x2x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<2x1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.conv2d %x, %w1 {group = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = graph.add %0, %1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %2 : tensor<1x2x4x4xf32>
}

// Left alone: the 1x1 conv's result is used elsewhere too (noted); the identity is
// then the only other branch, and with it the 3x3 conv merges.
// CHECK-LABEL: func.func @branch_with_other_users
func.func @branch_with_other_users(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  // CHECK:      %[[ONE:.*]] = graph.conv2d %[[X:.*]], %{{.*}} :
  // CHECK:      %[[M:.*]] = graph.conv2d %[[X]], %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[M]], %[[ONE]]
  // CHECK-NEXT: func.return %[[S]], %[[ONE]]
  // CHECK-NOT:  graph.mul
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.conv2d %x, %w1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.add %0, %1 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %3 = graph.add %2, %x : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %3, %1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// Left alone: no 3x3 conv (1x1 + identity).
// CHECK-LABEL: func.func @no_3x3_conv
func.func @no_3x3_conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d %[[X:.*]], %{{.*}} :
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[C]], %[[X]]
  // CHECK-NEXT: func.return %[[S]]
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %0 = graph.conv2d %x, %w1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.add %0, %x : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %1 : tensor<1x1x4x4xf32>
}

// Left alone: a 3x3 conv and a constant, no second branch.
// CHECK-LABEL: func.func @conv_and_constant
func.func @conv_and_constant(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK:      %[[T:.*]] = graph.constant dense<-1.000000e+00> : tensor<1x1x1xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>} :
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[C]], %[[T]]
  // CHECK-NEXT: func.return %[[S]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %t = graph.constant dense<-1.0> : tensor<1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.add %0, %t : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32>
  func.return %1 : tensor<1x1x4x4xf32>
}

// Left alone: a dilated 3x3 conv.
// CHECK-LABEL: func.func @dilated
func.func @dilated(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK:      %[[C:.*]] = graph.conv2d %[[X:.*]], %{{.*}} {pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>} :
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[C]], %[[X]]
  // CHECK-NEXT: func.return %[[S]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.add %0, %x : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %1 : tensor<1x1x4x4xf32>
}

// Left alone: NHWC convs (their channels are not axis 1).
// CHECK-LABEL: func.func @nhwc
func.func @nhwc(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  // CHECK:      %[[A:.*]] = graph.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} :
  // CHECK-NEXT: %[[B:.*]] = graph.conv2d %{{.*}}, %{{.*}} {layout = "NHWC"} :
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[A]], %[[B]]
  // CHECK-NEXT: func.return %[[S]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x4x4x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x4x1xf32>
  %1 = graph.conv2d %x, %w1 {layout = "NHWC"} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %2 = graph.add %0, %1 : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %2 : tensor<1x4x4x1xf32>
}

// Left alone: convs of different inputs.
// CHECK-LABEL: func.func @different_inputs
func.func @different_inputs(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK:      %[[R:.*]] = graph.relu %[[X:.*]] :
  // CHECK-NEXT: %[[A:.*]] = graph.conv2d %[[X]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>} :
  // CHECK-NEXT: %[[B:.*]] = graph.conv2d %[[R]], %{{.*}} :
  // CHECK-NEXT: %[[S:.*]] = graph.add %[[A]], %[[B]]
  // CHECK-NEXT: func.return %[[S]]
  %w3 = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %w1 = graph.constant dense<2.0> : tensor<1x1x1x1xf32>
  %r = graph.relu %x : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %1 = graph.conv2d %r, %w1 : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %2 = graph.add %0, %1 : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %2 : tensor<1x1x4x4xf32>
}
