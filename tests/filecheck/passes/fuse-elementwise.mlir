// RUN: bolt-opt %s -p fuse-elementwise | filecheck %s
// RUN: bolt-opt %s -p fuse-elementwise | bolt-opt -p fuse-elementwise | filecheck %s
// RUN: bolt-opt %s -p fuse-elementwise --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// Every op.unary/binary/select/cast becomes an op.elementwise whose body computes one
// element in scalar arith/math ops (f16 in f32, rounded once at the end); a chain whose
// intermediates have one user each becomes one op.elementwise. Running the pass twice
// changes nothing more (second RUN line).

// STATS:      fuse-elementwise
// STATS-NEXT:   1 op.binary left as it is (types a body cannot hold)
// STATS-NEXT:   3 op.cast left as it is (types a body cannot hold)
// STATS-NEXT:  17 elementwise ops merged
// STATS-NEXT:  61 elementwise kernels
// STATS-NOT:  {{[0-9]}}

// ---------------------------------------------------------------------------- unary

// CHECK-LABEL: func.func @relu
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %[[Y:.*]] = op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[R:.*]] = arith.maximumf %[[A]], %[[ZERO]] : f32
  // CHECK-NEXT:   op.yield %[[R]] : f32
  // CHECK-NEXT: } : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %[[Y]] : tensor<2x3xf32>
  %0 = op.unary relu %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// Each function, returned on its own (so that nothing merges): its key body ops.
// CHECK-LABEL: func.func @unary_functions
func.func @unary_functions(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NOT:  op.unary
  // identity
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   op.yield %[[A]] : f32
  // clip(-1, 6)
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.constant -1.000000e+00 : f32
  // CHECK-NEXT:   arith.maximumf
  // CHECK-NEXT:   arith.constant 6.000000e+00 : f32
  // CHECK-NEXT:   arith.minimumf
  // CHECK-NEXT:   op.yield
  // clip without a lower bound: no maximumf
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   arith.constant 6.000000e+00 : f32
  // CHECK-NEXT:   arith.minimumf
  // CHECK-NEXT:   op.yield
  // gelu: 0.5 x (1 + erf(x / sqrt 2))
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.constant 0.707106769 : f32
  // CHECK:        math.erf
  // CHECK:        op.yield
  // gelu_tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.constant 4.471500e-02 : f32
  // CHECK:        arith.constant 0.797884583 : f32
  // CHECK:        math.tanh
  // CHECK:        op.yield
  // sigmoid: 1 / (1 + exp(-x))
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.negf
  // CHECK-NEXT:   math.exp
  // CHECK-NEXT:   arith.addf
  // CHECK-NEXT:   arith.divf
  // CHECK-NEXT:   op.yield
  // silu: x * sigmoid(x)
  // CHECK:      op.elementwise (%x) {
  // CHECK:        math.exp
  // CHECK:        arith.divf
  // CHECK-NEXT:   arith.mulf
  // CHECK-NEXT:   op.yield
  // hardswish: x * clamp(x / 6 + 0.5, 0, 1)
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.constant 0.166666672 : f32
  // CHECK:        arith.maximumf
  // CHECK:        arith.minimumf
  // CHECK-NEXT:   arith.mulf
  // CHECK-NEXT:   op.yield
  // tanh
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   math.tanh
  // CHECK-NEXT:   op.yield
  // leaky_relu(0.25): x >= 0 ? x : 0.25 x
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[L:.*]]: f32):
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[P:.*]] = arith.cmpf oge, %[[L]], %[[Z]] : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.constant 2.500000e-01 : f32
  // CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[L]], %[[S]] : f32
  // CHECK-NEXT:   %[[V:.*]] = arith.select %[[P]], %[[L]], %[[M]] : f32
  // CHECK-NEXT:   op.yield %[[V]] : f32
  // hardsigmoid(0.2, 0.5): clamp(0.2 x + 0.5, 0, 1)
  // CHECK:      op.elementwise (%x) {
  // CHECK:        arith.constant 2.000000e-01 : f32
  // CHECK-NEXT:   arith.mulf
  // CHECK-NEXT:   arith.constant 5.000000e-01 : f32
  // CHECK-NEXT:   arith.addf
  // CHECK:        arith.maximumf
  // CHECK:        arith.minimumf
  // CHECK-NEXT:   op.yield
  // erf, sqrt, exp, neg, reciprocal
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   math.erf
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   math.sqrt
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   math.exp
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   arith.negf
  // CHECK:      op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[D:.*]]: f32):
  // CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:   arith.divf %[[ONE]], %[[D]] : f32
  // CHECK:      func.return
  %0 = op.unary identity %x : tensor<4xf32>
  %1 = op.unary clip %x {args = array<f64: -1.0, 6.0>} : tensor<4xf32>
  %2 = op.unary clip %x {args = array<f64: -1.7976931348623157e+308, 6.0>} : tensor<4xf32>
  %3 = op.unary gelu %x : tensor<4xf32>
  %4 = op.unary gelu_tanh %x : tensor<4xf32>
  %5 = op.unary sigmoid %x : tensor<4xf32>
  %6 = op.unary silu %x : tensor<4xf32>
  %7 = op.unary hardswish %x : tensor<4xf32>
  %8 = op.unary tanh %x : tensor<4xf32>
  %9 = op.unary leaky_relu %x {args = array<f64: 0.25>} : tensor<4xf32>
  %10 = op.unary hardsigmoid %x {args = array<f64: 0.2, 0.5>} : tensor<4xf32>
  %11 = op.unary erf %x : tensor<4xf32>
  %12 = op.unary sqrt %x : tensor<4xf32>
  %13 = op.unary exp %x : tensor<4xf32>
  %14 = op.unary neg %x : tensor<4xf32>
  %15 = op.unary reciprocal %x : tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// f16 (and bf16) compute in f32: widened where read, rounded once before the yield.
