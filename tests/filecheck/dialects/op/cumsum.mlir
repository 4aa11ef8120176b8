// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.cumsum: one kernel of running sums along `axis`, any inner stride; floats sum in
// f32 and round once per element, integers wrap.

// CHECK-LABEL: func.func @cumsum
func.func @cumsum(%ids: tensor<2x16xi32>, %x: tensor<4x8x3xf16>, %l: tensor<3x5xi64>, %b: tensor<2x7xbf16>) -> (tensor<2x16xi32>, tensor<4x8x3xf16>, tensor<3x5xi64>, tensor<2x7xbf16>) {
  // CHECK-NEXT: %{{.*}} = op.cumsum %{{.*}} {axis = 1 : i64} : tensor<2x16xi32>
  // CHECK-NEXT: %{{.*}} = op.cumsum %{{.*}} {axis = 1 : i64, exclusive, reverse} : tensor<4x8x3xf16>
  // CHECK-NEXT: %{{.*}} = op.cumsum %{{.*}} {axis = -2 : i64, reverse} : tensor<3x5xi64>
  // CHECK-NEXT: %{{.*}} = op.cumsum %{{.*}} {axis = 1 : i64, exclusive} : tensor<2x7xbf16>
  %0 = op.cumsum %ids {axis = 1 : i64} : tensor<2x16xi32>
  %1 = op.cumsum %x {axis = 1 : i64, exclusive, reverse} : tensor<4x8x3xf16>
  %2 = op.cumsum %l {axis = -2 : i64, reverse} : tensor<3x5xi64>
  %3 = op.cumsum %b {axis = 1 : i64, exclusive} : tensor<2x7xbf16>
  func.return %0, %1, %2, %3 : tensor<2x16xi32>, tensor<4x8x3xf16>, tensor<3x5xi64>, tensor<2x7xbf16>
}
