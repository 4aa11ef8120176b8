"""plan-memory: every non-constant result of `@main` gets a 256-byte-aligned offset in
one arena, buffers live at the same time never overlap, reshapes alias their input and
elementwise ops write over inputs that die there.

The plan is checked two ways, both from the IR's attributes alone: `check_plan` follows
the program through the arena, recording which value each 256-byte granule holds, and
fails where an op reads a value whose bytes were overwritten (or a kernel's output
overlaps an input other than in place); `run_in_arena` runs the program in the numpy
interpreter with every planned value stored in, and read back from, one byte arena at
its offset, and must give the plain interpreter's outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from onnx import numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32, i32
from xdsl.ir import SSAValue

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.frontends.onnx import import_model
from boltir.interp import bind_inputs, find_entry, make_interpreter
from boltir.passes import statistics
from boltir.passes.fuse_elementwise import as_elementwise
from boltir.passes.plan_memory import ALIGNMENT, ARENA_ATTR, MEMORY_ATTR, PlanMemoryPass
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from boltir.tools import bolt_opt
from boltir.weights import make_weight_attr
from tests.passes.equivalence import assert_equivalent, random_inputs, relative_error
from tests.pipeline.random_graphs import Layer, RandomCnn, graph_specs
from tests.pipeline.topologies import light_model_path, rerandomize

PASS = "plan-memory"
LOWERING = "select-kernels{selector=heuristic arch=sm80},lower-op-to-cutlass"
STATS = ("peak arena bytes", "bytes if every buffer were separate", "buffers", "in-place reuses", "reshape aliases")


# ------------------------------------------------------------------------------ helpers


def nbytes(value: SSAValue) -> int:
    return int(np.prod(tensor_shape(value.type), dtype=np.int64)) * numpy_dtype(value.type.element_type).itemsize


def granules(value: SSAValue) -> int:
    return -(-nbytes(value) // ALIGNMENT)


def offsets(module: ModuleOp) -> dict[SSAValue, int]:
    """Each planned value's offset, read from the `memory` attributes; asserts every
    non-constant op of @main has one offset per result, aligned."""
    entry = find_entry(module)
    found: dict[SSAValue, int] = {}
    for op in entry.body.block.ops:
        if isinstance(op, ops.ConstantOp | func.ReturnOp):
            assert MEMORY_ATTR not in op.attributes, op.name
            continue
        values = [int(x) for x in op.attributes[MEMORY_ATTR].get_values()]
        assert len(values) == len(op.results), op.name
        for result, offset in zip(op.results, values, strict=True):
            assert offset >= 0 and offset % ALIGNMENT == 0, f"{op.name}: offset {offset}"
            found[result] = offset
    return found


def offsets_by_original(module: ModuleOp, planned: ModuleOp) -> dict[SSAValue, int]:
    """`offsets(planned)` keyed by the values of `module`, which `planned` is a clone of."""
    where = offsets(planned)
    pairs = zip(find_entry(module).body.block.ops, find_entry(planned).body.block.ops, strict=True)
    return {value: where[twin] for op, clone in pairs for value, twin in zip(op.results, clone.results, strict=True) if twin in where}


def arena_bytes(module: ModuleOp) -> int:
    return find_entry(module).attributes[ARENA_ATTR].value.data


def check_plan(module: ModuleOp) -> dict[str, int]:
    """Follows @main through the arena granule by granule. Each op first reads its
    operands (their granules must still hold them), then writes its results: a reshape
    onto its input's granules is a view (the same value, nothing written); a result that
    overlaps an operand must be an elementwise op writing exactly over an operand of its
    own shape and element size. `func.return` reads the returned values like any op.
    Returns the arena size and the separate total."""
    entry = find_entry(module)
    where = offsets(module)
    arena = arena_bytes(module)
    holder = np.full(arena // ALIGNMENT + 1, -1, dtype=np.int64)
    token: dict[SSAValue, int] = {}

    def span(value: SSAValue) -> slice:
        start = where[value] // ALIGNMENT
        return slice(start, start + granules(value))

    def check_held(value: SSAValue, reader: str) -> None:
        if value in where and granules(value):
            assert (holder[span(value)] == token[value]).all(), f"{reader} reads {value.name_hint or value} after it was overwritten"

    for index, op in enumerate(entry.body.block.ops):
        name = f"op {index} ({op.name})"
        for operand in op.operands:
            check_held(operand, name)
        if isinstance(op, func.ReturnOp | ops.ConstantOp):
            continue
        for result in op.results:
            assert where[result] + granules(result) * ALIGNMENT <= arena, f"{name} writes past the arena"
            if isinstance(op, ops.ReshapeOp) and op.input in where and where[op.input] == where[result]:
                token[result] = token[op.input]
                continue
            region = set(range(span(result).start, span(result).stop))
            for operand in op.operands:
                if operand in where and region & set(range(span(operand).start, span(operand).stop)):
                    assert isinstance(op, ops.ElementwiseBase), f"{name}: a kernel writes over its input"
                    assert where[operand] == where[result] and tensor_shape(operand.type) == tensor_shape(result.type), name
                    assert numpy_dtype(operand.type.element_type).itemsize == numpy_dtype(result.type.element_type).itemsize, name
            token[result] = len(token)
            holder[span(result)] = token[result]
    assert arena == max((where[v] + granules(v) * ALIGNMENT for v in where), default=0)
    separate = sum(granules(v) * ALIGNMENT for v in where)
    assert arena <= separate
    return {"arena": arena, "separate": separate}


def run_in_arena(module: ModuleOp, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The interpreter, op by op, with every planned value kept only in one byte arena
    at its offset: an op reads its operands from the arena and writes its results there."""
    entry = find_entry(module)
    where = offsets(module)
    arena = np.zeros(arena_bytes(module), dtype=np.uint8)
    interpreter = make_interpreter(module)
    env: dict[SSAValue, np.ndarray] = dict(zip(entry.body.block.args, bind_inputs(entry, inputs), strict=True))

    def read(value: SSAValue) -> np.ndarray:
        if value not in where:
            return env[value]
        dtype = numpy_dtype(value.type.element_type)
        raw = arena[where[value] : where[value] + nbytes(value)]
        return raw.view(dtype).reshape(tensor_shape(value.type)).copy()

    for op in entry.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [read(v) for v in op.operands]
        results = interpreter.run_op(op, tuple(read(v) for v in op.operands))
        for result, value in zip(op.results, results, strict=True):
            if result not in where:
                env[result] = np.asarray(value)
                continue
            array = np.ascontiguousarray(np.asarray(value, dtype=numpy_dtype(result.type.element_type)))
            assert array.shape == tensor_shape(result.type)
            arena[where[result] : where[result] + nbytes(result)] = array.reshape(-1).view(np.uint8)
    raise AssertionError("@main has no func.return")