// CHECK-LABEL: func.func @unary_f16
func.func @unary_f16(%x: tensor<4xf16>, %b: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xbf16>) {
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f16):
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[A]] : f16 to f32
  // CHECK:        math.erf
  // CHECK:        %[[R:.*]] = arith.truncf %{{.*}} : f32 to f16
  // CHECK-NEXT:   op.yield %[[R]] : f16
  // CHECK-NEXT: } : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK-NEXT: op.elementwise (%b) {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: bf16):
  // CHECK-NEXT:   arith.extf %[[C]] : bf16 to f32
  // CHECK-NEXT:   math.tanh
  // CHECK-NEXT:   arith.truncf %{{.*}} : f32 to bf16
  %0 = op.unary gelu %x : tensor<4xf16>
  %1 = op.unary tanh %b : tensor<4xbf16>
  func.return %0, %1 : tensor<4xf16>, tensor<4xbf16>
}

// --------------------------------------------------------------------------- binary

// Operands broadcast inside the kernel: 2x1 and 3 give 2x3.
// CHECK-LABEL: func.func @binary_float
func.func @binary_float(%x: tensor<2x1xf32>, %y: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>) {
  // CHECK-NOT:  op.binary
  // CHECK:      op.elementwise (%x, %y) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
  // CHECK-NEXT:   %[[R:.*]] = arith.addf %[[A]], %[[B]] : f32
  // CHECK-NEXT:   op.yield %[[R]] : f32
  // CHECK-NEXT: } : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK:        arith.subf
  // CHECK:        arith.mulf
  // CHECK:        arith.divf
  // CHECK:        math.powf
  // CHECK:        %[[E:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT:   op.yield %[[E]] : i1
  // CHECK-NEXT: } : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = op.binary add %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = op.binary sub %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = op.binary mul %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = op.binary div %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = op.binary pow %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = op.binary equal %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  func.return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>
}

