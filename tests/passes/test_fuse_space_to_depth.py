"""fuse-space-to-depth: the cast, pads and layout changes around op.space_to_depth fold
into it and the module computes the same outputs (bit for bit: the fused op rounds once,
as the cast did). On what the default pipeline makes of blocked stems (odd sizes, crops,
f16 / bf16 / f32, batch sizes), the stem conv then reads one op.space_to_depth of the
model's input."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.ir import parse_module
from boltir.passes import statistics
from boltir.passes.fuse_space_to_depth import FuseSpaceToDepthPass
from boltir.pipelines import (
    available_passes,
    graph_passes,
    parse_pipeline_spec,
    run_passes,
)
from tests.passes.equivalence import assert_equivalent

PASS = FuseSpaceToDepthPass()
EXACT = 1e-12


def fused(module, rng):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, tolerance=EXACT, trials=2)
    return after, collected


def data_ops(module) -> list[str]:
    return [op.name for op in find_entry(module).body.ops if op.name not in ("op.constant", "func.return")]


STEM = """
func.func @main(%x: tensor<2x3x17x20xf32>) -> tensor<2x10x11x16xf16> {
  %0 = op.cast %x : tensor<2x3x17x20xf32> to tensor<2x3x17x20xf16>
  %1 = op.pad %0 {pads = array<i64: 0, 0, 3, 1, 0, 0, 0, 1>} : tensor<2x3x17x20xf16> -> tensor<2x3x20x22xf16>
  %2 = op.space_to_depth %1 {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW"} : tensor<2x3x20x22xf16> -> tensor<2x12x10x11xf16>
  %3 = op.layout_transform %2 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x12x10x11xf16> -> tensor<2x10x11x12xf16>
  %4 = op.pad %3 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 4>} : tensor<2x10x11x12xf16> -> tensor<2x10x11x16xf16>
  func.return %4 : tensor<2x10x11x16xf16>
}
"""

NHWC_INPUT = """
func.func @main(%x: tensor<3x11x10x3xf32>) -> tensor<3x5x6x16xbf16> {
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    %t = arith.truncf %e : f32 to bf16
    op.yield %t : bf16
  } : (tensor<3x11x10x3xf32>) -> tensor<3x11x10x3xbf16>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 3, 1, 2>} : tensor<3x11x10x3xbf16> -> tensor<3x3x11x10xbf16>
  %2 = op.pad %1 {pads = array<i64: 0, 0, 1, 1, 0, 0, -2, 1>} : tensor<3x3x11x10xbf16> -> tensor<3x3x10x12xbf16>
  %3 = op.space_to_depth %2 {blocksize = 2 : i64, layout = "NCHW", result_layout = "NCHW"} : tensor<3x3x10x12xbf16> -> tensor<3x12x5x6xbf16>
  %4 = op.layout_transform %3 {perm = array<i64: 0, 2, 3, 1>} : tensor<3x12x5x6xbf16> -> tensor<3x5x6x12xbf16>
  %5 = op.pad %4 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 4>} : tensor<3x5x6x12xbf16> -> tensor<3x5x6x16xbf16>
  func.return %5 : tensor<3x5x6x16xbf16>
}
"""

CAST_AFTER_TO_NCHW = """
func.func @main(%x: tensor<1x8x8x2xf64>) -> tensor<1x8x4x4xf16> {
  %0 = op.space_to_depth %x {blocksize = 2 : i64} : tensor<1x8x8x2xf64> -> tensor<1x4x4x8xf64>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x8xf64> -> tensor<1x8x4x4xf64>
  %2 = op.cast %1 : tensor<1x8x4x4xf64> to tensor<1x8x4x4xf16>
  func.return %2 : tensor<1x8x4x4xf16>
}
"""


@pytest.mark.parametrize(
    ("text", "stats"),
    [
        (STEM, {"pads fused": 2, "casts fused": 1, "layout transforms fused": 1}),
        (NHWC_INPUT, {"pads fused": 2, "casts fused": 1, "layout transforms fused": 2}),
        (CAST_AFTER_TO_NCHW, {"casts fused": 1, "layout transforms fused": 1}),
    ],
)
def test_chains_fold_into_one_op(rng, text, stats):
    assert_one_op_reads_the_input(rng, text, stats)


def assert_one_op_reads_the_input(rng, text: str, stats: dict[str, int]):
    """The chain in `text` folds into one op.space_to_depth that reads the function's
    argument, with these statistics; returns that op."""
    module = parse_module(text, "test.mlir")
    after, collected = fused(module, rng)
    assert data_ops(after) == ["op.space_to_depth"]
    blocking = find_entry(after).body.ops.first
    assert blocking.input is find_entry(after).body.block.args[0]
    for what, count in stats.items():
        assert collected.get(PASS.name, what) == count, what
    return blocking


def test_shared_values_stay(rng):
    """A cast with another user and a blocked result with two users are left as they are."""
    text = """
