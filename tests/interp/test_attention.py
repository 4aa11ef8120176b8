"""`graph.attention` and `op.attention` in the interpreter: the graph op against a numpy
formula written out here and against ONNX's reference `Attention` (opset 23); the op
form in each layout against the graph op on the same heads."""

from __future__ import annotations

import math

import numpy as np
import pytest
from graph_oracle import assert_matches, check_node, random_array, run_boltir

from boltir.dialects import graph
from boltir.dialects import op as ops

f16, f32 = np.float16, np.float32


def reference(q, k, v, scale, mask=None, causal=False):
    """The attention written out in float64, one (batch, head) at a time."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    b, h, sq, _ = q.shape
    sk = k.shape[2]
    full_mask = None if mask is None else np.broadcast_to(mask, (b, h, sq, sk))
    out = np.zeros((b, h, sq, v.shape[3]))
    for bi in range(b):
        for hi in range(h):
            scores = q[bi, hi] @ k[bi, hi].T * scale
            if full_mask is not None:
                m = full_mask[bi, hi]
                scores = np.where(m, scores, -np.inf) if m.dtype == np.bool_ else scores + m
            if causal:
                scores = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], scores, -np.inf)
            for row in range(sq):
                if np.all(np.isneginf(scores[row])):
                    continue
                weights = np.exp(scores[row] - scores[row].max())
                out[bi, hi, row] = weights / weights.sum() @ v[bi, hi]
    return out


MASKS = {
    "none": None,
    "padding": (2, 1, 1, 6),  # BERT's additive [B, 1, 1, Sk]
    "square": (2, 1, 5, 6),  # additive [B, 1, Sq, Sk]
    "boolean": "bool",
}


def _mask(rng, kind, dtype=f32):
    if kind is None:
        return None
    if kind == "bool":
        mask = rng.random((5, 6)) < 0.7
        mask[:, 0] = True
        return mask
    return random_array(rng, kind, dtype, low=-3.0, high=0.0)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("mask_kind", list(MASKS), ids=list(MASKS))
def test_graph_attention_matches_the_formula(mask_kind, causal):
    rng = np.random.default_rng(1)
    q = random_array(rng, (2, 3, 5, 8))
    k = random_array(rng, (2, 3, 6, 8))
    v = random_array(rng, (2, 3, 6, 4))
    mask = _mask(rng, MASKS[mask_kind])
    inputs = {"q": q, "k": k, "v": v} | ({"mask": mask} if mask is not None else {})
    (got,) = run_boltir(lambda *a: graph.AttentionOp(*a, scale=0.3, causal=causal), inputs)
    assert_matches(got, reference(q, k, v, 0.3, mask, causal).astype(f32))


def test_graph_attention_f16_rounds_once():
    rng = np.random.default_rng(2)
    q, k, v = (random_array(rng, (1, 2, 16, 64), f16) for _ in range(3))
    (got,) = run_boltir(lambda *a: graph.AttentionOp(*a, scale=0.125), {"q": q, "k": k, "v": v})
    assert_matches(got, reference(q, k, v, 0.125).astype(f16))


def test_a_fully_masked_row_gives_zeros():
    rng = np.random.default_rng(3)
    q, k, v = (random_array(rng, (1, 1, 3, 4)) for _ in range(3))
    mask = np.ones((3, 3), dtype=bool)
    mask[1] = False
    (got,) = run_boltir(lambda *a: graph.AttentionOp(*a, scale=0.5), {"q": q, "k": k, "v": v, "mask": mask})
    assert np.all(got[0, 0, 1] == 0) and np.all(np.isfinite(got))


ONNX_CASES = {
    "plain": ({}, None),
    "scale": ({"scale": 0.2}, None),
    "causal": ({"is_causal": 1}, None),
    "additive": ({}, (2, 1, 5, 6)),
    "boolean": ({}, "bool"),
}


@pytest.mark.parametrize("case", list(ONNX_CASES), ids=list(ONNX_CASES))
def test_graph_attention_matches_onnx_attention(case):
    pytest.importorskip("onnx.reference.ops.op_attention")
    attrs, mask_kind = ONNX_CASES[case]
    rng = np.random.default_rng(4)
    inputs = {"q": random_array(rng, (2, 3, 5, 8)), "k": random_array(rng, (2, 3, 6, 8)), "v": random_array(rng, (2, 3, 6, 4))}
    mask = _mask(rng, mask_kind)
    if mask is not None:
        inputs["mask"] = mask
    scale = attrs.get("scale", 1 / math.sqrt(8))
    build = lambda *a: graph.AttentionOp(*a, scale=scale, causal=bool(attrs.get("is_causal")))  # noqa: E731
    check_node(build, "Attention", inputs, attrs=attrs, opset=23)


# ---------------------------------------------------------------------- op.attention


def _heads(rng, b=2, h=3, sq=5, sk=6, d=8, dv=8, dtype=f32):
    return random_array(rng, (b, h, sq, d), dtype), random_array(rng, (b, h, sk, d), dtype), random_array(rng, (b, h, sk, dv), dtype)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_op_attention_layouts_match_the_graph_op(causal):
    rng = np.random.default_rng(5)
    q, k, v = _heads(rng, dv=4)
    bias = random_array(rng, (2, 1, 1, 6), f32, low=-3, high=0)
    expected = reference(q, k, v, 0.3, bias, causal).astype(f32)
    bhsd = run_boltir(lambda *a: ops.AttentionOp(a[0], a[1], a[2], bias=a[3], scale=0.3, causal=causal), {"q": q, "k": k, "v": v, "b": bias})[0]
    assert_matches(bhsd, expected)
    to_bshd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))  # noqa: E731
    inputs = {"q": to_bshd(q), "k": to_bshd(k), "v": to_bshd(v), "b": bias}
    bshd = run_boltir(lambda *a: ops.AttentionOp(a[0], a[1], a[2], bias=a[3], layout="BSHD", scale=0.3, causal=causal), inputs)[0]
    assert_matches(bshd, to_bshd(expected))


def test_op_attention_packed_qkv():
    rng = np.random.default_rng(6)
    q, k, v = _heads(rng, sq=6, dtype=f16)
    packed = np.ascontiguousarray(np.stack([q, k, v], axis=0).transpose(1, 3, 0, 2, 4))  # [B, S, 3, H, D]
    (got,) = run_boltir(lambda x: ops.AttentionOp(x, layout="BS3HD", scale=0.25), {"qkv": packed})
    assert_matches(got, reference(q, k, v, 0.25).astype(f16).transpose(0, 2, 1, 3))


def test_op_attention_key_lengths_mask_the_padded_keys():
    rng = np.random.default_rng(7)
    q, k, v = _heads(rng)
    lengths = np.array([6, 3], dtype=np.int32)
    bias = random_array(rng, (1, 3, 5, 6), f32, low=-1, high=0)
    padding = np.where(np.arange(6)[None, :] < lengths[:, None], 0.0, -np.inf)[:, None, None, :]
    (got,) = run_boltir(
        lambda *a: ops.AttentionOp(a[0], a[1], a[2], bias=a[3], key_lengths=a[4], scale=0.3),
        {"q": q, "k": k, "v": v, "b": bias, "len": lengths},
    )
    assert_matches(got, reference(q, k, v, 0.3, bias + padding).astype(f32))
