"""Bad input, fuzzed: hypothesis feeds the ONNX importer and `boltc --emit op` valid ONNX
graphs (random DAGs of the ops boltir converts), corrupted ones and damaged protobufs
(strategies in tests/support/onnx_fuzz.py). Every one is answered with a result or a
one-line `BoltError`: never another exception, never a multi-line message, and never a
pass crash wrapped in one line.

A valid graph that imports must also reach the op level and verify there, and (where its
results are defined) compute what onnxruntime computes.

200 cases in CI (derandomized, so a failure reproduces); 2,000 in the slow suite
(`pytest -m slow tests/frontends/test_onnx_fuzz.py`), on random seeds, each failure
printed with the `@reproduce_failure` blob that replays it.
"""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from boltir.compiler import lower
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.frontends.onnx import import_model
from boltir.interp import run as interpret
from boltir.ir import verify_module
from boltir.pipelines import DTYPES, default_pipeline
from boltir.target import ARCHS
from boltir.tools import boltc
from tests.frontends.onnx_models import run_onnxruntime
from tests.support.onnx_fuzz import FuzzModel, corrupted_models, damaged_models, model_inputs, valid_models

settings.register_profile(
    "onnx-fuzz-ci",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("onnx-fuzz-slow", settings.get_profile("onnx-fuzz-ci"), derandomize=False, print_blob=True)

EXAMPLES = {"valid": 100, "corrupted": 70, "damaged": 30}
"""The CI suite's cases (200 in all); the slow suite runs ten times as many."""


def slow_suite_selected(config: pytest.Config) -> bool:
    expression = config.getoption("markexpr") or ""
    return "slow" in expression and "not slow" not in expression


@pytest.fixture(params=["ci", pytest.param("slow", marks=pytest.mark.slow)])
def suite(request) -> tuple[settings, int]:
    """The hypothesis profile of the suite, and its multiple of EXAMPLES."""
    if request.param == "slow" and not slow_suite_selected(request.config):
        pytest.skip("the 2,000-case ONNX fuzz runs in the slow suite: pytest -m slow")
    return settings.get_profile(f"onnx-fuzz-{request.param}"), 10 if request.param == "slow" else 1


def fuzz_settings(suite: tuple[settings, int], kind: str) -> settings:
    profile, multiple = suite
    return settings(profile, max_examples=EXAMPLES[kind] * multiple)


EXAMPLE_SECONDS = 60
"""One case takes well under a second; one that runs a minute hangs (a pass that
rewrites forever), and fails rather than stalls the suite."""


@contextlib.contextmanager
def hang_guard():
    def hung(signum, frame):
        raise TimeoutError(f"one case ran {EXAMPLE_SECONDS} s: boltir hangs on it")

    if not hasattr(signal, "SIGALRM"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(EXAMPLE_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------ the property


def checked_message(error: BoltError) -> str:
    """The error's text, after checking it is one line and no boltir crash in disguise."""
    text = str(error)
    assert "\n" not in text and "\r" not in text, f"multi-line error: {text!r}"
    assert "Traceback" not in text, text
    assert " crashed: " not in text, f"a pass crashed: {text}"
    return text


def import_or_refuse(model) -> ModuleOp | None:
    """The imported module, or None where the importer refuses the model with a BoltError."""
    try:
        return import_model(model)
    except BoltError as error:
        note(f"import: {checked_message(error)}")
        event("refused at import")
        return None


def lower_or_refuse(module: ModuleOp, dtype: str, arch: str) -> ModuleOp | None:
    """What `boltc --emit op` writes: the default pipeline to the op level."""
    try:
        lowered = lower(module, arch=arch, dtype=dtype, pipeline=default_pipeline(dtype=dtype, arch=arch)).module
    except BoltError as error:
        note(f"op level: {checked_message(error)}")
        event("refused at the op level")
        return None
    verify_module(lowered)
    assert not any(isinstance(op, graph.GraphOp) for op in lowered.walk()), "graph ops left at the op level"
    return lowered


def boltc_emit_op(path: Path, dtype: str) -> None:
    """The real CLI in this process: exit 0 with IR written, or 1 with one error line."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = boltc.main([str(path), "--emit", "op", "--dtype", dtype, "-o", str(path.with_suffix(".mlir"))])
    lines = stderr.getvalue().splitlines()
    note(f"boltc: {status} {lines}")
    if status == 0:
        assert path.with_suffix(".mlir").exists()
        return
    assert status == 1 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "internal error" not in lines[0], lines[0]


def same_as_onnxruntime(proto: onnx.ModelProto, module: ModuleOp, seed: int) -> None:
    """The interpreter on the imported module computes what onnxruntime computes."""
    inputs = model_inputs(proto, seed)
    try:
        expected = run_onnxruntime(proto, inputs)
    except Exception as error:  # onnxruntime lacks some kernels (f16 Erf, int Softmax...)
        note(f"onnxruntime: {type(error).__name__}: {str(error)[:200]}")
        event("onnxruntime cannot run it")
        return
    actual = interpret(module, inputs)
    event("compared with onnxruntime")
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        assert got.shape == want.shape, f"output {index}: shape {got.shape}, onnxruntime {want.shape}"
        assert got.dtype == want.dtype, f"output {index}: dtype {got.dtype}, onnxruntime {want.dtype}"
        if want.dtype.kind == "f":
            scale = max(float(np.nanmax(np.abs(want), initial=0.0, where=np.isfinite(want))), 1.0)
            tolerance = {2: 2e-3, 4: 1e-4, 8: 1e-6}[want.dtype.itemsize]
            close = np.isclose(got, want, rtol=tolerance, atol=tolerance * scale, equal_nan=True)
            assert close.all(), f"output {index}: {int((~close).sum())} of {close.size} differ, e.g. {got[~close][:4]} vs {want[~close][:4]}"
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"output {index}")


# ------------------------------------------------------------------------ the fuzzers


def test_valid_graphs_import_lower_and_match_onnxruntime(suite):
    @fuzz_settings(suite, "valid")
    @given(fuzz=valid_models(), dtype=st.sampled_from(DTYPES), arch=st.sampled_from(ARCHS),
           compare=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
    def check(fuzz: FuzzModel, dtype: str, arch: str, compare: int, seed: int):
        with hang_guard():
            module = import_or_refuse(fuzz.proto)
            if module is None:
                return
            if compare == 0 and fuzz.exact:  # a quarter of them: onnxruntime costs a session each
                same_as_onnxruntime(fuzz.proto, module, seed)
            lower_or_refuse(module, dtype, arch)

    check()


def test_corrupted_graphs_are_refused_in_one_line(suite, tmp_path):
    @fuzz_settings(suite, "corrupted")
    @given(corrupted=corrupted_models(), dtype=st.sampled_from(DTYPES), arch=st.sampled_from(ARCHS),
           through_boltc=st.integers(0, 4))
    def check(corrupted, dtype: str, arch: str, through_boltc: int):
        with hang_guard():
            module = import_or_refuse(corrupted.proto)
            if module is not None:
                lower_or_refuse(module, dtype, arch)
            if through_boltc == 0:
                path = tmp_path / "corrupted.onnx"
                path.write_bytes(corrupted.proto.SerializeToString())
                boltc_emit_op(path, dtype)

    check()


def test_damaged_protobufs_are_refused_in_one_line(suite, tmp_path):
    @fuzz_settings(suite, "damaged")
    @given(damaged=damaged_models(), dtype=st.sampled_from(DTYPES))
    def check(damaged, dtype: str):
        path = tmp_path / "damaged.onnx"
        path.write_bytes(damaged.data)
        with hang_guard():
            module = import_or_refuse(path)
            if module is not None:
                lower_or_refuse(module, dtype, "sm90")
            boltc_emit_op(path, dtype)

    check()


def test_boltc_answers_a_damaged_model_with_one_line(tmp_path):
    """The installed command in its own process, as a user runs it."""
    path = tmp_path / "damaged.onnx"
    path.write_bytes(b"\x08\x07\x12\x04fuzz:\x0b\n\x09\x12\x01y\"\x04Relu")
    process = subprocess.run(
        [sys.executable, "-m", "boltir.tools.boltc", str(path), "--emit", "op"], capture_output=True, text=True, timeout=120
    )
    assert process.returncode == 1, process.stderr
    lines = process.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), process.stderr
    assert "internal error" not in lines[0]
