"""recognize-activations: activations that exporters write decomposed become single ops.

ONNX exporters (torch.onnx.export below opset 20, Hugging Face's BERT) write GELU as
`x * 0.5 * (1 + Erf(x / sqrt(2)))`, the tanh GELU as
`0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`, SiLU as `x * Sigmoid(x)`
and HardSwish as `x * HardSigmoid(x)` or `x * Relu6(x + 3) / 6` (Relu6 being
`Clip(0, 6)`). fuse-epilogue fuses one activation op into a GEMM or conv epilogue, so a
decomposed one stays a separate elementwise kernel; this pass gives it back its name.

How it matches: from each `graph.mul`, `graph.div`, `graph.add` and `graph.sub`, the pass
reads the expression it computes as a polynomial in one value `x` whose terms may carry
one "gate" (an erf, tanh, sigmoid, or clip: `graph.clip`, `graph.relu` and
`graph.hardsigmoid`, nested ones merged), itself applied to a polynomial in `x`. It reads
through add, sub, mul, neg, division by a constant and `pow` by a constant integer, but
only through values that the expression alone uses and whose type is the result's; the
constants must be splats (any shape that broadcasts into the result). So operand order,
where the 0.5 is multiplied, `Div` by sqrt(2) or `Mul` by 0.7071..., `Pow(x, 3)` or
`x * x * x`, `x + 0.044715 x^3` or `x (1 + 0.044715 x^2)` all read the same. The
expression is then compared with each activation, coefficient by coefficient, within a
relative tolerance of 1e-3 (or the element type's epsilon where that is coarser, so
f16/bf16 constants still match).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import is_floating, numpy_dtype
from boltir.passes import statistics
from boltir.passes.common import CONSTANTS, constant_of, where

MAX_DEGREE = 6
"""Highest power of x an expression may reach (the tanh GELU needs 3)."""
MAX_OPS = 48
"""Most ops one match may take: bounds the work per candidate root."""
MAX_SPLAT_ELEMENTS = 4096
"""Constants with more elements are never read as splats (weights are not)."""
RELATIVE_TOLERANCE = 1e-3
ABSOLUTE_TOLERANCE = 1e-6
"""For coefficients that must be zero."""

SQRT_HALF = math.sqrt(0.5)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
TANH_GELU_CUBIC = 0.044715


class NoMatch(Exception):
    """The expression is not one the pass reads."""


# ------------------------------------------------------------------------ algebra

Key = tuple[int, bool]
"""A term: (power of x, whether it carries the gate)."""
Expression = dict[Key, float]
"""A sum of terms `coefficient * x^power * (gate if carries)`."""


def add(a: Expression, b: Expression, sign: float = 1.0) -> Expression:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0.0) + sign * value
    return out


def scale(a: Expression, factor: float) -> Expression:
    return {key: value * factor for key, value in a.items()}


def multiply(a: Expression, b: Expression) -> Expression:
    out: Expression = {}
    for (power_a, gate_a), value_a in a.items():
        for (power_b, gate_b), value_b in b.items():
            if gate_a and gate_b:
                raise NoMatch("the gate squared")
            power = power_a + power_b
            if power > MAX_DEGREE:
                raise NoMatch("degree too high")
            key = (power, gate_a or gate_b)
            out[key] = out.get(key, 0.0) + value_a * value_b
    return out


def polynomial(a: Expression) -> dict[int, float]:
    """The expression as {power: coefficient}; it must not carry the gate."""
    if any(gate for _, gate in a):
        raise NoMatch("gate inside a gate")
    return {power: value for (power, _), value in a.items()}


@dataclass
class Gate:
    """`kind(argument)`; a clip is `clip(argument, low, high)` (±inf where unbounded)."""

    kind: str  # erf, tanh, sigmoid, clip
    argument: dict[int, float]
    low: float = -math.inf
    high: float = math.inf


# ------------------------------------------------------------------------ reading


def element_tolerance(element_type: Attribute) -> float:
    """1e-3, or the element type's epsilon where that is coarser (bf16)."""
    try:
        return max(RELATIVE_TOLERANCE, float(np.finfo(numpy_dtype(element_type)).eps))
    except (ValueError, TypeError, BoltError):
        return RELATIVE_TOLERANCE


