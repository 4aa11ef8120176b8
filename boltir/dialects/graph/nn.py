"""`graph` dialect compute ops: convolutions, matrix products, batch norm, pooling,
softmax, layer norm and reductions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, FloatAttr, IntegerAttr, StringAttr, TensorType, UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    I64_ARRAY,
    CumSumBase,
    LayerNormBase,
    Props,
    ReduceBase,
    SlidingWindowBase,
    SoftmaxBase,
    TensorToTensorBase,
    attention_dims,
    check_attention_mask,
    check_choice,
    check_cumsum,
    drop_none,
    f32_attr,
    flag,
    i64_array,
    i64_attr,
    tensor_shape,
)
from boltir.dialects.graph.core import FILTER_LAYOUTS, LAYOUTS, GraphOp, is_channels_last, same_element_type

# ----------------------------------------------------------------- linear algebra


def _conv_common(props: Props, cls, spatial_rank: int = 2) -> tuple:
    strides = cls.prop(props, "strides")
    pads = cls.prop(props, "pads")
    dilations = cls.prop(props, "dilations")
    group = cls.prop(props, "group")
    shapes.check_window(strides, pads, dilations, spatial_rank)
    if group < 1:
        raise VerifyException(f"group must be positive, got {group}")
    return strides, pads, dilations, group


class ConvBase(GraphOp, SlidingWindowBase):
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    group = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    """NCHW (input N×C×H×W, output N×M×OH×OW) or NHWC (N×H×W×C, N×OH×OW×M)."""
    assembly_format = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    @staticmethod
    def _check_ranks(operand_types) -> None:
        x, w = operand_types[:2]
        if x.get_num_dims() != 4 or w.get_num_dims() != 4:
            raise VerifyException(f"expects a 4-D input and a 4-D weight, got {x} and {w}")
        same_element_type(operand_types)

    @classmethod
    def _layouts(cls, props: Props) -> tuple[str, str]:
        """(layout, filter_layout), checked."""
        layout = check_choice("layout", cls.prop(props, "layout"), LAYOUTS)
        filter_layout = check_choice("filter_layout", cls.prop(props, "filter_layout"), FILTER_LAYOUTS[cls.name])
        return layout, filter_layout

    @classmethod
    def _input_nchw(cls, operand_types, layout: str) -> tuple[int, int, int, int]:
        """The input's (N, C, H, W), whatever its layout."""
        x = tensor_shape(operand_types[0])
        return (x[0], x[3], x[1], x[2]) if is_channels_last(layout) else x

    @classmethod
    def _weight_in_onnx_order(cls, operand_types, filter_layout: str) -> tuple[int, int, int, int]:
        """The weight's dims in ONNX order (OIHW for conv2d, IOHW for conv_transpose2d)."""
        w = tensor_shape(operand_types[1])
        return (w[0], w[3], w[1], w[2]) if filter_layout == FILTER_LAYOUTS[cls.name][1] else w

    @staticmethod
    def _window_props(strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int], group: int) -> Props:
        return {
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
            "group": i64_attr(group),
        }

    @staticmethod
    def _output(element_type, layout: str, n: int, m: int, oh: int, ow: int) -> TensorType:
        shape = (n, oh, ow, m) if is_channels_last(layout) else (n, m, oh, ow)
        return TensorType(element_type, shape)


@irdl_op_definition
class Conv2dOp(ConvBase):
    """ONNX Conv: input N×C×H×W, weight M×(C/group)×kH×kW, optional bias M (NCHW / OIHW).

    With `layout = "NHWC"` the input is N×H×W×C and the result N×OH×OW×M; with
    `filter_layout = "OHWI"` the weight is M×kH×kW×(C/group)."""

    name = "graph.conv2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OIHW"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        group: int = 1,
        layout: str = "NCHW",
        filter_layout: str = "OIHW",
    ):
        props = {
            **self._window_props(strides, pads, dilations, group),
            "layout": StringAttr(layout),
            "filter_layout": StringAttr(filter_layout),
        }
        self.init_inferred([input, weight, [bias] if bias is not None else []], props)

    @classmethod
    def infer(cls, operand_types, props):
        cls._check_ranks(operand_types)
        strides, pads, dilations, group = _conv_common(props, cls)
        layout, filter_layout = cls._layouts(props)
        n, c, h, w = cls._input_nchw(operand_types, layout)
        m, cg, kh, kw = cls._weight_in_onnx_order(operand_types, filter_layout)
        if c % group or m % group:
            raise VerifyException(f"group {group} must divide input channels {c} and output channels {m}")
        if cg != c // group:
            raise VerifyException(
                f"weight has {cg} input channels per group, expected {c // group} (= {c} / group {group})"
            )
        if len(operand_types) == 3 and tensor_shape(operand_types[2]) != (m,):
            raise VerifyException(f"bias must have shape {m}, got {operand_types[2]}")
        oh = shapes.window_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0])
        ow = shapes.window_output_size(w, kw, strides[1], pads[1], pads[3], dilations[1])
        return [cls._output(operand_types[0].element_type, layout, n, m, oh, ow)]


