"""The roofline model (boltir/backends/cuda/roofline.py): the FLOPs and bytes of known
layers, computed by hand; `boltc --roofline` on the bundled small ResNet, whose FLOPs are
2 × the multiply-adds counted from the ONNX graph alone (tests/support/onnx_macs.py),
within the padding the pipeline adds; the manifest's counts; the profile's table."""

from __future__ import annotations

import dataclasses

import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from boltir import compiler
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.roofline import conv_channels, gemm_problem, launch_cost, module_roofline
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.ir import find_entry, parse_module
from boltir.runtime import LaunchTime, format_profile, format_profile_by_family, launch_bounds
from boltir.target import get_target
from boltir.tools import boltc
from tests.support.onnx_macs import multiply_adds
from tests.support.op_modules import b2b_conv_text, b2b_gemm_text, conv_text, gemm_text

SM90 = get_target("sm90")
TOTAL = re.compile(r"^total: (\d+\.\d{4}) GFLOP, (\d+\.\d{3}) MB, bound (\d+\.\d{4}) ms$")


def lowered_rows(text: str, arch: str = "sm90", cutlass: int = 3, depthwise: str = "direct"):
    """The roofline of a one-op module through kernel selection (the heuristic; depthwise
    convs on `depthwise`'s kernel), lowering to CUTLASS and memory planning."""
    pipeline = ",".join(compiler.backend_passes(arch, cutlass, "heuristic"))
    pipeline = pipeline.replace("select-kernels{", f"select-kernels{{depthwise={depthwise} ")
    module = compiler.lower(parse_module(text), arch=arch, dtype="f16", pipeline=pipeline).module
    return module_roofline(module, get_target(arch))


def only_op(text: str):
    """The op of a one-op module, at the operator level."""
    return next(op for op in find_entry(parse_module(text)).body.block.ops if op.name != "func.return")


# ------------------------------------------------------------------ known layers


def test_a_conv():
    """3×3 conv, N = 2, 56², C = K = 64, bias: 2 × (2·56·56·64 outputs × 3·3·64 taps) (on
    our halo conv, the heuristic's from 0.4 tiles a multiprocessor; CUTLASS's counts alike)."""
    (row,) = lowered_rows(conv_text(2, 56, 56, 64, 64, 3, 3))
    assert (row.op, row.family) == ("op.conv2d", "halo_conv")
    assert row.flops == 2 * (2 * 56 * 56 * 64) * (3 * 3 * 64) == 462_422_016
    # input 2·56·56·64, filter 64·3·3·64, bias 64, output 2·56·56·64; two bytes each
    assert row.bytes == 2 * (401_408 + 36_864 + 64 + 401_408) == 1_679_488
    assert row.element == "f16"
    assert row.bound_seconds == pytest.approx(462_422_016 / 664e12)  # compute-bound on the H200


def test_a_gemm():
    """x 128×512 times a Linear weight 256×512, bias: 2·128·256·512."""
    (row,) = lowered_rows(gemm_text(128, 256, 512))
    assert (row.op, row.family) == ("cutlass.gemm", "gemm")
    assert row.flops == 2 * 128 * 256 * 512 == 33_554_432
    assert row.bytes == 2 * (128 * 512 + 256 * 512 + 256 + 128 * 256) == 459_264
    assert row.bound_seconds == pytest.approx(max(33_554_432 / 664e12, 459_264 / 4.265e12))


@pytest.mark.parametrize(("depthwise", "op", "family"), [("direct", "op.conv2d", "depthwise_direct"),
                                                       ("cutlass", "cutlass.depthwise_conv2d_fprop", "depthwise_conv2d_fprop")])
def test_a_depthwise_conv(depthwise, op, family):
    """3×3 depthwise, 112², C = 32: one multiply-add per tap and output, no channel sum;
    counted alike on our kernel (the op-level conv it computes) and on CUTLASS's."""
    (row,) = lowered_rows(conv_text(1, 112, 112, 32, 32, 3, 3, depthwise=True), arch="sm80", cutlass=2, depthwise=depthwise)
    assert (row.op, row.family) == (op, family)
    assert row.flops == 2 * (112 * 112 * 32) * 9 == 7_225_344
    assert row.bytes == 2 * (401_408 + 32 * 9 + 32 + 401_408) == 1_606_272
    assert row.bound_seconds == pytest.approx(1_606_272 / 2.039e12)  # memory-bound on the A100


