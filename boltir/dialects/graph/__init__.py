"""The `graph` dialect: model-level ops with ONNX semantics, inside `func.func @main`.

Tensors are NCHW as the frameworks give them. The convs and pools take an optional
`layout` ("NCHW", the default, or "NHWC": channels last), and the convs a
`filter_layout`; convert-layout sets them (see `LAYOUTS` and `FILTER_LAYOUTS`).

Every op infers its result types from its operands and properties (`infer`), and its
verifier checks that the declared types are the inferred ones. Builders (`__init__`)
take SSA values and plain Python values and compute the result types, so importers and
passes never spell out a shape by hand.

Model input and output names live in the function's argument and result attributes
under `graph.name` (see `INPUT_NAME_ATTR`), because names such as `gpu_0/data_0` are not
valid SSA names.

The ops live by family in `core` (the base op), `elementwise`, `nn` and `data_movement`;
import them from here. What the `op` and `cutlass` dialects share with this one (property
helpers, family bases) is in `boltir.dialects.common`.
"""

from __future__ import annotations

# Every name graph.py had stays importable from here, the xdsl ones included (tests use
# `graph.Float32Type`).
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64, AnyFloat, BoolAttr, DenseArrayBase, DenseIntOrFPElementsAttr, DenseResourceAttr, Float32Type, Float64Type,
    FloatAttr, IntegerAttr, IntegerType, StringAttr, TensorType, UnitAttr, i1, i64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation, ParsePropInAttrDict, VarConstraint, base, irdl_op_definition, operand_def, opt_operand_def,
    opt_prop_def, prop_def, result_def, traits_def, var_operand_def, var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    F64_ARRAY, I64_ARRAY, Props, check_choice, describe, f32_attr, f64_array, f64_attr, flag, i64_array, i64_attr,
    is_float, parse_constant, print_constant, python_value, tensor_shape,
)
from boltir.dialects.graph.core import (
    FILTER_LAYOUTS,
    INPUT_NAME_ATTR,
    LAYOUTS,
    GraphOp,
    is_channels_last,
    require_i1,
    same_element_type,
)
from boltir.dialects.graph.data_movement import (
    AxesOp,
    ConcatOp,
    ExpandOp,
    FlattenOp,
    GatherOp,
    PadOp,
    ReshapeOp,
    ResizeOp,
    ShapeOnlyOp,
    SliceOp,
    SpaceToDepthOp,
    SplitOp,
    SqueezeOp,
    TransposeOp,
    UnsqueezeOp,
)
from boltir.dialects.graph.elementwise import (
    AddOp,
    AndOp,
    BinaryOp,
    CastOp,
    ClipOp,
    ComparisonOp,
    ConstantOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloatUnaryOp,
    GeluOp,
    GreaterOp,
    GreaterOrEqualOp,
    HardSigmoidOp,
    HardSwishOp,
    LeakyReluOp,
    LessOp,
    LessOrEqualOp,
    LogicalOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PowOp,
    ReciprocalOp,
    ReluOp,
    SigmoidOp,
    SiluOp,
    SqrtOp,
    SubOp,
    SumOp,
    TanhOp,
    UnaryOp,
    WhereOp,
    XorOp,
)
from boltir.dialects.graph.nn import (
    AttentionOp,
    AvgPool2dOp,
    BatchNormOp,
    Conv2dOp,
    ConvBase,
    ConvTranspose2dOp,
    CumSumOp,
    GemmOp,
    GlobalAvgPoolOp,
    LayerNormOp,
    MatMulOp,
    MaxPool2dOp,
    Pool2dBase,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceOp,
    ReduceSumOp,
    SoftmaxOp,
)
from boltir.dialects.shapes import Shape

Graph = Dialect(
    "graph",
    [
        ConstantOp,
        ReluOp,
        LeakyReluOp,
        GeluOp,
        SigmoidOp,
        TanhOp,
        SiluOp,
        HardSwishOp,
        HardSigmoidOp,
        ClipOp,
        ErfOp,
        SqrtOp,
        ExpOp,
        NegOp,
        ReciprocalOp,
        NotOp,
        CastOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        EqualOp,
        GreaterOp,
        GreaterOrEqualOp,
        LessOp,
        LessOrEqualOp,
        AndOp,
        OrOp,
        XorOp,
        SumOp,
        WhereOp,
        Conv2dOp,
        ConvTranspose2dOp,
        MatMulOp,
        GemmOp,
        BatchNormOp,
        MaxPool2dOp,
        AvgPool2dOp,
        GlobalAvgPoolOp,
        SoftmaxOp,
        LayerNormOp,
        ReduceMeanOp,
        ReduceSumOp,
        ReduceMaxOp,
        CumSumOp,
        ReshapeOp,
        ExpandOp,
        FlattenOp,
        TransposeOp,
        ConcatOp,
        SplitOp,
        SliceOp,
        PadOp,
        ResizeOp,
        SqueezeOp,
        UnsqueezeOp,
        GatherOp,
        AttentionOp,
        SpaceToDepthOp,
    ],
    [],
)