def assert_runs_in_arena(module: ModuleOp, planned: ModuleOp, rng, trials: int = 2) -> None:
    for _ in range(trials):
        inputs = random_inputs(module, rng)
        expected = boltir.interp.run(module, inputs)
        got = run_in_arena(planned, inputs)
        for index, (value, reference) in enumerate(zip(got, expected, strict=True)):
            assert value.shape == reference.shape
            assert relative_error(value.astype(np.float64), reference.astype(np.float64)) == 0.0, f"output {index} differs"


def plan(module: ModuleOp, rng=None) -> tuple[ModuleOp, dict[str, int]]:
    """plan-memory on a clone (checked against the interpreter when `rng` is given),
    then `check_plan`; returns the planned module and its statistics."""
    with statistics.collecting() as collected:
        if rng is not None:
            planned = assert_equivalent(module, PlanMemoryPass(), rng, tolerance=1e-12, trials=1)
        else:
            planned = module.clone()
            PlanMemoryPass().apply(boltir.make_context(), planned)
    figures = check_plan(planned)
    stats = {what: collected.get(PASS, what) for what in STATS}
    assert stats["peak arena bytes"] == figures["arena"]
    assert stats["bytes if every buffer were separate"] == figures["separate"]
    assert stats["buffers"] == len(offsets(planned))
    return planned, stats


def compile_to_cutlass(module: ModuleOp, dtype: str = "f16", *, then: str = "") -> ModuleOp:
    """The default pipeline for sm80, kernel selection and the cutlass lowering (and
    `then`, in the same run) on a clone."""
    lowered = module.clone()
    spec = ",".join(filter(None, [default_pipeline(dtype=dtype, arch="sm80"), LOWERING, then]))
    run_passes(lowered, parse_pipeline_spec(spec, available_passes()), boltir.make_context())
    return lowered


def lower_and_plan(module: ModuleOp, dtype: str = "f16") -> tuple[ModuleOp, dict[str, int]]:
    """A graph-level module through the default pipeline, the lowering and plan-memory,
    in one run as boltc runs them (the pass sees the IR the lowering leaves, not a
    clone); the plan checked by `check_plan`."""
    with statistics.collecting() as collected:
        planned = compile_to_cutlass(module, dtype, then=PASS)
    figures = check_plan(planned)
    stats = {what: collected.get(PASS, what) for what in STATS}
    assert (stats["peak arena bytes"], stats["bytes if every buffer were separate"]) == (figures["arena"], figures["separate"])
    assert stats["buffers"] == len(offsets(planned))
    return planned, stats


