"""space-to-depth-stem: a strided conv on few input channels (an image model's first
conv) becomes a stride-1 conv on the blocked input.

A conv with stride s over C = 3 channels is a poor fit for tensor cores: each output
pixel reads a kh×kw×C window with too few channels to fill a 16-byte load, and the
padded channels (3 -> 4 or 8) are multiply-adds spent on zeros. Blocking the input
s×s pixels at a time turns it into a stride-1 conv over C·s² channels that runs as any
other conv (ResNet-50's 7×7/2 on 3 channels becomes 4×4/1 on 12, padded to 16):

    conv(x, W, b; kh×kw, stride s, pads (pt, pl, pb, pr))
      = conv(space_to_depth(pad(x; pt, pl, pb', pr'), s), W', b; ⌈kh/s⌉×⌈kw/s⌉, stride 1)

with W'[m, (by·s + bx)·C + c, i, j] = W[m, c, i·s + by, j·s + bx], zero where the tap
lies past kh or kw (the kernel is padded with zeros to a multiple of s), rearranged at
compile time. The bottom and right pads pb', pr' make the padded input exactly
(OH + ⌈kh/s⌉ - 1)·s rows by (OW + ⌈kw/s⌉ - 1)·s columns, so that the new conv's output is
OH×OW: they may be smaller than the conv's own (or negative, cropping) where the conv never
reads its last rows or columns. MobileNetV2's 3×3/2 pad 1 becomes 2×2/1 on 12 channels.

Applies to a `graph.conv2d` in NCHW with one group, no dilation, equal strides s ≥ 2,
C·s² ≤ `max_channels` (16: C ≤ 4 at s = 2) input channels, a kernel at least s wide and
high (a smaller one would read input it skips), and a constant weight; and to a vision
transformer's patch embedding (an unpadded s×s conv of stride s on C ≤ 4 channels) whatever
C·s²: ViT-B/16's 16×16/16 on 3 channels becomes a 1×1 conv on 768, a GEMM. Other strided
convs on few channels are left alone with a note; stride-1 convs and convs on more
channels are not looked at.

Requires: graph-level IR before convert-layout (it matches NCHW convs; the new
`graph.pad` and `graph.space_to_depth` are NCHW, as ONNX's). Guarantees: every conv it
applies to is replaced by `graph.pad` (left out when all its pads are 0), then
`graph.space_to_depth`, then a stride-1, unpadded `graph.conv2d` with the same bias,
attributes and result type; the module computes the same function (the weights are only
moved, not rounded).

Statistics: "convs blocked".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import graph
from boltir.dialects.graph import tensor_shape
from boltir.passes import statistics
from boltir.passes.common import (
    NoteOnce,
    constant_of,
    erase_unused_producers,
    filter_in_conv_order,
    filter_in_onnx_order,
    has_nchw_layout,
    name_base,
    new_constant,
    where,
)

MAX_CHANNELS = 16
"""C·s² at most: the blocked conv's input channels fit one 16-channel f16 tile."""
PATCHIFY_CHANNELS = 4
"""C at most of a patch embedding blocked whatever C·s² (`is_patchify`)."""


# ----------------------------------------------------------------------------- helpers


