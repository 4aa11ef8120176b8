"""The multiply-adds of an ONNX model's convolutions and matrix products, counted from
the ONNX graph alone (ONNX's shape inference), independently of boltir: the yardstick of
the roofline's FLOP counts (tests/backends/test_roofline.py) and of the model efficiency
`bench/models.py` reports (model FLOPs = 2 × these)."""

from __future__ import annotations

import math
import os

import onnx
from onnx import shape_inference


def _shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """Every value's static shape: initializers, inputs, outputs and inferred intermediates."""
    inferred = shape_inference.infer_shapes(model, data_prop=True)  # shapes computed by Shape/Gather/Concat chains
    shapes = {init.name: tuple(init.dims) for init in inferred.graph.initializer}
    for info in [*inferred.graph.input, *inferred.graph.output, *inferred.graph.value_info]:
        dims = info.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[info.name] = tuple(d.dim_value for d in dims)
    return shapes


def _attribute(node: onnx.NodeProto, name: str, default):
    for attribute in node.attribute:
        if attribute.name == name:
            return onnx.helper.get_attribute_value(attribute)
    return default


def multiply_adds(model: onnx.ModelProto | str | os.PathLike) -> int:
    """Conv, ConvTranspose, Gemm and MatMul multiply-adds; other ops count none."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model), load_external_data=False)
    shapes = _shapes(model)
    total = 0
    for node in model.graph.node:
        if node.op_type == "Conv":
            # each output element: C / groups × kH × kW taps of the filter (K × C/g × kH × kW)
            total += math.prod(shapes[node.output[0]]) * math.prod(shapes[node.input[1]][1:])
        elif node.op_type == "ConvTranspose":
            # each input element scatters into K/g × kH × kW outputs (filter C × K/g × kH × kW)
            total += math.prod(shapes[node.input[0]]) * math.prod(shapes[node.input[1]][1:])
        elif node.op_type == "Gemm":
            a = shapes[node.input[0]]
            k = a[0] if _attribute(node, "transA", 0) else a[1]
            total += math.prod(shapes[node.output[0]]) * k
        elif node.op_type == "MatMul":
            total += math.prod(shapes[node.output[0]]) * shapes[node.input[0]][-1]
    return total
