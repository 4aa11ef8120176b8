"""The op dialect's epilogue: what a GEMM or conv applies to its accumulator before
storing it, as one `#op.epilogue<...>` attribute, and the activations it may apply."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntAttr, StringAttr, TensorType
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from boltir.dialects.common import tensor_shape

ACTIVATION_ARITY: dict[str, int] = {
    "none": 0,
    "relu": 0,
    "clip": 2,  # min, max
    "gelu": 0,  # the erf form
    "gelu_tanh": 0,
    "sigmoid": 0,
    "silu": 0,
    "hardswish": 0,
    "tanh": 0,
    "leaky_relu": 1,  # alpha
    "hardsigmoid": 2,  # alpha, beta
}
"""The activations an epilogue applies, with how many float arguments each takes."""

UNBOUNDED = sys.float_info.max
"""Stands for a missing clip bound (clip's args are two floats): `-UNBOUNDED` for no
minimum, `UNBOUNDED` for no maximum."""

RESIDUAL_KINDS = ("none", "add", "mul")


def format_float(value: float) -> str:
    """A float as the IR parser reads it back: always with a decimal point (Python's
    `repr` writes 1e-05, which the MLIR lexer reads as the integer 1 and an identifier)."""
    text = repr(float(value))
    if not math.isfinite(value):
        raise VerifyException(f"epilogue values must be finite, got {text}")
    mantissa, exponent, power = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + exponent + power


@dataclass(frozen=True)
class Activation:
    kind: str = "none"
    args: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ACTIVATION_ARITY:
            raise VerifyException(f"unknown activation '{self.kind}'; known: {', '.join(ACTIVATION_ARITY)}")
        if len(self.args) != ACTIVATION_ARITY[self.kind]:
            arity = ACTIVATION_ARITY[self.kind]
            raise VerifyException(f"activation {self.kind} takes {arity} argument{'' if arity == 1 else 's'}, got {len(self.args)}")
        if not all(math.isfinite(a) for a in self.args):
            raise VerifyException(f"activation {self.kind} takes finite arguments, got {', '.join(map(repr, self.args))}")

    def __str__(self) -> str:
        if not self.args:
            return self.kind
        return f"{self.kind}({', '.join(format_float(a) for a in self.args)})"


def _parse_activation(parser: AttrParser) -> Activation:
    kind = parser.parse_identifier(context_msg=" (an activation)")
    args: list[float] = []
    if parser.parse_optional_punctuation("(") is not None:
        args.append(float(parser.parse_number()))
        while parser.parse_optional_punctuation(",") is not None:
            args.append(float(parser.parse_number()))
        parser.parse_punctuation(")")
    try:
        return Activation(kind, tuple(args))
    except VerifyException as error:
        parser.raise_error(str(error))


def _floats(values: Sequence[float]) -> ArrayAttr:
    return ArrayAttr([FloatAttr(float(v), 64) for v in values])


@irdl_attr_definition
class EpilogueAttr(ParametrizedAttribute):
    """What a GEMM or conv does to its accumulator before storing it:
    `act2(act(alpha * acc + beta * bias) <residual> residual)`.

    Printed as `#op.epilogue<alpha = 0.5, bias, relu, residual = add, then relu>`; every
    item is optional and `#op.epilogue<>` stores the accumulator as it is."""

    name = "op.epilogue"

    alpha: FloatAttr = param_def()
    beta: FloatAttr = param_def()
    bias: IntAttr = param_def()
    activation: StringAttr = param_def()
    activation_args: ArrayAttr = param_def()
    residual: StringAttr = param_def()
    activation2: StringAttr = param_def()
    activation2_args: ArrayAttr = param_def()

    @staticmethod
    def make(
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        bias: bool = False,
        activation: Activation = Activation(),
        residual: str = "none",
        activation2: Activation = Activation(),
    ) -> EpilogueAttr:
        return EpilogueAttr(
            FloatAttr(float(alpha), 64),
            FloatAttr(float(beta), 64),
            IntAttr(int(bias)),
            StringAttr(activation.kind),
            _floats(activation.args),
            StringAttr(residual),
            StringAttr(activation2.kind),
            _floats(activation2.args),
        )

    # Python views
    @property
    def has_bias(self) -> bool:
        return bool(self.bias.data)

    @property
    def first_activation(self) -> Activation:
        return Activation(self.activation.data, tuple(a.value.data for a in self.activation_args.data))

    @property
    def second_activation(self) -> Activation:
        return Activation(self.activation2.data, tuple(a.value.data for a in self.activation2_args.data))

    @property
    def residual_kind(self) -> str:
        return self.residual.data

    def with_changes(self, **changes) -> EpilogueAttr:
        fields = {
            "alpha": self.alpha.value.data,
            "beta": self.beta.value.data,
            "bias": self.has_bias,
            "activation": self.first_activation,
            "residual": self.residual_kind,
            "activation2": self.second_activation,
        }
        fields.update(changes)
        return EpilogueAttr.make(**fields)

    @property
    def is_identity(self) -> bool:
        return self == EpilogueAttr.make()

    def describe(self) -> list[str]:
        items = []
        if self.alpha.value.data != 1.0:
            items.append(f"alpha = {format_float(self.alpha.value.data)}")
        if self.beta.value.data != 1.0:
            items.append(f"beta = {format_float(self.beta.value.data)}")
        if self.has_bias:
            items.append("bias")
        if self.first_activation.kind != "none":
            items.append(str(self.first_activation))
        if self.residual_kind != "none":
            items.append(f"residual = {self.residual_kind}")
        if self.second_activation.kind != "none":
            items.append(f"then {self.second_activation}")
        return items

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{', '.join(self.describe())}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        fields: dict = {}
        parser.parse_punctuation("<")
        if parser.parse_optional_punctuation(">") is not None:
            return list(EpilogueAttr.make().parameters)
        while True:
            if parser.parse_optional_keyword("alpha") is not None:
                parser.parse_punctuation("=")
                key, value = "alpha", float(parser.parse_number())
            elif parser.parse_optional_keyword("beta") is not None:
                parser.parse_punctuation("=")
                key, value = "beta", float(parser.parse_number())
            elif parser.parse_optional_keyword("bias") is not None:
                key, value = "bias", True
            elif parser.parse_optional_keyword("residual") is not None:
                parser.parse_punctuation("=")
                key, value = "residual", parser.parse_keyword_in(("add", "mul"), " (residual kind)")
            elif parser.parse_optional_keyword("then") is not None:
                key, value = "activation2", _parse_activation(parser)
            else:
                key, value = "activation", _parse_activation(parser)
            if key in fields:
                what = {"activation": "an activation", "activation2": "a second activation"}.get(key, key)
                parser.raise_error(f"the epilogue has {what} twice")
            fields[key] = value
            if parser.parse_optional_punctuation(">") is not None:
                break
            parser.parse_punctuation(",")
        try:
            return list(EpilogueAttr.make(**fields).parameters)
        except VerifyException as error:
            parser.raise_error(str(error))

    def verify(self) -> None:
        if self.residual.data not in RESIDUAL_KINDS:
            raise VerifyException(f"residual must be one of {', '.join(RESIDUAL_KINDS)}, got '{self.residual.data}'")
        if self.activation2.data != "none" and self.residual.data == "none":
            raise VerifyException("a second activation needs a residual before it")
        for name in ("alpha", "beta"):
            if not math.isfinite(getattr(self, name).value.data):
                raise VerifyException(f"{name} must be finite, got {getattr(self, name).value.data!r}")
        self.first_activation, self.second_activation  # noqa: B018 -- validates kinds and arity


IDENTITY_EPILOGUE = EpilogueAttr.make()


def check_epilogue_operands(epilogue: EpilogueAttr, bias: SSAValue | None, residual: SSAValue | None, channels: int, out: TensorType) -> None:
    """The epilogue's bias and residual flags agree with the operands that are present."""
    if epilogue.has_bias != (bias is not None):
        raise VerifyException("the epilogue's bias flag and the bias operand disagree")
    if (epilogue.residual_kind != "none") != (residual is not None):
        raise VerifyException("the epilogue's residual and the residual operand disagree")
    if bias is not None and tensor_shape(bias.type) != (channels,):
        raise VerifyException(f"bias must have shape {channels}, got {bias.type}")
    if residual is not None and residual.type != out:
        raise VerifyException(f"residual type {residual.type} must be the output type {out}")
