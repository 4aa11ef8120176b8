// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80 depthwise=cutlass few_channels=cutlass},lower-op-to-cutlass' --elide-weights | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm80 depthwise=cutlass few_channels=cutlass},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 depthwise=cutlass few_channels=cutlass},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=SM90
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' --elide-weights | filecheck %s --check-prefix=DIRECT
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=DIRECT-STATS
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' --elide-weights | filecheck %s --check-prefix=HOPPER

// lower-op-to-cutlass turns each op select-kernels chose a kernel for into that template
// instance; what the template cannot fuse follows it as elementwise ops (counted), and ops
// no template computes stay as they are (counted, with the reason).

// STATS:      lower-op-to-cutlass
// STATS-DAG:  {{^ +}}2 cutlass.gemm instances
// STATS-DAG:  {{^ +}}2 cutlass.conv2d_fprop instances
// STATS-DAG:  {{^ +}}2 cutlass.depthwise_conv2d_fprop instances
// STATS-DAG:  {{^ +}}1 cutlass.b2b_gemm instances
// STATS-DAG:  {{^ +}}1 cutlass.b2b_conv2d instances
// STATS-DAG:  {{^ +}}2 fusions kept as separate ops
// STATS-DAG:  {{^ +}}2 ops without a template

// On sm90 the GEMMs and the ResNet-style conv are CUTLASS 3.x instances, which take any
// epilogue whole; the depthwise convs stay 2.x, whose residual is peeled off as on sm80,
// and so is the stem (C = 4 is not a 16-byte row for TMA).
// SM90:      lower-op-to-cutlass
// SM90-DAG:  {{^ +}}2 cutlass.gemm instances
// SM90-DAG:  {{^ +}}2 CUTLASS 3.x gemm instances
// SM90-DAG:  {{^ +}}2 cutlass.conv2d_fprop instances
// SM90-DAG:  {{^ +}}1 CUTLASS 3.x conv2d_fprop instances
// SM90-DAG:  {{^ +}}1 CUTLASS 2.x conv2d_fprop instances
// SM90-DAG:  {{^ +}}2 CUTLASS 2.x depthwise_conv2d_fprop instances
// SM90-DAG:  {{^ +}}2 fusions kept as separate ops
// SM90-DAG:  {{^ +}}1 CUTLASS 2.x b2b_gemm instances
// SM90-DAG:  {{^ +}}1 CUTLASS 2.x b2b_conv2d instances
// SM90-DAG:  {{^ +}}2 ops without a template

// HOPPER-LABEL: func.func @gemm
// HOPPER:       cutlass.gemm %x, %w bias %b {arch = "sm90"
// HOPPER-SAME:  cluster = array<i64: 1, 1, 1>, kernel_schedule = "cooperative"
// HOPPER-SAME:  split_k = {{[2-8]}} : i64, epilogue = #op.epilogue<bias, gelu>}
// HOPPER:       cutlass.gemm %x, %w bias %b residual %r {arch = "sm90"
// HOPPER-SAME:  epilogue = #op.epilogue<bias, relu, residual = add, then relu>}

