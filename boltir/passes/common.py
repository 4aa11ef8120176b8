"""What several passes share: reading and naming constants, notes about the ops a pass
left alone, conv filter layouts, batch-norm statistics.

A pass imports these from here, never from another pass's module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, DenseResourceAttr, Float16Type, Float32Type, Float64Type
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from boltir.diagnostics import format_location
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics
from boltir.weights import constant_array, make_weight_attr

CONSTANTS = (graph.ConstantOp, ops.ConstantOp)
"""The constant ops of the dialects passes rewrite."""


# ------------------------------------------------------------------------ constants


def constant_of(value: SSAValue | None) -> np.ndarray | None:
    """The numpy value of a value defined by `graph.constant` or `op.constant`, in its
    element type; None for anything else (and for None)."""
    if value is not None and isinstance(value.owner, CONSTANTS):
        return constant_array(value.owner.value)
    return None


def constant_f64(value: SSAValue | None) -> np.ndarray | None:
    """`constant_of(value)` in f64, for folding weights: computed in f64, rounded once."""
    array = constant_of(value)
    return None if array is None else array.astype(np.float64)


def weight_name(value: SSAValue) -> str | None:
    """The weight name of a constant stored outside the IR (its `dense_resource`
    handle), else None."""
    owner = value.owner
    if isinstance(owner, CONSTANTS) and isinstance(owner.value, DenseResourceAttr):
        return owner.value.resource_handle.data
    return None


def constant_name(value: SSAValue, fallback: str = "constant") -> str:
    """The name new weights derived from `value` are named after: its weight name, else
    its SSA name, else `fallback`."""
    name = weight_name(value)
    if name is not None:
        return name
    return value.name_hint or fallback


def new_constant(name_hint: str, array: np.ndarray, location, element_type: Attribute | None = None) -> graph.ConstantOp:
    """A `graph.constant` holding `array` (rounded to `element_type` when given) as a
    weight named after `name_hint`, at `location`."""
    if element_type is not None:
        array = array.astype(numpy_dtype(element_type))
    constant = graph.ConstantOp(make_weight_attr(name_hint, array))
    constant.location = location
    return constant


WEIGHT_SUFFIXES = (".weight", ".folded_weight", ".merged_weight")
"""The suffixes `name_base` strips: importers name a layer's weight `conv1.weight`,
fold-batchnorm and reparameterize-branches theirs `conv1.folded_weight` and
`conv1.merged_weight`."""


def name_base(value: SSAValue | None, fallback: str) -> str:
    """`conv1` for a weight named `conv1.weight` (or `conv1.folded_weight`,
    `conv1.merged_weight`, as passes name what they fold): the prefix new weights are
    named by."""
    name = (constant_name(value, fallback) if value is not None else None) or fallback
    for suffix in WEIGHT_SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def erase_unused_producers(rewriter: PatternRewriter, values: list[SSAValue | None]) -> None:
    """Erases the constants that fed a folded op and feed nothing else now."""
    for value in values:
        if value is not None and isinstance(value.owner, CONSTANTS) and not value.uses:
            rewriter.erase(value.owner)


# ---------------------------------------------------------------------------- notes


def where(op: Operation) -> str:
    """`graph.conv2d at model.mlir:12:3` (the op's name alone where it has no location),
    for notes."""
    location = format_location(op.location)
    return f"{op.name} at {location}" if location else op.name


@dataclass
class NoteOnce:
    """Notes why a pass left an op alone, once: the walker revisits such ops until
    nothing changes."""

    owner: ModulePass
    noted: set[tuple[Operation, str]] = field(default_factory=set)

    def __call__(self, op: Operation, text: str) -> None:
        if (op, text) not in self.noted:
            self.noted.add((op, text))
            statistics.note(self.owner, text)


# --------------------------------------------------------------------- conv layouts


CHANNELS_LAST = (0, 2, 3, 1)
"""OIHW -> OHWI and IOHW -> IHWO (NCHW -> NHWC for activations)."""
CHANNELS_FIRST = (0, 3, 1, 2)
"""OHWI -> OIHW and IHWO -> IOHW (the inverse of CHANNELS_LAST)."""


def has_nchw_layout(op: graph.ConvBase) -> bool:
    """Whether a graph conv's input and output are NCHW (a batch norm's channel axis
    being theirs)."""
    return op.prop_value("layout") == "NCHW"


def has_channels_last_filter(conv: graph.ConvBase) -> bool:
    """Whether a graph conv's filter is in its channels-last layout (OHWI, or IHWO for
    conv_transpose2d)."""
    return conv.prop_value("filter_layout") == graph.FILTER_LAYOUTS[conv.name][1]


def filter_in_onnx_order(conv: graph.ConvBase, weight: np.ndarray) -> np.ndarray:
    """A conv's weight in ONNX's order (OIHW, or IOHW for conv_transpose2d)."""
    return weight.transpose(CHANNELS_FIRST) if has_channels_last_filter(conv) else weight


def filter_in_conv_order(conv: graph.ConvBase, weight: np.ndarray) -> np.ndarray:
    """The inverse of `filter_in_onnx_order`."""
    return weight.transpose(CHANNELS_LAST) if has_channels_last_filter(conv) else weight


# ----------------------------------------------------------------------- batch norm


def batch_norm_affine(bn: graph.BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """(s, t) with `bn(x) = s * x + t` per channel, in f64; None unless the statistics
    are constants."""
    scale, bias, mean, variance = (constant_f64(v) for v in (bn.scale, bn.bias, bn.mean, bn.variance))
    if scale is None or bias is None or mean is None or variance is None:
        return None
    # epsilon is added in f32, as the interpreter does.
    s = scale / np.sqrt(variance + float(np.float32(bn.prop_value("epsilon"))))
    return s, bias - mean * s


CONVERTED_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)
"""The element types a fused conversion goes between (op.cast's rounding is the kernel's)."""


def float_cast_source(op: Operation | None) -> SSAValue | None:
    """What `op` casts, when it is only a float-to-float cast (`op.cast`, or an
    `op.elementwise` whose body is one truncf / extf); else None."""
    if isinstance(op, ops.CastOp):
        source = op.input
    elif isinstance(op, ops.ElementwiseOp) and len(op.inputs) == 1 and op.inputs[0].type.get_shape() == op.output.type.get_shape():
        body = list(op.body.block.ops)
        if len(body) != 2 or not isinstance(body[0], arith.TruncFOp | arith.ExtFOp) or not isinstance(body[1], ops.YieldOp):
            return None
        if body[0].operands[0] is not op.body.block.args[0] or body[1].operands[0] is not body[0].results[0]:
            return None
        source = op.inputs[0]
    else:
        return None
    types = (source.type.element_type, op.results[0].type.element_type)
    return source if all(isinstance(t, CONVERTED_FLOATS) for t in types) else None
