"""commute-transposes and fold-attention-layouts: the views they read are the elements a
chain moves (against numpy on random chains), each lit case computes the same outputs
after the pass, and nn.MultiheadAttention as torch.onnx writes it (torchvision's ViT
block) reaches its attention without copies and computes the same."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import boltir
from boltir.passes.commute_transposes import CommuteTransposesPass
from boltir.passes.fold_attention_layouts import FoldAttentionLayoutsPass
from boltir.passes.strided_views import View
from tests.passes.equivalence import assert_equivalent

LIT = Path(__file__).resolve().parent.parent / "filecheck" / "passes"


# ------------------------------------------------------------------------- views


def offsets(view: View) -> np.ndarray:
    """Every element's offset in the base tensor, by the view's definition."""
    out = np.full(view.shape, view.offset, dtype=np.int64)
    for axis, factors in enumerate(view.axes):
        index = np.arange(view.shape[axis])
        contribution = np.zeros(view.shape[axis], dtype=np.int64)
        for size, stride in reversed(factors):
            index, digit = np.divmod(index, size)
            contribution += digit * stride
        out = out + contribution.reshape([-1 if a == axis else 1 for a in range(len(view.shape))])
    return out


def random_reshape(rng: random.Random, count: int) -> list[int]:
    shape = []
    while count > 1:
        factor = rng.choice([f for f in range(2, count + 1) if count % f == 0])
        shape.append(factor)
        count //= factor
    if rng.random() < 0.3:
        shape.insert(rng.randrange(len(shape) + 1), 1)
    return shape


def random_step(rng: random.Random, array: np.ndarray, view: View) -> tuple[np.ndarray, View | None]:
    kind = rng.choice("prsx")
    if kind == "p":
        perm = list(range(array.ndim))
        rng.shuffle(perm)
        return array.transpose(perm), view.permute(perm)
    if kind == "r":
        shape = random_reshape(rng, array.size)
        return array.reshape(shape), view.reshape(shape)
    if array.ndim == 0:
        return array, view
    axis = rng.randrange(array.ndim)
    start = rng.randrange(array.shape[axis])
    if kind == "s":
        return np.take(array, start, axis=axis), view.select(axis, start)
    step = rng.choice([1, 2])
    picked = range(start, array.shape[axis], step)
    return np.take(array, list(picked), axis=axis), view.slice(axis, start, step, len(picked))


def test_views_are_the_elements_a_chain_moves():
    """Random chains of transposes, reshapes, scalar gathers and slices on an iota: each
    view that is not None picks exactly the chain's elements."""
    rng = random.Random(0)
    checked = 0
    for _ in range(1000):
        shape = tuple(rng.choice([1, 2, 3, 4, 6]) for _ in range(rng.randint(1, 4)))
        iota = np.arange(math.prod(shape))
        array, view = iota.reshape(shape), View.contiguous(shape)
        for _ in range(6):
            array, view = random_step(rng, array, view)
            if view is None:
                break
            assert view.shape == array.shape
            assert np.array_equal(iota[offsets(view)], array), view
            checked += 1
    assert checked > 4000


def test_a_packed_third_split_into_heads_is_a_view_again():
    """torch.onnx's unpacking of the projection [B, S, 3·E]: made [S, B, 3, E], q [S, B, E]
    -> [S, B·H, D] merges B and H, which are not laid out one after the other (no strided
    tensor), and the next transpose and reshape give a strided [B, H, S, D] again."""
    s, b, h, d = 5, 2, 4, 8
    packed = View.contiguous((b, s, 3 * h * d)).permute((1, 0, 2)).reshape((s, b, 3, h * d))
    view = packed.select(2, 0).reshape((s, b * h, d))
    assert view is not None
    heads = view.permute((1, 0, 2)).reshape((b, h, s, d))
    expected = View.contiguous((b, s, 3, h, d)).select(2, 0).permute((0, 2, 1, 3))
    assert heads.same_as(expected)
    assert not heads.same_as(View.contiguous((b, h, s, d)))


# -------------------------------------------------------- the lit cases, equivalent


def functions_as_modules(path: Path) -> list[tuple[str, ModuleOp]]:
    """Each function of a lit file, alone in a module as @main."""
    module = boltir.parse_module(path.read_text())
    result = []
    for function in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        name = function.sym_name.data
        clone = function.clone()
        clone.sym_name = StringAttr("main")
        result.append((name, ModuleOp([clone])))
    return result


@pytest.mark.parametrize(
    ("lit", "pass_"),
    [("commute-transposes.mlir", CommuteTransposesPass()), ("fold-attention-layouts.mlir", FoldAttentionLayoutsPass())],
)
def test_lit_cases_compute_the_same(lit, pass_, rng):
    cases = functions_as_modules(LIT / lit)
    assert len(cases) >= 4
    for _, module in cases:
        assert_equivalent(module, pass_, rng)


# ------------------------------------------------------ nn.MultiheadAttention's form


def vit_block_module(batch: int, dim: int, heads: int, tmp_path: Path) -> ModuleOp:
    torch = pytest.importorskip("torch", reason="needs torch: pip install boltir[torch]")
    from boltir.frontends.onnx import import_model
    from tests.support.corpus_models import EncoderBlock

    torch.manual_seed(0)
    block = EncoderBlock(dim, heads, 2 * dim).eval()
    path = tmp_path / "vit_block.onnx"
    # not under no_grad: there nn.MultiheadAttention takes its fused path, which has no ONNX form
    torch.onnx.export(block, (torch.randn(batch, 7, dim),), str(path), input_names=["x"], output_names=["output"],
                      opset_version=17, dynamo=False)
    return import_model(str(path))


@pytest.mark.filterwarnings("ignore::Warning")  # torch.onnx: its tracer and deprecation warnings
@pytest.mark.parametrize(("batch", "dim", "heads"), [(2, 32, 4), (1, 64, 2)])
def test_multihead_attention_reads_its_projection(batch, dim, heads, rng, tmp_path):
    """The encoder block, lowered to the op level; after commute-transposes,
    fold-attention-layouts and fuse-epilogue: one "BS3HD" attention over the projection,
    no transpose or gather left, the output projection adding the residual; the same
    outputs at every step."""
    from boltir.pipelines import available_passes, parse_pipeline_spec

    module = vit_block_module(batch, dim, heads, tmp_path)
    lowered = module.clone()
    for pass_ in parse_pipeline_spec("canonicalize,fold-constants,recognize-activations,recognize-attention,lower-graph-to-op", available_passes()):
        pass_.apply(boltir.make_context(), lowered)
    assert any(op.name == "op.layout_transform" for op in lowered.walk())
    steps = parse_pipeline_spec("commute-transposes,fold-attention-layouts,fuse-epilogue", available_passes())
    after = assert_equivalent(lowered, steps, rng, tolerance=1e-5)
    names = [op.name for op in after.walk()]
    assert "op.layout_transform" not in names and "op.gather" not in names
    (attention,) = [op for op in after.walk() if op.name == "op.attention"]
    assert attention.prop_value("layout") == "BS3HD"
    residual_gemms = [op for op in after.walk() if op.name == "op.gemm" and op.residual is not None]
    assert len(residual_gemms) == 2  # the output projection and the MLP's second layer
