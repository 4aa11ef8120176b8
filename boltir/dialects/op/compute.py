"""`op` dialect compute ops: GEMMs and convs with their epilogues, back-to-back pairs
of them, pooling, softmax, layer norm and reductions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, FloatAttr, IntegerAttr, IntegerType, StringAttr, TensorType, UnitAttr
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    ATTENTION_LAYOUTS,
    I64_ARRAY,
    CumSumBase,
    LayerNormBase,
    ReduceBase,
    SlidingWindowBase,
    SoftmaxBase,
    TensorToTensorBase,
    attention_dims,
    check_attention_mask,
    check_choice,
    check_cumsum,
    expect_type,
    f32_attr,
    i64_array,
    i64_attr,
    is_float,
    python_value,
    static_tensors,
    tensor_shape,
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
)
from boltir.dialects.op.data_movement import space_to_depth_sizes
from boltir.dialects.op.epilogue import IDENTITY_EPILOGUE, EpilogueAttr, check_epilogue_operands
from boltir.dialects.shapes import Shape

# ------------------------------------------------------------------------- GEMM


def gemm_shape(a: Shape, b: Shape, layout_a: str, layout_b: str) -> tuple[Shape, int, int, int]:
    """Output shape and (M, N, K) of a (batched, broadcast) GEMM."""
    if len(a) < 2 or len(b) < 2:
        raise VerifyException(f"GEMM operands need rank 2 or more, got {len(a)} and {len(b)}")
    m, k = (a[-2], a[-1]) if layout_a == "row" else (a[-1], a[-2])
    kb, n = (b[-2], b[-1]) if layout_b == "row" else (b[-1], b[-2])
    if k != kb:
        raise VerifyException(f"contraction mismatch: A is {m}x{k} but B is {kb}x{n}")
    batch = shapes.broadcast_shapes(a[:-2], b[:-2])
    return (*batch, m, n), m, n, k


class GemmOperands(KeywordOperandsFormat, OpBase):
    """A GEMM's operands, layouts and epilogue (`op.gemm`, `cutlass.gemm`): A, B, and the
    bias and residual the epilogue reads."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout_a = layout_string(MATRIX_LAYOUTS)
    layout_b = layout_string(MATRIX_LAYOUTS)
    epilogue = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    REQUIRED: ClassVar = ("a", "b")
    OPTIONAL: ClassVar = ("bias", "residual")


@irdl_op_definition
class GemmOp(GemmOperands):
    """`D = epilogue(A @ B)`. A is M×K ("row") or stored K×M ("col"); B is K×N ("row") or
    stored N×K ("col", like a Linear layer's weight). Leading batch dimensions broadcast
    (attention's batched GEMMs); the output is row-major [batch..., M, N]."""

    name = "op.gemm"

    def __init__(self, a, b, *, bias=None, residual=None, layout_a="row", layout_b="row", epilogue=None, result_type=None):
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = {"layout_a": StringAttr(layout_a), "layout_b": StringAttr(layout_b), "epilogue": epilogue}
        if result_type is None:
            shape, *_ = gemm_shape(tensor_shape(a.type), tensor_shape(b.type), layout_a, layout_b)
            result_type = TensorType(a.type.element_type, shape)
        super().__init__(
            operands=[a, b, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[result_type],
        )

    @property
    def problem(self) -> tuple[int, int, int]:
        _, m, n, k = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b.type), self.prop_value("layout_a"), self.prop_value("layout_b"))
        return m, n, k

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout_a", self.prop_value("layout_a"), MATRIX_LAYOUTS)
        check_choice("layout_b", self.prop_value("layout_b"), MATRIX_LAYOUTS)
        if self.a.type.element_type != self.b.type.element_type:
            raise VerifyException("A and B must share one element type")
        shape, _, n, _ = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b.type), self.prop_value("layout_a"), self.prop_value("layout_b"))
        expected = TensorType(self.output.type.element_type, shape)
        expect_type("result", self.output.type, expected)
        check_epilogue_operands(self.epilogue, self.bias, self.residual, n, self.output.type)


# ------------------------------------------------------------------------- convs


def conv_output_shape(
    x: Shape, w: Shape, layout: str, filter_layout: str, strides, pads, dilations, groups: int
) -> tuple[Shape, int]:
    """NHWC or NCHW output shape of a conv, and its output channels."""
    n, h, wd, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
    if filter_layout == "OHWI":
        k, kh, kw, cg = w
    else:
        k, cg, kh, kw = w
    if groups < 1 or c % groups or k % groups:
        raise VerifyException(f"groups {groups} must divide input channels {c} and output channels {k}")
    if cg != c // groups:
        raise VerifyException(f"filter has {cg} input channels per group, expected {c // groups}")
    oh = shapes.window_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0])
    ow = shapes.window_output_size(wd, kw, strides[1], pads[1], pads[3], dilations[1])
    return ((n, oh, ow, k) if layout == "NHWC" else (n, k, oh, ow)), k


