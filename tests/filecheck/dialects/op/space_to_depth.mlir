// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// op.space_to_depth: ONNX's blocking with the input's padding, layouts, the result's
// channel padding and a float conversion in one op (the layouts default to NHWC, the
// pads to 0).

// CHECK-LABEL: func.func @space_to_depth
func.func @space_to_depth(%x: tensor<32x3x224x224xf32>, %y: tensor<2x3x8x6xf16>, %z: tensor<1x9x9x2xi8>) -> (tensor<32x115x115x16xf16>, tensor<2x12x4x3xf16>, tensor<1x3x3x18xi8>, tensor<2x5x4x12xbf16>) {
  // The ResNet-50 stem's input: f32 NCHW padded by 3, blocked 2×2, f16 NHWC on 16 channels.
  // CHECK-NEXT: %{{.*}} = op.space_to_depth %{{.*}} {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<32x3x224x224xf32> -> tensor<32x115x115x16xf16>
  // CHECK-NEXT: %{{.*}} = op.space_to_depth %{{.*}} {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW"} : tensor<2x3x8x6xf16> -> tensor<2x12x4x3xf16>
  // CHECK-NEXT: %{{.*}} = op.space_to_depth %{{.*}} {blocksize = 3 : i64} : tensor<1x9x9x2xi8> -> tensor<1x3x3x18xi8>
  // Negative pads crop (as op.pad's): 8 + 3 - 1 = 10 rows.
  // CHECK-NEXT: %{{.*}} = op.space_to_depth %{{.*}} {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 1, -1, 1>} : tensor<2x3x8x6xf16> -> tensor<2x5x4x12xbf16>
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<32x3x224x224xf32> -> tensor<32x115x115x16xf16>
  %1 = op.space_to_depth %y {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW", pads = array<i64: 0, 0, 0, 0>} : tensor<2x3x8x6xf16> -> tensor<2x12x4x3xf16>
  %2 = op.space_to_depth %z {blocksize = 3 : i64, layout = "NHWC", result_layout = "NHWC"} : tensor<1x9x9x2xi8> -> tensor<1x3x3x18xi8>
  %3 = op.space_to_depth %y {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 1, -1, 1>} : tensor<2x3x8x6xf16> -> tensor<2x5x4x12xbf16>
  func.return %0, %1, %2, %3 : tensor<32x115x115x16xf16>, tensor<2x12x4x3xf16>, tensor<1x3x3x18xi8>, tensor<2x5x4x12xbf16>
}
