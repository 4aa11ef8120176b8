// RUN: bolt-opt %s -p fold-constants,recognize-attention | filecheck %s
// RUN: bolt-opt %s -p fold-constants,recognize-attention --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// (-inf is written as an f32 overflow that fold-constants folds: the parser takes no inf.)

// STATS:      recognize-attention
// STATS-NEXT:   7 attentions recognized
// STATS-NEXT:   2 causal masks recognized
// STATS-NEXT:   2 masks that mask nothing dropped

// torch.onnx's BERT: heads by Reshape + Transpose, Kᵀ as one Transpose(0, 2, 3, 1) of
// the [B, S, H, D] reshape, Div by sqrt(d), Add of the [B, 1, 1, S] mask.
// CHECK-LABEL: func.func @bert
func.func @bert(%q: tensor<2x8x4x16xf32>, %k: tensor<2x8x4x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK-NEXT: %[[Q:.*]] = graph.transpose %q {perm = array<i64: 0, 2, 1, 3>}
  // CHECK-NEXT: %[[K:.*]] = graph.transpose %k {perm = array<i64: 0, 2, 1, 3>}
  // CHECK-NEXT: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %v, %mask {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  // CHECK-NEXT: func.return %[[A]]
  %qt = graph.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
  %s = graph.matmul %qt, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %d = graph.constant dense<4.0> : tensor<f32>
  %scaled = graph.div %s, %d : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %masked = graph.add %scaled, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  %p = graph.softmax %masked : tensor<2x4x8x8xf32>
  %out = graph.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  func.return %out : tensor<2x4x8x16xf32>
}

// The scale on Q and on Kᵀ before the product (0.5 · 0.5), and a mask added first.
// CHECK-LABEL: func.func @scaled_operands
func.func @scaled_operands(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  // CHECK-NEXT: %[[A:.*]] = graph.attention %q, %k, %v, %mask {scale = 2.500000e-01 : f32}
  // CHECK-NEXT: func.return %[[A]]
  %half = graph.constant dense<0.5> : tensor<1xf32>
  %qs = graph.mul %q, %half : (tensor<1x2x4x8xf32>, tensor<1xf32>) -> tensor<1x2x4x8xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %ks = graph.mul %kt, %half : (tensor<1x2x8x4xf32>, tensor<1xf32>) -> tensor<1x2x8x4xf32>
  %s = graph.matmul %qs, %ks : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %masked = graph.add %mask, %s : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %out = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %out : tensor<1x2x4x8xf32>
}

// GPT-2: Where(tril, S, finfo.min) is the causal mask; the padding mask added after it stays.
// CHECK-LABEL: func.func @gpt2_where
func.func @gpt2_where(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %pad: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  // CHECK-NEXT: %[[K:.*]] = graph.transpose %kt {perm = array<i64: 0, 1, 3, 2>}
  // CHECK-NEXT: %[[A:.*]] = graph.attention %q, %[[K]], %v, %pad {scale = 1.250000e-01 : f32, causal}
  // CHECK-NEXT: func.return %[[A]]
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = graph.constant dense<8.0> : tensor<f32>
  %scaled = graph.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %tril = graph.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = graph.constant dense<-3.40282347e+38> : tensor<f32>
  %causal = graph.where %tril, %scaled, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %masked = graph.add %causal, %pad : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked : tensor<1x2x4x4xf32>
  %out = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %out : tensor<1x2x4x8xf32>
}

