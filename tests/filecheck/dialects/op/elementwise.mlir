// RUN: BOLT_ROUNDTRIP
// RUN: BOLT_GENERIC_ROUNDTRIP

// Elementwise ops: op.unary (every function), op.binary (every function), op.select,
// op.cast, and the fused op.elementwise with a scalar arith/math body.

// CHECK-LABEL: func.func @unary_activations
func.func @unary_activations(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: %{{.*}} = op.unary relu %x : tensor<2x8xf32>
  %0 = op.unary relu %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary clip %x {args = array<f64: 0.000000e+00, 6.000000e+00>} : tensor<2x8xf32>
  %1 = op.unary clip %x {args = array<f64: 0.0, 6.0>} : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary gelu %x : tensor<2x8xf32>
  %2 = op.unary gelu %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary gelu_tanh %x : tensor<2x8xf32>
  %3 = op.unary gelu_tanh %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary sigmoid %x : tensor<2x8xf32>
  %4 = op.unary sigmoid %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary silu %x : tensor<2x8xf32>
  %5 = op.unary silu %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary hardswish %x : tensor<2x8xf32>
  %6 = op.unary hardswish %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary tanh %x : tensor<2x8xf32>
  %7 = op.unary tanh %x : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary leaky_relu %x {args = array<f64: 1.000000e-01>} : tensor<2x8xf32>
  %8 = op.unary leaky_relu %x {args = array<f64: 0.1>} : tensor<2x8xf32>
  // CHECK: %{{.*}} = op.unary hardsigmoid %x {args = array<f64: 2.000000e-01, 5.000000e-01>} : tensor<2x8xf32>
  %9 = op.unary hardsigmoid %x {args = array<f64: 0.2, 0.5>} : tensor<2x8xf32>
  func.return %9 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @unary_math
func.func @unary_math(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  // CHECK: %{{.*}} = op.unary identity %x : tensor<2x8xf16>
  %0 = op.unary identity %x : tensor<2x8xf16>
  // CHECK: %{{.*}} = op.unary erf %x : tensor<2x8xf16>
  %1 = op.unary erf %x : tensor<2x8xf16>
  // CHECK: %{{.*}} = op.unary sqrt %x : tensor<2x8xf16>
  %2 = op.unary sqrt %x : tensor<2x8xf16>
  // CHECK: %{{.*}} = op.unary exp %x : tensor<2x8xf16>
  %3 = op.unary exp %x : tensor<2x8xf16>
  // CHECK: %{{.*}} = op.unary neg %x : tensor<2x8xf16>
  %4 = op.unary neg %x : tensor<2x8xf16>
  // CHECK: %{{.*}} = op.unary reciprocal %x : tensor<2x8xf16>
  %5 = op.unary reciprocal %x : tensor<2x8xf16>
  func.return %5 : tensor<2x8xf16>
}

// relu, neg, identity and clip also take integers. Empty args are elided; a discardable
// attribute stays.
// CHECK-LABEL: func.func @unary_integer_and_attributes
func.func @unary_integer_and_attributes(%i: tensor<3xi32>, %x: tensor<3xf32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>) {
  // CHECK: %{{.*}} = op.unary relu %i : tensor<3xi32>
  %0 = op.unary relu %i {args = array<f64>} : tensor<3xi32>
  // CHECK: %{{.*}} = op.unary neg %i : tensor<3xi32>
  %1 = op.unary neg %i : tensor<3xi32>
  // CHECK: %{{.*}} = op.unary clip %i {args = array<f64: -1.000000e+00, 1.000000e+00>} : tensor<3xi32>
  %2 = op.unary clip %i {args = array<f64: -1.0, 1.0>} : tensor<3xi32>
  // CHECK: %{{.*}} = op.unary sigmoid %x {fused_from = "graph.sigmoid"} : tensor<3xf32>
  %3 = op.unary sigmoid %x {fused_from = "graph.sigmoid"} : tensor<3xf32>
  func.return %0, %1, %2, %3 : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %s: tensor<f32>, %i: tensor<4x1xi64>, %j: tensor<1x5xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<4x5xi64>) {
  // CHECK: %{{.*}} = op.binary add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = op.binary add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %{{.*}} = op.binary sub %s, %a : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = op.binary sub %s, %a : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %{{.*}} = op.binary mul %a, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = op.binary mul %a, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK: %{{.*}} = op.binary div %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = op.binary div %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %{{.*}} = op.binary pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = op.binary pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // equal gives i1.
  // CHECK: %{{.*}} = op.binary equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %5 = op.binary equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // Both operands broadcast.
  // CHECK: %{{.*}} = op.binary div %i, %j {note} : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  %6 = op.binary div %i, %j {note} : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<4x5xi64>
}

// The comparisons give i1; and, or, xor and not take i1.
// CHECK-LABEL: func.func @binary_compare_and_logical
func.func @binary_compare_and_logical(%a: tensor<2x3xf16>, %b: tensor<3xf16>, %i: tensor<4xi32>, %p: tensor<2x1xi1>, %q: tensor<3xi1>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>, tensor<2x1xi1>) {
  // CHECK: %{{.*}} = op.binary greater %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  %0 = op.binary greater %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  // CHECK: %{{.*}} = op.binary greater_equal %b, %a : (tensor<3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  %1 = op.binary greater_equal %b, %a : (tensor<3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  // CHECK: %{{.*}} = op.binary less %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = op.binary less %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  // CHECK: %{{.*}} = op.binary less_equal %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = op.binary less_equal %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  // CHECK: %{{.*}} = op.binary and %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %4 = op.binary and %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: %{{.*}} = op.binary or %q, %p : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %5 = op.binary or %q, %p : (tensor<3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  // CHECK: %{{.*}} = op.binary xor %q, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %6 = op.binary xor %q, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK: %{{.*}} = op.unary not %p : tensor<2x1xi1>
  %7 = op.unary not %p : tensor<2x1xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<3xi1>, tensor<2x1xi1>
}

// CHECK-LABEL: func.func @select
func.func @select(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}} = op.select %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = op.select %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf16>, tensor<4xf32>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E8M0FNU>) {
  // The defaults (saturate = true, round_mode = "up") are elided.
  // CHECK: %{{.*}} = op.cast %x : tensor<2x3xf32> to tensor<2x3xf16>
  %0 = op.cast %x {saturate = true, round_mode = "up"} : tensor<2x3xf32> to tensor<2x3xf16>
  // CHECK: %{{.*}} = op.cast %i : tensor<4xi64> to tensor<4xf32>
  %1 = op.cast %i : tensor<4xi64> to tensor<4xf32>
  // CHECK: %{{.*}} = op.cast %x {saturate = false} : tensor<2x3xf32> to tensor<2x3xf8E4M3FN>
  %2 = op.cast %x {saturate = false} : tensor<2x3xf32> to tensor<2x3xf8E4M3FN>
  // CHECK: %{{.*}} = op.cast %x {round_mode = "nearest"} : tensor<2x3xf32> to tensor<2x3xf8E8M0FNU>
  %3 = op.cast %x {round_mode = "nearest"} : tensor<2x3xf32> to tensor<2x3xf8E8M0FNU>
  func.return %0, %1, %2, %3 : tensor<2x3xf16>, tensor<4xf32>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E8M0FNU>
}

