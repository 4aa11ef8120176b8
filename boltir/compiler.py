"""Compiling a whole model to a directory that `boltir.runtime.load` runs.

    boltir.compile("model.onnx", "out/", arch="sm90", dtype="f16")

writes `out/libmodel.so` (every kernel and the host program), `out/weights.bin`,
`out/manifest.json` (inputs, outputs, arch, dtype, pipeline, the kernel of every launch)
and `out/module.mlir` (the lowered IR with weights elided, for the debugger).

The pipeline is the default op-level one (`boltir.pipelines.default_pipeline`) followed by
`backend_passes()`: kernel selection, lowering to CUTLASS instances and memory planning.
On sm90 the kernels are CUTLASS 3.x instances where one runs the op and 2.x ones
elsewhere (`cutlass=2`: all 2.x); `arch` also decides the op-level padding.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from boltir.ir import find_entry, input_names, make_context, output_names, print_module
from boltir.manifest import manifest_entries
from boltir.passes import statistics
from boltir.pipelines import (
    available_passes,
    default_pipeline,
    parse_pipeline_spec,
    run_passes,
)
from boltir.target import get_target
from boltir.version import __version__


def backend_passes(arch: str = "sm90", cutlass: int = 3, selector: str = "db", tuning_db: str = "") -> list[str]:
    """Kernel selection for `arch` (3.x instances on sm90 unless `cutlass` = 2) by
    `selector` (db: the tuning database, then the heuristic; tune: measure what the
    database lacks first; heuristic), lowering to CUTLASS instances, memory planning."""
    sms = get_target(arch).multiprocessors
    database = f' tuning_db="{tuning_db}"' if tuning_db and selector != "heuristic" else ""
    return [f"select-kernels{{selector={selector} arch={arch} sms={sms} cutlass={cutlass}{database}}}", "lower-op-to-cutlass",
            "plan-memory"]


def full_pipeline(*, dtype: str = "f16", arch: str = "sm90", cutlass: int = 3, selector: str = "db", tuning_db: str = "") -> str:
    return ",".join([default_pipeline(dtype=dtype, arch=arch), *backend_passes(arch, cutlass, selector, tuning_db)])


def tuning_summary(collected) -> dict:
    """The manifest's `tuning` entry: how many kernels came from measurements (the tuning
    database) and how many from the heuristic alone."""
    from_db = collected.get("select-kernels", "kernels from the tuning database") if collected else 0
    heuristic = collected.get("select-kernels", "kernels from the heuristic") if collected else 0
    total = from_db + heuristic
    state = "untuned" if from_db == 0 else "tuned" if heuristic == 0 else "partly tuned"
    return {"state": state, "kernels_from_database": from_db, "kernels_from_heuristic": heuristic if total else None}


@dataclass
class CompileResult:
    directory: Path
    manifest: dict
    fallbacks: list[str]
    statistics: object = None


def lower_model(model, *, arch: str, dtype: str, input_shapes: Mapping[str, Sequence[int]] | None = None,
                pipeline: str | None = None, plugins: Sequence[str] = (), cutlass: int = 3, selector: str = "db",
                tuning_db: str = "") -> tuple[ModuleOp, str, object]:
    """Imports (an ONNX path, a ModelProto or a graph-level ModuleOp) and runs the pipeline;
    returns the module, the pipeline string and the pass statistics."""
    pipeline = pipeline or full_pipeline(dtype=dtype, arch=arch, cutlass=cutlass, selector=selector, tuning_db=tuning_db)
    passes = parse_pipeline_spec(pipeline, available_passes(plugins))
    module = model if isinstance(model, ModuleOp) else import_model(model, input_shapes)
    with statistics.collecting() as collected:
        run_passes(module, passes, make_context())
    return module, pipeline, collected


def compile(model, output_dir: str | os.PathLike, *, arch: str = "sm90", dtype: str = "f16",
            input_shapes: Mapping[str, Sequence[int]] | None = None, pipeline: str | None = None,
            plugins: Sequence[str] = (), progress: bool = True, cutlass: int = 3, tune: bool = False,
            tuning_db: str | os.PathLike = "") -> CompileResult:
    """Compiles `model` into `output_dir` (created if missing); see the module docstring.
    Kernels come from the tuning database (`tuning_db`, default ~/.cache/boltir/tuning.sqlite)
    where it has them and from the heuristic elsewhere; `tune` first measures the missing
    ones on this machine's GPU."""
    module, pipeline, collected = lower_model(model, arch=arch, dtype=dtype, input_shapes=input_shapes,
                                              pipeline=pipeline, plugins=plugins, cutlass=cutlass,
                                              selector="tune" if tune else "db", tuning_db=str(tuning_db or ""))
    program = build_program(module)
    directory = Path(output_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BoltError(f"cannot create the output directory '{directory}': {error.strerror}") from error
    build_shared_library(program.units, directory / "libmodel.so", progress=progress)
    (directory / "weights.bin").write_bytes(program.weights)
    (directory / "module.mlir").write_text(print_module(module, elide_weights=True))
    entry = find_entry(module)
    manifest = {
        "boltir": __version__,
        "arch": arch,
        "cutlass": sorted({step.generation for step in program.steps if step.generation}),
        "dtype": dtype,
        "pipeline": pipeline,
        "tuning": tuning_summary(collected),
        "library": "libmodel.so",
        "weights": "weights.bin",
        "module": "module.mlir",
        "inputs": manifest_entries(input_names(entry), entry.function_type.inputs),
        "outputs": manifest_entries(output_names(entry), entry.function_type.outputs),
        "arena_bytes": program.arena_bytes,
        "weights_bytes": len(program.weights),
        "launches": [
            {"op": step.op.name, "kernel": step.kernel, "family": step.family, "fallback": step.fallback,
             **({"cutlass": step.generation} if step.generation else {})}
            for step in program.steps
        ],
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    fallbacks = [f"{s.op.name} ({s.family})" for s in program.fallbacks]
    return CompileResult(directory, manifest, fallbacks, collected)


def warn_fallbacks(result: CompileResult, stream=sys.stderr) -> None:
    if result.fallbacks:
        stream.write(
            f"warning: {len(result.fallbacks)} op(s) run on plain fallback kernels (correct, not fast): "
            + ", ".join(result.fallbacks) + "\n"
        )
