"""Shape and index arithmetic that exporters write with ONNX ops boltir has no graph op
for: when every input of such a node is a constant, onnx's reference implementation
computes its outputs at import.

PyTorch's exporter writes `embed_dim % num_heads` as a Mod of two constants
(nn.MultiheadAttention: ViT, Swin), T5's relative-position buckets as Abs, Min and Log
of a constant index grid, and Swin's shifted-window mask as ScatterND into a constant.
Only the ops in `FOLDED_OPS` are folded: elementwise ops, scatters and reductions,
whose results are no larger than their broadcast inputs (checked before computing them,
as every constant made at import is). The same ops on a tensor known only at run time
stay unsupported.
"""

from __future__ import annotations

import numpy as np
import onnx

from boltir.diagnostics import BoltError
from boltir.frontends.onnx_context import check_constant_size, node_label

BROADCAST_OPS = frozenset({"BitShift", "Max", "Min", "Mod"})
"""Folded ops whose result has the inputs' broadcast shape; the others' is at most the
first input's."""
FOLDED_OPS = BROADCAST_OPS | frozenset({
    "Abs", "Ceil", "Floor", "IsInf", "IsNaN", "Log", "ReduceMin", "ReduceProd", "Round", "ScatterElements",
    "ScatterND", "Sign",
})
"""The ops folded with onnx's reference implementation when they have no converter."""


def reference_foldable(node: onnx.NodeProto, inputs: list[object | None]) -> bool:
    """Whether `node` is a `FOLDED_OPS` node whose given inputs are all constants."""
    given = [value for name, value in zip(node.input, inputs) if name]
    return node.op_type in FOLDED_OPS and bool(given) and all(isinstance(v, np.ndarray) for v in given)


def fold_node(node: onnx.NodeProto, inputs: list[np.ndarray | None], opset: int) -> list[np.ndarray]:
    """The outputs of `node` on constant `inputs`, computed by onnx.reference; one-line
    BoltErrors for a result too large to compute and for the reference's failures."""
    what = f"{node.op_type} node '{node_label(node)}'"
    shapes = [value.shape for name, value in zip(node.input, inputs) if name and value is not None]
    if node.op_type in BROADCAST_OPS:
        try:
            check_constant_size(tuple(np.broadcast_shapes(*shapes)), what)
        except ValueError as error:
            raise BoltError(f"{what}: its inputs' shapes {[list(s) for s in shapes]} do not broadcast") from error
    from onnx.reference import ReferenceEvaluator

    feeds = {name: value for name, value in zip(node.input, inputs) if name}
    try:
        outputs = ReferenceEvaluator(node, opsets={"": opset}).run(None, feeds)
    except Exception as error:  # the reference's own checks: types, attributes, axes
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise BoltError(f"{what}: folding it at import failed: {type(error).__name__}: {first}") from error
    return [np.asarray(value) for value in outputs]