def live_lower_bound(module: ModuleOp) -> int:
    """The most bytes live at one op if every value had its own (aligned) bytes, with
    reshape results and in-place results counted once: no plan can do better."""
    entry = find_entry(module)
    where = offsets(module)
    order = {op: i for i, op in enumerate(entry.body.block.ops)}
    live = np.zeros(len(order), dtype=np.int64)
    spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for value, offset in where.items():
        start = order[value.owner]
        end = max((order[use.operation] for use in value.uses if use.operation in order), default=start)
        key = (offset, granules(value))
        span = spans.setdefault(key, [])
        span.append((start, end))
    for (_, size), ranges in spans.items():
        # values at one offset: the bytes are taken from their first def to their last use
        # where the ranges chain (alias / in place), else each range apart
        ranges.sort()
        merged = [list(ranges[0])]
        for start, end in ranges[1:]:
            if start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in merged:
            live[start : end + 1] += size * ALIGNMENT
    return int(live.max(initial=0))


# ------------------------------------------------------------------ small hand-built cases


def test_chain_reuses_two_buffers(rng):
    """softmax after softmax: each result takes the bytes of the value before its input."""
    b = ModelBuilder()
    x = b.input("x", (8, 64))
    values = [x]
    for axis in (1, 0, 1, 0, 1):
        values.append(b.insert(ops.SoftmaxOp(values[-1], axis)).results[0])
    module = b.finish([values[-1]])
    planned, stats = plan(module, rng)
    assert_runs_in_arena(module, planned, rng)
    where = offsets_by_original(module, planned)
    assert [where[v] for v in values[1:]] == [0, 2048, 0, 2048, 0]
    assert stats == {
        "peak arena bytes": 4096, "bytes if every buffer were separate": 5 * 2048, "buffers": 5,
        "in-place reuses": 0, "reshape aliases": 0,
    }
    assert arena_bytes(planned) == 4096


def test_in_place_and_reshape_alias(rng):
    """relu writes over the softmax it reads (dead after it); the reshape shares the
    relu's bytes; the add may not write over t, which is returned, so it writes over the
    other softmax."""
    b = ModelBuilder()
    x = b.input("x", (4, 64))
    s = b.insert(ops.SoftmaxOp(x, 1)).results[0]
    r = b.insert(ops.UnaryOp("relu", s)).results[0]
    flat = b.insert(ops.ReshapeOp(r, (256,))).results[0]
    t = b.insert(ops.SoftmaxOp(x, 0)).results[0]
    add = b.insert(ops.BinaryOp("add", t, b.insert(ops.SoftmaxOp(t, 1)).results[0])).results[0]
    module = b.finish([flat, add, t])
    planned, stats = plan(module, rng)
    assert_runs_in_arena(module, planned, rng)
    where = offsets_by_original(module, planned)
    assert where[s] == where[r] == where[flat]
    assert where[add] != where[t]
    assert stats["in-place reuses"] == 2 and stats["reshape aliases"] == 1


def test_reshape_of_an_argument_gets_its_own_buffer(rng):
    b = ModelBuilder()
    x = b.input("x", (4, 64))
    flat = b.insert(ops.ReshapeOp(x, (256,))).results[0]
    module = b.finish([b.insert(ops.UnaryOp("tanh", flat)).results[0]])
    planned, stats = plan(module, rng)
    assert_runs_in_arena(module, planned, rng)
    assert stats["reshape aliases"] == 0 and stats["in-place reuses"] == 1 and arena_bytes(planned) == 1024


def test_second_run_gives_the_same_plan(rng):
    spec = {"batch": 2, "channels": 5, "size": 8, "layers": [Layer("conv_bn", 6, 3, 2, "relu", 0)], "head": "pool_gemm"}
    module = compile_to_cutlass(RandomCnn(spec, rng).module)
    once, _ = plan(module)
    twice, _ = plan(once)
    assert list(offsets(once).values()) == list(offsets(twice).values())
    assert arena_bytes(once) == arena_bytes(twice)


# ------------------------------------------------------------------------- random CNNs