// CHECK-LABEL: func.func @binary_f16
func.func @binary_f16(%x: tensor<4xf16>, %y: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xi1>) {
  // CHECK-NEXT: op.elementwise (%x, %y) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16):
  // CHECK-NEXT:   %[[WA:.*]] = arith.extf %[[A]] : f16 to f32
  // CHECK-NEXT:   %[[WB:.*]] = arith.extf %[[B]] : f16 to f32
  // CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[WA]], %[[WB]] : f32
  // CHECK-NEXT:   %[[R:.*]] = arith.truncf %[[M]] : f32 to f16
  // CHECK-NEXT:   op.yield %[[R]] : f16
  // CHECK:        arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT:   op.yield %{{.*}} : i1
  %0 = op.binary mul %x, %y : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %1 = op.binary equal %x, %y : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  func.return %0, %1 : tensor<4xf16>, tensor<4xi1>
}

// Integers compute as they are; integer pow has no scalar op, and stays.
// CHECK-LABEL: func.func @binary_integer
func.func @binary_integer(%n: tensor<4xi32>, %m: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  // CHECK:        arith.addi %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.subi %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.muli %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.divsi %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.cmpi eq, %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.constant 0 : i32
  // CHECK-NEXT:   arith.maxsi %{{.*}}, %{{.*}} : i32
  // CHECK:        %[[Z:.*]] = arith.constant 0 : i32
  // CHECK-NEXT:   arith.subi %[[Z]], %{{.*}} : i32
  // CHECK:      %[[P:.*]] = op.binary pow %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK-NEXT: func.return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]] :
  %0 = op.binary add %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = op.binary sub %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = op.binary mul %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = op.binary div %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = op.binary equal %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %5 = op.unary relu %n : tensor<4xi32>
  %6 = op.unary neg %n : tensor<4xi32>
  %7 = op.binary pow %n, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// Comparisons are ordered cmpf on floats (false on NaN, as numpy), signed cmpi on
// integers and unsigned cmpi on i1 (numpy's True > False); and, or, xor are the i1
// bitwise ops, and not is xor with true.
// CHECK-LABEL: func.func @compare_and_logical
func.func @compare_and_logical(%x: tensor<4xf32>, %h: tensor<4xf16>, %n: tensor<4xi32>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK:        arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
  // CHECK:        %[[WA:.*]] = arith.extf %{{.*}} : f16 to f32
  // CHECK-NEXT:   %[[WB:.*]] = arith.extf %{{.*}} : f16 to f32
  // CHECK-NEXT:   %[[GE:.*]] = arith.cmpf oge, %[[WA]], %[[WB]] : f32
  // CHECK-NEXT:   op.yield %[[GE]] : i1
  // CHECK:        arith.cmpi slt, %{{.*}}, %{{.*}} : i32
  // CHECK:        arith.cmpi ule, %{{.*}}, %{{.*}} : i1
  // CHECK:        arith.andi %{{.*}}, %{{.*}} : i1
  // CHECK:        arith.ori %{{.*}}, %{{.*}} : i1
  // CHECK:        arith.xori %{{.*}}, %{{.*}} : i1
  // CHECK:        ^bb0(%[[C:.*]]: i1):
  // CHECK-NEXT:   %[[TRUE:.*]] = arith.constant true
  // CHECK-NEXT:   %[[NOT:.*]] = arith.xori %[[C]], %[[TRUE]] : i1
  // CHECK-NEXT:   op.yield %[[NOT]] : i1
  %0 = op.binary greater %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = op.binary greater_equal %h, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  %2 = op.binary less %n, %n : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = op.binary less_equal %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %4 = op.binary and %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %5 = op.binary or %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %6 = op.binary xor %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %7 = op.unary not %p : tensor<4xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// A mask chain (a comparison, not, and) feeding select is one kernel.
// CHECK-LABEL: func.func @mask_chain
func.func @mask_chain(%a: tensor<2x1xi64>, %b: tensor<4xi64>, %m: tensor<4xi1>, %x: tensor<2x4xf32>, %y: tensor<f32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: %[[R:.*]] = op.elementwise (%a, %b, %m, %x, %y) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %[[M:.*]]: i1, %[[X:.*]]: f32, %[[Y:.*]]: f32):
  // CHECK-NEXT:   %[[TRUE:.*]] = arith.constant true
  // CHECK-NEXT:   %[[NOT:.*]] = arith.xori %[[M]], %[[TRUE]] : i1
  // CHECK-NEXT:   %[[GE:.*]] = arith.cmpi sge, %[[A]], %[[B]] : i64
  // CHECK-NEXT:   %[[AND:.*]] = arith.andi %[[GE]], %[[NOT]] : i1
  // CHECK-NEXT:   %[[S:.*]] = arith.select %[[AND]], %[[X]], %[[Y]] : f32
  // CHECK-NEXT:   op.yield %[[S]] : f32
  // CHECK-NEXT: } : (tensor<2x1xi64>, tensor<4xi64>, tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return %[[R]] : tensor<2x4xf32>
  %0 = op.binary greater_equal %a, %b : (tensor<2x1xi64>, tensor<4xi64>) -> tensor<2x4xi1>
  %1 = op.unary not %m : tensor<4xi1>
  %2 = op.binary and %0, %1 : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  %3 = op.select %2, %x, %y : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %3 : tensor<2x4xf32>
}

// --------------------------------------------------------------------------- select

// CHECK-LABEL: func.func @select
func.func @select(%c: tensor<2x1xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %[[R:.*]] = op.elementwise (%c, %x, %y) {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32):
  // CHECK-NEXT:   %[[V:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
  // CHECK-NEXT:   op.yield %[[V]] : f32
  // CHECK-NEXT: } : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return %[[R]]
  %0 = op.select %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// ---------------------------------------------------------------------------- casts

// One conversion each; a cast to an 8-bit float stays as it is.
// CHECK-LABEL: func.func @casts
func.func @casts(%x: tensor<4xf32>, %h: tensor<4xf16>, %n: tensor<4xi32>, %c: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf8E4M3FN>) {
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   %[[R0:.*]] = arith.truncf %[[A]] : f32 to f16
  // CHECK-NEXT:   op.yield %[[R0]] : f16
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf16>
  // CHECK-NEXT: op.elementwise (%h) {
  // CHECK-NEXT: ^bb0(%[[B:.*]]: f16):
  // CHECK-NEXT:   %[[R1:.*]] = arith.extf %[[B]] : f16 to f32
  // CHECK-NEXT:   op.yield %[[R1]] : f32
  // CHECK-NEXT: } : (tensor<4xf16>) -> tensor<4xf32>
  // CHECK-NEXT: op.elementwise (%n) {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: i32):
  // CHECK-NEXT:   %[[R2:.*]] = arith.sitofp %[[C]] : i32 to f32
  // CHECK-NEXT:   op.yield %[[R2]] : f32
  // CHECK-NEXT: } : (tensor<4xi32>) -> tensor<4xf32>
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[D:.*]]: f32):
  // CHECK-NEXT:   %[[R3:.*]] = arith.fptosi %[[D]] : f32 to i32
  // CHECK-NEXT:   op.yield %[[R3]] : i32
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xi32>
  // f32 -> i1 is x != 0 (NaN included)
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[E:.*]]: f32):
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[R4:.*]] = arith.cmpf une, %[[E]], %[[Z]] : f32
  // CHECK-NEXT:   op.yield %[[R4]] : i1
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xi1>
  // i1 -> f32 is c ? 1 : 0
  // CHECK-NEXT: op.elementwise (%c) {
  // CHECK-NEXT: ^bb0(%[[F:.*]]: i1):
  // CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:   %[[NONE:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[R5:.*]] = arith.select %[[F]], %[[ONE]], %[[NONE]] : f32
  // CHECK-NEXT:   op.yield %[[R5]] : f32
  // CHECK-NEXT: } : (tensor<4xi1>) -> tensor<4xf32>
  // CHECK-NEXT: op.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  %0 = op.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = op.cast %h : tensor<4xf16> to tensor<4xf32>
  %2 = op.cast %n : tensor<4xi32> to tensor<4xf32>
  %3 = op.cast %x : tensor<4xf32> to tensor<4xi32>
  %4 = op.cast %x : tensor<4xf32> to tensor<4xi1>
  %5 = op.cast %c : tensor<4xi1> to tensor<4xf32>
  %6 = op.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf8E4M3FN>
}

