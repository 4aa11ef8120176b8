// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_windows=stem narrow_convs=halo-aligned}' | filecheck %s --check-prefix=STEM
// RUN: not bolt-opt %s -p 'select-kernels{narrow_windows=wide}' 2>&1 | filecheck %s --check-prefix=OPTION

// MobileNetV2's stem after space-to-depth-stem: a 2x2 conv of stride 1 on the 16 channels
// that the space_to_depth kernel writes, already padded. At batch 32 it moves 39 MB for 1.6
// GFLOP, so on sm90 it runs on our streaming conv, its whole epilogue in the kernel; the
// conv stays an op.conv2d with its choice: two fragments a unit, as for every window.
// CHECK-LABEL: func.func @mobilenet_stem
// CHECK:       op.conv2d %x, %w bias %b
// CHECK-SAME:  epilogue = #op.epilogue<bias, clip(0.0, 6.0)>
// CHECK-SAME:  kernel = {family = "stream_conv", arch = "sm80", threadblock = array<i64: 2, 1, 4>
// STEM-LABEL:  func.func @mobilenet_stem
// STEM:        kernel = {family = "stem_conv"
// OPTION:      {{^}}error: narrow_windows must be one of stream, stem; got 'wide'{{$}}
func.func @mobilenet_stem(%x: tensor<32x113x113x16xf16>, %w: tensor<32x2x2x16xf16>, %b: tensor<32xf16>) -> tensor<32x112x112x32xf16> {
  %0 = op.conv2d %x, %w bias %b {epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<32x113x113x16xf16>, tensor<32x2x2x16xf16>, tensor<32xf16>) -> tensor<32x112x112x32xf16>
  func.return %0 : tensor<32x112x112x32xf16>
}

// ResNet-50's blocked stem (4x4 on 16 channels to 64) does 13 GFLOP for 65 MB: the tensor
// cores bound it, and the halo conv keeps it.
// CHECK-LABEL: func.func @resnet_stem
// CHECK:       kernel = {family = "halo_conv"
func.func @resnet_stem(%x: tensor<32x115x115x16xf16>, %w: tensor<64x4x4x16xf16>, %b: tensor<64xf16>) -> tensor<32x112x112x64xf16> {
  %0 = op.conv2d %x, %w bias %b {epilogue = #op.epilogue<bias, relu>} : (tensor<32x115x115x16xf16>, tensor<64x4x4x16xf16>, tensor<64xf16>) -> tensor<32x112x112x64xf16>
  func.return %0 : tensor<32x112x112x64xf16>
}

// At batch 1 (1.2 MB) the launch outweighs the streaming: the halo conv's general form
// takes it (its 32 output channels end inside a block; 1% faster than our stem conv in
// turns on MobileNetV2 b1), or with narrow_convs=halo-aligned, our stem conv.
// CHECK-LABEL: func.func @small
// CHECK:       kernel = {family = "halo_conv"
// STEM-LABEL:  func.func @small
// STEM:        kernel = {family = "stem_conv"
func.func @small(%x: tensor<1x113x113x16xf16>, %w: tensor<32x2x2x16xf16>, %b: tensor<32xf16>) -> tensor<1x112x112x32xf16> {
  %0 = op.conv2d %x, %w bias %b {epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x113x113x16xf16>, tensor<32x2x2x16xf16>, tensor<32xf16>) -> tensor<1x112x112x32xf16>
  func.return %0 : tensor<1x112x112x32xf16>
}
