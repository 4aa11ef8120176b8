// RUN: bolt-opt %s -p convert-precision | filecheck %s
// RUN: bolt-opt %s -p 'convert-precision{dtype=bf16}' | filecheck %s --check-prefix=BF16
// RUN: bolt-opt %s -p 'convert-precision{dtype=f16}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'convert-precision{dtype=fp16}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: error: bad argument for pass 'convert-precision': dtype must be one of f16, bf16, f32, got 'fp16'

// STATS:      convert-precision
// STATS-DAG:  8 casts inserted
// STATS-DAG:  3 weights converted

// The interface stays f32: the input is cast to f16, the result back to f32; the
// weights are converted at compile time.
// CHECK-LABEL: func.func @conv_relu
// CHECK-SAME:  (%{{.*}}: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
// BF16-LABEL: func.func @conv_relu
func.func @conv_relu(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<1x2x3x3xf32> to tensor<1x2x3x3xf16>
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{\[}}[{{\[}}[5.000000e-01]], {{\[}}[-2.500000e-01]]]]> : tensor<1x2x1x1xf16>
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<1.000000e+00> : tensor<1xf16>
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x2x3x3xf16>, tensor<1x2x1x1xf16>, tensor<1xf16>) -> tensor<1x1x3x3xf16>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[C]] : tensor<1x1x3x3xf16>
  // CHECK-NEXT: %[[Y:.*]] = graph.cast %[[R]] : tensor<1x1x3x3xf16> to tensor<1x1x3x3xf32>
  // CHECK-NEXT: func.return %[[Y]] : tensor<1x1x3x3xf32>
  // bf16 weights are stored as resources (dense<...> holds numpy's own types only).
  // BF16-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<1x2x3x3xf32> to tensor<1x2x3x3xbf16>
  // BF16-NEXT: %[[W:.*]] = graph.constant dense_resource<{{.*}}.bf16> : tensor<1x2x1x1xbf16>
  // BF16-NEXT: %[[B:.*]] = graph.constant dense_resource<{{.*}}.bf16> : tensor<1xbf16>
  // BF16-NEXT: %[[C:.*]] = graph.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x2x3x3xbf16>, tensor<1x2x1x1xbf16>, tensor<1xbf16>) -> tensor<1x1x3x3xbf16>
  // BF16-NEXT: %[[R:.*]] = graph.relu %[[C]] : tensor<1x1x3x3xbf16>
  // BF16-NEXT: %[[Y:.*]] = graph.cast %[[R]] : tensor<1x1x3x3xbf16> to tensor<1x1x3x3xf32>
  // BF16-NEXT: func.return %[[Y]] : tensor<1x1x3x3xf32>
  %w = graph.constant dense<[[[[0.5]], [[-0.25]]]]> : tensor<1x2x1x1xf32>
  %b = graph.constant dense<1.0> : tensor<1xf32>
  %0 = graph.conv2d %x, %w, %b : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  %1 = graph.relu %0 : tensor<1x1x3x3xf32>
  func.return %1 : tensor<1x1x3x3xf32>
}

// Integer and boolean tensors are untouched: the token ids, the gather's indices, the
// i1 comparison (an output that needs no cast). The embedding table goes f16.
// CHECK-LABEL: func.func @embedding
func.func @embedding(%ids: tensor<2x3xi64>, %table: tensor<5x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xi1>) {
  // CHECK-NEXT: %[[T:.*]] = graph.cast %{{.*}} : tensor<5x4xf32> to tensor<5x4xf16>
  // CHECK-NEXT: %[[Z:.*]] = graph.constant dense<0> : tensor<i64>
  // CHECK-NEXT: %[[G:.*]] = graph.gather %[[T]], %{{.*}} : (tensor<5x4xf16>, tensor<2x3xi64>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %[[E:.*]] = graph.equal %{{.*}}, %[[Z]] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi1>
  // CHECK-NEXT: %[[Y:.*]] = graph.cast %[[G]] : tensor<2x3x4xf16> to tensor<2x3x4xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[E]] : tensor<2x3x4xf32>, tensor<2x3xi1>
  %zero = graph.constant dense<0> : tensor<i64>
  %0 = graph.gather %table, %ids : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = graph.equal %ids, %zero : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi1>
  func.return %0, %1 : tensor<2x3x4xf32>, tensor<2x3xi1>
}

// Casts inside the model: an integer cast to f32 now casts to f16; the f32 -> f32 one
// is an identity after the conversion and goes; f8 (quantization's type) is kept.
// CHECK-LABEL: func.func @casts
func.func @casts(%n: tensor<4xi32>, %x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // CHECK-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
  // CHECK-NEXT: %[[N:.*]] = graph.cast %{{.*}} : tensor<4xi32> to tensor<4xf16>
  // CHECK-NEXT: %[[S:.*]] = graph.sub %[[N]], %[[X]] : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  // CHECK-NEXT: %[[Q:.*]] = graph.cast %[[S]] : tensor<4xf16> to tensor<4xf8E4M3FN>
  // CHECK-NEXT: func.return %[[Q]] : tensor<4xf8E4M3FN>
  %0 = graph.cast %n : tensor<4xi32> to tensor<4xf32>
  %1 = graph.cast %x : tensor<4xf32> to tensor<4xf32>
  %2 = graph.sub %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.cast %2 : tensor<4xf32> to tensor<4xf8E4M3FN>
  func.return %3 : tensor<4xf8E4M3FN>
}

// Softmax and layer norm need nothing special (their kernels compute in f32); a scalar
// f32 constant becomes a scalar f16 one.
// CHECK-LABEL: func.func @attention_scores
func.func @attention_scores(%x: tensor<2x4xf32>, %gamma: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<2x4xf32> to tensor<2x4xf16>
  // CHECK-NEXT: %[[G:.*]] = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense<1.250000e-01> : tensor<f16>
  // CHECK-NEXT: graph.layer_norm %[[X]], %[[G]] : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  // CHECK-NEXT: graph.mul %{{.*}}, %[[S]] : (tensor<2x4xf16>, tensor<f16>) -> tensor<2x4xf16>
  // CHECK-NEXT: graph.softmax %{{.*}} : tensor<2x4xf16>
  // CHECK-NEXT: graph.cast %{{.*}} : tensor<2x4xf16> to tensor<2x4xf32>
  %scale = graph.constant dense<0.125> : tensor<f32>
  %0 = graph.layer_norm %x, %gamma : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = graph.mul %0, %scale : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %2 = graph.softmax %1 : tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}
