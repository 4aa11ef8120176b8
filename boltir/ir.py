"""Contexts, parsing, verification and printing with every boltir dialect loaded, and
the entry function of a module with its model input and output names.

Everything here turns xDSL's exceptions into `BoltError`s that name a source location:
the parser attaches a `FileLineColLoc` to every op it reads, and the verifier reports the
location of the first op that fails.
"""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.ir import Dialect, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from boltir.diagnostics import BoltError, format_bytes, format_location
from boltir.dialects.cutlass import Cutlass
from boltir.dialects.graph import INPUT_NAME_ATTR, Graph
from boltir.dialects.op import Op
from boltir.weights import (
    WeightResources,
    intern_parsed_weights,
    module_weight_bytes,
    module_weight_count,
)


def make_builtin_dialect() -> Dialect:
    """A private copy of `builtin` with a per-context weight interface (see weights.py)."""
    return Dialect(
        "builtin", list(Builtin.operations), list(Builtin.attributes), [WeightResources()]
    )


def boltir_dialect_factories() -> dict[str, Callable[[], Dialect]]:
    """The dialects of boltir, by name, as factories (loaded lazily by a Context)."""
    return {
        "builtin": make_builtin_dialect,
        "func": lambda: Func,
        "arith": lambda: Arith,
        "math": lambda: Math,
        "graph": lambda: Graph,
        "op": lambda: Op,
        "cutlass": lambda: Cutlass,
    }


def make_context() -> Context:
    """A Context with every boltir dialect registered and a fresh weight interface."""
    ctx = Context()
    for name, factory in boltir_dialect_factories().items():
        ctx.register_dialect(name, factory)
    return ctx


def weight_resources(ctx: Context) -> WeightResources:
    interface = ctx.get_dialect("builtin").get_interface(WeightResources)
    if interface is None:
        raise BoltError("this context was not made by boltir.ir.make_context")
    return interface


class LocatingParser(Parser):
    """A Parser that gives every op it reads a `file:line:col` location."""

    def __init__(self, ctx: Context, text: str | bytes, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except (VerifyException, DiagnosticException) as error:
            # An attribute verifier that fails while the op is read has no span of its own.
            message = str(error.args[0]) if error.args else type(error).__name__
            raise ParseError(start, message) from error
        if isinstance(op.location, UnknownLoc):
            where = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(where.file), IntAttr(where.line + self._line_offset), IntAttr(where.col)
            )
        return op


def parse_error_to_bolt(error: ParseError, line_offset: int = 0) -> BoltError:
    where = error.span.get_location()
    return BoltError(error.msg, f"{where.file}:{where.line + line_offset}:{where.col}")


def parse_module(
    text: str | bytes,
    filename: str = "<string>",
    ctx: Context | None = None,
    *,
    line_offset: int = 0,
    verify: bool = True,
) -> ModuleOp:
    """Parses IR with every boltir dialect loaded, stores its weights, and verifies it."""
    ctx = ctx or make_context()
    try:
        module = LocatingParser(ctx, text, filename, line_offset).parse_module()
    except ParseError as error:
        raise parse_error_to_bolt(error, line_offset) from error
    intern_parsed_weights(module, weight_resources(ctx))
    if verify:
        verify_module(module)
    return module


def verify_module(module: Operation) -> None:
    """Verifies every op, raising a BoltError at the location of the first that fails."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as error:
            message = str(error.args[0]) if error.args else type(error).__name__
            message = message.removeprefix("Operation does not verify: ")
            raise BoltError(f"'{op.name}' op {message}", format_location(op.location)) from error


def print_module(
    module: Operation,
    ctx: Context | None = None,
    *,
    generic: bool = False,
    elide_weights: bool = False,
    debuginfo: bool = False,
    properties_as_attributes: bool = False,
) -> str:
    """Prints a module with its weights in a trailing `dialect_resources` section.

    With `elide_weights`, for people, the blobs are left out and a comment says how
    much was left out; such a printout parses, but its weights cannot be read."""
    ctx = ctx or make_context()
    resources = weight_resources(ctx)
    previous = resources.elide_larger_than
    resources.elide_larger_than = 0 if elide_weights else None
    try:
        out = StringIO()
        printer = Printer(
            stream=out,
            print_generic_format=generic,
            print_debuginfo=debuginfo,
            print_properties_as_attributes=properties_as_attributes,
        )
        printer.print_op(module)
        printer.print_metadata([ctx.get_dialect("builtin")])
        out.write("\n")
        if elide_weights and (count := module_weight_count(module)):
            noun = "weight" if count == 1 else "weights"
            out.write(f"// {count} {noun} elided ({format_bytes(module_weight_bytes(module))})\n")
        return out.getvalue()
    finally:
        resources.elide_larger_than = previous


# ------------------------------------------------------------------ the entry function

ENTRY_POINT = "main"


def find_entry(module: ModuleOp, name: str = ENTRY_POINT) -> func.FuncOp:
    """The function `@name` (`@main`) of `module`: what the interpreter and backends run."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise BoltError(f"the module has no function @{name} to run")


def _attr_names(attrs: ArrayAttr | None, count: int, prefix: str) -> list[str]:
    names = []
    for index in range(count):
        name = None
        if attrs is not None:
            entry = attrs.data[index].data
            if isinstance(entry.get(INPUT_NAME_ATTR), StringAttr):
                name = entry[INPUT_NAME_ATTR].data
        names.append(name or f"{prefix}{index}")
    return names


def input_names(entry: func.FuncOp) -> list[str]:
    """The model's input names, or `arg0`, `arg1`... where the IR gives none."""
    return _attr_names(entry.arg_attrs, len(entry.function_type.inputs), "arg")


def output_names(entry: func.FuncOp) -> list[str]:
    """The model's output names, or `result_0`, `result_1`... where the IR gives none."""
    return _attr_names(entry.res_attrs, len(entry.function_type.outputs), "result_")
