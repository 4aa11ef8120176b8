"""A MobileNetV2-like model (inverted residual blocks: 1x1 expansion, depthwise 3x3 with
ReLU6, 1x1 projection, residual adds) through the whole pipeline: every depthwise conv
lowers to our own kernel (depthwise_direct) with its epilogue fused, the host program
launches it with that generator, the roofline and the manifest count it as a conv, and the
lowered module computes what the interpreter computes on the imported graph. At this
model's batch 1 the default pipeline runs each block as one fused launch
(fuse-depthwise-pointwise, one wave); the kernel's own tests lower it without that pass, as
the default pipeline leaves a batch past one wave.

The staged window (a tile's `ahead`, 1 to 3): its tile in the choice's three integers, its
rules, its instances beside the row walk's (unchanged), its tiles for MobileNetV2's big
layers, a model built with it; the `slow` test compiles a unit of staged instances with the
real nvcc (skipped without it). On the GPU: `python3 -m bench.check_depthwise` checks them
against the interpreter, `--timing` times them.
"""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir import compiler
from boltir.backends.cuda.codegen import depthwise_kernels
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.roofline import module_roofline
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import find_entry
from boltir.ir import parse_module
from boltir.pipelines import without_passes
from boltir.target import get_target
from boltir.tools import bolt_opt
from tests.frontends import onnx_models
from tests.passes.equivalence import random_inputs, relative_error
from tests.support.op_modules import conv_text
from tests.support.own_kernel_units import assert_unit_compiles, mark, the_conv

NO_DATABASE = "/nonexistent/tuning.sqlite"


def lower_unfused(model, arch: str = "sm90") -> compiler.LoweredModel:
    """The default pipeline without fuse-depthwise-pointwise."""
    pipeline = compiler.full_pipeline(dtype="f16", arch=arch, cutlass=3 if arch == "sm90" else 2, tuning_db=NO_DATABASE)
    return compiler.lower(model, arch=arch, dtype="f16", pipeline=without_passes(pipeline, ["fuse-depthwise-pointwise"]))


def depthwise_convs(module) -> list[ops.Conv2dOp]:
    return [op for op in module.walk() if isinstance(op, ops.Conv2dOp) and op.prop_value("groups") > 1]


@pytest.fixture(scope="module")
def mobilenet():
    return onnx_models.mobilenet_v2_onnx(np.random.default_rng(0))


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_every_depthwise_conv_runs_on_our_kernel(mobilenet, arch):
    lowered = lower_unfused(mobilenet, arch)
    module = lowered.module
    convs = depthwise_convs(module)
    assert len(convs) == 5
    assert not any(isinstance(op, cutlass.DepthwiseConv2dFpropOp) for op in module.walk())
    for conv in convs:
        assert depthwise_kernels.supports(conv), depthwise_kernels.unsupported_reason(conv)
        # ReLU6 (and BN's bias) fused: nothing elementwise reads the conv
        assert conv.epilogue.first_activation.kind == "clip" and conv.epilogue.has_bias
        assert not any(isinstance(use.operation, ops.ElementwiseOp) for use in conv.output.uses)
    assert lowered.statistics.get("lower-op-to-cutlass", "depthwise_direct kernels (op.conv2d kept)") == 5

    program = build_program(module)
    steps = [step for step in program.steps if step.family == "depthwise_direct"]
    assert [step.op for step in steps] == convs and not any(step.fallback for step in steps)
    units = {job.name: job for job in program.units}
    for step in steps:
        # our kernels follow the build: sm_90a in a Hopper build (for PDL), as the host unit
        assert units[step.kernel].arch == ("sm80" if arch == "sm80" else units["host"].arch)
        assert f'extern "C" int {step.kernel}(' in units[step.kernel].source
    assert not program.fallbacks


