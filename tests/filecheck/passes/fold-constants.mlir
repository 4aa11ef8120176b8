// RUN: bolt-opt %s -p fold-constants --split-input-file | filecheck %s
// RUN: bolt-opt %s -p fold-constants --split-input-file --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// STATS:      fold-constants
// STATS-NEXT:   7 ops folded
// STATS-NEXT:   1 unused constants removed
// STATS-NEXT:   - left graph.pow at {{.*}}fold-constants.mlir:{{[0-9]+}}:3 alone: evaluating it failed: Integers to negative integer powers are not allowed.

// A chain of ops on constants folds into one constant, used where the chain's end was;
// the constants it used up go.
// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<{{\[}}[3.000000e+00, 9.000000e+00], [5.000000e+00, 1.100000e+01], [7.000000e+00, 1.300000e+01]]> : tensor<3x2xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.add %{{.*}}, %[[C]] : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  // CHECK-NEXT: func.return %[[R]] : tensor<3x2xf32>
  // CHECK-NOT: graph.transpose
  %a = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %one = graph.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %t = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %m = graph.mul %t, %two : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %s = graph.add %m, %one : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %r = graph.add %x, %s : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}

// Shape arithmetic on integers; a split gives one constant per result.
// CHECK-LABEL: func.func @split_and_shapes
func.func @split_and_shapes() -> (tensor<1xi64>, tensor<2xi64>, tensor<3xi1>) {
  // CHECK-NEXT: %[[LOW:.*]] = graph.constant dense<2> : tensor<1xi64>
  // CHECK-NEXT: %[[HIGH:.*]] = graph.constant dense<[3, 4]> : tensor<2xi64>
  // CHECK-NEXT: %[[EQ:.*]] = graph.constant dense<[true, false, false]> : tensor<3xi1>
  // CHECK-NEXT: func.return %[[LOW]], %[[HIGH]], %[[EQ]]
  %shape = graph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %one = graph.constant dense<1> : tensor<i64>
  %plus = graph.add %shape, %one : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %low, %high = graph.split %plus {axis = 0 : i64, sizes = array<i64: 1, 2>} : tensor<3xi64> -> tensor<1xi64>, tensor<2xi64>
  %eq = graph.equal %shape, %one : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  func.return %low, %high, %eq : tensor<1xi64>, tensor<2xi64>, tensor<3xi1>
}

// Ops on inputs stay; a constant nothing uses goes.
// CHECK-LABEL: func.func @leave_inputs_alone
func.func @leave_inputs_alone(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // CHECK-NEXT: %[[B:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-NEXT: %[[A:.*]] = graph.add %{{.*}}, %[[B]]
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[A]]
  // CHECK-NEXT: func.return %[[T]]
  %unused = graph.constant dense<7.0> : tensor<3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a = graph.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %t : tensor<3x2xf32>
}

// An integer to a negative power fails to evaluate: it is left for run time.
// CHECK-LABEL: func.func @failing_evaluation
func.func @failing_evaluation() -> tensor<2xi64> {
  // CHECK: %[[P:.*]] = graph.pow %{{.*}}, %{{.*}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // CHECK-NEXT: func.return %[[P]]
  %base = graph.constant dense<[2, 3]> : tensor<2xi64>
  %exponent = graph.constant dense<[-1, 2]> : tensor<2xi64>
  %p = graph.pow %base, %exponent : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  func.return %p : tensor<2xi64>
}

// -----

// A folded weight of more than 16 elements is stored as a resource named after its
// source and the op.
// CHECK-LABEL: func.func @weights
func.func @weights(%x: tensor<1x6xf32>) -> tensor<1x3xf32> {
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense_resource<fc.weight.transpose> : tensor<6x3xf32>
  // CHECK-NEXT: %{{.*}} = graph.matmul %{{.*}}, %[[W]]
  %w = graph.constant dense_resource<fc.weight> : tensor<3x6xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<3x6xf32> -> tensor<6x3xf32>
  %y = graph.matmul %x, %t : (tensor<1x6xf32>, tensor<6x3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// The source weight is gone; the folded one is its transpose (0, 6, 12, 1, 7, ...).
// CHECK:      dialect_resources: {
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     fc.weight.transpose: "0x{{0[48]}}000000000000000000C040000040410000803F0000E040
// CHECK-NOT:      fc.weight:

{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E04000000041000010410000204100003041000040410000504100006041000070410000804100008841"
    }
  }
#-}
