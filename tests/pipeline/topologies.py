"""Real model topologies with fresh random weights: the onnx wheel's `light` models
(ResNet-50, VGG-19, SqueezeNet, DenseNet-121, ShuffleNet) store every weight as 0.02,
and uniform weights hide layout bugs, so every float weight is redrawn after import.

Redrawn BatchNorm statistics do not normalize anything: through ResNet-50's residual
sums the logits grew to 2e4, where f32 rounding alone moves a peaked softmax by 4e-4.
So the statistics are then calibrated on one random input, as training leaves them."""

from __future__ import annotations

import os

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, impl, register_impls

from boltir.dialects import graph
from boltir.dtypes import is_floating
from boltir.frontends.onnx import import_model
from boltir.interp import bind_inputs, find_entry, make_interpreter
from boltir.interp.graph import GraphFunctions
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


class _Calibrating(GraphFunctions):
    """Normalizes each BatchNorm by its input's own per-channel statistics, and keeps them."""

    def __init__(self):
        super().__init__()
        self.statistics: dict[graph.BatchNormOp, tuple[np.ndarray, np.ndarray]] = {}

    @impl(graph.BatchNormOp)
    def run_batch_norm(self, interpreter: Interpreter, op: graph.BatchNormOp, args: tuple):
        x = np.asarray(args[0], dtype=np.float64)
        axes = (0,) + tuple(range(2, x.ndim))
        mean, variance = x.mean(axis=axes), x.var(axis=axes)
        self.statistics[op] = (mean, variance)
        calibrated = (args[0], args[1], args[2], mean.astype(args[3].dtype), variance.astype(args[4].dtype))
        return super().run_batch_norm(interpreter, op, calibrated).values  # the parent's result, unwrapped


register_impls(_Calibrating)


def _replace_constant(op: graph.BatchNormOp, index: int, array: np.ndarray) -> None:
    new = graph.ConstantOp(make_weight_attr(op.operands[index].name_hint or "weight", array))
    new.output.name_hint = op.operands[index].name_hint
    old = op.operands[index].owner
    op.parent.insert_op_before(new, op)
    op.operands[index] = new.output
    if not old.output.uses:
        old.parent.erase_op(old)


def calibrate_batchnorm(module: ModuleOp, rng: np.random.Generator) -> ModuleOp:
    """Sets every BatchNorm's mean and variance to those of its input on one standard
    normal input, so that activations stay near unit scale through the network."""
    entry = find_entry(module)
    inputs = {f"arg{i}": rng.standard_normal(tuple(t.get_shape())).astype(np.float32) for i, t in enumerate(entry.function_type.inputs)}
    interpreter = make_interpreter(module)
    calibrating = _Calibrating()
    interpreter.register_implementations(calibrating, override=True)
    interpreter.call_op(entry, tuple(bind_inputs(entry, inputs)))
    for op, (mean, variance) in calibrating.statistics.items():
        _replace_constant(op, 3, mean.astype(np.float32))
        _replace_constant(op, 4, variance.astype(np.float32))
    return module


def import_light_model(name: str, rng: np.random.Generator) -> ModuleOp:
    return calibrate_batchnorm(rerandomize(import_model(light_model_path(name)), rng), rng)
