"""The host program of a whole model: `@main`'s ops, in order, as launches of their
kernels over one memory arena, plus the weights image and the list of translation units
that make the model's shared library.

    program = build_program(module)     # after plan-memory
    program.units                       # [CompileJob, ...]: every kernel instance + the host unit
    program.weights                     # bytes: every constant, 256-byte aligned
    program.steps                       # one Step per launch (op, kernel, family)

Requires: `@main` at the op level after `select-kernels`, `lower-op-to-cutlass` and
`plan-memory` (every non-constant result has its `memory` offset; `@main` has
`arena_bytes`). Each op is launched by the first generator that supports it (the
`KernelGenerator` interface): CUTLASS instances, the fused attention, our depthwise conv
(op.conv2d chosen for it), our GEMM for few rows (op.gemm chosen for it), our conv for few input channels (op.conv2d
chosen for it), the data-movement kernels, then the compute kernels (whose plain GEMM/conv fallbacks are reported). An `op.reshape` whose result shares its input's offset is free.
The C ABI of the generated unit is in `templates/host.cu.j2`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda.codegen import (
    attention_kernels,
    compute_kernels,
    cutlass_kernels,
    data_kernels,
    tiled_families,
)
from boltir.backends.cuda.codegen.generator import CompileJob, KernelGenerator, render, unit_job
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.ir import find_entry
from boltir.weights import constant_array

PLAIN_CUDA_ARCH = "sm80"
"""Plain CUDA (our kernels, the host unit) compiles with the sm80 record's flags, which
emit SASS for sm_80 and sm_90, except in a Hopper build (`own_kernel_arch`)."""
ALIGNMENT = 256
MEMORY_ATTR = "memory"
ARENA_ATTR = "arena_bytes"


GENERATORS: tuple[KernelGenerator, ...] = (cutlass_kernels, attention_kernels, *tiled_families.GENERATORS, data_kernels,
                                         compute_kernels)
"""Each op is launched by the first generator that supports it: our tiled families (one
list, `tiled_families`) before the plain fallbacks."""

OWN_GENERATORS: tuple[KernelGenerator, ...] = (
    *(generator for generator in tiled_families.GENERATORS if generator.TILED.arch == PLAIN_CUDA_ARCH),
    data_kernels, compute_kernels)
"""The generators of plain-CUDA kernels (no CUTLASS), which compile for `own_kernel_arch`
(not the tiled families whose instances need sm_90, splitk_conv's clusters, halo_conv's
wgmma and wgsplit_gemm's TMA: those compile for their instances' arch)."""


def generator_of(op: Operation) -> KernelGenerator | None:
    """The generator that launches the op (the first in `GENERATORS` that supports it)."""
    return next((g for g in GENERATORS if g.supports(op)), None)


def instance_arch(generator: KernelGenerator | None, op: Operation) -> str | None:
    """The arch a CUTLASS or attention generator names for the op's unit (3.x: sm_90a);
    None for our own kernels, which follow the build (`own_kernel_arch`)."""
    kernel_arch = getattr(generator, "kernel_arch", None)
    return kernel_arch(op) if kernel_arch is not None and generator not in OWN_GENERATORS else None


def own_kernel_arch(entry_ops: Iterable[Operation]) -> str:
    """The arch our own kernels and the host unit compile for: "sm90" (sm_90a) in a Hopper
    build, one with a CUTLASS 3.x unit or an attention marked for Hopper, so that they take
    part in programmatic dependent launch (templates/boltir_pdl.h needs sm_90 code); else
    `PLAIN_CUDA_ARCH`."""
    if any(instance_arch(generator_of(op), op) == "sm90" for op in entry_ops):
        return "sm90"
    return PLAIN_CUDA_ARCH


@dataclass
class Step:
    op: Operation
    kernel: str
    family: str
    fallback: bool = False
    generation: str | None = None
    """"2.x" or "3.x" for a CUTLASS kernel."""


@dataclass
class Program:
    units: list[CompileJob]
    weights: bytes
    steps: list[Step]
    arena_bytes: int
    workspace_kernels: list[str]
    fallbacks: list[Step] = field(default_factory=list)


def _bytes(value: SSAValue) -> int:
    return int(np.prod(tensor_shape(value.type), dtype=np.int64)) * numpy_dtype(value.type.element_type).itemsize


def _offsets(op: Operation) -> list[int]:
    attr = op.attributes.get(MEMORY_ATTR)
    if attr is None:
        raise BoltError(f"'{op.name}' has no memory offset: run plan-memory before emitting the host program",
                        format_location(op.location))
    return [int(x) for x in attr.get_values()]


class _Pointers:
    """The C expression of each value's device address."""

    def __init__(self, entry: func.FuncOp):
        self.expressions: dict[SSAValue, str] = {}
        for index, arg in enumerate(entry.body.block.args):
            self.expressions[arg] = f"in[{index}]"

    def __getitem__(self, value: SSAValue | None) -> str:
        if value is None:
            return "nullptr"
        return self.expressions[value]


