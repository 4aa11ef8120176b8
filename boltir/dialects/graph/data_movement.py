"""`graph` dialect data movement: reshapes, transposes, concatenation and splits,
slices, pads, resizes, gathers and space to depth."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    I64_ARRAY,
    ConcatBase,
    GatherBase,
    PadBase,
    PermuteBase,
    ResizeBase,
    ShapeOnlyBase,
    SliceBase,
    TensorToTensorBase,
    check_choice,
    concat_result_type,
    drop_none,
    f32_attr,
    f64_array,
    f64_attr,
    flag,
    gather_result_type,
    i64_array,
    i64_attr,
    is_float,
    static_tensors,
    tensor_shape,
)
from boltir.dialects.graph.core import GraphOp, same_element_type
from boltir.dialects.shapes import Shape

# ------------------------------------------------------------------- data movement


class ShapeOnlyOp(GraphOp, ShapeOnlyBase):
    """An op whose result shape is only given by its result type."""

    def verify_(self) -> None:
        static_tensors(self)
        if self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"changes the element type: {self.input.type} to {self.output.type}")
        self.check_shapes(tensor_shape(self.input.type), tensor_shape(self.output.type))


@irdl_op_definition
class ReshapeOp(ShapeOnlyOp):
    """Row-major reshape to the result type's shape."""

    name = "graph.reshape"

    @staticmethod
    def check_shapes(source: Shape, target: Shape) -> None:
        if shapes.element_count(source) != shapes.element_count(target):
            raise VerifyException(
                f"cannot reshape {shapes.element_count(source)} elements into "
                f"{'x'.join(map(str, target))} ({shapes.element_count(target)} elements)"
            )


@irdl_op_definition
class ExpandOp(ShapeOnlyOp):
    """Broadcasts the input to the result type's shape (ONNX Expand)."""

    name = "graph.expand"

    @staticmethod
    def check_shapes(source: Shape, target: Shape) -> None:
        if not shapes.broadcasts_to(source, target):
            raise VerifyException(
                f"{'x'.join(map(str, source))} does not expand to {'x'.join(map(str, target))}"
            )


