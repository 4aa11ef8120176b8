"""pad-alignment: channel counts padded to what tensor-core kernels can load.

CUTLASS's tensor-core GEMMs and implicit-GEMM convs load their operands 16 bytes at a
time along the contiguous axis: 8 f16/bf16 or 4 f32 elements. A conv with 5 input or
output channels, or a GEMM with K or N = 13, would fall back to one element per access,
or to no tensor-core kernel at all. This pass widens such problems with zeros:

- the weights are padded with zeros at compile time: zero filters (or B columns) for
  added output channels, zero taps (or B rows) for added input channels, zero biases;
- an activation that needs more channels gets them from its producer when the producer
  is an NHWC conv or a GEMM with constant weights (its added output channels compute
  `epilogue(0)`, a finite constant such as sigmoid's 0.5: the consumer's added input
  channels meet zero weights, so what they hold does not matter as long as it is
  finite); `op.unary` and `op.binary` in between carry the added channels along;
  otherwise an `op.pad` on the channel axis makes them (the image input of a first conv);
- every other user (outputs, residuals of unpadded ops, pooling, ...) reads an
  `op.slice` of the true channels.

Alignment and the fixed channel counts come from the target record of `arch`
(`boltir.target`): 16 bytes of the element type. A conv with C = 3 input channels (the
first conv of an image model) pads to 4 instead, for CUTLASS 2.x's fixed-channels conv
kernel, which also takes C = 1, 2 or 4 as they are. That holds on sm90 too: padded to 8,
such a conv still runs a 2.x kernel (the heuristic and the tuner pick 2.x for it), with
twice the multiply-adds, and the C = 4 kernel measured faster (bench/RESULTS.md). Grouped
and depthwise convs are padded by appending whole groups (the group count grows) when
that at most doubles their channels; otherwise they are left alone, with a note, as are
NCHW convs and ops whose weights are not constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.graph import i64_attr, tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.interp.op import BINARY, activation, apply_epilogue
from boltir.passes import statistics
from boltir.passes.common import constant_name, constant_of, where
from boltir.target import ARCHS, DEFAULT_ARCH, GpuTarget, get_target
from boltir.weights import make_weight_attr

NEUTRAL_PAD = {"add": 0.0, "sub": 0.0, "mul": 0.0, "div": 1.0, "pow": 1.0}
"""What a per-channel constant operand of `op.binary` holds in its added channels."""


# ----------------------------------------------------------------------------- helpers


def alignment(element_type, target: GpuTarget) -> int:
    """Elements per aligned access: 8 for f16/bf16, 4 for f32 (16-byte loads)."""
    return max(1, target.alignment_bytes // numpy_dtype(element_type).itemsize)


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def padded_name(value: SSAValue) -> str | None:
    return f"{value.name_hint}_padded" if value.name_hint else None


def pad_axes(array: np.ndarray, widths: dict[int, int]) -> np.ndarray:
    """`array` with zeros appended along each axis to the given size."""
    spec = [(0, 0)] * array.ndim
    for axis, size in widths.items():
        spec[axis % array.ndim] = (0, size - array.shape[axis])
    return np.pad(array, spec)


def stays_finite(fill: float, element_type) -> bool:
    """Whether the value added channels hold is finite once stored in `element_type`."""
    with np.errstate(all="ignore"):
        return bool(np.isfinite(np.asarray(fill, dtype=np.float64).astype(numpy_dtype(element_type))))


def widened_type(value: SSAValue, width: int) -> TensorType:
    shape = tensor_shape(value.type)
    return TensorType(value.type.element_type, (*shape[:-1], width))


def epilogue_fill(epilogue: ops.EpilogueAttr, has_bias: bool, residual_fill: float) -> float:
    """What an added output channel holds: the epilogue of a zero accumulator, zero
    bias, and the residual's added channel."""
    with np.errstate(all="ignore"):
        out = apply_epilogue(
            np.zeros((1, 1)),
            epilogue,
            np.zeros(1) if has_bias else None,
            np.full((1, 1), residual_fill) if epilogue.residual_kind != "none" else None,
            channel_axis=-1,
        )
    return float(out.reshape(-1)[0])


@dataclass(frozen=True)
class Wide:
    """A channels-last tensor with channels added at the end of its last axis."""

    value: SSAValue
    width: int
    fill: float
    """What every added channel holds (finite)."""


