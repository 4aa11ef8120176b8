// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// graph.constant: small inline dense<...> values and dense_resource<...> weights whose
// bytes live in the dialect_resources section (0x, 4-byte little-endian alignment, then
// the raw little-endian data).

// CHECK-LABEL: func.func @inline_dense
func.func @inline_dense() -> (tensor<2x2xi64>, tensor<3xf32>, tensor<2xf16>) {
  // CHECK: %{{.*}} = graph.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  // CHECK-NEXT: %{{.*}} = graph.constant dense<[1.000000e+00, -2.500000e+00, 0.000000e+00]> : tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = graph.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf16>
  %0 = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %1 = graph.constant dense<[1.0, -2.5, 0.0]> : tensor<3xf32>
  %2 = graph.constant dense<[1.5, -2.0]> : tensor<2xf16>
  func.return %0, %1, %2 : tensor<2x2xi64>, tensor<3xf32>, tensor<2xf16>
}

// Splats, rank 0, i1 and an empty tensor.
// CHECK-LABEL: func.func @inline_special
func.func @inline_special() -> (tensor<1x64x1x1xf32>, tensor<i64>, tensor<3xi1>, tensor<0xi64>) {
  // CHECK: %{{.*}} = graph.constant dense<5.000000e-01> : tensor<1x64x1x1xf32>
  // CHECK-NEXT: %{{.*}} = graph.constant dense<-1> : tensor<i64>
  // CHECK-NEXT: %{{.*}} = graph.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK-NEXT: %{{.*}} = graph.constant dense<> : tensor<0xi64>
  %0 = graph.constant dense<0.5> : tensor<1x64x1x1xf32>
  %1 = graph.constant dense<-1> : tensor<i64>
  %2 = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %3 = graph.constant dense<> : tensor<0xi64>
  func.return %0, %1, %2, %3 : tensor<1x64x1x1xf32>, tensor<i64>, tensor<3xi1>, tensor<0xi64>
}

// Extra (discardable) attributes are kept, after the value.
// CHECK-LABEL: func.func @inline_with_attributes
func.func @inline_with_attributes() -> tensor<3xi32> {
  // CHECK: %{{.*}} = graph.constant dense<[1, -2, 3]> : tensor<3xi32> {note = "shape"}
  %0 = graph.constant dense<[1, -2, 3]> : tensor<3xi32> {note = "shape"}
  func.return %0 : tensor<3xi32>
}

// Weights used by an op; the result type is the value's type.
// CHECK-LABEL: func.func @weights
// CHECK-SAME: (%{{.*}}: tensor<3x2xf32> {graph.name = "gpu_0/data_0"}) -> (tensor<3x2xf32> {graph.name = "gpu_0/softmax_1"})
func.func @weights(%x: tensor<3x2xf32> {graph.name = "gpu_0/data_0"}) -> (tensor<3x2xf32> {graph.name = "gpu_0/softmax_1"}) {
  // CHECK: %[[B:.*]] = graph.constant dense_resource<fc_b> : tensor<2xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.constant dense_resource<fc_s> : tensor<2x2xf16>
  // CHECK-NEXT: %[[I:.*]] = graph.constant dense_resource<idx> : tensor<3xi64>
  // CHECK-NEXT: %{{.*}} = graph.add %{{.*}}, %[[B]] : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %b = graph.constant dense_resource<fc_b> : tensor<2xf32>
  %s = graph.constant dense_resource<fc_s> : tensor<2x2xf16>
  %i = graph.constant dense_resource<idx> : tensor<3xi64>
  %0 = graph.add %x, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %1 = graph.softmax %0 : tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}

// The blobs survive both round trips, byte for byte (the printer may restate the
// alignment as the element size, and xDSL 0.75 prints the entries on one line, in key order).
// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       fc_b: "0x{{0[48]}}0000000000803F00000040",
// CHECK:            fc_s: "0x{{0[248]}}0000000038003C00C00042",
// CHECK:            idx: "0x{{0[48]}}0000000100000000000000FFFFFFFFFFFFFFFF0700000000000000"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}

{-#
  dialect_resources: {
    builtin: {
      fc_b: "0x040000000000803F00000040",
      fc_s: "0x040000000038003C00C00042",
      idx: "0x040000000100000000000000FFFFFFFFFFFFFFFF0700000000000000"
    }
  }
#-}

// -----

// A second input chunk has its own resources.
// CHECK: // {{-----}}
// CHECK-LABEL: func.func @weights_second_chunk
func.func @weights_second_chunk() -> tensor<2x3x4xf32> {
  // CHECK: %{{.*}} = graph.constant dense_resource<conv_w> : tensor<2x3x4xf32>
  %0 = graph.constant dense_resource<conv_w> : tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK:      dialect_resources: {
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     conv_w: "0x{{0[48]}}000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B841"
// CHECK-NEXT:   }
// CHECK-NEXT: }

{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B841"
    }
  }
#-}
