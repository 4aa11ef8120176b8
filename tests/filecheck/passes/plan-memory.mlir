// RUN: bolt-opt %s --split-input-file -p 'select-kernels{selector=heuristic arch=sm80},lower-op-to-cutlass,plan-memory' --elide-weights | filecheck %s
// RUN: bolt-opt %s --split-input-file -p 'select-kernels{selector=heuristic arch=sm80},lower-op-to-cutlass,plan-memory' | bolt-opt --split-input-file -p plan-memory | filecheck %s
// RUN: bolt-opt %s --split-input-file -p 'select-kernels{selector=heuristic arch=sm80},lower-op-to-cutlass,plan-memory' --pass-stats -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// plan-memory gives every non-constant result of @main a 256-byte-aligned offset in one
// arena (`memory`, one offset per result) and @main the arena's size (`arena_bytes`).
// Values live at the same time never share bytes; a dead value's bytes are reused; an
// op.reshape shares its input's bytes; an elementwise op writes over an input that dies
// there. Planning the output again gives the same offsets (second RUN line).

// The statistics add up over the five modules of this file.
// STATS:      plan-memory
// STATS-NEXT: {{^ +}}53504 peak arena bytes
// STATS-NEXT: {{^ +}}121088 bytes if every buffer were separate
// STATS-NEXT: {{^ +}}25 buffers
// STATS-NEXT: {{^ +}}5 in-place reuses
// STATS-NEXT: {{^ +}}2 reshape aliases
// STATS-NOT:  {{[0-9]}}

// == dead buffers reused ==

// A chain of kernels needs two buffers: each result goes where the value before its input
// was. The GEMMs are cutlass instances by now; they get their offsets like any op.
// CHECK-LABEL: func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> attributes {arena_bytes = 16384 : i64}
// CHECK:       %0 = op.softmax %x {memory = array<i64: [[A:0]]>
// CHECK-NEXT:  %1 = cutlass.gemm %0, %w {{{.*}}memory = array<i64: [[B:8192]]>}
// CHECK-NEXT:  %2 = op.softmax %1 {memory = array<i64: [[A]]>
// CHECK-NEXT:  %3 = cutlass.gemm %2, %w {{{.*}}memory = array<i64: [[B]]>}
// CHECK-NEXT:  func.return %3
func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %w = op.constant dense<0.5> : tensor<64x64xf16>
  %0 = op.softmax %x {axis = 1 : i64} : tensor<64x64xf16>
  %1 = op.gemm %0, %w {layout_b = "col"} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %2 = op.softmax %1 {axis = 1 : i64} : tensor<64x64xf16>
  %3 = op.gemm %2, %w {layout_b = "col"} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %3 : tensor<64x64xf16>
}

// -----

// == overlapping live ranges ==

// %0 is read again by the concat, so nothing in between may take its bytes: %1, %2 and
// %3 each get bytes apart from %0's, and from each other's where they coexist (%2 reads
// %1, %3 reads %2). Buffers are placed largest first: the two 8 KiB ones go first, %6
// into %0's bytes once %0 is dead. Sizes are rounded up to 256 bytes: %5's 100 bytes
// take 256, and the arena ends at 16384 + 256.
// CHECK-LABEL: func.func @main(%x: tensor<4x256xf32>, %s: tensor<25xf32>) -> (tensor<8x256xf32>, tensor<25xf32>) attributes {arena_bytes = 16640 : i64}
// CHECK:       %0 = op.softmax %x {memory = array<i64: [[LONG:8192]]>
// CHECK-NEXT:  %1 = op.softmax %0 {memory = array<i64: 0>
// CHECK-NEXT:  %2 = op.softmax %1 {memory = array<i64: 4096>
// CHECK-NEXT:  %3 = op.softmax %2 {memory = array<i64: 12288>
// CHECK-NEXT:  %4 = op.concat %3, %0 {memory = array<i64: 0>
// CHECK-NEXT:  %5 = op.softmax %s {memory = array<i64: 16384>
// CHECK-NEXT:  %6 = op.softmax %4 {memory = array<i64: [[LONG]]>
// CHECK-NEXT:  func.return %6, %5
func.func @main(%x: tensor<4x256xf32>, %s: tensor<25xf32>) -> (tensor<8x256xf32>, tensor<25xf32>) {
  %0 = op.softmax %x {axis = 1 : i64} : tensor<4x256xf32>
  %1 = op.softmax %0 {axis = 0 : i64} : tensor<4x256xf32>
  %2 = op.softmax %1 {axis = 1 : i64} : tensor<4x256xf32>
  %3 = op.softmax %2 {axis = 0 : i64} : tensor<4x256xf32>
  %4 = op.concat %3, %0 {axis = 0 : i64} : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<8x256xf32>
  %5 = op.softmax %s {axis = 0 : i64} : tensor<25xf32>
  %6 = op.softmax %4 {axis = 0 : i64} : tensor<8x256xf32>
  func.return %6, %5 : tensor<8x256xf32>, tensor<25xf32>
}

