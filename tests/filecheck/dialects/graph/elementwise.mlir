// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Binary ops with ONNX (numpy) broadcasting, sum, equal and where.

// CHECK-LABEL: func.func @add_same_shape
func.func @add_same_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = graph.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @add_broadcast_bias
func.func @add_broadcast_bias(%a: tensor<1x8x4x4xf32>, %b: tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: %{{.*}} = graph.add %{{.*}}, %{{.*}} : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %0 = graph.add %a, %b : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// Both operands grow: 3x1 and 1x4 give 3x4.
// CHECK-LABEL: func.func @add_broadcast_both
func.func @add_broadcast_both(%a: tensor<3x1xi32>, %b: tensor<1x4xi32>) -> tensor<3x4xi32> {
  // CHECK: %{{.*}} = graph.add %{{.*}}, %{{.*}} : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  %0 = graph.add %a, %b : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}

// A rank-0 operand broadcasts to anything.
// CHECK-LABEL: func.func @sub_scalar
func.func @sub_scalar(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = graph.sub %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul
func.func @mul(%a: tensor<4xf16>, %b: tensor<2x4xf16>) -> tensor<2x4xf16> {
  // CHECK: %{{.*}} = graph.mul %{{.*}}, %{{.*}} : (tensor<4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
  %0 = graph.mul %a, %b : (tensor<4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
  func.return %0 : tensor<2x4xf16>
}

// CHECK-LABEL: func.func @div
func.func @div(%a: tensor<2x3xi64>, %b: tensor<3xi64>) -> tensor<2x3xi64> {
  // CHECK: %{{.*}} = graph.div %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %0 = graph.div %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  func.return %0 : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @pow
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<1xf32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = graph.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  %0 = graph.pow %a, %b : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// Pow on integers (non-negative exponents).
// CHECK-LABEL: func.func @pow_int
func.func @pow_int(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %c: tensor<4xi64>) -> (tensor<2x3xi32>, tensor<4xi64>) {
  // CHECK: %{{.*}} = graph.pow %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %{{.*}} = graph.pow %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %0 = graph.pow %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = graph.pow %c, %c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %0, %1 : tensor<2x3xi32>, tensor<4xi64>
}

// Unsigned integers.
// CHECK-LABEL: func.func @unsigned
func.func @unsigned(%a: tensor<3xui16>, %b: tensor<3xui16>, %c: tensor<2x3xui64>, %d: tensor<3xui64>) -> (tensor<3xui16>, tensor<2x3xui64>, tensor<2x3xi1>) {
  // CHECK: %{{.*}} = graph.sub %{{.*}}, %{{.*}} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  // CHECK-NEXT: %{{.*}} = graph.div %{{.*}}, %{{.*}} : (tensor<2x3xui64>, tensor<3xui64>) -> tensor<2x3xui64>
  // CHECK-NEXT: %{{.*}} = graph.equal %{{.*}}, %{{.*}} : (tensor<2x3xui64>, tensor<3xui64>) -> tensor<2x3xi1>
  %0 = graph.sub %a, %b : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  %1 = graph.div %c, %d : (tensor<2x3xui64>, tensor<3xui64>) -> tensor<2x3xui64>
  %2 = graph.equal %c, %d : (tensor<2x3xui64>, tensor<3xui64>) -> tensor<2x3xi1>
  func.return %0, %1, %2 : tensor<3xui16>, tensor<2x3xui64>, tensor<2x3xi1>
}

// Equal gives i1, whatever its operands' element type.
// CHECK-LABEL: func.func @equal_float
func.func @equal_float(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xi1> {
  // CHECK: %{{.*}} = graph.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xi1>
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xi1>
  func.return %0 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @equal_i1
func.func @equal_i1(%a: tensor<5xi1>, %b: tensor<5xi1>) -> tensor<5xi1> {
  // CHECK: %{{.*}} = graph.equal %{{.*}}, %{{.*}} : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  %0 = graph.equal %a, %b : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  func.return %0 : tensor<5xi1>
}

// CHECK-LABEL: func.func @sum_one
func.func @sum_one(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %{{.*}} = graph.sum %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
  %0 = graph.sum %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @sum_three_broadcast
func.func @sum_three_broadcast(%a: tensor<2x1xf32>, %b: tensor<3xf32>, %c: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = graph.sum %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = graph.sum %a, %b, %c : (tensor<2x1xf32>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// The condition and both values broadcast together.
// CHECK-LABEL: func.func @where
func.func @where(%c: tensor<2x1xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// Equal feeding where: the usual i1 pipeline.
// CHECK-LABEL: func.func @equal_then_where
func.func @equal_then_where(%a: tensor<4xi64>, %b: tensor<4xi64>, %x: tensor<4xi64>) -> tensor<4xi64> {
  // CHECK: %[[MASK:.*]] = graph.equal %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK-NEXT: %{{.*}} = graph.where %[[MASK]], %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %0 = graph.equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %1 = graph.where %0, %x, %b : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %1 : tensor<4xi64>
}
