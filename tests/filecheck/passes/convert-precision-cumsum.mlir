// RUN: bolt-opt %s -p convert-precision | filecheck %s

// convert-precision takes a float cumsum to the target type (its kernel sums in f32 and
// rounds once) and leaves an integer one, RoBERTa's position ids, as it is.

// CHECK-LABEL: func.func @cumsums
func.func @cumsums(%x: tensor<2x8xf32>, %ids: tensor<2x8xi32>) -> (tensor<2x8xf32>, tensor<2x8xi32>) {
  // CHECK-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<2x8xf32> to tensor<2x8xf16>
  // CHECK-NEXT: %[[S:.*]] = graph.cumsum %[[X]] {axis = 1 : i64, exclusive} : tensor<2x8xf16>
  // CHECK-NEXT: %[[P:.*]] = graph.cumsum %{{.*}} {axis = 1 : i64} : tensor<2x8xi32>
  // CHECK-NEXT: %[[Y:.*]] = graph.cast %[[S]] : tensor<2x8xf16> to tensor<2x8xf32>
  // CHECK-NEXT: func.return %[[Y]], %[[P]] : tensor<2x8xf32>, tensor<2x8xi32>
  %0 = graph.cumsum %x {axis = 1 : i64, exclusive} : tensor<2x8xf32>
  %1 = graph.cumsum %ids {axis = 1 : i64} : tensor<2x8xi32>
  func.return %0, %1 : tensor<2x8xf32>, tensor<2x8xi32>
}
