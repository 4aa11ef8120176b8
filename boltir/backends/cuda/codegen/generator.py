"""What every kernel generator shares: the one jinja environment over `templates/`, the
`Instance` a generator emits, the `CompileJob` (a translation unit for nvcc) and the
`KernelGenerator` interface the host program builds on.

Three generators implement `KernelGenerator`: `cutlass_kernels` (the `cutlass` dialect's
template instances), `data_kernels` (data movement and elementwise regions) and
`compute_kernels` (pooling, softmax, normalization, reductions and the plain fallbacks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import jinja2
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from boltir.diagnostics import BoltError
from boltir.dialects.common import python_value
from boltir.target import TARGETS, get_target

TEMPLATES = Path(__file__).parent / "templates"
"""The jinja2 templates: CUTLASS instances at the top, `data/` and `compute/` kernels below."""

NVCC_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr")
"""Without -DNDEBUG device asserts serialize wgmma; without --expt-relaxed-constexpr
CUTLASS prints hundreds of warnings."""

SHARED_OBJECT_FLAGS = ("-Xcompiler", "-fPIC")
"""Every object goes into a shared library."""


@cache
def environment() -> jinja2.Environment:
    """The jinja environment every generator renders with (strict: an undefined name fails)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(template_name: str, /, **context) -> str:
    return environment().get_template(template_name).render(**context)


def header_text(name: str) -> str:
    """A header under `templates/`, to paste into a unit (so it needs no extra include path)."""
    return (TEMPLATES / name).read_text().replace("#pragma once\n", "")


@dataclass(frozen=True)
class Instance:
    """One kernel of a translation unit: its launcher's name, the key that identifies it,
    its family, its source and the arch it is compiled for."""

    name: str
    key: str
    family: str
    source: str
    arch: str = "sm80"


@dataclass(frozen=True)
class CompileJob:
    """One translation unit to compile: `name` (the kernel, used in messages and log
    names; not part of the cache key), the CUDA `source` text, the kernel `arch` ("sm80"
    for CUTLASS 2.x and plain CUDA, "sm90" for 3.x) and flags added after boltir's own."""

    name: str
    source: str
    arch: str
    extra_flags: tuple[str, ...] = ()

    def __post_init__(self):
        if self.arch not in TARGETS:
            raise BoltError(f"kernel '{self.name}': unknown arch '{self.arch}'; expected one of {', '.join(TARGETS)}")
        # a list passed as extra_flags would make the job unhashable
        object.__setattr__(self, "extra_flags", tuple(self.extra_flags))

    @property
    def flags(self) -> tuple[str, ...]:
        """nvcc's flags for this job, without the include paths and file names."""
        target = get_target(self.arch)
        return NVCC_FLAGS + target.nvcc_arch_flags + target.nvcc_defines + SHARED_OBJECT_FLAGS + self.extra_flags

    @property
    def memory_bytes(self) -> int:
        return get_target(self.arch).compile_memory_bytes


@dataclass(frozen=True)
class LaunchArguments:
    """A launcher's name, its pointer operands in ABI order (None where the op has no such
    operand; the output last), the integers that follow the pointers, and whether the
    launcher then takes a workspace (CUTLASS launchers do; the others take the stream alone)."""

    name: str
    operands: tuple[SSAValue | None, ...]
    problem: tuple[int, ...] = ()
    workspace: bool = False


class KernelGenerator(Protocol):
    """A module that turns ops into CUDA kernels with `extern "C"` launchers.

    `FAMILIES` maps the op classes it handles to family names; `supports(op)` says whether
    it has a kernel for this op (`unsupported_reason(op)` says why not); `kernel_name(op)`
    is the launcher's name (ops with one instance key share it); `launch_arguments(op)` what
    its launcher takes; `is_fallback(op)` whether that kernel is a plain, slow stand-in;
    `emit_translation_unit(ops)` the source of every distinct instance among the ops."""

    FAMILIES: dict[type, str]

    def supports(self, op: Operation) -> bool: ...

    def unsupported_reason(self, op: Operation) -> str | None: ...

    def kernel_name(self, op: Operation) -> str: ...

    def launch_arguments(self, op: Operation) -> LaunchArguments: ...

    def is_fallback(self, op: Operation) -> bool: ...

    def emit_instance(self, op: Operation) -> Instance: ...

    def emit_translation_unit(self, module_or_ops: ModuleOp | Iterable[Operation]) -> str: ...

    # Optional: `unit_flags(ops)`, nvcc flags the unit of these ops needs after boltir's own
    # (`unit_job` reads it; a generator without it needs none).


def unit_job(name: str, generator: KernelGenerator, op_list: list[Operation], arch: str) -> CompileJob:
    """The CompileJob of `generator`'s unit for `op_list`, with the flags it asks for."""
    flags = getattr(generator, "unit_flags", None)
    return CompileJob(name, generator.emit_translation_unit(op_list), arch, flags(op_list) if flags is not None else ())


KERNEL_ATTR = "kernel"
"""An op's kernel choice, as select-kernels writes it (select/choice.py's KERNEL_ATTR, read
here as a plain dictionary: this layer sits below the selection)."""


def chosen_threadblock(op: Operation, family: str, meaning: str) -> tuple[int, int, int] | str:
    """The three integers of the op's kernel choice for one of our own kernel families
    (depthwise_direct, skinny_gemm, stem_conv keep their tile there), or why it has none;
    `meaning` names the three in that message."""
    attr = op.attributes.get(KERNEL_ATTR)
    chosen = attr.data.get("family") if isinstance(attr, DictionaryAttr) else None
    if not isinstance(chosen, StringAttr) or chosen.data != family:
        return f"the op has no {family} kernel choice"
    threadblock = python_value(attr.data.get("threadblock"))
    if not (isinstance(threadblock, tuple) and len(threadblock) == 3 and all(type(v) is int for v in threadblock)):
        return f"the {family} choice's threadblock must be 3 integers ({meaning})"
    return threadblock