// An additive causal triangle (0 on and below the diagonal, -1e9 above).
// CHECK-LABEL: func.func @additive_causal
func.func @additive_causal(%q: tensor<1x1x3x4xf32>, %kt: tensor<1x1x4x3xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32> {
  // CHECK: graph.attention %q, %{{.*}}, %v {scale = 1.000000e+00 : f32, causal}
  %s = graph.matmul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %tri = graph.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %masked = graph.add %s, %tri : (tensor<1x1x3x3xf32>, tensor<3x3xf32>) -> tensor<1x1x3x3xf32>
  %p = graph.softmax %masked : tensor<1x1x3x3xf32>
  %out = graph.matmul %p, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  func.return %out : tensor<1x1x3x4xf32>
}

// BERT exported without an attention mask: the folded (1 - ones) · min adds zeros, and a
// masked_fill on an all-false mask fills nothing. Both are dropped: the kernel reads no bias.
// CHECK-LABEL: func.func @masks_that_mask_nothing
func.func @masks_that_mask_nothing(%q: tensor<1x2x3x4xf32>, %kt: tensor<1x2x4x3xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // CHECK-NEXT: %[[K:.*]] = graph.transpose %kt
  // CHECK-NEXT: %[[A:.*]] = graph.attention %q, %[[K]], %v {scale = 1.000000e+00 : f32}
  // CHECK-NEXT: func.return %[[A]]
  %s = graph.matmul %q, %kt : (tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x3x3xf32>
  %none = graph.constant dense<false> : tensor<1x1x1x3xi1>
  %min = graph.constant dense<-3.40282347e+38> : tensor<f32>
  %filled = graph.where %none, %min, %s : (tensor<1x1x1x3xi1>, tensor<f32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %zeros = graph.constant dense<0.0> : tensor<1x1x1x3xf32>
  %masked = graph.add %filled, %zeros : (tensor<1x2x3x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x3x3xf32>
  %p = graph.softmax %masked : tensor<1x2x3x3xf32>
  %out = graph.matmul %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %out : tensor<1x2x3x4xf32>
}

// masked_fill(mask, -inf): Where(mask, -inf, S) attends where the mask is false; with an
// additive mask too, both become one additive mask.
// CHECK-LABEL: func.func @masked_fill
func.func @masked_fill(%q: tensor<1x1x3x4xf32>, %kt: tensor<1x1x4x3xf32>, %v: tensor<1x1x3x4xf32>, %m: tensor<1x1x3x3xi1>, %bias: tensor<1x1x1x3xf32>) -> tensor<1x1x3x4xf32> {
  // CHECK:      %[[N:.*]] = graph.not %m
  // CHECK-NEXT: %[[INF:.*]] = graph.constant
  // CHECK-NEXT: %[[M:.*]] = graph.where %[[N]], %bias, %[[INF]] : (tensor<1x1x3x3xi1>, tensor<1x1x1x3xf32>, tensor<f32>) -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[K:.*]] = graph.transpose %kt
  // CHECK-NEXT: graph.attention %q, %[[K]], %v, %[[M]] {scale = 1.000000e+00 : f32}
  %s = graph.matmul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %big = graph.constant dense<-3.0e38> : tensor<f32>
  %inf = graph.add %big, %big : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %filled = graph.where %m, %inf, %s : (tensor<1x1x3x3xi1>, tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %masked = graph.add %filled, %bias : (tensor<1x1x3x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x3x3xf32>
  %p = graph.softmax %masked : tensor<1x1x3x3xf32>
  %out = graph.matmul %p, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  func.return %out : tensor<1x1x3x4xf32>
}

// torch.export's decomposition: 3-D bmm of [B·H, S, D] reshapes, and the safe softmax.
// CHECK-LABEL: func.func @bmm_safe_softmax
func.func @bmm_safe_softmax(%q: tensor<1x2x3x4xf32>, %kt: tensor<1x2x4x3xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // CHECK:      %[[A:.*]] = graph.attention %q, %{{.*}}, %v {scale = 1.000000e+00 : f32}
  // CHECK-NEXT: func.return %[[A]]
  %q3 = graph.reshape %q : tensor<1x2x3x4xf32> -> tensor<2x3x4xf32>
  %k3 = graph.reshape %kt : tensor<1x2x4x3xf32> -> tensor<2x4x3xf32>
  %s3 = graph.matmul %q3, %k3 : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
  %s = graph.reshape %s3 : tensor<2x3x3xf32> -> tensor<1x2x3x3xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x3x3xf32>
  %big = graph.constant dense<-3.0e38> : tensor<f32>
  %inf = graph.add %big, %big : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %eq = graph.equal %s, %inf : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xi1>
  %seen = graph.not %eq : tensor<1x2x3x3xi1>
  %any = graph.reduce_max %seen {axes = array<i64: 3>, keepdims} : tensor<1x2x3x3xi1> -> tensor<1x2x3x1xi1>
  %none = graph.not %any : tensor<1x2x3x1xi1>
  %zeros = graph.constant dense<0.0> : tensor<1x2x3x3xf32>
  %safe = graph.where %none, %zeros, %p : (tensor<1x2x3x1xi1>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %p3 = graph.reshape %safe : tensor<1x2x3x3xf32> -> tensor<2x3x3xf32>
  %v3 = graph.reshape %v : tensor<1x2x3x4xf32> -> tensor<2x3x4xf32>
  %o3 = graph.matmul %p3, %v3 : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %out = graph.reshape %o3 : tensor<2x3x4xf32> -> tensor<1x2x3x4xf32>
  func.return %out : tensor<1x2x3x4xf32>
}

// Left alone: the scale applied after the mask (it would scale the mask), a softmax over
// another axis, and probabilities that something else reads too.
// CHECK-LABEL: func.func @near_misses
func.func @near_misses(%q: tensor<1x1x3x4xf32>, %kt: tensor<1x1x4x3xf32>, %v: tensor<1x1x3x4xf32>, %m: tensor<1x1x3x3xf32>) -> (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x3xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: func.return
  %s = graph.matmul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %masked = graph.add %s, %m : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %c = graph.constant dense<0.5> : tensor<f32>
  %scaled = graph.mul %masked, %c : (tensor<1x1x3x3xf32>, tensor<f32>) -> tensor<1x1x3x3xf32>
  %p0 = graph.softmax %scaled : tensor<1x1x3x3xf32>
  %o0 = graph.matmul %p0, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %s1 = graph.matmul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %p1 = graph.softmax %s1 {axis = 2 : i64} : tensor<1x1x3x3xf32>
  %o1 = graph.matmul %p1, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %s2 = graph.matmul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %p2 = graph.softmax %s2 : tensor<1x1x3x3xf32>
  %o2 = graph.matmul %p2, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  func.return %o0, %o1, %o2, %p2 : tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x3xf32>
}
