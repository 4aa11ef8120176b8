"""The kernel choice: which CUTLASS template instance computes an op-level GEMM, conv or
back-to-back op, as `select-kernels` records it (the op's `kernel` attribute) and
`lower-op-to-cutlass` reads it; the `KernelSelector` interface that answers it; and
`UNFUSE`, the answer for a b2b op that should run as its two halves (`unfuse`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.cutlass import Tile
from boltir.dialects.graph import i64_array, python_value
from boltir.target import ARCHS

KERNEL_ATTR = "kernel"
"""The attribute select-kernels writes on an op-level op."""


FAMILIES = ("gemm", "conv2d_fprop", "depthwise_conv2d_fprop", "b2b_gemm", "b2b_conv2d", "depthwise_direct",
            "skinny_gemm", "stem_conv", "splitk_conv", "halo_conv", "stream_conv", "depthwise_pointwise",
            "wgsplit_gemm")
"""The template families a choice can name; "depthwise_direct" is our own depthwise conv
kernel (codegen/depthwise_kernels.py), its tile one thread's (rows, columns, channels)."""
# "skinny_gemm" is our own GEMM for few rows (codegen/skinny_gemm_kernels.py), its tile a
# CTA's (weight rows, warps, unroll).
# "stem_conv" is our own conv for few input channels (codegen/stem_conv_kernels.py), its
# tile a CTA's (output rows, output columns, m16 fragments per warp).
# "splitk_conv" is our own conv for few output pixels (codegen/splitk_conv_kernels.py), its
# tile a cluster's (output pixels, output channels, CTAs splitting the reduction).
# "halo_conv" is our own wgmma conv for 64 input channels (codegen/halo_conv_kernels.py), its
# tile a CTA's (output columns, output rows, descriptor base-offset mode).
# "stream_conv" is our own streaming conv for narrow channel counts, 1x1 or a small window
# (codegen/stream_conv_kernels.py), its tile (16-pixel fragments a unit, warps sharing a
# unit, warps a CTA).
# "depthwise_pointwise" is our own kernel for a depthwise conv and the 1x1 conv after it
# (codegen/depthwise_pointwise_kernels.py), its tile (output rows a CTA, output pixels a
# depthwise thread item, warps a CTA).
# "wgsplit_gemm" is our own Hopper GEMM for few rows with K split among a cluster's warp groups
# (codegen/wgsplit_gemm_kernels.py), its tile (tile rows, tile columns, cluster CTAs).


CUTLASS_3X_FAMILIES = ("gemm", "conv2d_fprop")
"""The families whose "sm90" choices are CUTLASS 3.x instances (with a kernel schedule);
an "sm90" choice of another family is one of our kernels that needs sm_90."""


