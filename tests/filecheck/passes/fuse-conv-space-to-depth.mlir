// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-conv-space-to-depth' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-conv-space-to-depth,lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=cutlass},fuse-conv-space-to-depth' | filecheck %s --check-prefix=CUTLASS

// ResNet-50's stem at batch 32 after the space-to-depth rewrite: the image blocked 2x2
// (padded by 3, 12 channels in 16), then a 4x4 conv on our halo conv. The blocking moves
// into the conv's patch loads: one op.space_to_depth_conv2d reads the f32 image. On
// CUTLASS's conv the blocked tensor stays.

// CHECK-LABEL: func.func @resnet_stem
// CHECK-NEXT:  %0 = op.space_to_depth_conv2d %image, %w bias %b
// CHECK-SAME:  blocksize = 2 : i64
// CHECK-SAME:  image_pads = array<i64: 3, 3, 3, 3>
// CHECK-SAME:  family = "halo_conv"
// CHECK-SAME:  (tensor<32x3x224x224xf32>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<32x112x112x64xf16>
// CHECK-NEXT:  func.return %0
// CUTLASS-LABEL: func.func @resnet_stem
// CUTLASS:       op.space_to_depth
// CUTLASS:       op.conv2d
func.func @resnet_stem(%image: tensor<32x3x224x224xf32>, %w: tensor<64x4x4x16xf16>, %b: tensor<64xf16>) -> tensor<32x112x112x64xf16> {
  %0 = op.space_to_depth %image {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<32x3x224x224xf32> -> tensor<32x115x115x16xf16>
  %1 = op.conv2d %0, %w bias %b {epilogue = #op.epilogue<bias, relu>} : (tensor<32x115x115x16xf16>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<32x112x112x64xf16>
  func.return %1 : tensor<32x112x112x64xf16>
}

// A blocked tensor that something else reads too stays.
// CHECK-LABEL: func.func @blocked_twice
// CHECK:       op.space_to_depth
// CHECK:       op.conv2d
func.func @blocked_twice(%image: tensor<32x3x224x224xf32>, %w: tensor<64x4x4x16xf16>, %b: tensor<64xf16>) -> (tensor<32x112x112x64xf16>, tensor<32x115x115x16xf16>) {
  %0 = op.space_to_depth %image {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<32x3x224x224xf32> -> tensor<32x115x115x16xf16>
  %1 = op.conv2d %0, %w bias %b {epilogue = #op.epilogue<bias, relu>} : (tensor<32x115x115x16xf16>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<32x112x112x64xf16>
  func.return %1, %0 : tensor<32x112x112x64xf16>, tensor<32x115x115x16xf16>
}

// At batch 1 the conv has 56 tiles for 264 CTAs: no CTA walks a second tile under which to
// block the next patch, so the space-to-depth kernel stays.
// CHECK-LABEL: func.func @resnet_stem_b1
// CHECK:       op.space_to_depth
// CHECK:       op.conv2d
func.func @resnet_stem_b1(%image: tensor<1x3x224x224xf32>, %w: tensor<64x4x4x16xf16>, %b: tensor<64xf16>) -> tensor<1x112x112x64xf16> {
  %0 = op.space_to_depth %image {blocksize = 2 : i64, layout = "NCHW", pads = array<i64: 3, 3, 3, 3>} : tensor<1x3x224x224xf32> -> tensor<1x115x115x16xf16>
  %1 = op.conv2d %0, %w bias %b {epilogue = #op.epilogue<bias, relu>} : (tensor<1x115x115x16xf16>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<1x112x112x64xf16>
  func.return %1 : tensor<1x112x112x64xf16>
}

// STATS:      fuse-conv-space-to-depth
// STATS-NEXT: 1 space-to-depth blockings fused into the halo conv
// STATS:      lower-op-to-cutlass
// STATS-DAG:  1 halo_conv kernels (op.space_to_depth_conv2d kept)
// STATS-DAG:  2 halo_conv kernels (op.conv2d kept)
