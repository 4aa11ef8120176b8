// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.constant: inline dense<...> values and dense_resource<...> weights (as graph.constant).

// CHECK-LABEL: func.func @inline
func.func @inline() -> (tensor<2x2xi64>, tensor<3xf32>, tensor<1x1x1x8xf16>, tensor<i64>, tensor<2xi1>) {
  // CHECK: %{{.*}} = op.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  // CHECK-NEXT: %{{.*}} = op.constant dense<[1.000000e+00, -2.500000e+00, 0.000000e+00]> : tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = op.constant dense<5.000000e-01> : tensor<1x1x1x8xf16>
  // CHECK-NEXT: %{{.*}} = op.constant dense<-1> : tensor<i64>
  // CHECK-NEXT: %{{.*}} = op.constant dense<[true, false]> : tensor<2xi1>
  %0 = op.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %1 = op.constant dense<[1.0, -2.5, 0.0]> : tensor<3xf32>
  %2 = op.constant dense<0.5> : tensor<1x1x1x8xf16>
  %3 = op.constant dense<-1> : tensor<i64>
  %4 = op.constant dense<[true, false]> : tensor<2xi1>
  func.return %0, %1, %2, %3, %4 : tensor<2x2xi64>, tensor<3xf32>, tensor<1x1x1x8xf16>, tensor<i64>, tensor<2xi1>
}

// Extra (discardable) attributes are kept, after the value.
// CHECK-LABEL: func.func @with_attributes
func.func @with_attributes() -> tensor<3xi32> {
  // CHECK: %{{.*}} = op.constant dense<[1, -2, 3]> : tensor<3xi32> {note = "shape"}
  %0 = op.constant dense<[1, -2, 3]> : tensor<3xi32> {note = "shape"}
  func.return %0 : tensor<3xi32>
}

// A weight feeding a GEMM's bias.
// CHECK-LABEL: func.func @weights
func.func @weights(%x: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> tensor<3x2xf32> {
  // CHECK: %[[B:.*]] = op.constant dense_resource<fc_b> : tensor<2xf32>
  // CHECK-NEXT: %{{.*}} = op.gemm %x, %w bias %[[B]] {epilogue = #op.epilogue<bias>}
  %b = op.constant dense_resource<fc_b> : tensor<2xf32>
  %0 = op.gemm %x, %w bias %b {epilogue = #op.epilogue<bias>} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       fc_b: "0x{{0[48]}}0000000000803F00000040"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}

{-#
  dialect_resources: {
    builtin: {
      fc_b: "0x040000000000803F00000040"
    }
  }
#-}