DANGLING_USES_SPEC = {
    "batch": 1,
    "channels": 1,
    "size": 5,
    "layers": [Layer("conv", 1, 1, 1, "relu", 0), Layer("conv", 1, 1, 1, "relu", 0)],
    "head": "gemm",
}
"""A one-channel conv the lowering leaves as op.conv2d: the cutlass ops it built and
dropped still hold uses of its operands (a detached op's uses must not count)."""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(spec=DANGLING_USES_SPEC, seed=0, dtype="f16")
@given(spec=graph_specs(), seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(["f16", "f32"]))
def test_random_cnns(spec, seed: int, dtype: str):
    """Random CNNs through the default pipeline, select-kernels, lower-op-to-cutlass and
    plan-memory: the plan keeps every value intact until its last read, its offsets are
    aligned, its peak is at most the separate total, and the program run out of the
    arena computes what the interpreter computes."""
    rng = np.random.default_rng(seed)
    planned, stats = lower_and_plan(RandomCnn(spec, rng).module, dtype)
    assert stats["peak arena bytes"] <= stats["bytes if every buffer were separate"]
    assert stats["peak arena bytes"] >= live_lower_bound(planned)
    assert_runs_in_arena(planned, planned, rng, trials=1)


# ------------------------------------------------ random op-level graphs: aliases, in place

SHAPES = ((2, 3, 4), (6, 4), (24,), (4, 6), (1, 24))
"""Every value has 24 elements: any of them reshapes into any other shape."""
STEPS = ("softmax", "unary", "binary", "broadcast", "elementwise", "reshape", "cast", "constant")


@st.composite
def op_graphs(draw):
    return {
        "steps": draw(st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 1000), st.integers(0, 1000)), min_size=1, max_size=25)),
        "outputs": draw(st.lists(st.integers(0, 1000), min_size=1, max_size=3)),
    }


def build_op_graph(spec, rng: np.random.Generator) -> ModuleOp:
    """f32 values of 24 elements: softmaxes, unary and binary elementwise ops (some as
    op.elementwise, some reading a broadcast argument or a constant), reshapes, and casts
    to i32 and back (same element size: in place)."""
    b = ModelBuilder()
    values: list[SSAValue] = [b.input("x", (2, 3, 4)), b.input("y", (6, 4))]
    bias = b.input("bias", (4,))

    def add(op) -> SSAValue:
        return b.insert(op).results[0]

    for kind, first, second in spec["steps"]:
        x = values[first % len(values)]
        shape = tensor_shape(x.type)
        same = [v for v in values if tensor_shape(v.type) == shape]
        match kind:
            case "softmax":
                values.append(add(ops.SoftmaxOp(x, -1)))
            case "unary":
                values.append(add(ops.UnaryOp(("tanh", "relu", "sigmoid")[second % 3], x)))
            case "binary":
                values.append(add(ops.BinaryOp(("add", "mul", "sub")[second % 3], x, same[second % len(same)])))
            case "broadcast" if shape[-1] == 4:
                values.append(add(ops.BinaryOp("add", bias, x) if second % 2 else ops.BinaryOp("mul", x, bias)))
            case "elementwise":
                op = ops.BinaryOp("add", same[second % len(same)], x)
                fused = as_elementwise(op)
                op.erase()
                values.append(add(fused))
            case "reshape":
                values.append(add(ops.ReshapeOp(x, SHAPES[second % len(SHAPES)])))
            case "cast":
                as_int = add(ops.CastOp(add(ops.UnaryOp("tanh", x)), i32))  # small values: the cast rounds to -1, 0, 1
                values.append(add(ops.CastOp(as_int, f32)))
            case "constant":
                c = add(ops.ConstantOp(make_weight_attr("c", rng.standard_normal(shape).astype(np.float32))))
                values.append(add(ops.BinaryOp("add", c, x)))
            case _:
                values.append(add(ops.UnaryOp("neg", x)))
    outputs = list(dict.fromkeys(values[i % len(values)] for i in spec["outputs"]))
    return b.finish([*outputs, values[-1]] if values[-1] not in outputs else outputs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=op_graphs(), seed=st.integers(0, 2**32 - 1))
def test_random_op_graphs(spec, seed: int):
    """Random chains of elementwise ops and reshapes over values of one size, where
    aliasing and in-place writes are everywhere: no value is overwritten before its last
    read, and the program run out of the arena computes what the module computes."""
    rng = np.random.default_rng(seed)
    module = build_op_graph(spec, rng)
    boltir.verify_module(module)
    planned, stats = plan(module)
    assert stats["peak arena bytes"] <= stats["bytes if every buffer were separate"]
    assert_runs_in_arena(module, planned, rng, trials=1)


# -------------------------------------------------------------------------- ResNet-50


