"""fuse-depthwise-pointwise: a depthwise conv whose only user is a 1×1 conv of its result
becomes one `op.depthwise_pointwise_conv2d` on our depthwise_pointwise kernel, which keeps
the depthwise conv's output (MobileNet's widest tensor, 6× the block's channels) in shared
memory: its write and read-back are gone, and one launch.

Requires: NHWC op-level convs; before lower-op-to-cutlass and plan-memory. Before
select-kernels (the default pipeline puts it there, with expand=true and the target's
multiprocessors as `sms`), which then chooses the fused op's tile
like any op's: the heuristic's, the tuning database's, or with `selector=tune` the fastest
of its tiles. After select-kernels it drops the convs' choices and gives the fused op the
heuristic's tile. A back-to-back conv of form-persistent-kernels (a block's projection and
the next block's expansion) is split into its two convs where that lets a fusion here take
one of them.
Guarantees: an NHWC `op.conv2d` with groups = C = K, OHWI filter and no residual, whose
result has one use, the input of an NHWC 1×1 stride-1 unpadded `op.conv2d` with groups 1,
where `depthwise_pointwise_kernels.pair_reason` accepts the pair (the kernel computes it and
`payoff_reason` expects a gain: the 1×1 filter no larger than a CTA's band, and with `sms`
the grid one wave at most), becomes an
`op.depthwise_pointwise_conv2d` with the depthwise conv's input, filter, bias, window and
epilogue (epilogue0), the 1×1 conv's filter, bias, residual and epilogue (epilogue1), and
the 1×1 conv's result type, located at the 1×1 conv. With `expand=true`, a 1×1 stride-1
unpadded conv without a residual whose only user is that depthwise conv joins them (its
filter, bias and epilogue as the op's expansion, its input the op's) where the kernel takes
the three and expects them to pay; else the pair is fused alone. The fused
op's kernel choice is the family's default tile (an "sm80" choice: plain CUDA, built for
sm80 and sm90 alike), which a later select-kernels replaces; the fused convs are erased. Anything else is unchanged; --pass-stats
counts the pairs and expansions fused. The module computes the same function (each
intermediate is rounded to the element type, as the separate convs' results were).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from boltir.backends.cuda.codegen import depthwise_pointwise_kernels
from boltir.backends.cuda.select.choice import KERNEL_ATTR, unfuse
from boltir.backends.cuda.select.heuristic import depthwise_pointwise_choice
from boltir.dialects import op as ops
from boltir.passes import statistics


def fusable_pointwise(depthwise: ops.Conv2dOp, sms: int = 0) -> ops.Conv2dOp | None:
    """The 1×1 conv that `depthwise` can share our kernel with (`sms`: see pair_reason), or None."""
    uses = list(depthwise.output.uses)
    if len(uses) != 1 or not isinstance(pointwise := uses[0].operation, ops.Conv2dOp) or uses[0].index != 0:
        return None
    return pointwise if depthwise_pointwise_kernels.pair_reason(depthwise, pointwise, sms=sms) is None else None


def fusable_expansion(depthwise: ops.Conv2dOp, pointwise: ops.Conv2dOp, sms: int = 0) -> ops.Conv2dOp | None:
    """The 1×1 conv before `depthwise` (its input's producer, read by nothing else) that can
    join the pair in our kernel, or None."""
    expand = depthwise.input.owner
    if not isinstance(expand, ops.Conv2dOp) or len(list(expand.output.uses)) != 1:
        return None
    return expand if depthwise_pointwise_kernels.pair_reason(depthwise, pointwise, expand, sms) is None else None


def _is_depthwise(op) -> bool:
    return isinstance(op, ops.Conv2dOp) and op.is_depthwise()


def _split_for_fusion(b2b: ops.B2bConv2dOp, expand: bool, sms: int) -> bool:
    """Splits a back-to-back conv (form-persistent-kernels') into its two convs where that
    lets a fusion here take one of them: its first as a depthwise conv's 1×1 conv, or
    (`expand`) its second as the expansion before a depthwise conv. False, and the module
    unchanged, where neither would be fused."""
    before = b2b.input.owner
    uses = list(b2b.output.uses)
    after = uses[0].operation if len(uses) == 1 and uses[0].index == 0 else None
    before_fusable = _is_depthwise(before) and len(list(before.output.uses)) == 1
    after_fusable = expand and _is_depthwise(after)
    if not (before_fusable or after_fusable):
        return False
    first, second = unfuse(b2b)
    Rewriter.insert_op(first, InsertPoint.before(b2b))
    Rewriter.insert_op(second, InsertPoint.before(b2b))
    b2b.output.replace_all_uses_with(second.output)
    # the b2b op still reads `before`'s result: ask about the pair itself, not its uses
    fuses = before_fusable and depthwise_pointwise_kernels.pair_reason(before, first, sms=sms) is None
    if not fuses and after_fusable and (pointwise := fusable_pointwise(after, sms)) is not None:
        fuses = fusable_expansion(after, pointwise, sms) is second
    if not fuses:  # as it was
        second.output.replace_all_uses_with(b2b.output)
        Rewriter.erase_op(second)
        Rewriter.erase_op(first)
        return False
    Rewriter.erase_op(b2b)
    return True


@dataclass(frozen=True)
class FuseDepthwisePointwisePass(ModulePass):
    """Requires: NHWC op-level convs. Guarantees: a depthwise conv and the 1×1 conv of its
    result (`expand`: and the 1×1 conv before it) are one op.depthwise_pointwise_conv2d on
    our kernel."""

    name = "fuse-depthwise-pointwise"

    expand: bool = False
    """Whether the expanding 1×1 conv before the depthwise conv joins too (the whole inverted
    residual in one kernel), where the kernel takes it."""

    sms: int = 0
    """The target's multiprocessors: fuse only where the fused kernel's grid is one wave at
    most (`payoff_reason`); 0 fuses at any grid. The default pipeline passes the target's."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for b2b in [o for o in op.walk() if isinstance(o, ops.B2bConv2dOp)]:
            if _split_for_fusion(b2b, self.expand, self.sms):
                statistics.count(self, "back-to-back convs split for the fusion")
        for depthwise in [o for o in op.walk() if isinstance(o, ops.Conv2dOp)]:
            if depthwise.parent is None or (pointwise := fusable_pointwise(depthwise, self.sms)) is None:
                continue
            expand = fusable_expansion(depthwise, pointwise, self.sms) if self.expand else None
            fused = depthwise_pointwise_kernels.fused_op(depthwise, pointwise, expand)
            fused.attributes[KERNEL_ATTR] = depthwise_pointwise_choice(fused).to_attr()
            fused.location = pointwise.location
            Rewriter.insert_op(fused, InsertPoint.before(pointwise))
            pointwise.output.replace_all_uses_with(fused.output)
            Rewriter.erase_op(pointwise)
            Rewriter.erase_op(depthwise)
            if expand is not None:
                Rewriter.erase_op(expand)
                statistics.count(self, "expanding 1x1 convs fused with them")
            statistics.count(self, "depthwise convs fused with the 1x1 conv after them")