def launched_ops(text: str, arch: str = "sm90", cutlass: int = 3, depthwise: str = "direct") -> list:
    """The ops a one-op module launches after the backend pipeline (as lowered_rows)."""
    pipeline = ",".join(compiler.backend_passes(arch, cutlass, "heuristic"))
    pipeline = pipeline.replace("select-kernels{", f"select-kernels{{depthwise={depthwise} ")
    module = compiler.lower(parse_module(text), arch=arch, dtype="f16", pipeline=pipeline).module
    return [step.op for step in build_program(module).steps]


@pytest.mark.parametrize(("text", "kwargs", "channels"), [
    (conv_text(2, 56, 56, 64, 64, 3, 3), {}, (64, 64, False)),                          # op.conv2d on the halo conv
    (conv_text(2, 14, 14, 256, 512, 3, 3), {}, (256, 512, False)),                      # cutlass.conv2d_fprop
    (conv_text(1, 112, 112, 32, 32, 3, 3, depthwise=True), {}, (32, 32, True)),         # our depthwise kernel
    (conv_text(1, 112, 112, 32, 32, 3, 3, depthwise=True), {"arch": "sm80", "cutlass": 2, "depthwise": "cutlass"},
     (32, 32, True)),                                                                     # CUTLASS's
    (gemm_text(128, 256, 512), {}, None),
])
def test_a_launchs_conv_channels(text, kwargs, channels):
    """What issue 15's memory-bound conv floor reads from the manifest: (input channels,
    output channels, depthwise) of a conv launch, None for other ops."""
    (op,) = launched_ops(text, **kwargs)
    assert conv_channels(op) == channels


@pytest.mark.parametrize(("text", "problem"), [
    (gemm_text(128, 768, 3072), {"rows": 128, "n": 768, "k": 3072, "weight_bytes": 768 * 3072 * 2}),  # cutlass.gemm
    (gemm_text(1, 1000, 2048), {"rows": 1, "n": 1000, "k": 2048, "weight_bytes": 1000 * 2048 * 2}),    # our few-rows GEMM
    (gemm_text(8, 64, 32, batch=3, shared_b=True), {"rows": 24, "n": 64, "k": 32, "weight_bytes": 64 * 32 * 2}),
    (conv_text(2, 14, 14, 256, 512, 3, 3), None),
])
def test_a_launchs_gemm_problem(text, problem):
    """What issue 16's small-M floor reads from the manifest: a GEMM launch's rows (A's
    batch folded into M), N, K and its weight's bytes; None for other ops."""
    (op,) = launched_ops(text)
    assert gemm_problem(op) == problem


def test_conv_channels_reads_oihw_filters_and_groups():
    text = conv_text(1, 8, 8, 32, 64, 3, 3).replace('filter_layout = "OHWI"', 'filter_layout = "OIHW"')
    text = text.replace("tensor<64x3x3x32xf16>", "tensor<64x32x3x3xf16>")
    assert conv_channels(only_op(text)) == (32, 64, False)
    grouped = conv_text(1, 8, 8, 32, 64, 3, 3).replace("tensor<64x3x3x32xf16>", "tensor<64x3x3x8xf16>")
    grouped = grouped.replace('filter_layout = "OHWI"', 'filter_layout = "OHWI", groups = 4')
    assert conv_channels(only_op(grouped)) == (32, 64, False)


def test_a_data_kernel():
    """Padding an image's channels 3 → 4 moves the input once and the output once."""
    text = """
    func.func @main(%x: tensor<1x224x224x3xf16>) -> tensor<1x224x224x4xf16> {
      %0 = op.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>} : tensor<1x224x224x3xf16> -> tensor<1x224x224x4xf16>
      func.return %0 : tensor<1x224x224x4xf16>
    }
    """
    (row,) = lowered_rows(text)
    assert (row.op, row.family, row.flops) == ("op.pad", "pad", 0)
    assert row.bytes == 2 * (224 * 224 * 3 + 224 * 224 * 4) == 702_464
    assert row.bound_seconds == pytest.approx(702_464 / 4.265e12)


