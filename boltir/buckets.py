"""Compiling a model for ranges of input sizes (dynamic shapes), one bucket per size.

    boltir.buckets.compile_buckets("resnet50.onnx", "out/", input_shapes={"data": ((1, 64), 3, 224, 224)})
    boltir.buckets.compile_buckets("bert.onnx", "out/", input_shapes={"input_ids": (8, (32, 512))},
                                   buckets={"input_ids:1": (32, 64, 128, 256, 512)})
    boltc model.onnx -o out/ --input-shape data=1..64x3x224x224 [--buckets data:0=1,2,4,8,16,32,64]

The interface (ranges, buckets, symbols, errors) is `boltir.shape_ranges`. Shapes stay
static per bucket: the model is imported at each bucket's shapes and lowered through the
same pipeline, so each bucket gets the kernels (and tuning-database entries) its own
shapes want. Between the graph-level passes and lower-graph-to-op, the `bucket_axes`
analysis follows the bucketed axes to the outputs and refuses a model that mixes
positions along one (naming the op); attentions whose keys are padded get the
`mask-padded-keys` pass, which feeds them `key_lengths`.

One directory holds every bucket: `libmodel.so` (each distinct kernel instance compiled
once, shared by the buckets that want it, and one host program with an entry point per
bucket), `weights.bin` (each constant once), `module_b<i>.mlir` per bucket and
`manifest.json`, whose `"buckets"` list gives each bucket's sizes, `"inputs"` (name ->
shape), outputs, launches and arena; `boltir.runtime.load` returns a `BucketedModel`
that runs a call on the smallest bucket that holds it.

For the torch.compile backend (dynamic=True): `compile_buckets` takes, in place of an
ONNX model, a function `shapes -> graph-level ModuleOp` that imports the model at the
given input shapes (torch.export at example inputs of those shapes, say); dynamo's
ranges are open-ended, so the backend gives `input_shapes` a maximum of its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from boltir import compiler
from boltir.backends.cuda.codegen.bucket_program import build_bucketed_program
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.toolchain.nvcc import (
    compile_objects,
    compile_objects_keep_going,
    link_shared_library,
)
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import run as interpret
from boltir.ir import find_entry, input_names, make_context, print_module
from boltir.passes import statistics
from boltir.passes.bucket_axes import BucketAxes, bucket_axes
from boltir.passes.mask_padded_keys import KEY_LENGTHS_INPUT, PADDED_KEYS_ATTR
from boltir.pipelines import available_passes, parse_pipeline_spec, pipeline_steps, run_passes
from boltir.shape_ranges import (
    Bucket,
    BucketPlan,
    bucket_inputs,
    bucket_plan,
    output_cut,
    slice_to,
)

LOWER_TO_OP = "lower-graph-to-op"

Importer = Callable[[Mapping[str, tuple[int, ...]]], ModuleOp]
"""Imports the model at the given input shapes, to a graph-level module."""


@dataclass
class LoweredBucket:
    bucket: Bucket
    lowered: compiler.LoweredModel
    axes: BucketAxes
    key_symbol: int | None
    """The symbol whose call size fills `key_lengths`; None when no keys are padded."""


@dataclass
class BucketedLowering:
    plan: BucketPlan
    buckets: list[LoweredBucket]


def split_pipeline(pipeline: str) -> tuple[str, str]:
    """(the passes before lower-graph-to-op, the passes after it), split at top-level commas."""
    items = pipeline_steps(pipeline)
    if LOWER_TO_OP not in items:
        raise BoltError(f"a bucketed build runs its analysis before {LOWER_TO_OP}, and the pipeline has no {LOWER_TO_OP}")
    split = items.index(LOWER_TO_OP)
    return ",".join(items[:split]), ",".join(items[split + 1:])


def _importer(model) -> Importer:
    if callable(model) and not isinstance(model, ModuleOp):
        return model
    if isinstance(model, ModuleOp):
        raise BoltError("a bucketed build imports the model at each bucket's shapes: give an ONNX model, or a "
                        "function from input shapes to a graph-level module")
    return lambda shapes: import_model(model, shapes)


def lower_bucket(importer: Importer, plan: BucketPlan, bucket: Bucket, graph_part: str, op_part: str,
                 plugins: Sequence[str]) -> LoweredBucket:
    """One bucket through the pipeline, the analysis between the levels."""
    module = importer(bucket.shapes)
    registry = available_passes(plugins)
    ctx = make_context()
    with statistics.collecting() as graph_statistics:
        run_passes(module, parse_pipeline_spec(graph_part, registry), ctx)
    names = input_names(find_entry(module))
    per_input = plan.symbol_axes()
    tracked = {index: per_input[name] for index, name in enumerate(names) if name in per_input}
    axes = bucket_axes(module, tracked, [symbol.name for symbol in plan.symbols])
    run_passes(module, parse_pipeline_spec(LOWER_TO_OP, registry), ctx)
    key_symbols = {symbol for _, symbol in axes.padded_keys}
    if len(key_symbols) > 1:
        raise BoltError("attentions pad their keys along different bucketed dimensions; one key_lengths input "
                        "cannot serve them")
    attentions = [op for op in module.walk() if isinstance(op, ops.AttentionOp)]
    for index, _ in axes.padded_keys:
        attentions[index].attributes[PADDED_KEYS_ATTR] = UnitAttr()
    rest = ",".join(p for p in ("mask-padded-keys" if key_symbols else "", op_part) if p)
    lowered = compiler.lower(module, arch="", dtype="", pipeline=rest, plugins=plugins)
    lowered.pipeline = ",".join(p for p in (graph_part, LOWER_TO_OP, rest) if p)
    lowered.before = compiler.merged_statistics(graph_statistics, lowered.before)
    return LoweredBucket(bucket, lowered, axes, key_symbols.pop() if key_symbols else None)


def lower_buckets(model, *, input_shapes: Mapping[str, object], buckets=None, arch: str = "sm90", dtype: str = "f16",
                  pipeline: str | None = None, plugins: Sequence[str] = (), cutlass: int = 3, selector: str = "db",
                  tuning_db: str = "", keep_f32: Sequence[str] = ()) -> BucketedLowering:
    """Every bucket of `model` through the pipeline (the full one by default)."""
    plan = bucket_plan(input_shapes, buckets)
    if pipeline and keep_f32:
        raise BoltError("keep_f32 adds to the default pipeline; with a pipeline of your own, "
                        "give convert-precision{keep_f32=...} in it")
    pipeline = pipeline or compiler.full_pipeline(dtype=dtype, arch=arch, cutlass=cutlass, selector=selector,
                                                  tuning_db=tuning_db, keep_f32=keep_f32)
    graph_part, op_part = split_pipeline(pipeline)
    importer = _importer(model)
    lowered = [lower_bucket(importer, plan, bucket, graph_part, op_part, plugins) for bucket in plan.buckets]
    return BucketedLowering(plan, lowered)


# ------------------------------------------------------------------- compiling


def _kernel_units(programs) -> list:
    """Every distinct kernel unit of the buckets' programs (not their host units)."""
    units = {}
    for program in programs:
        for unit in program.units:
            if unit.name != "host":
                units.setdefault((unit.name, unit.source, unit.arch), unit)
    return list(units.values())