def splat_value(value: SSAValue) -> float | None:
    """The one value of a small constant whose elements are all equal, else None."""
    if not isinstance(value.owner, CONSTANTS):
        return None
    if math.prod(value.type.get_shape()) > MAX_SPLAT_ELEMENTS:
        return None
    try:
        array = constant_of(value)
    except BoltError:  # a weight printed without its data (--elide-weights)
        return None
    if array is None or array.size == 0 or not is_floating(array.dtype):
        return None
    flat = array.reshape(-1).astype(np.float64)
    if not np.all(flat == flat[0]) or not math.isfinite(flat[0]):
        return None
    return float(flat[0])


CLIPS = (graph.ClipOp, graph.ReluOp, graph.HardSigmoidOp)
GATES = (graph.ErfOp, graph.TanhOp, graph.SigmoidOp, *CLIPS)
ARITHMETIC = (graph.AddOp, graph.SubOp, graph.MulOp, graph.DivOp, graph.NegOp, graph.PowOp)
ROOTS = (graph.MulOp, graph.DivOp, graph.AddOp, graph.SubOp)


def clip_bounds(op: Operation) -> tuple[float, float]:
    if isinstance(op, graph.ReluOp):
        return 0.0, math.inf
    if isinstance(op, graph.HardSigmoidOp):
        return 0.0, 1.0
    low = op.properties["min"].value.data if "min" in op.properties else -math.inf
    high = op.properties["max"].value.data if "max" in op.properties else math.inf
    return low, high


