"""The `cutlass` dialect: one op per CUTLASS template instance, every parameter fixed.

A `cutlass.gemm`, `cutlass.conv2d_fprop`, `cutlass.depthwise_conv2d_fprop`,
`cutlass.b2b_gemm` or `cutlass.b2b_conv2d` op is exactly one kernel: its operands are the
op-level operands (same layouts), and its properties are the template's parameters:

- `arch` ("sm80" or "sm90") and `op_class` ("tensorop" or "simt");
- `accumulator`, the element type the main loop accumulates in (f32);
- `tile = #cutlass.tile<threadblock = [M, N, K], warp = [M, N, K], instruction = [M, N, K], stages = S>`;
- `swizzle` (the threadblock swizzle's log tile), `alignment` (A, B, C in elements),
  `split_k` (slices of K, reduced in series);
- `cluster` and `kernel_schedule`, on sm90 only: an sm90 instance is a CUTLASS 3.x
  kernel (wgmma, TMA), whose `tile` reads: threadblock = the CTA tile, warp = one
  consumer warpgroup's share of it, instruction = the wgmma shape, stages = the
  pipeline depth (0: as many as fit beside the epilogue);
- the family's own: a conv's iterator and window, a b2b op's second tile and residency;
- `epilogue`, the `#op.epilogue<...>` the kernel applies.

The verifiers enforce CUTLASS's own rules: the warp tile divides the threadblock tile,
the instruction divides the warp tile, the stages fit the arch's shared memory, the
alignment divides the contiguous dimension, sm90-only parameters appear only on sm90.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import I64, ArrayAttr, IntAttr, IntegerAttr, StringAttr, TensorType, TypeAttribute
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, irdl_op_definition, opt_prop_def, param_def, prop_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import I64_ARRAY, check_choice, expect_type, i64_attr, static_tensors, tensor_shape
from boltir.dialects.op import (
    B2bConvOperands,
    B2bGemmOperands,
    ConvOperands,
    GemmOperands,
    KeywordOperandsFormat,
    OpBase,
    check_epilogue_operands,
    conv_output_shape,
    gemm_shape,
)
from boltir.dtypes import numpy_dtype

ARCHS = ("sm80", "sm90")
OP_CLASSES = ("tensorop", "simt")
SHARED_MEMORY_BYTES = {"sm80": 163 * 1024, "sm90": 227 * 1024}
"""The most shared memory one threadblock may use (cudaDevAttrMaxSharedMemoryPerBlockOptin)."""
MAX_ACCESS_BITS = 128
"""CUTLASS's widest vector access: alignment x element bits is at most 128."""
CONV_ITERATORS = ("analytic", "optimized", "fixed_channels", "few_channels")
RESIDENCIES = ("register", "shared")
KERNEL_SCHEDULES = ("auto", "cooperative", "pingpong", "warpspecialized", "streamk")
"""sm90 (3.x) kernel schedules: TMA warp-specialized with two consumer warpgroups on one
tile (cooperative), on alternating tiles (pingpong), or one consumer (warpspecialized, the
only one CUTLASS's 3.x implicit-GEMM conv has); streamk is the cooperative kernel on the
stream-K tile scheduler, which splits the K loops of a partial last wave's tiles across
every SM (a GEMM whose tile count is a poor multiple of the SM count)."""
SPLIT_K_MODES = ("serial", "parallel")