@irdl_op_definition
class FlattenOp(GraphOp, TensorToTensorBase):
    """To 2-D: the axes before `axis` form the rows, the rest the columns."""

    name = "graph.flatten"
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    def __init__(self, input: SSAValue, axis: int = 1):
        props = {"axis": i64_attr(axis)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axis = cls.prop(props, "axis")
        if not -len(x) <= axis <= len(x):
            raise VerifyException(f"axis {axis} is out of range for rank {len(x)}")
        if axis < 0:
            axis += len(x)
        rows = shapes.element_count(x[:axis])
        return [TensorType(operand_types[0].element_type, (rows, shapes.element_count(x[axis:])))]


@irdl_op_definition
class TransposeOp(GraphOp, PermuteBase):
    name = "graph.transpose"

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        props = {"perm": i64_array(perm)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        shape = shapes.permute_shape(tensor_shape(operand_types[0]), cls.prop(props, "perm"))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class ConcatOp(GraphOp, ConcatBase):
    name = "graph.concat"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        props = {"axis": i64_attr(axis)}
        super().__init__(
            operands=[list(inputs)], properties=props, result_types=self.infer([v.type for v in inputs], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        if not operand_types:
            raise VerifyException("expects at least one operand")
        same_element_type(operand_types)
        axis = shapes.normalize_axis(cls.prop(props, "axis"), operand_types[0].get_num_dims())
        return [concat_result_type(operand_types, axis)]


@irdl_op_definition
class SplitOp(GraphOp):
    """Splits along `axis` into pieces of the given `sizes`."""

    name = "graph.split"
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    sizes = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($outputs)"

    def __init__(self, input: SSAValue, sizes: Sequence[int], axis: int = 0):
        props = {"axis": i64_attr(axis), "sizes": i64_array(sizes)}
        super().__init__(operands=[input], properties=props, result_types=[self.infer([input.type], props)])

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(x))
        sizes = cls.prop(props, "sizes")
        shapes.require_non_negative(sizes, "sizes")
        if sum(sizes) != x[axis]:
            raise VerifyException(f"sizes {list(sizes)} do not add up to dimension {axis} of size {x[axis]}")
        return [TensorType(operand_types[0].element_type, x[:axis] + (s,) + x[axis + 1 :]) for s in sizes]


@irdl_op_definition
class SliceOp(GraphOp, SliceBase):
    """ONNX Slice with static starts, ends, axes and steps."""

    name = "graph.slice"

    def __init__(self, input, starts, ends, axes=None, steps=None):
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        props = {"starts": i64_array(starts), "ends": i64_array(ends), "axes": i64_array(axes), "steps": i64_array(steps)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        shape = shapes.slice_shape(
            tensor_shape(operand_types[0]),
            cls.prop(props, "starts"),
            cls.prop(props, "ends"),
            cls.prop(props, "axes"),
            cls.prop(props, "steps"),
        )
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class PadOp(GraphOp, PadBase):
    """ONNX Pad: `pads` holds every axis' begin, then every axis' end; negative pads crop."""

    name = "graph.pad"

    def __init__(self, input: SSAValue, pads: Sequence[int], mode: str = "constant", value: float = 0.0):
        props = {"pads": i64_array(pads), "mode": StringAttr(mode), "value": f64_attr(value)}
        self.init_inferred([input], props)

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        pads = cls.prop(props, "pads")
        mode = check_choice("mode", cls.prop(props, "mode"), cls.MODES)
        shapes.require_length(pads, 2 * len(x), "pads")
        shape = shapes.pad_shape(x, pads)
        if any(d < 0 for d in shape):
            raise VerifyException(f"pads {list(pads)} crop more than the input {'x'.join(map(str, x))} holds")
        if mode == "reflect":
            for i, d in enumerate(x):
                if max(pads[i], pads[i + len(x)]) >= d:
                    raise VerifyException(f"reflect padding of axis {i} must be smaller than its size {d}")
        if mode in ("edge", "wrap") and any(d == 0 for d in x):
            raise VerifyException(f"{mode} padding needs a non-empty input")
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class ResizeOp(GraphOp, ResizeBase):
    """ONNX Resize with one scale per axis: nearest, (n-)linear or cubic.

    `tf_crop_and_resize` samples the region `roi` (every axis' start, then every axis'
    end, as fractions of the input) and writes `extrapolation_value` outside it."""

    name = "graph.resize"
    FLOAT_ONLY: ClassVar[bool] = True

    def __init__(
        self,
        input: SSAValue,
        scales: Sequence[float],
        *,
        mode: str = "nearest",
        coordinate_transformation_mode: str = "half_pixel",
        nearest_mode: str = "round_prefer_floor",
        sizes: Sequence[int] | None = None,
        cubic_coeff_a: float = -0.75,
        exclude_outside: bool = False,
        roi: Sequence[float] | None = None,
        extrapolation_value: float = 0.0,
    ):
        props = drop_none(
            {
                "scales": f64_array(scales),
                "mode": StringAttr(mode),
                "coordinate_transformation_mode": StringAttr(coordinate_transformation_mode),
                "nearest_mode": StringAttr(nearest_mode),
                "cubic_coeff_a": f32_attr(cubic_coeff_a),
                "exclude_outside": flag(exclude_outside),
                "roi": None if roi is None else f64_array(roi),
                "extrapolation_value": f32_attr(extrapolation_value),
            }
        )
        x = tensor_shape(input.type)
        shape = tuple(sizes) if sizes is not None else tuple(int(d * s) for d, s in zip(x, scales, strict=True))
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        if not is_float(self.input.type.element_type) or self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"expects floating-point tensors of one element type, got {self.input.type}")
        self.check_modes()
        x, y = tensor_shape(self.input.type), tensor_shape(self.output.type)
        scales = self.prop_value("scales")
        shapes.require_length(scales, len(x), "scales")
        if len(y) != len(x):
            raise VerifyException(f"changes the rank: {self.input.type} to {self.output.type}")
        roi = self.prop_value("roi") or None
        if self.prop_value("coordinate_transformation_mode") == "tf_crop_and_resize":
            if roi is None:
                raise VerifyException("tf_crop_and_resize needs a roi")
            shapes.require_length(roi, 2 * len(x), "roi")
        elif roi is not None:
            raise VerifyException("roi is only used by tf_crop_and_resize")
        for axis, (d, s, o) in enumerate(zip(x, scales, y, strict=True)):
            if s <= 0:
                raise VerifyException(f"scales must be positive, got {list(scales)}")
            # tf_crop_and_resize samples the roi at any output size; other modes scale.
            if roi is None and abs(d * s - o) >= 1.0:
                raise VerifyException(f"axis {axis}: size {d} scaled by {s} cannot give {o}")


class AxesOp(GraphOp, TensorToTensorBase):
    """Removes or inserts the size-1 `axes`; `axes_shape` gives the result's shape."""

    axes = prop_def(I64_ARRAY)

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        props = {"axes": i64_array(axes)}
        self.init_inferred([input], props)

    @staticmethod
    def axes_shape(shape: Shape, axes: Sequence[int]) -> Shape:
        raise NotImplementedError

    @classmethod
    def infer(cls, operand_types, props):
        shape = cls.axes_shape(tensor_shape(operand_types[0]), cls.prop(props, "axes"))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class SqueezeOp(AxesOp):
    name = "graph.squeeze"
    axes_shape = staticmethod(shapes.squeeze_shape)


@irdl_op_definition
class UnsqueezeOp(AxesOp):
    name = "graph.unsqueeze"
    axes_shape = staticmethod(shapes.unsqueeze_shape)


@irdl_op_definition
class GatherOp(GraphOp, GatherBase):
    """ONNX Gather: picks `indices` (i32 or i64, negative from the end) along `axis`."""

    name = "graph.gather"
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(0))

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int = 0):
        props = {"axis": i64_attr(axis)}
        super().__init__(
            operands=[data, indices], properties=props, result_types=self.infer([data.type, indices.type], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        data, indices = operand_types
        return [gather_result_type(data, indices, cls.prop(props, "axis"))]



# ------------------------------------------------------------------ space to depth


@irdl_op_definition
class SpaceToDepthOp(GraphOp, TensorToTensorBase):
    """ONNX SpaceToDepth: N×C×H×W -> N×(C·b²)×(H/b)×(W/b) for `blocksize` b. Each b×b
    block of pixels becomes channels in ONNX's order: result channel (by·b + bx)·C + c
    holds input channel c at row offset by and column offset bx of the block."""

    name = "graph.space_to_depth"
    blocksize = prop_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue, blocksize: int):
        self.init_inferred([input], {"blocksize": i64_attr(blocksize)})

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        block = cls.prop(props, "blocksize")
        if len(x) != 4:
            raise VerifyException(f"expects a 4-D N×C×H×W input, got {operand_types[0]}")
        if block < 1:
            raise VerifyException(f"blocksize must be positive, got {block}")
        n, c, h, w = x
        if h % block or w % block:
            raise VerifyException(f"blocksize {block} must divide the input's height {h} and width {w}")
        return [TensorType(operand_types[0].element_type, (n, c * block * block, h // block, w // block))]
