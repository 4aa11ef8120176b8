"""Elementwise kernels: an `op.elementwise` region (or an `op.unary`, `op.binary`,
`op.select` or `op.cast`, seen as one) turned into one CUDA statement per scalar op, over
broadcast operands. Part of the data kernels (`data_kernels` dispatches here)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from boltir.backends.cuda.codegen.kernel_plan import (
    UNSIGNED,
    Element,
    KernelPlan,
    affine_expression,
    alignment_check,
    computed_element,
    coordinate_expressions,
    empty_plan,
    index_type_for,
    row_major_strides,
    static_shape,
    type_name_of,
    unsupported,
    vector_width_for,
)
from boltir.dialects import op as ops
from boltir.dialects.elementwise_body import BodyBuilder, as_elementwise
from boltir.dtypes import numpy_dtype

# ------------------------------------------------------------------- elementwise


def _binary_float(name: str) -> Callable[[str, list[str]], str]:
    return lambda reg, x: f"{'__f' if reg == 'float' else '__d'}{name}_rn({x[0]}, {x[1]})"


def _math(f32: str, f64: str) -> Callable[[str, list[str]], str]:
    return lambda reg, x: f"{f32 if reg == 'float' else f64}({', '.join(x)})"


FLOAT_OPS: dict[type, Callable[[str, list[str]], str]] = {
    arith.AddfOp: _binary_float("add"),
    arith.SubfOp: _binary_float("sub"),
    arith.MulfOp: _binary_float("mul"),
    arith.DivfOp: _binary_float("div"),
    math_dialect.SqrtOp: lambda reg, x: f"{'__fsqrt_rn' if reg == 'float' else '__dsqrt_rn'}({x[0]})",
    math_dialect.RsqrtOp: lambda reg, x: (
        f"__fdiv_rn(1.0f, __fsqrt_rn({x[0]}))" if reg == "float" else f"__ddiv_rn(1.0, __dsqrt_rn({x[0]}))"
    ),  # the interpreter's 1 / np.sqrt(x): two roundings, not rsqrtf's approximation
    math_dialect.ExpOp: _math("expf", "exp"),
    math_dialect.TanhOp: _math("tanhf", "tanh"),
    math_dialect.LogOp: _math("logf", "log"),
    math_dialect.ErfOp: _math("erff", "erf"),
    math_dialect.PowFOp: _math("powf", "pow"),
    math_dialect.FloorOp: _math("floorf", "floor"),
    math_dialect.CeilOp: _math("ceilf", "ceil"),
}
"""Float ops whose result is rounded to the result type (f16/bf16) after computing in
the register type."""

EXACT_OPS: dict[type, Callable[[str, list[str]], str]] = {
    arith.MaximumfOp: lambda reg, x: f"boltir_data::maximum({x[0]}, {x[1]})",
    arith.MinimumfOp: lambda reg, x: f"boltir_data::minimum({x[0]}, {x[1]})",
    arith.MaxSIOp: lambda reg, x: f"boltir_data::maximum({x[0]}, {x[1]})",
    arith.MinSIOp: lambda reg, x: f"boltir_data::minimum({x[0]}, {x[1]})",
    arith.NegfOp: lambda reg, x: f"(-{x[0]})",
    math_dialect.AbsFOp: _math("fabsf", "fabs"),
    arith.AddiOp: lambda reg, x: f"boltir_data::wrap_add({x[0]}, {x[1]})",
    arith.SubiOp: lambda reg, x: f"boltir_data::wrap_sub({x[0]}, {x[1]})",
    arith.MuliOp: lambda reg, x: f"boltir_data::wrap_mul({x[0]}, {x[1]})",
    arith.DivSIOp: lambda reg, x: f"boltir_data::div_trunc({x[0]}, {x[1]})",
    arith.AndIOp: lambda reg, x: f"({x[0]} & {x[1]})",
    arith.OrIOp: lambda reg, x: f"({x[0]} | {x[1]})",
    arith.XOrIOp: lambda reg, x: f"({x[0]} ^ {x[1]})",
    arith.SelectOp: lambda reg, x: f"({x[0]} ? {x[1]} : {x[2]})",
    math_dialect.IPowIOp: lambda reg, x: f"boltir_data::ipow({x[0]}, {x[1]})",
}
"""Ops whose result needs no rounding (a choice between operands, or integer math)."""

NOT_ON_BOOLEANS = (arith.SubiOp, arith.DivSIOp, math_dialect.IPowIOp)
"""numpy defines no boolean subtraction, division or power."""

CMPF = {
    0: "false",
    1: "({a} == {b})",  # oeq
    2: "({a} > {b})",  # ogt
    3: "({a} >= {b})",  # oge
    4: "({a} < {b})",  # olt
    5: "({a} <= {b})",  # ole
    6: "({a} < {b} || {a} > {b})",  # one
    7: "({a} == {a} && {b} == {b})",  # ord
    8: "!({a} < {b} || {a} > {b})",  # ueq
    9: "!({a} <= {b})",  # ugt
    10: "!({a} < {b})",  # uge
    11: "!({a} >= {b})",  # ult
    12: "!({a} > {b})",  # ule
    13: "({a} != {b})",  # une
    14: "({a} != {a} || {b} != {b})",  # uno
    15: "true",
}
"""arith.cmpf by predicate: C++'s comparisons are the ordered ones (false on NaN) and !=
the unordered one, so each predicate is one of them or a negation."""
CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}


def float_literal(value: float, reg: str) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    if reg == "float":
        text = str(np.float32(value))  # the shortest text that reads back as this f32
        text = text if ("e" in text or "." in text) else text + ".0"
        return f"({text}f)" if text.startswith("-") else f"{text}f"
    text = repr(float(value))
    text = text if ("e" in text or "." in text) else text + ".0"
    return f"({text})" if text.startswith("-") else text


class _BodyEmitter:
    """C++ for a scalar body: one `const T vN = expression;` per op."""

    def __init__(self, op: Operation, block: Block):
        self.op, self.block = op, block
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []

    def emit(self) -> tuple[list[str], list[str], str, str]:
        """(parameters, statements, result expression, result register type)."""
        params = []
        for i, arg in enumerate(self.block.args):
            self.names[arg] = f"a{i}"
            params.append(f"{computed_element(self.op, arg.type).reg} a{i}")
        for n, body_op in enumerate(self.block.ops):
            if isinstance(body_op, ops.YieldOp):
                result = body_op.operands[0]
                return params, self.lines, self.names[result], computed_element(self.op, result.type).reg
            if len(body_op.results) != 1:
                unsupported(self.op, f"the body op {body_op.name} must have one result")
            result_type = body_op.results[0].type
            element = computed_element(self.op, result_type)
            self.lines.append(f"const {element.reg} v{n} = {self.expression(body_op, element)};")
            self.names[body_op.results[0]] = f"v{n}"
        unsupported(self.op, "the body does not end in op.yield")

    def expression(self, body_op: Operation, element: Element) -> str:
        x = [self.names[o] for o in body_op.operands]
        operand_elements = [computed_element(self.op, o.type) for o in body_op.operands]
        if isinstance(body_op, arith.ConstantOp):
            return self.constant(body_op.value, body_op.results[0].type, element)
        if type(body_op) in FLOAT_OPS:
            return self.rounded(FLOAT_OPS[type(body_op)](element.reg, x), element)
        if type(body_op) in EXACT_OPS:
            if isinstance(body_op, NOT_ON_BOOLEANS) and element.name == "i1":
                unsupported(self.op, f"{body_op.name} on i1: numpy defines no boolean subtraction, division or power")
            return EXACT_OPS[type(body_op)](element.reg, x)
        if isinstance(body_op, arith.CmpfOp):
            return CMPF[body_op.predicate.value.data].format(a=x[0], b=x[1])
        if isinstance(body_op, arith.CmpiOp):
            predicate = body_op.predicate.value.data
            a, b = x
            unsigned = UNSIGNED.get(operand_elements[0].reg)
            if predicate >= 6 and unsigned:  # ult, ule, ugt, uge: the same bits read unsigned
                a, b = f"{unsigned}({a})", f"{unsigned}({b})"
            return f"({a} {CMPI[predicate]} {b})"
        return self.conversion(body_op, x[0] if x else "", operand_elements[0] if operand_elements else None, element)

    def conversion(self, body_op: Operation, x: str, source: Element | None, target: Element) -> str:
        # numpy's astype: value conversions (ints wrap, floats truncate toward zero).
        if isinstance(body_op, arith.ExtFOp):  # f16/bf16 already live in f32: exact
            return f"double({x})" if target.reg == "double" else x
        if isinstance(body_op, arith.TruncFOp | arith.SIToFPOp):
            if target.name in ("f16", "bf16"):
                # ints round once, from their exact f64 value (as ml_dtypes and numpy do)
                wide = f"double({x})" if isinstance(body_op, arith.SIToFPOp) else x
                return f"boltir_data::round_{target.name}({wide})"
            return f"{target.reg}({x})"
        if isinstance(body_op, arith.FPToSIOp):
            if target.name == "i1":
                return f"({'truncf' if source.reg == 'float' else 'trunc'}({x}) != 0)"
            return f"{target.reg}((long long)({x}))"  # through 64 bits: narrow targets wrap, as numpy's x86 casts do
        if isinstance(body_op, arith.ExtSIOp | arith.TruncIOp):
            return f"({x} != 0)" if target.name == "i1" else f"{target.reg}({x})"
        supported = sorted(
            {t.name for t in (*FLOAT_OPS, *EXACT_OPS)}
            | {"arith.constant", "arith.cmpf", "arith.cmpi", "arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi",
               "arith.extsi", "arith.trunci"}
        )
        unsupported(self.op, f"the body op {body_op.name} has no CUDA expression (supported: {', '.join(supported)})")

    def constant(self, value: Attribute, result_type: Attribute, element: Element) -> str:
        if not isinstance(value, FloatAttr | IntegerAttr):
            unsupported(self.op, f"arith.constant of {value} in the body: only scalar constants are supported")
        with np.errstate(all="ignore"):  # the interpreter's np.asarray(value, dtype=result type)
            scalar = np.asarray(value.value.data).astype(numpy_dtype(result_type))
        if element.name == "i1":
            return "true" if bool(scalar) else "false"
        if element.reg in ("float", "double"):
            return float_literal(float(scalar), element.reg)
        number = int(scalar)
        if number == -(2**63):
            return "int64_t(-9223372036854775807LL - 1)"
        return f"{element.reg}({number}{'ULL' if element.reg.startswith('u') else 'LL'})"

    @staticmethod
    def rounded(expression: str, element: Element) -> str:
        if element.name in ("f16", "bf16"):
            return f"boltir_data::round_{element.name}({expression})"
        return expression


def _integer_clip_block(op: ops.UnaryOp) -> Block:
    """op.unary clip on integers (which fuse-elementwise leaves alone), as the interpreter
    clips them: bounds ceil(low) and floor(high), clamped to the type's range."""
    element_type = op.input.type.element_type
    info = np.iinfo(numpy_dtype(element_type))
    low, high = op.prop_value("args")
    low = min(max(math.ceil(low), info.min), info.max) if math.isfinite(low) else info.min
    high = min(max(math.floor(high), info.min), info.max) if math.isfinite(high) else info.max
    block = Block(arg_types=[element_type])
    b = BodyBuilder(block)
    value = b.add(arith.MaxSIOp(block.args[0], b.const(low, element_type)))
    block.add_op(ops.YieldOp(b.add(arith.MinSIOp(value, b.const(high, element_type)))))
    return block


