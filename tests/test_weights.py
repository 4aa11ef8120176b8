"""Weights stay out of the IR text, round-trip through print and parse, and survive
several modules in one process."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.interp import run
from boltir.weights import WEIGHTS, constant_array, make_weight_attr

rng = np.random.default_rng()


def constant_module(name: str, array: np.ndarray):
    b = ModelBuilder()
    value = b.constant(name, array)
    return b.finish([value], ["out"])


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int64, np.int32, np.int8, np.uint8, np.bool_]
)
def test_weights_round_trip_through_text(dtype):
    array = (rng.standard_normal((3, 5, 7)) * 10).astype(dtype)
    module = constant_module(f"w_{np.dtype(dtype).name}", array)
    text = boltir.print_module(module)
    assert "dialect_resources" in text
    (result,) = run(boltir.parse_module(text), {})
    assert result.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(result.view(np.uint8), array.view(np.uint8))


def test_small_constants_stay_inline_and_large_ones_do_not():
    small = make_weight_attr("small", rng.standard_normal(4).astype(np.float32))
    large = make_weight_attr("large", rng.standard_normal(4096).astype(np.float32))
    assert isinstance(small, DenseIntOrFPElementsAttr)
    assert isinstance(large, DenseResourceAttr)
    assert constant_array(small).dtype == np.float32


def test_same_text_parsed_twice_keeps_handles_and_data():
    array = rng.standard_normal((64, 64)).astype(np.float32)
    text = boltir.print_module(constant_module("twice.weight", array))
    first, second = boltir.parse_module(text), boltir.parse_module(text)
    assert boltir.print_module(first) == boltir.print_module(second) == text
    np.testing.assert_array_equal(run(second, {})[0], array)


def test_same_name_with_different_data_is_renamed_not_overwritten():
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = a + 1
    module_a = boltir.parse_module(boltir.print_module(constant_module("clash.weight", a)))
    text_b = boltir.print_module(constant_module("clash.weight", b))
    assert "dense_resource<clash.weight_0>" in text_b
    module_b = boltir.parse_module(text_b.replace("clash.weight_0", "clash.weight"))
    np.testing.assert_array_equal(run(module_a, {})[0], a)
    np.testing.assert_array_equal(run(module_b, {})[0], b)


def test_model_names_become_valid_handles():
    module = constant_module("gpu_0/conv1_w:0", rng.standard_normal((8, 8)).astype(np.float32))
    text = boltir.print_module(module)
    # The sanitized name, or that name with a suffix if the process already holds it.
    assert re.search(r"dense_resource<gpu_0_conv1_w_0(_\d+)?>", text)
    boltir.parse_module(text)


def test_elided_printout_is_short_and_says_what_it_left_out():
    big = rng.standard_normal((1000, 1000)).astype(np.float32)
    module = constant_module("big.weight", big)
    text = boltir.print_module(module, elide_weights=True)
    assert len(text) < 1000
    assert "dialect_resources" not in text
    assert text.rstrip().endswith("// 1 weight elided (4.0 MB)")
    reparsed = boltir.parse_module(text)  # still parses, for reading and for passes
    assert isinstance(reparsed.body.block.first_op, type(module.body.block.first_op))


def test_model_input_and_output_names_survive_a_round_trip():
    b = ModelBuilder()
    x = b.input("gpu_0/data_0", (1, 4))
    y = b.insert(graph.ReluOp(x)).output
    module = b.finish([y], ["x:0"])
    text = boltir.print_module(module)
    assert '{graph.name = "gpu_0/data_0"}' in text and '{graph.name = "x:0"}' in text
    value = rng.standard_normal((1, 4)).astype(np.float32)
    (out,) = run(boltir.parse_module(text), {"gpu_0/data_0": value})
    np.testing.assert_array_equal(out, np.maximum(value, 0))


def test_the_store_shares_identical_data():
    array = rng.standard_normal((16, 16)).astype(np.float32)
    first = WEIGHTS.add("shared", array)
    assert WEIGHTS.add("shared", array.copy()) == first


def test_an_elided_weight_never_picks_up_another_models_data():
    array = rng.standard_normal((8, 8)).astype(np.float32)
    constant_module("shared.name", array)  # the store now holds data under this name
    elided = boltir.print_module(constant_module("shared.name", array), elide_weights=True)
    module = boltir.parse_module(elided)
    text = boltir.print_module(module)
    assert "dense_resource<shared.name.elided>" in text
    with pytest.raises(boltir.BoltError, match="weight 'shared.name.elided' has no data"):
        run(module, {})
    assert boltir.print_module(boltir.parse_module(text)) == text  # stable when parsed again