class ConvOperands(KeywordOperandsFormat, OpBase, SlidingWindowBase):
    """A conv's operands, window and epilogue (`op.conv2d`, the `cutlass` convs): input,
    filter, and the bias and residual the epilogue reads."""

    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    output = result_def(TensorType)
    epilogue = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    REQUIRED: ClassVar = ("input", "filter")
    OPTIONAL: ClassVar = ("bias", "residual")


class ConvBase(ConvOperands):
    layout = layout_string(ACTIVATION_LAYOUTS)
    groups = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    def window(self) -> tuple:
        return (self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), self.prop_value("groups"))

    def check_window(self) -> None:
        strides, pads, dilations, _ = self.window()
        shapes.check_window(strides, pads, dilations)

    @property
    def output_channels(self) -> int:
        shape = tensor_shape(self.output.type)
        return shape[3] if self.prop_value("layout") == "NHWC" else shape[1]


def _conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue) -> dict:
    return {
        "layout": StringAttr(layout),
        "filter_layout": StringAttr(filter_layout),
        "strides": i64_array(strides),
        "pads": i64_array(pads),
        "dilations": i64_array(dilations),
        "groups": i64_attr(groups),
        "epilogue": epilogue,
    }


@irdl_op_definition
class Conv2dOp(ConvBase):
    """An implicit-GEMM conv: NHWC activations with OHWI filters (or NCHW with OIHW),
    grouped and depthwise included, with a fused epilogue."""

    name = "op.conv2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))

    def __init__(
        self, input, filter, *, bias=None, residual=None, layout="NHWC", filter_layout=None, strides=(1, 1),
        pads=(0, 0, 0, 0), dilations=(1, 1), groups=1, epilogue=None,
    ):
        filter_layout = filter_layout or FILTER_LAYOUTS[layout]
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        shape, _ = conv_output_shape(
            tensor_shape(input.type), tensor_shape(filter.type), layout, filter_layout, strides, pads, dilations, groups
        )
        super().__init__(
            operands=[input, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=_conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue),
            result_types=[TensorType(input.type.element_type, shape)],
        )

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        check_choice("filter_layout", self.prop_value("filter_layout"), tuple(FILTER_LAYOUTS.values()))
        self.check_window()
        if self.input.type.get_num_dims() != 4 or self.filter.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D input and a 4-D filter")
        same_element_type([self.input, self.filter], "the input and the filter")
        strides, pads, dilations, groups = self.window()
        shape, k = conv_output_shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), self.prop_value("layout"),
            self.prop_value("filter_layout"), strides, pads, dilations, groups,
        )
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, k, self.output.type)

    def conv_shape(self) -> Shape:
        """The conv's output: the result's shape (as op.conv2d_max_pool's before its pool)."""
        return tensor_shape(self.output.type)

    def is_depthwise(self) -> bool:
        """One filter channel a group, as many groups as input and output channels (more than one)."""
        x, w = tensor_shape(self.input.type), tensor_shape(self.filter.type)
        channels = x[3] if self.prop_value("layout") == "NHWC" else x[1]
        per_group = w[3] if self.prop_value("filter_layout") == "OHWI" else w[1]
        return per_group == 1 and 1 < self.prop_value("groups") == channels == self.output_channels


@irdl_op_definition
class Conv2dMaxPoolOp(ConvBase):
    """An NHWC conv with OHWI filters, its epilogue, then a max pool of `pool` × `pool`
    windows at stride `pool` (no padding, whole windows only): one kernel where a conv's
    output would be written and read back by the pool that follows it (VGG-16's first
    stage). `fuse-conv-pool` makes it; only kernels that pool in their epilogue run it."""

    name = "op.conv2d_max_pool"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))
    pool = prop_def(IntegerAttr[I64])

    def __init__(self, input, filter, *, pool: int, bias=None, residual=None, strides=(1, 1), pads=(0, 0, 0, 0),
                 dilations=(1, 1), groups=1, epilogue=None):
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = _conv_props("NHWC", "OHWI", strides, pads, dilations, groups, epilogue)
        props["pool"] = i64_attr(pool)
        conv, _ = conv_output_shape(tensor_shape(input.type), tensor_shape(filter.type), "NHWC", "OHWI", strides, pads,
                                    dilations, groups)
        super().__init__(
            operands=[input, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[TensorType(input.type.element_type, self.pooled_shape(conv, pool))],
        )

    @staticmethod
    def pooled_shape(conv: Shape, pool: int) -> Shape:
        n, p, q, k = conv
        return (n, p // pool, q // pool, k)

    def conv_shape(self) -> Shape:
        """The conv's output before the pool (N, P, Q, K)."""
        strides, pads, dilations, groups = self.window()
        shape, _ = conv_output_shape(tensor_shape(self.input.type), tensor_shape(self.filter.type), "NHWC", "OHWI",
                                     strides, pads, dilations, groups)
        return shape

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ("NHWC",))
        check_choice("filter_layout", self.prop_value("filter_layout"), ("OHWI",))
        self.check_window()
        if self.input.type.get_num_dims() != 4 or self.filter.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D input and a 4-D filter")
        same_element_type([self.input, self.filter], "the input and the filter")
        pool = self.prop_value("pool")
        conv = self.conv_shape()
        if pool < 2 or conv[1] % pool or conv[2] % pool:
            raise VerifyException(f"pool {pool} must be at least 2 and divide the conv's output {conv[1]}x{conv[2]}")
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, self.pooled_shape(conv, pool)))
        if self.residual is not None:
            raise VerifyException("a pooled conv takes no residual (it would be read at the conv's resolution)")
        check_epilogue_operands(self.epilogue, self.bias, self.residual, conv[3], self.output.type)


