// RUN: bolt-opt %s -p mask-padded-keys | filecheck %s
// RUN: bolt-opt %s -p mask-padded-keys --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      mask-padded-keys
// STATS-NEXT:   2 attentions masked

// The marked attentions read one new last argument, key_lengths (i32 [B]), and lose the
// mark; the unmarked one is left alone.
// CHECK-LABEL: func.func @main
// CHECK-SAME:  (%q: tensor<2x8x4x16xf16> {graph.name = "q"}, %kv: tensor<2x8x4x16xf16> {graph.name = "kv"}, %[[L:[0-9a-z_]+]]: tensor<2xi32> {graph.name = "key_lengths"})
func.func @main(%q: tensor<2x8x4x16xf16> {graph.name = "q"}, %kv: tensor<2x8x4x16xf16> {graph.name = "kv"}) -> (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>) {
  // CHECK-NEXT: %[[A:[0-9a-z_]+]] = op.attention %q k %kv v %kv key_lengths %[[L]] {layout = "BSHD", scale = 2.500000e-01 : f32} : (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2xi32>) -> tensor<2x8x4x16xf16>
  %0 = op.attention %q k %kv v %kv {layout = "BSHD", scale = 0.25 : f32, padded_keys} : (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>) -> tensor<2x8x4x16xf16>
  // CHECK-NEXT: %[[B:[0-9a-z_]+]] = op.attention %[[A]] k %kv v %kv key_lengths %[[L]] {layout = "BSHD", scale = 2.500000e-01 : f32, causal} : {{.*}}
  %1 = op.attention %0 k %kv v %kv {layout = "BSHD", scale = 0.25 : f32, causal, padded_keys} : (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>) -> tensor<2x8x4x16xf16>
  // CHECK-NEXT: %[[C:[0-9a-z_]+]] = op.attention %q k %kv v %kv {layout = "BSHD", scale = 2.500000e-01 : f32} : {{.*}}
  %2 = op.attention %q k %kv v %kv {layout = "BSHD", scale = 0.25 : f32} : (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>) -> tensor<2x8x4x16xf16>
  // CHECK-NEXT: func.return %[[A]], %[[B]], %[[C]]
  func.return %0, %1, %2 : tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>, tensor<2x8x4x16xf16>
}