@irdl_op_definition
class ConvTranspose2dOp(ConvBase):
    """ONNX ConvTranspose: input N×C×H×W, weight C×(M/group)×kH×kW, optional bias M
    (NCHW / IOHW).

    With `layout = "NHWC"` the input is N×H×W×C and the result N×OH×OW×M; with
    `filter_layout = "IHWO"` the weight is C×kH×kW×(M/group)."""

    name = "graph.conv_transpose2d"
    output_padding = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0]))
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("IOHW"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        group: int = 1,
        output_padding: Sequence[int] = (0, 0),
        layout: str = "NCHW",
        filter_layout: str = "IOHW",
    ):
        props = {
            **self._window_props(strides, pads, dilations, group),
            "output_padding": i64_array(output_padding),
            "layout": StringAttr(layout),
            "filter_layout": StringAttr(filter_layout),
        }
        self.init_inferred([input, weight, [bias] if bias is not None else []], props)

    @classmethod
    def infer(cls, operand_types, props):
        cls._check_ranks(operand_types)
        strides, pads, dilations, group = _conv_common(props, cls)
        layout, filter_layout = cls._layouts(props)
        output_padding = cls.prop(props, "output_padding")
        shapes.require_length(output_padding, 2, "output_padding")
        shapes.require_non_negative(output_padding, "output_padding")
        for op_, s, d in zip(output_padding, strides, dilations, strict=True):
            if op_ >= max(s, d):
                raise VerifyException(f"output_padding {op_} must be smaller than its stride or dilation")
        n, c, h, w = cls._input_nchw(operand_types, layout)
        wc, mg, kh, kw = cls._weight_in_onnx_order(operand_types, filter_layout)
        if c % group:
            raise VerifyException(f"group {group} must divide input channels {c}")
        if wc != c:
            raise VerifyException(f"weight has {wc} input channels, expected {c}")
        m = mg * group
        if len(operand_types) == 3 and tensor_shape(operand_types[2]) != (m,):
            raise VerifyException(f"bias must have shape {m}, got {operand_types[2]}")
        oh = shapes.conv_transpose_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0], output_padding[0])
        ow = shapes.conv_transpose_output_size(w, kw, strides[1], pads[1], pads[3], dilations[1], output_padding[1])
        if oh < 1 or ow < 1:
            raise VerifyException(f"output would be empty ({oh}x{ow})")
        return [cls._output(operand_types[0].element_type, layout, n, m, oh, ow)]


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy.matmul: batched, with broadcast batch dimensions; 1-D operands allowed."""

    name = "graph.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=self.infer([lhs.type, rhs.type], {}))

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        shape = shapes.matmul_shape(tensor_shape(operand_types[0]), tensor_shape(operand_types[1]))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class GemmOp(GraphOp):
    """ONNX Gemm: `alpha * op(A) @ op(B) + beta * C`, C broadcast to M×N."""

    name = "graph.gemm"
    FLOAT_ONLY: ClassVar[bool] = True
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    output = result_def(TensorType)
    alpha = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    beta = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    assembly_format = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue | None = None,
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        trans_a: bool = False,
        trans_b: bool = False,
    ):
        props = drop_none(
            {"alpha": f32_attr(alpha), "beta": f32_attr(beta), "trans_a": flag(trans_a), "trans_b": flag(trans_b)}
        )
        types = [a.type, b.type] + ([c.type] if c is not None else [])
        super().__init__(
            operands=[a, b, [c] if c is not None else []], properties=props, result_types=self.infer(types, props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        a, b = (tensor_shape(t) for t in operand_types[:2])
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"expects 2-D A and B, got {operand_types[0]} and {operand_types[1]}")
        m, k = a[::-1] if cls.prop(props, "trans_a") else a
        kb, n = b[::-1] if cls.prop(props, "trans_b") else b
        if k != kb:
            raise VerifyException(f"contraction mismatch: op(A) is {m}x{k} but op(B) is {kb}x{n}")
        if len(operand_types) == 3:
            c = tensor_shape(operand_types[2])
            if not shapes.broadcasts_to(c, (m, n)):
                raise VerifyException(f"C of shape {'x'.join(map(str, c))} does not broadcast to {m}x{n}")
        return [TensorType(operand_types[0].element_type, (m, n))]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference BatchNormalization over axis 1: `scale * (x - mean) / sqrt(var + eps) + bias`."""

    name = "graph.batch_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input, scale, bias, mean, variance, *, epsilon: float = 1e-5):
        props = {"epsilon": f32_attr(epsilon)}
        operands = [input, scale, bias, mean, variance]
        super().__init__(
            operands=operands, properties=props, result_types=self.infer([o.type for o in operands], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        x = tensor_shape(operand_types[0])
        if len(x) < 2:
            raise VerifyException(f"expects an input of rank 2 or more, got {operand_types[0]}")
        for name, t in zip(("scale", "bias", "mean", "variance"), operand_types[1:], strict=True):
            if tensor_shape(t) != (x[1],):
                raise VerifyException(f"{name} must have shape {x[1]} (the channels), got {t}")
        if cls.prop(props, "epsilon") < 0:
            raise VerifyException("epsilon must not be negative")
        return [operand_types[0]]


# ------------------------------------------------------------------------- pooling


class Pool2dBase(GraphOp, TensorToTensorBase):
    kernel_shape = prop_def(I64_ARRAY)
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    ceil_mode = opt_prop_def(UnitAttr)
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    """NCHW (N×C×H×W in and out) or NHWC (N×H×W×C)."""

    @classmethod
    def infer(cls, operand_types, props):
        layout = check_choice("layout", cls.prop(props, "layout"), LAYOUTS)
        x = tensor_shape(operand_types[0])
        if len(x) != 4:
            raise VerifyException(f"expects a 4-D {layout} input, got {operand_types[0]}")
        n, c, h, w = (x[0], x[3], x[1], x[2]) if is_channels_last(layout) else x
        kernel = cls.prop(props, "kernel_shape")
        strides = cls.prop(props, "strides")
        pads = cls.prop(props, "pads")
        dilations = cls.prop(props, "dilations") if "dilations" in cls.get_irdl_definition().properties else (1, 1)
        shapes.require_length(kernel, 2, "kernel_shape")
        shapes.check_window(strides, pads, dilations)
        shapes.require_positive(kernel, "kernel_shape")
        for axis in range(2):
            if pads[axis] >= kernel[axis] or pads[axis + 2] >= kernel[axis]:
                raise VerifyException(f"pads {list(pads)} must be smaller than the kernel {list(kernel)}")
        ceil_mode = cls.prop(props, "ceil_mode")
        oh, ow = (
            shapes.window_output_size(size, kernel[i], strides[i], pads[i], pads[i + 2], dilations[i], ceil_mode)
            for i, size in enumerate((h, w))
        )
        shape = (n, oh, ow, c) if is_channels_last(layout) else (n, c, oh, ow)
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class MaxPool2dOp(Pool2dBase):
    name = "graph.max_pool2d"
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))

    def __init__(
        self,
        input: SSAValue,
        kernel_shape: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        layout: str = "NCHW",
    ):
        props = drop_none(
            {
                "kernel_shape": i64_array(kernel_shape),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "dilations": i64_array(dilations),
                "ceil_mode": flag(ceil_mode),
                "layout": StringAttr(layout),
            }
        )
        self.init_inferred([input], props)


