"""The roofline model: for each launch of a lowered model, the FLOPs it computes, the
bytes it moves and the time the target cannot beat, max(FLOPs / peak, bytes / bandwidth).

    rows = module_roofline(module, get_target("sm90"))   # after plan-memory
    rows[0].op, rows[0].family, rows[0].flops, rows[0].bytes, rows[0].bound_seconds
    launch_cost(op)                                       # one op: LaunchCost(flops, bytes, note)

The launches are the host program's (`build_program(module).steps`): the ops of `@main`
that get a kernel, in order, less the reshapes that plan-memory made free.

The counting rules are `launch_costs.RULES`, one entry per op class (`launch_costs`:
below the kernel selection too, which asks whether an op is memory-bound).

The bound reads the peak of the launch's element type (its first operand's): the tensor
cores' peak, which only GEMMs and convs reach; the other ops are bound by bandwidth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.launch_costs import LaunchCost, conv_channels, gemm_problem, launch_cost, launch_element
from boltir.target import GpuTarget

__all__ = ["LaunchCost", "RooflineRow", "conv_channels", "gemm_problem", "launch_cost", "module_roofline", "roofline_rows"]


@dataclass(frozen=True)
class RooflineRow:
    """One launch: its position in the host program, op, kernel family, counts and bound."""

    index: int
    op: str
    family: str
    flops: int
    bytes: int
    element: str
    """The element type whose peak the bound reads."""
    bound_seconds: float
    note: str = ""


def roofline_rows(launches: Iterable[tuple[Operation, str]], target: GpuTarget) -> list[RooflineRow]:
    """One row per (op, kernel family) launch, in order."""
    rows = []
    for index, (op, family) in enumerate(launches):
        cost = launch_cost(op)
        element = launch_element(op)
        rows.append(RooflineRow(index, op.name, family, cost.flops, cost.bytes, element,
                                target.bound_seconds(cost.flops, cost.bytes, element), cost.note))
    return rows


def module_roofline(module: ModuleOp, target: GpuTarget) -> list[RooflineRow]:
    """The rows of every launch the host program of `module` makes (after plan-memory)."""
    return roofline_rows(((step.op, step.family) for step in build_program(module).steps), target)