def _integer_pow_block(op: ops.BinaryOp) -> Block:
    element_type = op.lhs.type.element_type
    block = Block(arg_types=[element_type, element_type])
    block.add_op(power := math_dialect.IPowIOp(block.args[0], block.args[1]))
    block.add_op(ops.YieldOp(power.results[0]))
    return block


def _body_block(op: Operation) -> tuple[Block, Callable[[], None]]:
    """The scalar body that computes the op, and how to dispose of what was built for it.
    Standalone ops get fuse-elementwise's own body, so one generator serves both."""
    if isinstance(op, ops.ElementwiseOp):
        return op.body.block, lambda: None
    for value in (*op.operands, op.results[0]):
        computed_element(op, value)
    integer = type_name_of(op.operands[0]) not in ("f16", "bf16", "f32", "f64")
    if integer and isinstance(op, ops.UnaryOp) and op.fn.data == "clip":
        if type_name_of(op.input) == "i1":
            unsupported(op, "clip on i1: numpy has no integer range for booleans")
        return _integer_clip_block(op), lambda: None
    if integer and isinstance(op, ops.BinaryOp) and op.fn.data == "pow":
        return _integer_pow_block(op), lambda: None

    try:
        built = as_elementwise(op)
    except NotImplementedError as error:
        unsupported(op, f"no scalar form: {error}")
    return built.body.block, built.erase  # erase: the built op uses op's operands