@dataclass
class Reader:
    """Reads the expression a root op computes (see the module docstring)."""

    root: Operation
    x: SSAValue | None = None
    gate: Gate | None = None
    ops: list[Operation] = field(default_factory=list)
    """The ops the expression consumes, each before its operands' producers."""
    constants: list[Operation] = field(default_factory=list)

    @property
    def result_type(self) -> Attribute:
        return self.root.results[0].type

    def take(self, op: Operation) -> None:
        if len(self.ops) >= MAX_OPS:
            raise NoMatch("too many ops")
        self.ops.append(op)

    def inner(self, value: SSAValue, kinds: tuple[type, ...]) -> bool:
        """Whether the expression may read through `value`'s producer: one of `kinds`,
        used by the expression alone, of the result's type."""
        return isinstance(value.owner, kinds) and value.has_one_use() and value.type == self.result_type

    def constant(self, value: SSAValue) -> float | None:
        number = splat_value(value)
        if number is not None:
            self.constants.append(value.owner)
        return number

    def read_root(self) -> Expression:
        self.take(self.root)
        return self.read_op(self.root)

    def read(self, value: SSAValue) -> Expression:
        number = self.constant(value)
        if number is not None:
            return {(0, False): number}
        if self.inner(value, ARITHMETIC + GATES):
            self.take(value.owner)
            return self.read_op(value.owner)
        if value.type != self.result_type or isinstance(value.owner, CONSTANTS):
            raise NoMatch("a leaf of another type, or a constant that is not a splat")
        if self.x is None:
            self.x = value
        elif self.x is not value:
            raise NoMatch("two different leaves")
        return {(1, False): 1.0}

    def read_op(self, op: Operation) -> Expression:
        if isinstance(op, graph.AddOp):
            return add(self.read(op.lhs), self.read(op.rhs))
        if isinstance(op, graph.SubOp):
            return add(self.read(op.lhs), self.read(op.rhs), -1.0)
        if isinstance(op, graph.MulOp):
            return multiply(self.read(op.lhs), self.read(op.rhs))
        if isinstance(op, graph.NegOp):
            return scale(self.read(op.input), -1.0)
        if isinstance(op, graph.DivOp):
            divisor = self.constant(op.rhs)
            if divisor is None or divisor == 0.0:
                raise NoMatch("division by something other than a constant")
            return scale(self.read(op.lhs), 1.0 / divisor)
        if isinstance(op, graph.PowOp):
            exponent = self.constant(op.rhs)
            if exponent is None or exponent != int(exponent) or not 1 <= exponent <= MAX_DEGREE:
                raise NoMatch("pow by something other than a small integer")
            base = self.read(op.lhs)
            out = base
            for _ in range(int(exponent) - 1):
                out = multiply(out, base)
            return out
        if isinstance(op, GATES):
            return self.read_gate(op)
        raise NoMatch(f"cannot read {op.name}")

    def read_gate(self, op: Operation) -> Expression:
        if self.gate is not None:
            raise NoMatch("two gates")
        if isinstance(op, CLIPS):
            low, high = -math.inf, math.inf
            # clip(clip(e, l1, h1), l2, h2) = clip(e, max(l1, l2), min(h1, h2)) when the
            # two ranges overlap; a hardsigmoid is clip(alpha * e + beta, 0, 1).
            while True:
                inner_low, inner_high = clip_bounds(op)
                low, high = max(low, inner_low), min(high, inner_high)
                if low > high:
                    raise NoMatch("disjoint clips")
                if isinstance(op, graph.HardSigmoidOp) or not self.inner(op.input, (graph.ClipOp, graph.ReluOp)):
                    break
                op = op.input.owner
                self.take(op)
            argument = polynomial(self.read(op.input))
            if isinstance(op, graph.HardSigmoidOp):
                alpha, beta = op.prop_value("alpha"), op.prop_value("beta")
                argument = {power: alpha * value for power, value in argument.items()}
                argument[0] = argument.get(0, 0.0) + beta
            self.gate = Gate("clip", argument, low, high)
        else:
            kind = {graph.ErfOp: "erf", graph.TanhOp: "tanh", graph.SigmoidOp: "sigmoid"}[type(op)]
            self.gate = Gate(kind, polynomial(self.read(op.input)))
        return {(0, True): 1.0}


# -------------------------------------------------------------------- recognizing


@dataclass(frozen=True)
class Comparer:
    tolerance: float

    def close(self, got: float, expected: float) -> bool:
        return abs(got - expected) <= self.tolerance * abs(expected) + ABSOLUTE_TOLERANCE

    def equal(self, got: dict, expected: dict) -> bool:
        return all(self.close(got.get(key, 0.0), expected.get(key, 0.0)) for key in {*got, *expected})


Activation = tuple[str, Callable[[SSAValue], Operation]]
"""The statistics name and a builder of the op on x."""


def recognize(expression: Expression, gate: Gate | None, compare: Comparer) -> Activation | None:
    """The activation `expression` (in x, with `gate`) computes, if it is one."""
    if gate is None:
        return None
    half_x_times_one_plus_gate = {(1, False): 0.5, (1, True): 0.5}
    if gate.kind == "erf":
        # 0.5 x (1 + erf(x / sqrt 2))
        if compare.equal(expression, half_x_times_one_plus_gate) and compare.equal(gate.argument, {1: SQRT_HALF}):
            return "gelu", lambda x: graph.GeluOp(x, "none")
    elif gate.kind == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        argument = {1: SQRT_2_OVER_PI, 3: SQRT_2_OVER_PI * TANH_GELU_CUBIC}
        if compare.equal(expression, half_x_times_one_plus_gate) and compare.equal(gate.argument, argument):
            return "gelu_tanh", lambda x: graph.GeluOp(x, "tanh")
    elif gate.kind == "sigmoid":
        # x sigmoid(x)
        if compare.equal(expression, {(1, True): 1.0}) and compare.equal(gate.argument, {1: 1.0}):
            return "silu", graph.SiluOp
    elif gate.kind == "clip":
        # k x clip(a1 x + a0, low, high) = x clip(x / 6 + 1/2, 0, 1) exactly when low = 0,
        # k high = 1, k a1 = 1/6 and k a0 = 1/2 (k > 0): x * Relu6(x + 3) / 6 and
        # x * HardSigmoid(x, alpha = 1/6) are such.
        k = expression.get((1, True), 0.0)
        if (
            k > 0.0
            and compare.equal(expression, {(1, True): k})
            and math.isfinite(gate.high)
            and compare.close(gate.low, 0.0)
            and compare.close(k * gate.high, 1.0)
            and compare.equal({p: k * c for p, c in gate.argument.items()}, {1: 1.0 / 6.0, 0: 0.5})
        ):
            return "hardswish", graph.HardSwishOp
    return None


