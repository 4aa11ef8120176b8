"""GatherElements (ONNX) and torch.gather as graph ops the compiler already runs:

    out[p] = data[p with its `axis` coordinate replaced by indices[p]]   for p in indices' shape

is a `graph.gather` of the data flattened to one axis, at flat positions

    flat[p] = offsets[p] + indices[p] · stride(axis)

where `offsets` (a constant of the indices' shape) holds the other coordinates' part of
each position's offset. Negative indices count from the end (ONNX's rule; torch refuses
them at run time), and out-of-range ones are clamped by the gather kernel as a gather's
are. Both importers call `gather_elements`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation, SSAValue

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import element_type_for, numpy_dtype

Emit = Callable[[Operation], Operation]
Constant = Callable[[str, np.ndarray], SSAValue]
"""(name hint, array) -> a graph.constant's value."""
Error = Callable[[str], BoltError]
"""A message -> the one-line error that names the node (the importers' `ctx.error`)."""


def check_gather_elements(data_shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int, error: Error) -> None:
    """The indices have the data's rank and, off `axis`, no larger a size."""
    if len(index_shape) != len(data_shape):
        raise error(f"the indices' rank {len(index_shape)} differs from the data's rank {len(data_shape)}")
    for k, (i, d) in enumerate(zip(index_shape, data_shape, strict=True)):
        if k != axis and i > d:
            raise error(f"the indices' size {i} in dimension {k} exceeds the data's size {d}")


def gather_elements(emit: Emit, constant: Constant, data: SSAValue, indices: SSAValue, axis: int, error: Error) -> SSAValue:
    """`data` gathered along `axis` (already non-negative) at `indices` (i32 or i64),
    a result of the indices' shape."""
    data_shape, index_shape = tuple(data.type.get_shape()), tuple(indices.type.get_shape())
    check_gather_elements(data_shape, index_shape, axis, error)
    index_dtype = numpy_dtype(indices.type.element_type)
    if index_dtype not in (np.int32, np.int64):
        raise error(f"indices must be int32 or int64, got {index_dtype}")
    if math.prod(data_shape) >= 2**31:
        index_dtype = np.dtype(np.int64)
        indices = emit(graph.CastOp(indices, element_type_for(index_dtype))).output
    strides = np.array([math.prod(data_shape[k + 1 :]) for k in range(len(data_shape))], np.int64)
    offsets = np.zeros(index_shape, np.int64)
    for k, coordinates in enumerate(np.indices(index_shape, sparse=True)):
        if k != axis:
            offsets = offsets + coordinates * strides[k]

    def scalar(name: str, value: int) -> SSAValue:
        return constant(name, np.array(value, index_dtype))

    size = scalar("axis_size", data_shape[axis])
    negative = emit(graph.LessOp(indices, scalar("zero", 0))).output
    wrapped = emit(graph.AddOp(indices, size)).output
    positions = emit(graph.WhereOp(negative, wrapped, indices)).output
    if strides[axis] != 1:
        positions = emit(graph.MulOp(positions, scalar("axis_stride", int(strides[axis])))).output
    if offsets.any():
        positions = emit(graph.AddOp(positions, constant("offsets", offsets.astype(index_dtype)))).output
    flat = emit(graph.ReshapeOp(data, (math.prod(data_shape),))).output
    return emit(graph.GatherOp(flat, positions, 0)).output
