"""Real model topologies with fresh random weights: the onnx wheel's `light` models
(ResNet-50, VGG-19, SqueezeNet, DenseNet-121, ShuffleNet) store every weight as 0.02,
and uniform weights hide layout bugs, so every float weight is redrawn after import."""

from __future__ import annotations

import os

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from boltir.dialects import graph
from boltir.dtypes import is_floating
from boltir.frontends.onnx import import_model
from boltir.weights import constant_array, make_weight_attr

LIGHT_MODELS = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_model_path(name: str) -> str:
    return os.path.join(LIGHT_MODELS, f"light_{name}.onnx")


def redraw(array: np.ndarray, role: str, rng: np.random.Generator) -> np.ndarray:
    """A random array of the same shape, scaled for what it is."""
    shape = array.shape
    if role == "variance":
        values = rng.uniform(0.5, 1.5, shape)
    elif role == "scale":
        values = 1 + 0.2 * rng.standard_normal(shape)
    elif array.ndim >= 2:
        fan_in = int(np.prod(shape[1:])) if array.ndim == 4 else shape[-1]
        values = rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))
    else:
        values = 0.1 * rng.standard_normal(shape)
    return values.astype(array.dtype)


def roles(module: ModuleOp) -> dict:
    """What each constant feeds: BatchNorm scales and variances need their own ranges."""
    found = {}
    for op in module.walk():
        if isinstance(op, graph.BatchNormOp):
            found[op.scale] = "scale"
            found[op.variance] = "variance"
    return found


def rerandomize(module: ModuleOp, rng: np.random.Generator) -> ModuleOp:
    """Redraws every float weight (more than 16 values, or any BatchNorm parameter)."""
    role_of = roles(module)
    for op in list(module.walk()):
        if not isinstance(op, graph.ConstantOp):
            continue
        array = constant_array(op.value)
        role = role_of.get(op.output, "weight")
        if not is_floating(array.dtype) or (array.size <= 16 and op.output not in role_of):
            continue
        new = graph.ConstantOp(make_weight_attr(op.output.name_hint or "weight", redraw(array, role, rng)))
        new.output.name_hint = op.output.name_hint
        op.parent.insert_op_before(new, op)
        op.output.replace_all_uses_with(new.output)
        op.parent.erase_op(op)
    return module


def import_light_model(name: str, rng: np.random.Generator) -> ModuleOp:
    return rerandomize(import_model(light_model_path(name)), rng)
