"""fuse-conv-space-to-depth and `op.space_to_depth_conv2d` (boltir/backends/cuda/passes/
fuse_conv_space_to_depth.py, the halo conv's image-blocking patch loads, the plain fallback's
blocked reads). Without a GPU: the op's interpreter against op.space_to_depth then
op.conv2d, the pass's interpreter equivalence on random inputs and what it leaves alone,
the kernel's reasons and instance, the numpy replay of the blocked patch stores against the
interpreter (tests/backends/test_halo_conv_kernels.py's replay), the roofline's counts, and
`slow` nvcc compiles of the halo instance (sm_90a) and the fallback.
bench/check_halo_conv.py runs the kernel on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.backends.cuda import roofline
from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen import halo_conv_kernels as hc
from boltir.backends.cuda.passes.fuse_conv_space_to_depth import FuseConvSpaceToDepthPass
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR
from boltir.dialects import op as ops
from boltir.ir import make_context, parse_module
from boltir.passes import statistics
from tests.backends.test_halo_conv_kernels import replay
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import blocked_stem_text as stem_text
from tests.support import own_kernel_units
from tests.support.own_kernel_units import SM90A, assert_fallback_compiles, assert_unit_compiles


def halo_marked(text: str, tile=(8, 2, 1)):
    return own_kernel_units.halo_marked(text, tile)


def fused(module, min_tiles: int = 0):
    """The module after the pass (`min_tiles` 0: the small test shapes fuse too)."""
    with statistics.collecting() as collected:
        FuseConvSpaceToDepthPass(min_tiles=min_tiles).apply(make_context(), module)
    return module, collected.get("fuse-conv-space-to-depth", "space-to-depth blockings fused into the halo conv")


def fused_op(text=None, tile=(8, 2, 1)) -> ops.SpaceToDepthConv2dOp:
    module, _ = fused(halo_marked(text or stem_text(), tile))
    return next(o for o in module.walk() if isinstance(o, ops.SpaceToDepthConv2dOp))


# ------------------------------------------------------------------ the op


def test_the_op_takes_the_blocked_shape_and_the_filters_element_type():
    op = fused_op()
    assert op.blocked_shape() == (1, 11, 18, 16) and op.blocked_channels() == 12
    assert op.conv_shape() == (1, 8, 15, 64) and op.output.type.element_type == op.filter.type.element_type


# ------------------------------------------------------------------ the pass


@pytest.mark.parametrize(("text", "tile"), [
    (stem_text(), (8, 2, 1)),
    (stem_text(n=2, h=14, w=20, pads=(3, 1, 1, 3)), (8, 1, 1)),     # uneven pads, two images, one-row tiles
    (stem_text(k=128, residual=True), (16, 2, 1)),                  # two channel blocks, a residual
    (stem_text(image="f16"), (8, 2, 2)),                            # an f16 image; the filter in registers
])
def test_a_halo_conv_and_its_blocked_input_become_one_op_computing_the_same(text, tile, rng):
    before = halo_marked(text, tile)
    after = assert_equivalent(before, [FuseConvSpaceToDepthPass(min_tiles=0), LowerOpToCutlassPass()], rng,
                              tolerance=1e-12)
    assert [o.name for o in after.walk() if o.name.startswith("op.") and o.name != "op.constant"] == [
        "op.space_to_depth_conv2d"]
    assert hc.supports(next(o for o in after.walk() if isinstance(o, ops.SpaceToDepthConv2dOp)))


@pytest.mark.parametrize(("text", "tile"), [
    (stem_text(users=2), (8, 2, 1)),                 # the blocked tensor is read by something else too
    (stem_text(layout="NHWC"), (8, 2, 1)),           # an NHWC image: the kernel blocks NCHW ones
    (stem_text(), (8, 2, 3)),                        # mode 3: two accumulator sets leave no registers for the patch
])
def test_what_it_leaves_alone(text, tile):
    module, count = fused(halo_marked(text, tile))
    assert count == 0 and any(isinstance(o, ops.SpaceToDepthOp) for o in module.walk())


def test_cutlass_convs_keep_their_blocked_input():
    module = parse_module(stem_text())
    SelectKernelsPass(arch="sm90", selector="heuristic", narrow_convs="cutlass").apply(make_context(), module)
    _, count = fused(module)
    assert count == 0 and any(isinstance(o, ops.SpaceToDepthOp) for o in module.walk())


@pytest.mark.parametrize(("n", "fuses"), [(32, True), (10, True), (9, False), (1, False)])
def test_resnet50s_stem_is_fused_where_each_cta_walks_two_tiles(n, fuses):
    """112 rows of 112 pixels in 56 two-row tiles an image: 560 tiles at batch 10 are at
    least 2 for each of the H200's 264 CTAs (528); 504 at batch 9 and 56 at batch 1 are not,
    and keep the space-to-depth kernel."""
    module = parse_module(stem_text(n=n, h=224, w=224))
    with statistics.collecting() as collected:
        for step in (SelectKernelsPass(arch="sm90", selector="heuristic"), FuseConvSpaceToDepthPass(), LowerOpToCutlassPass()):
            step.apply(make_context(), module)
    assert collected.get("fuse-conv-space-to-depth", "space-to-depth blockings fused into the halo conv") == int(fuses)
    kept = "halo_conv kernels (op.space_to_depth_conv2d kept)" if fuses else "halo_conv kernels (op.conv2d kept)"
    assert collected.get("lower-op-to-cutlass", kept) == 1
    assert any(isinstance(o, ops.SpaceToDepthOp) for o in module.walk()) is not fuses


def test_the_default_pipeline_runs_the_pass():
    from boltir.compiler import backend_passes

    passes = backend_passes("sm90", 3, "heuristic", "")
    assert passes.index("fuse-conv-space-to-depth") == passes.index("fuse-conv-pool") + 1


# ------------------------------------------------------------------ the kernel


def test_the_instance_blocks_the_image_and_takes_the_blocked_integers():
    op = fused_op()
    source = hc.emit_instance(op).source
    assert "constexpr bool IMAGE = true;" in source and "using In = float;" in source
    assert "constexpr int IMG_C = 3, IMG_H = 16, IMG_W = 30, BLOCK = 2;" in source
    assert "constexpr int IMG_TOP = 3, IMG_LEFT = 3;" in source
    assert hc.launch_arguments(op).problem[:9] == (1, 11, 18, 16, 64, 4, 4, 8, 15)
    assert hc.launch_arguments(op).operands[0] is op.input  # the image itself
    plain = next(o for o in halo_marked(stem_text()).walk() if isinstance(o, ops.Conv2dOp))
    assert "constexpr bool IMAGE = false;" in hc.emit_instance(plain).source


@pytest.mark.parametrize(("text", "reason"), [
    (stem_text(layout="NHWC"), "an NHWC image: the kernel blocks NCHW images"),
    (stem_text(c=3, channels=16, image="f32", element="bf16"), None),
])
def test_the_kernels_reasons(text, reason):
    module = halo_marked(text)
    conv = next(o for o in module.walk() if isinstance(o, ops.Conv2dOp))
    blocking = conv.input.owner
    op = ops.SpaceToDepthConv2dOp(blocking.input, conv.filter, blocksize=2, image_layout=blocking.prop_value("layout"),
                                  image_pads=blocking.prop_value("pads"), bias=conv.bias)
    assert hc.conv_reason(op) == reason


def test_mode_3_is_refused_with_an_image():
    op = fused_op()
    assert "mode 3 with an image to block" in hc.tile_reason(op, hc.HaloTile(8, 2, 3))


@pytest.mark.parametrize(("text", "tile"), [
    (stem_text(), (8, 2, 1)),
    (stem_text(n=2, h=14, w=20, pads=(3, 1, 1, 3)), (8, 1, 1)),   # a partial last column tile, uneven pads
    (stem_text(k=128, h=10, w=22), (16, 2, 2)),                   # two channel blocks, the filter in registers
])
def test_the_blocked_patch_replayed_matches_the_interpreter(rng, text, tile):
    op = fused_op(text, tile)
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float32)
    weight = (rng.standard_normal(op.filter.type.get_shape()) * 0.1).astype(np.float16)
    bias = rng.standard_normal(op.filter.type.get_shape()[0]).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight, "arg2": bias})
    got = replay(op, hc.HaloTile(*tile), x, weight, bias)
    assert not np.isnan(got).any(), "an output never written"
    np.testing.assert_allclose(got, expected.astype(np.float32), rtol=1e-2, atol=2e-2)


def test_the_replay_fails_when_the_swizzle_is_left_out(rng):
    op = fused_op()
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float32)
    weight = (rng.standard_normal(op.filter.type.get_shape()) * 0.1).astype(np.float16)
    bias = rng.standard_normal(op.filter.type.get_shape()[0]).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight, "arg2": bias})
    got = replay(op, hc.HaloTile(8, 2, 1), x, weight, bias, writer_swizzle=False)
    assert not np.allclose(got, expected.astype(np.float32), rtol=1e-2, atol=2e-2)


def test_the_plain_fallback_blocks_the_image_too():
    op = fused_op()
    del op.attributes[KERNEL_ATTR]
    assert compute_kernels.unsupported_reason(op) is None and compute_kernels.is_fallback(op)
    source = compute_kernels.emit_instance(op).source
    assert "constexpr int IMG_C = 3, IMG_H = 16, IMG_W = 30, BLOCK = 2;" in source
    assert "N = 1, H = 11, W = 18, C = 16, K = 64, P = 8, Q = 15" in source


def test_the_roofline_counts_the_conv_and_the_image_once():
    op = fused_op()
    cost = roofline.launch_cost(op)
    assert cost.flops == 2 * 8 * 15 * 64 * 4 * 4 * 16
    assert cost.bytes == 3 * 16 * 30 * 4 + 64 * 4 * 4 * 16 * 2 + 64 * 2 + 8 * 15 * 64 * 2


@pytest.mark.slow
def test_the_units_compile_with_nvcc(tmp_path):
    ops_ = [fused_op(stem_text(n=32, h=224, w=224), (112, 2, 1)), fused_op(stem_text(image="f16"), (8, 2, 2))]
    assert_unit_compiles(hc, ops_, tmp_path, SM90A)
    plain = fused_op()
    assert_fallback_compiles(plain, tmp_path)


def test_a_blocking_conv_takes_no_tma_patches():
    """The kernel blocks the image in registers as it loads each patch; TMA would land it
    unblocked."""
    from boltir.backends.cuda.codegen import halo_conv_kernels as hc

    assert "TMA loads with an image to block" in hc.tile_reason(fused_op(), hc.HaloTile(8, 2, 1, 2, True))
