// RUN: bolt-opt %s -p 'pad-alignment{arch=sm90}' --elide-weights | filecheck %s --check-prefix=CHECK
// RUN: bolt-opt %s -p 'pad-alignment{arch=sm80}' --elide-weights | filecheck %s --check-prefix=CHECK
// RUN: bolt-opt %s -p pad-alignment --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'pad-alignment{arch=sm70}' 2>&1 | filecheck %s --check-prefix=ARCH
// RUN: bolt-opt %s -p 'pad-alignment{arch=sm90 stem_channels=16}' --elide-weights | filecheck %s --check-prefix=STEM16
// RUN: not bolt-opt %s -p 'pad-alignment{stem_channels=6}' 2>&1 | filecheck %s --check-prefix=STEMBAD

// STEMBAD: error: bad argument for pass 'pad-alignment': stem_channels must be 0 or a positive multiple of 4; got 6

// ARCH: error: bad argument for pass 'pad-alignment': arch must be one of sm80, sm90; got 'sm70'

// STATS:      pad-alignment
// STATS-DAG:  3 op.pad inserted
// STATS-DAG:  4 op.conv2d padded
// STATS-DAG:  2 op.gemm padded
// STATS-DAG:  22 channels padded
// STATS-DAG:  1 op.unary widened
// STATS-DAG:  2 pads fused into producers
// STATS-DAG:  4 op.slice inserted

// The first conv of an image model: C = 3 pads to 4 for the 2.x fixed-channels kernel, on
// both arches. K = 16 is aligned: no slice, the bias is kept.
// With stem_channels=16 it pads to 16 instead: the halo conv's 32-byte rows.
// STEM16-LABEL: func.func @first_conv
// STEM16:       op.pad %image {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 13>} : tensor<1x8x8x3xf16> -> tensor<1x8x8x16xf16>
// STEM16:       op.constant dense_resource<{{.*}}> : tensor<16x7x7x16xf16>
// CHECK-LABEL: func.func @first_conv
// CHECK:      %[[X:.*]] = op.pad %image {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : tensor<1x8x8x3xf16> -> tensor<1x8x8x4xf16>
// CHECK-NEXT: %[[W:.*]] = op.constant dense_resource<{{.*}}> : tensor<16x7x7x4xf16>
// CHECK-NEXT: %[[Y:.*]] = op.conv2d %[[X]], %[[W]] bias %b {{.*}} -> tensor<1x4x4x16xf16>
// CHECK-NEXT: func.return %[[Y]]
func.func @first_conv(%image: tensor<1x8x8x3xf16>) -> tensor<1x4x4x16xf16> {
  %w = op.constant dense<0.5> : tensor<16x7x7x3xf16>
  %b = op.constant dense<0.25> : tensor<16xf16>
  %0 = op.conv2d %image, %w bias %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x8x8x3xf16>, tensor<16x7x7x3xf16>, tensor<16xf16>) -> tensor<1x4x4x16xf16>
  func.return %0 : tensor<1x4x4x16xf16>
}

// K = 5 pads into the producer: zero filters and zero biases (sigmoid makes the added
// channels 0.5, which meet zero weights in the next conv); relu runs on the padded
// tensor; the outputs get slices.
// CHECK-LABEL: func.func @conv_chain
// CHECK:      %[[B:.*]] = op.constant dense<[2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf16>
// CHECK-NEXT: %[[A:.*]] = op.conv2d %x, %{{.*}} bias %[[B]] {{.*}} : (tensor<1x6x6x8xf16>, tensor<8x3x3x8xf16>, tensor<8xf16>) -> tensor<1x6x6x8xf16>
// CHECK-NEXT: %[[A5:.*]] = op.slice %[[A]] {starts = array<i64: 0>, ends = array<i64: 5>, axes = array<i64: 3>, steps = array<i64: 1>} : tensor<1x6x6x8xf16> -> tensor<1x6x6x5xf16>
// CHECK-NEXT: %[[R:.*]] = op.unary relu %[[A]] : tensor<1x6x6x8xf16>
// CHECK-NEXT: %[[W1:.*]] = op.constant dense_resource<{{.*}}> : tensor<8x1x1x8xf16>
// CHECK-NEXT: %[[C:.*]] = op.conv2d %[[R]], %[[W1]] : (tensor<1x6x6x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x6x6x8xf16>
// CHECK-NEXT: %[[C7:.*]] = op.slice %[[C]] {{.*}}ends = array<i64: 7>{{.*}} -> tensor<1x6x6x7xf16>
// CHECK-NEXT: func.return %[[C7]], %[[A5]]
func.func @conv_chain(%x: tensor<1x6x6x8xf16>) -> (tensor<1x6x6x7xf16>, tensor<1x6x6x5xf16>) {
  %w0 = op.constant dense<0.5> : tensor<5x3x3x8xf16>
  %b0 = op.constant dense<0.25> : tensor<5xf16>
  %0 = op.conv2d %x, %w0 bias %b0 {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, sigmoid>} : (tensor<1x6x6x8xf16>, tensor<5x3x3x8xf16>, tensor<5xf16>) -> tensor<1x6x6x5xf16>
  %1 = op.unary relu %0 : tensor<1x6x6x5xf16>
  %w1 = op.constant dense<0.5> : tensor<7x1x1x5xf16>
  %2 = op.conv2d %1, %w1 : (tensor<1x6x6x5xf16>, tensor<7x1x1x5xf16>) -> tensor<1x6x6x7xf16>
  func.return %2, %0 : tensor<1x6x6x7xf16>, tensor<1x6x6x5xf16>
}

