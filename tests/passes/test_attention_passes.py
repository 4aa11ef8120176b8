"""recognize-attention, the attention lowering and merge-qkv on what exporters write for
small torch transformers (tests/support/attention_models.py): each form becomes one
`graph.attention`, then one "BSHD" or "BS3HD" `op.attention`, and the module computes
the same outputs on fresh random inputs (realistic 0/1 attention masks) at every step;
the mask variants through torch.export's decomposition of scaled_dot_product_attention."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.frontends.onnx import import_model
from boltir.interp import run
from boltir.passes import statistics
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec
from tests.passes.equivalence import random_inputs, relative_error

torch = pytest.importorskip("torch", reason="needs torch: pip install boltir[torch]")
from tests.support import attention_models as models  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning", "ignore::RuntimeWarning")

GRAPH = "canonicalize,fold-constants,recognize-attention"
OP_LEVEL = default_pipeline(dtype="f32")
BATCH, SEQ, HIDDEN = 2, 8, 64


def padding_mask(rng) -> np.ndarray:
    lengths = rng.integers(SEQ // 2, SEQ + 1, BATCH)
    return (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.float32)


def transformed(module, spec: str, rng, given=None, tolerance: float = 1e-5):
    """`module` after the passes `spec` names, checked against it on two random inputs."""
    after = module.clone()
    with statistics.collecting() as collected:
        for pass_ in parse_pipeline_spec(spec, available_passes()):
            pass_.apply(boltir.make_context(), after)
            boltir.verify_module(after)
    for _ in range(2):
        inputs = random_inputs(module, rng, given(rng) if given else None)
        for got, expected in zip(run(after, inputs), run(module, inputs), strict=True):
            error = relative_error(got, expected)
            assert error < tolerance, f"‖Δ‖/‖ref‖ = {error:.3g}"
    return after, collected


def names(module) -> list[str]:
    return [op.name for op in module.walk()]


def attentions(module) -> list:
    return [op for op in module.walk() if op.name in ("graph.attention", "op.attention")]


FORMS = {
    "bert_div": (lambda: models.Encoder(scale_mode="div"), True, False),
    "bert_mul": (lambda: models.Encoder(scale_mode="mul"), True, False),
    "bert_scaled_q_and_k": (lambda: models.Encoder(scale_mode="qk"), True, False),
    "gpt2_where": (lambda: models.CausalBlock(mode="where"), False, True),
    "gpt2_additive": (lambda: models.CausalBlock(mode="add"), False, True),
    "sdpa_onnx": (lambda: models.SdpaBlock(), False, False),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_onnx_export_forms(form, rng, tmp_path):
    make, masked, causal = FORMS[form]
    torch.manual_seed(0)
    x = torch.randn(BATCH, SEQ, HIDDEN)
    args, input_names = ((x, torch.ones(BATCH, SEQ)), ["x", "attention_mask"]) if masked else ((x,), ["x"])
    module = import_model(str(models.export_onnx(make(), args, tmp_path / f"{form}.onnx", input_names)))
    given = (lambda r: {"attention_mask": padding_mask(r)}) if masked else None
    after, collected = transformed(module, GRAPH, rng, given)
    found = attentions(after)
    assert found and "graph.softmax" not in names(after)
    assert all(op.prop_value("causal") == causal for op in found)
    assert all((op.mask is not None) == masked for op in found)
    assert collected.get("recognize-attention", "attentions recognized") == len(found)
    lowered, collected = transformed(module, OP_LEVEL, rng, given)
    layouts = {op.prop_value("layout") for op in attentions(lowered)}
    assert layouts == {"BS3HD"}  # SDPA's unpacking of its packed projection, read as a view
    assert "op.layout_transform" not in names(lowered)


MASKS = {
    "none": None,
    "padding": (BATCH, 1, 1, SEQ),
    "square": (BATCH, 1, SEQ, SEQ),
    "boolean": "bool",
    "causal": "causal",
}


@pytest.mark.parametrize("kind", list(MASKS))
def test_torch_export_decomposition_mask_variants(kind, rng):
    """torch.export decomposes scaled_dot_product_attention into bmm, the mask add and
    its safe softmax: each mask variant is read back into one graph.attention."""
    from boltir.frontends.torch import decompose, export_module
    from boltir.frontends.torch_importer import TorchImporter

    torch.manual_seed(1)
    x = torch.randn(BATCH, SEQ, HIDDEN)
    shape = MASKS[kind]
    block = models.SdpaBlock(causal=kind == "causal")
    if shape is None or kind == "causal":
        args = (x,)
    elif shape == "bool":
        args = (x, torch.rand(BATCH, 1, SEQ, SEQ) < 0.8)
    else:
        args = (x, -4 * torch.rand(shape))
    module = TorchImporter(decompose(export_module(block, args))).run()
    assert "graph.softmax" in names(module)
    after, _ = transformed(module, GRAPH, rng)
    (found,) = attentions(after)
    assert found.prop_value("causal") == (kind == "causal")
    assert (found.mask is None) == (kind in ("none", "causal"))
    assert "graph.softmax" not in names(after) and "graph.matmul" not in names(after)


def test_merged_projection_weights_are_the_three_joined(rng, tmp_path):
    """The BERT encoder at the op level: one GEMM per layer for Q, K and V, whose weight
    holds the three projections' (as the ONNX export stores them) side by side."""
    torch.manual_seed(2)
    encoder = models.Encoder(layers=1)
    args = (torch.randn(BATCH, SEQ, HIDDEN), torch.ones(BATCH, SEQ))
    module = import_model(str(models.export_onnx(encoder, args, tmp_path / "bert.onnx", ["x", "attention_mask"])))
    lowered, collected = transformed(module, OP_LEVEL, rng, lambda r: {"attention_mask": padding_mask(r)})
    assert collected.get("merge-qkv", "projections merged") == 1
    (attention,) = attentions(lowered)
    gemm = attention.q.owner.input.owner
    weight = boltir.weights.constant_array(gemm.b.owner.value)
    layer = encoder.layers[0].attention
    expected = np.concatenate([p.weight.detach().numpy().T for p in (layer.query, layer.key, layer.value)], axis=1)
    np.testing.assert_array_equal(weight, expected)


