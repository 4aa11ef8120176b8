// convert-precision{keep_f32=...}: the named ops (their loc("...") names, which the ONNX
// importer gives every op it makes from a node) compute in f32 with f32 weights, and
// graph.cast ops convert at their edges.
// RUN: bolt-opt %s -p 'convert-precision{keep_f32=conv1,square,less}' | filecheck %s
// RUN: bolt-opt %s -p 'convert-precision{dtype=bf16 keep_f32="/head/Sigmoid"}' | filecheck %s --check-prefix=BF16
// RUN: bolt-opt %s -p 'convert-precision{keep_f32=conv1,square,less}' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not bolt-opt %s -p 'convert-precision{keep_f32=conv}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not bolt-opt %s -p 'convert-precision{keep_f32=folded}' 2>&1 | filecheck %s --check-prefix=FOLDED
// RUN: not bolt-opt %s -p 'convert-precision{keep_f32=count}' 2>&1 | filecheck %s --check-prefix=NOFLOAT

// UNKNOWN: error: keep-f32: no op named 'conv' is left when precision is chosen (it is not in the model, or an earlier pass folded it into another op, as a BatchNormalization into its conv); near matches: 'conv1'
// FOLDED: error: keep-f32: op 'folded' was folded into constants at compile time; nothing computes it when the model runs
// NOFLOAT: error: keep-f32: op 'count' (graph.add) has no float operand or result; there is nothing to keep in f32

// STATS:      convert-precision
// STATS-DAG:  3 ops kept in f32
// STATS-DAG:  3 casts around f32 ops
// STATS-DAG:  5 casts inserted
// STATS-DAG:  2 weights converted

// The kept conv reads its input through a cast to f32, its weight unconverted, and its
// own f32 copy of the bias the add shares; its result goes back to f16 for the sigmoid.
// CHECK-LABEL: func.func @conv_between
// BF16-LABEL:  func.func @conv_between
func.func @conv_between(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // CHECK-NEXT: %[[X:.*]] = graph.cast %{{.*}} : tensor<1x2x3x3xf32> to tensor<1x2x3x3xf16>
  // CHECK-NEXT: %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<1x2x1x1xf32>
  // CHECK-NEXT: %[[B16:.*]] = graph.constant dense<1.000000e+00> : tensor<1xf16>
  // CHECK-NEXT: %[[B32:.*]] = graph.constant dense<1.000000e+00> : tensor<1xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[X]] : tensor<1x2x3x3xf16>
  // CHECK-NEXT: %[[RIN:.*]] = graph.cast %[[R]] : tensor<1x2x3x3xf16> to tensor<1x2x3x3xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.conv2d %[[RIN]], %[[W]], %[[B32]] : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[COUT:.*]] = graph.cast %[[C]] : tensor<1x1x3x3xf32> to tensor<1x1x3x3xf16>
  // CHECK-NEXT: %[[S:.*]] = graph.sigmoid %[[COUT]] : tensor<1x1x3x3xf16>
  // CHECK-NEXT: %[[A:.*]] = graph.add %[[S]], %[[B16]] : (tensor<1x1x3x3xf16>, tensor<1xf16>) -> tensor<1x1x3x3xf16>
  // CHECK-NEXT: %[[Y:.*]] = graph.cast %[[A]] : tensor<1x1x3x3xf16> to tensor<1x1x3x3xf32>
  // CHECK-NEXT: func.return %[[Y]] : tensor<1x1x3x3xf32>
  // A name with '/' quoted; bf16 around the kept sigmoid.
  // BF16:      %[[C:.*]] = graph.conv2d {{.*}} -> tensor<1x1x3x3xbf16>
  // BF16-NEXT: %[[CIN:.*]] = graph.cast %[[C]] : tensor<1x1x3x3xbf16> to tensor<1x1x3x3xf32>
  // BF16-NEXT: %[[S:.*]] = graph.sigmoid %[[CIN]] : tensor<1x1x3x3xf32>
  // BF16-NEXT: %[[SOUT:.*]] = graph.cast %[[S]] : tensor<1x1x3x3xf32> to tensor<1x1x3x3xbf16>
  // BF16-NEXT: graph.add %[[SOUT]], %{{.*}} : (tensor<1x1x3x3xbf16>, tensor<1xbf16>) -> tensor<1x1x3x3xbf16>
  %w = graph.constant dense<[[[[0.5]], [[-0.25]]]]> : tensor<1x2x1x1xf32>
  %b = graph.constant dense<1.0> : tensor<1xf32>
  %0 = graph.relu %x : tensor<1x2x3x3xf32> loc("relu0")
  %1 = graph.conv2d %0, %w, %b : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32> loc("conv1")
  %2 = graph.sigmoid %1 : tensor<1x1x3x3xf32> loc("/head/Sigmoid")
  %3 = graph.add %2, %b : (tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32> loc("add")
  func.return %3 : tensor<1x1x3x3xf32>
}

// At the interface: the kept square reads the f32 argument itself and is returned as
// it is; the kept comparison takes the integer input cast straight to f32 (the model's
// own cast), not through f16.
// CHECK-LABEL: func.func @at_the_interface
func.func @at_the_interface(%x: tensor<4xf32>, %n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  // CHECK-NEXT: %[[X16:.*]] = graph.cast %[[X:.*]] : tensor<4xf32> to tensor<4xf16>
  // CHECK-NEXT: %[[SQ:.*]] = graph.mul %[[X]], %[[X]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[NEG:.*]] = graph.neg %[[X16]] : tensor<4xf16>
  // CHECK-NEXT: %[[N:.*]] = graph.cast %{{.*}} : tensor<4xi32> to tensor<4xf32>
  // CHECK-NEXT: %[[LT:.*]] = graph.less %[[N]], %[[SQ]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK-NEXT: %[[NEG32:.*]] = graph.cast %[[NEG]] : tensor<4xf16> to tensor<4xf32>
  // CHECK-NEXT: func.return %[[SQ]], %[[NEG32]], %[[LT]] : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
  %0 = graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("square")
  %1 = graph.neg %x : tensor<4xf32> loc("neg")
  %2 = graph.cast %n : tensor<4xi32> to tensor<4xf32> loc("to_float")
  %3 = graph.less %2, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1> loc("less")
  func.return %0, %1, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}

// What cannot be kept: a name only constants carry (a node folded at compile time), and
// an op with no float tensor.
// CHECK-LABEL: func.func @not_keepable
func.func @not_keepable(%n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %c = graph.constant dense<2.0> : tensor<4xf32> loc("folded")
  %one = graph.constant dense<1> : tensor<4xi32>
  %0 = graph.add %n, %one : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32> loc("count")
  func.return %c, %0 : tensor<4xf32>, tensor<4xi32>
}
