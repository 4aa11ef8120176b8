"""The correctness criterion (boltir/accuracy.py): relative L2, the two bounds, the
max(1e-2, 1.1 x framework) rule, the below-normal report and the one-line form; and the
criterion meeting --keep-f32 on a model whose values f16 cannot hold."""

from __future__ import annotations

import numpy as np
import pytest

from boltir import BoltError
from boltir.accuracy import (
    INTERPRETER_BOUND,
    SMALLEST_NORMAL,
    Verdict,
    below_normal_fraction,
    judge,
    reference_bound,
    relative_l2,
)


def perturbed(reference: np.ndarray, relative: float, rng) -> np.ndarray:
    """`reference` plus noise of exactly this relative L2 size."""
    noise = rng.standard_normal(reference.shape)
    return reference + noise * (relative * np.linalg.norm(reference) / np.linalg.norm(noise))


@pytest.fixture
def reference(rng) -> np.ndarray:
    return rng.standard_normal((4, 64))


# ----------------------------------------------------------------------- relative L2


def test_relative_l2(rng, reference):
    assert relative_l2(reference, reference) == 0.0
    assert relative_l2(perturbed(reference, 3e-3, rng), reference) == pytest.approx(3e-3)
    assert relative_l2(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_l2(np.array([0.0, 1e-3]), np.zeros(2)) == pytest.approx(1e-3)  # all-zero reference: absolute


def test_relative_l2_non_finite_values():
    reference = np.array([1.0, np.nan, np.inf, 2.0])
    assert relative_l2(np.array([1.0, np.nan, np.inf, 2.0]), reference) == 0.0
    assert relative_l2(np.array([1.0, 0.0, np.inf, 2.0]), reference) == float("inf")
    assert relative_l2(np.array([1.0, np.nan, -np.inf, 2.0]), reference) == float("inf")
    assert relative_l2(np.array([np.inf, 1.0]), np.array([1.0, 1.0])) == float("inf")


def test_relative_l2_needs_the_same_shape():
    with pytest.raises(ValueError, match=r"shapes differ: \(3,\) against the reference's \(4,\)"):
        relative_l2(np.zeros(3), np.zeros(4))


# -------------------------------------------------------------------------- bounds


@pytest.mark.parametrize(("framework", "bound"), [(0.0, 1e-2), (5e-3, 1e-2), (9.09e-3, 1e-2), (2e-2, 2.2e-2),
                                                  (0.1, 0.11), (float("inf"), 1e-2), (float("nan"), 1e-2)])
def test_reference_bound_is_the_floor_or_1_1_times_the_framework(framework, bound):
    assert reference_bound(framework) == pytest.approx(bound)


def verdict(error, framework, interpreter, below=0.0, dtype="f16") -> Verdict:
    return Verdict(dtype, (error,), (framework,), (interpreter,), (below,))


@pytest.mark.parametrize(
    ("error", "framework", "interpreter", "correct"),
    [
        (9e-3, 1e-3, 1e-4, True),     # under the floor
        (1e-2, 0.0, 1e-4, True),      # at the floor: bounds are inclusive
        (1.1e-2, 1e-3, 1e-4, False),  # over the floor, framework better
        (2.1e-2, 2e-2, 1e-4, True),   # over the floor, within 1.1x the framework
        (2.3e-2, 2e-2, 1e-4, False),  # over 1.1x the framework
        (1e-3, 1e-3, 5e-3, True),     # at the interpreter bound
        (1e-3, 1e-3, 6e-3, False),    # close to fp32, but not to the same-precision interpreter: a kernel bug
        (5e-2, 5e-2, 6e-3, False),    # both fail
    ],
)
def test_correct_needs_both_bounds(error, framework, interpreter, correct):
    v = verdict(error, framework, interpreter)
    assert v.correct is correct
    assert v.matches_reference is (error <= reference_bound(framework))
    assert v.matches_interpreter is (interpreter <= INTERPRETER_BOUND)


def test_judge_from_arrays(rng, reference):
    interpreter = perturbed(reference, 8e-3, rng)
    ours = perturbed(interpreter, 1e-3, rng)
    v = judge(ours, reference, interpreter, framework_error=2e-2)
    assert v.correct and v.error[0] == pytest.approx(relative_l2(ours, reference))
    assert v.interpreter_error[0] == pytest.approx(1e-3)
    assert v.bounds == (pytest.approx(2.2e-2),)
    broken = judge(perturbed(interpreter, 2e-2, rng), reference, interpreter, framework_error=2e-2)
    assert not broken.correct and not broken.matches_interpreter


def test_every_output_must_pass(rng, reference):
    """Per output, each against its own framework error: a small output is not hidden by
    a large one."""
    small = reference * 1e-3
    good, bad = perturbed(reference, 1e-3, rng), perturbed(small, 5e-2, rng)
    v = judge([good, bad], [reference, small], [good, small], framework_error=[1e-3, 1e-3])
    assert not v.correct and v.worst == 1
    assert v.cell().startswith("WRONG (output 1: fp32 5.0e-02 > 1.0e-02")
    again = judge([good, bad], [reference, small], [good, bad], framework_error=[1e-3, 5e-2])
    assert again.correct


def test_judge_refuses_mismatched_counts(reference):
    with pytest.raises(ValueError, match="2 outputs, 1 references"):
        judge([reference, reference], [reference], [reference, reference], framework_error=0.0)
    with pytest.raises(ValueError, match="same number"):
        Verdict("f16", (0.0,), (0.0, 0.0), (0.0,), (0.0,))


def test_unknown_precision():
    with pytest.raises(BoltError, match="the correctness criterion knows f16, bf16, f32, not 'fp16'"):
        verdict(0.0, 0.0, 0.0, dtype="fp16")


# --------------------------------------------------------------- below-normal report


def test_below_normal_fraction():
    values = np.array([0.0, 0.0, 1.0, -1e-5, 3e-5, 7e-5, np.nan])
    # nonzero finite: 1.0, 1e-5, 3e-5, 7e-5; below f16's 6.1e-5: two of four
    assert below_normal_fraction(values, "f16") == 0.5
    assert below_normal_fraction(values, "bf16") == 0.0
    assert below_normal_fraction(np.zeros(4)) == 0.0
    assert SMALLEST_NORMAL["f16"] == pytest.approx(6.1035e-5, rel=1e-4)


def test_the_explanation_names_the_range_and_keep_f32(rng):
    reference = rng.standard_normal(1000) * 1e-5  # mostly below 6.1e-5
    v = judge(reference * (1 + 3e-2), reference, reference * (1 + 1e-4), framework_error=3e-2 / 1.2)
    assert not v.correct
    assert v.below_normal[0] > 0.9
    assert v.explanation is not None and "\n" not in v.explanation
    assert v.explanation.startswith("the output's values sit near f16's subnormal range (")
    assert "try --keep-f32 <op>" in v.explanation
    assert "below f16 normal" in v.cell()
    # Nothing to explain: within the floor, or held by bf16's range.
    assert judge(reference * (1 + 1e-3), reference, reference, framework_error=0.0).explanation is None
    assert judge(reference * (1 + 3e-2), reference, reference, framework_error=0.0, dtype="bf16").explanation is None


def test_the_models_rounding_noise_explains_an_interpreter_miss_without_passing_it(rng, reference):
    """Two valid f16 runs of the model (the interpreter in f32 and in f64 arithmetic)
    differ by 7.5e-3: a build 8.2e-3 from the interpreter is explained as noise, still
    WRONG by the bar; one 2.0e-2 from it is not (a kernel bug)."""
    interpreter = perturbed(reference, 1e-3, rng)
    wide = perturbed(interpreter, 7.5e-3, rng)
    noisy = judge(perturbed(interpreter, 8.2e-3, rng), reference, interpreter, framework_error=0.0, wide_interpreter=wide)
    assert noisy.noise == (pytest.approx(7.5e-3, rel=1e-2),)
    assert not noisy.correct and noisy.explains_by_noise(0)
    assert "differs from itself by 7.5e-03 when it computes in f64" in noisy.explanation
    assert "noise, not a kernel bug" in noisy.explanation and "\n" not in noisy.explanation
    assert noisy.cell().startswith("WRONG (") and noisy.cell().endswith("; within noise 7.5e-03)")
    bug = judge(perturbed(interpreter, 2e-2, rng), reference, interpreter, framework_error=0.0, wide_interpreter=wide)
    assert not bug.correct and not bug.explains_by_noise(0) and bug.explanation is None
    assert bug.cell().endswith("; noise 7.5e-03)")
    quiet = judge(interpreter, reference, interpreter, framework_error=0.0, wide_interpreter=interpreter)
    assert quiet.correct and quiet.explanation is None and quiet.noise == (0.0,)
    with pytest.raises(ValueError, match="2 wide interpreter outputs for 1 interpreter outputs"):
        judge(reference, reference, reference, framework_error=0.0, wide_interpreter=[reference, reference])


# ------------------------------------------------------------------ one-line form


def test_cell_is_one_line():
    ok = verdict(3.1e-3, 1e-3, 2e-4)
    assert ok.cell() == "ok (fp32 3.1e-03 ≤ 1.0e-02; interp 2.0e-04 ≤ 5e-03)"
    assert str(ok) == ok.cell()
    wrong = verdict(2.8e-2, 1e-3, 1e-4, below=0.31)
    assert wrong.cell() == "WRONG (fp32 2.8e-02 > 1.0e-02; interp 1.0e-04 ≤ 5e-03; 31% below f16 normal)"
    assert "\n" not in wrong.cell()


# ---------------------------------------------------- the criterion meets --keep-f32


def test_keep_f32_fixes_what_the_report_explains(rng):
    """A model whose output sits around 1e-6, in f16's subnormal range: at f16 it is
    percents off fp32 (as the interpreter at f16 is: no kernel is to blame) and the
    verdict says why; with the scaling op kept in f32 it matches fp32."""
    from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr

    import boltir
    from boltir.builder import ModelBuilder
    from boltir.dialects import graph
    from boltir.interp import run
    from boltir.pipelines import available_passes, parse_pipeline_spec, run_passes

    b = ModelBuilder()
    x = b.input("x", (8, 64))
    scale = b.insert(graph.MulOp(x, b.constant("tiny", np.array(1e-6, np.float32))))
    scale.location = NameLoc(StringAttr("/head/Scale"), NoneAttr())
    module = b.finish([scale.output])
    inputs = {"x": rng.standard_normal((8, 64)).astype(np.float32)}
    (reference,) = run(module, inputs)

    def at_f16(pipeline: str) -> np.ndarray:
        lowered = module.clone()
        run_passes(lowered, parse_pipeline_spec(pipeline, available_passes()), boltir.make_context())
        return run(lowered, inputs)[0]

    plain = at_f16("convert-precision{dtype=f16},lower-graph-to-op")
    framework_error = relative_l2(plain, reference)  # an ONNX file's yardstick: the interpreter at f16
    v = judge(plain, reference, plain, framework_error=framework_error)
    # As good as f16 gets (correct), but over the floor, and the verdict says why.
    assert v.correct and v.error[0] > 1e-2
    assert v.explanation is not None and v.below_normal[0] > 0.9

    kept = at_f16('convert-precision{dtype=f16 keep_f32="/head/Scale"},lower-graph-to-op')
    v = judge(kept, reference, kept, framework_error=framework_error)
    assert v.correct and v.error[0] < 1e-6, v.cell()
