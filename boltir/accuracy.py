"""One correctness criterion for a compiled f16 / bf16 model, used by bench/, the tests
and bench/RESULTS.md.

A compiled model is **correct** when, for every output, both hold:

1. against the fp32 reference, its relative L2 error is at most
   max(1e-2, 1.1 x the framework's own run at the same precision): f16 arithmetic alone
   moves a deep network's output by percents, so the framework's own f16 run is the
   yardstick (for a PyTorch model, PyTorch fp16; for an ONNX file, boltir's op-level
   interpreter at f16; the caller measures it and passes the error in);
2. against the op-level interpreter at the same precision, on the same lowered module,
   its relative L2 error is at most 5e-3. Both round the same way, so a larger gap is a
   kernel bug that (1) alone would let f16 rounding hide.

Where the caller also gives the model's **rounding noise** (the op-level interpreter at
`dtype` against itself computing in f64, `boltir.interp.wide_arithmetic`: two equally valid
f16 runs), a failed second half within NOISE_SLACK x that noise is explained as the
model's own noise, not a kernel bug. The verdict stays as the bars say; the explanation
tells people which kind of failure it is (a randomly initialised ResNet-50 amplifies f16
rounding enough that two valid f16 runs differ by more than 5e-3).

The verdict also reports how much of the reference sits below the precision's smallest
normal number: such values lose their relative precision in f16 (flushed or subnormal),
which no kernel can fix; `--keep-f32 OPNAMES` keeps the ops that make them in f32.

    verdict = judge(ours, reference, interpreter, framework_error=0.02, dtype="f16")
    verdict.correct, verdict.cell(), verdict.explanation

Only numpy is needed, so bench scripts and tests use it without the compiler.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from boltir.diagnostics import BoltError

REFERENCE_FLOOR = 1e-2
"""Against fp32, an error up to this is always accepted."""
FRAMEWORK_SLACK = 1.1
"""Against fp32, an error up to this many times the framework's own run is accepted."""
INTERPRETER_BOUND = 5e-3
"""Against the op-level interpreter at the same precision, the most accepted."""
SMALLEST_NORMAL = {"f16": 2.0**-14, "bf16": 2.0**-126, "f32": 2.0**-126}
"""The smallest positive normal number of each precision (f16: 6.1e-5)."""
NOISE_SLACK = 1.5
"""An interpreter-half error within this many times the model's rounding noise is explained
by the noise."""
BELOW_NORMAL_NOTE = 1e-2
"""The fraction of the reference's nonzero values below the smallest normal from which
the verdict explains an error over the floor by the precision's range."""


def relative_l2(got, reference) -> float:
    """‖got - reference‖₂ / ‖reference‖₂ in float64 over the finite values (NaN and
    infinity must sit in the same places, else the error is infinite); an all-zero
    reference divides by 1, not 0."""
    got64, expected64 = np.asarray(got, np.float64), np.asarray(reference, np.float64)
    if got64.shape != expected64.shape:
        raise ValueError(f"shapes differ: {got64.shape} against the reference's {expected64.shape}")
    special = ~np.isfinite(expected64)
    if not np.array_equal(np.isnan(got64), np.isnan(expected64)) or not np.array_equal(
        got64[special & ~np.isnan(expected64)], expected64[special & ~np.isnan(expected64)]
    ):
        return float("inf")
    got64, expected64 = np.where(special, 0.0, got64), np.where(special, 0.0, expected64)
    if not np.isfinite(got64).all():
        return float("inf")
    scale = np.linalg.norm(expected64)
    return float(np.linalg.norm(got64 - expected64) / (scale if scale else 1.0))


def below_normal_fraction(reference, dtype: str = "f16") -> float:
    """The fraction of the reference's nonzero finite values whose magnitude is below
    `dtype`'s smallest normal number (0 when it has none)."""
    magnitude = np.abs(np.asarray(reference, np.float64))
    nonzero = magnitude[np.isfinite(magnitude) & (magnitude > 0)]
    if nonzero.size == 0:
        return 0.0
    return float(np.count_nonzero(nonzero < smallest_normal(dtype)) / nonzero.size)


def smallest_normal(dtype: str) -> float:
    if dtype not in SMALLEST_NORMAL:
        raise BoltError(f"the correctness criterion knows {', '.join(SMALLEST_NORMAL)}, not '{dtype}'")
    return SMALLEST_NORMAL[dtype]


def reference_bound(framework_error: float) -> float:
    """The most error against fp32 accepted, given the framework's own run's error; a
    framework run that is not finite (it overflowed) sets no yardstick: the floor."""
    if not np.isfinite(framework_error):
        return REFERENCE_FLOOR
    return max(REFERENCE_FLOOR, FRAMEWORK_SLACK * framework_error)