func.func @main(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x8x8xf16>, tensor<1x4x4x12xf16>, tensor<1x12x4x4xf16>) {
  %0 = op.cast %x : tensor<1x3x8x8xf32> to tensor<1x3x8x8xf16>
  %1 = op.space_to_depth %0 {blocksize = 2 : i64, layout = "NCHW"} : tensor<1x3x8x8xf16> -> tensor<1x4x4x12xf16>
  %2 = op.layout_transform %1 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x12xf16> -> tensor<1x12x4x4xf16>
  func.return %0, %1, %2 : tensor<1x3x8x8xf16>, tensor<1x4x4x12xf16>, tensor<1x12x4x4xf16>
}
"""
    module = parse_module(text, "test.mlir")
    before = str(module)
    after, collected = fused(module, rng)
    assert str(after) == before
    assert not collected.counters.get(PASS.name)


def stem_model(rng, *, batch, size, kernel, pads, channels=3, stride=2):
    b = ModelBuilder()
    x = b.input("image", (batch, channels, *size))
    w = b.constant("conv1.weight", rng.standard_normal((8, channels, kernel, kernel)).astype(np.float32))
    c = b.constant("conv1.bias", rng.standard_normal(8).astype(np.float32))
    y = b.insert(graph.Conv2dOp(x, w, c, strides=(stride, stride), pads=pads)).output
    return b.finish([b.insert(graph.ReluOp(y)).output])


def to_pad_alignment(module, dtype: str):
    """The default pipeline up to pad-alignment: what fuse-space-to-depth sees."""
    spec = ",".join([*graph_passes(dtype), "lower-graph-to-op", "pad-alignment{arch=sm90}"])
    run_passes(module, parse_pipeline_spec(spec, available_passes()), boltir.make_context())
    return module


@pytest.mark.parametrize(
    ("dtype", "batch", "size", "kernel", "pads"),
    [
        ("f16", 2, (32, 32), 7, (3, 3, 3, 3)),
        ("f16", 1, (17, 15), 3, (1, 1, 1, 1)),
        ("bf16", 3, (11, 11), 2, (0, 0, 0, 0)),  # a crop at the end
        ("f32", 2, (13, 10), 5, (2, 1, 0, 2)),
        ("f16", 1, (9, 12), 4, (1, 2, 2, 1)),
    ],
)
def test_blocked_stems_from_the_pipeline(rng, dtype, batch, size, kernel, pads):
    module = to_pad_alignment(stem_model(rng, batch=batch, size=size, kernel=kernel, pads=pads), dtype)
    after, collected = fused(module, rng)
    assert data_ops(after)[:2] == ["op.space_to_depth", "op.conv2d"]
    blocking = next(op for op in after.walk() if isinstance(op, ops.SpaceToDepthOp))
    conv = next(op for op in after.walk() if isinstance(op, ops.Conv2dOp))
    assert blocking.input is find_entry(after).body.block.args[0] and conv.input is blocking.output
    assert blocking.prop_value("layout") == "NCHW" and blocking.prop_value("result_layout") == "NHWC"
    alignment = 4 if dtype == "f32" else 8
    assert blocking.result_channels() == -(-12 // alignment) * alignment
    assert str(blocking.output.type.element_type) == dtype
    assert collected.get(PASS.name, "casts fused") == (dtype != "f32")


VGG_INPUT = """
func.func @main(%x: tensor<2x3x9x7xf32>) -> tensor<2x9x7x4xf16> {
  %0 = op.elementwise (%x) {
  ^bb0(%e: f32):
    %t = arith.truncf %e : f32 to f16
    op.yield %t : f16
  } : (tensor<2x3x9x7xf32>) -> tensor<2x3x9x7xf16>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x3x9x7xf16> -> tensor<2x9x7x3xf16>
  %2 = op.pad %1 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : tensor<2x9x7x3xf16> -> tensor<2x9x7x4xf16>
  func.return %2 : tensor<2x9x7x4xf16>
}
"""

CAST_THEN_LAYOUT = """
func.func @main(%x: tensor<1x5x6x4xf32>) -> tensor<1x6x4x5xbf16> {
  %0 = op.cast %x : tensor<1x5x6x4xf32> to tensor<1x5x6x4xbf16>
  %1 = op.layout_transform %0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x5x6x4xbf16> -> tensor<1x6x4x5xbf16>
  func.return %1 : tensor<1x6x4x5xbf16>
}
"""

LAYOUT_THEN_PAD = """
func.func @main(%x: tensor<3x3x4x5xf32>) -> tensor<3x4x5x4xf32> {
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 3, 1>} : tensor<3x3x4x5xf32> -> tensor<3x4x5x3xf32>
  %1 = op.pad %0 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : tensor<3x4x5x3xf32> -> tensor<3x4x5x4xf32>
  func.return %1 : tensor<3x4x5x4xf32>
}
"""


@pytest.mark.parametrize(
    ("text", "stats"),
    [
        (VGG_INPUT, {"image inputs blocked by 1": 1, "casts fused": 1, "pads fused": 1}),
        (CAST_THEN_LAYOUT, {"image inputs blocked by 1": 1, "casts fused": 1}),
        (LAYOUT_THEN_PAD, {"image inputs blocked by 1": 1, "pads fused": 1}),
    ],
)
def test_unblocked_image_inputs_fold_into_one_op(rng, text, stats):
    """An image input's cast, NCHW -> NHWC transpose and channel pad become one op.space_to_depth
    of blocksize 1 that reads the model's input (bit for bit the same)."""
    assert assert_one_op_reads_the_input(rng, text, stats).prop_value("blocksize") == 1


