"""recognize-activations: decomposed GELU (erf, tanh), SiLU and HardSwish, in the forms
exporters write, become single ops; the module computes the same outputs on fresh
random inputs; near misses (a wrong constant, an intermediate with another user, a
broadcast that grows the result) are left alone. End to end, a Linear + decomposed GELU
+ Linear block imported from ONNX ends with the GELU in the first GEMM's epilogue."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from onnx import TensorProto
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.passes import statistics
from boltir.passes.fold_constants import FoldConstantsPass
from boltir.passes.recognize_activations import RecognizeActivationsPass
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.frontends.onnx_models import GraphBuilder
from tests.passes.equivalence import assert_equivalent, random_inputs, relative_error

PASS = RecognizeActivationsPass()
SQRT2 = math.sqrt(2.0)
C = math.sqrt(2.0 / math.pi)


class Ops:
    """Builds graph ops on one ModelBuilder; constants are splats of the input's dtype."""

    def __init__(self, b: ModelBuilder, dtype=np.float32):
        self.b, self.dtype, self.count = b, dtype, 0

    def c(self, value: float, shape=()) -> SSAValue:
        self.count += 1
        return self.b.constant(f"c{self.count}", np.full(shape, value, self.dtype))

    def _binary(self, kind, lhs, rhs) -> SSAValue:
        lhs = self.c(lhs) if isinstance(lhs, float | int) else lhs
        rhs = self.c(rhs) if isinstance(rhs, float | int) else rhs
        return self.b.insert(kind(lhs, rhs)).output

    def add(self, lhs, rhs):
        return self._binary(graph.AddOp, lhs, rhs)

    def sub(self, lhs, rhs):
        return self._binary(graph.SubOp, lhs, rhs)

    def mul(self, lhs, rhs):
        return self._binary(graph.MulOp, lhs, rhs)

    def div(self, lhs, rhs):
        return self._binary(graph.DivOp, lhs, rhs)

    def pow(self, lhs, rhs):
        return self._binary(graph.PowOp, lhs, rhs)

    def unary(self, kind, x, *args):
        return self.b.insert(kind(x, *args)).output


Pattern = Callable[[Ops, SSAValue], SSAValue]

ERF_GELUS: dict[str, Pattern] = {
    # Hugging Face BERT: (x * 0.5) * (1 + erf(x / sqrt 2))
    "hf": lambda o, x: o.mul(o.mul(x, 0.5), o.add(o.unary(graph.ErfOp, o.div(x, SQRT2)), 1.0)),
    # torch.onnx (opset < 20): (x * (erf(x / sqrt 2) + 1)) * 0.5
    "torch": lambda o, x: o.mul(o.mul(x, o.add(o.unary(graph.ErfOp, o.div(x, SQRT2)), 1.0)), 0.5),
    # 0.5 multiplied onto the gate, operands swapped, Mul by 1/sqrt 2
    "half-on-gate": lambda o, x: o.mul(o.mul(0.5, o.add(1.0, o.unary(graph.ErfOp, o.mul(1 / SQRT2, x)))), x),
    # x * (1 + erf(0.7071 x)) / 2
    "div-by-two": lambda o, x: o.div(o.mul(o.add(1.0, o.unary(graph.ErfOp, o.mul(x, 1 / SQRT2))), x), 2.0),
    # 0.5 x + 0.5 x erf(x / sqrt 2), distributed
    "distributed": lambda o, x: o.add(o.mul(x, 0.5), o.mul(o.mul(0.5, x), o.unary(graph.ErfOp, o.div(x, SQRT2)))),
    # splats of other shapes that broadcast into the result
    "shaped-constants": lambda o, x: o.mul(
        o.mul(x, o.c(0.5, (1, 1, 1))), o.add(o.unary(graph.ErfOp, o.div(x, o.c(SQRT2, (4,)))), o.c(1.0, (1,)))
    ),
}