@dataclass(frozen=True)
class Verdict:
    """The criterion applied to a compiled model's outputs, one entry per output."""

    dtype: str
    error: tuple[float, ...]
    """Against the fp32 reference."""
    framework_error: tuple[float, ...]
    """The framework's own `dtype` run against the fp32 reference."""
    interpreter_error: tuple[float, ...]
    """Against the op-level interpreter at `dtype` on the same lowered module."""
    below_normal: tuple[float, ...]
    """The fraction of the reference's nonzero values below `dtype`'s smallest normal."""
    noise: tuple[float, ...] | None = None
    """The interpreter at `dtype` against itself in f64 arithmetic: the model's rounding
    noise, where the caller measured it."""

    def __post_init__(self) -> None:
        smallest_normal(self.dtype)
        counts = {len(self.error), len(self.framework_error), len(self.interpreter_error), len(self.below_normal),
                  *([len(self.noise)] if self.noise is not None else [])}
        if len(counts) != 1 or not self.error:
            raise ValueError("a verdict needs the same number (at least one) of each error, one per output")

    @property
    def bounds(self) -> tuple[float, ...]:
        return tuple(reference_bound(e) for e in self.framework_error)

    @property
    def matches_reference(self) -> bool:
        return all(e <= b for e, b in zip(self.error, self.bounds, strict=True))

    @property
    def matches_interpreter(self) -> bool:
        return all(e <= INTERPRETER_BOUND for e in self.interpreter_error)

    @property
    def correct(self) -> bool:
        return self.matches_reference and self.matches_interpreter

    @property
    def worst(self) -> int:
        """The output the one-line form shows: the one furthest over (or nearest to) its
        bounds."""
        def margin(i: int) -> float:
            return max(self.error[i] / self.bounds[i], self.interpreter_error[i] / INTERPRETER_BOUND)

        return max(range(len(self.error)), key=margin)

    def explains_by_range(self, i: int) -> bool:
        """Whether output `i` is over the floor against fp32 with enough of its reference
        below the precision's normal range to say so."""
        return self.error[i] > REFERENCE_FLOOR and self.below_normal[i] >= BELOW_NORMAL_NOTE

    def explains_by_noise(self, i: int) -> bool:
        """Whether output `i` misses the interpreter bar by no more than the model's own
        rounding noise (NOISE_SLACK x it) when that noise is itself over the bar."""
        return (self.noise is not None and self.interpreter_error[i] > INTERPRETER_BOUND
                and self.noise[i] > INTERPRETER_BOUND and self.interpreter_error[i] <= NOISE_SLACK * self.noise[i])

    @property
    def explanation(self) -> str | None:
        """One line for people when an output's error comes with a reference that sits
        below the precision's normal range (whether or not the framework's run erred as
        much, which makes it correct), or misses the interpreter bar by the model's own
        rounding noise."""
        lines = []
        explained = [i for i in range(len(self.error)) if self.explains_by_range(i)]
        if explained:
            fraction = max(self.below_normal[i] for i in explained)
            lines.append(f"the output's values sit near {self.dtype}'s subnormal range ({fraction:.0%} of its nonzero values "
                         f"are below {smallest_normal(self.dtype):.1e}), where {self.dtype} keeps little precision; "
                         "try --keep-f32 <op> on the ops that compute them")
        noisy = [i for i in range(len(self.error)) if self.explains_by_noise(i)]
        if noisy:
            i = max(noisy, key=lambda j: self.noise[j])
            lines.append(f"the interpreter at {self.dtype} differs from itself by {self.noise[i]:.1e} when it computes in "
                         f"f64: this model's own {self.dtype} rounding noise is over the {INTERPRETER_BOUND:.0e} bar, and "
                         f"the build's {self.interpreter_error[i]:.1e} is within {NOISE_SLACK}x of it (noise, not a kernel bug)")
        return "; ".join(lines) or None

    def cell(self) -> str:
        """One line for a table: the verdict, then the worst output's two errors against
        their bounds, and the below-normal fraction where it matters."""
        i = self.worst
        error, bound, interp = self.error[i], self.bounds[i], self.interpreter_error[i]
        parts = [f"fp32 {error:.1e} {'≤' if error <= bound else '>'} {bound:.1e}",
                 f"interp {interp:.1e} {'≤' if interp <= INTERPRETER_BOUND else '>'} {INTERPRETER_BOUND:.0e}"]
        if self.explains_by_range(i):
            parts.append(f"{self.below_normal[i]:.0%} below {self.dtype} normal")
        if self.noise is not None:
            parts.append(f"{'within ' if self.explains_by_noise(i) else ''}noise {self.noise[i]:.1e}")
        where = f"output {i}: " if len(self.error) > 1 else ""
        return f"{'ok' if self.correct else 'WRONG'} ({where}{'; '.join(parts)})"

    def __str__(self) -> str:
        return self.cell()


def _outputs(values) -> list[np.ndarray]:
    if isinstance(values, np.ndarray) or np.isscalar(values):
        return [np.asarray(values)]
    return [np.asarray(v) for v in values]


def judge(got, reference, interpreter, *, framework_error: float | Sequence[float], dtype: str = "f16",
          wide_interpreter=None) -> Verdict:
    """The verdict on a compiled model's outputs `got` (an array, or one per output),
    given the fp32 `reference`, the op-level `interpreter`'s outputs at `dtype` on the
    same lowered module, and the framework's own `dtype` run's error against the
    reference (`framework_error`, one number, or one per output); `wide_interpreter`, the
    interpreter's outputs under `wide_arithmetic`, gives the model's rounding noise."""
    got, reference, interpreter = _outputs(got), _outputs(reference), _outputs(interpreter)
    noise = None
    if wide_interpreter is not None:
        wide = _outputs(wide_interpreter)
        if len(wide) != len(interpreter):
            raise ValueError(f"{len(wide)} wide interpreter outputs for {len(interpreter)} interpreter outputs")
        noise = tuple(relative_l2(p, w) for p, w in zip(interpreter, wide, strict=True))
    framework = [float(framework_error)] * len(got) if np.isscalar(framework_error) else [float(e) for e in framework_error]
    if not len(got) == len(reference) == len(interpreter) == len(framework):
        raise ValueError(f"{len(got)} outputs, {len(reference)} references, {len(interpreter)} interpreter outputs "
                         f"and {len(framework)} framework errors")
    return Verdict(
        dtype=dtype,
        error=tuple(relative_l2(g, r) for g, r in zip(got, reference, strict=True)),
        framework_error=tuple(framework),
        interpreter_error=tuple(relative_l2(g, p) for g, p in zip(got, interpreter, strict=True)),
        below_normal=tuple(below_normal_fraction(r, dtype) for r in reference),
        noise=noise,
    )
