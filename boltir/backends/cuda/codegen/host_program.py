"""The host program of a whole model: `@main`'s ops, in order, as launches of their
kernels over one memory arena, plus the weights image and the list of translation units
that make the model's shared library.

    program = build_program(module)     # after plan-memory
    program.units                       # [CompileJob, ...]: every kernel instance + the host unit
    program.weights                     # bytes: every constant, 256-byte aligned
    program.steps                       # one Step per launch (op, kernel, family)

Requires: `@main` at the op level after `select-kernels`, `lower-op-to-cutlass` and
`plan-memory` (every non-constant result has its `memory` offset; `@main` has
`arena_bytes`). Each op is launched by the first backend that supports it: the CUTLASS
emitter, the data-movement kernels, then the compute kernels (whose plain GEMM/conv
fallbacks are reported). An `op.reshape` whose result shares its input's offset is free.
The C ABI of the generated unit is in `templates/host.cu.j2`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda import emitter
from boltir.backends.cuda.launch import launch_arguments
from boltir.backends.cuda.nvcc import CompileJob
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry
from boltir.weights import constant_array

ALIGNMENT = 256
MEMORY_ATTR = "memory"
ARENA_ATTR = "arena_bytes"


@cache
def _kernel_backends():
    """The non-CUTLASS kernel families, in the order they are asked."""
    from boltir.backends.cuda import compute_kernels, data_kernels

    return (data_kernels, compute_kernels)


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


def _declaration(name: str, pointers: int, ints: int, cutlass_abi: bool) -> str:
    params = [f"const void *p{i}" for i in range(pointers - 1)] + ["void *out"]
    params += [f"int i{i}" for i in range(ints)]
    if cutlass_abi:
        params += ["void *workspace", "size_t workspace_bytes"]
    params.append("cudaStream_t stream")
    return f"int {name}({', '.join(params)})"


def build_program(module: ModuleOp, arch: str = "sm80") -> Program:
    entry = find_entry(module)
    pointers = _Pointers(entry)
    weights = bytearray()
    steps: list[Step] = []
    calls: list[dict] = []
    declarations: dict[str, str] = {}
    sources: dict[str, CompileJob] = {}
    workspace_queries: list[str] = []
    workspace_kernels: list[str] = []
    outputs: list[dict] = []

    for op in entry.body.block.ops:
        if isinstance(op, func.ReturnOp):
            outputs = [{"pointer": pointers[v], "bytes": _bytes(v)} for v in op.operands]
            continue
        if isinstance(op, ops.ConstantOp):
            array = np.ascontiguousarray(constant_array(op.value))
            offset = -(-len(weights) // ALIGNMENT) * ALIGNMENT
            weights.extend(b"\0" * (offset - len(weights)))
            weights.extend(array.tobytes())
            pointers.expressions[op.results[0]] = f"(W + {offset})"
            continue
        offsets = _offsets(op)
        for result, offset in zip(op.results, offsets, strict=True):
            pointers.expressions[result] = f"(A + {offset})"
        if isinstance(op, ops.ReshapeOp) and pointers[op.operands[0]] == pointers[op.results[0]]:
            continue  # aliased by plan-memory: no copy
        if type(op) in emitter.FAMILIES:
            arguments = launch_arguments(op)
            instance = emitter.emit_instance(op)
            ptrs = [pointers[v] for v in arguments.operands]
            ints = [str(x) for x in arguments.problem]
            call = f"{arguments.name}({', '.join(ptrs + ints)}, ws, ws_bytes, stream)"
            declarations[arguments.name] = _declaration(arguments.name, len(ptrs), len(ints), True)
            declarations[arguments.name + "_ws"] = f"size_t {arguments.name}_workspace_size({', '.join('int' for _ in ints)})"
            workspace_queries.append(f"{arguments.name}_workspace_size({', '.join(ints)})")
            workspace_kernels.append(arguments.name)
            if arguments.name not in sources:
                sources[arguments.name] = CompileJob(arguments.name, emitter.emit_translation_unit([op]), emitter.kernel_arch(op))
            steps.append(Step(op, arguments.name, instance.family, generation="3.x" if instance.arch == "sm90" else "2.x"))
        else:
            backend = next((b for b in _kernel_backends() if b.supports(op)), None)
            if backend is None:
                raise BoltError(f"no CUDA kernel computes '{op.name}'", format_location(op.location))
            name = backend.kernel_name(op)
            operands = backend.launch_operands(op)
            ptrs = [pointers[v] for v in operands]
            call = f"{name}({', '.join(ptrs)}, stream)"
            declarations[name] = _declaration(name, len(ptrs), 0, False)
            if name not in sources:
                sources[name] = CompileJob(name, backend.emit_translation_unit([op]), arch)
            fallback = bool(getattr(backend, "is_fallback", lambda _: False)(op))
            steps.append(Step(op, name, backend.FAMILIES[type(op)], fallback))
        calls.append({
            "call": call,
            "result": pointers[op.results[0]],
            "comment": f"{op.name} at {format_location(op.location) or '?'}",
        })

    arena_attr = entry.attributes.get(ARENA_ATTR)
    if arena_attr is None:
        raise BoltError("@main has no arena_bytes: run plan-memory before emitting the host program")
    arena_bytes = int(arena_attr.value.data)
    source = emitter._environment().get_template("host.cu.j2").render(
        declarations=list(declarations.values()),
        steps=calls,
        outputs=outputs,
        arena_bytes=arena_bytes,
        weights_bytes=len(weights),
        workspace_queries=workspace_queries,
    )
    units = list(sources.values()) + [CompileJob("host", source, arch)]
    return Program(units, bytes(weights), steps, arena_bytes, workspace_kernels,
                   [s for s in steps if s.fallback])
