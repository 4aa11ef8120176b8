// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Elementwise unary ops (the type in is the type out) and cast.

// CHECK-LABEL: func.func @relu
func.func @relu(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // CHECK: %{{.*}} = graph.relu %{{.*}} : tensor<1x3x4x4xf32>
  %0 = graph.relu %x : tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// Relu also takes integers.
// CHECK-LABEL: func.func @relu_int
func.func @relu_int(%x: tensor<8xi32>) -> tensor<8xi32> {
  // CHECK: %{{.*}} = graph.relu %{{.*}} : tensor<8xi32>
  %0 = graph.relu %x : tensor<8xi32>
  func.return %0 : tensor<8xi32>
}

// The default alpha (0.01) is elided, another one is printed.
// CHECK-LABEL: func.func @leaky_relu
func.func @leaky_relu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %{{.*}} = graph.leaky_relu %{{.*}} : tensor<2x8xf32>
  // CHECK-NEXT: %{{.*}} = graph.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f32} : tensor<2x8xf32>
  %0 = graph.leaky_relu %x {alpha = 0.01 : f32} : tensor<2x8xf32>
  %1 = graph.leaky_relu %x {alpha = 0.2 : f32} : tensor<2x8xf32>
  func.return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @gelu
func.func @gelu(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  // CHECK: %{{.*}} = graph.gelu %{{.*}} : tensor<2x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.gelu %{{.*}} : tensor<2x16xf32>
  // CHECK-NEXT: %{{.*}} = graph.gelu %{{.*}} {approximate = "tanh"} : tensor<2x16xf32>
  %0 = graph.gelu %x : tensor<2x16xf32>
  %1 = graph.gelu %x {approximate = "none"} : tensor<2x16xf32>
  %2 = graph.gelu %x {approximate = "tanh"} : tensor<2x16xf32>
  func.return %0, %1, %2 : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// CHECK-LABEL: func.func @sigmoid
func.func @sigmoid(%x: tensor<4x4xf16>) -> tensor<4x4xf16> {
  // CHECK: %{{.*}} = graph.sigmoid %{{.*}} : tensor<4x4xf16>
  %0 = graph.sigmoid %x : tensor<4x4xf16>
  func.return %0 : tensor<4x4xf16>
}

// CHECK-LABEL: func.func @tanh
func.func @tanh(%x: tensor<4xf64>) -> tensor<4xf64> {
  // CHECK: %{{.*}} = graph.tanh %{{.*}} : tensor<4xf64>
  %0 = graph.tanh %x : tensor<4xf64>
  func.return %0 : tensor<4xf64>
}

// CHECK-LABEL: func.func @silu
func.func @silu(%x: tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32> {
  // CHECK: %{{.*}} = graph.silu %{{.*}} : tensor<1x8x2x2xf32>
  %0 = graph.silu %x : tensor<1x8x2x2xf32>
  func.return %0 : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @hardswish
func.func @hardswish(%x: tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32> {
  // CHECK: %{{.*}} = graph.hardswish %{{.*}} : tensor<1x8x2x2xf32>
  %0 = graph.hardswish %x : tensor<1x8x2x2xf32>
  func.return %0 : tensor<1x8x2x2xf32>
}

// Defaults alpha = 0.2, beta = 0.5 are elided; other values are printed.
// CHECK-LABEL: func.func @hardsigmoid
func.func @hardsigmoid(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  // CHECK: %{{.*}} = graph.hardsigmoid %{{.*}} : tensor<6xf32>
  // CHECK-NEXT: %{{.*}} = graph.hardsigmoid %{{.*}} {alpha = 0.166666672 : f32} : tensor<6xf32>
  // CHECK-NEXT: %{{.*}} = graph.hardsigmoid %{{.*}} {alpha = 2.500000e-01 : f32, beta = 1.000000e+00 : f32} : tensor<6xf32>
  %0 = graph.hardsigmoid %x {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<6xf32>
  %1 = graph.hardsigmoid %x {alpha = 0.16666667 : f32} : tensor<6xf32>
  %2 = graph.hardsigmoid %x {alpha = 0.25 : f32, beta = 1.0 : f32} : tensor<6xf32>
  func.return %0, %1, %2 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// Clip: no bound, only min, only max, both (ReLU6); also on integers.
// CHECK-LABEL: func.func @clip
func.func @clip(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  // CHECK: %{{.*}} = graph.clip %{{.*}} : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.clip %{{.*}} {min = 0.000000e+00 : f64} : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.clip %{{.*}} {max = 6.000000e+00 : f64} : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.clip %{{.*}} {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.clip %{{.*}} {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : tensor<4xi32>
  %0 = graph.clip %x : tensor<4xf32>
  %1 = graph.clip %x {min = 0.0 : f64} : tensor<4xf32>
  %2 = graph.clip %x {max = 6.0 : f64} : tensor<4xf32>
  %3 = graph.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %4 = graph.clip %i {min = -1.0 : f64, max = 1.0 : f64} : tensor<4xi32>
  func.return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// min == max is allowed.
// CHECK-LABEL: func.func @clip_equal_bounds
func.func @clip_equal_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %{{.*}} = graph.clip %{{.*}} {min = 2.000000e+00 : f64, max = 2.000000e+00 : f64} : tensor<4xf32>
  %0 = graph.clip %x {min = 2.0 : f64, max = 2.0 : f64} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @erf
func.func @erf(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: %{{.*}} = graph.erf %{{.*}} : tensor<3xf32>
  %0 = graph.erf %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @sqrt
func.func @sqrt(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: %{{.*}} = graph.sqrt %{{.*}} : tensor<3xf32>
  %0 = graph.sqrt %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @exp
func.func @exp(%x: tensor<f32>) -> tensor<f32> {
  // CHECK: %{{.*}} = graph.exp %{{.*}} : tensor<f32>
  %0 = graph.exp %x : tensor<f32>
  func.return %0 : tensor<f32>
}

// Neg takes signed integers too.
// CHECK-LABEL: func.func @neg
func.func @neg(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  // CHECK: %{{.*}} = graph.neg %{{.*}} : tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = graph.neg %{{.*}} : tensor<3xi64>
  %0 = graph.neg %x : tensor<3xf32>
  %1 = graph.neg %i : tensor<3xi64>
  func.return %0, %1 : tensor<3xf32>, tensor<3xi64>
}

// Not takes i1 only.
// CHECK-LABEL: func.func @not
func.func @not(%x: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // CHECK: %{{.*}} = graph.not %{{.*}} : tensor<2x3xi1>
  %0 = graph.not %x : tensor<2x3xi1>
  func.return %0 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @reciprocal
func.func @reciprocal(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // CHECK: %{{.*}} = graph.reciprocal %{{.*}} : tensor<2x2xf32>
  %0 = graph.reciprocal %x : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @cast_f32_f16
func.func @cast_f32_f16(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf16> {
  // CHECK: %{{.*}} = graph.cast %{{.*}} : tensor<1x3x2x2xf32> to tensor<1x3x2x2xf16>
  %0 = graph.cast %x : tensor<1x3x2x2xf32> to tensor<1x3x2x2xf16>
  func.return %0 : tensor<1x3x2x2xf16>
}

// CHECK-LABEL: func.func @cast_int_float_bool
func.func @cast_int_float_bool(%x: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  // CHECK: %{{.*}} = graph.cast %{{.*}} : tensor<4xi64> to tensor<4xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} : tensor<4xi1> to tensor<4xi32>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} : tensor<4xi64> to tensor<4xi1>
  %0 = graph.cast %x : tensor<4xi64> to tensor<4xf32>
  %1 = graph.cast %b : tensor<4xi1> to tensor<4xi32>
  %2 = graph.cast %x : tensor<4xi64> to tensor<4xi1>
  func.return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}

// A same-type cast is valid (a no-op).
// CHECK-LABEL: func.func @cast_identity
func.func @cast_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %{{.*}} = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf32>
  %0 = graph.cast %x : tensor<4xf32> to tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// 8-bit floats: saturate = true and round_mode = "up" are the defaults and are elided.
// CHECK-LABEL: func.func @cast_float8
func.func @cast_float8(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2FNUZ>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2>) {
  // CHECK: %{{.*}} = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E4M3FN>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} {saturate = false} : tensor<4xf32> to tensor<4xf8E4M3FN>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} : tensor<4xf16> to tensor<4xf8E5M2FNUZ>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} {saturate = false} : tensor<4xf16> to tensor<4xf8E4M3FNUZ>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E5M2>
  %0 = graph.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = graph.cast %x {saturate = false} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %2 = graph.cast %h {saturate = true} : tensor<4xf16> to tensor<4xf8E5M2FNUZ>
  %3 = graph.cast %h {saturate = false} : tensor<4xf16> to tensor<4xf8E4M3FNUZ>
  %4 = graph.cast %x {round_mode = "up", saturate = true} : tensor<4xf32> to tensor<4xf8E5M2>
  func.return %0, %1, %2, %3, %4 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2FNUZ>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2>
}

// f8E8M0FNU with each round_mode, with and without saturation.
// CHECK-LABEL: func.func @cast_float8_e8m0
func.func @cast_float8_e8m0(%x: tensor<4xf32>) -> (tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>) {
  // CHECK: %{{.*}} = graph.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} {round_mode = "nearest", saturate = false} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} {round_mode = "down"} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  // CHECK-NEXT: %{{.*}} = graph.cast %{{.*}} {saturate = false} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  %0 = graph.cast %x : tensor<4xf32> to tensor<4xf8E8M0FNU>
  %1 = graph.cast %x {round_mode = "nearest", saturate = false} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  %2 = graph.cast %x {round_mode = "down"} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  %3 = graph.cast %x {round_mode = "up", saturate = false} : tensor<4xf32> to tensor<4xf8E8M0FNU>
  func.return %0, %1, %2, %3 : tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>
}

// 4- and 2-bit integers, 4-bit floats and bf16, both ways.
// CHECK-LABEL: func.func @cast_narrow
func.func @cast_narrow(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[I4:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xi4>
  // CHECK-NEXT: %[[UI4:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xui4>
  // CHECK-NEXT: %[[I2:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xi2>
  // CHECK-NEXT: %[[UI2:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xui2>
  // CHECK-NEXT: %[[F4:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xf4E2M1FN>
  // CHECK-NEXT: %[[BF16:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xbf16>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[I4]] : tensor<2x3xi4> to tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[UI4]] : tensor<2x3xui4> to tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[I2]] : tensor<2x3xi2> to tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[UI2]] : tensor<2x3xui2> to tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[F4]] : tensor<2x3xf4E2M1FN> to tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.cast %[[BF16]] : tensor<2x3xbf16> to tensor<2x3xf32>
  %0 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xi4>
  %1 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xui4>
  %2 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xi2>
  %3 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xui2>
  %4 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xf4E2M1FN>
  %5 = graph.cast %x : tensor<2x3xf32> to tensor<2x3xbf16>
  %6 = graph.cast %0 : tensor<2x3xi4> to tensor<2x3xf32>
  %7 = graph.cast %1 : tensor<2x3xui4> to tensor<2x3xf32>
  %8 = graph.cast %2 : tensor<2x3xi2> to tensor<2x3xf32>
  %9 = graph.cast %3 : tensor<2x3xui2> to tensor<2x3xf32>
  %10 = graph.cast %4 : tensor<2x3xf4E2M1FN> to tensor<2x3xf32>
  %11 = graph.cast %5 : tensor<2x3xbf16> to tensor<2x3xf32>
  func.return %6, %7, %8, %9, %10, %11 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
