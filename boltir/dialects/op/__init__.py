"""The `op` dialect: what one kernel computes, with every layout explicit.

Each op names the layout of its operands: activations are "NHWC" or "NCHW", conv
filters "OHWI" or "OIHW", GEMM operands "row" or "col" major. GEMMs and convs carry
their epilogue as one structured attribute, `#op.epilogue<...>`:

    out = act2( act(alpha * acc + beta * bias)  (+ or *)  residual )

where `bias` (per output channel) and `residual` (the output's shape) are optional
operands. Back-to-back ops (`b2b_gemm`, `b2b_conv2d`) chain two of them in one
persistent kernel, each with its own epilogue. Elementwise work is `op.unary`,
`op.binary`, `op.select` and `op.cast` until `fuse-elementwise` turns chains of them into
one `op.elementwise`, whose body is scalar `arith`/`math` code ending in `op.yield`.

The ops live by family in `core` (the base op and keyword-operand syntax), `epilogue`,
`compute`, `data_movement` and `elementwise`; import them from here. What this dialect
shares with `graph` (property helpers, family bases) is in `boltir.dialects.common`.
"""

from __future__ import annotations

# Every name op.py had stays importable from here, the xdsl ones included.
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64, ArrayAttr, BoolAttr, DenseArrayBase, DenseIntOrFPElementsAttr, DenseResourceAttr, Float32Type, Float64Type,
    FloatAttr, IntAttr, IntegerAttr, IntegerType, StringAttr, TensorType, UnitAttr, i1,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments, IRDLOperation, ParsePropInAttrDict, VarConstraint, base, irdl_attr_definition,
    irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, param_def, prop_def, region_def, result_def,
    traits_def, var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    F64_ARRAY, I64_ARRAY, check_choice, expect_type, f32_attr, f64_array, i64_array, i64_attr, is_float,
    parse_constant, print_constant, python_value, static_tensors, tensor_shape,
)
from boltir.dialects.op.compute import (
    POOL_KINDS,
    REDUCE_KINDS,
    AttentionOp,
    B2bConv2dOp,
    B2bConvOperands,
    B2bEpilogues,
    B2bGemmOp,
    B2bGemmOperands,
    Conv2dMaxPoolOp,
    Conv2dOp,
    ConvBase,
    ConvOperands,
    ConvTranspose2dOp,
    CumSumOp,
    DepthwisePointwiseConv2dOp,
    GemmOp,
    GemmOperands,
    LayerNormOp,
    Pool2dOp,
    ReduceOp,
    SoftmaxOp,
    SpaceToDepthConv2dOp,
    conv_output_shape,
    gemm_shape,
)
from boltir.dialects.op.core import (
    ACTIVATION_LAYOUTS,
    FILTER_LAYOUTS,
    MATRIX_LAYOUTS,
    TRANSPOSED_FILTER_LAYOUTS,
    KeywordOperandsFormat,
    OpBase,
    layout_string,
    same_element_type,
    split_attr_dict,
)
from boltir.dialects.op.data_movement import (
    ConcatOp,
    ConstantOp,
    GatherOp,
    LayoutTransformOp,
    PadOp,
    ReshapeOp,
    ResizeOp,
    SliceOp,
    SpaceToDepthOp,
)
from boltir.dialects.op.elementwise import (
    BINARY_FUNCTIONS,
    COMPARISON_FUNCTIONS,
    LOGICAL_FUNCTIONS,
    UNARY_ARITY,
    BinaryOp,
    CastOp,
    ElementwiseBase,
    ElementwiseOp,
    SelectOp,
    UnaryOp,
    YieldOp,
    broadcast_result,
    elementwise_block,
)
from boltir.dialects.op.epilogue import (
    ACTIVATION_ARITY,
    IDENTITY_EPILOGUE,
    RESIDUAL_KINDS,
    UNBOUNDED,
    Activation,
    EpilogueAttr,
    check_epilogue_operands,
    format_float,
)
from boltir.dialects.shapes import Shape

Op = Dialect(
    "op",
    [
        ConstantOp,
        GemmOp,
        Conv2dOp,
        Conv2dMaxPoolOp,
        SpaceToDepthConv2dOp,
        ConvTranspose2dOp,
        B2bGemmOp,
        B2bConv2dOp,
        DepthwisePointwiseConv2dOp,
        Pool2dOp,
        SoftmaxOp,
        LayerNormOp,
        ReduceOp,
        CumSumOp,
        ResizeOp,
        GatherOp,
        LayoutTransformOp,
        ReshapeOp,
        PadOp,
        ConcatOp,
        SliceOp,
        UnaryOp,
        BinaryOp,
        SelectOp,
        CastOp,
        ElementwiseOp,
        YieldOp,
        AttentionOp,
        SpaceToDepthOp,
    ],
    [EpilogueAttr],
)
