// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// graph.attention: softmax(q @ kᵀ * scale + mask) @ v over [B, H, S, D] heads.

// CHECK-LABEL: func.func @attention_plain
func.func @attention_plain(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK: %{{.*}} = graph.attention %q, %k, %v {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %0 = graph.attention %q, %k, %v {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %0 : tensor<2x4x8x16xf32>
}

// Sq != Sk and Dv != D: the result takes q's rows and v's head size.
// CHECK-LABEL: func.func @attention_cross
func.func @attention_cross(%q: tensor<1x2x3x16xf16>, %k: tensor<1x2x5x16xf16>, %v: tensor<1x2x5x8xf16>) -> tensor<1x2x3x8xf16> {
  // CHECK: %{{.*}} = graph.attention %q, %k, %v {scale = 1.250000e-01 : f32} : (tensor<1x2x3x16xf16>, tensor<1x2x5x16xf16>, tensor<1x2x5x8xf16>) -> tensor<1x2x3x8xf16>
  %0 = graph.attention %q, %k, %v {scale = 0.125 : f32} : (tensor<1x2x3x16xf16>, tensor<1x2x5x16xf16>, tensor<1x2x5x8xf16>) -> tensor<1x2x3x8xf16>
  func.return %0 : tensor<1x2x3x8xf16>
}

// Masks: additive [B, 1, 1, Sk] (BERT's padding), additive [B, 1, Sq, Sk], boolean, and
// causal with or without a mask.
// CHECK-LABEL: func.func @attention_masks
func.func @attention_masks(%q: tensor<2x4x8x16xf32>, %m1: tensor<2x1x1x8xf32>, %m2: tensor<2x1x8x8xf16>, %mb: tensor<8x8xi1>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  // CHECK: %{{.*}} = graph.attention %q, %q, %q, %m1 {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  %0 = graph.attention %q, %q, %q, %m1 {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %q, %q, %q, %m2 {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xf16>) -> tensor<2x4x8x16xf32>
  %1 = graph.attention %q, %q, %q, %m2 {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xf16>) -> tensor<2x4x8x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %q, %q, %q, %mb {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xi1>) -> tensor<2x4x8x16xf32>
  %2 = graph.attention %q, %q, %q, %mb {scale = 0.25 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xi1>) -> tensor<2x4x8x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %q, %q, %q {scale = 2.500000e-01 : f32, causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %3 = graph.attention %q, %q, %q {scale = 0.25 : f32, causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %q, %q, %q, %m1 {scale = 2.500000e-01 : f32, causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  %4 = graph.attention %q, %q, %q, %m1 {scale = 0.25 : f32, causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  func.return %0, %1, %2, %3, %4 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
