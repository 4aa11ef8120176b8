// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// graph.cumsum (ONNX CumSum): running sums along `axis` (negative from the end), with
// ONNX's `exclusive` and `reverse` flags; any float or integer element type, the result
// of the input's type.

// CHECK-LABEL: func.func @cumsum
func.func @cumsum(%ids: tensor<2x16xi32>, %x: tensor<4x8x3xf16>, %l: tensor<3x5xi64>) -> (tensor<2x16xi32>, tensor<4x8x3xf16>, tensor<3x5xi64>) {
  // RoBERTa's position ids: the running count of non-pad tokens along the sequence.
  // CHECK-NEXT: %{{.*}} = graph.cumsum %{{.*}} {axis = 1 : i64} : tensor<2x16xi32>
  // CHECK-NEXT: %{{.*}} = graph.cumsum %{{.*}} {axis = -2 : i64, exclusive, reverse} : tensor<4x8x3xf16>
  // CHECK-NEXT: %{{.*}} = graph.cumsum %{{.*}} {axis = 0 : i64, exclusive} : tensor<3x5xi64>
  %0 = graph.cumsum %ids {axis = 1 : i64} : tensor<2x16xi32>
  %1 = graph.cumsum %x {axis = -2 : i64, exclusive, reverse} : tensor<4x8x3xf16>
  %2 = graph.cumsum %l {axis = 0 : i64, exclusive} : tensor<3x5xi64>
  func.return %0, %1, %2 : tensor<2x16xi32>, tensor<4x8x3xf16>, tensor<3x5xi64>
}