@irdl_op_definition
class SpaceToDepthConv2dOp(ConvBase):
    """An NHWC conv with OHWI filters and its epilogue over the space-to-depth blocking of
    an image: the image (in `image_layout`) padded by `image_pads` and blocked
    `blocksize` × `blocksize` into channels as op.space_to_depth does, zero channels up to
    the filter's C, rounded to the filter's element type; then the conv on that NHWC
    tensor. One kernel reads the image where the blocked tensor would be written and read
    back (ResNet-50's stem). `fuse-conv-space-to-depth` makes it; only kernels that block the
    image as they load it run it."""

    name = "op.space_to_depth_conv2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))
    blocksize = prop_def(IntegerAttr[I64])
    image_layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    image_pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))

    def __init__(self, image, filter, *, blocksize: int, image_layout: str = "NCHW", image_pads=(0, 0, 0, 0), bias=None,
                 residual=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1, epilogue=None):
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = _conv_props("NHWC", "OHWI", strides, pads, dilations, groups, epilogue)
        props.update(blocksize=i64_attr(blocksize), image_layout=StringAttr(image_layout), image_pads=i64_array(image_pads))
        n, _, h, w = space_to_depth_sizes(tensor_shape(image.type), blocksize, image_layout, image_pads)
        blocked = (n, h, w, tensor_shape(filter.type)[3])
        shape, _ = conv_output_shape(blocked, tensor_shape(filter.type), "NHWC", "OHWI", strides, pads, dilations, groups)
        super().__init__(
            operands=[image, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[TensorType(filter.type.element_type, shape)],
        )

    def image_dims(self) -> tuple[int, int, int]:
        """The image's (C, H, W), whatever its layout."""
        x = tensor_shape(self.input.type)
        return (x[1], x[2], x[3]) if self.prop_value("image_layout") == "NCHW" else (x[3], x[1], x[2])

    def image_channels(self) -> int:
        return self.image_dims()[0]

    def blocked_channels(self) -> int:
        """C·b²: the blocked tensor's channels that hold image values (the rest are zero)."""
        return self.image_channels() * self.prop_value("blocksize") ** 2

    def blocked_shape(self) -> Shape:
        """The blocked NHWC tensor the conv reads (N, H'/b, W'/b, the filter's C)."""
        n, _, h, w = space_to_depth_sizes(tensor_shape(self.input.type), self.prop_value("blocksize"),
                                          self.prop_value("image_layout"), self.prop_value("image_pads"))
        return (n, h, w, tensor_shape(self.filter.type)[3])

    def conv_shape(self) -> Shape:
        return tensor_shape(self.output.type)

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ("NHWC",))
        check_choice("filter_layout", self.prop_value("filter_layout"), ("OHWI",))
        check_choice("image_layout", self.prop_value("image_layout"), ACTIVATION_LAYOUTS)
        self.check_window()
        if self.input.type.get_num_dims() != 4 or self.filter.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D image and a 4-D filter")
        if not (is_float(self.input.type.element_type) and is_float(self.filter.type.element_type)):
            raise VerifyException("the image and the filter must be floats")
        blocked = self.blocked_shape()
        if blocked[3] < self.blocked_channels():
            raise VerifyException(f"the filter takes {blocked[3]} input channels, fewer than the "
                                  f"{self.blocked_channels()} the image's {self.prop_value('blocksize')}x"
                                  f"{self.prop_value('blocksize')} blocks fill")
        strides, pads, dilations, groups = self.window()
        shape, k = conv_output_shape(blocked, tensor_shape(self.filter.type), "NHWC", "OHWI", strides, pads, dilations, groups)
        expect_type("result", self.output.type, TensorType(self.filter.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, k, self.output.type)


@irdl_op_definition
class ConvTranspose2dOp(ConvBase):
    """A transposed conv (ONNX ConvTranspose): filters C×(K/groups)×kH×kW ("IOHW") or
    C×kH×kW×(K/groups) ("IHWO"), with a fused epilogue."""

    name = "op.conv_transpose2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("IHWO"))
    output_padding = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0]))

    def __init__(
        self, input, filter, *, bias=None, residual=None, layout="NHWC", filter_layout=None, strides=(1, 1),
        pads=(0, 0, 0, 0), dilations=(1, 1), groups=1, output_padding=(0, 0), epilogue=None,
    ):
        filter_layout = filter_layout or TRANSPOSED_FILTER_LAYOUTS[layout]
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = _conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue)
        props["output_padding"] = i64_array(output_padding)
        shape = self._shape(tensor_shape(input.type), tensor_shape(filter.type), layout, filter_layout, strides, pads, dilations, groups, output_padding)
        super().__init__(
            operands=[input, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[TensorType(input.type.element_type, shape)],
        )

    @staticmethod
    def _shape(x, w, layout, filter_layout, strides, pads, dilations, groups, output_padding) -> Shape:
        n, h, wd, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
        if filter_layout == "IHWO":
            wc, kh, kw, kg = w
        else:
            wc, kg, kh, kw = w
        if wc != c or groups < 1 or c % groups:
            raise VerifyException(f"filter has {wc} input channels for an input of {c} in {groups} groups")
        k = kg * groups
        oh = shapes.conv_transpose_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0], output_padding[0])
        ow = shapes.conv_transpose_output_size(wd, kw, strides[1], pads[1], pads[3], dilations[1], output_padding[1])
        return (n, oh, ow, k) if layout == "NHWC" else (n, k, oh, ow)

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        check_choice("filter_layout", self.prop_value("filter_layout"), tuple(TRANSPOSED_FILTER_LAYOUTS.values()))
        self.check_window()
        same_element_type([self.input, self.filter], "the input and the filter")
        strides, pads, dilations, groups = self.window()
        shape = self._shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), self.prop_value("layout"),
            self.prop_value("filter_layout"), strides, pads, dilations, groups, self.prop_value("output_padding"),
        )
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, self.output_channels, self.output.type)