@irdl_op_definition
class AvgPool2dOp(Pool2dBase):
    """Average pool; padding counts toward the divisor only with `count_include_pad`."""

    FLOAT_ONLY: ClassVar[bool] = True

    name = "graph.avg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)

    def __init__(
        self,
        input: SSAValue,
        kernel_shape: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        ceil_mode: bool = False,
        count_include_pad: bool = False,
        layout: str = "NCHW",
    ):
        props = drop_none(
            {
                "kernel_shape": i64_array(kernel_shape),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "ceil_mode": flag(ceil_mode),
                "count_include_pad": flag(count_include_pad),
                "layout": StringAttr(layout),
            }
        )
        self.init_inferred([input], props)


@irdl_op_definition
class GlobalAvgPoolOp(GraphOp, TensorToTensorBase):
    """Mean over every spatial axis: N×C×D1×…×Dk -> N×C×1×…×1; with `layout = "NHWC"`
    (channels last, at any rank) N×D1×…×Dk×C -> N×1×…×1×C."""

    name = "graph.global_avg_pool"
    FLOAT_ONLY: ClassVar[bool] = True
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))

    def __init__(self, input: SSAValue, *, layout: str = "NCHW"):
        props = {"layout": StringAttr(layout)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        layout = check_choice("layout", cls.prop(props, "layout"), LAYOUTS)
        x = tensor_shape(operand_types[0])
        if len(x) < 3:
            raise VerifyException(f"expects an input of rank 3 or more, got {operand_types[0]}")
        ones = (1,) * (len(x) - 2)
        shape = (x[0], *ones, x[-1]) if is_channels_last(layout) else (x[0], x[1], *ones)
        return [TensorType(operand_types[0].element_type, shape)]


# ------------------------------------------------------------- normalization, reduce


@irdl_op_definition
class SoftmaxOp(GraphOp, SoftmaxBase):
    """Softmax along one axis (ONNX opset 13 semantics)."""

    name = "graph.softmax"
    FLOAT_ONLY: ClassVar[bool] = True
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(-1))

    def __init__(self, input: SSAValue, axis: int = -1):
        props = {"axis": i64_attr(axis)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        shapes.normalize_axis(cls.prop(props, "axis"), operand_types[0].get_num_dims())
        return [operand_types[0]]


@irdl_op_definition
class LayerNormOp(GraphOp, LayerNormBase):
    """Normalizes over the axes from `axis` to the last; scale and bias broadcast to them."""

    name = "graph.layer_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(-1))
    epsilon = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))

    def __init__(self, input, scale, bias=None, *, axis: int = -1, epsilon: float = 1e-5):
        props = {"axis": i64_attr(axis), "epsilon": f32_attr(epsilon)}
        self.init_inferred([input, scale, [bias] if bias is not None else []], props)

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        x = tensor_shape(operand_types[0])
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(x))
        normalized = x[axis:]
        for name, t in zip(("scale", "bias"), operand_types[1:]):
            if not shapes.broadcasts_to(tensor_shape(t), normalized):
                raise VerifyException(
                    f"{name} {t} does not broadcast to the normalized shape {'x'.join(map(str, normalized))}"
                )
        if cls.prop(props, "epsilon") < 0:
            raise VerifyException("epsilon must not be negative")
        return [operand_types[0]]


