"""fuse-conv-space-to-depth: a conv on our halo conv whose input is an op.space_to_depth used by
nothing else becomes one `op.space_to_depth_conv2d`: the kernel blocks the image as it
loads each tile's patch into shared memory, so the blocked tensor (ResNet-50's stem at
batch 32: 13.5 MB written, then read back) and its launch are gone.

Requires: select-kernels ran (the conv's `kernel` attribute names its family and tile);
before lower-op-to-cutlass and plan-memory.
Guarantees: an NHWC `op.conv2d` whose choice is `halo_conv`, whose input is the NHWC
result of an `op.space_to_depth` with no other use, of the conv's element type, becomes an
`op.space_to_depth_conv2d` over the space-to-depth's input, with its block, layout and
pads, and the conv's filter, bias, residual, window, epilogue and kernel choice, where the
halo conv computes that op with that tile (`halo_conv_kernels.unsupported_reason`) and
the conv has at least `TILES_PER_CTA` tiles for each of two CTAs on every multiprocessor of
the choice's target; the space-to-depth is erased.

Why the tile count: the kernel blocks the next tile's patch while this tile's products
run, so the blocking is hidden only where a CTA walks several tiles. Below that (ResNet-50's
stem at batch 1: 56 tiles for 264 CTAs) each CTA's one patch is read, blocked and stored
before its products can start, and the space-to-depth kernel, spread over the whole GPU,
does that work sooner (bench/RESULTS.md, fifteenth session). Anything else is unchanged; --pass-stats counts the fusions. The
module computes the same function.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from boltir.backends.cuda.codegen import halo_conv_kernels
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import op as ops
from boltir.passes import statistics
from boltir.target import get_target

TILES_PER_CTA = 2
"""Tiles each resident CTA (two a multiprocessor) must have for the blocking to hide under
the products."""


def fused_form(conv: ops.Conv2dOp, min_tiles: int = -1) -> tuple[ops.SpaceToDepthConv2dOp, ops.SpaceToDepthOp] | None:
    """The op.space_to_depth_conv2d that computes `conv` and the space-to-depth before it,
    with the space-to-depth it replaces; None where the halo conv cannot take it or the
    conv has fewer than `min_tiles` tiles (-1: TILES_PER_CTA for two CTAs a multiprocessor)."""
    if KERNEL_ATTR not in conv.attributes or conv.prop_value("layout") != "NHWC":
        return None
    choice = KernelChoice.from_attr(conv.attributes[KERNEL_ATTR])
    if choice.family != halo_conv_kernels.FAMILY:
        return None
    tile = halo_conv_kernels.HaloTile.of(choice.tile)
    if min_tiles < 0:
        min_tiles = TILES_PER_CTA * 2 * get_target(choice.arch).multiprocessors
    if halo_conv_kernels.tiles(conv, tile) < min_tiles:
        return None
    blocking = conv.input.owner
    if not isinstance(blocking, ops.SpaceToDepthOp) or blocking.prop_value("result_layout") != "NHWC":
        return None
    if len(list(blocking.output.uses)) != 1 or blocking.output.type.element_type != conv.filter.type.element_type:
        return None
    strides, pads, dilations, groups = conv.window()
    fused = ops.SpaceToDepthConv2dOp(
        blocking.input, conv.filter, blocksize=blocking.prop_value("blocksize"), image_layout=blocking.prop_value("layout"),
        image_pads=blocking.prop_value("pads"), bias=conv.bias, residual=conv.residual, strides=strides, pads=pads,
        dilations=dilations, groups=groups, epilogue=conv.epilogue,
    )
    fused.attributes.update(conv.attributes)
    fused.location = conv.location
    if halo_conv_kernels.unsupported_reason(fused) is not None:
        return None
    return fused, blocking


@dataclass(frozen=True)
class FuseConvSpaceToDepthPass(ModulePass):
    """Requires: kernels selected. Guarantees: a halo conv and the space-to-depth that makes
    its only input are one op.space_to_depth_conv2d."""

    name = "fuse-conv-space-to-depth"

    min_tiles: int = -1
    """Fewer tiles than this keep the space-to-depth kernel (-1: TILES_PER_CTA for two CTAs
    on every multiprocessor of the choice's target)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for conv in [o for o in op.walk() if isinstance(o, ops.Conv2dOp)]:
            found = fused_form(conv, self.min_tiles)
            if found is None:
                continue
            fused, blocking = found
            Rewriter.insert_op(fused, InsertPoint.before(conv))
            conv.output.replace_all_uses_with(fused.output)
            Rewriter.erase_op(conv)
            Rewriter.erase_op(blocking)
            statistics.count(self, "space-to-depth blockings fused into the halo conv")
