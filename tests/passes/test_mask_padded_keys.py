"""mask-padded-keys: with key_lengths equal to the key count the module computes what it
computed before (interpreter, random inputs); with n, each marked attention sees only its
first n keys, as the unpadded model would; its one-line refusals."""

from __future__ import annotations

import numpy as np
import pytest

from boltir.diagnostics import BoltError
from boltir.interp import run
from boltir.ir import find_entry, input_names, make_context, parse_module
from boltir.passes.mask_padded_keys import MaskPaddedKeysPass

MODULE = """
func.func @main(%q: tensor<2x8x4x16xf32> {graph.name = "q"}, %kv: tensor<2x8x4x16xf32> {graph.name = "kv"}) -> tensor<2x8x4x16xf32> {
  %0 = op.attention %q k %kv v %kv {layout = "BSHD", scale = 0.25 : f32, padded_keys} : (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  func.return %0 : tensor<2x8x4x16xf32>
}
"""

UNPADDED = """
func.func @main(%q: tensor<2x8x4x16xf32> {graph.name = "q"}, %kv: tensor<2x5x4x16xf32> {graph.name = "kv"}) -> tensor<2x8x4x16xf32> {
  %0 = op.attention %q k %kv v %kv {layout = "BSHD", scale = 0.25 : f32} : (tensor<2x8x4x16xf32>, tensor<2x5x4x16xf32>, tensor<2x5x4x16xf32>) -> tensor<2x8x4x16xf32>
  func.return %0 : tensor<2x8x4x16xf32>
}
"""


def masked(text: str):
    module = parse_module(text, "<test>", ctx=make_context())
    MaskPaddedKeysPass().apply(make_context(), module)
    return module


def test_full_key_lengths_compute_what_the_module_computed():
    before = parse_module(MODULE, "<test>", ctx=make_context())
    after = masked(MODULE)
    assert input_names(find_entry(after)) == ["q", "kv", "key_lengths"]
    rng = np.random.default_rng(0)
    for _ in range(2):
        inputs = {"q": rng.standard_normal((2, 8, 4, 16)).astype(np.float32),
                  "kv": rng.standard_normal((2, 8, 4, 16)).astype(np.float32)}
        (expected,) = run(before, inputs)
        (got,) = run(after, {**inputs, "key_lengths": np.full(2, 8, np.int32)})
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_padded_keys_are_masked_as_if_absent():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 8, 4, 16)).astype(np.float32)
    kv = rng.standard_normal((2, 8, 4, 16)).astype(np.float32)
    (got,) = run(masked(MODULE), {"q": q, "kv": kv, "key_lengths": np.full(2, 5, np.int32)})
    (expected,) = run(parse_module(UNPADDED, "<test>", ctx=make_context()), {"q": q, "kv": kv[:, :5]})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_an_unmarked_module_is_left_alone():
    text = MODULE.replace(", padded_keys", "")
    module = masked(text)
    assert input_names(find_entry(module)) == ["q", "kv"]


def test_an_attention_with_key_lengths_already_is_refused():
    text = """
func.func @main(%q: tensor<2x8x4x16xf32>, %l: tensor<2xi32>) -> tensor<2x8x4x16xf32> {
  %0 = op.attention %q k %q v %q key_lengths %l {layout = "BSHD", scale = 0.25 : f32, padded_keys} : (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2xi32>) -> tensor<2x8x4x16xf32>
  func.return %0 : tensor<2x8x4x16xf32>
}
"""
    with pytest.raises(BoltError, match="op.attention has key_lengths already; its padded keys cannot be masked"):
        masked(text)


def test_attentions_of_different_batches_are_refused():
    text = """
func.func @main(%q: tensor<2x8x4x16xf32>, %p: tensor<1x8x4x16xf32>) -> (tensor<2x8x4x16xf32>, tensor<1x8x4x16xf32>) {
  %0 = op.attention %q k %q v %q {layout = "BSHD", scale = 0.25 : f32, padded_keys} : (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %1 = op.attention %p k %p v %p {layout = "BSHD", scale = 0.25 : f32, padded_keys} : (tensor<1x8x4x16xf32>, tensor<1x8x4x16xf32>, tensor<1x8x4x16xf32>) -> tensor<1x8x4x16xf32>
  func.return %0, %1 : tensor<2x8x4x16xf32>, tensor<1x8x4x16xf32>
}
"""
    with pytest.raises(BoltError, match=r"different batch sizes \(\[1, 2\]\)"):
        masked(text)
