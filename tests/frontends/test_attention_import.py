"""Attention written as one op by its source: ONNX's `Attention` (opset 23) and torch's
`scaled_dot_product_attention` (imported undecomposed) become one `graph.attention`
computing what ONNX's reference evaluator and torch compute; what is not supported is a
one-line error naming it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from boltir.interp import run

SHAPES = {"q": [2, 3, 5, 8], "k": [2, 3, 6, 8], "v": [2, 3, 6, 4]}


def attention_model(attrs=None, mask=None, outputs=1, shapes=SHAPES):
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in shapes.items()]
    names = list(shapes)
    if mask is not None:
        inputs.append(helper.make_tensor_value_info("m", mask, [2, 1, 5, 6]))
        names.append("m")
    output_names = ["y"] + [f"extra{i}" for i in range(1, outputs)]
    node = helper.make_node("Attention", names, output_names, **(attrs or {}))
    graph_outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in output_names]
    graph = helper.make_graph([node], "attention", inputs, graph_outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


CASES = {
    "plain": ({}, None),
    "causal_scaled": ({"is_causal": 1, "scale": 0.2}, None),
    "boolean": ({}, TensorProto.BOOL),
    "additive": ({}, TensorProto.FLOAT),
}


@pytest.mark.parametrize("case", list(CASES))
def test_onnx_attention(case, rng):
    pytest.importorskip("onnx.reference.ops.op_attention")
    attrs, mask = CASES[case]
    model = attention_model(attrs, mask)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()}
    if mask == TensorProto.BOOL:
        inputs["m"] = rng.random((2, 1, 5, 6)) < 0.7
    elif mask == TensorProto.FLOAT:
        inputs["m"] = -rng.random((2, 1, 5, 6)).astype(np.float32)
    module = import_model(model)
    assert [op.name for op in module.walk() if op.name.startswith("graph.")] == ["graph.attention"]
    expected = ReferenceEvaluator(model).run(None, inputs)[0]
    np.testing.assert_allclose(run(module, inputs)[0], expected, rtol=1e-5, atol=1e-5)


BAD = {
    "sliding_window": (attention_model({"left_window_size": 2}), "attribute left_window_size is not supported"),
    "heads": (
        attention_model(shapes={"q": [2, 3, 5, 8], "k": [2, 2, 6, 8], "v": [2, 2, 6, 4]}),
        "Q's 3 heads are not a multiple of K's 2",
    ),
}


MORE = {
    "three_d": ({"q_num_heads": 3, "kv_num_heads": 3}, {"q": [2, 5, 24], "k": [2, 6, 24], "v": [2, 6, 12]}),
    "grouped_query": ({"is_causal": 1}, {"q": [2, 4, 5, 8], "k": [2, 2, 6, 8], "v": [2, 2, 6, 4]}),
    "softcap": ({"softcap": 2.0}, SHAPES),
}


@pytest.mark.parametrize("case", list(MORE))
def test_onnx_attention_more_forms(case, rng):
    """3-D inputs with head counts, grouped-query heads, and a softcap (written out)."""
    pytest.importorskip("onnx.reference.ops.op_attention")
    attrs, shapes = MORE[case]
    model = attention_model(attrs, shapes=shapes)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    expected = ReferenceEvaluator(model).run(None, inputs)[0]
    np.testing.assert_allclose(run(import_model(model), inputs)[0], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", list(BAD))
def test_onnx_attention_unsupported(case):
    model, message = BAD[case]
    with pytest.raises(BoltError) as error:
        import_model(model)
    assert str(error.value).endswith(message) and "\n" not in str(error.value)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("kind", ["none", "causal", "boolean", "additive"])
def test_torch_scaled_dot_product_attention(kind):
    torch = pytest.importorskip("torch", reason="needs torch: pip install boltir[torch]")
    from boltir.frontends.torch import export_module, import_exported_program
    from tests.support.attention_models import SdpaBlock

    torch.manual_seed(3)
    block = SdpaBlock(causal=kind == "causal").eval()
    x = torch.randn(2, 8, 64)
    mask = {"boolean": torch.rand(2, 1, 8, 8) < 0.8, "additive": -torch.rand(2, 1, 1, 8)}.get(kind)
    args = (x,) if mask is None else (x, mask)
    module = import_exported_program(export_module(block, args), decompose_first=False)
    (attention,) = [op for op in module.walk() if op.name == "graph.attention"]
    assert attention.prop_value("causal") == (kind == "causal") and attention.prop_value("scale") == pytest.approx(0.25)
    got = run(module, {name: a.numpy() for name, a in zip(["x", "mask"], args)})[0]
    np.testing.assert_allclose(got, block(*args).detach().numpy(), rtol=1e-5, atol=1e-5)