def test_the_roofline_and_the_manifest_count_it_as_a_conv(mobilenet):
    lowered = lower_unfused(mobilenet)
    rows = [row for row in module_roofline(lowered.module, get_target("sm90")) if row.family == "depthwise_direct"]
    convs = depthwise_convs(lowered.module)
    assert len(rows) == len(convs) == 5
    for row, conv in zip(rows, convs, strict=True):
        outputs = int(np.prod(conv.output.type.get_shape()))
        assert row.op == "op.conv2d" and row.flops == 2 * outputs * 9 and not row.note
        moved = sum(int(np.prod(v.type.get_shape())) * 2 for v in (conv.input, conv.filter, conv.bias, conv.output))
        assert row.bytes == moved
    program = build_program(lowered.module)
    built = compiler.BuiltModel(lowered, program, [], [None] * len(program.steps))
    manifest = compiler.build_manifest(built, arch="sm90", dtype="f16", collected=lowered.statistics)
    launches = [launch for launch in manifest["launches"] if launch["family"] == "depthwise_direct"]
    assert [(launch["flops"], launch["bytes"]) for launch in launches] == [(row.flops, row.bytes) for row in rows]
    assert all(not launch["fallback"] and "cutlass" not in launch for launch in launches)


@pytest.mark.parametrize("fused", [True, False])
def test_the_lowered_model_computes_what_the_graph_does(mobilenet, rng, fused):
    """The default build (its blocks fused at batch 1) and the build without the fusion."""
    before = import_model(mobilenet)
    after = (compiler.lower(mobilenet, arch="sm90", dtype="f16", tuning_db=NO_DATABASE) if fused else
             lower_unfused(mobilenet)).module
    assert any(isinstance(op, ops.DepthwisePointwiseConv2dOp) for op in after.walk()) is fused
    inputs = random_inputs(before, rng)
    (expected,) = boltir.interp.run(before, inputs)
    entry = find_entry(after)
    cast = {name: value.astype(np.float32) for name, value in inputs.items()}
    (got,) = boltir.interp.run(after, {name: cast[name] for name in cast if name in boltir.interp.input_names(entry)})
    assert relative_error(got.astype(np.float32), expected) < 2e-2


# ------------------------------------------------------------------ the staged window

DirectTile = depthwise_kernels.DirectTile
SMS = 132
MOBILENET_BIG = [(112, 32, 1), (112, 96, 2), (56, 144, 1), (56, 144, 2), (28, 192, 1)]
"""MobileNetV2's depthwise convs that move 16 MB or more at batch 32: (side, C, stride)."""


def dw_conv(n=2, h=12, w=12, c=32, r=3, stride=1, element="f16", epilogue="bias, clip(0.0, 6.0)", **window):
    return the_conv(parse_module(conv_text(n, h, w, c, c, r, r, stride=stride, element=element, epilogue=epilogue,
                                           depthwise=True, **window)))


def staged(op, tile):
    """The op, marked for our kernel with `tile` (as select-kernels marks it)."""
    return mark(op, depthwise_kernels, tile, alignment=(tile.vector,) * 3)


def test_a_staged_tile_rides_in_the_choices_three_integers():
    tile = DirectTile(4, 4, 8, ahead=2)
    assert tile.as_tile().threadblock == (204, 4, 8) == tile.as_tile().warp
    assert DirectTile.of(tile.as_tile()) == tile and tile.describe() == "4x4x8s2"
    # every older choice keeps its meaning: the row walk
    assert DirectTile.of(DirectTile(4, 4, 8).as_tile()) == DirectTile(4, 4, 8) == DirectTile(4, 4, 8, ahead=0)
    op = staged(dw_conv(32, 56, 56, 144), tile)
    assert depthwise_kernels.marked_tile(op) == tile
    assert DirectTile.of(KernelChoice.from_attr(op.attributes[KERNEL_ATTR]).tile) == tile
    assert depthwise_kernels.instance_key(op).startswith("depthwise_direct tile=4x4x8s2 ")
    walk = staged(dw_conv(32, 56, 56, 144), DirectTile(4, 4, 8))
    assert depthwise_kernels.kernel_name(op) != depthwise_kernels.kernel_name(walk)


