"""`#op.epilogue<...>` onto CUTLASS 2.x epilogue functors.

boltir's epilogue is

    out = act2( act(alpha * acc + beta * bias)  (+ or *)  residual )

computed in f32 and rounded once to the output type. CUTLASS 2.x offers two thread-level
functors that together express all of it:

- `LinearCombinationGeneric<Act>`: `D = act(alpha * acc + beta * C)`, where C is either
  the bias, read through a row stride of 0 (one value per output column / channel), or
  the residual. It covers every epilogue without a residual, and `residual = add` when
  there is neither a bias nor a first activation (`act2(alpha * acc + residual)`). It
  supports serial split-k: only the last slice applies the activation.
- `LinearCombinationResidualBlock<Act, Binary, Act2>` with the broadcast epilogue
  (`GemmUniversalWithBroadcast`, `DefaultConv2dFpropWithBroadcast`), which computes
  `Z = act2(binary(act(alpha' * acc + v), beta' * C))` with `v` the broadcast (bias)
  vector and C the residual. Mapped with `beta' = 1`; CUTLASS adds the bias unscaled, so
  a `beta` other than 1 is folded in: `alpha' = alpha / beta` and the activation is
  applied to `beta * x` (exact up to f32 rounding). It does not support split-k (the
  activation would run on every slice).

CUTLASS 3.x (sm90) instances take the whole epilogue as one epilogue visitor tree of our
own: a compute node over the accumulator, the bias (a row broadcast) and the residual
(the source C), whose function `epilogue_expression` writes out.

Activations are boltir's own functors (`templates/boltir_epilogue.h`), written as the
interpreter computes them; each instance gets a `struct ...Fn` with the arguments as
float literals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boltir.dialects.op import Activation, EpilogueAttr

F32_MAX = float(np.finfo(np.float32).max)

HEAVY_ACTIVATIONS = frozenset({"gelu", "gelu_tanh", "sigmoid", "silu", "tanh", "hardswish"})
"""Transcendental activations: CUTLASS's epilogue unrolls less for "heavy" functors."""


def f32_literal(value: float) -> str:
    """A C++ float literal that reads back as `value` rounded to f32."""
    with np.errstate(over="ignore"):
        single = np.float32(value)
    if not math.isfinite(float(single)):
        return "INFINITY" if single > 0 else "(-INFINITY)"
    text = str(single)
    if "e" not in text and "." not in text:
        text += ".0"
    literal = text + "f"
    return f"({literal})" if literal.startswith("-") else literal


def activation_expression(activation: Activation, x: str) -> str:
    """The activation applied to the float expression `x`, as C++."""
    kind, args = activation.kind, activation.args
    e = "boltir::epilogue::"
    if kind == "none":
        return x
    if kind in ("relu", "gelu", "gelu_tanh", "sigmoid", "silu", "hardswish"):
        return f"{e}{kind}({x})"
    if kind == "tanh":
        return f"{e}tanh_({x})"
    if kind == "clip":
        # A bound that f32 cannot hold bounds nothing (the interpreter's rule; a missing
        # bound is written as the largest f64).
        low, high = (None if abs(a) > F32_MAX else a for a in args)
        if low is not None and high is not None:
            return f"{e}clip({x}, {f32_literal(low)}, {f32_literal(high)})"
        if low is not None:
            return f"{e}clip_min({x}, {f32_literal(low)})"
        if high is not None:
            return f"{e}clip_max({x}, {f32_literal(high)})"
        return x
    if kind == "leaky_relu":
        return f"{e}leaky_relu({x}, {f32_literal(args[0])})"
    if kind == "hardsigmoid":
        return f"{e}hardsigmoid({x}, {f32_literal(args[0])}, {f32_literal(args[1])})"
    raise ValueError(f"unknown activation {kind}")


@dataclass(frozen=True)
class Functor:
    """One activation functor of an instance: `activation(prescale * x)`, and the same as
    a C++ expression of the float `x`."""

    activation: Activation = Activation()
    prescale: float | None = None

    @property
    def expression(self) -> str:
        x = "x" if self.prescale is None else f"(x * {f32_literal(self.prescale)})"
        return activation_expression(self.activation, x)

    @property
    def heavy(self) -> bool:
        return self.activation.kind in HEAVY_ACTIVATIONS

    @property
    def is_identity(self) -> bool:
        return self.expression == "x"