def test_layout_transforms_that_fold_nothing_or_are_wide_stay(rng):
    """A lone transpose, a transpose back to NCHW, and one whose pixel is wider than one
    thread's stores (64 f16 channels) stay on the layout kernel."""
    text = """
func.func @main(%x: tensor<1x3x4x4xf16>, %y: tensor<1x64x4x4xf32>, %z: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf16>, tensor<1x4x4x64xf16>, tensor<1x3x4x4xf16>) {
  %0 = op.layout_transform %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x4xf16> -> tensor<1x4x4x3xf16>
  %1 = op.cast %y : tensor<1x64x4x4xf32> to tensor<1x64x4x4xf16>
  %2 = op.layout_transform %1 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x64x4x4xf16> -> tensor<1x4x4x64xf16>
  %3 = op.cast %z : tensor<1x4x4x3xf32> to tensor<1x4x4x3xf16>
  %4 = op.layout_transform %3 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x3xf16> -> tensor<1x3x4x4xf16>
  func.return %0, %2, %4 : tensor<1x4x4x3xf16>, tensor<1x4x4x64xf16>, tensor<1x3x4x4xf16>
}
"""
    module = parse_module(text, "test.mlir")
    before = str(module)
    after, collected = fused(module, rng)
    assert str(after) == before
    assert not collected.counters.get(PASS.name)


@pytest.mark.parametrize(("dtype", "batch", "size"), [("f16", 2, (13, 11)), ("bf16", 1, (8, 9)), ("f32", 3, (7, 7))])
def test_stride_one_stems_from_the_pipeline(rng, dtype, batch, size):
    """VGG's stem (3×3, stride 1, C = 3): the pipeline's cast, transpose and channel pad
    reach the conv as one blocksize-1 op.space_to_depth of the model's input."""
    module = to_pad_alignment(stem_model(rng, batch=batch, size=size, kernel=3, pads=(1, 1, 1, 1), stride=1), dtype)
    after, collected = fused(module, rng)
    assert data_ops(after)[:2] == ["op.space_to_depth", "op.conv2d"]
    blocking = next(op for op in after.walk() if isinstance(op, ops.SpaceToDepthOp))
    assert blocking.prop_value("blocksize") == 1 and blocking.input is find_entry(after).body.block.args[0]
    assert blocking.result_channels() == 4
    assert collected.get(PASS.name, "image inputs blocked by 1") == 1
