"""Compiling a whole model to a directory that `boltir.runtime.load` runs.

    boltir.compile("model.onnx", "out/", arch="sm90", dtype="f16")

writes `out/libmodel.so` (every kernel and the host program), `out/weights.bin`,
`out/manifest.json` (inputs, outputs, arch, dtype, pipeline, the kernel of every launch
with its roofline counts: flops, bytes, element) and `out/module.mlir` (the lowered IR
with weights elided, for the debugger).

The pipeline is the default op-level one (`boltir.pipelines.default_pipeline`) followed by
`backend_passes()`: kernel selection, the pools and output casts our kernels absorb, lowering
to CUTLASS instances and memory planning.
On sm90 the kernels are CUTLASS 3.x instances where one runs the op and 2.x ones
elsewhere (`cutlass=2`: all 2.x); `arch` also decides the op-level padding.

**A build never fails for one kernel.** Every unit compiles (keep-going). An op whose
CUTLASS instance nvcc rejects is lowered again from the op-level module kept just before
`lower-op-to-cutlass`, without its kernel choice, so that it runs on the plain fallback
kernel (`compute_kernels`); the passes from `lower-op-to-cutlass` on run again and only
the new units compile (the object cache has the rest). Each such op gets one warning
line on stderr, a `compile_fallback` entry on its launch in the manifest, and a
`CompileFallback` in `CompileResult.compile_fallbacks`. A data or compute kernel, or the
host unit, that does not compile is a boltir bug: one BoltError, as before.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp, NameLoc, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from boltir.backends.cuda.codegen.host_program import GENERATORS, Program, build_program
from boltir.backends.cuda.passes.lower_op_to_cutlass import FAMILIES_OF
from boltir.backends.cuda.roofline import (
    RooflineRow,
    conv_channels,
    gemm_problem,
    launch_cost,
    launch_element,
    module_roofline,
)
from boltir.backends.cuda.select.choice import KERNEL_ATTR
from boltir.backends.cuda.toolchain.nvcc import (
    CompileFailure,
    compile_error,
    compile_objects_keep_going,
    link_shared_library,
)
from boltir.backends.cuda.tune.selectors import local_shipped_gpu
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dtypes import element_type_name
from boltir.frontends.onnx import import_model
from boltir.ir import find_entry, input_names, make_context, output_names, print_module
from boltir.manifest import manifest_entries
from boltir.passes import statistics
from boltir.passes.convert_precision import ConvertPrecisionPass
from boltir.pipelines import (
    available_passes,
    default_pipeline,
    parse_pipeline_spec,
    run_passes,
)
from boltir.target import get_target
from boltir.version import __version__

LOWERING_PASS = "lower-op-to-cutlass"
"""The pass before which the op-level module is kept, for re-lowering an op whose CUTLASS
instance does not compile."""

LOWERABLE = tuple(FAMILIES_OF)
"""The op-level ops lower-op-to-cutlass turns into template instances."""


def backend_passes(arch: str = "sm90", cutlass: int = 3, selector: str = "db", tuning_db: str = "",
                   gpu: str | None = None) -> list[str]:
    """Kernel selection for `arch` (3.x instances on sm90 unless `cutlass` = 2) by
    `selector` (db: the tuning database, then the heuristic; tune: measure what the
    database lacks first; heuristic), after fusing depthwise convs with the 1×1 convs around
    them where one wave of our kernel computes them; the pools, image blockings and output
    casts our kernels absorb, lowering to CUTLASS instances, memory planning.
    `gpu` names the GPU whose records to take (None: this machine's GPU where boltir ships
    tuning data for it, so that a build there uses that data where the user's database
    has no record; "": records of any GPU, no shipped data)."""
    sms = get_target(arch).multiprocessors
    database = f' tuning_db="{tuning_db}"' if tuning_db and selector != "heuristic" else ""
    if gpu is None:
        gpu = local_shipped_gpu() if selector == "db" else ""
    database += f' gpu="{gpu}"' if gpu and selector != "heuristic" else ""
    # MobileNet's inverted residuals in one launch where the grid is one wave (batch 1)
    return [f"fuse-depthwise-pointwise{{expand=true sms={sms}}}",
            f"select-kernels{{selector={selector} arch={arch} sms={sms} cutlass={cutlass}{database}}}", "fuse-conv-pool",
            "fuse-conv-space-to-depth", "fuse-output-cast", LOWERING_PASS, "plan-memory"]


def full_pipeline(*, dtype: str = "f16", arch: str = "sm90", cutlass: int = 3, selector: str = "db", tuning_db: str = "",
                  keep_f32: Sequence[str] = ()) -> str:
    return ",".join([default_pipeline(dtype=dtype, arch=arch, keep_f32=keep_f32),
                     *backend_passes(arch, cutlass, selector, tuning_db)])


def tuning_summary(collected) -> dict:
    """The manifest's `tuning` entry: how many kernels came from measurements (the tuning
    database) and how many from the heuristic alone."""
    from_db = sum(collected.get("select-kernels", f"kernels from the {source}") for source in
                  ("tuning database", "shipped tuning data")) if collected else 0
    heuristic = collected.get("select-kernels", "kernels from the heuristic") if collected else 0
    total = from_db + heuristic
    state = "untuned" if from_db == 0 else "tuned" if heuristic == 0 else "partly tuned"
    return {"state": state, "kernels_from_database": from_db, "kernels_from_heuristic": heuristic if total else None}


@dataclass(eq=False)
class CompileFallback:
    """An op whose CUTLASS instance nvcc rejected, and the plain kernel it runs on instead."""

    op: str
    """The op-level op, e.g. op.conv2d."""
    instance: str
    """The CUTLASS instance (kernel) that did not compile."""
    error: str
    """nvcc's first error line."""
    log: Path | None
    """nvcc's full output."""
    location: str = "?"
    """The op's source location, else its launch's index in the manifest."""
    replacement: str = ""
    """The plain kernel that runs the op."""

    def warning(self) -> str:
        return (f"warning: {self.op} at {self.location}: CUTLASS instance {self.instance} did not compile "
                f"({self.error}); using the plain fallback kernel {self.replacement} (correct, not fast)")