// ----------------------------------------------------------------------------- chains

// ((x * y + z) |> gelu) - x in f16: one kernel; y (per column) and z (per row) broadcast
// in it, x is passed once; the f16 intermediates are not rounded: one truncf, at the end.
// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<2x8xf16>, %y: tensor<8xf16>, %z: tensor<2x1xf16>) -> tensor<2x8xf16> {
  // CHECK-NEXT: %[[R:.*]] = op.elementwise (%x, %y, %z) {
  // CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %[[Z:.*]]: f16):
  // CHECK-NEXT:   %[[WX:.*]] = arith.extf %[[X]] : f16 to f32
  // CHECK-NEXT:   %[[WY:.*]] = arith.extf %[[Y]] : f16 to f32
  // CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[WX]], %[[WY]] : f32
  // CHECK-NEXT:   %[[WZ:.*]] = arith.extf %[[Z]] : f16 to f32
  // CHECK-NEXT:   %[[S:.*]] = arith.addf %[[M]], %[[WZ]] : f32
  // CHECK-NOT:    arith.truncf
  // CHECK:        math.erf
  // CHECK-NOT:    arith.truncf
  // CHECK:        %[[WX2:.*]] = arith.extf %[[X]] : f16 to f32
  // CHECK-NEXT:   %[[D:.*]] = arith.subf %{{.*}}, %[[WX2]] : f32
  // CHECK-NEXT:   %[[T:.*]] = arith.truncf %[[D]] : f32 to f16
  // CHECK-NEXT:   op.yield %[[T]] : f16
  // CHECK-NEXT: } : (tensor<2x8xf16>, tensor<8xf16>, tensor<2x1xf16>) -> tensor<2x8xf16>
  // CHECK-NEXT: func.return %[[R]]
  %0 = op.binary mul %x, %y : (tensor<2x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  %1 = op.binary add %0, %z : (tensor<2x8xf16>, tensor<2x1xf16>) -> tensor<2x8xf16>
  %2 = op.unary gelu %1 : tensor<2x8xf16>
  %3 = op.binary sub %2, %x : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
  func.return %3 : tensor<2x8xf16>
}