@pytest.mark.parametrize(("shape", "window", "rows"), [
    (dict(), dict(), (2, 1)),                        # 3x3/1: keep 2 rows, copy 1
    (dict(stride=2), dict(), (1, 2)),
    (dict(r=5, stride=2), dict(), (3, 2)),
    (dict(), dict(dilation=2, pad=2), (0, 3)),       # DH does not divide SH: nothing shared
    (dict(stride=2), dict(dilation=2, pad=2), (2, 1)),
])
def test_the_rows_a_staged_row_shares_and_copies(shape, window, rows):
    op = dw_conv(**shape, **window)
    assert depthwise_kernels.window_rows(op) == rows
    keep, new = rows
    r, stride = shape.get("r", 3), shape.get("stride", 1)
    cols = 3 * stride + (r - 1) * window.get("dilation", 1) + 1  # a strip of 4 columns
    assert depthwise_kernels.shared_bytes(op, DirectTile(2, 4, 8, ahead=2)) == (r + 2 * new) * cols * 128 * 16
    assert depthwise_kernels.shared_bytes(op, DirectTile(2, 4, 8)) == 0


def test_the_row_walk_instance_has_no_stage_and_the_staged_one_copies_ahead():
    walk = depthwise_kernels.emit_instance(staged(dw_conv(32, 112, 112, 32), DirectTile(1, 4, 8))).source
    assert "cp.async" not in walk and "constexpr int AHEAD" not in walk
    assert "launch(kernel, 3136, kBlock, 0, stream, " in walk and "opt_in_shared_memory(kernel" not in walk
    op = staged(dw_conv(32, 112, 112, 32), DirectTile(4, 4, 8, ahead=2))
    source = depthwise_kernels.emit_instance(op).source
    ring = (3 + 2) * 6 * 128 * 16
    assert depthwise_kernels.shared_bytes(op, DirectTile(4, 4, 8, ahead=2)) == ring > 48 * 1024
    assert "constexpr int V = 8, TW = 4, TH = 4;" in source and "constexpr int AHEAD = 2;" in source
    assert f"static_assert(kSharedBytes == {ring}, " in source
    assert "cp.async.ca.shared.global" in source and 'cp.async.wait_group %0;\\n" ::"n"(AHEAD)' in source
    assert f"opt_in_shared_memory(kernel, {ring}, opted)" in source
    assert f"launch(kernel, {32 * 28 * 28 * 4 // 128}, kBlock, {ring}, stream, " in source
    # a ring within 48 KB launches without opting in
    small = depthwise_kernels.emit_instance(staged(dw_conv(32, 112, 112, 32), DirectTile(4, 2, 8, ahead=1))).source
    assert "opt_in_shared_memory(kernel" not in small and f"kBlock, {(3 + 1) * 4 * 128 * 16}, stream, " in small


@pytest.mark.parametrize(("op", "tile", "reason"), [
    (dw_conv(), DirectTile(2, 4, 8, ahead=4), "a tile stages 0 to 3 rows ahead, not 4"),
    (dw_conv(c=3), DirectTile(2, 4, 1, ahead=2), "a staged vector of 1 channels is under the 4 bytes cp.async copies"),
    (dw_conv(stride=2), DirectTile(2, 4, 8, ahead=3),
     "3 rows ahead over 4 columns of 8 channels take 165888 bytes of shared memory, more than 81920"),
    (dw_conv(), DirectTile(0, 4, 8, ahead=1), "a thread walks 1 to 16 rows, not 0"),  # threadblock (100, 4, 8)
])
def test_staged_tiles_it_cannot_run(op, tile, reason):
    assert depthwise_kernels.unsupported_reason(staged(op, tile)) == reason


