"""Every data-movement and elementwise kernel family (boltir/backends/cuda/codegen/
data_kernels.py) as cases: one op-level op each, with how to draw its inputs. `prepare`
parses (and fuses) a case, `build_library` compiles all of them into one shared library,
`run_on_gpu` launches one through ctypes on torch tensors (optionally one element off its
16-byte alignment), and `compare` holds it to the op-level interpreter's result: ‖Δ‖/‖ref‖
< 1e-2 for f16/bf16, 1e-5 for f32/f64, exact (bit for bit) for integers, booleans and data
movement. `python3 -m bench.check_data_kernels` runs them all on the GPU;
tests/backends/test_data_kernels.py runs each as a `gpu` test.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from boltir.backends.cuda.codegen import data_kernels
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.dialects import op as ops
from boltir.dialects.shapes import broadcast_shapes, slice_shape
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, input_names
from boltir.ir import make_context, parse_module, verify_module
from boltir.passes.fuse_elementwise import FuseElementwisePass
from tests.support.torch_arrays import to_torch

FLOATS = ("f16", "bf16", "f32", "f64")


def tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}{element}>"


@dataclass
class Case:
    label: str
    text: str
    fuse: bool = False
    """Run fuse-elementwise first: the kernel and the reference are the fused op's (the pass
    rounds once where the chain rounded per op; its own tests check that)."""
    domains: dict[str, Callable] = field(default_factory=dict)
    """Per argument name, how to draw its values (default: `draw`)."""
    # filled by prepare()
    module: object = None
    op: object = None


def func(args: list[tuple[str, tuple, str]], op_line: str, out: str) -> str:
    params = ", ".join(f"%{n}: {tensor(s, e)}" for n, s, e in args)
    return f"func.func @main({params}) -> {out} {{\n  %0 = {op_line}\n  func.return %0 : {out}\n}}\n"


# ----------------------------------------------------------------- input values


def draw(rng: np.random.Generator, shape, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -120), min(info.max, 120), shape, endpoint=True).astype(dtype)
    return rng.uniform(-3.0, 3.0, shape).astype(dtype)


def positive(rng, shape, dtype):
    return rng.uniform(0.1, 3.0, shape).astype(dtype)


def away_from_zero(rng, shape, dtype):
    return (rng.uniform(0.5, 3.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)


def full_range(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


def small(rng, shape, dtype):
    return rng.integers(0, 5, shape).astype(dtype)


def indices(n: int) -> Callable:
    return lambda rng, shape, dtype: rng.integers(-n, n, shape).astype(dtype)


# ------------------------------------------------------------------------ cases


def unary(fn: str, shape, element: str, args: str = "", domain: Callable | None = None) -> Case:
    attr = f" {{args = array<f64: {args}>}}" if args else ""
    text = func([("x", shape, element)], f"op.unary {fn} %x{attr} : {tensor(shape, element)}", tensor(shape, element))
    return Case(f"unary {fn}{f'({args})' if args else ''} {element} {'x'.join(map(str, shape))}", text,
                domains={"x": domain} if domain else {})


def binary(fn: str, a_shape, b_shape, element: str, **domains: Callable) -> Case:
    a, b = a_shape, b_shape
    out = broadcast_shapes(a, b)
    result = tensor(out, "i1" if fn in ops.COMPARISON_FUNCTIONS else element)
    text = func([("a", a, element), ("b", b, element)],
                f"op.binary {fn} %a, %b : ({tensor(a, element)}, {tensor(b, element)}) -> {result}", result)
    return Case(f"binary {fn} {element} {'x'.join(map(str, a))} , {'x'.join(map(str, b)) or 'scalar'}", text, domains=domains)


def cast(shape, source: str, target: str, domain: Callable | None = None) -> Case:
    text = func([("x", shape, source)], f"op.cast %x : {tensor(shape, source)} to {tensor(shape, target)}", tensor(shape, target))
    return Case(f"cast {source}->{target} {'x'.join(map(str, shape))}", text, domains={"x": domain} if domain else {})


def elementwise(label: str, args: list[tuple[str, tuple, str]], out: tuple, out_element: str, body: str, **kw) -> Case:
    block_args = ", ".join(f"%{n}e: {e}" for n, _, e in args)
    types = ", ".join(tensor(s, e) for _, s, e in args)
    op_line = (
        f"op.elementwise ({', '.join('%' + n for n, _, _ in args)}) {{\n  ^bb0({block_args}):\n{body}\n  }} : "
        f"({types}) -> {tensor(out, out_element)}"
    )
    return Case(label, func(args, op_line, tensor(out, out_element)), **kw)


def chain(label: str, args: list[tuple[str, tuple, str]], lines: list[str], out: str, **kw) -> Case:
    """An op-level chain that fuse-elementwise turns into one op.elementwise."""
    params = ", ".join(f"%{n}: {tensor(s, e)}" for n, s, e in args)
    body = "\n".join(f"  {line}" for line in lines)
    text = f"func.func @main({params}) -> {out} {{\n{body}\n  func.return %r : {out}\n}}\n"
    return Case(label, text, fuse=True, **kw)


def layout(shape, perm, element: str) -> Case:
    out = tuple(shape[p] for p in perm)
    text = func([("x", shape, element)],
                f"op.layout_transform %x {{perm = array<i64: {', '.join(map(str, perm))}>}} : {tensor(shape, element)} -> {tensor(out, element)}",
                tensor(out, element))
    return Case(f"layout_transform {element} {'x'.join(map(str, shape))} perm {list(perm)}", text)


def pad(shape, pads, element: str, mode: str = "constant", value: float | None = None) -> Case:
    rank = len(shape)
    out = tuple(d + pads[i] + pads[i + rank] for i, d in enumerate(shape))
    attrs = f"pads = array<i64: {', '.join(map(str, pads))}>, mode = \"{mode}\"" + (f", value = {value} : f64" if value is not None else "")
    text = func([("x", shape, element)], f"op.pad %x {{{attrs}}} : {tensor(shape, element)} -> {tensor(out, element)}", tensor(out, element))
    return Case(f"pad {mode} {element} {'x'.join(map(str, shape))} pads {list(pads)}", text)


def slice_(shape, starts, ends, axes, steps, element: str) -> Case:
    out = slice_shape(tuple(shape), starts, ends, axes, steps)
    arrays = ", ".join(f"{n} = array<i64: {', '.join(map(str, v))}>" for n, v in
                       (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)))
    text = func([("x", shape, element)], f"op.slice %x {{{arrays}}} : {tensor(shape, element)} -> {tensor(out, element)}", tensor(out, element))
    return Case(f"slice {element} {'x'.join(map(str, shape))} [{starts}:{ends}:{steps} on {axes}]", text)


def concat(shapes, axis: int, element: str) -> Case:
    a = axis % len(shapes[0])
    out = list(shapes[0])
    out[a] = sum(s[a] for s in shapes)
    args = [(f"x{i}", s, element) for i, s in enumerate(shapes)]
    types = ", ".join(tensor(s, element) for s in shapes)
    text = func(args, f"op.concat {', '.join('%x' + str(i) for i in range(len(shapes)))} {{axis = {axis} : i64}} : ({types}) -> {tensor(out, element)}",
                tensor(out, element))
    return Case(f"concat {element} {' + '.join('x'.join(map(str, s)) for s in shapes)} axis {axis}", text)


def reshape(shape, out, element: str) -> Case:
    text = func([("x", shape, element)], f"op.reshape %x : {tensor(shape, element)} -> {tensor(out, element)}", tensor(out, element))
    return Case(f"reshape {element} {'x'.join(map(str, shape))} -> {'x'.join(map(str, out)) or 'scalar'}", text)


def gather(shape, index_shape, axis: int, element: str, index_element: str = "i64") -> Case:
    a = axis % len(shape)
    out = tuple(shape[:a]) + tuple(index_shape) + tuple(shape[a + 1 :])
    text = func([("data", shape, element), ("ids", index_shape, index_element)],
                f"op.gather %data, %ids {{axis = {axis} : i64}} : ({tensor(shape, element)}, {tensor(index_shape, index_element)}) -> {tensor(out, element)}",
                tensor(out, element))
    return Case(f"gather {element} {'x'.join(map(str, shape))} by {index_element} {'x'.join(map(str, index_shape)) or 'scalar'} axis {axis}",
                text, domains={"ids": indices(shape[a])})


def resize(shape, scales, element: str, mode: str, coordinate: str, nearest: str = "round_prefer_floor", out=None,
           extra: str = "") -> Case:
    out = out or tuple(int(math.floor(d * s)) for d, s in zip(shape, scales))
    attrs = (
        f"scales = array<f64: {', '.join(map(str, map(float, scales)))}>, mode = \"{mode}\", "
        f"coordinate_transformation_mode = \"{coordinate}\", nearest_mode = \"{nearest}\"{extra}"
    )
    text = func([("x", shape, element)], f"op.resize %x {{{attrs}}} : {tensor(shape, element)} -> {tensor(out, element)}", tensor(out, element))
    what = f"{mode}{'/' + nearest if mode == 'nearest' else ''}"
    return Case(f"resize {what} {coordinate} {element} {'x'.join(map(str, shape))} -> {'x'.join(map(str, out))}{' ' + extra.strip(', ') if extra else ''}", text)


def space_to_depth(shape, block: int, source: str, target: str, *, layout: str = "NCHW", result_layout: str = "NHWC",
                   pads=(0, 0, 0, 0), channels: int | None = None) -> Case:
    """op.space_to_depth of `shape` (in `layout`), padded, blocked, written in
    `result_layout` on `channels` (default C·b²) of `target`."""
    n, c, h, w = shape if layout == "NCHW" else (shape[0], shape[3], shape[1], shape[2])
    rows, cols = (h + pads[0] + pads[2]) // block, (w + pads[1] + pads[3]) // block
    channels = channels or c * block * block
    out = (n, channels, rows, cols) if result_layout == "NCHW" else (n, rows, cols, channels)
    attrs = (f"blocksize = {block} : i64, layout = \"{layout}\", result_layout = \"{result_layout}\", "
             f"pads = array<i64: {', '.join(map(str, pads))}>")
    text = func([("x", shape, source)], f"op.space_to_depth %x {{{attrs}}} : {tensor(shape, source)} -> {tensor(out, target)}",
                tensor(out, target))
    return Case(f"space_to_depth {source}->{target} {'x'.join(map(str, shape))} {layout}->{result_layout} block {block} "
                 f"pads {list(pads)} -> {channels} channels", text)


ACTIVATIONS = [
    ("relu", "", None), ("clip", "0.0, 6.0", None), ("gelu", "", None), ("gelu_tanh", "", None), ("sigmoid", "", None),
    ("silu", "", None), ("hardswish", "", None), ("tanh", "", None), ("leaky_relu", "0.1", None),
    ("hardsigmoid", "0.2, 0.5", None), ("identity", "", None), ("erf", "", None), ("sqrt", "", positive),
    ("exp", "", None), ("neg", "", None), ("reciprocal", "", away_from_zero),
]


def cases() -> list[Case]:
    out: list[Case] = []
    # ---- op.unary: every function on f16 (odd size: one element per thread), and on
    # bf16 / f32 with a vectorizable innermost extent.
    for fn, args, domain in ACTIVATIONS:
        out.append(unary(fn, (3, 37, 5), "f16", args, domain))
    for fn, args, domain in ACTIVATIONS[:10]:
        out.append(unary(fn, (4, 64), "bf16", args, domain))
        out.append(unary(fn, (2, 3, 128), "f32", args, domain))
    out.append(unary("gelu", (1000,), "f64"))
    out.append(unary("relu", (7, 9), "i32"))
    out.append(unary("neg", (64,), "i64"))
    out.append(unary("clip", (4, 33), "i32", "-3.5, 7.2"))
    out.append(unary("clip", (128,), "i8", "-1000.0, 50.0", full_range))
    # ---- op.binary: broadcasting both ways, scalars, every function, integers.
    out.append(binary("add", (2, 1, 64), (64,), "f16"))
    out.append(binary("add", (8, 16, 16, 40), (40,), "f16"))
    out.append(binary("sub", (3, 5, 7), (), "bf16"))
    out.append(binary("mul", (33, 7), (33, 1), "f32"))
    out.append(binary("mul", (4, 1, 6), (1, 5, 1), "f32"))
    out.append(binary("div", (17, 19), (17, 19), "f32", b=away_from_zero))
    out.append(binary("div", (2, 256), (256,), "f16", b=away_from_zero))
    out.append(binary("pow", (5, 24), (24,), "f32"))
    out.append(binary("equal", (6, 32), (32,), "f16"))
    # comparisons (ties and NaN: false in every one) and the logical ops on i1
    out.append(binary("greater", (6, 32), (32,), "f16", a=with_nans, b=with_nans))
    out.append(binary("greater_equal", (4, 33), (33,), "f32", a=with_nans, b=with_nans))
    out.append(binary("less", (3, 64), (), "bf16", a=with_nans, b=with_nans))
    out.append(binary("less_equal", (5, 7), (5, 1), "f64", a=with_nans, b=with_nans))
    out.append(binary("greater_equal", (2, 128), (128,), "i64", a=small, b=small))
    out.append(binary("less", (8, 40), (40,), "i8", a=full_range, b=full_range))
    out.append(binary("greater", (4, 48), (48,), "ui8", a=full_range, b=full_range))
    out.append(binary("less_equal", (3, 7, 16), (7, 1), "i1"))
    out.append(binary("greater", (3, 7, 16), (16,), "i1"))
    for fn in ("and", "or", "xor"):
        out.append(binary(fn, (3, 7, 16), (7, 1), "i1"))
    out.append(unary("not", (5, 64), "i1"))
    out.append(binary("div", (4, 33), (33,), "i32"))
    out.append(binary("add", (8, 64), (64,), "i8", a=full_range, b=full_range))
    out.append(binary("mul", (3, 50), (3, 50), "i64"))
    out.append(binary("pow", (3, 20), (20,), "i32", a=lambda rng, s, d: rng.integers(-6, 7, s).astype(d), b=small))
    out.append(binary("add", (4, 48), (48,), "ui8", a=full_range, b=full_range))
    # ---- op.select and op.cast.
    args = [("c", (2, 1, 32), "i1"), ("a", (2, 4, 32), "f16"), ("b", (32,), "f16")]
    out.append(Case("select f16 2x1x32 , 2x4x32 , 32", func(args, "op.select %c, %a, %b : (tensor<2x1x32xi1>, tensor<2x4x32xf16>, tensor<32xf16>) -> tensor<2x4x32xf16>", "tensor<2x4x32xf16>")))
    args = [("c", (5, 7), "i1"), ("a", (5, 7), "i32"), ("b", (), "i32")]
    out.append(Case("select i32 5x7 , scalar", func(args, "op.select %c, %a, %b : (tensor<5x7xi1>, tensor<5x7xi32>, tensor<i32>) -> tensor<5x7xi32>", "tensor<5x7xi32>")))
    for source, target, shape, domain in (
        ("f32", "f16", (4, 96), None), ("f16", "f32", (3, 41), None), ("f32", "bf16", (2, 64), None),
        ("bf16", "f16", (77,), None), ("f16", "bf16", (8, 8), None), ("f32", "i32", (5, 13), None),
        ("f16", "i8", (64,), None), ("i32", "f32", (3, 32), None), ("i64", "f16", (50,), None),
        ("i32", "bf16", (16,), lambda rng, s, d: rng.integers(-(2**30), 2**30, s).astype(d)),
        ("f32", "i1", (4, 16), None), ("i1", "f32", (4, 16), None), ("i32", "i8", (64,), full_range),
        ("i8", "i64", (10,), None), ("f64", "f16", (40,), None), ("f32", "f64", (9,), None),
        ("i32", "ui8", (32,), full_range), ("ui8", "f32", (24,), None),
    ):
        out.append(cast(shape, source, target, domain))
    # ---- op.elementwise, written by hand: broadcast bias + ReLU6 + residual (NHWC f16),
    # f16 arithmetic without extf (rounded per op), every cmpf predicate, integer bodies.
    out.append(elementwise(
        "elementwise f16 bias+relu6+residual 2x7x7x64", [("x", (2, 7, 7, 64), "f16"), ("b", (64,), "f16"), ("r", (2, 7, 7, 64), "f16")],
        (2, 7, 7, 64), "f16",
        "    %s = arith.addf %xe, %be : f16\n    %zero = arith.constant 0.0 : f16\n    %six = arith.constant 6.0 : f16\n"
        "    %lo = arith.maximumf %s, %zero : f16\n    %hi = arith.minimumf %lo, %six : f16\n"
        "    %o = arith.addf %hi, %re : f16\n    op.yield %o : f16"))
    out.append(elementwise(
        "elementwise f32 math zoo 3x5x11", [("x", (3, 5, 11), "f32"), ("y", (5, 1), "f32")], (3, 5, 11), "f32",
        "    %a = math.absf %xe : f32\n    %one = arith.constant 1.0 : f32\n    %p = arith.addf %a, %one : f32\n"
        "    %l = math.log %p : f32\n    %q = math.rsqrt %p : f32\n    %f = math.floor %xe : f32\n    %c = math.ceil %ye : f32\n"
        "    %w = math.powf %p, %ye : f32\n    %n = arith.negf %w : f32\n    %d = arith.divf %l, %q : f32\n"
        "    %s = arith.subf %d, %f : f32\n    %m = arith.mulf %s, %c : f32\n    %t = math.tanh %m : f32\n"
        "    %e = math.exp %t : f32\n    %r = arith.addf %e, %n : f32\n    op.yield %r : f32"))
    predicates = ["oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno"]
    body = "    %acc0 = arith.constant 0 : i32\n" + "".join(
        f"    %one{k} = arith.constant {1 << k} : i32\n    %zero{k} = arith.constant 0 : i32\n"
        f"    %c{k} = arith.cmpf {p}, %xe, %ye : f32\n    %s{k} = arith.select %c{k}, %one{k}, %zero{k} : i32\n"
        f"    %acc{k + 1} = arith.ori %acc{k}, %s{k} : i32\n" for k, p in enumerate(predicates))
    body += f"    op.yield %acc{len(predicates)} : i32"
    out.append(elementwise("elementwise cmpf predicates (with NaN) f32 -> i32 8x16", [("x", (8, 16), "f32"), ("y", (8, 16), "f32")],
                           (8, 16), "i32", body, domains={"x": with_nans, "y": with_nans}))
    out.append(elementwise(
        "elementwise integer zoo i32/i64/i8 4x40", [("x", (4, 40), "i32"), ("y", (40,), "i32")], (4, 40), "i8",
        "    %a = arith.addi %xe, %ye : i32\n    %m = arith.muli %a, %xe : i32\n    %d = arith.divsi %m, %ye : i32\n"
        "    %s = arith.subi %d, %ye : i32\n    %xr = arith.xori %s, %xe : i32\n    %n = arith.andi %xr, %ye : i32\n"
        "    %c = arith.cmpi ult, %n, %xe : i32\n    %mx = arith.maxsi %n, %ye : i32\n    %mn = arith.minsi %mx, %xe : i32\n"
        "    %w = arith.extsi %mn : i32 to i64\n    %k = arith.constant -3 : i64\n    %p = arith.muli %w, %k : i64\n"
        "    %sel = arith.select %c, %p, %w : i64\n    %t = arith.trunci %sel : i64 to i8\n    op.yield %t : i8",
        domains={"x": lambda rng, s, d: rng.integers(-2**20, 2**20, s).astype(d)}))
    out.append(elementwise(
        "elementwise f32<->int conversions 2x64", [("x", (2, 64), "f32"), ("i", (2, 64), "i16")], (2, 64), "bf16",
        "    %t = arith.fptosi %xe : f32 to i32\n    %w = arith.extsi %ie : i16 to i32\n    %s = arith.addi %t, %w : i32\n"
        "    %f = arith.sitofp %s : i32 to f32\n    %h = arith.truncf %f : f32 to bf16\n    op.yield %h : bf16",
        domains={"x": lambda rng, s, d: rng.uniform(-300, 300, s).astype(d)}))
    out.append(elementwise("elementwise identity broadcast 3x1 -> 2x3x4 f32", [("x", (3, 1), "f32")], (2, 3, 4), "f32",
                           "    op.yield %xe : f32"))
    out.append(elementwise("elementwise constant body (no inputs) f16 5x8", [], (5, 8), "f16",
                           "    %c = arith.constant 1.5 : f16\n    op.yield %c : f16"))
    out.append(elementwise("elementwise i1 logic 3x7x16", [("a", (3, 7, 16), "i1"), ("b", (7, 1), "i1")], (3, 7, 16), "i1",
                           "    %x = arith.xori %ae, %be : i1\n    %o = arith.ori %x, %ae : i1\n    %n = arith.andi %o, %be : i1\n"
                           "    op.yield %n : i1"))
    # ---- fuse-elementwise chains: what the pipeline produces.
    t = tensor((4, 8, 8, 64), "f16")
    out.append(chain("fused f16 add(bias) + gelu + mul(residual) 4x8x8x64",
                     [("x", (4, 8, 8, 64), "f16"), ("b", (64,), "f16"), ("res", (4, 8, 8, 64), "f16")],
                     [f"%0 = op.binary add %x, %b : ({t}, tensor<64xf16>) -> {t}", f"%1 = op.unary gelu %0 : {t}",
                      f"%r = op.binary mul %1, %res : ({t}, {t}) -> {t}"], t))
    t = tensor((3, 5, 33), "bf16")
    out.append(chain("fused bf16 silu + clip + cast f32 3x5x33", [("x", (3, 5, 33), "bf16")],
                     [f"%0 = op.unary silu %x : {t}", f"%1 = op.unary clip %0 {{args = array<f64: -0.5, 2.0>}} : {t}",
                      f"%r = op.cast %1 : {t} to tensor<3x5x33xf32>"], "tensor<3x5x33xf32>"))
    t = tensor((16, 24), "f32")
    out.append(chain("fused f32 select(equal) + hardswish + sqrt(abs) 16x24", [("x", (16, 24), "f32"), ("y", (24,), "f32")],
                     [f"%0 = op.binary equal %x, %y : ({t}, tensor<24xf32>) -> tensor<16x24xi1>",
                      f"%1 = op.unary hardswish %x : {t}",
                      f"%2 = op.select %0, %x, %1 : (tensor<16x24xi1>, {t}, {t}) -> {t}",
                      f"%3 = op.unary relu %2 : {t}", f"%r = op.unary sqrt %3 : {t}"], t))
    t, c = tensor((2, 12, 128), "f16"), tensor((2, 12, 128), "i1")
    out.append(chain("fused attention mask: select(or(and(greater_equal, not), less)) f16 2x12x128",
                     [("i", (12, 1), "i64"), ("j", (128,), "i64"), ("m", (2, 1, 128), "i1"), ("x", (2, 12, 128), "f16"), ("f", (), "f16")],
                     ["%0 = op.binary greater_equal %i, %j : (tensor<12x1xi64>, tensor<128xi64>) -> tensor<12x128xi1>",
                      "%1 = op.unary not %m : tensor<2x1x128xi1>",
                      f"%2 = op.binary and %0, %1 : (tensor<12x128xi1>, tensor<2x1x128xi1>) -> {c}",
                      f"%3 = op.binary less %x, %f : ({t}, tensor<f16>) -> {c}",
                      f"%4 = op.binary or %2, %3 : ({c}, {c}) -> {c}",
                      f"%r = op.select %4, %x, %f : ({c}, {t}, tensor<f16>) -> {t}"], t,
                     domains={"i": small, "j": small}))
    # ---- layout_transform: NCHW <-> NHWC (tiled transposes, odd sizes), rows moved whole, 5-D, narrow types.
    out += [
        layout((2, 3, 17, 19), (0, 2, 3, 1), "f16"), layout((2, 7, 9, 40), (0, 3, 1, 2), "f32"),
        layout((1, 64, 56, 56), (0, 2, 3, 1), "f16"), layout((16, 3, 3, 3), (0, 2, 3, 1), "f16"),
        layout((4, 6, 8, 16), (1, 0, 2, 3), "f16"), layout((5, 33, 65), (2, 0, 1), "i8"), layout((3, 4), (1, 0), "f64"),
        layout((2, 3, 4, 5, 6), (4, 2, 0, 3, 1), "bf16"), layout((6, 10, 12), (1, 0, 2), "i1"), layout((8, 1, 24), (1, 2, 0), "i32"),
    ]
    # ---- pad: NHWC spatial (vectorized over C), channels 3 -> 4 (pad-alignment), every mode,
    # negative pads (crops), a fill value, reflections longer than the axis.
    out += [
        pad((2, 5, 7, 16), (0, 1, 2, 0, 0, 1, 2, 0), "f16"), pad((1, 9, 9, 3), (0, 0, 0, 0, 0, 0, 0, 1), "f16"),
        pad((3, 10), (2, 3, 1, 4), "f32", "reflect"), pad((2, 3), (5, 7, 4, 9), "f32", "reflect"), pad((4, 6, 8), (1, 2, 0, 3, 1, 0), "bf16", "edge"),
        pad((3, 5), (4, 2, 3, 6), "i32", "wrap"), pad((4, 12), (-1, 2, 1, -3), "f32", "constant", -1.5),
        pad((2, 8, 8, 32), (0, 2, 2, 0, 0, 2, 2, 0), "f32", "reflect"), pad((5, 5), (1, 1, 1, 1), "i8", "constant", 7.0),
        pad((6, 40), (0, -2, 0, -5), "f16", "edge"),
    ]
    # ---- slice: vectorized channel slices, negative steps, strides, clamped ends.
    out += [
        slice_((2, 96, 8), [32], [64], [1], [1], "f32"), slice_((2, 96, 8), [-1, 0], [-1000, 100], [1, 2], [-2, 2], "f32"),
        slice_((1, 4, 4, 24), [8], [16], [3], [1], "f16"), slice_((7, 13, 11), [1, 2, 3], [6, 12, 10], [0, 1, 2], [2, 3, 1], "bf16"),
        slice_((5, 64), [-3], [100], [0], [1], "i64"), slice_((9, 17), [8, 16], [-100, -100], [0, 1], [-3, -1], "i8"),
    ]
    # ---- concat: NHWC channels (vectorized), odd widths, leading axis, many inputs.
    out += [
        concat([(1, 8, 8, 16), (1, 8, 8, 8), (1, 8, 8, 24)], -1, "f16"), concat([(3, 5), (3, 7)], 1, "f32"),
        concat([(2, 4), (5, 4), (1, 4)], 0, "i32"), concat([(2, 3, 8)] * 5, 1, "bf16"), concat([(4, 6), (4, 2)], 1, "i1"),
    ]
    # ---- reshape (a device copy).
    out += [reshape((2, 64, 1, 1), (2, 64), "f16"), reshape((3, 5, 7), (105,), "f32"), reshape((6, 7), (42,), "i1"),
            reshape((1,), (), "i64")]
    # ---- gather: embeddings (vectorized rows), a scalar index, i32 indices, the last axis.
    out += [
        gather((50, 32), (2, 8), 0, "f16"), gather((2, 8, 32), (), 1, "f32"), gather((30, 7), (5,), 0, "bf16", "i32"),
        gather((4, 6, 10), (3,), -1, "f32"), gather((3, 100), (2, 2), 1, "i64", "i32"),
    ]
    # ---- resize: every mode and coordinate transformation.
    for nearest in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        out.append(resize((1, 5, 7, 8), (1, 2.0, 1.5, 1), "f16", "nearest", "asymmetric", nearest))
    for coordinate in ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"):
        out.append(resize((2, 6, 5, 16), (1, 2.0, 2.0, 1), "f16", "linear", coordinate))
        out.append(resize((1, 3, 9, 7), (1, 1, 0.5, 1.75), "f32", "cubic", coordinate))
        out.append(resize((1, 2, 7, 5), (1, 1, 1.5, 2.5), "f32", "nearest", coordinate))
    out.append(resize((1, 4, 6, 6), (1, 1, 2.0, 2.0), "bf16", "linear", "half_pixel"))
    out.append(resize((2, 8, 8, 4), (1, 0.5, 0.5, 1), "f32", "linear", "half_pixel"))
    out.append(resize((1, 6, 6, 8), (1, 1.5, 1.5, 1), "f16", "cubic", "half_pixel", extra=", cubic_coeff_a = -0.5 : f32, exclude_outside"))
    out.append(resize((1, 3, 10, 10), (1, 1, 0.7, 0.7), "f32", "linear", "tf_crop_and_resize", out=(1, 3, 7, 7),
                      extra=", roi = array<f64: 0.0, 0.0, -0.2, 0.1, 1.0, 1.0, 0.9, 1.3>, extrapolation_value = 2.5 : f32"))
    out.append(resize((1, 3, 10, 10), (1, 1, 0.7, 0.7), "f16", "nearest", "tf_crop_and_resize", out=(1, 3, 7, 7),
                      extra=", roi = array<f64: 0.0, 0.0, -0.2, 0.1, 1.0, 1.0, 0.9, 1.3>, extrapolation_value = -1.0 : f32"))
    out.append(resize((40, 30), (1.6, 2.5), "f64", "cubic", "align_corners"))
    # ---- space_to_depth: the blocked stems' inputs as fuse-space-to-depth makes them (the f32
    # NCHW image cast, padded, blocked and written NHWC f16 on 16 channels: ResNet-50's
    # and MobileNetV2's at N = 32), small odd and cropped ones, a copy, a wide pixel.
    out += [
        space_to_depth((32, 3, 224, 224), 2, "f32", "f16", pads=(3, 3, 3, 3), channels=16),
        space_to_depth((32, 3, 224, 224), 2, "f32", "f16", pads=(1, 1, 1, 1), channels=16),
        space_to_depth((2, 3, 9, 7), 2, "f32", "f16", pads=(1, 1, 0, 2), channels=16),
        space_to_depth((3, 11, 10, 3), 2, "f32", "bf16", layout="NHWC", pads=(1, 1, -2, 1), channels=16),
        space_to_depth((2, 3, 9, 7), 2, "f16", "f16", result_layout="NCHW", pads=(1, 0, 0, 1)),
        space_to_depth((2, 3, 9, 7), 2, "f16", "f16", pads=(1, 1, -2, 0)),  # bits copied, cropped
        space_to_depth((1, 2, 19, 21), 4, "f64", "f32", pads=(2, 2, -1, -3), channels=40),
        space_to_depth((2, 8, 8, 16), 2, "f16", "f16", layout="NHWC"),
        # a vision transformer's patch embedding: 16×16 blocks of 3 channels, 768 wide pixels
        space_to_depth((32, 3, 224, 224), 16, "f32", "f16"),
        space_to_depth((2, 3, 32, 48), 16, "f32", "bf16"),
    ]
    return out


def with_nans(rng, shape, dtype):
    x = rng.integers(-2, 3, shape).astype(dtype)  # many ties, to exercise equality
    x[rng.random(shape) < 0.2] = np.nan
    return x


# ------------------------------------------------------------------ preparation


def prepare(case: Case) -> Case:
    ctx = make_context()
    case.module = parse_module(case.text, f"<{case.label}>", ctx=ctx)
    if case.fuse:
        FuseElementwisePass().apply(ctx, case.module)
        verify_module(case.module)
    body = [o for o in find_entry(case.module).body.ops if type(o) in data_kernels.FAMILIES]
    if len(body) != 1:
        raise RuntimeError(f"expected one data op, got {', '.join(o.name for o in body) or 'none'}")
    case.op = body[0]
    data_kernels.emit_instance(case.op)  # unsupported ops fail here, before any build
    return case


def describe(case: Case) -> str:
    key = data_kernels.instance_key(case.op)
    vector = key.split("vector=")[1].split()[0] if "vector=" in key else "-"
    tiled = " tiled" if " tiled" in key else ""
    return f"{data_kernels.kernel_name(case.op)} v{vector}{tiled}"


def build_library(prepared: list[Case], path: str) -> ctypes.CDLL:
    """One translation unit per family (they compile in parallel), one library."""
    by_family: dict[str, list] = {}
    for case in prepared:
        by_family.setdefault(data_kernels.family(case.op), []).append(case.op)
    jobs = [CompileJob(f"data_{kind}", data_kernels.emit_translation_unit(ops_), "sm80") for kind, ops_ in by_family.items()]
    return ctypes.CDLL(str(build_shared_library(jobs, path, progress="always")))


# ----------------------------------------------------------------------- running


def exact_case(case: Case) -> bool:
    out = case.op.results[0].type.element_type
    if data_kernels.family(case.op) not in ("elementwise", "resize"):
        return True
    if isinstance(case.op, ops.ResizeOp) and case.op.prop_value("mode") == "nearest":
        return True
    return str(out) not in FLOATS


def tolerance(case: Case) -> float:
    return 1e-2 if str(case.op.results[0].type.element_type) in ("f16", "bf16") else 1e-5


def _torch_dtype(dtype: np.dtype):
    import torch

    return torch.bfloat16 if dtype.name == "bfloat16" else getattr(torch, dtype.name)  # float16, bool, int8, ...


def _device_copy(array: np.ndarray, offset: int):
    """A device buffer holding `array` `offset` elements past its (256-byte aligned) start."""
    import torch

    flat = to_torch(np.ascontiguousarray(array).reshape(-1))
    buffer = torch.zeros(flat.numel() + offset, dtype=flat.dtype, device="cuda")
    buffer[offset:].copy_(flat)
    return buffer, buffer.data_ptr() + offset * buffer.element_size()


def _to_numpy(tensor, dtype: np.dtype) -> np.ndarray:
    import torch

    if dtype.name == "bfloat16":
        return tensor.view(torch.int16).cpu().numpy().view(dtype)
    return tensor.cpu().numpy()


def run_on_gpu(library: ctypes.CDLL, case: Case, inputs: dict[str, np.ndarray], offset: int) -> np.ndarray:
    import torch

    # the op's operands are its function's arguments: prepare() checked there is one op
    names = dict(zip(case.op.parent_block().args, input_names(find_entry(case.module)), strict=True))
    keep, pointers = [], []
    for value in data_kernels.launch_operands(case.op)[:-1]:
        buffer, pointer = _device_copy(inputs[names[value]], offset)
        keep.append(buffer)
        pointers.append(pointer)
    out_type = case.op.results[0].type
    out_dtype = numpy_dtype(out_type.element_type)
    count = math.prod(out_type.get_shape())
    output = torch.full((count + offset,), 0, dtype=_torch_dtype(out_dtype), device="cuda")
    pointers.append(output.data_ptr() + offset * output.element_size())
    launcher = getattr(library, data_kernels.kernel_name(case.op))
    launcher.restype = ctypes.c_int
    launcher.argtypes = [ctypes.c_void_p] * (len(pointers) + 1)
    status = launcher(*pointers, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    if status != 0:
        raise RuntimeError(f"the launcher returned {status}")
    return _to_numpy(output[offset:], out_dtype).reshape(tuple(out_type.get_shape()))


def compare(case: Case, got: np.ndarray, ref: np.ndarray) -> tuple[float, bool]:
    """(error, passed): bits that differ (exact cases) or the relative L2 error."""
    if exact_case(case):
        if got.dtype.kind in "fcV" or got.dtype.name == "bfloat16":
            a, b = got.view(f"u{got.dtype.itemsize}"), ref.view(f"u{ref.dtype.itemsize}")
        else:
            a, b = got, ref
        wrong = int(np.count_nonzero(a != b))
        return float(wrong), wrong == 0
    g, r = got.astype(np.float64), ref.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(r)):
        return float("inf"), False
    g, r = np.nan_to_num(g), np.nan_to_num(r)
    error = float(np.linalg.norm(g - r) / max(np.linalg.norm(r), 1e-30))
    return error, error < tolerance(case)


def random_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    entry = find_entry(case.module)
    values = {}
    for name, arg in zip(input_names(entry), entry.body.block.args, strict=True):
        dtype = numpy_dtype(arg.type.element_type)
        domain = case.domains.get(arg.name_hint, draw)  # domains are keyed by the IR's argument names
        values[name] = np.asarray(domain(rng, tuple(arg.type.get_shape()), dtype), dtype=dtype)
    return values