def op_counts(module) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in module.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def test_torch_export_encoder_lowers_as_the_onnx_one(rng, tmp_path):
    """torch.export writes each nn.Linear on [B, S, E] as a 2-D addmm on its own view of the
    input and a view back: the views of one input are one (cse), so Q, K and V merge into
    one GEMM, and the GELU after the view back joins FFN1's epilogue. The op-level module
    then has the ONNX export's GEMMs, attentions and elementwise launches."""
    from boltir.frontends.torch import decompose, export_module
    from boltir.frontends.torch_importer import TorchImporter

    torch.manual_seed(3)
    encoder = models.Encoder(layers=2)
    args = (torch.randn(BATCH, SEQ, HIDDEN), torch.ones(BATCH, SEQ))
    exported = TorchImporter(decompose(export_module(encoder, args))).run()
    from_torch, collected = transformed(exported, OP_LEVEL, rng, lambda r: {"attention_mask": padding_mask(r)})
    onnx_module = import_model(str(models.export_onnx(encoder, args, tmp_path / "bert.onnx", ["x", "attention_mask"])))
    from_onnx, _ = transformed(onnx_module, OP_LEVEL, rng, lambda r: {"attention_mask": padding_mask(r)})
    assert collected.get("merge-qkv", "projections merged") == 2
    torch_counts, onnx_counts = op_counts(from_torch), op_counts(from_onnx)
    for name in ("op.gemm", "op.attention", "op.elementwise", "op.unary", "op.layer_norm"):
        assert torch_counts.get(name, 0) == onnx_counts.get(name, 0), name
    assert torch_counts["op.gemm"] == 2 * 4


def test_constant_masks_that_mask_nothing_are_dropped(rng):
    """BERT exported with no attention mask: its folded additive mask is zeros, and the
    attention reads no bias (the lit case, checked through the interpreter)."""
    from tests.passes.test_attention_layouts import LIT, functions_as_modules

    cases = dict(functions_as_modules(LIT / "recognize-attention.mlir"))
    after, collected = transformed(cases["masks_that_mask_nothing"], "fold-constants,recognize-attention", rng)
    (found,) = attentions(after)
    assert found.mask is None
    assert collected.get("recognize-attention", "masks that mask nothing dropped") == 2