def resnet50_at_batch(batch: int) -> ModuleOp:
    """The onnx wheel's light ResNet-50 (weights redrawn) with its batch set: the input,
    the output and the classifier's Reshape target."""
    proto = onnx.load(light_model_path("resnet50"))
    for value in (proto.graph.input[0], proto.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_value = batch
    targets = {node.input[1] for node in proto.graph.node if node.op_type == "Reshape"}
    for initializer in proto.graph.initializer:
        if initializer.name in targets:
            shape = numpy_helper.to_array(initializer).copy()
            shape[0] = batch
            initializer.CopyFrom(numpy_helper.from_array(shape, initializer.name))
    return rerandomize(import_model(proto), np.random.default_rng(50))


RESNET50_FIGURES = {
    # batch: (peak, separate) in bytes, f16 after the default pipeline and the lowering
    1: (3_612_672, 23_069_184),
    32: (115_605_504, 738_200_576),
}


@pytest.mark.parametrize("batch", [1, 32])
def test_resnet50_peak_is_a_sixth_of_separate_buffers(batch):
    """60 planned values (the blocked image the stem reads, made by one
    op.space_to_depth, 53 convs, two pools, the flatten, the classifier, softmax and the
    output cast). At any time a bottleneck block holds at most its input, the shortcut
    and one or two intermediates, so the arena is about 15% of separate buffers, and
    exactly the live-bytes lower bound: the plan is optimal here."""
    planned, stats = lower_and_plan(resnet50_at_batch(batch))
    peak, separate = stats["peak arena bytes"], stats["bytes if every buffer were separate"]
    assert (peak, separate) == RESNET50_FIGURES[batch]
    assert stats["buffers"] == 60 and stats["reshape aliases"] == 1
    assert peak / separate < 0.16
    assert peak == live_lower_bound(planned)


def test_resnet50_runs_out_of_its_arena(rng):
    """The pass changes nothing the interpreter computes, and the program run out of the
    arena computes the same."""
    module = compile_to_cutlass(resnet50_at_batch(1))
    planned, _ = plan(module, rng)
    assert_runs_in_arena(module, planned, rng, trials=1)


def test_bert_encoder_plan_is_optimal():
    """Two BERT-base layers (sequence 128), attention fused: the packed QKV projection's
    reshape to [B, S, 3, H, D] and the context's reshape back alias (two per layer), and
    the arena is the live-bytes lower bound, about 17% of separate buffers."""
    from tests.pipeline.test_cutlass_lowering import BERT_BASE, bert_encoder_onnx

    planned, stats = lower_and_plan(import_model(bert_encoder_onnx(np.random.default_rng(768), **BERT_BASE)))
    assert stats["reshape aliases"] == 4 and stats["in-place reuses"] == 0
    assert stats["peak arena bytes"] == live_lower_bound(planned) == 1_179_904
    assert stats["bytes if every buffer were separate"] == 6_882_560


# ------------------------------------------------------------------------------ errors


def error_line(capsys, tmp_path, text: str) -> str:
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert bolt_opt.main([str(path), "-p", PASS]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0].replace(str(path), "bad.mlir")


def test_module_without_main(capsys, tmp_path):
    text = "func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}\n"
    assert error_line(capsys, tmp_path, text) == "error: plan-memory needs a function @main (the model's host program); the module has none"


def test_dynamic_argument(capsys, tmp_path):
    text = "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  func.return %x : tensor<?x4xf32>\n}\n"
    assert error_line(capsys, tmp_path, text) == (
        "bad.mlir:1:1: error: plan-memory needs static shapes: argument 0 (%x) of @main has type tensor<?x4xf32>"
    )


def test_dynamic_result(capsys, tmp_path):
    text = (
        "func.func @main(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {\n"
        "  %0 = tensor.cast %x : tensor<2x4xf32> to tensor<?x4xf32>\n"
        "  func.return %0 : tensor<?x4xf32>\n"
        "}\n"
    )
    assert error_line(capsys, tmp_path, text) == (
        "bad.mlir:2:3: error: plan-memory needs static shapes: result 0 of tensor.cast has type tensor<?x4xf32>"
    )


def test_scalar_result(capsys, tmp_path):
    text = (
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %c = arith.constant 1 : i32\n"
        "  func.return %x : tensor<4xf32>\n"
        "}\n"
    )
    assert error_line(capsys, tmp_path, text) == "bad.mlir:2:3: error: plan-memory plans tensors: result 0 of arith.constant has type i32"


def test_main_only_declared(capsys, tmp_path):
    text = "func.func private @main(tensor<4xf32>) -> tensor<4xf32>\n"
    assert error_line(capsys, tmp_path, text) == "bad.mlir:1:1: error: plan-memory needs a body for @main; it is only declared"
