"""`op` dialect constants and data movement: resizes, gathers, layout transforms,
reshapes, pads, concatenation, slices, and space to depth (with the padding, layout change
and conversion of a blocked stem conv's input)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    I64_ARRAY,
    ConcatBase,
    ConstantBase,
    GatherBase,
    PadBase,
    PermuteBase,
    ResizeBase,
    ShapeOnlyBase,
    SliceBase,
    TensorToTensorBase,
    check_choice,
    concat_result_type,
    expect_type,
    gather_result_type,
    i64_array,
    i64_attr,
    is_float,
    static_tensors,
    tensor_shape,
)
from boltir.dialects.op.core import (
    ACTIVATION_LAYOUTS,
    OpBase,
    layout_string,
    same_element_type,
)

# ------------------------------------------------------------------------ constant


@irdl_op_definition
class ConstantOp(OpBase, ConstantBase):
    """A weight or small constant (as `graph.constant`)."""

    name = "op.constant"

    def verify_(self) -> None:
        if self.output.type != self.value.get_type():
            raise VerifyException(f"result type {self.output.type} does not match the value's {self.value.get_type()}")


@irdl_op_definition
class ResizeOp(OpBase, ResizeBase):
    """ONNX Resize on physical axes (the attributes of `graph.resize`)."""

    name = "op.resize"

    def verify_(self) -> None:
        static_tensors(self)
        if len(self.prop_value("scales")) != self.input.type.get_num_dims():
            raise VerifyException("scales must have one value per axis")
        # The modes and the output shape follow graph.resize's rules.
        self.check_modes()
        if not is_float(self.input.type.element_type) or self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"expects floating-point tensors of one element type, got {self.input.type} and {self.output.type}")
        x, y = tensor_shape(self.input.type), tensor_shape(self.output.type)
        if len(x) != len(y):
            raise VerifyException(f"changes the rank: {self.input.type} to {self.output.type}")
        crop = self.prop_value("coordinate_transformation_mode") == "tf_crop_and_resize"
        for axis, (d, scale, o) in enumerate(zip(x, self.prop_value("scales"), y, strict=True)):
            if scale <= 0 or (not crop and abs(d * scale - o) >= 1.0):
                raise VerifyException(f"axis {axis}: size {d} scaled by {scale} cannot give {o}")


@irdl_op_definition
class GatherOp(OpBase, GatherBase):
    name = "op.gather"
    axis = prop_def(IntegerAttr[I64])

    def __init__(self, data, indices, axis: int):
        x = tensor_shape(data.type)
        a = shapes.normalize_axis(axis, len(x))
        shape = x[:a] + tensor_shape(indices.type) + x[a + 1 :]
        super().__init__(operands=[data, indices], properties={"axis": i64_attr(axis)}, result_types=[TensorType(data.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        expected = gather_result_type(self.data.type, self.indices.type, self.prop_value("axis"))
        expect_type("result", self.output.type, expected)


@irdl_op_definition
class LayoutTransformOp(OpBase, PermuteBase):
    """Moves data between layouts: a permutation of the axes (NCHW -> NHWC is [0,2,3,1])."""

    name = "op.layout_transform"

    def __init__(self, input, perm: Sequence[int]):
        x = tensor_shape(input.type)
        super().__init__(operands=[input], properties={"perm": i64_array(perm)}, result_types=[TensorType(input.type.element_type, tuple(x[p] for p in perm))])

    def verify_(self) -> None:
        static_tensors(self)
        shape = shapes.permute_shape(tensor_shape(self.input.type), self.prop_value("perm"))
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


@irdl_op_definition
class ReshapeOp(OpBase, ShapeOnlyBase):
    """A view with another shape (row-major order kept): no data moves."""

    name = "op.reshape"

    def verify_(self) -> None:
        static_tensors(self)
        if shapes.element_count(tensor_shape(self.input.type)) != shapes.element_count(tensor_shape(self.output.type)):
            raise VerifyException(f"cannot reshape {self.input.type} into {self.output.type}")
        if self.input.type.element_type != self.output.type.element_type:
            raise VerifyException("reshape keeps the element type")


@irdl_op_definition
class PadOp(OpBase, PadBase):
    """ONNX Pad (constant, edge, reflect, wrap); `pads` holds all begins then all ends."""

    name = "op.pad"

    def __init__(self, input, pads: Sequence[int], mode: str = "constant", value: float = 0.0):
        shape = shapes.pad_shape(tensor_shape(input.type), pads)
        super().__init__(
            operands=[input],
            properties={"pads": i64_array(pads), "mode": StringAttr(mode), "value": FloatAttr(float(value), 64)},
            result_types=[TensorType(input.type.element_type, shape)],
        )

    def verify_(self) -> None:
        static_tensors(self)
        x = tensor_shape(self.input.type)
        pads = self.prop_value("pads")
        shapes.require_length(pads, 2 * len(x), "pads")
        check_choice("mode", self.prop_value("mode"), self.MODES)
        shape = shapes.pad_shape(x, pads)
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


@irdl_op_definition
class ConcatOp(OpBase, ConcatBase):
    name = "op.concat"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        types = [v.type for v in inputs]
        result = concat_result_type(types, shapes.normalize_axis(axis, types[0].get_num_dims()))
        super().__init__(operands=[list(inputs)], properties={"axis": i64_attr(axis)}, result_types=[result])

    def verify_(self) -> None:
        static_tensors(self)
        if not self.inputs:
            raise VerifyException("expects at least one operand")
        types = [v.type for v in self.inputs]
        axis = shapes.normalize_axis(self.prop_value("axis"), types[0].get_num_dims())
        same_element_type([*self.inputs, self.output], "operands")
        expect_type("result", self.output.type, concat_result_type(types, axis))


@irdl_op_definition
class SliceOp(OpBase, SliceBase):
    """ONNX Slice with static starts, ends, axes and steps."""

    name = "op.slice"

    def __init__(self, input, starts, ends, axes, steps):
        shape = shapes.slice_shape(tensor_shape(input.type), starts, ends, axes, steps)
        props = {"starts": i64_array(starts), "ends": i64_array(ends), "axes": i64_array(axes), "steps": i64_array(steps)}
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        shape = shapes.slice_shape(
            tensor_shape(self.input.type), self.prop_value("starts"), self.prop_value("ends"),
            self.prop_value("axes"), self.prop_value("steps"),
        )
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))




# ------------------------------------------------------------------ space to depth


@irdl_op_definition
class SpaceToDepthOp(OpBase, TensorToTensorBase):
    """`graph.space_to_depth` on a padded input, with the layout change, channel padding
    and element type conversion around it done in the same pass over the data (the image
    input of a blocked stem conv).

    The input (in `layout`) is padded with zeros by `pads` (top, left, bottom, right;
    negative values crop, as op.pad's) to H'×W', and each `blocksize` b×b block becomes
    channels in ONNX's order: result channel (by·b + bx)·C + c holds input channel c at
    offset (by, bx) of the block. The result (in `result_layout`) has H'/b × W'/b pixels
    and as many channels as its type says, at least C·b²: the ones past C·b² are zero.
    Its element type may differ from the input's when both are floats (one rounding to
    nearest even, as op.cast)."""

    name = "op.space_to_depth"
    blocksize = prop_def(IntegerAttr[I64])
    layout = layout_string(ACTIVATION_LAYOUTS)
    result_layout = layout_string(ACTIVATION_LAYOUTS)
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))

    def __init__(
        self,
        input: SSAValue,
        blocksize: int,
        *,
        layout: str = "NHWC",
        result_layout: str = "NHWC",
        pads: Sequence[int] = (0, 0, 0, 0),
        channels: int | None = None,
        element_type: Attribute | None = None,
    ):
        props = {
            "blocksize": i64_attr(blocksize),
            "layout": StringAttr(layout),
            "result_layout": StringAttr(result_layout),
            "pads": i64_array(pads),
        }
        n, c, oh, ow = space_to_depth_sizes(tensor_shape(input.type), blocksize, layout, pads)
        channels = c * blocksize * blocksize if channels is None else channels
        shape = (n, channels, oh, ow) if result_layout == "NCHW" else (n, oh, ow, channels)
        result = TensorType(element_type or input.type.element_type, shape)
        super().__init__(operands=[input], properties=props, result_types=[result])

    def blocked_channels(self) -> int:
        """C·b²: the channels that hold input values (the rest of the result's are zero)."""
        c = tensor_shape(self.input.type)[1 if self.prop_value("layout") == "NCHW" else 3]
        return c * self.prop_value("blocksize") ** 2

    def result_channels(self) -> int:
        return tensor_shape(self.output.type)[1 if self.prop_value("result_layout") == "NCHW" else 3]

    def verify_(self) -> None:
        static_tensors(self)
        layout = check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        result_layout = check_choice("result_layout", self.prop_value("result_layout"), ACTIVATION_LAYOUTS)
        source, target = self.input.type.element_type, self.output.type.element_type
        if source != target and not (is_float(source) and is_float(target)):
            raise VerifyException(f"converts only between float types, got {source} to {target}")
        block, pads = self.prop_value("blocksize"), self.prop_value("pads")
        shapes.require_length(pads, 4, "pads")
        n, c, oh, ow = space_to_depth_sizes(tensor_shape(self.input.type), block, layout, pads)
        y = tensor_shape(self.output.type)
        if len(y) != 4:
            raise VerifyException(f"expects a 4-D result, got {self.output.type}")
        channels = self.result_channels()
        expected = (n, channels, oh, ow) if result_layout == "NCHW" else (n, oh, ow, channels)
        if y != expected or channels < c * block * block:
            minimum = (n, c * block * block, oh, ow) if result_layout == "NCHW" else (n, oh, ow, c * block * block)
            raise VerifyException(
                f"result type {self.output.type} does not match {'x'.join(map(str, minimum))} "
                f"({result_layout}, at least {c * block * block} channels)"
            )


def space_to_depth_sizes(x: Sequence[int], block: int, layout: str, pads: Sequence[int]) -> tuple[int, int, int, int]:
    """(N, C, H'/b, W'/b) of an op.space_to_depth input of shape `x` in `layout`, padded
    by `pads` to H'×W'."""
    if len(x) != 4:
        raise VerifyException(f"expects a 4-D input, got {'x'.join(map(str, x))}")
    if block < 1:
        raise VerifyException(f"blocksize must be positive, got {block}")
    n, c, h, w = (x[0], x[1], x[2], x[3]) if layout == "NCHW" else (x[0], x[3], x[1], x[2])
    top, left, bottom, right = pads
    height, width = h + top + bottom, w + left + right
    if height <= 0 or width <= 0 or height % block or width % block:
        raise VerifyException(f"blocksize {block} must divide the padded height {height} and width {width}")
    return n, c, height // block, width // block
