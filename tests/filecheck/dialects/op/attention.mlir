// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.attention: one fused kernel, q/k/v in "BHSD", "BSHD" or packed "BS3HD", with an
// additive bias, key lengths and causal masking.

// The default layout ("BHSD") is elided.
// CHECK-LABEL: func.func @attention_bhsd
func.func @attention_bhsd(%q: tensor<2x4x8x64xf16>, %k: tensor<2x4x16x64xf16>, %v: tensor<2x4x16x32xf16>) -> tensor<2x4x8x32xf16> {
  // CHECK: %{{.*}} = op.attention %q k %k v %v {scale = 1.250000e-01 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x32xf16>) -> tensor<2x4x8x32xf16>
  %0 = op.attention %q k %k v %v {layout = "BHSD", scale = 0.125 : f32} : (tensor<2x4x8x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x32xf16>) -> tensor<2x4x8x32xf16>
  func.return %0 : tensor<2x4x8x32xf16>
}

// "BSHD": q/k/v are [B, S, H, D], and so is the result.
// CHECK-LABEL: func.func @attention_bshd
func.func @attention_bshd(%q: tensor<2x8x4x64xf16>, %k: tensor<2x16x4x64xf16>, %b: tensor<2x1x1x16xf16>, %len: tensor<2xi32>) -> tensor<2x8x4x64xf16> {
  // CHECK: %{{.*}} = op.attention %q k %k v %k bias %b key_lengths %len {layout = "BSHD", scale = 1.250000e-01 : f32} : (tensor<2x8x4x64xf16>, tensor<2x16x4x64xf16>, tensor<2x16x4x64xf16>, tensor<2x1x1x16xf16>, tensor<2xi32>) -> tensor<2x8x4x64xf16>
  %0 = op.attention %q k %k v %k bias %b key_lengths %len {layout = "BSHD", scale = 0.125 : f32} : (tensor<2x8x4x64xf16>, tensor<2x16x4x64xf16>, tensor<2x16x4x64xf16>, tensor<2x1x1x16xf16>, tensor<2xi32>) -> tensor<2x8x4x64xf16>
  func.return %0 : tensor<2x8x4x64xf16>
}

// "BS3HD": only q, the packed QKV projection [B, S, 3, H, D]; the result is [B, S, H, D].
// A [B, 1, S, S] f32 bias and the causal flag.
// CHECK-LABEL: func.func @attention_packed
func.func @attention_packed(%qkv: tensor<2x16x3x4x64xf16>, %b: tensor<2x1x16x16xf32>) -> (tensor<2x16x4x64xf16>, tensor<2x16x4x64xf16>) {
  // CHECK: %{{.*}} = op.attention %qkv {layout = "BS3HD", scale = 1.250000e-01 : f32, causal} : (tensor<2x16x3x4x64xf16>) -> tensor<2x16x4x64xf16>
  %0 = op.attention %qkv {layout = "BS3HD", scale = 0.125 : f32, causal} : (tensor<2x16x3x4x64xf16>) -> tensor<2x16x4x64xf16>
  // CHECK-NEXT: %{{.*}} = op.attention %qkv bias %b {layout = "BS3HD", scale = 1.250000e-01 : f32} : (tensor<2x16x3x4x64xf16>, tensor<2x1x16x16xf32>) -> tensor<2x16x4x64xf16>
  %1 = op.attention %qkv bias %b {layout = "BS3HD", scale = 0.125 : f32} : (tensor<2x16x3x4x64xf16>, tensor<2x1x16x16xf32>) -> tensor<2x16x4x64xf16>
  func.return %0, %1 : tensor<2x16x4x64xf16>, tensor<2x16x4x64xf16>
}
