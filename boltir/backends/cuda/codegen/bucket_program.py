"""The host program of a bucketed model: one module per bucket (the same model lowered at
each bucket's shapes), one library, one weights image.

    program = build_bucketed_program([module_b1, module_b2, ...], labels)
    program.units          # every kernel instance once (buckets share them), + one host unit
    program.weights        # each distinct constant once
    program.buckets        # per bucket: its Steps and arena size

Requires: what `host_program.build_program` requires, of every module.
Each bucket keeps its own launches and memory plan; the buckets run one at a time, so
they share one arena of the largest plan's size and one workspace. A constant with the
same bytes in several buckets (every weight; a bucket's own shape-dependent constants
differ) is stored once. Kernels with the same name are the same instance (the
generators name them by their instance key), so each compiles once. The C ABI is in
`templates/host_buckets.cu.j2`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from boltir.backends.cuda.codegen.generator import CompileJob, render
from boltir.backends.cuda.codegen.host_program import (
    ALIGNMENT,
    ARENA_ATTR,
    PLAIN_CUDA_ARCH,
    Step,
    _bytes,
    _Pointers,
    _ProgramBuilder,
    own_kernel_arch,
)
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.ir import find_entry
from boltir.weights import constant_array


@dataclass
class BucketProgram:
    steps: list[Step]
    arena_bytes: int
    workspace_kernels: list[str]


@dataclass
class BucketedProgram:
    units: list[CompileJob]
    weights: bytes
    buckets: list[BucketProgram]

    @property
    def arena_bytes(self) -> int:
        return max(bucket.arena_bytes for bucket in self.buckets)


class _SharedState:
    """What the buckets' builders share: the weights image (deduplicated by content), the
    kernels' units and their declarations."""

    def __init__(self):
        self.weights = bytearray()
        self.offsets: dict[bytes, int] = {}
        self.sources: dict[str, CompileJob] = {}
        self.declarations: dict[str, str] = {}


class _BucketBuilder(_ProgramBuilder):
    def __init__(self, pointers: _Pointers, shared: _SharedState, arch: str):
        super().__init__(pointers, arch)
        self.shared = shared
        self.weights, self.declarations = shared.weights, shared.declarations

    def add_weight(self, op: ops.ConstantOp) -> None:
        array = np.ascontiguousarray(constant_array(op.value))
        data = array.tobytes()
        key = hashlib.sha256(data).digest()
        offset = self.shared.offsets.get(key)
        if offset is None:
            offset = -(-len(self.weights) // ALIGNMENT) * ALIGNMENT
            self.weights.extend(b"\0" * (offset - len(self.weights)) + data)
            self.shared.offsets[key] = offset
        self.pointers.expressions[op.results[0]] = f"(W + {offset})"

    def add_launch(self, op) -> None:
        super().add_launch(op)
        for name, job in self.sources.items():
            known = self.shared.sources.setdefault(name, job)
            if known.source != job.source or known.arch != job.arch:
                raise BoltError(f"two buckets have different kernels named {name} (a boltir bug)")
        self.sources.clear()


def _bucket_calls(module: ModuleOp, shared: _SharedState, arch: str) -> tuple[_BucketBuilder, int]:
    entry = find_entry(module)
    builder = _BucketBuilder(_Pointers(entry), shared, arch)
    for op in entry.body.block.ops:
        if isinstance(op, func.ReturnOp):
            builder.outputs = [{"pointer": builder.pointers[v], "bytes": _bytes(v)} for v in op.operands]
        else:
            (builder.add_weight if isinstance(op, ops.ConstantOp) else builder.add_launch)(op)
    if ARENA_ATTR not in entry.attributes:
        raise BoltError("@main has no arena_bytes: run plan-memory before emitting the host program")
    return builder, int(entry.attributes[ARENA_ATTR].value.data)


def build_bucketed_program(modules: Sequence[ModuleOp], labels: Sequence[str]) -> BucketedProgram:
    """One host program for the buckets' modules (`labels` name them in the source)."""
    shared = _SharedState()
    archs = {own_kernel_arch(find_entry(module).body.block.ops) for module in modules}
    arch = "sm90" if "sm90" in archs else PLAIN_CUDA_ARCH  # one arch for the kernels the buckets share
    built = [_bucket_calls(module, shared, arch) for module in modules]
    queries = list(dict.fromkeys(query for builder, _ in built for query in builder.workspace_queries))
    buckets = [{"label": label, "steps": builder.calls, "output_copies": builder.outputs,
                "inputs": len(find_entry(module).function_type.inputs), "outputs": len(builder.outputs)}
               for (builder, _), module, label in zip(built, modules, labels, strict=True)]
    source = render(
        "host_buckets.cu.j2",
        declarations=list(shared.declarations.values()),
        buckets=buckets,
        arena_bytes=max(arena for _, arena in built),
        weights_bytes=len(shared.weights),
        workspace_queries=queries,
        max_inputs=max(1, *(b["inputs"] for b in buckets)),
        max_outputs=max(1, *(b["outputs"] for b in buckets)),
    )
    units = [*shared.sources.values(), CompileJob("host", source, arch)]
    programs = [BucketProgram(builder.steps, arena, builder.workspace_kernels) for builder, arena in built]
    return BucketedProgram(units, bytes(shared.weights), programs)