@dataclass
class CompileResult:
    directory: Path
    manifest: dict
    fallbacks: list[str]
    statistics: object = None
    compile_fallbacks: list[CompileFallback] = field(default_factory=list)
    """The ops that run on a plain kernel because their CUTLASS instance did not compile."""


# ---------------------------------------------------------------------- lowering


@dataclass
class LoweredModel:
    """A model through the pipeline, with what re-lowering one of its ops needs."""

    module: ModuleOp
    pipeline: str
    selected: ModuleOp | None
    """The module just before lower-op-to-cutlass (op level, kernels chosen); None when the
    pipeline does not run that pass."""
    lowering_passes: list[ModulePass]
    """The passes from lower-op-to-cutlass on."""
    before: statistics.PassStatistics
    """The statistics of the passes before lower-op-to-cutlass."""
    after: statistics.PassStatistics
    """The statistics of `lowering_passes`, for `module`."""

    @property
    def statistics(self) -> statistics.PassStatistics:
        return merged_statistics(self.before, self.after)


def merged_statistics(*parts: statistics.PassStatistics) -> statistics.PassStatistics:
    """One report of several runs' statistics, in the order they ran."""
    merged = statistics.PassStatistics()
    for part in parts:
        for name, counter in part.counters.items():
            merged.counters.setdefault(name, Counter()).update(counter)
            merged.notes.setdefault(name, []).extend(part.notes.get(name, []))
    return merged


