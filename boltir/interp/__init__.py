"""The numpy interpreter: runs `@main` of a module on the CPU.

`run(module, inputs)` is the reference every pass, importer and GPU kernel is checked
against. Each dialect registers its implementations in its own module here. Under
`wide_arithmetic()` it computes in f64 (rounding where it always does): the difference is
a model's own rounding noise at its precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from boltir.diagnostics import BoltError
from boltir.dtypes import element_type_name, numpy_dtype
from boltir.interp.cutlass import CutlassFunctions
from boltir.interp.graph import GraphFunctions, wide_arithmetic
from boltir.interp.op import OpFunctions
from boltir.ir import (  # re-exported: the entry's home is boltir.ir
    ENTRY_POINT,
    find_entry,
    input_names,
    output_names,
)

__all__ = [
    "ENTRY_POINT",
    "bind_inputs",
    "find_entry",
    "input_names",
    "make_interpreter",
    "output_names",
    "run",
    "wide_arithmetic",
]


def _describe(shape: Sequence[int], type_name: str) -> str:
    return f"{'x'.join(map(str, shape)) or 'scalar'} {type_name}"


def bind_inputs(entry: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Orders `inputs` as `@main`'s arguments, keyed by model name or by `argN`."""
    names = input_names(entry)
    unknown = [k for k in inputs if k not in names and k not in {f"arg{i}" for i in range(len(names))}]
    if unknown:
        raise BoltError(f"unknown input {', '.join(map(repr, unknown))}; the inputs are {', '.join(map(repr, names))}")
    bound: list[np.ndarray] = []
    for index, (name, arg_type) in enumerate(zip(names, entry.function_type.inputs, strict=True)):
        keys = [k for k in (name, f"arg{index}") if k in inputs]
        if not keys:
            expected = _describe(arg_type.get_shape(), element_type_name(arg_type.element_type))
            raise BoltError(f"missing input '{name}' (arg{index}), a {expected} tensor")
        if len(set(keys)) > 1:
            raise BoltError(f"input '{name}' is given twice, by name and as 'arg{index}'")
        value = np.asarray(inputs[keys[0]])
        assert isinstance(arg_type, TensorType)
        expected_shape = tuple(arg_type.get_shape())
        expected_dtype = numpy_dtype(arg_type.element_type)
        if value.shape != expected_shape:
            raise BoltError(
                f"input '{name}' has shape {_describe(value.shape, '')[:-1]}, expected {_describe(expected_shape, '')[:-1]}"
            )
        if value.dtype != expected_dtype:
            raise BoltError(
                f"input '{name}' has dtype {value.dtype}, expected {expected_dtype} "
                f"({element_type_name(arg_type.element_type)})"
            )
        bound.append(value)
    return bound


def make_interpreter(module: ModuleOp) -> Interpreter:
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GraphFunctions())
    interpreter.register_implementations(OpFunctions())
    interpreter.register_implementations(CutlassFunctions())
    return interpreter


def run(module: ModuleOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Runs `@main` on numpy inputs keyed by model input name (or `argN`); returns the
    outputs in result order."""
    entry = find_entry(module)
    args = bind_inputs(entry, inputs)
    results = make_interpreter(module).call_op(entry, tuple(args))
    return [np.asarray(r) for r in results]
