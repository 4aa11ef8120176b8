// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-conv-pool' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},fuse-conv-pool,lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=cutlass},fuse-conv-pool' | filecheck %s --check-prefix=CUTLASS

// VGG-16's first stage: the 3x3 64 -> 64 conv at 224² runs on our halo conv (two-row
// tiles), and the 2x2 max pool after it moves into the kernel's epilogue: one
// op.conv2d_max_pool writes the pooled 112² output. On CUTLASS's conv the pool stays.

// CHECK-LABEL: func.func @vgg_stage1
// CHECK-NEXT:  %0 = op.conv2d_max_pool %x, %w bias %b
// CHECK-SAME:  pool = 2 : i64
// CHECK-SAME:  family = "halo_conv"
// CHECK-SAME:  -> tensor<1x112x112x64xf16>
// CHECK-NEXT:  func.return %0
// CUTLASS-LABEL: func.func @vgg_stage1
// CUTLASS:       op.conv2d
// CUTLASS-SAME:  family = "conv2d_fprop"
// CUTLASS:       op.pool2d
func.func @vgg_stage1(%x: tensor<1x224x224x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<1x112x112x64xf16> {
  %0 = op.conv2d %x, %w bias %b {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x224x224x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<1x224x224x64xf16>
  %1 = op.pool2d %0 {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x224x224x64xf16> -> tensor<1x112x112x64xf16>
  func.return %1 : tensor<1x112x112x64xf16>
}

// ResNet-50's 3x3 stride-2 pool (padded, overlapping windows) is not the kernel's.
// CHECK-LABEL: func.func @overlapping_pool
// CHECK:       op.conv2d %x
// CHECK:       op.pool2d
func.func @overlapping_pool(%x: tensor<1x224x224x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<1x112x112x64xf16> {
  %0 = op.conv2d %x, %w bias %b {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x224x224x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<1x224x224x64xf16>
  %1 = op.pool2d %0 {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x224x224x64xf16> -> tensor<1x112x112x64xf16>
  func.return %1 : tensor<1x112x112x64xf16>
}

// STATS:      fuse-conv-pool
// STATS-NEXT: 1 max pools fused into the halo conv
// STATS:      lower-op-to-cutlass
// STATS:      1 halo_conv kernels (op.conv2d_max_pool kept)