def launcher_declaration(name: str, pointers: int, ints: int, cutlass_abi: bool) -> str:
    """The C prototype of a launcher: its pointers (the output last), its problem integers,
    a workspace where it takes one (`cutlass_abi`), then the stream."""
    params = [f"const void *p{i}" for i in range(pointers - 1)] + ["void *out"]
    params += [f"int i{i}" for i in range(ints)]
    if cutlass_abi:
        params += ["void *workspace", "size_t workspace_bytes"]
    params.append("cudaStream_t stream")
    return f"int {name}({', '.join(params)})"


def build_program(module: ModuleOp) -> Program:
    """The model's host program, kernels and weights. A CUTLASS or attention unit compiles
    for its instance's arch; our own kernels and the host unit for `own_kernel_arch`."""
    entry = find_entry(module)
    builder = _ProgramBuilder(_Pointers(entry), own_kernel_arch(entry.body.block.ops))
    for op in entry.body.block.ops:
        if isinstance(op, func.ReturnOp):
            builder.outputs = [{"pointer": builder.pointers[v], "bytes": _bytes(v)} for v in op.operands]
        elif isinstance(op, ops.ConstantOp):
            builder.add_weight(op)
        else:
            builder.add_launch(op)
    arena_attr = entry.attributes.get(ARENA_ATTR)
    if arena_attr is None:
        raise BoltError("@main has no arena_bytes: run plan-memory before emitting the host program")
    return builder.finish(int(arena_attr.value.data))


class _ProgramBuilder:
    """Collects, op by op, the weights image, the launches and the translation units."""

    def __init__(self, pointers: _Pointers, arch: str):
        self.pointers = pointers
        self.arch = arch
        self.weights = bytearray()
        self.steps: list[Step] = []
        self.calls: list[dict] = []
        self.declarations: dict[str, str] = {}
        self.sources: dict[str, CompileJob] = {}
        self.workspace_queries: list[str] = []
        self.workspace_kernels: list[str] = []
        self.outputs: list[dict] = []

    def add_weight(self, op: ops.ConstantOp) -> None:
        array = np.ascontiguousarray(constant_array(op.value))
        offset = -(-len(self.weights) // ALIGNMENT) * ALIGNMENT
        self.weights.extend(b"\0" * (offset - len(self.weights)))
        self.weights.extend(array.tobytes())
        self.pointers.expressions[op.results[0]] = f"(W + {offset})"

    def add_launch(self, op: Operation) -> None:
        pointers = self.pointers
        for result, offset in zip(op.results, _offsets(op), strict=True):
            pointers.expressions[result] = f"(A + {offset})"
        if isinstance(op, ops.ReshapeOp) and pointers[op.operands[0]] == pointers[op.results[0]]:
            return  # aliased by plan-memory: no copy
        generator = generator_of(op)
        if generator is None:
            raise BoltError(f"no CUDA kernel computes '{op.name}'", format_location(op.location))
        arguments = generator.launch_arguments(op)
        name = arguments.name
        ptrs = [pointers[v] for v in arguments.operands]
        ints = [str(x) for x in arguments.problem]
        self.declarations[name] = launcher_declaration(name, len(ptrs), len(ints), arguments.workspace)
        if arguments.workspace:
            call = f"{name}({', '.join(ptrs + ints)}, ws, ws_bytes, stream)"
            self.declarations[name + "_ws"] = f"size_t {name}_workspace_size({', '.join('int' for _ in ints)})"
            self.workspace_queries.append(f"{name}_workspace_size({', '.join(ints)})")
            self.workspace_kernels.append(name)
        else:
            call = f"{name}({', '.join(ptrs)}, stream)"
        if name not in self.sources:
            arch = instance_arch(generator, op) or self.arch
            self.sources[name] = unit_job(name, generator, [op], arch)
        generation = None
        if generator is cutlass_kernels:
            generation = "3.x" if cutlass_kernels.kernel_arch(op) == "sm90" else "2.x"
        self.steps.append(Step(op, name, generator.FAMILIES[type(op)], generator.is_fallback(op), generation))
        self.calls.append({
            "call": call,
            "result": pointers[op.results[0]],
            "comment": f"{op.name} at {format_location(op.location) or '?'}",
        })

    def finish(self, arena_bytes: int) -> Program:
        source = render(
            "host.cu.j2",
            declarations=list(self.declarations.values()),
            steps=self.calls,
            outputs=self.outputs,
            arena_bytes=arena_bytes,
            weights_bytes=len(self.weights),
            workspace_queries=self.workspace_queries,
        )
        units = list(self.sources.values()) + [CompileJob("host", source, self.arch)]
        return Program(units, bytes(self.weights), self.steps, arena_bytes, self.workspace_kernels,
                       [s for s in self.steps if s.fallback])