def test_a_slice_reads_only_what_it_writes():
    text = """
    func.func @main(%x: tensor<2x96xf32>) -> tensor<2x32xf32> {
      %0 = op.slice %x {starts = array<i64: 32>, ends = array<i64: 64>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<2x96xf32> -> tensor<2x32xf32>
      func.return %0 : tensor<2x32xf32>
    }
    """
    assert launch_cost(only_op(text)).bytes == 2 * (2 * 32 * 4)


def test_an_elementwise_region_counts_its_arithmetic_not_its_casts():
    text = """
    func.func @main(%x: tensor<4x8xf16>, %y: tensor<8xf16>) -> tensor<4x8xf32> {
      %0 = op.elementwise (%x, %y) {
      ^bb0(%a: f16, %b: f16):
        %s = arith.addf %a, %b : f16
        %zero = arith.constant 0.0 : f16
        %r = arith.maximumf %s, %zero : f16
        %w = arith.extf %r : f16 to f32
        op.yield %w : f32
      } : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf32>
      func.return %0 : tensor<4x8xf32>
    }
    """
    cost = launch_cost(only_op(text))
    assert cost.flops == 2 * 32  # add and max per output element
    assert cost.bytes == 2 * 32 + 2 * 8 + 4 * 32  # the broadcast operand is read once, in its own size


def test_back_to_back_ops_count_both_products_and_keep_the_intermediate_on_chip():
    gemm = launch_cost(only_op(b2b_gemm_text(128, 64, 32, 16)))
    assert gemm.flops == 2 * 128 * (32 * 64 + 16 * 32)
    assert gemm.bytes == 2 * (128 * 64 + 32 * 64 + 16 * 32 + 32 + 16 + 128 * 16)
    conv = launch_cost(only_op(b2b_conv_text(1, 8, 8, 16, 32, 16)))
    assert conv.flops == 2 * (8 * 8 * 32 * (3 * 3 * 16) + 8 * 8 * 16 * 32)


def test_an_op_without_a_rule_is_counted_by_bytes_and_says_so():
    relu = graph.ReluOp(ModelBuilder().input("x", (2, 4)))
    cost = launch_cost(relu)
    assert cost == type(cost)(0, 2 * 32, "no FLOP rule for graph.relu: bytes only")


def test_attention_counts_both_products_and_moves_no_scores():
    builder = ModelBuilder()
    q, k, v = (builder.input(name, (2, 4, 128, 64), np.float16) for name in "qkv")
    full = launch_cost(ops.AttentionOp(q, k, v, scale=0.125))
    assert full.flops == 2 * 2 * 4 * 128 * 128 * (64 + 64)
    assert full.bytes == 4 * (2 * 2 * 4 * 128 * 64)  # q, k, v and the result
    assert launch_cost(ops.AttentionOp(q, k, v, scale=0.125, causal=True)).flops == full.flops // 2


def test_pooling_and_softmax():
    pool = ops.Pool2dOp(only_op(conv_text(1, 8, 8, 16, 16, 3, 3)).results[0], "max", kernel_shape=(2, 2), strides=(2, 2))
    assert launch_cost(pool).flops == 4 * 4 * 16 * 4
    assert launch_cost(ops.SoftmaxOp(pool.results[0], axis=-1)).flops == 5 * 4 * 4 * 16


# ------------------------------------------------------------- a bundled model


@pytest.fixture(scope="module")
def small_resnet_onnx(small_resnet) -> Path:
    return small_resnet / "small_resnet.onnx"