// The identity body: what lower-graph-to-op makes of graph.expand.
// CHECK-LABEL: func.func @elementwise_identity
func.func @elementwise_identity(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  // CHECK: %{{.*}} = op.elementwise (%x) {
  // CHECK-NEXT: ^{{.*}}(%[[E:.*]]: f32):
  // CHECK-NEXT: op.yield %[[E]] : f32
  // CHECK-NEXT: } : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    op.yield %e : f32
  } : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// bias + ReLU6 + residual, fused: constants, maximumf/minimumf, two broadcast inputs.
// CHECK-LABEL: func.func @elementwise_bias_relu6_residual
func.func @elementwise_bias_relu6_residual(%x: tensor<1x4x4x8xf32>, %b: tensor<8xf32>, %r: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK: %{{.*}} = op.elementwise (%x, %b, %r) {
  // CHECK-NEXT: ^{{.*}}(%[[X:.*]]: f32, %[[B:.*]]: f32, %[[R:.*]]: f32):
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
  // CHECK-NEXT: %[[LO:.*]] = arith.maximumf %[[S]], %[[ZERO]] : f32
  // CHECK-NEXT: %[[HI:.*]] = arith.minimumf %[[LO]], %[[SIX]] : f32
  // CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[HI]], %[[R]] : f32
  // CHECK-NEXT: op.yield %[[OUT]] : f32
  // CHECK-NEXT: } : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %0 = op.elementwise (%x, %b, %r) {
  ^bb0(%xe: f32, %be: f32, %re: f32):
    %s = arith.addf %xe, %be : f32
    %zero = arith.constant 0.0 : f32
    %six = arith.constant 6.0 : f32
    %lo = arith.maximumf %s, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %out = arith.addf %hi, %re : f32
    op.yield %out : f32
  } : (tensor<1x4x4x8xf32>, tensor<8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %0 : tensor<1x4x4x8xf32>
}

// Leaky ReLU as cmpf + select, and GELU (erf form) computed in f32 on f16 data:
// extf in, truncf out.
// CHECK-LABEL: func.func @elementwise_cmpf_select_extf_truncf
func.func @elementwise_cmpf_select_extf_truncf(%x: tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<2x8xf16>) {
  // CHECK: op.elementwise (%x) {
  // CHECK: %[[POS:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT: %[[SEL:.*]] = arith.select %[[POS]], %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT: %[[DOWN:.*]] = arith.truncf %[[SEL]] : f32 to f16
  // CHECK-NEXT: op.yield %[[DOWN]] : f16
  %0 = op.elementwise (%x) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.01 : f32
    %scaled = arith.mulf %w, %slope : f32
    %pos = arith.cmpf ogt, %w, %zero : f32
    %sel = arith.select %pos, %w, %scaled : f32
    %down = arith.truncf %sel : f32 to f16
    op.yield %down : f16
  } : (tensor<2x8xf16>) -> tensor<2x8xf16>
  // CHECK: op.elementwise (%x) attributes {kernel = "gelu"} {
  // CHECK: arith.extf %{{.*}} : f16 to f32
  // CHECK: math.sqrt %{{.*}} : f32
  // CHECK: math.erf %{{.*}} : f32
  // CHECK: arith.truncf %{{.*}} : f32 to f16
  // CHECK: } : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %1 = op.elementwise (%x) attributes {kernel = "gelu"} {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    %two = arith.constant 2.0 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %root = math.sqrt %two : f32
    %scaled = arith.divf %w, %root : f32
    %erf = math.erf %scaled : f32
    %sum = arith.addf %erf, %one : f32
    %halfx = arith.mulf %w, %half : f32
    %y = arith.mulf %halfx, %sum : f32
    %down = arith.truncf %y : f32 to f16
    op.yield %down : f16
  } : (tensor<2x8xf16>) -> tensor<2x8xf16>
  func.return %0, %1 : tensor<2x8xf16>, tensor<2x8xf16>
}

// Integer and boolean bodies: a where(x == y, x, 0) in i32, and an integer to float cast.
// CHECK-LABEL: func.func @elementwise_integer
func.func @elementwise_integer(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xf32>) {
  // CHECK: op.elementwise (%x, %y) {
  // CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
  // CHECK: arith.select
  // CHECK: } : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %0 = op.elementwise (%x, %y) {
  ^bb0(%a: i32, %b: i32):
    %zero = arith.constant 0 : i32
    %same = arith.cmpi eq, %a, %b : i32
    %out = arith.select %same, %a, %zero : i32
    op.yield %out : i32
  } : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: op.elementwise (%x) {
  // CHECK: arith.sitofp %{{.*}} : i32 to f32
  // CHECK: } : (tensor<4xi32>) -> tensor<4xf32>
  %1 = op.elementwise (%x) {
  ^bb0(%a: i32):
    %f = arith.sitofp %a : i32 to f32
    op.yield %f : f32
  } : (tensor<4xi32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xi32>, tensor<4xf32>
}
