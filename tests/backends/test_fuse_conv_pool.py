"""fuse-conv-pool and `op.conv2d_max_pool` (boltir/backends/cuda/passes/fuse_conv_pool.py,
the halo conv's pooled epilogue, the plain fallback's pool). Without a GPU: the op's
verifier, the pass's interpreter equivalence on random inputs and what it leaves alone,
the kernel's reasons and instance, the numpy replay of the pooled store against the
interpreter (tests/backends/test_halo_conv_kernels.py's replay), the default pipeline on
VGG-16's first stage, and `slow` nvcc compiles of the pooled halo instance (sm_90a) and
the pooled fallback. bench/check_halo_conv.py runs the pooled kernel on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen import halo_conv_kernels as hc
from boltir.backends.cuda.passes.fuse_conv_pool import FuseConvPoolPass
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.ir import make_context, parse_module
from boltir.passes import statistics
from tests.backends.test_halo_conv_kernels import replay
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import conv_args, conv_line, tensor, two_ops_text
from tests.support import own_kernel_units
from tests.support.own_kernel_units import SM90A, assert_fallback_compiles, assert_unit_compiles


def block_text(n=1, h=8, w=16, c=64, k=64, pool="max", window=2, stride=2, pads="0, 0, 0, 0", users=1, residual=False) -> str:
    """A 3×3 conv (bias, ReLU) and a pool after it (VGG-16's stage ends). `users=2`: the
    conv's result is returned too."""
    x, f, b = tensor((n, h, w, c), "f16"), tensor((k, 3, 3, c), "f16"), tensor((k,), "f16")
    conv = tensor((n, h, w, k), "f16")
    pad = int(pads.split(",")[0])
    ph, pw = (h + 2 * pad - window) // stride + 1, (w + 2 * pad - window) // stride + 1
    pooled = tensor((n, ph, pw, k), "f16")
    pool_line = (f"op.pool2d %0 {{kind = \"{pool}\", kernel_shape = array<i64: {window}, {window}>, "
                 f"strides = array<i64: {stride}, {stride}>, pads = array<i64: {pads}>}} : {conv} -> {pooled}")
    return two_ops_text(conv_args(x, f, b, conv, residual), conv_line("%x", x, f, b, conv, residual, "pads = array<i64: 1, 1, 1, 1>, "),
                        conv, pool_line, pooled, users)


def halo_marked(text: str, tile=(16, 2, 1)):
    return own_kernel_units.halo_marked(text, tile)


def fused(module):
    with statistics.collecting() as collected:
        FuseConvPoolPass().apply(make_context(), module)
    return module, collected.get("fuse-conv-pool", "max pools fused into the halo conv")


# ------------------------------------------------------------------ the op


def test_the_op_verifies_its_pooled_shape():
    text = block_text()
    module, count = fused(halo_marked(text))
    op = next(o for o in module.walk() if isinstance(o, ops.Conv2dMaxPoolOp))
    assert count == 1 and op.conv_shape() == (1, 8, 16, 64) and op.output.type.get_shape() == (1, 4, 8, 64)
    bad = ("func.func @main(%x: tensor<1x6x6x16xf16>, %w: tensor<64x3x3x16xf16>) -> tensor<1x2x2x64xf16> {\n"
           "  %0 = op.conv2d_max_pool %x, %w {pads = array<i64: 1, 1, 1, 1>, pool = 4 : i64} : "
           "(tensor<1x6x6x16xf16>, tensor<64x3x3x16xf16>) -> tensor<1x2x2x64xf16>\n  func.return %0 : tensor<1x2x2x64xf16>\n}\n")
    with pytest.raises(BoltError, match="pool 4 must be at least 2 and divide the conv's output 6x6"):
        parse_module(bad)


# ------------------------------------------------------------------ the pass


@pytest.mark.parametrize("tile", [(16, 2, 1), (8, 2, 3), (16, 2, 2)])
def test_a_halo_conv_and_its_max_pool_become_one_op_computing_the_same(tile, rng):
    text = block_text()
    before = halo_marked(text, tile)
    after = assert_equivalent(before, [FuseConvPoolPass(), LowerOpToCutlassPass()], rng, tolerance=0.0 + 1e-12)
    assert [o.name for o in after.walk() if o.name.startswith("op.") and o.name != "op.constant"] == ["op.conv2d_max_pool"]
    assert hc.supports(next(o for o in after.walk() if isinstance(o, ops.Conv2dMaxPoolOp)))


@pytest.mark.parametrize(("text", "tile"), [
    (block_text(pool="avg"), (16, 2, 1)),                                   # not a max pool
    (block_text(window=3, stride=2, pads="1, 1, 1, 1"), (16, 2, 1)),        # ResNet-50's 3×3/2 pool
    (block_text(users=2), (16, 2, 1)),                                      # the conv's output is used too
    (block_text(residual=True), (16, 2, 1)),                                # a residual, read at the conv's size
    (block_text(h=6), (16, 1, 1)),                                          # one-row tiles
])
def test_what_it_leaves_alone(text, tile, rng):
    module, count = fused(halo_marked(text, tile))
    assert count == 0 and not any(isinstance(o, ops.Conv2dMaxPoolOp) for o in module.walk())


def test_cutlass_convs_keep_their_pools():
    module = parse_module(block_text())
    SelectKernelsPass(arch="sm90", selector="heuristic").apply(make_context(), module)  # too few tiles: CUTLASS's
    _, count = fused(module)
    assert count == 0


def test_vgg16s_first_stage_is_fused_by_the_default_pipeline():
    """Batch 32 and batch 1 (the halo conv takes VGG-16's 224² layer at both)."""
    for n in (32, 1):
        module = parse_module(block_text(n=n, h=224, w=224))
        with statistics.collecting() as collected:
            for step in (SelectKernelsPass(arch="sm90", selector="heuristic"), FuseConvPoolPass(), LowerOpToCutlassPass()):
                step.apply(make_context(), module)
        assert collected.get("fuse-conv-pool", "max pools fused into the halo conv") == 1
        assert collected.get("lower-op-to-cutlass", "halo_conv kernels (op.conv2d_max_pool kept)") == 1


# ------------------------------------------------------------------ the kernel


def pooled_op(tile=(16, 2, 1), **shape):
    module, _ = fused(halo_marked(block_text(**shape), tile))
    return next(o for o in module.walk() if isinstance(o, ops.Conv2dMaxPoolOp))


def test_the_instance_pools_two_rows_and_takes_the_convs_integers():
    op = pooled_op()
    source = hc.emit_instance(op).source
    assert "constexpr int POOL = 2;" in source and "constexpr int N = 1, H = 8, W = 16, C = 64, K = 64, R = 3, S = 3, P = 8, Q = 16;" in source
    assert hc.launch_arguments(op).problem[7:9] == (8, 16)  # the conv's P and Q, before the pool
    assert hc.tiles(op, hc.HaloTile(16, 2)) == 4
    plain = next(o for o in halo_marked(block_text()).walk() if isinstance(o, ops.Conv2dOp))
    assert "constexpr int POOL = 1;" in hc.emit_instance(plain).source


def test_a_one_row_tile_cannot_pool():
    op = pooled_op()
    assert "a pooled conv needs tiles of a multiple of 2 rows" in hc.tile_reason(op, hc.HaloTile(16, 1))


@pytest.mark.parametrize(("shape", "tile"), [
    ({"n": 1, "h": 4, "w": 16, "c": 64, "k": 128}, (16, 2, 1)),  # two channel blocks
    ({"n": 2, "h": 6, "w": 24, "c": 64, "k": 64}, (16, 2, 1)),   # a partial last column tile, two images
    ({"n": 1, "h": 4, "w": 16, "c": 64, "k": 64}, (16, 2, 3)),   # overlapped epilogues (same stores)
    ({"n": 2, "h": 6, "w": 16, "c": 64, "k": 64}, (8, 4, 1)),    # two pooled rows a tile, the last tile's second past P
])
def test_the_pooled_store_replayed_matches_the_interpreter(rng, shape, tile):
    op = pooled_op(tile, **shape)
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float16)
    weight = (rng.standard_normal(op.filter.type.get_shape()) * 0.1).astype(np.float16)
    bias = rng.standard_normal(op.filter.type.get_shape()[0]).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight, "arg2": bias})
    got = replay(op, hc.HaloTile(*tile), x, weight, bias, pool=2)
    assert not np.isnan(got).any(), "a pooled output never written"
    np.testing.assert_allclose(got, expected.astype(np.float32), rtol=1e-2, atol=2e-2)


def test_the_plain_fallback_pools_too():
    op = pooled_op()
    del op.attributes[KERNEL_ATTR]
    assert compute_kernels.unsupported_reason(op) is None and compute_kernels.is_fallback(op)
    source = compute_kernels.emit_instance(op).source
    assert "constexpr int POOL = 2;" in source and "P = 8, Q = 16" in source
    assert f"kWork = {1 * 4 * 8 * 64}" in source


@pytest.mark.slow
def test_the_pooled_units_compile_with_nvcc(tmp_path):
    op = pooled_op(tile=(16, 2, 1), h=8, w=32)
    assert_unit_compiles(hc, [op], tmp_path, SM90A)
    four = pooled_op(tile=(8, 4, 1), h=8, w=32)  # two pooled rows a tile, 512 threads
    assert_unit_compiles(hc, [four], tmp_path, SM90A)
    plain = pooled_op(tile=(16, 2, 3), h=8, w=32)
    assert_fallback_compiles(plain, tmp_path)