# ------------------------------------------------------------ back-to-back (persistent)


class B2bEpilogues(KeywordOperandsFormat, OpBase):
    """The two epilogues of a back-to-back pair, each with its optional bias."""

    epilogue0 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    epilogue1 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    OPTIONAL: ClassVar = ("bias0", "bias1")

    def check_epilogues(self, channels0: int, channels1: int, intermediate: TensorType) -> None:
        """Each epilogue takes no residual, and its bias has its GEMM's output channels."""
        for epilogue, bias, channels in ((self.epilogue0, self.bias0, channels0), (self.epilogue1, self.bias1, channels1)):
            if epilogue.residual_kind != "none":
                raise VerifyException("back-to-back epilogues take no residual")
            check_epilogue_operands(epilogue, bias, None, channels, intermediate)


class B2bGemmOperands(B2bEpilogues):
    """`op.b2b_gemm` and `cutlass.b2b_gemm`'s operands: A, B0, B1 and the two biases."""

    a = operand_def(TensorType)
    b0 = operand_def(TensorType)
    b1 = operand_def(TensorType)
    bias0 = opt_operand_def(TensorType)
    bias1 = opt_operand_def(TensorType)
    output = result_def(TensorType)
    REQUIRED: ClassVar = ("a", "b0", "b1")


class B2bConvOperands(B2bEpilogues, SlidingWindowBase):
    """`op.b2b_conv2d` and `cutlass.b2b_conv2d`'s operands: the input, both filters and
    the two biases, with the first conv's window."""

    input = operand_def(TensorType)
    filter0 = operand_def(TensorType)
    filter1 = operand_def(TensorType)
    bias0 = opt_operand_def(TensorType)
    bias1 = opt_operand_def(TensorType)
    output = result_def(TensorType)
    REQUIRED: ClassVar = ("input", "filter0", "filter1")


@irdl_op_definition
class B2bGemmOp(B2bGemmOperands):
    """Two GEMMs in one persistent kernel: `D1 = epilogue1(epilogue0(A @ B0) @ B1)`; the
    intermediate (M×N0) never leaves the chip. No residuals: bias and activation only."""

    name = "op.b2b_gemm"
    layout_a = layout_string(MATRIX_LAYOUTS)
    layout_b0 = layout_string(MATRIX_LAYOUTS)
    layout_b1 = layout_string(MATRIX_LAYOUTS)

    def __init__(self, a, b0, b1, *, bias0=None, bias1=None, layout_a="row", layout_b0="row", layout_b1="row", epilogue0, epilogue1, result_type):
        super().__init__(
            operands=[a, b0, b1, [bias0] if bias0 is not None else [], [bias1] if bias1 is not None else []],
            properties={
                "layout_a": StringAttr(layout_a),
                "layout_b0": StringAttr(layout_b0),
                "layout_b1": StringAttr(layout_b1),
                "epilogue0": epilogue0,
                "epilogue1": epilogue1,
            },
            result_types=[result_type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        for name in ("layout_a", "layout_b0", "layout_b1"):
            check_choice(name, self.prop_value(name), MATRIX_LAYOUTS)
        same_element_type([self.a, self.b0, self.b1], "A, B0 and B1")
        first, m, n0, _ = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b0.type), self.prop_value("layout_a"), self.prop_value("layout_b0"))
        second, _, n1, _ = gemm_shape(first, tensor_shape(self.b1.type), "row", self.prop_value("layout_b1"))
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        self.check_epilogues(n0, n1, TensorType(self.output.type.element_type, first))