@dataclass(frozen=True)
class Tile:
    """A template's tiling: threadblock, warp and instruction shapes (M, N, K), stages."""

    threadblock: tuple[int, int, int]
    warp: tuple[int, int, int]
    instruction: tuple[int, int, int]
    stages: int

    @property
    def warps(self) -> int:
        return (self.threadblock[0] // self.warp[0]) * (self.threadblock[1] // self.warp[1]) * (self.threadblock[2] // self.warp[2])

    def check(self) -> None:
        for outer, inner, what in ((self.threadblock, self.warp, "warp"), (self.warp, self.instruction, "instruction")):
            if any(i < 1 or o % i for o, i in zip(outer, inner, strict=True)):
                raise VerifyException(f"the {what} shape {list(inner)} does not divide {list(outer)}")
        if self.stages < 2 and self.stages != 0:
            raise VerifyException(f"stages must be 2 or more (or 0: as many as fit, on sm90), got {self.stages}")

    def shared_memory_bytes(self, a_bits: int, b_bits: int) -> int:
        """The main loop's shared memory: one A and one B tile per stage."""
        m, n, k = self.threadblock
        return self.stages * (m * k * a_bits + k * n * b_bits) // 8


def _int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


@irdl_attr_definition
class TileAttr(ParametrizedAttribute):
    """`#cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>`"""

    name = "cutlass.tile"
    threadblock: ArrayAttr = param_def()
    warp: ArrayAttr = param_def()
    instruction: ArrayAttr = param_def()
    stages: IntAttr = param_def()

    @staticmethod
    def make(tile: Tile) -> TileAttr:
        as_array = lambda values: ArrayAttr([IntAttr(v) for v in values])  # noqa: E731
        return TileAttr(as_array(tile.threadblock), as_array(tile.warp), as_array(tile.instruction), IntAttr(tile.stages))

    @property
    def value(self) -> Tile:
        as_tuple = lambda array: tuple(v.data for v in array.data)  # noqa: E731
        return Tile(as_tuple(self.threadblock), as_tuple(self.warp), as_tuple(self.instruction), self.stages.data)

    def print_parameters(self, printer: Printer) -> None:
        tile = self.value
        printer.print_string(
            f"<threadblock = {list(tile.threadblock)}, warp = {list(tile.warp)}, "
            f"instruction = {list(tile.instruction)}, stages = {tile.stages}>"
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        values = {}
        for key in ("threadblock", "warp", "instruction"):
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            values[key] = _int_list(parser)
            if len(values[key]) != 3:
                parser.raise_error(f"{key} needs 3 sizes (M, N, K)")
            parser.parse_punctuation(",")
        parser.parse_keyword("stages")
        parser.parse_punctuation("=")
        stages = parser.parse_integer()
        parser.parse_punctuation(">")
        tile = Tile(tuple(values["threadblock"]), tuple(values["warp"]), tuple(values["instruction"]), stages)
        return list(TileAttr.make(tile).parameters)

    def verify(self) -> None:
        self.value.check()


def element_bits(element_type: Attribute) -> int:
    return numpy_dtype(element_type).itemsize * 8


class TemplateOp(KeywordOperandsFormat, OpBase):
    """What every CUTLASS template instance has."""

    arch = prop_def(StringAttr)
    op_class = opt_prop_def(StringAttr, default_value=StringAttr("tensorop"))
    accumulator = prop_def(TypeAttribute)
    tile = prop_def(TileAttr)
    swizzle = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    alignment = prop_def(I64_ARRAY)
    """A, B and C, in elements."""
    cluster = opt_prop_def(I64_ARRAY)
    kernel_schedule = opt_prop_def(StringAttr)

    def check_template(self, a_type: TensorType, b_type: TensorType, c_type: TensorType) -> None:
        arch = self.prop_value("arch")
        check_choice("arch", arch, ARCHS)
        check_choice("op_class", self.prop_value("op_class"), OP_CLASSES)
        if arch != "sm90" and ("cluster" in self.properties or "kernel_schedule" in self.properties):
            raise VerifyException("cluster and kernel_schedule are sm90 parameters")
        if "cluster" in self.properties:
            cluster = self.prop_value("cluster")
            if len(cluster) != 3 or any(size < 1 for size in cluster):
                raise VerifyException(f"cluster needs three positive sizes (M, N, K), got {list(cluster)}")
        if "kernel_schedule" in self.properties:
            check_choice("kernel_schedule", self.prop_value("kernel_schedule"), KERNEL_SCHEDULES)
        if self.prop_value("swizzle") not in (1, 2, 4, 8):
            raise VerifyException(f"swizzle must be 1, 2, 4 or 8, got {self.prop_value('swizzle')}")
        tile = self.tile.value
        if tile.stages == 0 and arch != "sm90":
            raise VerifyException("stages = 0 (as many as fit in shared memory) is a 3.x (sm90) choice")
        limit = SHARED_MEMORY_BYTES[arch]
        needed = tile.shared_memory_bytes(element_bits(a_type.element_type), element_bits(b_type.element_type))
        if needed > limit:
            raise VerifyException(f"{tile.stages} stages of this tile need {needed} bytes of shared memory; {arch} has {limit}")
        alignment = self.prop_value("alignment")
        if len(alignment) != 3:
            raise VerifyException("alignment needs three values (A, B, C)")
        for value, what, aligned in zip(alignment, ("A", "B", "C"), (a_type, b_type, c_type), strict=True):
            if value < 1 or value * element_bits(aligned.element_type) > MAX_ACCESS_BITS:
                raise VerifyException(f"alignment of {what} ({value} elements) must be 1 to {MAX_ACCESS_BITS} bits wide")


def check_divides(alignment: int, extent: int, what: str) -> None:
    if extent % alignment:
        raise VerifyException(f"alignment {alignment} does not divide {what} ({extent})")


def check_window(op: TemplateOp, *tensors) -> None:
    """A conv's 4-D activations and filters, its strides, pads (top, left, bottom, right)
    and dilations."""
    for value in tensors:
        if value.type.get_num_dims() != 4:
            raise VerifyException(f"expects 4-D activations and filters, got {value.type}")
    strides, pads, dilations = op.prop_value("strides"), op.prop_value("pads"), op.prop_value("dilations")
    shapes.check_window(strides, pads, dilations)


# ----------------------------------------------------------------------------- GEMM


@irdl_op_definition
class GemmOp(TemplateOp, GemmOperands):
    """A CUTLASS GEMM (`GemmUniversal`): batched when the operands have a batch dimension,
    split-k in series when `split_k` > 1."""

    name = "cutlass.gemm"
    split_k = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    def verify_(self) -> None:
        static_tensors(self)
        layout_a, layout_b = self.prop_value("layout_a"), self.prop_value("layout_b")
        shape, m, n, k = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b.type), layout_a, layout_b)
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, n, self.output.type)
        self.check_template(self.a.type, self.b.type, self.output.type)
        align_a, align_b, align_c = self.prop_value("alignment")
        check_divides(align_a, k if layout_a == "row" else m, "A's contiguous dimension")
        check_divides(align_b, n if layout_b == "row" else k, "B's contiguous dimension")
        check_divides(align_c, n, "C's contiguous dimension (N)")
        split_k = self.prop_value("split_k")
        if split_k < 1 or split_k > k:
            raise VerifyException(f"split_k must be between 1 and K ({k}), got {split_k}")


