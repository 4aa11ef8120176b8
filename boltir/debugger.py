"""The per-launch debugger: runs a compiled model launch by launch and compares every
result with the op-level interpreter, which computes each op from the GPU's own inputs to
it (so an error is pinned to the launch that made it, not smeared over what follows).

Used by `boltir.runtime.load(DIR, debug=True)` and `boltc --debug-dump`. Raises a
BoltError naming the first launch whose result diverges, with its error; prints one line
per launch to stderr otherwise.
"""

from __future__ import annotations

import sys

import numpy as np
from xdsl.dialects import func

from boltir.backends.cuda.codegen.host_program import ALIGNMENT, MEMORY_ATTR
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.interp import make_interpreter
from boltir.ir import find_entry, make_context, parse_module
from boltir.manifest import TensorSpec
from boltir.weights import make_weight_attr

TOLERANCE = {"f16": 1e-2, "bf16": 2e-2, "f32": 1e-3}


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    got64, expected64 = got.astype(np.float64), expected.astype(np.float64)
    if not np.isfinite(got64).all() and np.isfinite(expected64).all():
        return float("inf")
    scale = np.linalg.norm(expected64)
    return float(np.linalg.norm(got64 - expected64) / (scale if scale else 1.0))


def load_lowered_module(model):
    """`module.mlir` of a compiled model, with its constants rebound from `weights.bin`
    (the host program lays them out in order, 256-byte aligned)."""
    directory = model.directory
    module = parse_module((directory / model.manifest["module"]).read_text(), str(directory / "module.mlir"), make_context())
    weights = (directory / model.manifest["weights"]).read_bytes()
    offset = 0
    for op in find_entry(module).body.block.ops:
        if isinstance(op, ops.ConstantOp):
            tensor_type = op.output.type
            dtype = numpy_dtype(tensor_type.element_type)
            shape = tuple(tensor_type.get_shape())
            count = int(np.prod(shape, dtype=np.int64))
            offset = -(-offset // ALIGNMENT) * ALIGNMENT
            array = np.frombuffer(weights, dtype=dtype, count=count, offset=offset).reshape(shape)
            offset += array.nbytes
            op.properties["value"] = make_weight_attr("debug", array.copy())
    return module


def compare_launches(model, inputs, pointers, host, stream=sys.stderr) -> float:
    """Runs the model launch by launch, each launch fed the values the GPU computed before
    it, and compares each result with the interpreter's value of the same op: raises at the
    first that diverges past the precision's tolerance, else returns the largest relative
    error of any launch (the kernels' own error, with no amplification through the model)."""
    module = load_lowered_module(model)
    entry = find_entry(module)
    interpreter = make_interpreter(module)
    values = {}
    for arg, spec, pointer in zip(entry.body.block.args, model.inputs, pointers, strict=True):
        values[arg] = model._download(pointer, spec)
    launches = model.manifest["launches"]
    index = 0
    worst = 0.0
    for op in entry.body.block.ops:
        if isinstance(op, func.ReturnOp):
            break
        (expected,) = interpreter.run_op(op, tuple(values[v] for v in op.operands))
        expected = np.asarray(expected)
        launched = not isinstance(op, ops.ConstantOp) and not (
            isinstance(op, ops.ReshapeOp) and op.attributes.get(MEMORY_ATTR) is not None
            and op.operands[0].owner is not None and _same_offset(op)
        )
        if not launched:
            values[op.results[0]] = expected
            continue
        launch = launches[index]
        model._check(model.library.boltir_model_step(model.context, index, inputs, None), f"launch {index} ({launch['kernel']}): ")
        model._check(model.library.boltir_synchronize(), f"launch {index} ({launch['kernel']}): ")
        spec = TensorSpec.of_type("", op.results[0].type)
        pointer = model.library.boltir_model_value(model.context, index, inputs)
        got = model._download(pointer, spec)
        error = relative_error(got, expected)
        tolerance = TOLERANCE.get(spec.dtype, 0.0)
        stream.write(f"launch {index:4d} {op.name:28s} {launch['kernel']:40s} rel err {error:.2e}\n")
        if not error <= tolerance:
            raise BoltError(
                f"launch {index} diverges from the interpreter: {op.name} ({launch['family']}, kernel {launch['kernel']}) "
                f"has relative error {error:.3g} > {tolerance:g}"
            )
        values[op.results[0]] = got
        worst = max(worst, error)
        index += 1
    stream.write(f"all {index} launches match the interpreter (the largest relative error {worst:.2e})\n")
    return worst


def _same_offset(op) -> bool:
    source = op.operands[0].owner
    if not hasattr(source, "attributes") or MEMORY_ATTR not in source.attributes:
        return False
    return list(source.attributes[MEMORY_ATTR].get_values()) == list(op.attributes[MEMORY_ATTR].get_values())