// -----

// == in-place elementwise ==

// An elementwise op writes over the first input of its own shape and element size that
// nobody reads afterwards: not %0 at %1 (%2 reads it), but %0 at %2, %2 at %3 (the
// broadcast %s is an argument anyway), %4 at %5, %5 at the op.elementwise. An argument is
// never written (%4 gets %1's dead bytes), nor is a value of another element size (the
// cast to f16 gets its own buffer).
// CHECK-LABEL: func.func @main
// CHECK-SAME:  attributes {arena_bytes = 8192 : i64}
// CHECK:       %0 = op.softmax %x {memory = array<i64: [[X:0]]>
// CHECK-NEXT:  %1 = op.unary tanh %0 {memory = array<i64: [[Y:4096]]>}
// CHECK-NEXT:  %2 = op.binary add %0, %1 {memory = array<i64: [[X]]>}
// CHECK-NEXT:  %3 = op.binary mul %s, %2 {memory = array<i64: [[X]]>}
// CHECK-NEXT:  %4 = op.unary relu %x {memory = array<i64: [[Y]]>}
// CHECK-NEXT:  %5 = op.binary add %3, %4 {memory = array<i64: [[X]]>}
// CHECK-NEXT:  %6 = op.elementwise (%5) attributes {memory = array<i64: [[X]]>}
// CHECK:       %7 = op.cast %6 {memory = array<i64: [[Y]]>}
// CHECK-NEXT:  func.return %7
func.func @main(%x: tensor<4x256xf32>, %s: tensor<256xf32>) -> tensor<4x256xf16> {
  %0 = op.softmax %x {axis = 1 : i64} : tensor<4x256xf32>
  %1 = op.unary tanh %0 : tensor<4x256xf32>
  %2 = op.binary add %0, %1 : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %3 = op.binary mul %s, %2 : (tensor<256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %4 = op.unary relu %x : tensor<4x256xf32>
  %5 = op.binary add %3, %4 : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %6 = op.elementwise (%5) {
  ^bb0(%a: f32):
    %b = arith.negf %a : f32
    op.yield %b : f32
  } : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %7 = op.cast %6 : tensor<4x256xf32> to tensor<4x256xf16>
  func.return %7 : tensor<4x256xf16>
}

// -----

// == reshape alias ==

// A reshape of a planned value shares its bytes: %1 is %0 seen as 1024 values, %4 is %2.
// Writing over %0 in place at %2 would change what %1 reads later, so %2 does not; %3
// then writes over %1 (the shared buffer dies there). A reshape of an argument has no
// arena bytes to share: it gets its own, and the runtime copies.
// CHECK-LABEL: func.func @main
// CHECK-SAME:  attributes {arena_bytes = 12288 : i64}
// CHECK:       %r = op.reshape %x {memory = array<i64: 0>}
// CHECK-NEXT:  %0 = op.softmax %x {memory = array<i64: [[S:4096]]>
// CHECK-NEXT:  %1 = op.reshape %0 {memory = array<i64: [[S]]>}
// CHECK-NEXT:  %2 = op.unary relu %0 {memory = array<i64: [[R:8192]]>}
// CHECK-NEXT:  %3 = op.binary add %1, %r {memory = array<i64: [[S]]>}
// CHECK-NEXT:  %4 = op.reshape %2 {memory = array<i64: [[R]]>}
// CHECK-NEXT:  func.return %3, %4
func.func @main(%x: tensor<4x256xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %r = op.reshape %x : tensor<4x256xf32> -> tensor<1024xf32>
  %0 = op.softmax %x {axis = 1 : i64} : tensor<4x256xf32>
  %1 = op.reshape %0 : tensor<4x256xf32> -> tensor<1024xf32>
  %2 = op.unary relu %0 : tensor<4x256xf32>
  %3 = op.binary add %1, %r : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %4 = op.reshape %2 : tensor<4x256xf32> -> tensor<1024xf32>
  func.return %3, %4 : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// == nothing to plan ==

// Arguments and constants live outside the arena: an empty arena, nothing annotated.
// CHECK-LABEL: func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {arena_bytes = 0 : i64}
// CHECK-NOT:   memory
// CHECK:       func.return %x, %c
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = op.constant dense<1.0> : tensor<4xf32>
  func.return %x, %c : tensor<4xf32>, tensor<4xf32>
}
