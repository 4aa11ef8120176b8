"""`op` dialect constants and data movement: resizes, gathers, layout transforms,
reshapes, pads, concatenation and slices."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    ConcatBase,
    ConstantBase,
    GatherBase,
    PadBase,
    PermuteBase,
    ResizeBase,
    ShapeOnlyBase,
    SliceBase,
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
from boltir.dialects.op.core import OpBase, same_element_type

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


