// RUN: bolt-opt %s --pass-plugin %repo/examples/plugins/drop_idempotent_activations.py -p drop-idempotent-activations | filecheck %s

// CHECK-LABEL: func.func @relu_chain
func.func @relu_chain(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK:      %[[R:.*]] = graph.relu %{{.*}} : tensor<2x8xf32>
  // CHECK-NEXT: func.return %[[R]] : tensor<2x8xf32>
  %0 = graph.relu %x : tensor<2x8xf32>
  %1 = graph.relu %0 : tensor<2x8xf32>
  %2 = graph.relu %1 : tensor<2x8xf32>
  func.return %2 : tensor<2x8xf32>
}

// Different bounds: both clips stay.
// CHECK-LABEL: func.func @clip_chain
func.func @clip_chain(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK:      %[[A:.*]] = graph.clip %{{.*}} {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64}
  // CHECK-NEXT: %[[B:.*]] = graph.clip %[[A]] {min = 1.000000e+00 : f64, max = 6.000000e+00 : f64}
  // CHECK-NEXT: func.return %[[A]], %[[B]]
  %0 = graph.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %1 = graph.clip %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %2 = graph.clip %1 {min = 1.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  func.return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
