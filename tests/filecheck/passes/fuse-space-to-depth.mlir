// RUN: bolt-opt %s -p fuse-space-to-depth | filecheck %s
// RUN: bolt-opt %s -p fuse-space-to-depth | bolt-opt -p fuse-space-to-depth | filecheck %s
// RUN: bolt-opt %s -p fuse-space-to-depth --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      fuse-space-to-depth
// STATS-NEXT:   5 pads fused
// STATS-NEXT:   4 casts fused
// STATS-NEXT:   3 layout transforms fused
// STATS-NEXT:   1 image inputs blocked by 1

// What the default pipeline makes of a blocked stem's input (convert-precision's cast,
// the stem's padding, ONNX's blocking, convert-layout's transpose, pad-alignment's
// channels 12 -> 16): one op that reads the f32 NCHW image and writes the conv's f16
// NHWC input.
// CHECK-LABEL: func.func @stem
func.func @stem(%x: tensor<2x3x32x32xf32>, %w: tensor<8x4x4x16xf16>) -> tensor<2x16x16x8xf16> {
  // CHECK-NEXT: %[[S:.*]] = op.space_to_depth %{{.*}} {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<2x3x32x32xf32> -> tensor<2x19x19x16xf16>
  // CHECK-NEXT: %[[Y:.*]] = op.conv2d %[[S]], %{{.*}} : (tensor<2x19x19x16xf16>, tensor<8x4x4x16xf16>) -> tensor<2x16x16x8xf16>
  // CHECK-NEXT: func.return %[[Y]]
  %0 = op.cast %x : tensor<2x3x32x32xf32> to tensor<2x3x32x32xf16>
  %1 = op.pad %0 {pads = array<i64: 0, 0, 3, 3, 0, 0, 3, 3>} : tensor<2x3x32x32xf16> -> tensor<2x3x38x38xf16>
  %2 = op.space_to_depth %1 {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW"} : tensor<2x3x38x38xf16> -> tensor<2x12x19x19xf16>
  %3 = op.layout_transform %2 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x12x19x19xf16> -> tensor<2x19x19x12xf16>
  %4 = op.pad %3 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 4>} : tensor<2x19x19x12xf16> -> tensor<2x19x19x16xf16>
  %5 = op.conv2d %4, %w : (tensor<2x19x19x16xf16>, tensor<8x4x4x16xf16>) -> tensor<2x16x16x8xf16>
  func.return %5 : tensor<2x16x16x8xf16>
}

// The cast as fuse-elementwise writes it, a crop at the end (negative pads carry over),
// and an NHWC input (its transpose to NCHW folded).
// CHECK-LABEL: func.func @elementwise_cast_and_nhwc_input
func.func @elementwise_cast_and_nhwc_input(%x: tensor<1x11x10x3xf32>) -> tensor<1x5x6x16xbf16> {
  // CHECK-NEXT: %[[S:.*]] = op.space_to_depth %{{.*}} {blocksize = 2 : i64, pads = array<i64: 1, 1, -2, 1>} : tensor<1x11x10x3xf32> -> tensor<1x5x6x16xbf16>
  // CHECK-NEXT: func.return %[[S]]
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    %t = arith.truncf %e : f32 to bf16
    op.yield %t : bf16
  } : (tensor<1x11x10x3xf32>) -> tensor<1x11x10x3xbf16>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x11x10x3xbf16> -> tensor<1x3x11x10xbf16>
  %2 = op.pad %1 {pads = array<i64: 0, 0, 1, 1, 0, 0, -2, 1>} : tensor<1x3x11x10xbf16> -> tensor<1x3x10x12xbf16>
  %3 = op.space_to_depth %2 {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW"} : tensor<1x3x10x12xbf16> -> tensor<1x12x5x6xbf16>
  %4 = op.layout_transform %3 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x12x5x6xbf16> -> tensor<1x5x6x12xbf16>
  %5 = op.pad %4 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 4>} : tensor<1x5x6x12xbf16> -> tensor<1x5x6x16xbf16>
  func.return %5 : tensor<1x5x6x16xbf16>
}

