"""The op-level interpreter as the criterion's same-precision reference, shared by
bench/models.py, bench/corpus.py and bench/public_onnx.py: the module boltir.compile
lowers (the default pipeline at `dtype`), run by `boltir.interp` on the CPU; and, where a
build misses it by the model's own rounding noise, the same check launch by launch
(`launch_check`, on the GPU)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np


def lowered_module(source, arch: str, dtype: str = "f16", input_shapes: dict | None = None):
    """The module the interpreter runs: `source` (a path, or an onnx ModelProto, which is
    cloned first, since lowering may rewrite it) through the whole default pipeline."""
    from boltir.compiler import lower_model
    from boltir.pipelines import default_pipeline

    source = source.clone() if hasattr(source, "clone") else source
    module, _, _ = lower_model(source, arch=arch, dtype=dtype, input_shapes=input_shapes,
                               pipeline=default_pipeline(dtype=dtype, arch=arch))
    return module


def run_interpreter(module, inputs: dict, wide: bool = False) -> list[np.ndarray]:
    """Every output of `module` on `inputs` (numpy arrays or CPU tensors, by name or, when
    the names differ from the module's, in order); `wide`: computing in f64
    (`boltir.interp.wide_arithmetic`: the model's own rounding noise)."""
    from boltir.interp import find_entry, input_names, run, wide_arithmetic

    names = input_names(find_entry(module))
    values = [inputs[name] for name in names] if set(names) <= set(inputs) else list(inputs.values())
    arrays = {name: np.asarray(v.numpy() if hasattr(v, "numpy") else v) for name, v in zip(names, values, strict=True)}
    with wide_arithmetic() if wide else contextlib.nullcontext():
        return list(run(module, arrays))


def verdict_cell(verdict, directory: Path, inputs: dict) -> str:
    """The verdict's table cell; where the build misses the interpreter half within the
    model's own rounding noise, with the kernels' own error after it (`launch_check`)."""
    cell = verdict.cell()
    if not verdict.correct and verdict.explains_by_noise(verdict.worst):
        cell += f"; {launch_check(directory, inputs)}"
    return cell


def launch_check(directory: Path, inputs: dict) -> str:
    """Where the end-to-end miss is the model's own rounding noise, the kernels' own error:
    the build run launch by launch (`load(debug=True)`), each launch fed the GPU's values
    before it and set against the interpreter's value of the same op, so that nothing is
    amplified through the model. The criterion's verdict is unchanged; this is evidence."""
    from boltir.runtime import load

    model = load(directory, debug=True)
    try:
        model(**{spec.name: v.numpy() for spec, v in zip(model.inputs, inputs.values(), strict=True)})
        return f"every launch within {model.last_launch_error:.1e} of the interpreter"
    finally:
        model.close()