// A select between two computed values and a cast in the middle: still one kernel.
// CHECK-LABEL: func.func @chain_through_select_and_cast
func.func @chain_through_select_and_cast(%x: tensor<3x4xf32>, %n: tensor<4xi32>, %c: tensor<3x1xi1>) -> tensor<3x4xf32> {
  // CHECK-NEXT: %[[R:.*]] = op.elementwise (%c, %n, %x) {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: i1, %[[N:.*]]: i32, %[[X:.*]]: f32):
  // CHECK-NEXT:   %[[NEG:.*]] = arith.negf %[[X]] : f32
  // CHECK-NEXT:   %[[F:.*]] = arith.sitofp %[[N]] : i32 to f32
  // CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[F]], %[[X]] : f32
  // CHECK-NEXT:   %[[E:.*]] = math.exp %[[M]] : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.select %[[C]], %[[E]], %[[NEG]] : f32
  // CHECK-NEXT:   %[[T:.*]] = math.tanh %[[S]] : f32
  // CHECK-NEXT:   op.yield %[[T]] : f32
  // CHECK-NEXT: } : (tensor<3x1xi1>, tensor<4xi32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: func.return %[[R]]
  %0 = op.cast %n : tensor<4xi32> to tensor<4xf32>
  %1 = op.binary mul %0, %x : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = op.unary exp %1 : tensor<3x4xf32>
  %3 = op.unary neg %x : tensor<3x4xf32>
  %4 = op.select %c, %2, %3 : (tensor<3x1xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = op.unary tanh %4 : tensor<3x4xf32>
  func.return %5 : tensor<3x4xf32>
}

// e * e: one user, two uses; it merges, and exp is computed once.
// CHECK-LABEL: func.func @square
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   %[[E:.*]] = math.exp %[[A]] : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.mulf %[[E]], %[[E]] : f32
  // CHECK-NEXT:   op.yield %[[S]] : f32
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return
  %0 = op.unary exp %x : tensor<4xf32>
  %1 = op.binary mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// tanh(x) has two users: it stays a kernel of its own, and each branch fuses behind it.
// CHECK-LABEL: func.func @two_users
func.func @two_users(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %[[T:.*]] = op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32):
  // CHECK-NEXT:   math.tanh
  // CHECK-NEXT:   op.yield
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[L:.*]] = op.elementwise (%[[T]], %y) {
  // CHECK:        arith.addf
  // CHECK-NEXT:   arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   arith.maximumf
  // CHECK-NEXT:   op.yield
  // CHECK-NEXT: } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[R:.*]] = op.elementwise (%[[T]], %y) {
  // CHECK:        math.exp
  // CHECK:        arith.mulf
  // CHECK-NEXT:   op.yield
  // CHECK-NEXT: } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return %[[L]], %[[R]]
  %0 = op.unary tanh %x : tensor<4xf32>
  %1 = op.binary add %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = op.unary relu %1 : tensor<4xf32>
  %3 = op.unary sigmoid %0 : tensor<4xf32>
  %4 = op.binary mul %3, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2, %4 : tensor<4xf32>, tensor<4xf32>
}