def lower(model, *, arch: str, dtype: str, input_shapes: Mapping[str, Sequence[int]] | None = None,
          pipeline: str | None = None, plugins: Sequence[str] = (), cutlass: int = 3, selector: str = "db",
          tuning_db: str = "", keep_f32: Sequence[str] = ()) -> LoweredModel:
    """Imports (an ONNX path, a ModelProto or a graph-level ModuleOp) and runs the pipeline,
    keeping a copy of the module as lower-op-to-cutlass finds it. `keep_f32` names ops
    that stay f32 (convert-precision's keep_f32; with `pipeline`, write it there)."""
    if pipeline and keep_f32:
        raise BoltError("keep_f32 adds to the default pipeline; with a pipeline of your own, "
                        "give convert-precision{keep_f32=...} in it")
    pipeline = pipeline or full_pipeline(dtype=dtype, arch=arch, cutlass=cutlass, selector=selector, tuning_db=tuning_db,
                                         keep_f32=keep_f32)
    passes = parse_pipeline_spec(pipeline, available_passes(plugins))
    module = model if isinstance(model, ModuleOp) else import_model(model, input_shapes)
    split = next((i for i, p in enumerate(passes) if p.name == LOWERING_PASS), len(passes))
    ctx = make_context()
    with statistics.collecting() as before:
        run_passes(module, passes[:split], ctx)
    check_kept_ops_have_kernels(module, passes)
    selected = module.clone() if split < len(passes) else None
    with statistics.collecting() as after:
        if selected is not None:
            run_passes(module, passes[split:], ctx)
    return LoweredModel(module, pipeline, selected, passes[split:], before, after)


def lower_model(model, *, arch: str, dtype: str, input_shapes: Mapping[str, Sequence[int]] | None = None,
                pipeline: str | None = None, plugins: Sequence[str] = (), cutlass: int = 3, selector: str = "db",
                tuning_db: str = "", keep_f32: Sequence[str] = ()) -> tuple[ModuleOp, str, object]:
    """Imports (an ONNX path, a ModelProto or a graph-level ModuleOp) and runs the pipeline;
    returns the module, the pipeline string and the pass statistics."""
    lowered = lower(model, arch=arch, dtype=dtype, input_shapes=input_shapes, pipeline=pipeline, plugins=plugins,
                    cutlass=cutlass, selector=selector, tuning_db=tuning_db, keep_f32=keep_f32)
    return lowered.module, lowered.pipeline, lowered.statistics