@irdl_op_definition
class B2bConv2dOp(B2bConvOperands):
    """Two convs in one persistent kernel: any conv, then a 1×1 stride-1 unpadded conv of
    its output, each with a bias + activation epilogue."""

    name = "op.b2b_conv2d"
    layout = layout_string(ACTIVATION_LAYOUTS)
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))

    def __init__(self, input, filter0, filter1, *, bias0=None, bias1=None, layout="NHWC", filter_layout=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), epilogue0, epilogue1, result_type):
        super().__init__(
            operands=[input, filter0, filter1, [bias0] if bias0 is not None else [], [bias1] if bias1 is not None else []],
            properties={
                "layout": StringAttr(layout),
                "filter_layout": StringAttr(filter_layout or FILTER_LAYOUTS[layout]),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "dilations": i64_array(dilations),
                "epilogue0": epilogue0,
                "epilogue1": epilogue1,
            },
            result_types=[result_type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        layout, filter_layout = self.prop_value("layout"), self.prop_value("filter_layout")
        check_choice("layout", layout, ACTIVATION_LAYOUTS)
        check_choice("filter_layout", filter_layout, tuple(FILTER_LAYOUTS.values()))
        same_element_type([self.input, self.filter0, self.filter1], "the input and the filters")
        strides, pads, dilations = self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations")
        first, k0 = conv_output_shape(tensor_shape(self.input.type), tensor_shape(self.filter0.type), layout, filter_layout, strides, pads, dilations, 1)
        w1 = tensor_shape(self.filter1.type)
        spatial = w1[1:3] if filter_layout == "OHWI" else w1[2:4]
        if spatial != (1, 1):
            raise VerifyException(f"the second conv must be 1x1, got a {spatial[0]}x{spatial[1]} filter")
        second, k1 = conv_output_shape(first, w1, layout, filter_layout, (1, 1), (0, 0, 0, 0), (1, 1), 1)
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        self.check_epilogues(k0, k1, TensorType(self.output.type.element_type, first))


@irdl_op_definition
class DepthwisePointwiseConv2dOp(B2bEpilogues, SlidingWindowBase):
    """A depthwise conv, then a 1×1 conv of its output (MobileNet's inverted residual after
    its expansion): `epilogue1(conv1x1(round(epilogue0(depthwise(x, filter0))), filter1))`,
    each intermediate rounded to the element type as the separate ops' would be. With an
    `expand` filter (E × 1 × 1 × Cin) the whole inverted residual: x is then
    `round(expand_epilogue(conv1x1(input, expand)))`, its E channels the depthwise conv's,
    and the depthwise conv's padding zeros of x. NHWC with OHWI filters: filter0 is
    E × R × S × 1 (groups = E, E the input's channels without expansion), filter1 K × 1 × 1
    × E; the window (strides, pads, dilations) is the depthwise conv's. The last epilogue may
    add a residual (the block's skip connection); the others take none. One kernel keeps the
    intermediates, the block's widest tensors, on the chip. `fuse-depthwise-pointwise` makes
    it; only kernels that run every conv compute it."""

    name = "op.depthwise_pointwise_conv2d"
    input = operand_def(TensorType)
    filter0 = operand_def(TensorType)
    filter1 = operand_def(TensorType)
    bias0 = opt_operand_def(TensorType)
    bias1 = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    expand = opt_operand_def(TensorType)
    expand_bias = opt_operand_def(TensorType)
    expand_epilogue = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    output = result_def(TensorType)
    REQUIRED: ClassVar = ("input", "filter0", "filter1")
    OPTIONAL: ClassVar = ("bias0", "bias1", "residual", "expand", "expand_bias")

    def __init__(self, input, filter0, filter1, *, bias0=None, bias1=None, residual=None, expand=None, expand_bias=None,
                 strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), epilogue0, epilogue1, expand_epilogue=None):
        optional = [[value] if value is not None else [] for value in (bias0, bias1, residual, expand, expand_bias)]
        properties = {"strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations),
                      "epilogue0": epilogue0, "epilogue1": epilogue1}
        if expand_epilogue is not None:
            properties["expand_epilogue"] = expand_epilogue
        super().__init__(
            operands=[input, filter0, filter1, *optional],
            properties=properties,
            result_types=[TensorType(input.type.element_type, self.output_shape(input, filter0, filter1, strides, pads, dilations))],
        )

    @staticmethod
    def output_shape(input, filter0, filter1, strides, pads, dilations) -> Shape:
        n, h, w, _ = tensor_shape(input.type)
        channels = tensor_shape(filter0.type)[0]
        first, _ = conv_output_shape((n, h, w, channels), tensor_shape(filter0.type), "NHWC", "OHWI", strides, pads,
                                     dilations, channels)
        return first[:3] + (tensor_shape(filter1.type)[0],)

    def channels(self) -> int:
        """The depthwise conv's channels (the expansion's output channels, or the input's)."""
        return tensor_shape(self.filter0.type)[0]

    def window(self) -> tuple:
        """The depthwise conv's (strides, pads, dilations, groups = its channels)."""
        return (self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), self.channels())

    def expanded_shape(self) -> Shape:
        """The depthwise conv's input (N, H, W, channels): the expansion's output, or the input."""
        return tuple(tensor_shape(self.input.type)[:3]) + (self.channels(),)

    def intermediate_shape(self) -> Shape:
        """The depthwise conv's output (N, P, Q, channels)."""
        return tuple(tensor_shape(self.output.type)[:3]) + (self.channels(),)

    def verify_(self) -> None:
        static_tensors(self)
        strides, pads, dilations, groups = self.window()
        shapes.check_window(strides, pads, dilations)
        filters = [v for v in (self.filter0, self.filter1, self.expand) if v is not None]
        if any(value.type.get_num_dims() != 4 for value in (self.input, *filters)):
            raise VerifyException("expects a 4-D input and 4-D filters")
        same_element_type([self.input, *filters], "the input and the filters")
        cin, c = tensor_shape(self.input.type)[3], self.channels()
        if self.expand is not None:
            e, re, se, ce = tensor_shape(self.expand.type)
            if (e, re, se, ce) != (c, 1, 1, cin):
                raise VerifyException(f"the expansion must be 1x1 from {cin} to the depthwise conv's {c} channels "
                                      f"({c}x1x1x{cin}), got {self.expand.type}")
        elif self.expand_bias is not None or self.expand_epilogue != IDENTITY_EPILOGUE:
            raise VerifyException("an expansion bias or epilogue without an expansion filter")
        k0, _, _, per_group = tensor_shape(self.filter0.type)
        if (self.expand is None and k0 != cin) or per_group != 1:
            raise VerifyException(f"the first filter must be depthwise ({cin}xRxSx1 for {cin} channels), got {self.filter0.type}")
        k, r1, s1, c1 = tensor_shape(self.filter1.type)
        if (r1, s1) != (1, 1) or c1 != c:
            raise VerifyException(f"the second filter must be 1x1 over {c} channels (Kx1x1x{c}), got {self.filter1.type}")
        conv_output_shape(self.expanded_shape(), tensor_shape(self.filter0.type), "NHWC", "OHWI", strides, pads,
                          dilations, groups)
        shape = self.output_shape(self.input, self.filter0, self.filter1, strides, pads, dilations)
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        for name, epilogue in (("depthwise conv's", self.epilogue0), ("expansion's", self.expand_epilogue)):
            if epilogue.residual_kind != "none":
                raise VerifyException(f"the {name} epilogue takes no residual")
        element = self.output.type.element_type
        check_epilogue_operands(self.expand_epilogue, self.expand_bias, None, c, TensorType(element, self.expanded_shape()))
        check_epilogue_operands(self.epilogue0, self.bias0, None, c, TensorType(element, self.intermediate_shape()))
        check_epilogue_operands(self.epilogue1, self.bias1, self.residual, k, self.output.type)