def blocked_weight(weight: np.ndarray, block: int) -> np.ndarray:
    """W' of the blocked conv from W (M×C×kh×kw, ONNX order): M×(C·s²)×⌈kh/s⌉×⌈kw/s⌉."""
    m, c, kh, kw = weight.shape
    rows, cols = -(-kh // block), -(-kw // block)
    padded = np.zeros((m, c, rows * block, cols * block), dtype=weight.dtype)
    padded[:, :, :kh, :kw] = weight
    # taps (i·s + by, j·s + bx) -> channel (by·s + bx)·C + c at tap (i, j), as space_to_depth
    taps = padded.reshape(m, c, rows, block, cols, block).transpose(0, 3, 5, 1, 2, 4)
    return np.ascontiguousarray(taps.reshape(m, block * block * c, rows, cols))


def blocked_pads(size: int, kernel: int, block: int, begin: int, out: int) -> tuple[int, int]:
    """(begin, end) pads of one spatial axis: the padded extent is exactly the
    (out + ⌈kernel/s⌉ - 1) blocks the stride-1 conv reads."""
    return begin, (out + -(-kernel // block) - 1) * block - size - begin


def reason_not_blocked(conv: graph.Conv2dOp, block: int, max_channels: int) -> str | None:
    """Why the rewrite does not apply to a strided conv on few channels; None if it does."""
    strides, (kh, kw) = conv.prop_value("strides"), tensor_shape(conv.weight.type)[2:]
    if not has_nchw_layout(conv):
        return "its layout is not NCHW (run space-to-depth-stem before convert-layout)"
    if strides[0] != strides[1]:
        return f"its strides {list(strides)} differ"
    if conv.prop_value("group") != 1:
        return "it is grouped"
    if tuple(conv.prop_value("dilations")) != (1, 1):
        return "it is dilated"
    if kh < block or kw < block:
        return f"its {kh}×{kw} kernel is smaller than its stride {block}"
    if constant_of(conv.weight) is None:
        return "its weight is not a constant"
    return None


def is_patchify(conv: graph.Conv2dOp, channels: int) -> bool:
    """A vision transformer's patch embedding: an unpadded s×s conv of stride s on at most
    PATCHIFY_CHANNELS channels. Blocked, it is a 1×1 conv (a GEMM over C·s² channels) in
    place of a conv whose every window is a few channels deep."""
    (kh, kw), strides = tensor_shape(conv.weight.type)[2:], conv.prop_value("strides")
    return (channels <= PATCHIFY_CHANNELS and kh == kw == strides[0] == strides[1]
            and tuple(conv.prop_value("pads")) == (0, 0, 0, 0))


# ---------------------------------------------------------------------------- patterns


@dataclass
class BlockStridedConv(RewritePattern):
    """conv(x; stride s) -> conv(space_to_depth(pad(x), s); stride 1), few channels only."""

    owner: ModulePass
    note: NoteOnce
    max_channels: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: graph.Conv2dOp, rewriter: PatternRewriter) -> None:
        block = max(conv.prop_value("strides"))
        x = tensor_shape(conv.input.type)
        channels = x[1] if has_nchw_layout(conv) else x[3]
        if block < 2 or (channels * block * block > self.max_channels and not is_patchify(conv, channels)):
            return  # not a stem conv: nothing to say
        reason = reason_not_blocked(conv, block, self.max_channels)
        if reason is not None:
            self.note(conv, f"left {where(conv)} alone: {reason}")
            return
        _, _, height, width = x
        _, _, out_h, out_w = tensor_shape(conv.output.type)
        weight = filter_in_onnx_order(conv, constant_of(conv.weight))
        kh, kw = weight.shape[2:]
        top, left, _, _ = conv.prop_value("pads")
        top, bottom = blocked_pads(height, kh, block, top, out_h)
        left, right = blocked_pads(width, kw, block, left, out_w)
        new_ops = []
        source = conv.input
        if (top, left, bottom, right) != (0, 0, 0, 0):
            new_ops.append(graph.PadOp(source, (0, 0, top, left, 0, 0, bottom, right)))
            source = new_ops[-1].output
        new_ops.append(graph.SpaceToDepthOp(source, block))
        new_weight = new_constant(
            f"{name_base(conv.weight, 'conv')}.blocked_weight",
            filter_in_conv_order(conv, blocked_weight(weight, block)),
            conv.location,
        )
        properties = dict(conv.properties)
        properties.update(
            strides=graph.i64_array((1, 1)), pads=graph.i64_array((0, 0, 0, 0)), dilations=graph.i64_array((1, 1))
        )
        blocked = graph.Conv2dOp.create(
            operands=[new_ops[-1].output, new_weight.output, *([conv.bias] if conv.bias is not None else [])],
            result_types=[conv.output.type],
            properties=properties,
            attributes=dict(conv.attributes),
            location=conv.location,
        )
        for op in new_ops:
            op.location = conv.location
        old_weight = conv.weight
        rewriter.replace(conv, [*new_ops, new_weight, blocked], [blocked.output])
        erase_unused_producers(rewriter, [old_weight])
        statistics.count(self.owner, "convs blocked")


@dataclass(frozen=True)
class SpaceToDepthStemPass(ModulePass):
    """Rewrites strided convs on few input channels as space_to_depth + a stride-1 conv
    (see the module docstring for what it requires and guarantees)."""

    name = "space-to-depth-stem"

    max_channels: int = MAX_CHANNELS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        note = NoteOnce(self)
        pattern = BlockStridedConv(self, note, self.max_channels)
        PatternRewriteWalker(GreedyRewritePatternApplier([pattern], dce_enabled=False)).rewrite_module(op)
