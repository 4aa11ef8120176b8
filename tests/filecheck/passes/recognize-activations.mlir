// RUN: bolt-opt %s -p recognize-activations | filecheck %s
// RUN: bolt-opt %s -p recognize-activations --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      recognize-activations
// STATS-NEXT:   3 gelu recognized
// STATS-NEXT:   2 gelu_tanh recognized
// STATS-NEXT:   1 silu recognized
// STATS-NEXT:   2 hardswish recognized
// STATS-NEXT:   - left graph.erf at {{.*}}recognize-activations.mlir:{{[0-9]+}}:{{[0-9]+}} alone: not part of a GELU 0.5 x (1 + erf(x / sqrt 2)) whose intermediate values have no other users
// STATS-NEXT:   - left graph.erf at {{.*}}recognize-activations.mlir:{{[0-9]+}}:{{[0-9]+}} alone: not part of a GELU
// STATS-NEXT:   - left graph.erf at {{.*}}recognize-activations.mlir:{{[0-9]+}}:{{[0-9]+}} alone: not part of a GELU
// STATS-NOT:    - left

// Hugging Face's BERT: (x * 0.5) * (1 + erf(x / sqrt 2)).
// CHECK-LABEL: func.func @gelu_hf
func.func @gelu_hf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.gelu %x : tensor<2x8xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = graph.erf %0 : tensor<2x8xf32>
  %2 = graph.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = graph.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %4 = graph.mul %3, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %4 : tensor<2x8xf32>
}

// torch.onnx below opset 20: (x * (erf(x / sqrt 2) + 1)) * 0.5.
// CHECK-LABEL: func.func @gelu_torch
func.func @gelu_torch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.gelu %x : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// Mul by 0.7071 instead of Div by sqrt 2, the 0.5 on the gate, operands swapped.
// CHECK-LABEL: func.func @gelu_rsqrt2_half_on_gate
func.func @gelu_rsqrt2_half_on_gate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.gelu %x : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %rsqrt2 = graph.constant dense<0.707106769> : tensor<1xf32>
  %one = graph.constant dense<1.0> : tensor<1xf32>
  %half = graph.constant dense<0.5> : tensor<1xf32>
  %0 = graph.mul %rsqrt2, %x : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %one, %1 : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.mul %2, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// torch.onnx's tanh GELU: 0.5 * (x * (1 + tanh(0.79788 * (x + 0.044715 * (x * (x * x)))))).
// CHECK-LABEL: func.func @gelu_tanh_cube
func.func @gelu_tanh_cube(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.gelu %x {approximate = "tanh"} : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %k = graph.constant dense<0.044715> : tensor<f32>
  %c = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.mul %k, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %c, %3 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = graph.tanh %4 : tensor<4xf32>
  %6 = graph.add %one, %5 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = graph.mul %x, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = graph.mul %half, %7 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %8 : tensor<4xf32>
}

// GPT-2's: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3)))).
// CHECK-LABEL: func.func @gelu_tanh_pow
func.func @gelu_tanh_pow(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.gelu %x {approximate = "tanh"} : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %three = graph.constant dense<3.0> : tensor<f32>
  %k = graph.constant dense<0.044715> : tensor<f32>
  %c = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.mul %0, %k : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = graph.add %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.mul %2, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = graph.tanh %3 : tensor<4xf32>
  %5 = graph.add %4, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = graph.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = graph.mul %6, %5 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %7 : tensor<4xf32>
}

// CHECK-LABEL: func.func @silu
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.silu %x : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %0 = graph.sigmoid %x : tensor<4xf32>
  %1 = graph.mul %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// torch.onnx below opset 14: x * HardSigmoid(x, alpha = 1/6).
// CHECK-LABEL: func.func @hardswish_hardsigmoid
func.func @hardswish_hardsigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.hardswish %x : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %0 = graph.hardsigmoid %x {alpha = 0.166666672 : f32} : tensor<4xf32>
  %1 = graph.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// x * Relu6(x + 3) / 6, Relu6 as Clip(0, 6).
// CHECK-LABEL: func.func @hardswish_relu6
func.func @hardswish_relu6(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[Y:.*]] = graph.hardswish %x : tensor<4xf32>
  // CHECK-NEXT: func.return %[[Y]]
  %three = graph.constant dense<3.0> : tensor<f32>
  %six = graph.constant dense<6.0> : tensor<f32>
  %0 = graph.add %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.clip %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %2 = graph.mul %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.div %2, %six : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// ----------------------------------------------------------------- left alone

// Div by 1.5, not sqrt 2: left as it is (and the erf is noted).
// CHECK-LABEL: func.func @gelu_wrong_constant
func.func @gelu_wrong_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: graph.constant
  // CHECK-NEXT: graph.constant
  // CHECK-NEXT: graph.constant
  // CHECK-NEXT: graph.div
  // CHECK-NEXT: graph.erf
  // CHECK-NEXT: graph.add
  // CHECK-NEXT: graph.mul
  // CHECK-NEXT: graph.mul
  // CHECK-NEXT: func.return
  // CHECK-NOT: graph.gelu
  %d = graph.constant dense<1.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %d : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = graph.mul %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// 1 + erf(x / sqrt 2) is returned too: recognizing would compute it twice.
// CHECK-LABEL: func.func @gelu_extra_user
func.func @gelu_extra_user(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK:      %[[ERF:.*]] = graph.erf
  // CHECK-NEXT: %[[GATE:.*]] = graph.add %[[ERF]]
  // CHECK-NEXT: %[[HALF_X:.*]] = graph.mul %x
  // CHECK-NEXT: %[[Y:.*]] = graph.mul %[[HALF_X]], %[[GATE]]
  // CHECK-NEXT: func.return %[[Y]], %[[GATE]]
  // CHECK-NOT: graph.gelu
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = graph.mul %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4, %2 : tensor<4xf32>, tensor<4xf32>
}

// The sigmoid's result is returned too: x * sigmoid(x) stays.
// CHECK-LABEL: func.func @silu_extra_user
func.func @silu_extra_user(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %[[S:.*]] = graph.sigmoid %x
  // CHECK-NEXT: %[[Y:.*]] = graph.mul %x, %[[S]]
  // CHECK-NEXT: func.return %[[Y]], %[[S]]
  %0 = graph.sigmoid %x : tensor<4xf32>
  %1 = graph.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1, %0 : tensor<4xf32>, tensor<4xf32>
}

// HardSigmoid with ONNX's default alpha 0.2 is not the one of HardSwish (1/6).
// CHECK-LABEL: func.func @hardsigmoid_default_alpha
func.func @hardsigmoid_default_alpha(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[H:.*]] = graph.hardsigmoid %x
  // CHECK-NEXT: %[[Y:.*]] = graph.mul %x, %[[H]]
  // CHECK-NEXT: func.return %[[Y]]
  %0 = graph.hardsigmoid %x : tensor<4xf32>
  %1 = graph.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// A splat that grows the result (4 -> 3x4): gelu(x) would have x's shape.
// CHECK-LABEL: func.func @growing_broadcast
func.func @growing_broadcast(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  // CHECK-NOT: graph.gelu
  // CHECK:     func.return
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<3x1xf32>
  %0 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %half : (tensor<4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %4 = graph.mul %3, %2 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  func.return %4 : tensor<3x4xf32>
}
