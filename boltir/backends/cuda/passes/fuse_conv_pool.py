"""fuse-conv-pool: a conv on our halo conv whose only user is a 2×2 max pool at stride 2
becomes one `op.conv2d_max_pool`: the kernel pools its tile's output rows in pairs in its
epilogue and writes a quarter of the bytes, and the pool's launch, which read the conv's
whole output back, is gone (VGG-16's first stage: a 205 MB conv output at batch 32).

Requires: select-kernels ran (the conv's `kernel` attribute names its family and tile);
before lower-op-to-cutlass and plan-memory.
Guarantees: an NHWC `op.conv2d` with no residual whose choice is `halo_conv` with tiles
of an even number of rows, whose result has one use, that use an NHWC `op.pool2d` of kind max with a 2×2
window at stride 2, no padding, dilation 1 and no ceil mode, over an even height and
width, becomes an `op.conv2d_max_pool` (pool 2) with the conv's operands, epilogue and
kernel choice, and the pool's result type; the pool is erased. Anything else is unchanged;
--pass-stats counts the pools fused. The module computes the same function.
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
from boltir.dialects.common import tensor_shape
from boltir.passes import statistics

POOL = halo_conv_kernels.POOL


def fusable_pool(conv: ops.Conv2dOp) -> ops.Pool2dOp | None:
    """The max pool that `conv` can take into its kernel, or None."""
    if KERNEL_ATTR not in conv.attributes or conv.residual is not None or conv.prop_value("layout") != "NHWC":
        return None
    choice = KernelChoice.from_attr(conv.attributes[KERNEL_ATTR])
    if choice.family != halo_conv_kernels.FAMILY or halo_conv_kernels.HaloTile.of(choice.tile).rows % POOL:
        return None
    uses = list(conv.output.uses)
    if len(uses) != 1 or not isinstance(pool := uses[0].operation, ops.Pool2dOp):
        return None
    if (pool.prop_value("kind") != "max" or pool.prop_value("layout") != "NHWC"
            or tuple(pool.prop_value("kernel_shape")) != (POOL, POOL) or tuple(pool.prop_value("strides")) != (POOL, POOL)
            or any(pool.prop_value("pads")) or tuple(pool.prop_value("dilations")) != (1, 1)
            or pool.prop_value("ceil_mode")):
        return None
    _, p, q, _ = tensor_shape(conv.output.type)
    return pool if p % POOL == 0 and q % POOL == 0 else None


@dataclass(frozen=True)
class FuseConvPoolPass(ModulePass):
    """Requires: kernels selected. Guarantees: a halo conv and the 2×2 max pool after it
    are one op.conv2d_max_pool."""

    name = "fuse-conv-pool"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for conv in [o for o in op.walk() if isinstance(o, ops.Conv2dOp)]:
            pool = fusable_pool(conv)
            if pool is None:
                continue
            strides, pads, dilations, groups = conv.window()
            fused = ops.Conv2dMaxPoolOp(conv.input, conv.filter, pool=POOL, bias=conv.bias, strides=strides, pads=pads,
                                        dilations=dilations, groups=groups, epilogue=conv.epilogue)
            fused.attributes.update(conv.attributes)
            fused.location = conv.location
            Rewriter.insert_op(fused, InsertPoint.before(conv))
            pool.output.replace_all_uses_with(fused.output)
            Rewriter.erase_op(pool)
            Rewriter.erase_op(conv)
            statistics.count(self, "max pools fused into the halo conv")
