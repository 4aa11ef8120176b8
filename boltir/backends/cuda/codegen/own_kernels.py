"""What our own kernel families with the CUTLASS launcher ABI share (those of
`tiled_families.GENERATORS`): the instance key and launcher name of an
instance with a tile, a conv's problem integers in the CUTLASS conv launchers' order, the
translation unit of the distinct instances among some ops, and `TiledFamily`, the
generator protocol (`KernelGenerator`) of a family whose tile rides in the op's kernel
choice, which each family's module binds to its module-level names."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import Instance, LaunchArguments, chosen_threadblock, render
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.dialects.cutlass import Tile


HALF_ELEMENTS = {"f16": "__half", "bf16": "__nv_bfloat16"}
"""The 16-bit element types our conv families take, and their CUDA types."""


def element_name(value) -> str:
    """A tensor value's element type, as the families' tables key it ("f16", "bf16", ...)."""
    return str(value.type.element_type)


def tiled_instance_key(family: str, described_tile: str, op: Operation) -> str:
    """The family and tile, then compute_kernels' key of the op (types, shapes, every property)."""
    return f"{family} tile={described_tile} " + compute_kernels.instance_key(op).split(" ", 1)[1]


def launcher_name(family: str, key: str) -> str:
    return f"boltir_{family}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def conv_problem(op: ops.Conv2dOp) -> tuple[int, ...]:
    """The conv launcher's 15 integers, in the CUTLASS conv launchers' order."""
    n, h, w, c = tensor_shape(op.input.type)
    k, r, s, _ = tensor_shape(op.filter.type)
    _, p, q, _ = tensor_shape(op.output.type)
    strides, pads, dilations, _ = op.window()
    return (n, h, w, c, k, r, s, p, q, pads[0], pads[1], strides[0], strides[1], dilations[0], dilations[1])


def conv_launch_arguments(op: ops.Conv2dOp, name: str) -> LaunchArguments:
    """A conv kernel's launch: the CUTLASS conv launchers' operands, integers and workspace."""
    return LaunchArguments(name, (op.input, op.filter, op.bias, op.residual, op.output), conv_problem(op), workspace=True)


def nhwc_conv_reason(op: Operation) -> str | None:
    """Why an op is not an op.conv2d over an NHWC input and an OHWI filter, or None."""
    if not isinstance(op, ops.Conv2dOp):
        return f"'{op.name}' is not an op.conv2d"
    if op.prop_value("layout") != "NHWC" or op.prop_value("filter_layout") != "OHWI":
        return "the kernel takes an NHWC input and an OHWI filter"
    return None


def same_element_reason(op: Operation, elements, first: str, label: str, others: tuple[str, ...]) -> str | None:
    """Why the op's operand `first` (called `label` in the message) is not of one of
    `elements`, or one of the operands `others` that it has not of the same; else None."""
    element = element_name(getattr(op, first))
    if element not in elements:
        return f"{label} has element type {element}; the kernel takes {', '.join(elements)}"
    for name in others:
        value = getattr(op, name)
        if value is not None and element_name(value) != element:
            return f"the {name} has element type {element_name(value)}, {label} {element}: the kernel takes one"
    return None


def one_element_reason(op: ops.Conv2dOp, elements) -> str | None:
    """Why a conv's tensors are not all of one of `elements` (input, filter, bias, residual,
    output), or its residual not of the output's type; else None."""
    reason = same_element_reason(op, elements, "input", "the input", ("filter", "bias", "residual", "output"))
    if reason is not None:
        return reason
    if op.residual is not None and op.residual.type != op.output.type:
        return f"the residual ({op.residual.type}) must have the output's type ({op.output.type})"
    return None


def translation_unit(module_or_ops: ModuleOp | Iterable[Operation], computes: Callable[[Operation], bool],
                     kernel_name: Callable[[Operation], str], emit_instance: Callable[[Operation], Instance]) -> str:
    """One plain-CUDA unit (compute_kernels' frame and helpers) with every distinct
    instance among the ops (a module: its ops that `computes` says are the family's)."""
    chosen = [op for op in module_or_ops.walk() if computes(op)] if isinstance(module_or_ops, ModuleOp) else list(module_or_ops)
    instances = {kernel_name(op): op for op in chosen}
    return render("compute/unit.cu.j2", instances=[emit_instance(op) for op in instances.values()])