# ------------------------------------------------------------------------- pooling

POOL_KINDS = ("max", "avg", "global_avg", "global_max")


@irdl_op_definition
class Pool2dOp(OpBase, TensorToTensorBase, SlidingWindowBase):
    """Max, average or global pooling over H and W, in NHWC or NCHW."""

    name = "op.pool2d"
    kind = prop_def(StringAttr)
    layout = layout_string(ACTIVATION_LAYOUTS)
    kernel_shape = opt_prop_def(I64_ARRAY)
    ceil_mode = opt_prop_def(UnitAttr)
    count_include_pad = opt_prop_def(UnitAttr)

    def __init__(self, input, kind: str, *, layout="NHWC", kernel_shape=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), ceil_mode=False, count_include_pad=False):
        props = {
            "kind": StringAttr(kind),
            "layout": StringAttr(layout),
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
        }
        if kernel_shape is not None:
            props["kernel_shape"] = i64_array(kernel_shape)
        if ceil_mode:
            props["ceil_mode"] = UnitAttr()
        if count_include_pad:
            props["count_include_pad"] = UnitAttr()
        shape = self._shape(tensor_shape(input.type), props)
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    @classmethod
    def _shape(cls, x: Shape, props) -> Shape:
        get = lambda name, default=None: python_value(props[name]) if name in props else default  # noqa: E731
        layout = get("layout", "NHWC")
        kind = get("kind")
        n, h, w, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
        if kind.startswith("global"):
            oh = ow = 1
        else:
            kernel = get("kernel_shape")
            if kernel is None:
                raise VerifyException(f"a {kind} pool needs kernel_shape")
            strides, pads, dilations = get("strides", (1, 1)), get("pads", (0, 0, 0, 0)), get("dilations", (1, 1))
            oh = shapes.window_output_size(h, kernel[0], strides[0], pads[0], pads[2], dilations[0], get("ceil_mode", False))
            ow = shapes.window_output_size(w, kernel[1], strides[1], pads[1], pads[3], dilations[1], get("ceil_mode", False))
        return (n, oh, ow, c) if layout == "NHWC" else (n, c, oh, ow)

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("kind", self.kind.data, POOL_KINDS)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        if self.input.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D input")
        if self.kind.data in ("avg", "global_avg") and not is_float(self.input.type.element_type):
            raise VerifyException("average pooling needs a floating-point tensor")
        if self.kind.data == "avg" and tuple(self.prop_value("dilations")) != (1, 1):
            raise VerifyException(f"an avg pool takes no dilations, got {list(self.prop_value('dilations'))}")
        shape = self._shape(tensor_shape(self.input.type), dict(self.properties))
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