def _broadcast(out: Sequence[int], inputs: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """The output's axes, merged where every input is either full or broadcast along
    both, and each input's element strides over them (0 where it broadcasts)."""
    rank = len(out)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in inputs]
    groups: list[tuple[int, tuple[bool, ...]]] = []
    for d in range(rank):
        if out[d] == 1:
            continue
        full = tuple(p[d] != 1 for p in padded)
        if groups and groups[-1][1] == full:
            groups[-1] = (groups[-1][0] * out[d], full)
        else:
            groups.append((out[d], full))
    if not groups:
        return [1], [[0] for _ in inputs]
    strides: list[list[int]] = []
    for i in range(len(inputs)):
        running, own = 1, []
        for extent, full in reversed(groups):
            own.append(running if full[i] else 0)
            running *= extent if full[i] else 1
        strides.append(own[::-1])
    return [g[0] for g in groups], strides


def elementwise_plan(op: Operation) -> KernelPlan:
    out_element = computed_element(op, op.results[0])
    in_elements = [computed_element(op, v) for v in op.operands]
    block, dispose = _body_block(op)
    try:
        params, lines, result, result_reg = _BodyEmitter(op, block).emit()
    finally:
        dispose()
    out_shape = static_shape(op.results[0])
    count = math.prod(out_shape)
    if count == 0:
        return empty_plan(op, "elementwise")
    extents, strides = _broadcast(out_shape, [static_shape(v) for v in op.operands])
    contiguous = row_major_strides(extents)
    vector_inputs = [s[-1] == 1 for s in strides]
    widest = max([out_element.size] + [e.size for e, v in zip(in_elements, vector_inputs) if v])
    vector = vector_width_for(widest, extents[-1])
    needs_coordinates = False
    inputs = []
    for i, (element, own, is_vector) in enumerate(zip(in_elements, strides, vector_inputs, strict=True)):
        if own == contiguous:
            offset, describe = "e", "the output's shape"
        elif not any(own):
            offset, describe = "0", "one element, broadcast"
        else:
            offset, describe = affine_expression(0, own), f"broadcast, strides [{', '.join(map(str, own))}]"
            needs_coordinates = True
        inputs.append({
            "type": element.name, "storage": element.storage, "reg": element.reg, "vector": is_vector,
            "offset": offset, "describe": describe,
        })
    index_type = index_type_for(out_shape, *(static_shape(v) for v in op.operands))
    aligned = alignment_check(
        [(f"in{i}", vector * e.size) for i, (e, v) in enumerate(zip(in_elements, vector_inputs)) if v]
        + [("out", vector * out_element.size)]
    )
    body_text = " ".join([f"({', '.join(params)})", *lines, f"return {result};"])
    key = (
        f"elementwise out={out_element.name}[{'x'.join(map(str, extents))}] "
        + " ".join(f"in{i}={e.name}[{','.join(map(str, s))}]" for i, (e, s) in enumerate(zip(in_elements, strides)))
        + f" vector={vector} index={index_type} body={body_text}"
    )
    return KernelPlan("elementwise", key, "elementwise.cu.j2", {
        "source_op": op.name + (f" {op.fn.data}" if isinstance(op, ops.UnaryOp | ops.BinaryOp) else ""),
        "out": {"type": out_element.name, "storage": out_element.storage},
        "inputs": inputs,
        "extents": extents,
        "count": count,
        "vector": vector,
        "index_type": index_type,
        "coordinates": coordinate_expressions(extents) if needs_coordinates else [],
        "body_params": params,
        "body_lines": lines,
        "body_result": result,
        "result_reg": result_reg,
        "aligned": aligned,
        "kernel_arguments": ", ".join(
            [f"static_cast<const {e.storage} *>(in{i})" for i, e in enumerate(in_elements)]
            + [f"static_cast<{out_element.storage} *>(out)"]
        ),
    })


