// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=halo}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=cutlass}' | filecheck %s --check-prefix=CUTLASS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=halo},lower-op-to-cutlass' | filecheck %s --check-prefix=LOWERED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=halo},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'select-kernels{narrow_convs=wgmma}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 halo_mode=2}' | filecheck %s --check-prefix=MODE
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_convs=halo-aligned}' | filecheck %s --check-prefix=ALIGNED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 halo_loads=tma}' | filecheck %s --check-prefix=TMA
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 halo_loads=cp_async}' | filecheck %s --check-prefix=CPASYNC
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 halo_loads=tma halo_mode=5}' | filecheck %s --check-prefix=TMA5
// RUN: not bolt-opt %s -p 'select-kernels{halo_loads=bulk}' 2>&1 | filecheck %s --check-prefix=LOADS

// By default (narrow_convs=halo) a stride-1 3x3 conv on 64 channels with many output
// pixels (VGG-16's 64 -> 64 at 224², batch 32) runs on our wgmma conv with its halo in
// shared memory (an "sm90" choice), its tile output columns x rows x mode (4 by default:
// stmatrix stores; halo_mode=2: the filter in registers); with narrow_convs=cutlass CUTLASS's 3.x conv keeps it. lower-op-to-cutlass
// leaves it an op.conv2d with its whole epilogue. A 1x1 conv on 64 channels stays with the
// pointwise rules' persistent GEMM. RepVGG-A0's 3x3/2 on 48 channels takes the halo conv's
// general form (stride 2, channels padded to 64): one row of 56 columns in mode 4 with a ring
// of three patches that arrive by TMA (halo_loads=auto: TMA on padded channels; 114 = mode 4
// + 10 for the third patch + 100 for TMA); halo_loads=cp_async gives it two rows with the
// filter in registers (mode 2), as two rows of a stride-2 patch do not fit beside the filter
// in shared memory; narrow_convs=halo-aligned leaves it to CUTLASS and keeps the VGG conv.

// OPTION:     {{^}}error: narrow_convs must be one of cutlass, halo, halo-aligned; got 'wgmma'{{$}}
// OPTION-NOT: Traceback

// halo_loads=tma: the patches arrive by TMA wherever the tile takes it, which the tile's third
// integer carries (+100); with halo_mode=5 (the filter in registers, stmatrix stores) the
// stride-2 conv fits two rows, and no third patch beside them.
// LOADS:      {{^}}error: halo_loads must be one of auto, cp_async, tma; got 'bulk'{{$}}
// LOADS-NOT:  Traceback
// TMA-LABEL:  func.func @vgg
// TMA:        kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 104>
// TMA-LABEL:  func.func @repvgg_stride2
// TMA:        kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 56, 1, 114>
// TMA5-LABEL: func.func @vgg
// TMA5:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 105>
// TMA5-LABEL: func.func @repvgg_stride2
// TMA5:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 56, 2, 105>

// MODE-LABEL: func.func @vgg
// MODE:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 2>

// CHECK-LABEL: func.func @vgg
// CHECK:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 4>
// CUTLASS-LABEL: func.func @vgg
// CUTLASS:       kernel = {family = "conv2d_fprop", arch = "sm90"
// LOWERED-LABEL: func.func @vgg
// LOWERED-NOT:   cutlass.
// LOWERED:       op.conv2d %x, %w bias %b
// LOWERED-SAME:  epilogue = #op.epilogue<bias, relu>
// LOWERED-SAME:  family = "halo_conv"
func.func @vgg(%x: tensor<32x224x224x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<32x224x224x64xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x224x224x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<32x224x224x64xf16>
  func.return %0 : tensor<32x224x224x64xf16>
}

// CHECK-LABEL: func.func @pointwise
// CHECK:       kernel = {family = "conv2d_fprop", arch = "sm90"
// CHECK-SAME:  kernel_schedule = "cooperative"
func.func @pointwise(%x: tensor<32x56x56x64xf16>, %w: tensor<256x1x1x64xf16>, %b: tensor<256xf16>) -> tensor<32x56x56x256xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<256xf16>) -> tensor<32x56x56x256xf16>
  func.return %0 : tensor<32x56x56x256xf16>
}

// STATS: lower-op-to-cutlass
// STATS: 2 halo_conv kernels (op.conv2d kept)

// CHECK-LABEL: func.func @repvgg_stride2
// CHECK:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 56, 1, 114>
// CPASYNC-LABEL: func.func @vgg
// CPASYNC:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 4>
// CPASYNC-LABEL: func.func @repvgg_stride2
// CPASYNC:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 56, 2, 2>
// ALIGNED-LABEL: func.func @vgg
// ALIGNED:       kernel = {family = "halo_conv", arch = "sm90", threadblock = array<i64: 112, 2, 4>
// ALIGNED-LABEL: func.func @repvgg_stride2
// ALIGNED:       kernel = {family = "conv2d_fprop"
func.func @repvgg_stride2(%x: tensor<32x112x112x48xf16>, %w: tensor<48x3x3x48xf16>, %b: tensor<48xf16>) -> tensor<32x56x56x48xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x112x112x48xf16>, tensor<48x3x3x48xf16>, tensor<48xf16>) -> tensor<32x56x56x48xf16>
  func.return %0 : tensor<32x56x56x48xf16>
}