def functor(activation: Activation, prescale: float | None = None) -> Functor:
    return Functor(activation, prescale)


@dataclass(frozen=True)
class EpiloguePlan:
    """How one `#op.epilogue` runs in CUTLASS.

    `kind` "linear": `LinearCombinationGeneric<act>` with `D = act(alpha * acc + beta * C)`;
    `source` says what C is ("none": not read, beta = 0; "bias": the bias vector through a
    zero row stride; "residual": the residual tensor).

    `kind` "residual_block": `LinearCombinationResidualBlock<act, binary, act2>` with the
    broadcast epilogue: `Z = act2(binary(act(alpha * acc + bias), beta * residual))`, the
    bias as the broadcast vector when `bias_vector`, else none (zeros)."""

    kind: str
    alpha: float
    beta: float
    source: str
    act: Functor
    bias_vector: bool = False
    binary: str = "plus"
    act2: Functor = Functor()

    @property
    def heavy(self) -> bool:
        return self.act.heavy or self.act2.heavy

    @property
    def uses_bias(self) -> bool:
        return self.source == "bias" or self.bias_vector

    @property
    def uses_residual(self) -> bool:
        return self.source == "residual"


def plan_epilogue(epilogue: EpilogueAttr) -> EpiloguePlan:
    alpha = epilogue.alpha.value.data
    beta = epilogue.beta.value.data
    bias = epilogue.has_bias and beta != 0.0  # beta = 0 multiplies the bias away
    first, second = epilogue.first_activation, epilogue.second_activation
    residual = epilogue.residual_kind
    if residual == "none":
        return EpiloguePlan("linear", alpha, beta if bias else 0.0, "bias" if bias else "none", functor(first))
    if residual == "add" and first.kind == "none" and not bias:
        # act2(act(alpha * acc) + residual) with no act and no bias: C is the residual.
        return EpiloguePlan("linear", alpha, 1.0, "residual", functor(second))
    prescale = None
    if bias and beta != 1.0:
        # act(alpha * acc + beta * bias) = act(beta * (alpha / beta * acc + bias))
        alpha, prescale = alpha / beta, beta
    binary = "plus" if residual == "add" else "multiplies"
    return EpiloguePlan(
        "residual_block", alpha, 1.0, "residual", functor(first, prescale), bias_vector=bias, binary=binary,
        act2=functor(second),
    )


def plan_problem(epilogue: EpilogueAttr) -> str | None:
    """Why an epilogue cannot be expressed at all, or None."""
    alpha, beta = epilogue.alpha.value.data, epilogue.beta.value.data
    for name, value in (("alpha", alpha), ("beta", beta)):
        if abs(value) > F32_MAX:
            return f"the epilogue's {name} ({value!r}) does not fit in f32"
    plan = plan_epilogue(epilogue)
    if not math.isfinite(float(np.float32(plan.alpha))) or plan.alpha != 0.0 and np.float32(plan.alpha) == 0.0:
        return f"alpha / beta ({plan.alpha!r}) does not fit in f32 (the bias is folded into the activation as beta)"
    return None


def epilogue_expression(epilogue: EpilogueAttr) -> str:
    """The whole epilogue, `act2(act(alpha * acc + beta * bias) (+ or *) residual)`, as one
    C++ float expression of `acc`, `bias` and `residual` (each named only where the epilogue
    reads it)."""
    alpha, beta = epilogue.alpha.value.data, epilogue.beta.value.data
    x = "acc" if alpha == 1.0 else f"{f32_literal(alpha)} * acc"
    if epilogue.has_bias and beta != 0.0:
        x = f"{x} + {'bias' if beta == 1.0 else f'{f32_literal(beta)} * bias'}"
    x = activation_expression(epilogue.first_activation, f"({x})")
    if epilogue.residual_kind != "none":
        x = f"({x}) {'+' if epilogue.residual_kind == 'add' else '*'} residual"
    return activation_expression(epilogue.second_activation, x)