TANH_GELUS: dict[str, Pattern] = {
    # GPT-2 / torch: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3))))
    "pow": lambda o, x: o.mul(
        o.mul(0.5, x), o.add(1.0, o.unary(graph.TanhOp, o.mul(C, o.add(x, o.mul(0.044715, o.pow(x, 3.0))))))
    ),
    # x * x * x, and the 0.5 last
    "cube": lambda o, x: o.mul(
        o.mul(x, o.add(o.unary(graph.TanhOp, o.mul(o.add(o.mul(o.mul(o.mul(x, x), x), 0.044715), x), C)), 1.0)), 0.5
    ),
    # FastGELU: x * 0.7978845608 * (1 + 0.044715 * x * x)
    "fast": lambda o, x: o.mul(
        o.mul(x, 0.5),
        o.add(1.0, o.unary(graph.TanhOp, o.mul(o.mul(x, 0.7978845608), o.add(1.0, o.mul(o.mul(0.044715, x), x))))),
    ),
}

SILUS: dict[str, Pattern] = {
    "x-first": lambda o, x: o.mul(x, o.unary(graph.SigmoidOp, x)),
    "sigmoid-first": lambda o, x: o.mul(o.unary(graph.SigmoidOp, x), x),
}

HARDSWISHES: dict[str, Pattern] = {
    # torch.onnx below opset 14: x * HardSigmoid(x, alpha = 1/6)
    "hardsigmoid": lambda o, x: o.mul(x, o.unary(graph.HardSigmoidOp, x, 1 / 6, 0.5)),
    # x * Relu6(x + 3) / 6, Relu6 as Clip(0, 6)
    "relu6-div": lambda o, x: o.div(o.mul(x, o.unary(graph.ClipOp, o.add(x, 3.0), 0.0, 6.0)), 6.0),
    # Clip(3 + x, 0, 6) * x * (1/6)
    "clip-mul": lambda o, x: o.mul(o.mul(o.unary(graph.ClipOp, o.add(3.0, x), 0.0, 6.0), x), 1 / 6),
    # (x / 6) * Clip(Relu(x + 3), max = 6)
    "relu-then-clip": lambda o, x: o.mul(
        o.div(x, 6.0), o.unary(graph.ClipOp, o.unary(graph.ReluOp, o.add(x, 3.0)), None, 6.0)
    ),
}

KINDS = [
    *[(f"gelu-{name}", p, "gelu", "none") for name, p in ERF_GELUS.items()],
    *[(f"gelu_tanh-{name}", p, "gelu_tanh", "tanh") for name, p in TANH_GELUS.items()],
    *[(f"silu-{name}", p, "silu", None) for name, p in SILUS.items()],
    *[(f"hardswish-{name}", p, "hardswish", None) for name, p in HARDSWISHES.items()],
]
OP_OF = {"gelu": graph.GeluOp, "gelu_tanh": graph.GeluOp, "silu": graph.SiluOp, "hardswish": graph.HardSwishOp}


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.")]


def build(pattern: Pattern, shape=(2, 3, 4), dtype=np.float32, extra: Callable | None = None) -> ModuleOp:
    b = ModelBuilder()
    x = b.input("x", shape, dtype)
    o = Ops(b, dtype)
    outputs = [pattern(o, x)]
    if extra is not None:
        outputs += extra(o, x, outputs[0])
    return b.finish(outputs)


def run_pass(module: ModuleOp, rng: np.random.Generator, passes=None, tolerance: float = 1e-5):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, passes or PASS, rng, tolerance=tolerance)
    return after, collected