@dataclass
class RecognizeActivation(RewritePattern):
    """A decomposed activation rooted at `op` -> its single op on x."""

    owner: ModulePass

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ROOTS) or not graph.is_float(op.output.type.element_type):
            return
        reader = Reader(op)
        try:
            expression = reader.read_root()
        except NoMatch:
            return
        if reader.x is None:
            return
        found = recognize(expression, reader.gate, Comparer(element_tolerance(op.output.type.element_type)))
        if found is None:
            return
        kind, build = found
        new = build(reader.x)
        new.location = op.location
        new.output.name_hint = op.output.name_hint
        rewriter.replace(op, [new], [new.output])
        # Each consumed op had one user, which comes before it in `ops`: erase in order.
        for consumed in reader.ops[1:]:
            if not consumed.results[0].uses:
                rewriter.erase(consumed)
        for constant in dict.fromkeys(reader.constants):
            if constant.parent is not None and not constant.results[0].uses:
                rewriter.erase(constant)
        statistics.count(self.owner, f"{kind} recognized")


@dataclass(frozen=True)
class RecognizeActivationsPass(ModulePass):
    """Rewrites decomposed GELU (erf and tanh forms), SiLU and HardSwish into
    `graph.gelu` (approximate none / tanh), `graph.silu` and `graph.hardswish`.

    Requires: graph-level IR, with constant subexpressions folded (fold-constants: a
    `Div` by `Sqrt(2)` must see the constant 1.414...).
    Guarantees: every expression rooted at a `graph.mul`, `div`, `add` or `sub` that
    computes, up to a relative tolerance of 1e-3 (or the element type's epsilon) in its
    constants,
    - `0.5 x (1 + erf(x / sqrt 2))`                          -> `graph.gelu`
    - `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`      -> `graph.gelu {approximate = "tanh"}`
    - `x sigmoid(x)`                                          -> `graph.silu`
    - `x clip(x / 6 + 1/2, 0, 1)`, as `x hardsigmoid(x)` with alpha 1/6 or
      `x clip(x + 3, 0, 6) / 6` (Relu6 as Clip, or Relu then Clip)  -> `graph.hardswish`
    through add, sub, mul, neg, division by a splat constant and pow by 1..6, in any
    operand order, where every intermediate value is used by that expression alone and
    has the result's type, is replaced by the single op on x; its intermediate ops, and
    constants nothing else uses, are erased. Anything else is left alone; a `graph.erf`
    left over gets a note. The module computes the same function (to the rounding of
    the constants).
    Statistics: "gelu recognized", "gelu_tanh recognized", "silu recognized",
    "hardswish recognized".
    """

    name = "recognize-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RecognizeActivation(self)).rewrite_module(op)
        for erf in op.walk():
            if isinstance(erf, graph.ErfOp):
                statistics.note(
                    self,
                    f"left {where(erf)} alone: not part of a GELU 0.5 x (1 + erf(x / sqrt 2)) "
                    "whose intermediate values have no other users",
                )