// extf(truncf(x)) between two fused steps is x: the f32 -> f16 -> f32 round trip goes.
// CHECK-LABEL: func.func @round_trip
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: op.elementwise (%x) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[R:.*]] = arith.maximumf %[[A]], %[[Z]] : f32
  // CHECK-NEXT:   op.yield %[[R]] : f32
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return
  %0 = op.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = op.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = op.unary relu %1 : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// An f16 value that is also returned keeps its rounding; 8-bit float casts stay and
// split the chain.
// CHECK-LABEL: func.func @chain_breaks
func.func @chain_breaks(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %[[H:.*]] = op.elementwise (%x) {
  // CHECK:        math.exp
  // CHECK-NEXT:   arith.truncf
  // CHECK-NEXT:   op.yield %{{.*}} : f16
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf16>
  // CHECK-NEXT: %[[W:.*]] = op.elementwise (%[[H]]) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   arith.extf
  // CHECK-NEXT:   op.yield %{{.*}} : f32
  // CHECK-NEXT: } : (tensor<4xf16>) -> tensor<4xf32>
  // CHECK-NEXT: %[[E:.*]] = op.elementwise (%x) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   math.exp
  // CHECK-NEXT:   op.yield
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[Q:.*]] = op.cast %[[E]] : tensor<4xf32> to tensor<4xf8E5M2>
  // CHECK-NEXT: %[[B:.*]] = op.cast %[[Q]] : tensor<4xf8E5M2> to tensor<4xf32>
  // CHECK-NEXT: %[[N:.*]] = op.elementwise (%[[B]]) {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT:   arith.negf
  // CHECK-NEXT:   op.yield
  // CHECK-NEXT: } : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: func.return %[[H]], %[[W]], %[[N]]
  %0 = op.unary exp %x : tensor<4xf32>
  %1 = op.cast %0 : tensor<4xf32> to tensor<4xf16>
  %2 = op.cast %1 : tensor<4xf16> to tensor<4xf32>
  %3 = op.unary exp %x : tensor<4xf32>
  %4 = op.cast %3 : tensor<4xf32> to tensor<4xf8E5M2>
  %5 = op.cast %4 : tensor<4xf8E5M2> to tensor<4xf32>
  %6 = op.unary neg %5 : tensor<4xf32>
  func.return %1, %2, %6 : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
}