@pytest.mark.parametrize(("pattern", "kind", "approximate"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_recognized(rng, pattern, kind, approximate):
    after, collected = run_pass(build(pattern), rng)
    assert op_names(after) == [OP_OF[kind].name]  # every intermediate op and constant erased
    (new,) = [op for op in after.walk() if isinstance(op, OP_OF[kind])]
    if approximate is not None:
        assert new.prop_value("approximate") == approximate
    assert collected.get(PASS.name, f"{kind} recognized") == 1
    assert sum(collected.counters[PASS.name].values()) == 1


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize(
    ("pattern", "kind"),
    [(ERF_GELUS["hf"], "gelu"), (TANH_GELUS["pow"], "gelu_tanh"), (HARDSWISHES["clip-mul"], "hardswish")],
    ids=["gelu", "gelu_tanh", "hardswish"],
)
def test_recognized_with_16_bit_constants(rng, dtype, pattern, kind):
    """0.7071, 0.7979, 0.044715 and 1/6 rounded to f16 or bf16 still match."""
    from boltir.dtypes import numpy_dtype_named

    np_dtype = numpy_dtype_named(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    after, collected = run_pass(build(pattern, dtype=np_dtype), rng, tolerance=2e-2)
    assert op_names(after) == [OP_OF[kind].name]
    assert collected.get(PASS.name, f"{kind} recognized") == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the TorchScript exporter's notice
def test_torch_onnx_export(rng, tmp_path):
    """What torch.onnx.export (TorchScript exporter, opset 13) writes for F.gelu in both
    forms, F.silu and F.hardswish (x * HardSigmoid(x, alpha = 1/6) below opset 14)."""
    torch = pytest.importorskip("torch", reason="needs torch: pip install boltir[torch]")

    class Activations(torch.nn.Module):
        def forward(self, x):
            F = torch.nn.functional
            return F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.hardswish(x)

    path = tmp_path / "activations.onnx"
    torch.onnx.export(Activations(), (torch.randn(2, 3, 4),), str(path), opset_version=13, dynamo=False)
    module = import_model(str(path))
    assert "graph.erf" in op_names(module) and "graph.hardsigmoid" in op_names(module)
    after, collected = run_pass(module, rng, [FoldConstantsPass(), PASS])
    assert op_names(after) == ["graph.gelu", "graph.gelu", "graph.silu", "graph.hardswish"]
    assert [op.prop_value("approximate") for op in after.walk() if isinstance(op, graph.GeluOp)] == ["none", "tanh"]
    counts = dict(collected.counters[PASS.name])
    assert counts == {"gelu recognized": 1, "gelu_tanh recognized": 1, "silu recognized": 1, "hardswish recognized": 1}


def test_sqrt2_folded_first(rng):
    """Div(x, Sqrt(2)), as some exporters write it: fold-constants makes it a constant."""
    def pattern(o, x):
        sqrt2 = o.unary(graph.SqrtOp, o.c(2.0))
        return o.mul(o.mul(x, 0.5), o.add(o.unary(graph.ErfOp, o.div(x, sqrt2)), 1.0))

    after, collected = run_pass(build(pattern), rng, [FoldConstantsPass(), PASS])
    assert op_names(after) == ["graph.gelu"] and collected.get(PASS.name, "gelu recognized") == 1


def test_shared_constants_and_several_activations(rng):
    """Two GELUs and a SiLU on different values, the GELUs sharing their constants:
    each recognized, the constants erased once nothing uses them."""
    b = ModelBuilder()
    x, y = b.input("x", (3, 5)), b.input("y", (3, 5))
    o = Ops(b)
    half, one, sqrt2 = o.c(0.5), o.c(1.0), o.c(SQRT2)

    def gelu(v):
        return o.mul(o.mul(v, half), o.add(o.unary(graph.ErfOp, o.div(v, sqrt2)), one))

    silu = o.mul(x, o.unary(graph.SigmoidOp, x))
    module = b.finish([gelu(x), gelu(o.add(x, y)), silu])
    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.silu", "graph.gelu", "graph.add", "graph.gelu"]
    assert collected.get(PASS.name, "gelu recognized") == 2 and collected.get(PASS.name, "silu recognized") == 1


# --------------------------------------------------------------------- near misses


NEAR_MISSES: dict[str, Pattern] = {
    # wrong constants
    "gelu-div-by-1.5": lambda o, x: o.mul(o.mul(x, 0.5), o.add(o.unary(graph.ErfOp, o.div(x, 1.5)), 1.0)),
    "gelu-half-is-0.6": lambda o, x: o.mul(o.mul(x, 0.6), o.add(o.unary(graph.ErfOp, o.div(x, SQRT2)), 1.0)),
    "gelu-one-is-2": lambda o, x: o.mul(o.mul(x, 0.5), o.add(o.unary(graph.ErfOp, o.div(x, SQRT2)), 2.0)),
    "gelu-minus": lambda o, x: o.mul(o.mul(x, 0.5), o.sub(1.0, o.unary(graph.ErfOp, o.div(x, SQRT2)))),
    "gelu_tanh-cubic-0.05": lambda o, x: o.mul(
        o.mul(0.5, x), o.add(1.0, o.unary(graph.TanhOp, o.mul(C, o.add(x, o.mul(0.05, o.pow(x, 3.0))))))
    ),
    "gelu_tanh-square": lambda o, x: o.mul(
        o.mul(0.5, x), o.add(1.0, o.unary(graph.TanhOp, o.mul(C, o.add(x, o.mul(0.044715, o.pow(x, 2.0))))))
    ),
    "quick-gelu-is-not-silu": lambda o, x: o.mul(x, o.unary(graph.SigmoidOp, o.mul(x, 1.702))),
    "hardsigmoid-default-alpha": lambda o, x: o.mul(x, o.unary(graph.HardSigmoidOp, x)),
    "relu6-div-by-5": lambda o, x: o.div(o.mul(x, o.unary(graph.ClipOp, o.add(x, 3.0), 0.0, 6.0)), 5.0),
    "clip-0-5": lambda o, x: o.div(o.mul(x, o.unary(graph.ClipOp, o.add(x, 3.0), 0.0, 5.0)), 6.0),
    "relu-without-clip": lambda o, x: o.div(o.mul(x, o.unary(graph.ReluOp, o.add(x, 3.0))), 6.0),
    # not one x: sigmoid of another value
    "two-values": lambda o, x: o.mul(x, o.unary(graph.SigmoidOp, o.add(x, 1.0))),
    # a splat that grows the result: x * sigmoid(x) broadcast to 2 x 2 x 3 x 4
    "growing-broadcast": lambda o, x: o.mul(o.mul(x, o.c(1.0, (2, 1, 1, 1))), o.unary(graph.SigmoidOp, x)),
    # a constant that is not a splat
    "not-a-splat": lambda o, x: o.mul(
        o.mul(x, o.b.constant("halves", np.array([0.5, 0.5, 0.5, 0.25], np.float32))),
        o.add(o.unary(graph.ErfOp, o.div(x, SQRT2)), 1.0),
    ),
}


@pytest.mark.parametrize("pattern", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_misses_are_left_alone(rng, pattern):
    module = build(pattern)
    after, collected = run_pass(module, rng)
    assert op_names(after) == op_names(module)
    assert not collected.counters.get(PASS.name)


@pytest.mark.parametrize(
    ("pattern", "other_user"),
    [
        (ERF_GELUS["hf"], graph.ErfOp),  # the erf's result also returned
        (ERF_GELUS["hf"], graph.AddOp),  # 1 + erf also returned
        (ERF_GELUS["torch"], graph.MulOp),  # x * (1 + erf) also returned
        (SILUS["x-first"], graph.SigmoidOp),
        (HARDSWISHES["relu6-div"], graph.ClipOp),
        (TANH_GELUS["pow"], graph.PowOp),
    ],
)
def test_intermediate_with_another_user_is_left_alone(rng, pattern, other_user):
    def extra(o, x, out):
        (value,) = [op.results[0] for op in o.b.block.ops if isinstance(op, other_user) and op.results[0] is not out][:1]
        return [value]

    module = build(pattern, extra=extra)
    after, collected = run_pass(module, rng)
    assert op_names(after) == op_names(module)
    assert not collected.counters.get(PASS.name)


def test_leftover_erf_is_noted(rng):
    module = build(NEAR_MISSES["gelu-div-by-1.5"])
    _, collected = run_pass(module, rng)
    (note,) = collected.notes[PASS.name]
    assert note.startswith("left graph.erf alone: not part of a GELU")


def test_integer_tensors_are_left_alone(rng):
    """x * clip(x + 3, 0, 6) / 6 on integers divides with truncation: not a HardSwish."""
    module = build(HARDSWISHES["relu6-div"], dtype=np.int32)
    after, collected = run_pass(module, rng)
    assert op_names(after) == op_names(module) and not collected.counters.get(PASS.name)


# ------------------------------------------------------------------- end to end


def ffn_onnx(rng: np.random.Generator, form: str, hidden: int = 64, ffn: int = 320):
    """Linear (MatMul + Add) -> decomposed GELU -> Linear, on B x S x hidden, as torch.onnx
    (opset < 20) or Hugging Face write it. ffn > 256 keeps form-persistent-kernels from
    fusing the two GEMMs into one b2b kernel."""
    g = GraphBuilder(rng, "ffn")
    x = g.input("x", TensorProto.FLOAT, [2, 8, hidden])
    up = g.linear(x, hidden, ffn, "up")
    if form == "torch":
        erf = g.node("Erf", [g.node("Div", [up, g.scalar("sqrt2", SQRT2)])])
        activated = g.node("Mul", [g.node("Mul", [up, g.node("Add", [erf, g.scalar("one", 1.0)])]), g.scalar("half", 0.5)])
    elif form == "hf":
        erf = g.node("Erf", [g.node("Mul", [up, g.scalar("rsqrt2", 1 / SQRT2)])])
        activated = g.node("Mul", [g.node("Mul", [up, g.scalar("half", 0.5)]), g.node("Add", [g.scalar("one", 1.0), erf])])
    else:  # tanh
        cube = g.node("Pow", [up, g.scalar("three", 3.0)])
        inner = g.node("Mul", [g.scalar("c", C), g.node("Add", [up, g.node("Mul", [cube, g.scalar("k", 0.044715)])])])
        gate = g.node("Add", [g.node("Tanh", [inner]), g.scalar("one", 1.0)])
        activated = g.node("Mul", [g.node("Mul", [g.scalar("half", 0.5), up]), gate])
    down = g.linear(activated, ffn, hidden, "down")
    return g.model([down], ["y"], [[2, 8, hidden]])


def compile_op_level(module: ModuleOp, pipeline: str) -> ModuleOp:
    after = module.clone()
    run_passes(after, parse_pipeline_spec(pipeline, available_passes()), boltir.make_context())
    return after


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize(("form", "kind"), [("torch", "gelu"), ("hf", "gelu"), ("tanh", "gelu_tanh")])
def test_default_pipeline_puts_the_gelu_in_the_gemm_epilogue(rng, form, kind, dtype):
    before = import_model(ffn_onnx(rng, form))
    after = compile_op_level(before, default_pipeline(dtype=dtype))
    gemms = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert len(gemms) == 2
    assert [str(op.epilogue) for op in gemms] == [f"#op.epilogue<bias, {kind}>", "#op.epilogue<bias>"]
    # In f16 the only elementwise ops left are the interface's casts (f32 in and out).
    casts = {"arith.truncf", "arith.extf", "op.yield"}
    elementwise = [op for op in after.walk() if isinstance(op, ops.ElementwiseBase)]
    assert all(isinstance(op, ops.ElementwiseOp) and {o.name for o in op.body.walk()} <= casts for op in elementwise)
    assert len(elementwise) == (0 if dtype == "f32" else 2)
    inputs = random_inputs(before, rng)
    (expected,), (got,) = boltir.interp.run(before, inputs), boltir.interp.run(after, inputs)
    assert relative_error(got.astype(np.float32), expected) < (1e-4 if dtype == "f32" else 2e-2)


def test_without_the_pass_the_gelu_stays_a_separate_kernel(rng):
    """The same block through the default pipeline less recognize-activations: the
    decomposed GELU stays an elementwise op between the GEMMs (what the pass is for)."""
    before = import_model(ffn_onnx(rng, "torch"))
    pipeline = default_pipeline(dtype="f32").replace("recognize-activations,", "")
    after = compile_op_level(before, pipeline)
    assert [str(op.epilogue) for op in after.walk() if isinstance(op, ops.GemmOp)] == ["#op.epilogue<bias>"] * 2
    assert [op.name for op in after.walk() if isinstance(op, ops.ElementwiseBase)] == ["op.elementwise"]
