"""fuse-space-to-depth: the data movement around an `op.space_to_depth` folded into it,
so that a blocked stem conv's input is made by one kernel.

Before it, the input of a stem conv that space-to-depth-stem blocked goes through five
memory-bound ops, each a pass over the image:

    op.cast f32 -> f16            (convert-precision, at the model's input)
    op.pad  of H and W            (the conv's padding, and up to a multiple of s)
    op.space_to_depth NCHW        (ONNX's blocking)
    op.layout_transform -> NHWC   (convert-layout, for the NHWC conv)
    op.pad  of the channels       (pad-alignment: 12 -> 16 for f16)

`op.space_to_depth` carries each of them (its input layout, its spatial padding, its
result layout, the channel count and element type of its result), so they fold into it:

- a producer `op.pad` with a zero fill on H and W only (when the op has no padding yet);
- a producer cast between float types (`op.cast`, or an `op.elementwise` that only
  casts), when the op itself converts nothing yet: one rounding, as the cast's;
- a producer `op.layout_transform` NHWC -> NCHW (the op then reads NHWC);
- a consumer `op.layout_transform` to the other layout (the op then writes it);
- a consumer `op.pad` with a zero fill that only appends channels (in NHWC results);
- a consumer cast between float types, when the op converts nothing yet.

A producer is folded only when the op is its one user, and a consumer only when it is
the op's one user; anything else stays as it is.

An image's input that is not blocked (VGG's 3×3 stem at stride 1) goes through three of
them: the cast, the layout transform NCHW -> NHWC and the channel pad (3 -> 4). Such a
layout transform becomes an `op.space_to_depth` of blocksize 1 (the same copy), so that
its cast and pad fold into it as above: one kernel reads the f32 image and writes the
conv's input. It does so only where something folds (a one-use float cast before it, or
a channel pad as its one user) and where the result's pixel is one thread's store
(`space_to_depth_kernel.PIXEL_BYTES`, 64 bytes); a wider transpose stays on the layout
kernel, which stages its tiles in shared memory.

Requires: op-level IR, after pad-alignment (whose channel pad it takes). Guarantees:
each `op.space_to_depth` has absorbed every neighbour listed above; the module computes
the same function.

Statistics: "pads fused", "casts fused", "layout transforms fused", "image inputs
blocked by 1" (the layout transforms that became an op.space_to_depth).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics
from boltir.passes.common import float_cast_source

TO_LAYOUT = {(0, 2, 3, 1): ("NCHW", "NHWC"), (0, 3, 1, 2): ("NHWC", "NCHW")}
"""A layout_transform's perm -> the layout it reads and the one it writes."""

PIXEL_BYTES = 64
"""The widest NHWC result pixel a blocksize-1 op.space_to_depth is made for: one thread
writes it whole (the data kernel's `PIXEL_BYTES`; this layer may not import it)."""


# ----------------------------------------------------------------------------- helpers


def is_zero_fill(pad: ops.PadOp) -> bool:
    """A constant pad with +0.0 (the bits the kernel writes)."""
    value = pad.prop_value("value")
    return pad.prop_value("mode") == "constant" and value == 0.0 and math.copysign(1.0, value) > 0


