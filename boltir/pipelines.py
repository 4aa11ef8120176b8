"""The named pipelines, and turning a pipeline string into passes.

The default pipeline, with precision after layout:

    canonicalize, cse, fold-constants, recognize-activations, recognize-attention, fold-batchnorm,
    reparameterize-branches, space-to-depth-stem, convert-layout{layout=NHWC},
    convert-precision{dtype=f16},                                   (graph level)
    lower-graph-to-op,
    pad-alignment{arch=sm90}, fuse-space-to-depth, commute-transposes,
    fold-attention-layouts, fuse-epilogue, merge-qkv,
    form-persistent-kernels, fuse-elementwise                       (op level)

`boltc --print-pipeline` prints it and `bolt-opt -p '<string>'` replays any prefix.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Sequence

from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from boltir.backends.cuda.passes import PASS_MODULES as CUDA_PASS_MODULES
from boltir.diagnostics import BoltError
from boltir.ir import verify_module
from boltir.passes import PASS_MODULES, pass_loader
from boltir.plugins import entry_point_passes, load_pass_plugin, register_passes
from boltir.target import ARCHS, DEFAULT_ARCH

DTYPES = ("f16", "bf16", "f32")

PassRegistry = dict[str, Callable[[], type[ModulePass]]]


def graph_passes(dtype: str = "f16", keep_f32: Sequence[str] = ()) -> list[str]:
    return [
        "canonicalize",
        "cse",
        "fold-constants",
        "recognize-activations",
        "recognize-attention",
        "fold-batchnorm",
        "reparameterize-branches",
        "space-to-depth-stem",
        "convert-layout{layout=NHWC}",
        f"convert-precision{{dtype={dtype}{keep_f32_option(keep_f32)}}}",
    ]


def keep_f32_option(names: Sequence[str]) -> str:
    """` keep_f32="a","b"` for convert-precision, each name quoted (ONNX names hold '/'
    and ':'), or nothing."""
    if not names:
        return ""
    quoted = ('"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' for name in names)
    return " keep_f32=" + ",".join(quoted)


def op_passes(arch: str = DEFAULT_ARCH) -> list[str]:
    return [
        f"pad-alignment{{arch={arch}}}",
        "fuse-space-to-depth",
        "commute-transposes",
        "fold-attention-layouts",
        "fuse-epilogue",
        "merge-qkv",
        "form-persistent-kernels",
        "fuse-elementwise",
    ]


def default_pipeline(*, dtype: str = "f16", arch: str = DEFAULT_ARCH, keep_f32: Sequence[str] = ()) -> str:
    """The pipeline boltc runs, up to the op level; `keep_f32` names ops that stay f32."""
    if dtype not in DTYPES:
        raise BoltError(f"--dtype must be one of {', '.join(DTYPES)}, got '{dtype}'")
    if arch not in ARCHS:
        raise BoltError(f"--arch must be one of {', '.join(ARCHS)}, got '{arch}'")
    return ",".join([*graph_passes(dtype, keep_f32), "lower-graph-to-op", *op_passes(arch)])


def available_passes(plugin_files: Sequence[str] = ()) -> PassRegistry:
    """xDSL's passes, boltir's, installed packages' (entry points) and plugin files'."""
    registry: PassRegistry = dict(Universe.get_multiverse().all_passes)
    for name, target in {**PASS_MODULES, **CUDA_PASS_MODULES}.items():
        registry[name] = pass_loader(*target)
    register_passes(registry, entry_point_passes(), "entry-point group 'boltir.passes'")
    for path in plugin_files:
        register_passes(registry, load_pass_plugin(path), f"pass plugin '{path}'")
    return registry


def _pass_specs(spec: str) -> tuple:
    """xDSL's parse of a pipeline string, with one clear error for a bad string."""
    try:
        return tuple(parse_pipeline(spec))
    except ArgSpecParseError as error:
        raise BoltError(f"bad pass pipeline: {str(error).splitlines()[-1].strip() or error}") from error


def parse_pipeline_spec(spec: str, registry: PassRegistry) -> list[ModulePass]:
    """The passes a pipeline string names, with one clear error for a bad string."""
    passes: list[ModulePass] = []
    for pass_spec in _pass_specs(spec):
        if pass_spec.name not in registry:
            close = difflib.get_close_matches(pass_spec.name, list(registry), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else "; `bolt-opt --help` lists them"
            raise BoltError(f"unknown pass '{pass_spec.name}'{hint}")
        try:
            passes.append(registry[pass_spec.name]().from_pass_spec(pass_spec))
        except BoltError as error:
            raise BoltError(f"bad argument for pass '{pass_spec.name}': {error.message}") from error
        except (ValueError, TypeError) as error:
            raise BoltError(f"bad argument for pass '{pass_spec.name}': {error}") from error
    return passes


def without_passes(spec: str, names: Collection[str]) -> str:
    """The pipeline string `spec` without the passes `names` (with whatever options they
    have there): a build that leaves a pass out. A name that `spec` does not hold is an
    error, so that a renamed pass cannot leave the pipeline silently whole."""
    steps = _pass_specs(spec)
    if missing := sorted(set(names) - {step.name for step in steps}):
        raise BoltError(f"the pipeline has no pass {', '.join(repr(name) for name in missing)} to leave out")
    texts = pipeline_steps(spec)
    assert len(texts) == len(steps), spec
    return ",".join(text for text, step in zip(texts, steps) if step.name not in names)


def pipeline_steps(spec: str) -> list[str]:
    """The pipeline string's steps as written: split at the commas outside options and
    (unescaped) quotes."""
    texts, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(spec):
        if char == '"' and (index == 0 or spec[index - 1] != "\\"):
            quoted = not quoted
        elif not quoted and char in "{}":
            depth += 1 if char == "{" else -1
        elif not quoted and depth == 0 and char == ",":
            texts.append(spec[start:index].strip())
            start = index + 1
    return [*texts, spec[start:].strip()]


def run_passes(
    module,
    passes: Sequence[ModulePass],
    ctx,
    *,
    verify: bool = True,
    after_pass: Callable[[ModulePass, object], None] | None = None,
) -> None:
    """Runs passes in order, verifying the input and each pass's output. A pass that
    raises becomes one BoltError naming it; `after_pass(pass, module)` sees each result."""
    from xdsl.utils.exceptions import DiagnosticException, VerifyException

    if verify:
        verify_module(module)
    for pass_ in passes:
        try:
            pass_.apply(ctx, module)
        except BoltError:
            raise
        except (VerifyException, DiagnosticException) as error:
            raise BoltError(f"pass '{pass_.name}' failed: {error.args[0] if error.args else error}") from error
        except Exception as error:
            raise BoltError(
                f"pass '{pass_.name}' crashed: {type(error).__name__}: {error} (--debug shows the traceback)"
            ) from error
        if verify:
            try:
                verify_module(module)
            except BoltError as error:
                error.message = f"after pass '{pass_.name}': {error.message}"
                raise
        if after_pass is not None:
            after_pass(pass_, module)