def padded_multiply_adds(model: onnx.ModelProto, multiple: int = 8) -> int:
    """The multiply-adds with every conv's and GEMM's channels (C, K; GEMM K, N) rounded up to
    `multiple`: more than any padding pad-alignment adds (to 4 or 8 channels, in f16)."""
    up = lambda x: -(-x // multiple) * multiple
    values = {init.name: tuple(init.dims) for init in model.graph.initializer}
    total = 0
    inferred = onnx.shape_inference.infer_shapes(model)
    for info in [*inferred.graph.value_info, *inferred.graph.output]:
        values[info.name] = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
    for node in model.graph.node:
        if node.op_type == "Conv":
            k, c, r, s = values[node.input[1]]
            n, _, p, q = values[node.output[0]]
            total += n * p * q * up(k) * up(c) * r * s
        elif node.op_type == "Gemm":
            n_out, k = values[node.input[1]]  # the Linear weight (transB = 1)
            m = values[node.output[0]][0]
            total += m * up(n_out) * up(k)
    return total


def test_boltc_roofline_on_the_small_resnet(small_resnet_onnx, capsys):
    assert boltc.main([str(small_resnet_onnx), "--roofline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = compiler.roofline(small_resnet_onnx, arch="sm90")
    assert len(lines) == 1 + len(rows) + 1
    assert lines[0].split() == ["#", "op", "family", "MFLOP", "MB", "bound", "µs"]
    for line, row in zip(lines[1:], rows):
        assert line.split()[:4] == [str(row.index), row.op, row.family, f"{row.flops / 1e6:.3f}"]
    flops, moved, bound = (float(x) for x in TOTAL.match(lines[-1]).groups())
    assert flops == pytest.approx(sum(r.flops for r in rows) / 1e9, abs=1e-4)
    assert moved == pytest.approx(sum(r.bytes for r in rows) / 1e6, abs=1e-3)
    assert bound == pytest.approx(sum(r.bound_seconds for r in rows) * 1e3, abs=1e-4)

    model = onnx.load(str(small_resnet_onnx))
    macs = multiply_adds(model)
    products = sum(r.flops for r in rows if r.family in ("conv2d_fprop", "gemm", "stem_conv"))
    assert 2 * macs <= products <= 2 * padded_multiply_adds(model)
    assert sum(r.flops for r in rows) - products < 0.01 * products  # pooling: the rest


def test_the_rows_are_the_host_programs_launches(small_resnet_onnx):
    module = compiler.lower(small_resnet_onnx, arch="sm80", dtype="f16").module
    steps = build_program(module).steps
    rows = module_roofline(module, get_target("sm80"))
    assert [(r.op, r.family) for r in rows] == [(s.op.name, s.family) for s in steps]
    assert not any(r.note for r in rows)


def test_roofline_with_an_unknown_arch_is_one_line(small_resnet_onnx, capsys):
    assert boltc.main([str(small_resnet_onnx), "--roofline", "--arch", "sm75"]) == 1
    err = capsys.readouterr().err
    assert err == "error: --arch must be one of sm80, sm90, got 'sm75'\n"


def test_roofline_takes_no_output(small_resnet_onnx, tmp_path, capsys):
    assert boltc.main([str(small_resnet_onnx), "--roofline", "-o", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == "error: --roofline prints a table on standard output; it takes neither --emit nor -o\n"


# ------------------------------------------------------------ manifest and profile


def test_the_manifest_carries_each_launchs_counts(small_resnet_onnx):
    lowered = compiler.lower(small_resnet_onnx, arch="sm90", dtype="f16")
    program = build_program(lowered.module)
    built = compiler.BuiltModel(lowered, program, [], [None] * len(program.steps))
    manifest = compiler.build_manifest(built, arch="sm90", dtype="f16", collected=None)
    rows = module_roofline(lowered.module, SM90)
    assert [(launch["flops"], launch["bytes"], launch["element"]) for launch in manifest["launches"]] == \
        [(r.flops, r.bytes, r.element) for r in rows]
    # each conv's channels, for the memory-bound conv floor (bench/models.py)
    convs = [(launch["op"], launch.get("conv")) for launch in manifest["launches"]]
    assert all((c is not None) == ("conv" in op and "b2b" not in op) for op, c in convs), convs
    assert ("cutlass.conv2d_fprop", {"in": 16, "out": 32, "depthwise": False}) in convs  # the second stage's first conv
    # and each GEMM's problem, for the small-M floor: the classifier
    gemms = [launch["gemm"] for launch in manifest["launches"] if "gemm" in launch]
    assert len(gemms) == 1 and gemms[0]["rows"] == 1 and gemms[0]["weight_bytes"] == gemms[0]["n"] * gemms[0]["k"] * 2
    bounds = launch_bounds(manifest)
    assert [b[2] for b in bounds] == pytest.approx([r.bound_seconds * 1e3 for r in rows])


def fake_launches() -> list[LaunchTime]:
    return [
        LaunchTime(0, "cutlass.conv2d_fprop", "conv", "conv2d_fprop", 0.100, 6_640_000_000, 4_000_000, 0.010),
        LaunchTime(1, "op.pad", "pad", "pad", 0.020, 0, 40_000_000, 0.0094),
        LaunchTime(2, "op.slice", "slice", "slice", 0.010, 0, 1_000_000, 0.00024),
    ]


def test_format_profile_sets_each_launch_against_its_bound():
    table = format_profile(fake_launches(), top=2)
    lines = table.splitlines()
    assert lines[0].split() == ["#", "ms", "share", "TFLOP/s", "GB/s", "%", "bound", "op", "kernel"]
    # 6.64 GFLOP in 0.1 ms: 66.4 TFLOP/s; 4 MB in 0.1 ms: 40 GB/s; bound 0.010 of 0.100 ms
    assert lines[1].split() == ["0", "0.1000", "76.9%", "66.4", "40", "10.0%", "cutlass.conv2d_fprop", "conv"]
    assert lines[2].split() == ["1", "0.0200", "15.4%", "0.0", "2000", "47.0%", "op.pad", "pad"]
    assert lines[3] == "3 launches, 0.1300 ms in all; bounds 0.0196 ms, 15.1% of the measured time"


def test_format_profile_without_counts_shows_dashes_and_no_bounds():
    launches = [LaunchTime(0, "op.pad", "pad", "pad", 0.02), LaunchTime(1, "op.slice", "slice", "slice", 0.01)]
    lines = format_profile(launches).splitlines()
    assert lines[1].split() == ["0", "0.0200", "66.7%", "-", "-", "-", "op.pad", "pad"]
    assert lines[-1] == "2 launches, 0.0300 ms in all"


def test_format_profile_with_launches_timed_alone_adds_their_column_and_sum():
    launches = [dataclasses.replace(launch, alone_ms=alone) for launch, alone in zip(fake_launches(), (0.05, 0.02, 0.01))]
    lines = format_profile(launches, top=2).splitlines()
    assert lines[0].split()[:3] == ["#", "ms", "alone"]
    # the conv: 0.1 ms in the model, 0.05 alone
    assert lines[1].split()[:4] == ["0", "0.1000", "0.0500", "76.9%"]
    assert lines[-1].endswith("; alone 0.0800 ms")


def test_format_profile_by_family_sums_each_family_largest_first():
    launches = [*fake_launches(), LaunchTime(3, "op.pad", "pad", "pad", 0.030, 0, 40_000_000, 0.0094)]
    lines = format_profile_by_family(launches).splitlines()
    assert lines[0].split() == ["family", "launches", "ms", "share", "bound", "ms", "%", "bound"]
    assert lines[1].split() == ["conv2d_fprop", "1", "0.1000", "62.5%", "0.0100", "10.0%"]
    # two pads: 0.05 ms of 0.16, bounds 2 x 0.0094
    assert lines[2].split() == ["pad", "2", "0.0500", "31.2%", "0.0188", "37.6%"]
    assert lines[3].split()[:2] == ["slice", "1"]


def test_format_profile_by_family_sums_the_launches_timed_alone():
    launches = [dataclasses.replace(launch, alone_ms=alone) for launch, alone in zip(fake_launches(), (0.05, 0.02, 0.01))]
    lines = format_profile_by_family(launches).splitlines()
    assert lines[0].split()[:4] == ["family", "launches", "ms", "alone"]
    assert lines[1].split()[:4] == ["conv2d_fprop", "1", "0.1000", "0.0500"]


def test_format_profile_with_marginal_costs_adds_their_column_after_alone():
    launches = [dataclasses.replace(launch, alone_ms=alone, marginal_ms=marginal)
                for launch, alone, marginal in zip(fake_launches(), (0.05, 0.02, 0.01), (0.09, 0.015, 0.004))]
    lines = format_profile(launches, top=2).splitlines()
    assert lines[0].split()[:4] == ["#", "ms", "alone", "marginal"]
    assert lines[1].split()[:5] == ["0", "0.1000", "0.0500", "0.0900", "76.9%"]
    assert lines[-1].endswith("; alone 0.0800 ms; marginal 0.1090 ms")
    by_family = format_profile_by_family(launches).splitlines()
    assert by_family[0].split()[:5] == ["family", "launches", "ms", "alone", "marginal"]
    assert by_family[1].split()[:5] == ["conv2d_fprop", "1", "0.1000", "0.0500", "0.0900"]


def test_marginal_costs_are_the_median_of_paired_differences():
    """`profile(marginal=True)` reads (whole, without launch i) pairs per repeat and launch."""
    import ctypes

    from boltir.runtime import CompiledModel

    class Library:
        def __init__(self):
            self.boltir_model_profile_marginal = self.marginal

        @staticmethod
        def marginal(context, inputs, repeats, pairs, stream):
            whole = (1.0, 1.2, 1.1)  # three repeats of a two-launch model
            without = ((0.7, 0.9), (0.8, 1.3), (0.9, 0.95))  # launch 1 once "costs" -0.1: noise
            for r in range(repeats):
                for i in range(2):
                    pairs[2 * (r * 2 + i)], pairs[2 * (r * 2 + i) + 1] = whole[r], without[r][i]
            return 0

    model = CompiledModel.__new__(CompiledModel)
    model.library, model.context, model.directory = Library(), ctypes.c_void_p(), "out"
    model._check = lambda code, context="": None
    medians = model._marginal_medians(None, 3, 2)
    assert medians == pytest.approx([0.3, 0.1])  # launch 1: the median of 0.1, -0.1 and 0.15


def test_marginal_costs_of_an_older_library_say_to_compile_again():
    import ctypes

    from boltir.diagnostics import BoltError
    from boltir.runtime import CompiledModel

    model = CompiledModel.__new__(CompiledModel)
    model.library, model.context, model.directory = object(), ctypes.c_void_p(), "out"
    with pytest.raises(BoltError, match="compile it again"):
        model._marginal_medians(None, 3, 2)


def test_format_profile_by_family_without_counts_shows_dashes():
    lines = format_profile_by_family([LaunchTime(0, "op.pad", "pad", "pad", 0.02)]).splitlines()
    assert lines[1].split() == ["pad", "1", "0.0200", "100.0%", "-", "-"]


def test_launch_bounds_of_a_manifest_without_counts():
    manifest = {"arch": "sm80", "dtype": "f16", "launches": [{"op": "op.pad"}, {"flops": 0, "bytes": 2_039_000}]}
    assert launch_bounds(manifest) == [(None, None, None), (0, 2_039_000, pytest.approx(1e-3))]


@pytest.mark.gpu
@pytest.mark.slow
def test_profile_on_the_gpu_sets_launches_against_their_bounds(small_resnet_onnx, tmp_path):
    """Timed inside a captured graph: every launch of the manifest, with its counts and
    bound, alone and its marginal cost, and the model still runs afterwards."""
    from boltir.runtime import load

    result = compiler.compile(small_resnet_onnx, tmp_path / "out", arch="sm80", dtype="f16", progress=False)
    model = load(result.directory)
    image = np.load(small_resnet_onnx.parent / "input.npz")["image"]
    launches = model.profile(image=image, repeats=10, alone=True, marginal=True)
    assert len(launches) == len(result.manifest["launches"])
    assert all(t.ms > 0 and t.flops is not None and t.bound_ms > 0 for t in launches)
    assert all(t.alone_ms > 0 for t in launches)
    assert all(np.isfinite(t.marginal_ms) for t in launches) and sum(t.marginal_ms for t in launches) > 0
    assert [t.flops for t in launches] == [launch["flops"] for launch in result.manifest["launches"]]
    assert "; bounds " in format_profile(launches).splitlines()[-1]
    (got,) = model(image=image)  # profiling leaves the model usable
    assert np.isfinite(got).all()
