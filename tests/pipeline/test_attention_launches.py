"""BERT's launch count: `boltc MODEL.onnx --emit cutlass` on a 2-layer BERT-like encoder
built with torch. Per encoder layer at most 7 kernels (the QKV GEMM, the attention, the
output projection with bias + residual, LayerNorm, the first FFN GEMM with GELU, the
second with bias + residual, LayerNorm); the rest are the model's own (its f32 interface
casts and the additive mask, prepared once for every layer)."""

from __future__ import annotations

import pytest

import boltir
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.tools import boltc

torch = pytest.importorskip("torch", reason="needs torch: pip install boltir[torch]")
from tests.support import attention_models as models  # noqa: E402

LAYERS = 2


def launches(module) -> list:
    """The ops the host program launches: all but constants, the return, and reshapes that
    plan-memory aliases to their input."""
    entry = find_entry(module)
    memory = {}
    result = []
    for op in entry.body.block.ops:
        if isinstance(op, ops.ConstantOp) or not op.results:
            continue
        offsets = tuple(op.attributes["memory"].get_values())
        memory[op.results[0]] = offsets
        if isinstance(op, ops.ReshapeOp) and memory.get(op.input) == offsets:
            continue
        result.append(op)
    return result


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::RuntimeWarning")
def test_bert_layer_launches(tmp_path):
    torch.manual_seed(0)
    encoder = models.Encoder(layers=LAYERS, hidden=64, heads=4, ffn=256)
    args = (torch.randn(2, 16, 64), torch.ones(2, 16))
    path = models.export_onnx(encoder, args, tmp_path / "bert.onnx", ["x", "attention_mask"])
    emitted = tmp_path / "bert.cutlass.mlir"
    assert boltc.main([str(path), "--emit", "cutlass", "-o", str(emitted)]) == 0
    module = boltir.parse_module(emitted.read_text())
    kinds = [op.name for op in launches(module)]
    # the second FFN GEMM (K = 4 N) on our warp-group-split kernel stays an op.gemm
    per_layer = ["cutlass.gemm", "op.attention", "cutlass.gemm", "op.layer_norm", "cutlass.gemm", "op.gemm", "op.layer_norm"]
    model_level = [op for op in kinds if op == "op.elementwise"]
    assert [op for op in kinds if op != "op.elementwise"] == per_layer * LAYERS
    # x and the mask cast to f16, the mask made additive once, the output cast to f32
    assert len(model_level) == 4
    gemms = [op for op in launches(module) if isinstance(op, cutlass.GemmOp | ops.GemmOp)]
    assert [op.residual is not None for op in gemms] == [False, True, False, True] * LAYERS
    assert [op.epilogue.first_activation.kind for op in gemms] == ["none", "none", "gelu", "none"] * LAYERS


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::RuntimeWarning", "ignore::UserWarning", "ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("batch", [2, 1])
def test_vit_layer_launches(batch, tmp_path):
    """torchvision's ViT block (pre-LayerNorm, nn.MultiheadAttention as torch.onnx writes
    it, sequence-first inside) has the same 7 launches per layer: LayerNorm, the packed
    QKV GEMM, the attention reading it, the output projection with bias + residual,
    LayerNorm, the FFN GEMMs. The rest is the model's own: the input cast, the patch
    embedding (its layout transform, pad and conv), the class token and positions before
    the blocks; the final LayerNorm, the class token's row, the head and the output cast.
    At batch 1 the exporter's transposes are reshapes, and the count is the same."""
    from tests.support.corpus_models import TINY_MODELS, export_onnx

    model, inputs = TINY_MODELS["vit"](batch=batch)
    path = tmp_path / "vit.onnx"
    path.write_bytes(export_onnx(model, inputs).SerializeToString())
    emitted = tmp_path / "vit.cutlass.mlir"
    assert boltc.main([str(path), "--emit", "cutlass", "-o", str(emitted)]) == 0
    module = boltir.parse_module(emitted.read_text())
    kinds = [op.name for op in launches(module)]
    per_layer = ["op.layer_norm", "cutlass.gemm", "op.attention", "cutlass.gemm", "op.layer_norm", "cutlass.gemm", "cutlass.gemm"]
    first = kinds.index("op.layer_norm")
    assert kinds[first : first + 7 * LAYERS] == per_layer * LAYERS
    assert kinds[first + 7 * LAYERS] == "op.layer_norm"  # the final one
    assert len(kinds) <= 7 * LAYERS + 11
    attention = next(op for op in launches(module) if op.name == "op.attention")
    assert attention.prop_value("layout") == "BS3HD"
    gemms = [op for op in launches(module) if isinstance(op, cutlass.GemmOp | ops.GemmOp)][: 4 * LAYERS]
    assert [op.residual is not None for op in gemms] == [False, True, False, True] * LAYERS
    assert [op.epilogue.first_activation.kind for op in gemms] == ["none", "none", "gelu", "none"] * LAYERS