def spatial_pads(pad: ops.PadOp, layout: str) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right) of a zero-fill 4-D pad of H and W only; else None."""
    pads = pad.prop_value("pads")
    if not is_zero_fill(pad) or len(pads) != 8:
        return None
    h, w = (2, 3) if layout == "NCHW" else (1, 2)
    if any(pads[a] or pads[a + 4] for a in range(4) if a not in (h, w)):
        return None
    return pads[h], pads[w], pads[h + 4], pads[w + 4]


def appended_channels(pad: ops.PadOp) -> int | None:
    """How many channels a zero-fill pad of an NHWC tensor only appends; else None."""
    pads = pad.prop_value("pads")
    if not is_zero_fill(pad) or len(pads) != 8 or any(pads[:7]) or pads[7] < 0:
        return None
    return pads[7]


def rebuilt(op: ops.SpaceToDepthOp, source: SSAValue, **changes) -> ops.SpaceToDepthOp:
    """`op` reading `source`, with some of its layouts, pads, channels or result element
    type changed."""
    layout = changes.get("layout", op.prop_value("layout"))
    new = ops.SpaceToDepthOp(
        source,
        op.prop_value("blocksize"),
        layout=layout,
        result_layout=changes.get("result_layout", op.prop_value("result_layout")),
        pads=changes.get("pads", op.prop_value("pads")),
        channels=changes.get("channels", op.result_channels()),
        element_type=changes.get("element_type", op.output.type.element_type),
    )
    new.location = op.location
    new.attributes.update(op.attributes)
    return new


def converts(op: ops.SpaceToDepthOp) -> bool:
    return op.input.type.element_type != op.output.type.element_type


# ---------------------------------------------------------------------------- patterns


@dataclass
class FoldProducer(RewritePattern):
    """pad / cast / layout_transform -> space_to_depth becomes one space_to_depth."""

    owner: ModulePass

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.SpaceToDepthOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if not isinstance(producer, Operation) or not op.input.has_one_use():
            return
        layout = op.prop_value("layout")
        if isinstance(producer, ops.PadOp) and not any(op.prop_value("pads")):
            pads = spatial_pads(producer, layout)
            if pads is None:
                return
            new, what = rebuilt(op, producer.input, pads=pads), "pads fused"
        elif (source := float_cast_source(producer)) is not None and not converts(op):
            new, what = rebuilt(op, source), "casts fused"
        elif isinstance(producer, ops.LayoutTransformOp) and TO_LAYOUT.get(producer.prop_value("perm")) == ("NHWC", "NCHW"):
            if layout != "NCHW":
                return
            new, what = rebuilt(op, producer.input, layout="NHWC"), "layout transforms fused"
        else:
            return
        rewriter.replace(op, [new])
        rewriter.erase(producer)
        statistics.count(self.owner, what)


@dataclass
class FoldConsumer(RewritePattern):
    """space_to_depth -> layout_transform / pad / cast becomes one space_to_depth."""

    owner: ModulePass

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.SpaceToDepthOp, rewriter: PatternRewriter) -> None:
        if not op.output.has_one_use():
            return
        consumer = next(iter(op.output.uses)).operation
        result_layout = op.prop_value("result_layout")
        if isinstance(consumer, ops.LayoutTransformOp):
            layouts = TO_LAYOUT.get(consumer.prop_value("perm"))
            if layouts is None or layouts[0] != result_layout:
                return
            new, what = rebuilt(op, op.input, result_layout=layouts[1]), "layout transforms fused"
        elif isinstance(consumer, ops.PadOp) and result_layout == "NHWC":
            added = appended_channels(consumer)
            if added is None:
                return
            new, what = rebuilt(op, op.input, channels=op.result_channels() + added), "pads fused"
        elif float_cast_source(consumer) is not None and not converts(op):
            new, what = rebuilt(op, op.input, element_type=consumer.results[0].type.element_type), "casts fused"
        else:
            return
        assert new.output.type == consumer.results[0].type, (new.output.type, consumer.results[0].type)
        rewriter.replace(consumer, [new])
        rewriter.erase(op)
        statistics.count(self.owner, what)


@dataclass
class BlockImageInput(RewritePattern):
    """An NCHW -> NHWC layout_transform of few channels, next to a cast or a channel pad
    that would fold, becomes a blocksize-1 space_to_depth (which they then fold into)."""

    owner: ModulePass

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.LayoutTransformOp, rewriter: PatternRewriter) -> None:
        if TO_LAYOUT.get(op.prop_value("perm")) != ("NCHW", "NHWC"):
            return
        shape = op.output.type.get_shape()
        if -1 in shape:
            return
        producer = op.input.owner
        cast_before = isinstance(producer, Operation) and op.input.has_one_use() and float_cast_source(producer) is not None
        consumer = next(iter(op.output.uses)).operation if op.output.has_one_use() else None
        pad_after = isinstance(consumer, ops.PadOp) and appended_channels(consumer) is not None
        if not (cast_before or pad_after):
            return
        pad_channels = appended_channels(consumer) if pad_after else 0
        pixel = (shape[3] + pad_channels) * numpy_dtype(op.output.type.element_type).itemsize
        if pixel > PIXEL_BYTES:
            return
        new = ops.SpaceToDepthOp(op.input, 1, layout="NCHW", result_layout="NHWC")
        new.location = op.location
        new.attributes.update(op.attributes)
        rewriter.replace(op, [new])
        statistics.count(self.owner, "image inputs blocked by 1")


@dataclass(frozen=True)
class FuseSpaceToDepthPass(ModulePass):
    """Folds the pads, casts and layout transforms around each `op.space_to_depth` into
    it (see the module docstring for what it requires and guarantees)."""

    name = "fuse-space-to-depth"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [BlockImageInput(self), FoldProducer(self), FoldConsumer(self)]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns, dce_enabled=False)).rewrite_module(op)
