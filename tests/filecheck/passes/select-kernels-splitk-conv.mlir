// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 few_pixels=cutlass}' | filecheck %s --check-prefix=CUTLASS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' | filecheck %s --check-prefix=LOWERED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 conv_ctas=2}' | filecheck %s --check-prefix=TWO
// RUN: not bolt-opt %s -p 'select-kernels{few_pixels=splitq}' 2>&1 | filecheck %s --check-prefix=OPTION

// A batch-1 conv with few output pixels and a long reduction (ResNet-50's 3x3 512 -> 512
// at 7²) runs on our split-reduction conv (an "sm90" choice: clusters), its tile output
// pixels x output channels x the cluster's CTAs; few_pixels=cutlass keeps CUTLASS's 3.x
// conv (8 CTAs). lower-op-to-cutlass leaves it an op.conv2d with its
// whole epilogue. The same conv at batch 32 stays CUTLASS's. conv_ctas=2 gives the 3.x
// conv's 64 x 128 tile 4 stages (two CTAs per multiprocessor) instead of as many as fit (0).

// OPTION:     {{^}}error: few_pixels must be one of splitk, cutlass; got 'splitq'{{$}}
// OPTION-NOT: Traceback

// CHECK-LABEL: func.func @layer4
// CHECK:       op.conv2d %x, %w bias %b
// CHECK-SAME:  kernel = {family = "splitk_conv", arch = "sm90", threadblock = array<i64: 32, 64, 8>
// CUTLASS-LABEL: func.func @layer4
// CUTLASS:       kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 64, 64, 64>
// LOWERED-LABEL: func.func @layer4
// LOWERED-NOT:   cutlass.
// LOWERED:       op.conv2d %x, %w bias %b
// LOWERED-SAME:  epilogue = #op.epilogue<bias, relu>
// LOWERED-SAME:  family = "splitk_conv"
// LOWERED-NOT:   op.elementwise
func.func @layer4(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<1x7x7x512xf16>
  func.return %0 : tensor<1x7x7x512xf16>
}

// CHECK-LABEL: func.func @batch32
// CHECK:       kernel = {family = "conv2d_fprop"
// LOWERED-LABEL: func.func @batch32
// LOWERED:       cutlass.conv2d_fprop
// TWO-LABEL:   func.func @batch32
// TWO:         kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 64, 128, 64>
// TWO-SAME:    stages = 4
func.func @batch32(%x: tensor<32x7x7x512xf16>, %w: tensor<512x3x3x512xf16>, %b: tensor<512xf16>) -> tensor<32x7x7x512xf16> {
  %0 = op.conv2d %x, %w bias %b {layout = "NHWC", filter_layout = "OHWI", strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu>} : (tensor<32x7x7x512xf16>, tensor<512x3x3x512xf16>, tensor<512xf16>) -> tensor<32x7x7x512xf16>
  func.return %0 : tensor<32x7x7x512xf16>
}

// STATS: lower-op-to-cutlass
// STATS: 1 splitk_conv kernels (op.conv2d kept)