@dataclass
class Padding:
    """The new ops of one rewrite, in order, and the op.pads among them."""

    new_ops: list[Operation] = field(default_factory=list)
    pads: dict[tuple[SSAValue, int, int], SSAValue] = field(default_factory=dict)

    def add(self, op: Operation, location) -> Operation:
        op.location = location
        self.new_ops.append(op)
        return op


# ---------------------------------------------------------------------------- patterns


@dataclass
class PadChannels(RewritePattern):
    """Visits the ops in program order (producers first): pads each conv and GEMM whose
    channels are not aligned, and carries widened activations through elementwise ops."""

    owner: PadAlignmentPass
    wide: dict[SSAValue, Wide] = field(default_factory=dict)
    """The op.slice results of widened values -> the widened values."""
    pads: dict[tuple[SSAValue, int, int], SSAValue] = field(default_factory=dict)
    """(value, axis, size) -> an op.pad of it, shared by the consumers that need it."""
    leftovers: list[Operation] = field(default_factory=list)
    """Slices and old weights that may end up unused."""
    target: GpuTarget = field(init=False)

    def __post_init__(self) -> None:
        self.target = self.owner.target

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ops.Conv2dOp):
            self.conv(op, rewriter)
        elif isinstance(op, ops.GemmOp):
            self.gemm(op, rewriter)
        elif isinstance(op, ops.UnaryOp | ops.BinaryOp):
            self.elementwise(op, rewriter)

    # ----------------------------------------------------------------- shared steps

    def note(self, op: Operation, reason: str) -> None:
        statistics.note(self.owner, f"left {where(op)} alone: {reason}")

    def input_aligned(self, channels: int, element_type, fixed_channels: bool) -> bool:
        if fixed_channels and self.owner.stem_channels:
            return channels == self.owner.stem_channels or (
                channels > self.owner.stem_channels and channels % alignment(element_type, self.target) == 0)
        if channels % alignment(element_type, self.target) == 0:
            return True
        return fixed_channels and channels in self.target.fixed_channels

    def input_target(self, channels: int, element_type, fixed_channels: bool) -> int:
        if self.input_aligned(channels, element_type, fixed_channels):
            return channels
        if fixed_channels and self.owner.stem_channels and channels < self.owner.stem_channels:
            return self.owner.stem_channels
        if fixed_channels and channels < self.target.fixed_channels[-1]:
            return self.target.fixed_channels[-1]
        return round_up(channels, alignment(element_type, self.target))

    def padded_input(self, value: SSAValue, axis: int, size: int, work: Padding, location) -> SSAValue:
        """`value` with zeros appended along `axis` up to `size`: a shared op.pad."""
        axis %= value.type.get_num_dims()
        key = (value, axis, size)
        if key in self.pads:
            return self.pads[key]
        if key not in work.pads:
            rank = value.type.get_num_dims()
            pads = [0] * (2 * rank)
            pads[rank + axis] = size - tensor_shape(value.type)[axis]
            pad = work.add(ops.PadOp(value, pads), location)
            pad.results[0].name_hint = padded_name(value)
            work.pads[key] = pad.results[0]
        return work.pads[key]

    def wide_operand(self, value: SSAValue, accepts) -> Wide | None:
        wide = self.wide.get(value)
        if wide is not None and accepts(wide.width):
            statistics.count(self.owner, "pads fused into producers")
            return wide
        return None

    def constant(self, work: Padding, value: SSAValue, array: np.ndarray, fallback: str, location) -> SSAValue:
        self.leftovers.append(value.owner)
        name = f"{constant_name(value, fallback)}.padded"
        result = work.add(ops.ConstantOp(make_weight_attr(name, array)), location).results[0]
        result.name_hint = padded_name(value)
        return result

    def residual_input(self, residual: SSAValue | None, width: int, work: Padding, location) -> tuple[SSAValue | None, float]:
        """The residual of an op whose output grows to `width` channels, and its fill."""
        if residual is None:
            return None, 0.0
        wide = self.wide.get(residual)
        if wide is not None and wide.width == width:
            return wide.value, wide.fill
        return self.padded_input(residual, -1, width, work, location), 0.0

    def epilogue_operands(
        self, op: ops.Conv2dOp | ops.GemmOp, bias: np.ndarray | None, channels: int, width: int, kind: str, work: Padding
    ) -> tuple[list[SSAValue], float]:
        """The bias and residual operands of a conv or GEMM whose output grows from
        `channels` to `width` channels (`bias` is the bias's value), and the residual's
        fill."""
        operands: list[SSAValue] = []
        if op.bias is not None and width != channels:
            operands.append(self.constant(work, op.bias, pad_axes(bias, {0: width}), f"{kind}.bias", op.location))
        elif op.bias is not None:
            operands.append(op.bias)
        residual, residual_fill = (
            self.residual_input(op.residual, width, work, op.location) if width != channels else (op.residual, 0.0)
        )
        if residual is not None:
            operands.append(residual)
        return operands, residual_fill

    def finish(
        self, op: Operation, new: Operation, work: Padding, channels: int, width: int, fill: float, rewriter: PatternRewriter
    ) -> None:
        """Replaces `op` by `new` (whose last axis has `width` channels for `channels`),
        slicing the true channels back for the users."""
        work.add(new, op.location)
        result = new.results[0]
        if width != channels:
            rank = result.type.get_num_dims()
            cut = work.add(ops.SliceOp(result, [0], [channels], [rank - 1], [1]), op.location)
            self.leftovers.append(cut)
            replacement = cut.results[0]
            if stays_finite(fill, result.type.element_type):
                self.wide[replacement] = Wide(result, width, fill)
        else:
            replacement = result
        replacement.name_hint = op.results[0].name_hint
        rewriter.replace(op, work.new_ops, [replacement])
        self.pads.update(work.pads)  # later consumers of the same values share them
        if work.pads:
            statistics.count(self.owner, "op.pad inserted", len(work.pads))

    # ------------------------------------------------------------------------ convs

    def conv(self, op: ops.Conv2dOp, rewriter: PatternRewriter) -> None:
        element = op.input.type.element_type
        a = alignment(element, self.target)
        c = tensor_shape(op.input.type)[-1 if op.prop_value("layout") == "NHWC" else 1]
        k = op.output_channels
        groups = op.prop_value("groups")
        if groups == 1:
            misaligned = k % a != 0 or not self.input_aligned(c, element, True)
        else:
            misaligned = c % a != 0 or k % a != 0
        if not misaligned and op.input not in self.wide:
            return
        if op.prop_value("layout") != "NHWC" or op.prop_value("filter_layout") != "OHWI":
            if misaligned:
                self.note(op, "its layout is NCHW; pad-alignment pads NHWC/OHWI convs only")
            return
        weight = constant_of(op.filter)
        bias = constant_of(op.bias)
        if weight is None or (op.bias is not None and bias is None):
            if misaligned:
                self.note(op, "its filter or bias is not a constant")
            return
        work = Padding()
        if groups == 1:
            plan = self.plain_conv(op, c, k, element, work)
        else:
            plan = self.grouped_conv(op, c, k, groups, element, work)
        if plan is None:
            return
        source, c_new, k_new, groups_new = plan
        if (c_new, k_new) == (c, k) and source is op.input:
            return
        weight_new = pad_axes(weight, {0: k_new, 3: c_new // groups_new} if groups == 1 else {0: k_new})
        operands = [source, self.constant(work, op.filter, weight_new, "conv.filter", op.location)]
        epilogue_operands, residual_fill = self.epilogue_operands(op, bias, k, k_new, "conv", work)
        operands += epilogue_operands
        properties = dict(op.properties)
        if groups_new != groups:
            properties["groups"] = i64_attr(groups_new)
        new = ops.Conv2dOp.create(
            operands=operands,
            result_types=[widened_type(op.output, k_new)],
            properties=properties,
            attributes=dict(op.attributes),
        )
        fill = epilogue_fill(op.epilogue, op.bias is not None, residual_fill)
        self.finish(op, new, work, k, k_new, fill, rewriter)
        statistics.count(self.owner, "op.conv2d padded")
        statistics.count(self.owner, "channels padded", (c_new - c) + (k_new - k))

    def plain_conv(self, op: ops.Conv2dOp, c: int, k: int, element, work: Padding):
        """groups = 1: C and K each round up on their own."""
        wide = self.wide_operand(op.input, lambda width: self.input_aligned(width, element, True))
        if wide is not None:
            source, c_new = wide.value, wide.width
        elif self.input_aligned(c, element, True):
            source, c_new = op.input, c
        else:
            c_new = self.input_target(c, element, True)
            source = self.padded_input(op.input, -1, c_new, work, op.location)
        return source, c_new, round_up(k, alignment(element, self.target)), 1

    def grouped_conv(self, op: ops.Conv2dOp, c: int, k: int, groups: int, element, work: Padding):
        """Grouped and depthwise convs grow by whole groups: channels appended inside a
        group would move every later group's channels."""
        a = alignment(element, self.target)
        per_group_in, per_group_out = c // groups, k // groups

        def fits(extra: int) -> bool:
            return (c + extra * per_group_in) % a == 0 and (k + extra * per_group_out) % a == 0

        wide = self.wide.get(op.input)
        if wide is not None and (wide.width - c) % per_group_in == 0 and fits((wide.width - c) // per_group_in):
            extra = (wide.width - c) // per_group_in
            statistics.count(self.owner, "pads fused into producers")
            return wide.value, wide.width, k + extra * per_group_out, groups + extra
        # C + e * C/g = (g + e) * C/g, and the same for K: e = -g mod a always fits.
        extra = next(e for e in range(a) if fits(e))
        if extra * per_group_in > c or extra * per_group_out > k:
            self.note(op, f"aligning C = {c} and K = {k} ({groups} groups) takes {extra} more groups, more than doubling it")
            return None
        if extra == 0:
            return op.input, c, k, groups
        c_new = c + extra * per_group_in
        return self.padded_input(op.input, -1, c_new, work, op.location), c_new, k + extra * per_group_out, groups + extra

    # ------------------------------------------------------------------------ GEMMs

    def gemm(self, op: ops.GemmOp, rewriter: PatternRewriter) -> None:
        element = op.a.type.element_type
        a = alignment(element, self.target)
        _, n, k = op.problem
        layout_a, layout_b = op.prop_value("layout_a"), op.prop_value("layout_b")
        wide = self.wide.get(op.a) if layout_a == "row" else None
        if n % a == 0 and k % a == 0 and wide is None:
            return
        b = constant_of(op.b)
        bias = constant_of(op.bias)
        if b is None or (op.bias is not None and bias is None):
            if n % a or k % a:
                self.note(op, "its B or bias is not a constant")
            return
        work = Padding()
        wide = self.wide_operand(op.a, lambda width: width % a == 0) if layout_a == "row" else None
        if wide is not None:
            source, k_new = wide.value, wide.width
        elif k % a == 0:
            source, k_new = op.a, k
        else:
            k_new = round_up(k, a)
            source = self.padded_input(op.a, -1 if layout_a == "row" else -2, k_new, work, op.location)
        n_new = round_up(n, a)
        if (k_new, n_new) == (k, n):
            return
        k_axis, n_axis = (-2, -1) if layout_b == "row" else (-1, -2)
        operands = [source, self.constant(work, op.b, pad_axes(b, {k_axis: k_new, n_axis: n_new}), "gemm.b", op.location)]
        epilogue_operands, residual_fill = self.epilogue_operands(op, bias, n, n_new, "gemm", work)
        operands += epilogue_operands
        new = ops.GemmOp.create(
            operands=operands,
            result_types=[widened_type(op.output, n_new)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        fill = epilogue_fill(op.epilogue, op.bias is not None, residual_fill)
        self.finish(op, new, work, n, n_new, fill, rewriter)
        statistics.count(self.owner, "op.gemm padded")
        statistics.count(self.owner, "channels padded", (k_new - k) + (n_new - n))

    # ------------------------------------------------------------------ elementwise

    def elementwise(self, op: ops.UnaryOp | ops.BinaryOp, rewriter: PatternRewriter) -> None:
        """Carries widened operands through, when the added channels stay finite."""
        out_shape = tensor_shape(op.output.type)
        if not out_shape or (isinstance(op, ops.BinaryOp) and op.fn.data not in NEUTRAL_PAD):
            return
        channels = out_shape[-1]
        work = Padding()
        operands: list[SSAValue] = []
        fills: list[float] = []
        widths: set[int] = set()
        for value in op.operands:
            shape = tensor_shape(value.type)
            wide = self.wide.get(value)
            if wide is not None and shape[-1] == channels:
                operands.append(wide.value)
                fills.append(wide.fill)
                widths.add(wide.width)
            elif wide is not None:
                return  # broadcast along the channels: the added ones would not line up
            elif (array := constant_of(value)) is not None and array.size == 1:
                operands.append(value)
                fills.append(float(array.reshape(-1)[0]))
            elif array is not None and shape[-1] == channels != 1 and isinstance(op, ops.BinaryOp):
                operands.append(value)  # padded below, once the width is known
                fills.append(NEUTRAL_PAD[op.fn.data])
            else:
                return
        if len(widths) != 1:
            return
        (width,) = widths
        with np.errstate(all="ignore"):
            if isinstance(op, ops.UnaryOp):
                fill = float(activation(op.fn.data, op.prop_value("args"), np.array([fills[0]]))[0])
            else:
                fill = float(np.asarray(BINARY[op.fn.data](np.float64(fills[0]), np.float64(fills[1]))))
        element = op.output.type.element_type
        if not stays_finite(fill, element):
            return
        for index, value in enumerate(op.operands):
            if operands[index] is value and constant_of(value).size != 1:
                array = pad_axes(constant_of(value), {-1: width})
                array[..., channels:] = fills[index]
                operands[index] = self.constant(work, value, array, "operand", op.location)
        new = type(op).create(
            operands=operands,
            result_types=[TensorType(element, (*out_shape[:-1], width))],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        self.finish(op, new, work, channels, width, fill, rewriter)
        statistics.count(self.owner, f"{op.name} widened")


@dataclass
class EraseLeftovers(RewritePattern):
    """Erases the slices nobody reads (every user took the widened value) and the
    weights the padded ops replaced."""

    leftovers: list[Operation]
    candidates: set[int] = field(init=False)

    def __post_init__(self) -> None:
        self.candidates = {id(op) for op in self.leftovers}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if id(op) in self.candidates and not any(result.uses for result in op.results):
            rewriter.erase(op)


@dataclass(frozen=True)
class PadAlignmentPass(ModulePass):
    """Pads conv and GEMM channels with zeros to the tensor cores' 16-byte alignment.

    Requires: op-level IR (after lower-graph-to-op); weights, biases and GEMM B operands
    as `op.constant`s for the ops to pad; convs in NHWC/OHWI.
    Guarantees: every NHWC `op.conv2d` with constant weights has input and output
    channel counts that are multiples of 16 bytes of its element type (8 f16, 4 f32; a
    3-channel conv input pads to 4, for the fixed-channels kernel, or to `stem_channels`
    where that is set), except
    grouped convs that only more than doubling would align; every `op.gemm` with a
    constant B has K and N aligned the same way. Added weights and biases are zeros;
    added activation channels come from the producer (a padded conv or GEMM, through
    `op.unary`/`op.binary`) or from an `op.pad` of zeros, and `op.slice` gives the true
    channels to every other user. NCHW convs, non-constant weights and unalignable
    grouped convs are left alone with a note. The module computes the same function.
    Statistics: "channels padded" (channels added to conv/GEMM problems, inputs and
    outputs), "op.conv2d padded", "op.gemm padded", "op.pad inserted", "op.slice
    inserted", "pads fused into producers", "op.unary widened", "op.binary widened".
    """

    name = "pad-alignment"
    arch: str = DEFAULT_ARCH
    stem_channels: int = 0
    """Convs whose input has fewer channels than this (image stems) get exactly this many
    (zeros added), instead of the target's fixed-channels counts (0: the target's, 3 -> 4).
    16 makes VGG-16's first conv one that the halo conv takes (select-kernels
    narrow_convs=halo): 16 channels are one row of its 32-byte swizzle."""

    def __post_init__(self) -> None:
        try:
            get_target(self.arch)
        except BoltError:
            raise BoltError(f"arch must be one of {', '.join(ARCHS)}; got '{self.arch}'") from None
        if self.stem_channels < 0 or self.stem_channels % 4:
            raise BoltError(f"stem_channels must be 0 or a positive multiple of 4; got {self.stem_channels}")

    @property
    def target(self) -> GpuTarget:
        """The record of `arch`: its alignment and the fixed channel counts."""
        return get_target(self.arch)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        padder = PadChannels(self)
        PatternRewriteWalker(padder, apply_recursively=False).rewrite_module(op)
        cleanup = EraseLeftovers(padder.leftovers)
        PatternRewriteWalker(cleanup, apply_recursively=False, walk_reverse=True).rewrite_module(op)
        kept = sum(1 for leftover in padder.leftovers if isinstance(leftover, ops.SliceOp) and leftover.parent is not None)
        if kept:
            statistics.count(self, "op.slice inserted", kept)
