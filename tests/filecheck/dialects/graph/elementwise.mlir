// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Binary ops with ONNX (numpy) broadcasting, sum, the comparisons, the logical ops and where.

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

// The other comparisons give i1 too, on floats, signed and unsigned integers.
// CHECK-LABEL: func.func @comparisons
func.func @comparisons(%a: tensor<2x3xf16>, %b: tensor<3xf16>, %c: tensor<4xi64>, %d: tensor<4xui8>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK: %{{.*}} = graph.greater %{{.*}}, %{{.*}} : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = graph.greater_equal %{{.*}}, %{{.*}} : (tensor<3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = graph.less %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK-NEXT: %{{.*}} = graph.less_equal %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %0 = graph.greater %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  %1 = graph.greater_equal %b, %a : (tensor<3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  %2 = graph.less %c, %c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %3 = graph.less_equal %d, %d : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  func.return %0, %1, %2, %3 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<4xi1>
}

// And, or and xor take i1 tensors, with broadcasting.
// CHECK-LABEL: func.func @logical
func.func @logical(%a: tensor<2x1xi1>, %b: tensor<3xi1>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>) {
  // CHECK: %{{.*}} = graph.and %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = graph.or %{{.*}}, %{{.*}} : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = graph.xor %{{.*}}, %{{.*}} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %0 = graph.and %a, %b : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %1 = graph.or %b, %a : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %2 = graph.xor %b, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0, %1, %2 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>
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

// A comparison and the logical ops feeding where (an attention mask).
// CHECK-LABEL: func.func @mask_then_where
func.func @mask_then_where(%a: tensor<4xi64>, %b: tensor<4xi64>, %m: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  // CHECK: %[[GE:.*]] = graph.greater_equal %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK-NEXT: %[[NOT:.*]] = graph.not %{{.*}} : tensor<4xi1>
  // CHECK-NEXT: %[[AND:.*]] = graph.and %[[GE]], %[[NOT]] : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK-NEXT: %{{.*}} = graph.where %[[AND]], %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %0 = graph.greater_equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %1 = graph.not %m : tensor<4xi1>
  %2 = graph.and %0, %1 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %3 = graph.where %2, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}