@dataclass(frozen=True)
class KernelChoice:
    """A template instance's parameters, as select-kernels records them."""

    family: str  # one of FAMILIES
    arch: str
    tile: Tile
    alignment: tuple[int, int, int]
    swizzle: int = 1
    split_k: int = 1
    iterator_algorithm: str | None = None
    tile1: Tile | None = None
    residency: str | None = None
    accumulator: str = "f32"
    cluster: tuple[int, int, int] | None = None
    kernel_schedule: str | None = None
    """sm90 (CUTLASS 3.x) choices only: the thread-block cluster and the kernel schedule."""

    def to_attr(self) -> DictionaryAttr:
        entries: dict[str, Attribute] = {
            "family": StringAttr(self.family),
            "arch": StringAttr(self.arch),
            "threadblock": i64_array(self.tile.threadblock),
            "warp": i64_array(self.tile.warp),
            "instruction": i64_array(self.tile.instruction),
            "stages": IntegerAttr(self.tile.stages, 64),
            "alignment": i64_array(self.alignment),
            "swizzle": IntegerAttr(self.swizzle, 64),
            "split_k": IntegerAttr(self.split_k, 64),
        }
        if self.iterator_algorithm is not None:
            entries["iterator_algorithm"] = StringAttr(self.iterator_algorithm)
        if self.tile1 is not None:
            entries["threadblock1"] = i64_array(self.tile1.threadblock)
            entries["warp1"] = i64_array(self.tile1.warp)
        if self.residency is not None:
            entries["residency"] = StringAttr(self.residency)
        if self.accumulator != "f32":
            entries["accumulator"] = StringAttr(self.accumulator)
        if self.cluster is not None:
            entries["cluster"] = i64_array(self.cluster)
        if self.kernel_schedule is not None:
            entries["kernel_schedule"] = StringAttr(self.kernel_schedule)
        return DictionaryAttr(entries)

    @staticmethod
    def from_attr(attr: Attribute) -> KernelChoice:
        """The choice a `kernel` attribute records. A malformed one (not a dictionary, an
        entry missing or of the wrong kind, an unknown family or arch, a tile whose shapes
        do not divide) is a BoltError that says what is wrong."""
        if not isinstance(attr, DictionaryAttr):
            raise BoltError(f"a kernel choice must be a dictionary, got {attr}")

        def get(name: str, kind: str, default=None, required: bool = True):
            if name not in attr.data:
                if required:
                    raise BoltError(f"the kernel choice has no '{name}'")
                return default
            value = python_value(attr.data[name])
            if kind == "str" and isinstance(value, str) or kind == "int" and type(value) is int:
                return value
            if kind == "shape" and isinstance(value, tuple) and len(value) == 3 and all(type(v) is int for v in value):
                return value
            expected = {"str": "a string", "int": "an integer", "shape": "3 integers (array<i64: M, N, K>)"}[kind]
            raise BoltError(f"the kernel choice's '{name}' must be {expected}, got {attr.data[name]}")

        family, arch = get("family", "str"), get("arch", "str")
        if family not in FAMILIES:
            raise BoltError(f"unknown kernel family '{family}'; known: {', '.join(FAMILIES)}")
        if arch not in ARCHS:
            raise BoltError(f"the kernel choice's arch must be one of {', '.join(ARCHS)}; got '{arch}'")
        b2b = family.startswith("b2b_")
        tile = Tile(get("threadblock", "shape"), get("warp", "shape"), get("instruction", "shape"), get("stages", "int"))
        tile1 = None
        if b2b or "threadblock1" in attr.data:
            tile1 = Tile(get("threadblock1", "shape"), get("warp1", "shape"), tile.instruction, tile.stages)
        try:
            for checked in (tile, tile1):
                if checked is not None:
                    checked.check()
        except VerifyException as error:
            raise BoltError(str(error)) from error
        return KernelChoice(
            family=family,
            arch=arch,
            tile=tile,
            alignment=get("alignment", "shape"),
            swizzle=get("swizzle", "int", 1, required=False),
            split_k=get("split_k", "int", 1, required=False),
            iterator_algorithm=get("iterator_algorithm", "str", required=family == "conv2d_fprop"),
            tile1=tile1,
            residency=get("residency", "str", required=b2b),
            accumulator=get("accumulator", "str", "f32", required=False),
            cluster=get("cluster", "shape", required=False),
            kernel_schedule=get("kernel_schedule", "str", required=arch == "sm90" and family in CUTLASS_3X_FAMILIES),
        )


UNFUSE = "unfuse"
"""A selector's answer for a b2b op that should run as two kernels."""


class KernelSelector(Protocol):
    """Chooses a template instance for one op-level GEMM, conv or b2b op."""

    name: str

    def select(self, op: Operation, arch: str) -> KernelChoice | str: ...


def unfuse(op: ops.B2bGemmOp | ops.B2bConv2dOp) -> list[Operation]:
    """The two ops a b2b op fuses, in order (what `UNFUSE` runs)."""
    if isinstance(op, ops.B2bGemmOp):
        first = ops.GemmOp(op.a, op.b0, bias=op.bias0, layout_a=op.prop_value("layout_a"), layout_b=op.prop_value("layout_b0"), epilogue=op.epilogue0)
        second = ops.GemmOp(first.output, op.b1, bias=op.bias1, layout_b=op.prop_value("layout_b1"), epilogue=op.epilogue1, result_type=op.output.type)
    else:
        common = {"layout": op.prop_value("layout"), "filter_layout": op.prop_value("filter_layout")}
        first = ops.Conv2dOp(
            op.input, op.filter0, bias=op.bias0, strides=op.prop_value("strides"), pads=op.prop_value("pads"),
            dilations=op.prop_value("dilations"), epilogue=op.epilogue0, **common,
        )
        second = ops.Conv2dOp(first.output, op.filter1, bias=op.bias1, epilogue=op.epilogue1, **common)
    for new in (first, second):
        new.location = op.location
    return [first, second]