// GEMMs keep their whole epilogue, residual included; a split-k choice becomes the
// instance's split_k. The residual block runs in one slice (no split_k printed: 1).
// CHECK-LABEL: func.func @gemm
// CHECK:       %[[A:.*]] = cutlass.gemm %x, %w bias %b {arch = "sm80", accumulator = f32,
// CHECK-SAME:  tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 5>,
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>, layout_b = "col", split_k = 4 : i64, epilogue = #op.epilogue<bias, gelu>}
// CHECK-NEXT:  %[[B:.*]] = cutlass.gemm %x, %w bias %b residual %r {arch = "sm80"
// CHECK-NOT:   split_k
// CHECK-SAME:  epilogue = #op.epilogue<bias, relu, residual = add, then relu>}
// CHECK-NEXT:  func.return %[[A]], %[[B]]
func.func @gemm(%x: tensor<384x4096xf16>, %r: tensor<384x256xf16>) -> (tensor<384x256xf16>, tensor<384x256xf16>) {
  %w = op.constant dense<0.5> : tensor<256x4096xf16>
  %b = op.constant dense<0.25> : tensor<256xf16>
  %0 = op.gemm %x, %w bias %b {layout_b = "col", epilogue = #op.epilogue<bias, gelu>} : (tensor<384x4096xf16>, tensor<256x4096xf16>, tensor<256xf16>) -> tensor<384x256xf16>
  %1 = op.gemm %x, %w bias %b residual %r {layout_b = "col", epilogue = #op.epilogue<bias, relu, residual = add, then relu>} : (tensor<384x4096xf16>, tensor<256x4096xf16>, tensor<256xf16>, tensor<384x256xf16>) -> tensor<384x256xf16>
  func.return %0, %1 : tensor<384x256xf16>, tensor<384x256xf16>
}

// Implicit-GEMM convs: a ResNet block's conv with its residual, and the padded (C = 4)
// stem on the fixed-channels iterator.
// CHECK-LABEL: func.func @convs
// CHECK:       %[[A:.*]] = cutlass.conv2d_fprop %x, %w bias %b residual %r {arch = "sm80", accumulator = f32
// CHECK-SAME:  alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu, residual = add, then relu>}
// CHECK:       %[[B:.*]] = cutlass.conv2d_fprop %image, %stem bias %b
// CHECK-SAME:  alignment = array<i64: 4, 4, 8>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<bias, relu>, iterator_algorithm = "fixed_channels"}
// CHECK-NEXT:  func.return %[[A]], %[[B]]
// By default the stem stays op.conv2d for our few-channels kernel, its epilogue whole.
// DIRECT-LABEL: func.func @convs
// DIRECT:       cutlass.conv2d_fprop %x, %w bias %b residual %r {arch = "sm90"
// DIRECT:       op.conv2d %image, %stem bias %b {
// DIRECT-SAME:  epilogue = #op.epilogue<bias, relu>, kernel = {family = "stem_conv", arch = "sm80"
func.func @convs(%x: tensor<2x14x14x64xf16>, %image: tensor<1x32x32x4xf16>, %r: tensor<2x14x14x64xf16>) -> (tensor<2x14x14x64xf16>, tensor<1x16x16x64xf16>) {
  %w = op.constant dense<0.5> : tensor<64x3x3x64xf16>
  %b = op.constant dense<0.25> : tensor<64xf16>
  %0 = op.conv2d %x, %w bias %b residual %r {pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu, residual = add, then relu>} : (tensor<2x14x14x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>, tensor<2x14x14x64xf16>) -> tensor<2x14x14x64xf16>
  %stem = op.constant dense<0.5> : tensor<64x7x7x4xf16>
  %1 = op.conv2d %image, %stem bias %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, epilogue = #op.epilogue<bias, relu>} : (tensor<1x32x32x4xf16>, tensor<64x7x7x4xf16>, tensor<64xf16>) -> tensor<1x16x16x64xf16>
  func.return %0, %1 : tensor<2x14x14x64xf16>, tensor<1x16x16x64xf16>
}

// With depthwise=cutlass, depthwise convs become CUTLASS's direct SIMT conv. Its epilogue
// reads one source tensor: a bias and a residual do not both fit, so the residual add
// and the activation after it are peeled off into elementwise ops after the kernel,
// innermost first.
// CHECK-LABEL: func.func @depthwise
// CHECK:       %[[A:.*]] = cutlass.depthwise_conv2d_fprop %x, %w bias %b
// CHECK-SAME:  op_class = "simt"
// CHECK-SAME:  epilogue = #op.epilogue<bias, clip(0.0, 6.0)>}
// CHECK-NEXT:  %[[K:.*]] = cutlass.depthwise_conv2d_fprop %x, %w bias %b {
// CHECK-NOT:   residual
// CHECK-SAME:  op_class = "simt"
// CHECK-SAME:  epilogue = #op.epilogue<bias, relu>}
// CHECK-NEXT:  %[[ADD:.*]] = op.elementwise (%[[K]], %r) {
// CHECK:       arith.addf
// CHECK:       %[[RELU:.*]] = op.elementwise (%[[ADD]]) {
// CHECK:       arith.maximumf
// CHECK:       func.return %[[A]], %[[RELU]]
// By default they run on our own kernel (depthwise_direct): each stays an op.conv2d with
// its choice, the whole epilogue (bias, activation, residual, second activation) fused.
// DIRECT-LABEL: func.func @depthwise
// DIRECT:       %[[A:.*]] = op.conv2d %x, %w bias %b {
// DIRECT-SAME:  epilogue = #op.epilogue<bias, clip(0.0, 6.0)>, kernel = {family = "depthwise_direct", arch = "sm80"
// DIRECT-NEXT:  %[[B:.*]] = op.conv2d %x, %w bias %b residual %r {
// DIRECT-SAME:  epilogue = #op.epilogue<bias, relu, residual = add, then relu>, kernel = {family = "depthwise_direct"
// DIRECT-NEXT:  func.return %[[A]], %[[B]]
// DIRECT-STATS:      lower-op-to-cutlass
// DIRECT-STATS-DAG:  {{^ +}}2 depthwise_direct kernels (op.conv2d kept)
// DIRECT-STATS-DAG:  {{^ +}}1 stem_conv kernels (op.conv2d kept)
// DIRECT-STATS-NOT:  depthwise_conv2d_fprop
func.func @depthwise(%x: tensor<1x16x16x32xf16>, %r: tensor<1x16x16x32xf16>) -> (tensor<1x16x16x32xf16>, tensor<1x16x16x32xf16>) {
  %w = op.constant dense<0.5> : tensor<32x3x3x1xf16>
  %b = op.constant dense<0.25> : tensor<32xf16>
  %0 = op.conv2d %x, %w bias %b {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<1x16x16x32xf16>
  %1 = op.conv2d %x, %w bias %b residual %r {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias, relu, residual = add, then relu>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>, tensor<1x16x16x32xf16>) -> tensor<1x16x16x32xf16>
  func.return %0, %1 : tensor<1x16x16x32xf16>, tensor<1x16x16x32xf16>
}

// Back-to-back ops become example 13's kernels with both tiles and the residency. The
// B2bGemm reads column-major weights: row-major constants are transposed at compile time.
// CHECK-LABEL: func.func @b2b
// CHECK:       %[[B0:.*]] = op.constant dense_resource<w0.col> : tensor<64x64xf16>
// CHECK-NEXT:  %[[B1:.*]] = op.constant dense_resource<w1.col> : tensor<128x64xf16>
// CHECK-NEXT:  %[[G:.*]] = cutlass.b2b_gemm %x, %[[B0]], %[[B1]] bias0 %b0 {arch = "sm80"
// CHECK-SAME:  tile = #cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>
// CHECK-SAME:  tile1 = #cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>, residency = "register"
// CHECK-SAME:  epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<gelu>}
// CHECK:       %[[C:.*]] = cutlass.b2b_conv2d %y, %c0, %c1 {arch = "sm80"
// CHECK-SAME:  residency = "register", epilogue0 = #op.epilogue<relu>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:  func.return %[[G]], %[[C]]
func.func @b2b(%x: tensor<256x64xf16>, %y: tensor<2x8x8x16xf16>) -> (tensor<256x128xf16>, tensor<2x4x4x64xf16>) {
  %w0 = op.constant dense<0.5> : tensor<64x64xf16>
  %b0 = op.constant dense<0.25> : tensor<64xf16>
  %w1 = op.constant dense<0.5> : tensor<64x128xf16>
  %0 = op.b2b_gemm %x, %w0, %w1 bias0 %b0 {epilogue0 = #op.epilogue<bias, relu>, epilogue1 = #op.epilogue<gelu>} : (tensor<256x64xf16>, tensor<64x64xf16>, tensor<64x128xf16>, tensor<64xf16>) -> tensor<256x128xf16>
  %c0 = op.constant dense<0.5> : tensor<32x3x3x16xf16>
  %c1 = op.constant dense<0.5> : tensor<64x1x1x32xf16>
  %1 = op.b2b_conv2d %y, %c0, %c1 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<relu>} : (tensor<2x8x8x16xf16>, tensor<32x3x3x16xf16>, tensor<64x1x1x32xf16>) -> tensor<2x4x4x64xf16>
  func.return %0, %1 : tensor<256x128xf16>, tensor<2x4x4x64xf16>
}

// No 2.x template computes an NCHW conv or a grouped conv that is not depthwise: both
// stay op-level (with their kernel choice), each noted with its location and reason.
// CHECK-LABEL: func.func @left
// CHECK:       %[[A:.*]] = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW"
// CHECK-SAME:  kernel = {family = "conv2d_fprop"
// CHECK:       %[[B:.*]] = op.conv2d %y, %g {groups = 2 : i64
// CHECK-SAME:  kernel = {family = "conv2d_fprop"
// CHECK-NEXT:  func.return %[[A]], %[[B]]
func.func @left(%x: tensor<1x32x16x16xf16>, %y: tensor<1x16x16x32xf16>) -> (tensor<1x32x16x16xf16>, tensor<1x16x16x32xf16>) {
  %w = op.constant dense<0.5> : tensor<32x32x3x3xf16>
  // STATS: left op.conv2d at {{.*}}lower-op-to-cutlass.mlir:[[# @LINE + 1]]:3: not NHWC/OHWI
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf16>, tensor<32x32x3x3xf16>) -> tensor<1x32x16x16xf16>
  %g = op.constant dense<0.5> : tensor<32x3x3x16xf16>
  // STATS: left op.conv2d at {{.*}}lower-op-to-cutlass.mlir:[[# @LINE + 1]]:3: grouped conv
  %1 = op.conv2d %y, %g {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x16x32xf16>, tensor<32x3x3x16xf16>) -> tensor<1x16x16x32xf16>
  func.return %0, %1 : tensor<1x32x16x16xf16>, tensor<1x16x16x32xf16>
}