def test_a_staged_choice_it_cannot_run_is_one_line(tmp_path, capsys):
    op = staged(dw_conv(stride=2), DirectTile(2, 4, 8, ahead=3))
    path = tmp_path / "bad.mlir"
    path.write_text(str(op.parent_op().parent_op()))
    assert bolt_opt.main([str(path), "-p", "lower-op-to-cutlass"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err and len(lines) == 1
    assert lines[0].endswith("3 rows ahead over 4 columns of 8 channels take 165888 bytes of shared memory, more than 81920")


@pytest.mark.parametrize(("side", "c", "stride"), MOBILENET_BIG)
def test_staged_tiles_for_mobilenets_big_layers(side, c, stride):
    op = dw_conv(32, side, side, c, stride=stride)
    # the heuristic stages the convs of 32 MB or more (the four but 28² x 192's 19 MB) on sm90
    big = depthwise_kernels.moved_bytes(op) >= depthwise_kernels.STAGED_MIN_BYTES
    assert depthwise_kernels.default_tile(op, SMS).ahead == (2 if big else 0)
    assert depthwise_kernels.default_tile(op, SMS, staged=False).ahead == 0
    tile = depthwise_kernels.staged_tile(op, SMS)
    assert tile.ahead == 2 and tile.vector == 8 and tile.rows >= 2
    assert depthwise_kernels.shared_bytes(op, tile) <= depthwise_kernels.STAGED_RING_BYTES
    _, p, q, _ = op.output.type.get_shape()
    ctas = 32 * -(-p // tile.rows) * -(-q // tile.columns) * (c // tile.vector) / 128
    assert ctas >= 4 * SMS
    tiles = depthwise_kernels.staged_tiles(op, SMS)
    assert tiles[0] == tile and len(tiles) == len(set(tiles)) >= 5
    assert all(t.ahead and depthwise_kernels.tile_reason(op, t) is None for t in tiles)
    assert {t.ahead for t in tiles} >= {1, 2}


def test_a_model_builds_with_the_staged_window(mobilenet):
    """Every depthwise conv's choice set to its staged tile: the host program launches each
    with our generator, a distinct instance with its ring."""
    module = lower_unfused(mobilenet).module
    walks = {}
    for conv in depthwise_convs(module):
        walks[conv] = depthwise_kernels.kernel_name(conv)
        tile = depthwise_kernels.staged_tile(conv, SMS)
        assert tile is not None
        staged(conv, tile)
        assert depthwise_kernels.supports(conv), depthwise_kernels.unsupported_reason(conv)
    program = build_program(module)
    steps = [step for step in program.steps if step.family == "depthwise_direct"]
    assert len(steps) == 5 and not any(step.fallback for step in steps)
    units = {job.name: job for job in program.units}
    for step in steps:
        assert step.kernel != walks[step.op]
        assert "cp.async.ca.shared.global" in units[step.kernel].source


STAGED_COMPILED = [
    # MobileNetV2-like, a ring past 48 KB
    (dict(n=4, h=28, w=28, c=144), DirectTile(4, 4, 8, ahead=2)),
    # stride 2, bf16, residual and a second activation, three rows ahead
    (dict(n=2, h=29, w=29, c=96, stride=2, element="bf16", epilogue="bias, hardswish, residual = add, then relu"),
     DirectTile(3, 2, 8, ahead=1)),
    # dilation 2: no row shared (KEEP = 0)
    (dict(n=1, h=21, w=23, c=32, dilation=2, pad=2), DirectTile(3, 4, 4, ahead=2)),
    # f32 5x5, 4 channels a word
    (dict(n=1, h=9, w=9, c=20, r=5, element="f32", epilogue=""), DirectTile(3, 1, 4, ahead=3)),
    # 6 channels: 4-byte words; 7x7
    (dict(n=1, h=13, w=13, c=6, r=7, pad=3, epilogue="bias, silu"), DirectTile(3, 4, 2, ahead=2)),
]


@pytest.mark.slow
def test_staged_instances_compile_with_nvcc(tmp_path):
    op_list = [staged(dw_conv(**shape), tile) for shape, tile in STAGED_COMPILED]
    assert all(depthwise_kernels.supports(op) for op in op_list)
    assert_unit_compiles(depthwise_kernels, op_list, tmp_path)
