"""Building `graph` modules from Python: what importers, tests and examples use.

    b = ModelBuilder()
    x = b.input("image", (1, 3, 32, 32))
    w = b.constant("conv1.weight", weights)
    y = b.insert(graph.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output
    module = b.finish([y], ["logits"])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from boltir.dialects import graph
from boltir.dialects.graph import INPUT_NAME_ATTR
from boltir.dtypes import element_type_for
from boltir.weights import make_weight_attr


def _name_hint(name: str) -> str | None:
    """An SSA name hint from a model name, or None when nothing readable is left."""
    hint = "".join(ch if ch.isalnum() or ch in "_." else "_" for ch in name).strip("_")
    if not hint or hint[0].isdigit():
        hint = f"v_{hint}" if hint else ""
    return hint or None


class ModelBuilder:
    """Builds `func.func @main` with named inputs and outputs, one op at a time."""

    def __init__(self) -> None:
        self.block = Block()
        self.input_names: list[str] = []

    def input(self, name: str, shape: Sequence[int], dtype: np.dtype | type = np.float32) -> SSAValue:
        arg = self.block.insert_arg(TensorType(element_type_for(np.dtype(dtype)), tuple(shape)), len(self.block.args))
        arg.name_hint = _name_hint(name)
        self.input_names.append(name)
        return arg

    def insert(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def constant(self, name_hint: str, array: np.ndarray) -> SSAValue:
        op = self.insert(graph.ConstantOp(make_weight_attr(name_hint, np.asarray(array))))
        op.output.name_hint = _name_hint(name_hint)
        return op.output

    def finish(self, outputs: Sequence[SSAValue], output_names: Sequence[str] | None = None) -> ModuleOp:
        output_names = list(output_names) if output_names is not None else [f"output_{i}" for i in range(len(outputs))]
        self.block.add_op(func.ReturnOp(*outputs))
        function = func.FuncOp(
            "main",
            FunctionType.from_lists([a.type for a in self.block.args], [o.type for o in outputs]),
            Region(self.block),
            arg_attrs=ArrayAttr([DictionaryAttr({INPUT_NAME_ATTR: StringAttr(n)}) for n in self.input_names]),
            res_attrs=ArrayAttr([DictionaryAttr({INPUT_NAME_ATTR: StringAttr(n)}) for n in output_names]),
        )
        return ModuleOp([function])