# ------------------------------------------------------- normalization and reduction


@irdl_op_definition
class SoftmaxOp(OpBase, SoftmaxBase):
    """Softmax along one axis, computed in f32 inside the kernel."""

    name = "op.softmax"
    axis = prop_def(IntegerAttr[I64])

    def __init__(self, input, axis: int):
        super().__init__(operands=[input], properties={"axis": i64_attr(axis)}, result_types=[input.type])

    def verify_(self) -> None:
        static_tensors(self)
        shapes.normalize_axis(self.prop_value("axis"), self.input.type.get_num_dims())


@irdl_op_definition
class LayerNormOp(OpBase, LayerNormBase):
    """Normalizes the axes from `axis` on, in f32, then scales (and shifts)."""

    name = "op.layer_norm"
    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[Float32Type])

    def __init__(self, input, scale, bias=None, *, axis: int, epsilon: float):
        super().__init__(
            operands=[input, scale, [bias] if bias is not None else []],
            properties={"axis": i64_attr(axis), "epsilon": f32_attr(epsilon)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        x = tensor_shape(self.input.type)
        axis = shapes.normalize_axis(self.prop_value("axis"), len(x))
        for value in (self.scale, self.bias):
            if value is not None and not shapes.broadcasts_to(tensor_shape(value.type), x[axis:]):
                raise VerifyException(f"{value.type} does not broadcast to the normalized shape {x[axis:]}")
        expect_type("result", self.output.type, self.input.type)


REDUCE_KINDS = ("mean", "sum", "max")


@irdl_op_definition
class ReduceOp(OpBase, ReduceBase):
    """Reduces over `axes` by `kind` (mean, sum or max); `keepdims` keeps them as size 1."""

    name = "op.reduce"
    kind = prop_def(StringAttr)

    def __init__(self, input, kind: str, axes: Sequence[int], keepdims: bool):
        x = tensor_shape(input.type)
        normalized = shapes.normalize_axes(axes, len(x))
        shape = shapes.reduce_shape(x, normalized, keepdims)
        props = {"kind": StringAttr(kind), "axes": i64_array(axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("kind", self.kind.data, REDUCE_KINDS)
        x = tensor_shape(self.input.type)
        axes = shapes.normalize_axes(self.prop_value("axes"), len(x))
        shape = shapes.reduce_shape(x, axes, self.prop_value("keepdims"))
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


@irdl_op_definition
class CumSumOp(OpBase, CumSumBase):
    """Running sums along `axis` (`exclusive`, `reverse` as graph.cumsum), one kernel:
    floats sum in f32 and round once per element, integers wrap."""

    name = "op.cumsum"

    def __init__(self, input, axis: int, *, exclusive: bool = False, reverse: bool = False):
        props = {"axis": i64_attr(axis)}
        props.update({name: UnitAttr() for name, on in (("exclusive", exclusive), ("reverse", reverse)) if on})
        super().__init__(operands=[input], properties=props, result_types=[input.type])

    def verify_(self) -> None:
        static_tensors(self)
        check_cumsum(self.input.type, self.prop_value("axis"))




# ------------------------------------------------------------------------ attention


def attention_qkv_shapes(layout: str, q: Shape, k: Shape | None, v: Shape | None) -> tuple[Shape, Shape, Shape]:
    """q, k and v's shapes as [B, H, S, D], whatever `layout` holds them in."""
    if layout == "BS3HD":
        if k is not None or v is not None:
            raise VerifyException('layout "BS3HD" takes only q, the packed [B, S, 3, H, D] projection')
        if len(q) != 5 or q[2] != 3:
            raise VerifyException(f'layout "BS3HD" expects q of shape [B, S, 3, H, D], got {"x".join(map(str, q))}')
        head = (q[0], q[3], q[1], q[4])
        return head, head, head
    if k is None or v is None:
        raise VerifyException(f'layout "{layout}" takes q, k and v')
    if layout == "BSHD":
        if len(q) != 4 or len(k) != 4 or len(v) != 4:
            raise VerifyException(f"q, k and v must be 4-D, got ranks {len(q)}, {len(k)} and {len(v)}")
        return tuple((s[0], s[2], s[1], s[3]) for s in (q, k, v))
    return q, k, v


@irdl_op_definition
class AttentionOp(KeywordOperandsFormat, OpBase):
    """Fused scaled dot-product attention, one kernel: softmax(q @ kᵀ * scale + bias) @ v,
    the softmax in f32 and no S×S scores in memory.

    `layout` says how q, k and v are stored:
    - "BHSD": q [B, H, Sq, D], k [B, H, Sk, D], v [B, H, Sk, Dv]; result [B, H, Sq, Dv];
    - "BSHD": q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv]; result [B, Sq, H, Dv];
    - "BS3HD": only q, the packed projection [B, S, 3, H, D] whose index 0, 1, 2 of dim 2
      are q, k and v; result [B, S, H, D].
    `bias` (f16 or f32) is added to the scores and broadcasts to [B, H, Sq, Sk];
    `key_lengths` (i32 [B]) masks the keys at index >= key_lengths[b]; `causal` masks key j
    for query i when j > i (top-left, as `graph.attention`). A query row whose keys are all
    masked gives zeros."""

    name = "op.attention"
    q = operand_def(TensorType)
    k = opt_operand_def(TensorType)
    v = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    key_lengths = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout = layout_string(ATTENTION_LAYOUTS)
    scale = prop_def(FloatAttr[Float32Type])
    causal = opt_prop_def(UnitAttr)
    REQUIRED: ClassVar = ("q",)
    OPTIONAL: ClassVar = ("k", "v", "bias", "key_lengths")

    def __init__(self, q, k=None, v=None, *, bias=None, key_lengths=None, layout="BHSD", scale: float, causal=False):
        props = {"layout": StringAttr(layout), "scale": f32_attr(scale)}
        if causal:
            props["causal"] = UnitAttr()
        shapes_ = [None if value is None else tensor_shape(value.type) for value in (q, k, v)]
        qh, kh, vh = attention_qkv_shapes(layout, *shapes_)
        result_type = TensorType(q.type.element_type, self.result_shape(layout, attention_dims(qh, kh, vh)))
        super().__init__(
            operands=[q] + [[value] if value is not None else [] for value in (k, v, bias, key_lengths)],
            properties=props,
            result_types=[result_type],
        )

    @staticmethod
    def result_shape(layout: str, dims: tuple[int, int, int, int, int]) -> Shape:
        b, h, sq, _, dv = dims
        return (b, h, sq, dv) if layout == "BHSD" else (b, sq, h, dv)

    def head_shapes(self) -> tuple[Shape, Shape, Shape]:
        """q, k and v's shapes as [B, H, S, D]."""
        shapes_ = [None if value is None else tensor_shape(value.type) for value in (self.q, self.k, self.v)]
        return attention_qkv_shapes(self.prop_value("layout"), *shapes_)

    def verify_(self) -> None:
        static_tensors(self)
        layout = check_choice("layout", self.prop_value("layout"), ATTENTION_LAYOUTS)
        qkv = [value for value in (self.q, self.k, self.v) if value is not None]
        same_element_type(qkv, "q, k and v")
        if not is_float(self.q.type.element_type):
            raise VerifyException(f"expects floating-point q, k and v, got {self.q.type}")
        b, h, sq, sk, dv = attention_dims(*self.head_shapes())
        if self.bias is not None:
            check_attention_mask(self.bias.type, (b, h, sq, sk), "bias", allow_bool=False)
        if self.key_lengths is not None and self.key_lengths.type != TensorType(IntegerType(32), (b,)):
            raise VerifyException(f"key_lengths must be tensor<{b}xi32>, got {self.key_lengths.type}")
        expected = TensorType(self.q.type.element_type, self.result_shape(layout, (b, h, sq, sk, dv)))
        expect_type("result", self.output.type, expected)