class OwnTile:
    """What the tiles of our own kernel families (frozen dataclasses of three integers)
    share: a KernelChoice records one as threadblock = warp = `numbers()`, instruction
    1×1×1 (the record's rules want it to divide the tile; our MMA shapes are fixed) and
    `STAGES` stages (2 where the kernel has no pipeline depth to record); `of` is the
    inverse and `describe` the tile's name in keys and tables."""

    STAGES: ClassVar[int] = 2

    def numbers(self) -> tuple[int, int, int]:
        return dataclasses.astuple(self)

    def as_tile(self) -> Tile:
        shape = self.numbers()
        return Tile(shape, shape, (1, 1, 1), self.STAGES)

    @classmethod
    def of(cls, tile: Tile):
        return cls(*tile.threadblock)

    def describe(self) -> str:
        return "x".join(map(str, self.numbers()))


@dataclass(frozen=True)
class TiledFamily:
    """One of our own kernel families: a plain-CUDA kernel for one op type whose tile (three
    integers, `tile_type(*threadblock)`) rides in the op's kernel choice. Its methods are the
    generator protocol, the same for every family; what differs is held here: `meaning`
    names the three integers in chosen_threadblock's message, `op_reason(op)` and
    `tile_reason(op, tile)` say why the kernel cannot compute an op, `context(op, tile)` is
    `template`'s context (with `empty`). `one_launch`: the context's `grid` grows with the
    output, so emit_instance refuses one that a single launch cannot take."""

    family: str
    op_type: type[Operation] | tuple[type[Operation], ...]
    """The op type it computes (or types: the halo conv's pooled conv beside op.conv2d)."""
    tile_type: Callable[[int, int, int], Any]
    meaning: str
    template: str
    op_reason: Callable[[Operation], str | None]
    tile_reason: Callable[[Operation, Any], str | None]
    context: Callable[[Operation, Any], dict]
    one_launch: bool = False
    arch: str = "sm80"
    """The arch its instances compile for: "sm80" (plain CUDA for sm_80 and sm_90; in a
    Hopper build the build's arch, host_program.own_kernel_arch), or "sm90" for a kernel
    that needs sm_90 (thread block clusters)."""

    @property
    def op_types(self) -> tuple[type[Operation], ...]:
        return self.op_type if isinstance(self.op_type, tuple) else (self.op_type,)

    def marked_tile(self, op: Operation) -> Any:
        """The tile of the op's kernel choice for this family, or why it has none."""
        threadblock = chosen_threadblock(op, self.family, self.meaning)
        return threadblock if isinstance(threadblock, str) else self.tile_type(*threadblock)

    def unsupported_reason(self, op: Operation) -> str | None:
        """Why this generator does not compute the op, or None."""
        if type(op) not in self.op_types:
            return f"'{op.name}' is not an {' or '.join(t.name for t in self.op_types)}"
        tile = self.marked_tile(op)
        if isinstance(tile, str):
            return tile
        return self.op_reason(op) or self.tile_reason(op, tile)

    def supports(self, op: Operation) -> bool:
        return self.unsupported_reason(op) is None

    def is_fallback(self, op: Operation) -> bool:
        return False

    def kernel_arch(self, op: Operation) -> str:
        """`arch`: "sm80" is plain CUDA compiled with the sm80 record's flags (SASS for sm_80
        and sm_90)."""
        return self.arch

    def computes(self, op: Operation) -> bool:
        """Whether the op is one of this kernel's (of its op type, chosen for it), as opposed to a
        CUTLASS instance: callers of the shared launcher ABI (the tuner, KernelLibrary) ask."""
        return type(op) in self.op_types and not isinstance(self.marked_tile(op), str)

    def instance_key(self, op: Operation) -> str:
        """The tile, then compute_kernels' key of the op (types, shapes, every property)."""
        tile = self.marked_tile(op)
        return tiled_instance_key(self.family, "?" if isinstance(tile, str) else tile.describe(), op)

    def kernel_name(self, op: Operation) -> str:
        return launcher_name(self.family, self.instance_key(op))

    def emit_instance(self, op: Operation) -> Instance:
        """The op's kernel and launcher (a BoltError when the op is not this kernel's)."""
        reason = self.unsupported_reason(op)
        if reason is not None:
            raise BoltError(f"no {self.family} kernel for {op.name}: {reason}", format_location(op.location))
        name, key = self.kernel_name(op), self.instance_key(op)
        context = self.context(op, self.marked_tile(op))
        if self.one_launch and not context["empty"] and not 0 < context["grid"] < 2**31:
            raise BoltError(f"'{op.name}' needs {context['grid']} thread blocks, more than one launch takes",
                            format_location(op.location))
        source = render(self.template, name=name, key=key, **context)
        return Instance(name, key, self.family, source.strip("\n"))

    def emit_translation_unit(self, module_or_ops: ModuleOp | Iterable[Operation]) -> str:
        """One plain-CUDA unit (compute_kernels' frame and helpers) with every distinct
        instance among the ops (a module: its ops of this family's type marked for it)."""
        return translation_unit(module_or_ops, self.computes, self.kernel_name, self.emit_instance)
