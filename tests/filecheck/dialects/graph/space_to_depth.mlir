// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// graph.space_to_depth (ONNX SpaceToDepth): N×C×H×W -> N×(C·b²)×(H/b)×(W/b), any element
// type.

// CHECK-LABEL: func.func @space_to_depth
func.func @space_to_depth(%x: tensor<2x3x224x224xf32>, %y: tensor<1x1x9x6xi8>) -> (tensor<2x12x112x112xf32>, tensor<1x9x3x2xi8>) {
  // CHECK-NEXT: %{{.*}} = graph.space_to_depth %{{.*}} {blocksize = 2 : i64} : tensor<2x3x224x224xf32> -> tensor<2x12x112x112xf32>
  // CHECK-NEXT: %{{.*}} = graph.space_to_depth %{{.*}} {blocksize = 3 : i64} : tensor<1x1x9x6xi8> -> tensor<1x9x3x2xi8>
  %0 = graph.space_to_depth %x {blocksize = 2 : i64} : tensor<2x3x224x224xf32> -> tensor<2x12x112x112xf32>
  %1 = graph.space_to_depth %y {blocksize = 3 : i64} : tensor<1x1x9x6xi8> -> tensor<1x9x3x2xi8>
  func.return %0, %1 : tensor<2x12x112x112xf32>, tensor<1x9x3x2xi8>
}