# ---------------------------------------------------------------------------- convs


@irdl_op_definition
class Conv2dFpropOp(TemplateOp, ConvOperands):
    """A CUTLASS implicit-GEMM conv2d fprop, NHWC activations and KRSC (OHWI) filters.

    `iterator_algorithm`: "analytic" (any C), "optimized" (C a multiple of the A
    alignment), "fixed_channels" (C equal to the alignment, e.g. 4 or 8: the padded first
    layer of an image model), "few_channels" (C of 1, 2 or 3 with alignment 1 or 2)."""

    name = "cutlass.conv2d_fprop"
    iterator_algorithm = opt_prop_def(StringAttr, default_value=StringAttr("optimized"))
    split_k = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    def window(self) -> tuple:
        return self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), 1

    def verify_(self) -> None:
        static_tensors(self)
        iterator = self.prop_value("iterator_algorithm")
        check_choice("iterator_algorithm", iterator, CONV_ITERATORS)
        check_window(self, self.input, self.filter)
        shape, k = conv_output_shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), "NHWC", "OHWI", *self.window()
        )
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, k, self.output.type)
        self.check_template(self.input.type, self.filter.type, self.output.type)
        c = tensor_shape(self.input.type)[3]
        align_a, align_b, align_c = self.prop_value("alignment")
        if iterator == "fixed_channels" and c != align_a:
            raise VerifyException(f"the fixed-channels iterator needs C ({c}) equal to the A alignment ({align_a})")
        if iterator == "few_channels" and (c > 8 or c % align_a):
            raise VerifyException(f"the few-channels iterator needs a small C ({c}) that the A alignment divides")
        if iterator in ("analytic", "optimized"):
            check_divides(align_a, c, "the input channels")
        check_divides(align_b, c, "the filter's input channels")
        check_divides(align_c, k, "the output channels")
        if self.prop_value("split_k") < 1:
            raise VerifyException("split_k must be positive")


@irdl_op_definition
class DepthwiseConv2dFpropOp(TemplateOp, ConvOperands):
    """A CUTLASS 2.x direct depthwise conv (groups = C = K), NHWC, with a K×R×S×1 filter.

    The tile's threadblock shape is (output pixels of one block, channels, filter taps);
    the warp shape splits it among warps."""

    name = "cutlass.depthwise_conv2d_fprop"

    def window(self) -> tuple:
        c = tensor_shape(self.input.type)[3]
        return self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), c

    def verify_(self) -> None:
        static_tensors(self)
        check_window(self, self.input, self.filter)
        shape, k = conv_output_shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), "NHWC", "OHWI", *self.window()
        )
        if k != tensor_shape(self.input.type)[3]:
            raise VerifyException("a depthwise conv has as many output channels as input channels")
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, k, self.output.type)
        self.check_template(self.input.type, self.filter.type, self.output.type)
        align_a, _, align_c = self.prop_value("alignment")
        check_divides(align_a, k, "the input channels")
        check_divides(align_c, k, "the channels")


# ------------------------------------------------------------------- back-to-back