class ReduceOp(GraphOp, ReduceBase):
    """Reduces over `axes`; `keepdims` keeps them as size 1."""

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool = True):
        props = drop_none({"axes": i64_array(axes), "keepdims": flag(keepdims)})
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axes = shapes.normalize_axes(cls.prop(props, "axes"), len(x))
        if not axes:
            raise VerifyException("axes must name at least one axis")
        shape = shapes.reduce_shape(x, axes, cls.prop(props, "keepdims"))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "graph.reduce_mean"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "graph.reduce_max"


@irdl_op_definition
class CumSumOp(GraphOp, CumSumBase):
    """ONNX CumSum along `axis` (the ONNX axis input, known at import); `exclusive` and
    `reverse` as ONNX's attributes. Floats sum in f32 and round once per element."""

    name = "graph.cumsum"

    def __init__(self, input: SSAValue, axis: int, *, exclusive: bool = False, reverse: bool = False):
        props = drop_none({"axis": i64_attr(axis), "exclusive": flag(exclusive), "reverse": flag(reverse)})
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        check_cumsum(operand_types[0], cls.prop(props, "axis"))
        return [operand_types[0]]



# ----------------------------------------------------------------------- attention


@irdl_op_definition
class AttentionOp(GraphOp):
    """Scaled dot-product attention over [B, H, S, D] heads:

        softmax(q @ kᵀ * scale + mask) @ v,  the softmax in f32

    q is [B, H, Sq, D], k [B, H, Sk, D], v [B, H, Sk, Dv]; the result is [B, H, Sq, Dv].
    The optional mask broadcasts to the scores [B, H, Sq, Sk]: a float mask is added, an
    i1 mask keeps the scores where it is true (torch SDPA's convention) and sets the others
    to -inf. `causal` also masks key j for query i when j > i: the top-left alignment of
    torch's `is_causal` and ONNX Attention's, whatever Sq and Sk are (with Sq < Sk, as
    when decoding against a cache, the last queries do not see the last keys; such a model
    must pass the mask itself). A query row whose keys are all masked gives zeros (ONNX
    Attention's rule)."""

    name = "graph.attention"
    FLOAT_ONLY: ClassVar[bool] = True
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    output = result_def(TensorType)
    scale = prop_def(FloatAttr[Float32Type])
    causal = opt_prop_def(UnitAttr)
    assembly_format = "$q `,` $k `,` $v (`,` $mask^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None = None, *, scale: float, causal: bool = False
    ):
        props = drop_none({"scale": f32_attr(scale), "causal": flag(causal)})
        self.init_inferred([q, k, v, [mask] if mask is not None else []], props)

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types[:3], "q, k and v")
        b, h, sq, sk, dv = attention_dims(*(tensor_shape(t) for t in operand_types[:3]))
        if len(operand_types) == 4:
            check_attention_mask(operand_types[3], (b, h, sq, sk))
        return [TensorType(operand_types[0].element_type, (b, h, sq, dv))]
