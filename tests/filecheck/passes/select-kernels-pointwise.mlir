// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_pointwise=cutlass}' | filecheck %s
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_pointwise=cutlass},lower-op-to-cutlass' | filecheck %s --check-prefix=LOWERED
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 narrow_pointwise=cutlass},lower-op-to-cutlass' -t cuda | filecheck %s --check-prefix=CUDA
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90},lower-op-to-cutlass' | filecheck %s --check-prefix=STREAM
// RUN: not bolt-opt %s -p 'select-kernels{narrow_pointwise=wide}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: bolt-opt %s -p 'select-kernels{selector=heuristic arch=sm90 cutlass=2}' | filecheck %s --check-prefix=LEGACY

// A memory-bound 1x1 conv (stride 1, no padding, few channels, megabytes moved) on sm90
// runs as a persistent CUTLASS 3.x GEMM on its own buffers: the conv family with a GEMM
// schedule, the N tile covering K, the K tile covering C up to 32. It stays one
// cutlass.conv2d_fprop (the conv's operands and launcher), whose unit is the GEMM instance.

// CHECK-LABEL: func.func @expand
// CHECK:       op.conv2d
// CHECK-SAME:  kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 128, 96, 32>
// CHECK-SAME:  kernel_schedule = "pingpong"}
// LOWERED-LABEL: func.func @expand
// LOWERED:       cutlass.conv2d_fprop %x, %w bias %b
// LOWERED-SAME:  kernel_schedule = "pingpong"
// LOWERED-SAME:  epilogue = #op.epilogue<bias, clip(0.0, 6.0)>
// CUDA:          1x1 conv2d fprop (stride 1, no padding) as a CUTLASS 3.x persistent GEMM
// CUDA:          using LayoutB = cutlass::layout::ColumnMajor;
// CUDA:          using TileShape = Shape<_128, _96, _32>;
// CUDA:          cutlass::gemm::KernelTmaWarpSpecializedPingpong
// By default (narrow_pointwise=stream) a 1x1 conv with under 64 channels on one side runs
// on our streaming kernel instead: it stays an op.conv2d with its choice and whole
// epilogue, computed by codegen/stream_conv_kernels.py's unit; 64 -> 256 keeps the GEMM.
// STREAM-LABEL: func.func @expand
// STREAM:       op.conv2d %x, %w bias %b
// STREAM-SAME:  epilogue = #op.epilogue<bias, clip(0.0, 6.0)>
// STREAM-SAME:  kernel = {family = "stream_conv", arch = "sm80", threadblock = array<i64: 1, 1, 4>
// STREAM-LABEL: func.func @bottleneck
// STREAM:       cutlass.conv2d_fprop %x, %w bias %b residual %r
// OPTION:       {{^}}error: narrow_pointwise must be one of stream, cutlass; got 'wide'{{$}}
// LEGACY-LABEL: func.func @expand
// LEGACY:       kernel = {family = "conv2d_fprop", arch = "sm80"
func.func @expand(%x: tensor<32x112x112x16xf16>, %w: tensor<96x1x1x16xf16>, %b: tensor<96xf16>) -> tensor<32x112x112x96xf16> {
  %0 = op.conv2d %x, %w bias %b {epilogue = #op.epilogue<bias, clip(0.0, 6.0)>} : (tensor<32x112x112x16xf16>, tensor<96x1x1x16xf16>, tensor<96xf16>) -> tensor<32x112x112x96xf16>
  func.return %0 : tensor<32x112x112x96xf16>
}

// ResNet-50's bottleneck 1x1 64 -> 256 with the shortcut: the whole epilogue stays in the
// kernel; a 256-wide tile takes two consumer warpgroups (cooperative).
// CHECK-LABEL: func.func @bottleneck
// CHECK:       kernel = {family = "conv2d_fprop", arch = "sm90", threadblock = array<i64: 128, 256, 64>
// CHECK-SAME:  kernel_schedule = "cooperative"}
// LOWERED-LABEL: func.func @bottleneck
// LOWERED:       cutlass.conv2d_fprop %x, %w bias %b residual %r
// LOWERED-SAME:  kernel_schedule = "cooperative"
// LOWERED-NOT:   op.elementwise
func.func @bottleneck(%x: tensor<32x56x56x64xf16>, %w: tensor<256x1x1x64xf16>, %b: tensor<256xf16>, %r: tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16> {
  %0 = op.conv2d %x, %w bias %b residual %r {epilogue = #op.epilogue<bias, residual = add, then relu>} : (tensor<32x56x56x64xf16>, tensor<256x1x1x64xf16>, tensor<256xf16>, tensor<32x56x56x256xf16>) -> tensor<32x56x56x256xf16>
  func.return %0 : tensor<32x56x56x256xf16>
}

// A small one (a few hundred kilobytes) and a strided one keep the conv kernels.
// CHECK-LABEL: func.func @small
// CHECK-NOT:   kernel_schedule = "pingpong"
// CHECK-NOT:   kernel_schedule = "cooperative"
// CHECK-LABEL: func.func @strided
// CHECK-NOT:   kernel_schedule = "pingpong"
// CHECK-NOT:   kernel_schedule = "cooperative"
// CHECK:       func.return
func.func @small(%x: tensor<2x14x14x64xf16>, %w: tensor<96x1x1x64xf16>) -> tensor<2x14x14x96xf16> {
  %0 = op.conv2d %x, %w : (tensor<2x14x14x64xf16>, tensor<96x1x1x64xf16>) -> tensor<2x14x14x96xf16>
  func.return %0 : tensor<2x14x14x96xf16>
}
func.func @strided(%x: tensor<32x112x112x64xf16>, %w: tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16> {
  %0 = op.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<32x112x112x64xf16>, tensor<256x1x1x64xf16>) -> tensor<32x56x56x256xf16>
  func.return %0 : tensor<32x56x56x256xf16>
}