class B2bTemplateOp(TemplateOp):
    tile1 = prop_def(TileAttr)
    residency = prop_def(StringAttr)

    def check_b2b(self, n0: int, n1: int) -> None:
        """Example 13's rules: each threadblock computes whole rows of the intermediate
        (its first tile's N is all of N0) and of the output (the second tile covers N1);
        both GEMMs use the same M tile and the same warps. In the register file, each
        warp also holds whole rows: its N is its threadblock's N in both GEMMs, and the
        two warp tiles share M."""
        check_choice("residency", self.prop_value("residency"), RESIDENCIES)
        tile0, tile1 = self.tile.value, self.tile1.value
        tile1.check()
        if tile0.threadblock[1] != n0:
            raise VerifyException(f"the first threadblock tile's N ({tile0.threadblock[1]}) must be the first N ({n0})")
        if tile1.threadblock[1] < n1:
            raise VerifyException(f"the second threadblock tile's N ({tile1.threadblock[1]}) must cover the second N ({n1})")
        if tile0.threadblock[0] != tile1.threadblock[0]:
            raise VerifyException("both threadblock tiles must have the same M")
        if tile0.warps != tile1.warps:
            raise VerifyException(f"both GEMMs must use the same number of warps, got {tile0.warps} and {tile1.warps}")
        if self.prop_value("residency") == "register":
            if tile0.warp[1] != tile0.threadblock[1] or tile1.warp[1] != tile1.threadblock[1]:
                raise VerifyException("register-file residency needs each warp tile's N to equal its threadblock's N")
            if tile0.warp[0] != tile1.warp[0]:
                raise VerifyException("register-file residency needs both warp tiles to have the same M")

    def check_no_residual(self) -> None:
        """Checked before the epilogue operands: a b2b op has no residual operand at all."""
        for epilogue in (self.epilogue0, self.epilogue1):
            if epilogue.residual_kind != "none":
                raise VerifyException("back-to-back epilogues take no residual")


@irdl_op_definition
class B2bGemmOp(B2bTemplateOp, B2bGemmOperands):
    """Two GEMMs in one kernel (CUTLASS example 13's B2bGemm), f16."""

    name = "cutlass.b2b_gemm"

    def verify_(self) -> None:
        static_tensors(self)
        self.check_no_residual()
        first, _, n0, k0 = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b0.type), "row", "col")
        second, _, n1, _ = gemm_shape(first, tensor_shape(self.b1.type), "row", "col")
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        intermediate = TensorType(self.output.type.element_type, first)
        check_epilogue_operands(self.epilogue0, self.bias0, None, n0, intermediate)
        check_epilogue_operands(self.epilogue1, self.bias1, None, n1, self.output.type)
        self.check_template(self.a.type, self.b0.type, self.output.type)
        align_a, align_b, align_c = self.prop_value("alignment")
        check_divides(align_a, k0, "A's contiguous dimension (K0)")
        check_divides(align_b, k0, "B0's contiguous dimension (K0)")
        check_divides(align_b, n0, "B1's contiguous dimension (N0)")
        check_divides(align_c, n1, "C's contiguous dimension (N1)")
        self.check_b2b(n0, n1)


@irdl_op_definition
class B2bConv2dOp(B2bTemplateOp, B2bConvOperands):
    """A conv and a 1×1 conv in one kernel (example 13's B2bImplicitGemmConvolution), f16."""

    name = "cutlass.b2b_conv2d"

    def verify_(self) -> None:
        static_tensors(self)
        self.check_no_residual()
        check_window(self, self.input, self.filter0, self.filter1)
        window = (self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), 1)
        first, k0 = conv_output_shape(tensor_shape(self.input.type), tensor_shape(self.filter0.type), "NHWC", "OHWI", *window)
        w1 = tensor_shape(self.filter1.type)
        if w1[1:3] != (1, 1):
            raise VerifyException(f"the second conv must be 1x1, got a {w1[1]}x{w1[2]} filter")
        second, k1 = conv_output_shape(first, tensor_shape(self.filter1.type), "NHWC", "OHWI", (1, 1), (0, 0, 0, 0), (1, 1), 1)
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        intermediate = TensorType(self.output.type.element_type, first)
        check_epilogue_operands(self.epilogue0, self.bias0, None, k0, intermediate)
        check_epilogue_operands(self.epilogue1, self.bias1, None, k1, self.output.type)
        self.check_template(self.input.type, self.filter0.type, self.output.type)
        align_a, align_b, align_c = self.prop_value("alignment")
        c = tensor_shape(self.input.type)[3]
        check_divides(align_a, c, "the input channels")
        check_divides(align_b, c, "the first filter's input channels")
        check_divides(align_b, k0, "the second filter's input channels")
        check_divides(align_c, k1, "the output channels")
        self.check_b2b(k0, k1)


def tile_attr(threadblock: Sequence[int], warp: Sequence[int], instruction: Sequence[int], stages: int) -> TileAttr:
    return TileAttr.make(Tile(tuple(threadblock), tuple(warp), tuple(instruction), stages))


Cutlass = Dialect(
    "cutlass",
    [GemmOp, Conv2dFpropOp, DepthwiseConv2dFpropOp, B2bGemmOp, B2bConv2dOp],
    [TileAttr],
)