def compile_buckets(model, output_dir: str | os.PathLike, *, input_shapes: Mapping[str, object], buckets=None,
                    arch: str = "sm90", dtype: str = "f16", pipeline: str | None = None, plugins: Sequence[str] = (),
                    progress: bool = True, cutlass: int = 3, tune: bool = False, tuning_db: str | os.PathLike = "",
                    warn: bool = True, keep_f32: Sequence[str] = ()) -> compiler.CompileResult:
    """Compiles `model` (an ONNX path or ModelProto, or an `Importer`) for the ranges in
    `input_shapes` into `output_dir`; see the module docstring. The other arguments are
    `boltir.compile`'s."""
    lowering = lower_buckets(model, input_shapes=input_shapes, buckets=buckets, arch=arch, dtype=dtype, pipeline=pipeline,
                             plugins=plugins, cutlass=cutlass, selector="tune" if tune else "db",
                             tuning_db=str(tuning_db or ""), keep_f32=keep_f32)
    directory = Path(output_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BoltError(f"cannot create the output directory '{directory}': {error.strerror}") from error
    programs = [build_program(b.lowered.module) for b in lowering.buckets]
    # every bucket's kernels in one parallel batch, each distinct instance once; the
    # per-bucket builds below then find them in the object cache (and re-lower an op
    # whose CUTLASS instance did not compile, as boltir.compile does)
    compile_objects_keep_going(_kernel_units(programs), progress=progress)
    built = []
    for lowered, program in zip(lowering.buckets, programs, strict=True):
        program.units = [unit for unit in program.units if unit.name != "host"]
        built.append(compiler.build_model(lowered.lowered, program, progress=False, warn=warn))
    labels = [" ".join(f"{n}={list(s)}" for n, s in b.bucket.shapes.items()) for b in lowering.buckets]
    bucketed = build_bucketed_program([b.lowered.module for b in built], labels)
    objects = compile_objects(bucketed.units, progress=False)
    link_shared_library(list(dict.fromkeys(objects)), directory / "libmodel.so")
    (directory / "weights.bin").write_bytes(bucketed.weights)
    for index, one in enumerate(built):
        (directory / f"module_b{index}.mlir").write_text(print_module(one.lowered.module, elide_weights=True))
    manifest = bucketed_manifest(lowering, built, arch=arch, dtype=dtype, arena_bytes=bucketed.arena_bytes,
                                 weights_bytes=len(bucketed.weights))
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    fallbacks = list(dict.fromkeys(f"{s.op.name} ({s.family})" for one in built for s in one.program.fallbacks))
    merged = compiler.merged_statistics(*(one.lowered.statistics for one in built))
    compile_fallbacks = [f for one in built for f in one.compile_fallbacks]
    return compiler.CompileResult(directory, manifest, fallbacks, merged, compile_fallbacks)


def bucketed_manifest(lowering: BucketedLowering, built: Sequence[compiler.BuiltModel], *, arch: str, dtype: str,
                      arena_bytes: int, weights_bytes: int) -> dict:
    """manifest.json of a bucketed build: the static manifest's fields, the interface with
    ranges ("LOW..HIGH" dims), the symbols, and one entry per bucket."""
    plan = lowering.plan
    statics = [compiler.build_manifest(one, arch=arch, dtype=dtype, collected=one.lowered.statistics) for one in built]
    entries = []
    for index, (static, lowered) in enumerate(zip(statics, lowering.buckets, strict=True)):
        entry = {"sizes": list(lowered.bucket.sizes),
                 "inputs": {t["name"]: t["shape"] for t in static["inputs"] if t["name"] in plan.inputs},
                 "outputs": {t["name"]: t["shape"] for t in static["outputs"]},
                 "output_axes": {t["name"]: {str(axis): symbol for axis, symbol in carried.items()}
                                 for t, carried in zip(static["outputs"], lowered.axes.outputs, strict=True)},
                 "module": f"module_b{index}.mlir", "arena_bytes": static["arena_bytes"],
                 "why_padding_is_safe": lowered.axes.why(), "launches": static["launches"]}
        if lowered.key_symbol is not None:
            shape = next(t["shape"] for t in static["inputs"] if t["name"] == KEY_LENGTHS_INPUT)
            entry["key_lengths"] = {"input": KEY_LENGTHS_INPUT, "symbol": lowered.key_symbol, "shape": shape}
        entries.append(entry)
    largest, carried_out = statics[-1], lowering.buckets[-1].axes.outputs

    def output_interface(shape, carried) -> list:
        return [str(plan.symbols[carried[axis]].range) if axis in carried else size for axis, size in enumerate(shape)]

    return {
        **{key: largest[key] for key in ("boltir", "arch", "dtype", "pipeline", "tuning", "library", "weights")},
        "cutlass": sorted({generation for static in statics for generation in static["cutlass"]}),
        "inputs": [{**t, "shape": plan.interface(t["name"])} for t in largest["inputs"] if t["name"] in plan.inputs],
        "outputs": [{**t, "shape": output_interface(t["shape"], carried)}
                    for t, carried in zip(largest["outputs"], carried_out, strict=True)],
        "symbols": plan.to_manifest(),
        "buckets": entries,
        "arena_bytes": arena_bytes,
        "weights_bytes": weights_bytes,
        "compile_fallbacks": sum(len(one.compile_fallbacks) for one in built),
    }


# --------------------------------------------------------- running on the CPU


def run_interpreted(lowering: BucketedLowering, inputs: Mapping[str, np.ndarray], *, level: str = "final") -> list[np.ndarray]:
    """A call dispatched as the runtime dispatches it, run by the interpreter on the
    bucket's lowered module (`level` "op": on its op-level module, before kernel choice)."""
    index, padded, sizes = bucket_inputs(lowering.plan, inputs)
    one = lowering.buckets[index]
    module = one.lowered.selected if level == "op" and one.lowered.selected is not None else one.lowered.module
    entry = find_entry(module)
    arguments = dict(padded)
    if one.key_symbol is not None:
        batch = entry.function_type.inputs.data[input_names(entry).index(KEY_LENGTHS_INPUT)].get_shape()[0]
        arguments[KEY_LENGTHS_INPUT] = np.full((batch,), sizes[one.key_symbol], dtype=np.int32)
    results = interpret(module, arguments)
    return [slice_to(result, output_cut(carried, sizes)) for result, carried in zip(results, one.axes.outputs, strict=True)]


__all__ = ["BucketedLowering", "compile_buckets", "lower_buckets", "run_interpreted", "split_pipeline"]