// f32 aligns to 4: K 13 -> 16 (an op.pad of the input), N 27 -> 28, then K 27 -> 28
// (from the producer) and N 5 -> 8. B is column-major in the first GEMM.
// CHECK-LABEL: func.func @mlp
// CHECK:      %[[XP:.*]] = op.pad %x {pads = array<i64: 0, 0, 0, 3>} : tensor<4x13xf32> -> tensor<4x16xf32>
// CHECK:      %[[H:.*]] = op.gemm %[[XP]], %{{.*}} bias %{{.*}} {layout_b = "col", epilogue = #op.epilogue<bias, gelu>} : (tensor<4x16xf32>, tensor<28x16xf32>, tensor<28xf32>) -> tensor<4x28xf32>
// CHECK:      %[[O:.*]] = op.gemm %[[H]], %{{.*}} : (tensor<4x28xf32>, tensor<28x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[O5:.*]] = op.slice %[[O]] {{.*}}axes = array<i64: 1>{{.*}} : tensor<4x8xf32> -> tensor<4x5xf32>
// CHECK-NEXT: func.return %[[O5]]
func.func @mlp(%x: tensor<4x13xf32>) -> tensor<4x5xf32> {
  %w0 = op.constant dense<0.5> : tensor<27x13xf32>
  %b0 = op.constant dense<0.25> : tensor<27xf32>
  %0 = op.gemm %x, %w0 bias %b0 {layout_b = "col", epilogue = #op.epilogue<bias, gelu>} : (tensor<4x13xf32>, tensor<27x13xf32>, tensor<27xf32>) -> tensor<4x27xf32>
  %w1 = op.constant dense<0.5> : tensor<27x5xf32>
  %1 = op.gemm %0, %w1 : (tensor<4x27xf32>, tensor<27x5xf32>) -> tensor<4x5xf32>
  func.return %1 : tensor<4x5xf32>
}

// A depthwise conv grows by whole groups: 13 -> 16.
// CHECK-LABEL: func.func @depthwise
// CHECK:      op.conv2d %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x6x6x16xf32>, tensor<16x3x3x1xf32>) -> tensor<1x6x6x16xf32>
func.func @depthwise(%x: tensor<1x6x6x13xf32>) -> tensor<1x6x6x13xf32> {
  %w = op.constant dense<0.5> : tensor<13x3x3x1xf32>
  %0 = op.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 13 : i64} : (tensor<1x6x6x13xf32>, tensor<13x3x3x1xf32>) -> tensor<1x6x6x13xf32>
  func.return %0 : tensor<1x6x6x13xf32>
}

// Left alone, with notes: NCHW, a filter that is not a constant, and a depthwise conv
// that 8 channels would more than double.
// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:  %wn = op.constant
// CHECK-NEXT:  op.conv2d %x, %wn {layout = "NCHW"} : (tensor<1x3x6x6xf16>, tensor<5x3x3x3xf16>) -> tensor<1x5x4x4xf16>
// CHECK-NEXT:  op.conv2d %y, %w : (tensor<1x6x6x3xf16>, tensor<5x3x3x3xf16>) -> tensor<1x4x4x5xf16>
// CHECK-NEXT:  %wd = op.constant
// CHECK-NEXT:  op.conv2d %y, %wd {groups = 3 : i64} : (tensor<1x6x6x3xf16>, tensor<3x3x3x1xf16>) -> tensor<1x4x4x3xf16>
func.func @left_alone(%x: tensor<1x3x6x6xf16>, %y: tensor<1x6x6x3xf16>, %w: tensor<5x3x3x3xf16>) -> (tensor<1x5x4x4xf16>, tensor<1x4x4x5xf16>, tensor<1x4x4x3xf16>) {
  %wn = op.constant dense<0.5> : tensor<5x3x3x3xf16>
  // STATS: left op.conv2d at {{.*}}pad-alignment.mlir:[[# @LINE + 1]]:3 alone: its layout is NCHW; pad-alignment pads NHWC/OHWI convs only
  %0 = op.conv2d %x, %wn {layout = "NCHW"} : (tensor<1x3x6x6xf16>, tensor<5x3x3x3xf16>) -> tensor<1x5x4x4xf16>
  // STATS: left op.conv2d at {{.*}}pad-alignment.mlir:[[# @LINE + 1]]:3 alone: its filter or bias is not a constant
  %1 = op.conv2d %y, %w : (tensor<1x6x6x3xf16>, tensor<5x3x3x3xf16>) -> tensor<1x4x4x5xf16>
  %wd = op.constant dense<0.5> : tensor<3x3x3x1xf16>
  // STATS: left op.conv2d at {{.*}}pad-alignment.mlir:[[# @LINE + 1]]:3 alone: aligning C = 3 and K = 3 (3 groups) takes 5 more groups, more than doubling it
  %2 = op.conv2d %y, %wd {groups = 3 : i64} : (tensor<1x6x6x3xf16>, tensor<3x3x3x1xf16>) -> tensor<1x4x4x3xf16>
  func.return %0, %1, %2 : tensor<1x5x4x4xf16>, tensor<1x4x4x5xf16>, tensor<1x4x4x3xf16>
}