// VGG's input (a 3×3 stem at stride 1, nothing to block): the cast, the transpose to
// NHWC and the channel pad 3 -> 4 become one blocksize-1 op that reads the f32 image.
// CHECK-LABEL: func.func @unblocked_image
func.func @unblocked_image(%x: tensor<2x3x9x7xf32>, %w: tensor<8x3x3x4xf16>) -> tensor<2x9x7x8xf16> {
  // CHECK-NEXT: %[[S:.*]] = op.space_to_depth %{{.*}} {blocksize = 1 : i64, layout = "NCHW"} : tensor<2x3x9x7xf32> -> tensor<2x9x7x4xf16>
  // CHECK-NEXT: %[[Y:.*]] = op.conv2d %[[S]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>}
  // CHECK-NEXT: func.return %[[Y]]
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    %t = arith.truncf %e : f32 to f16
    op.yield %t : f16
  } : (tensor<2x3x9x7xf32>) -> tensor<2x3x9x7xf16>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x3x9x7xf16> -> tensor<2x9x7x3xf16>
  %2 = op.pad %1 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : tensor<2x9x7x3xf16> -> tensor<2x9x7x4xf16>
  %3 = op.conv2d %2, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x9x7x4xf16>, tensor<8x3x3x4xf16>) -> tensor<2x9x7x8xf16>
  func.return %3 : tensor<2x9x7x8xf16>
}

// A cast after the blocking folds as well (one rounding either way).
// CHECK-LABEL: func.func @cast_after
func.func @cast_after(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x8xf16> {
  // CHECK-NEXT: %[[S:.*]] = op.space_to_depth %{{.*}} {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x2x4x4xf32> -> tensor<1x2x2x8xf16>
  // CHECK-NEXT: func.return %[[S]]
  %0 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x2x4x4xf32> -> tensor<1x2x2x8xf32>
  %1 = op.cast %0 : tensor<1x2x2x8xf32> to tensor<1x2x2x8xf16>
  func.return %1 : tensor<1x2x2x8xf16>
}

// Left alone: a pad that fills 1.0, a pad of the channels before the blocking, a cast
// with another user, a second cast (two roundings), a pad of the result's pixels, a
// result with two users, a transpose that is not a layout change.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<1x3x8x8xf32>, %y: tensor<1x3x8x8xf64>) -> (tensor<1x4x4x12xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x12xf16>, tensor<1x3x8x8xf16>, tensor<1x4x4x12xf16>, tensor<1x6x4x12xf32>, tensor<1x4x4x12xf32>, tensor<1x4x4x12xf32>, tensor<1x12x4x4xf32>) {
  // CHECK-NEXT: op.pad %{{.*}} {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 1.000000e+00 : f64}
  // CHECK-NEXT: op.space_to_depth
  %0 = op.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 1.0 : f64} : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
  %1 = op.space_to_depth %0 {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: -1, -1, -1, -1>} : tensor<1x3x10x10xf32> -> tensor<1x4x4x12xf32>
  // CHECK-NEXT: op.pad %{{.*}} {pads = array<i64: 0, 0, 0, 0, 0, 1, 0, 0>}
  // CHECK-NEXT: op.space_to_depth
  %2 = op.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 1, 0, 0>} : tensor<1x3x8x8xf32> -> tensor<1x4x8x8xf32>
  %3 = op.space_to_depth %2 {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x4x8x8xf32> -> tensor<1x4x4x16xf32>
  // CHECK-NEXT: op.cast
  // CHECK-NEXT: op.space_to_depth
  %4 = op.cast %x : tensor<1x3x8x8xf32> to tensor<1x3x8x8xf16>
  %5 = op.space_to_depth %4 {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf16> -> tensor<1x4x4x12xf16>
  // CHECK-NEXT: op.cast %{{.*}} : tensor<1x3x8x8xf64> to tensor<1x3x8x8xf32>
  // CHECK-NEXT: op.space_to_depth %{{.*}} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf16>
  %6 = op.cast %y : tensor<1x3x8x8xf64> to tensor<1x3x8x8xf32>
  %7 = op.space_to_depth %6 {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf16>
  // CHECK-NEXT: op.space_to_depth
  // CHECK-NEXT: op.pad
  %8 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  %9 = op.pad %8 {pads = array<i64: 0, 1, 0, 0, 0, 1, 0, 0>} : tensor<1x4x4x12xf32> -> tensor<1x6x4x12xf32>
  // CHECK-NEXT: op.space_to_depth
  // CHECK-NEXT: op.layout_transform
  %10 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  %11 = op.layout_transform %10 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x12xf32> -> tensor<1x4x4x12xf32>
  // CHECK-NEXT: op.space_to_depth
  // CHECK-NEXT: op.layout_transform
  %12 = op.space_to_depth %x {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf32> -> tensor<1x4x4x12xf32>
  %13 = op.layout_transform %12 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x12xf32> -> tensor<1x12x4x4xf32>
  // CHECK-NEXT: func.return
  func.return %1, %3, %5, %4, %7, %9, %11, %12, %13 : tensor<1x4x4x12xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x12xf16>, tensor<1x3x8x8xf16>, tensor<1x4x4x12xf16>, tensor<1x6x4x12xf32>, tensor<1x4x4x12xf32>, tensor<1x4x4x12xf32>, tensor<1x12x4x4xf32>
}
