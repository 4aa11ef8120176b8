"""Runs one `graph` op in boltir's interpreter and the same node in ONNX's reference
evaluator, on the same inputs, and compares the results.

Every tensor the op reads at run time is a model input on both sides. What ONNX takes as
an input but the `graph` dialect holds as an attribute (a Reshape's shape, a Pad's pads,
a Resize's scales, a Clip's bounds...) is an initializer on the ONNX side only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.ir import Operation, SSAValue

from boltir import interp
from boltir.builder import ModelBuilder
from boltir.dtypes import numpy_dtype

OPSET = 21
"""The default ONNX opset of the oracle models: every op here has its current form by then."""

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

TOLERANCES: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-10,
    np.dtype(np.float32): 1e-5,
    np.dtype(np.float16): 1e-2,
}
"""rtol per float dtype; atol is the same number times the largest expected magnitude
(at least 1). f16 is looser: the interpreter computes in f32 and rounds once, ONNX's
reference computes in f16 throughout."""

Build = Callable[..., Operation | SSAValue | Sequence[SSAValue]]


# ---------------------------------------------------------------------------- inputs


def random_array(
    rng: np.random.Generator,
    shape: Sequence[int],
    dtype=np.float32,
    *,
    low: float = -2.0,
    high: float = 2.0,
    nonzero: bool = False,
) -> np.ndarray:
    """Uniform values in [low, high) (integers: [low, high]); `nonzero` keeps them away from 0.

    The result is never all zeros (bool: holds both values when it has two or more elements)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        value = rng.random(shape) < 0.5
        if value.size >= 2:
            flat = value.reshape(-1)
            flat[rng.choice(value.size, 2, replace=False)] = [True, False]
        elif value.size == 1:
            value[...] = True
        return value
    if dtype.kind in "iu":
        value = rng.integers(int(low), int(high), size=shape, endpoint=True).astype(dtype)
        if nonzero:
            value[value == 0] = 1
        elif value.size and not value.any():
            value.reshape(-1)[0] = 1
        return value
    value = rng.uniform(low, high, size=shape)
    if nonzero:
        value = np.where(np.abs(value) < 0.25, np.copysign(0.25, value), value)
    if value.size and not value.any():
        value.reshape(-1)[0] = 1.0
    return value.astype(dtype)


# -------------------------------------------------------------------------- running


def run_boltir(build: Build, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Builds `@main` whose arguments are `inputs` (in order) and whose results are what
    `build(*arguments)` returns (an op's results, or values), verifies it and runs it."""
    builder = ModelBuilder()
    arguments = [builder.input(name, array.shape, array.dtype) for name, array in inputs.items()]
    built = build(*arguments)
    if isinstance(built, Operation):
        outputs = list(built.results)
    elif isinstance(built, SSAValue):
        outputs = [built]
    else:
        outputs = list(built)
    _insert_defining_ops(builder, outputs)
    module = builder.finish(outputs)
    module.verify()
    results = interp.run(module, dict(inputs))
    for index, (result, value) in enumerate(zip(results, outputs, strict=True)):
        declared = (tuple(value.type.get_shape()), numpy_dtype(value.type.element_type))
        assert (result.shape, result.dtype) == declared, (
            f"interpreter result {index} is {result.shape} {result.dtype}, "
            f"but the IR declares {declared[0]} {declared[1]}"
        )
    return results


def _insert_defining_ops(builder: ModelBuilder, values: Sequence[SSAValue]) -> None:
    """Inserts the ops that define `values` and are in no block yet, operands first."""
    for value in values:
        op = value.owner
        if isinstance(op, Operation) and op.parent is None:
            _insert_defining_ops(builder, op.operands)
            builder.insert(op)


def onnx_model(
    nodes: onnx.NodeProto | Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    *,
    constants: Mapping[str, np.ndarray] | None = None,
    opset: int = OPSET,
    output_dtypes: Sequence[np.dtype] | None = None,
) -> onnx.ModelProto:
    """A model of `nodes`; outputs are declared without a shape, and without an element
    type unless `output_dtypes` gives them (onnxruntime needs them, the reference not)."""
    nodes = [nodes] if isinstance(nodes, onnx.NodeProto) else list(nodes)
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for name, a in inputs.items()
    ]
    element_types = (
        [helper.np_dtype_to_tensor_dtype(np.dtype(d)) for d in output_dtypes]
        if output_dtypes is not None
        else [onnx.TensorProto.UNDEFINED] * len(outputs)
    )
    graph_outputs = [
        helper.make_tensor_value_info(name, t, None) for name, t in zip(outputs, element_types, strict=True)
    ]
    initializers = [numpy_helper.from_array(np.asarray(a), name) for name, a in (constants or {}).items()]
    graph = helper.make_graph(nodes, "oracle", graph_inputs, graph_outputs, initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_onnxruntime(
    nodes: onnx.NodeProto | Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    output_dtypes: Sequence[np.dtype],
    **model_options,
) -> list[np.ndarray]:
    """The same model run by onnxruntime (CPU): a second opinion where the reference
    evaluator departs from the ONNX spec."""
    import onnxruntime

    model = onnx_model(nodes, inputs, outputs, output_dtypes=output_dtypes, **model_options)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(r) for r in session.run(list(outputs), dict(inputs))]


def run_onnx(
    nodes: onnx.NodeProto | Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    **model_options,
) -> list[np.ndarray]:
    model = onnx_model(nodes, inputs, outputs, **model_options)
    return [np.asarray(r) for r in ReferenceEvaluator(model).run(list(outputs), dict(inputs))]


# ------------------------------------------------------------------------ comparing


def tolerance_for(dtype: np.dtype) -> float | None:
    """The rtol for a float dtype; None for exact comparison (integers, bool)."""
    return TOLERANCES.get(np.dtype(dtype))


def assert_matches(got: np.ndarray, expected: np.ndarray, *, rtol: float | None = None, what: str = "") -> None:
    """Same dtype, same shape, and values within the dtype's tolerance (exact for integers)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{what}dtype {got.dtype}, expected {expected.dtype}"
    assert got.shape == expected.shape, f"{what}shape {got.shape}, expected {expected.shape}"
    if rtol is None:
        rtol = tolerance_for(got.dtype)
    if rtol is None:
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    finite = expected[np.isfinite(expected)].astype(np.float64)
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    np.testing.assert_allclose(
        got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol * scale, err_msg=what
    )


def check_node(
    build: Build,
    op_type: str,
    inputs: Mapping[str, np.ndarray],
    *,
    attrs: Mapping | None = None,
    onnx_inputs: Sequence[str] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
    num_outputs: int = 1,
    opset: int = OPSET,
    rtol: float | None = None,
) -> list[np.ndarray]:
    """The one-node check: boltir's `build(*inputs)` against ONNX `op_type` with `attrs`.

    `onnx_inputs` names the ONNX node's inputs in order ("" for an absent optional one);
    it defaults to the names of `inputs`. `constants` are ONNX-only initializers."""
    node_inputs = list(onnx_inputs) if onnx_inputs is not None else list(inputs)
    outputs = [f"y{i}" for i in range(num_outputs)]
    node = helper.make_node(op_type, node_inputs, outputs, **dict(attrs or {}))
    expected = run_onnx(node, inputs, outputs, constants=constants, opset=opset)
    got = run_boltir(build, inputs)
    assert len(got) == len(expected), f"{len(got)} results, expected {len(expected)}"
    for index, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert_matches(g, e, rtol=rtol, what=f"{op_type} result {index}: ")
    return got
