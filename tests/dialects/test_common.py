"""The shared layer of the dialects (`boltir.dialects.common`): the family bases give a
`graph` op and its `op` counterpart one set of operands, properties and syntax, and the
helpers behave the same for every dialect that calls them."""

from __future__ import annotations

import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import TensorType, f32, i1, i32, i64
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import common, graph, shapes
from boltir.dialects import op as ops
from boltir.dialects.common import concat_result_type, gather_result_type

# (graph op, op op, the properties whose declarations differ: a default in one dialect only)
COUNTERPARTS = [
    (graph.ConstantOp, ops.ConstantOp, ()),
    (graph.CastOp, ops.CastOp, ()),
    (graph.WhereOp, ops.SelectOp, ()),
    (graph.ResizeOp, ops.ResizeOp, ()),
    (graph.GatherOp, ops.GatherOp, ("axis",)),
    (graph.TransposeOp, ops.LayoutTransformOp, ()),
    (graph.ReshapeOp, ops.ReshapeOp, ()),
    (graph.PadOp, ops.PadOp, ()),
    (graph.ConcatOp, ops.ConcatOp, ()),
    (graph.SliceOp, ops.SliceOp, ()),
    (graph.SoftmaxOp, ops.SoftmaxOp, ("axis",)),
    (graph.LayerNormOp, ops.LayerNormOp, ("axis", "epsilon")),
]


def _declarations(op_class, skip=()):
    definition = op_class.get_irdl_definition()
    return (
        [(name, repr(d)) for name, d in definition.operands],
        [(name, repr(d)) for name, d in definition.results],
        {name: repr(d) for name, d in definition.properties.items() if name not in skip},
        definition.assembly_format,
    )


@pytest.mark.parametrize(("graph_op", "op_op", "differing"), COUNTERPARTS, ids=lambda c: getattr(c, "name", ""))
def test_counterparts_declare_the_same_operands_properties_and_syntax(graph_op, op_op, differing):
    assert _declarations(graph_op, differing) == _declarations(op_op, differing)
    assert issubclass(graph_op, graph.GraphOp)
    assert not issubclass(op_op, graph.GraphOp)


def test_reduce_ops_share_their_declarations():
    assert _declarations(graph.ReduceSumOp) == _declarations(ops.ReduceOp, ("kind",))


def test_prop_gives_the_value_or_the_declared_default():
    assert graph.SoftmaxOp.prop({}, "axis") == -1
    assert graph.SoftmaxOp.prop({"axis": common.i64_attr(2)}, "axis") == 2
    assert graph.ReduceSumOp.prop({}, "keepdims") is False
    x = xdsl_test.TestOp(result_types=[TensorType(f32, (2, 3))]).results[0]
    assert ops.PadOp(x, [0, 1, 0, 1]).prop_value("mode") == "constant"


def test_graph_builders_infer_with_optional_operands():
    x = xdsl_test.TestOp(result_types=[TensorType(f32, (1, 4))]).results[0]
    scale = xdsl_test.TestOp(result_types=[TensorType(f32, (4,))]).results[0]
    without_bias = graph.LayerNormOp(x, scale)
    with_bias = graph.LayerNormOp(x, scale, scale)
    assert (len(without_bias.operands), len(with_bias.operands)) == (2, 3)
    assert with_bias.output.type == x.type


def test_shared_choice_checks_name_what_is_allowed():
    x = xdsl_test.TestOp(result_types=[TensorType(f32, (2, 3))]).results[0]
    for cast in (graph.CastOp(x, i32, round_mode="sideways"), ops.CastOp(x, i32, round_mode="sideways")):
        with pytest.raises(VerifyException, match="round_mode must be one of up, down, nearest, got 'sideways'"):
            cast.verify()


def test_gather_result_type():
    data, indices = TensorType(f32, (5, 6, 7)), TensorType(i64, (2, 3))
    assert gather_result_type(data, indices, -2) == TensorType(f32, (5, 2, 3, 7))
    with pytest.raises(VerifyException, match="indices must be i32 or i64"):
        gather_result_type(data, TensorType(i1, (2,)), 0)


def test_concat_result_type():
    a, b = TensorType(f32, (2, 3)), TensorType(f32, (2, 5))
    assert concat_result_type([a, b], 1) == TensorType(f32, (2, 8))
    with pytest.raises(VerifyException, match="does not match tensor<2x3xf32> outside axis 0"):
        concat_result_type([a, b], 0)


def test_shape_rules():
    assert shapes.permute_shape((2, 3, 4), (2, 0, 1)) == (4, 2, 3)
    with pytest.raises(VerifyException, match="not a permutation"):
        shapes.permute_shape((2, 3), (0, 0))
    assert shapes.pad_shape((2, 3), (1, 0, 1, -1)) == (4, 2)
    assert shapes.reduce_shape((2, 3, 4), (1,), keepdims=True) == (2, 1, 4)
    assert shapes.reduce_shape((2, 3, 4), (1,), keepdims=False) == (2, 4)
    shapes.check_window((1, 2), (0, 0, 1, 1), (1, 1))
    with pytest.raises(VerifyException, match="pads must have 4 values"):
        shapes.check_window((1, 1), (0, 0), (1, 1))
    with pytest.raises(VerifyException, match="strides must be positive"):
        shapes.check_window((0, 1), (0, 0, 0, 0), (1, 1))