def check_kept_ops_have_kernels(module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    """keep-f32: a one-line error for an op kept in f32 that no kernel computes in f32,
    at the op level, before the CUDA target meets it."""
    names = {name for p in passes if isinstance(p, ConvertPrecisionPass) for name in p.keep_f32}
    if not names:
        return
    for op in module.walk():
        kept = isinstance(op.location, NameLoc) and op.location.desc.data in names and not isinstance(op, ops.ConstantOp)
        tensors = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        if not kept or not any(element_type_name(t.element_type) == "f32" for t in tensors):
            continue
        if not any(generator.supports(op) for generator in GENERATORS):
            reasons = [g.unsupported_reason(op) for g in GENERATORS if type(op) in g.FAMILIES]
            reason = next((r for r in reasons if r), "no kernel family computes it")
            raise BoltError(f"keep-f32: op '{op.location.desc.data}' ({op.name}) cannot run in f32: {reason}")


def lowering_targets(module: ModuleOp) -> list[Operation]:
    """The ops lower-op-to-cutlass turns into template instances, and the instances: in the
    same order before and after the pass (each op becomes one instance or stays)."""
    return [op for op in module.walk() if isinstance(op, (cutlass.TemplateOp, *LOWERABLE))]


def relower(lowered: LoweredModel, demoted: Collection[int]) -> LoweredModel:
    """`lowered` again from its op-level module, with the lowering targets numbered in
    `demoted` left without a kernel choice: they run on plain fallback kernels."""
    module = lowered.selected.clone()
    targets = lowering_targets(module)
    for index in demoted:
        targets[index].attributes.pop(KERNEL_ATTR, None)
    with statistics.collecting() as after:
        run_passes(module, lowered.lowering_passes, make_context())
    return LoweredModel(module, lowered.pipeline, lowered.selected, lowered.lowering_passes, lowered.before, after)


def target_indices(lowered: LoweredModel) -> dict[Operation, int] | None:
    """Each lowering target of the lowered module: its index among the op-level module's
    targets; None where they do not pair up (a pipeline with passes that add or move them)."""
    if lowered.selected is None:
        return None
    targets, originals = lowering_targets(lowered.module), lowering_targets(lowered.selected)
    if len(targets) != len(originals) or any(a.location != b.location for a, b in zip(targets, originals)):
        return None
    return {op: index for index, op in enumerate(targets)}


# -------------------------------------------------------------- building the library


@dataclass
class BuiltModel:
    """A lowered model whose every unit compiled."""

    lowered: LoweredModel
    program: Program
    objects: list[Path]
    launch_fallbacks: list[CompileFallback | None]
    """For each of `program.steps`: why its op runs on a plain kernel, if it does."""

    @property
    def compile_fallbacks(self) -> list[CompileFallback]:
        """Every op on a plain kernel because its CUTLASS instance did not compile, in launch order."""
        return list(dict.fromkeys(f for f in self.launch_fallbacks if f is not None))


def build_model(lowered: LoweredModel, program: Program, *, progress=True, warn=True) -> BuiltModel:
    """Compiles the program's units; an op whose CUTLASS instance does not compile is
    lowered again onto its plain fallback kernel (warned on stderr), until every unit compiles."""
    demoted: dict[int, CompileFallback] = {}
    while True:
        objects, failures = compile_objects_keep_going(program.units, progress=progress)
        if not failures:
            indices = target_indices(lowered) or {}
            launches = [demoted.get(indices.get(step.op)) for step in program.steps]
            return BuiltModel(lowered, program, objects, launches)
        demoted.update(demotions(lowered, program, failures, demoted))
        lowered = relower(lowered, demoted)
        program = build_program(lowered.module)
        announce_replacements(lowered, program, demoted, warn)


def demotions(lowered: LoweredModel, program: Program, failures: list[CompileFailure],
              demoted: Mapping[int, CompileFallback]) -> dict[int, CompileFallback]:
    """{lowering target index: why} for every op whose CUTLASS unit failed; one BoltError
    if another unit failed, or if the ops cannot be lowered again."""
    instances = {step.kernel for step in program.steps if step.generation}
    indices = target_indices(lowered)
    if indices is None or any(failure.job.name not in instances for failure in failures):
        failures = sorted(failures, key=lambda failure: failure.job.name in instances)  # boltir's own bugs first
        raise compile_error(failures)
    reasons = {failure.job.name: failure for failure in failures}
    originals = lowering_targets(lowered.selected)
    found: dict[int, CompileFallback] = {}
    for step in program.steps:
        failure = reasons.get(step.kernel)
        if failure is None or not step.generation:
            continue
        index = indices[step.op]
        original = originals[index]
        if index in demoted or not isinstance(original, LOWERABLE):
            raise compile_error(failures)  # not an op-level op: nothing to fall back to
        found[index] = CompileFallback(original.name, step.kernel, failure.first_error, failure.log_path)
    return found


def announce_replacements(lowered: LoweredModel, program: Program, demoted: Mapping[int, CompileFallback],
                          warn: bool) -> None:
    """Names the kernel each newly demoted op runs on, and warns once per op."""
    indices = target_indices(lowered) or {}
    for launch, step in enumerate(program.steps):
        record = demoted.get(indices.get(step.op))
        if record is None or record.replacement:
            continue
        record.replacement = step.kernel
        record.location = format_location(step.op.location) or f"launch {launch}"
        if warn:
            sys.stderr.write(record.warning() + "\n")


# ------------------------------------------------------------------------ compile


def compile(model, output_dir: str | os.PathLike, *, arch: str = "sm90", dtype: str = "f16",
            input_shapes: Mapping[str, Sequence[int]] | None = None, pipeline: str | None = None,
            plugins: Sequence[str] = (), progress: bool = True, cutlass: int = 3, tune: bool = False,
            tuning_db: str | os.PathLike = "", warn: bool = True, keep_f32: Sequence[str] = ()) -> CompileResult:
    """Compiles `model` into `output_dir` (created if missing); see the module docstring.
    Kernels come from the tuning database (`tuning_db`, default ~/.cache/boltir/tuning.sqlite)
    where it has them and from the heuristic elsewhere; `tune` first measures the missing
    ones on this machine's GPU. `warn`: write a line on stderr for each op whose CUTLASS
    instance did not compile. `keep_f32`: the names of ops (ONNX node names) that compute
    in f32 in an f16/bf16 model."""
    lowered = lower(model, arch=arch, dtype=dtype, input_shapes=input_shapes, pipeline=pipeline, plugins=plugins,
                    cutlass=cutlass, selector="tune" if tune else "db", tuning_db=str(tuning_db or ""),
                    keep_f32=keep_f32)
    program = build_program(lowered.module)
    directory = Path(output_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BoltError(f"cannot create the output directory '{directory}': {error.strerror}") from error
    built = build_model(lowered, program, progress=progress, warn=warn)
    program, module = built.program, built.lowered.module
    link_shared_library(list(dict.fromkeys(built.objects)), directory / "libmodel.so")  # each object once
    (directory / "weights.bin").write_bytes(program.weights)
    (directory / "module.mlir").write_text(print_module(module, elide_weights=True))
    collected = built.lowered.statistics
    manifest = build_manifest(built, arch=arch, dtype=dtype, collected=collected)
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    fallbacks = [f"{s.op.name} ({s.family})" for s in program.fallbacks]
    return CompileResult(directory, manifest, fallbacks, collected, built.compile_fallbacks)


def build_manifest(built: BuiltModel, *, arch: str, dtype: str, collected) -> dict:
    """manifest.json: what `boltir.runtime.load` needs, and how the library was built."""
    program, entry = built.program, find_entry(built.lowered.module)
    launches = []
    for step, compile_fallback in zip(program.steps, built.launch_fallbacks, strict=True):
        cost = launch_cost(step.op)
        launch = {"op": step.op.name, "kernel": step.kernel, "family": step.family, "fallback": step.fallback,
                  **({"cutlass": step.generation} if step.generation else {}),
                  # the roofline's counts: the runtime's profile sets each launch against its bound
                  "flops": cost.flops, "bytes": cost.bytes, "element": launch_element(step.op)}
        if (channels := conv_channels(step.op)) is not None:
            launch["conv"] = {"in": channels[0], "out": channels[1], "depthwise": channels[2]}
        if (gemm := gemm_problem(step.op)) is not None:
            launch["gemm"] = gemm
        if compile_fallback is not None:
            launch["compile_fallback"] = {"instance": compile_fallback.instance, "error": compile_fallback.error}
        launches.append(launch)
    return {
        "boltir": __version__,
        "arch": arch,
        "cutlass": sorted({step.generation for step in program.steps if step.generation}),
        "dtype": dtype,
        "pipeline": built.lowered.pipeline,
        "tuning": tuning_summary(collected),
        "library": "libmodel.so",
        "weights": "weights.bin",
        "module": "module.mlir",
        "inputs": manifest_entries(input_names(entry), entry.function_type.inputs),
        "outputs": manifest_entries(output_names(entry), entry.function_type.outputs),
        "arena_bytes": program.arena_bytes,
        "weights_bytes": len(program.weights),
        "launches": launches,
        "compile_fallbacks": len(built.compile_fallbacks),
    }


# ----------------------------------------------------------------------- roofline


def roofline(model, *, arch: str = "sm90", dtype: str = "f16", input_shapes: Mapping[str, Sequence[int]] | None = None,
             pipeline: str | None = None, plugins: Sequence[str] = (), cutlass: int = 3,
             tuning_db: str | os.PathLike = "") -> list[RooflineRow]:
    """Each launch of `model` compiled for `arch`: its FLOPs, bytes and bound time
    (`boltir.backends.cuda.roofline`). Runs the pipeline and builds the host program, but
    compiles nothing: it needs neither a GPU nor nvcc."""
    target = get_target(arch)
    lowered = lower(model, arch=arch, dtype=dtype, input_shapes=input_shapes, pipeline=pipeline, plugins=plugins,
                    cutlass=cutlass, tuning_db=str(tuning_db or ""))
    return module_roofline(lowered.module, target)


def warn_fallbacks(result: CompileResult, stream=None) -> None:
    """One line naming the ops on plain fallback kernels (to stderr unless `stream`)."""
    if result.fallbacks:
        (stream or sys.stderr).write(
            f"warning: {len(result.fallbacks)} op(s) run on plain fallback kernels (correct, not fast): "
            + ", ".join(result.fallbacks) + "\n"
        )
