"""Memory-bound 1x1 convs on sm90 as persistent CUTLASS 3.x GEMMs on the conv's own
buffers (`cutlass_sm90`'s pointwise convs): which convs the heuristic sends there and with
which tile, the lowering (interpreter-checked), the emitted unit (the GEMM instance behind
the conv's launcher ABI), what the rules refuse and why, the tuner's candidates, and (slow)
that nvcc compiles one instance. The GPU timing is bench/pointwise.py."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import cutlass_kernels
from boltir.backends.cuda.codegen import cutlass_sm90 as sm90
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import MAX_ACCUMULATORS, candidates
from boltir.backends.cuda.select.heuristic import (
    NARROW_POINTWISE_CHANNELS,
    POINTWISE_MIN_BYTES,
    HeuristicSelector,
    pointwise_bytes,
    pointwise_gemm_tile,
)
from boltir.backends.cuda.toolchain.nvcc import find_cutlass_include_dirs
from boltir.diagnostics import BoltError
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from tests.backends.test_cutlass_sm90 import conv, tile
from tests.backends.test_lower_op_to_cutlass import override
from tests.passes.equivalence import assert_equivalent
from tests.passes.test_pad_alignment import OpModel
from tests.support.op_modules import conv_text

MOBILENET_V2 = [  # N = 32: (H = W, C, K) of its 1x1 convs, and ResNet-50's bottleneck 1x1s at 56²
    (112, 32, 16), (112, 16, 96), (56, 24, 144), (56, 144, 24), (28, 32, 192), (14, 64, 384), (7, 160, 960), (7, 960, 160),
    (56, 64, 256), (56, 256, 64),
]


def the_conv(text: str) -> ops.Conv2dOp:
    (op,) = [o for o in boltir.parse_module(text).walk() if isinstance(o, ops.Conv2dOp)]
    return op


def the_template(text: str) -> cutlass.Conv2dFpropOp:
    (op,) = [o for o in boltir.parse_module(text).walk() if isinstance(o, cutlass.TemplateOp)]
    return op


def pointwise(x=(2, 8, 8, 16), k=96, *, schedule="pingpong", threadblock=(128, 96, 32), epilogue="bias, relu", **window):
    """A 3.x cutlass.conv2d_fprop 1x1 (by default) with a persistent schedule."""
    n, h, w, c = x
    r = window.pop("r", 1)
    return conv(x=x, w=(k, r, r, c), out=(n, h, w, k), schedule=schedule, pads=window.pop("pads", (0, 0, 0, 0)),
                epilogue=epilogue, tile_text=tile(*threadblock, schedule=schedule), **window)


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize(("side", "c", "k"), MOBILENET_V2)
def test_memory_bound_1x1_convs_at_batch_32_run_as_persistent_gemms(side, c, k):
    op = the_conv(conv_text(32, side, side, c, k, 1, 1, pad=0))
    moved = pointwise_bytes(32 * side * side, c, k, False)
    # under 64 channels on one side our streaming kernel takes them (test_stream_conv_kernels.py)
    streams = min(c, k) < NARROW_POINTWISE_CHANNELS and moved >= POINTWISE_MIN_BYTES
    assert (HeuristicSelector(sms=132).select(op, "sm90").family == "stream_conv") == streams
    choice = HeuristicSelector(sms=132, narrow_pointwise=False).select(op, "sm90")
    if min(c, k) <= 96 and moved >= POINTWISE_MIN_BYTES:
        assert (choice.family, choice.arch) == ("conv2d_fprop", "sm90")
        assert choice.kernel_schedule in sm90.POINTWISE_SCHEDULES and choice.cluster == (1, 1, 1)
        m, n, depth = choice.tile.threadblock
        assert n >= k or n in (128, 192, 256), "the N tile covers K where it fits"
        assert depth == (32 if c <= 32 else 64)
        assert (m // 2 if choice.kernel_schedule == "cooperative" else m) * n // 128 <= MAX_ACCUMULATORS
    else:
        assert choice.kernel_schedule != "pingpong" and choice.kernel_schedule != "cooperative"
    # the comparison the bench makes: the conv kernels of before
    before = HeuristicSelector(sms=132, pointwise_gemms=False).select(op, "sm90")
    assert before.kernel_schedule in (None, "warpspecialized")


@pytest.mark.parametrize(
    ("c", "k", "threadblock", "schedule"),
    [(16, 96, (128, 96, 32), "pingpong"), (32, 16, (128, 16, 32), "pingpong"), (144, 24, (128, 32, 64), "pingpong"),
     (64, 256, (128, 256, 64), "cooperative"), (24, 144, (128, 144, 32), "cooperative"), (64, 384, (128, 192, 64), "cooperative"),
     (96, 960, (128, 192, 64), "cooperative")],
)
def test_pointwise_tiles(c, k, threadblock, schedule):
    assert pointwise_gemm_tile(c, k) == (threadblock, schedule)


@pytest.mark.parametrize(
    ("what", "text"),
    [("3x3", conv_text(32, 56, 56, 64, 256, 3, 3)), ("stride 2", conv_text(32, 112, 112, 64, 256, 1, 1, stride=2, pad=0)),
     ("padded", conv_text(32, 56, 56, 64, 256, 1, 1, pad=1)), ("wide", conv_text(32, 56, 56, 256, 512, 1, 1, pad=0)),
     ("small", conv_text(2, 14, 14, 64, 96, 1, 1, pad=0)), ("f32", conv_text(32, 56, 56, 64, 256, 1, 1, pad=0, element="f32")),
     ("C not a multiple of 8", conv_text(32, 56, 56, 20, 256, 1, 1, pad=0))],
)
def test_other_convs_keep_their_kernels(what, text):
    choice = HeuristicSelector(sms=132).select(the_conv(text), "sm90")
    assert choice.kernel_schedule not in sm90.POINTWISE_SCHEDULES, what


def test_sm80_and_cutlass_2_keep_2x_kernels():
    op = the_conv(conv_text(32, 56, 56, 64, 256, 1, 1, pad=0))
    assert HeuristicSelector(sms=132, cutlass=2).select(op, "sm90").arch == "sm80"
    assert HeuristicSelector().select(op, "sm80").arch == "sm80"


# ------------------------------------------------------------------ lowering


@pytest.mark.parametrize("residual", [False, True])
def test_lowering_keeps_one_conv_instance_and_its_function(rng, residual):
    """The choice lowers to one cutlass.conv2d_fprop (the conv's operands as they are, the
    whole epilogue in it); the interpreter computes what the op-level conv did."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 6, 6, 16))
    r = m.input("r", (2, 6, 6, 32)) if residual else None
    module = m.finish([m.conv(x, 32, 1, pads=(0, 0, 0, 0), act="relu", residual=r)])
    forced = override(arch="sm90", tile=sm90_tile((128, 32, 32), "pingpong"), alignment=(8, 8, 8), cluster=(1, 1, 1),
                      kernel_schedule="pingpong", iterator_algorithm="optimized")
    after = assert_equivalent(module, [SelectKernelsPass(arch="sm90", cutlass=3), forced, LowerOpToCutlassPass()], rng,
                              tolerance=1e-2)
    (instance,) = [op for op in after.walk() if isinstance(op, cutlass.TemplateOp)]
    assert isinstance(instance, cutlass.Conv2dFpropOp) and sm90.is_pointwise_gemm(instance)
    assert (instance.residual is not None) == residual and instance.epilogue.has_bias
    assert cutlass_kernels.unsupported_reason(instance) is None
    assert not [op for op in after.walk() if op.name == "op.elementwise"], "nothing peeled off the epilogue"


def sm90_tile(threadblock, schedule):
    from boltir.backends.cuda.select.heuristic import hopper_tile

    return hopper_tile(threadblock, schedule)


# ------------------------------------------------------------------ codegen


def test_the_unit_is_the_gemm_instance_behind_the_conv_abi():
    op = the_template(pointwise(epilogue="bias, residual = add, then relu").replace(
        "%w bias %bias", "%w bias %bias residual %r").replace(
        "%bias: tensor<96xf16>", "%bias: tensor<96xf16>, %r: tensor<2x8x8x96xf16>").replace(
        "tensor<96xf16>) ->", "tensor<96xf16>, tensor<2x8x8x96xf16>) ->"))
    assert cutlass_kernels.unsupported_reason(op) is None
    assert cutlass_kernels.template_name(op) == "conv2d_fprop_pointwise_sm90"
    name = cutlass_kernels.kernel_name(op)
    source = cutlass_kernels.emit_translation_unit([op])
    assert "schedule=pingpong" in cutlass_kernels.instance_key(op)
    assert f'extern "C" int {name}_gemm(' in source and f'extern "C" int {name}(' in source
    assert f'extern "C" size_t {name}_workspace_size(' in source
    # A = input (n*h*w x c row-major), B = filter (k x c row-major: column-major c x k), one GEMM
    assert "using LayoutA = cutlass::layout::RowMajor;" in source and "using LayoutB = cutlass::layout::ColumnMajor;" in source
    assert "using TileShape = Shape<_128, _96, _32>;" in source
    assert "cutlass::gemm::KernelTmaWarpSpecializedPingpong" in source
    assert "Sm90SrcFetch<ElementD>" in source and "Sm90RowBroadcast" in source
    assert f"return {name}_gemm(input, filter, bias, residual, output, 1, rows, k, c, workspace, workspace_bytes, stream);" in source
    assert '#include "cutlass/gemm/kernel/tile_scheduler.hpp"' in source
    # the launcher ABI is the conv's: the host program and the tuner call it like any conv
    arguments = cutlass_kernels.launch_arguments(op)
    assert arguments.problem == (2, 8, 8, 16, 96, 1, 1, 8, 8, 0, 0, 1, 1, 1, 1) and arguments.workspace


def test_warpspecialized_1x1_conv_keeps_the_implicit_gemm():
    op = the_template(pointwise(schedule="warpspecialized", threadblock=(128, 64, 64)))
    assert cutlass_kernels.template_name(op) == "conv2d_fprop_sm90" and not sm90.is_pointwise_gemm(op)
    assert "KernelImplicitTmaWarpSpecializedSm90" in cutlass_kernels.emit_instance(op).source


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (pointwise(r=3, pads=(1, 1, 1, 1)), "the persistent 'pingpong' runs 1x1 convs as GEMMs, and this one's filter is 3x3"),
        (pointwise(x=(2, 8, 8, 16), strides=(2, 2)).replace("2x8x8x96", "2x4x4x96"), "this one's stride is [2, 2]"),
        (pointwise(pads=(1, 1, 1, 1)).replace("2x8x8x96", "2x10x10x96"), "this one has padding [1, 1, 1, 1]"),
    ],
)
def test_refused_pointwise_instances_say_why(text, reason):
    op = the_template(text)
    got = cutlass_kernels.unsupported_reason(op)
    assert got is not None and reason in got, got
    with pytest.raises(BoltError, match="has no CUTLASS instance"):
        cutlass_kernels.emit_instance(op)


# ------------------------------------------------------------------ candidates


@pytest.mark.parametrize(("side", "c", "k"), [(56, 64, 256), (112, 16, 96), (112, 32, 16), (56, 144, 24), (56, 256, 64)])
def test_candidates_cover_both_routes(side, c, k):
    op = the_conv(conv_text(32, side, side, c, k, 1, 1, pad=0))
    found = candidates(op, "sm90", 132, 3)
    first = HeuristicSelector(sms=132).select(op, "sm90")
    assert found.choices[0] == first
    persistent = [ch for ch in found.choices if ch.kernel_schedule in sm90.POINTWISE_SCHEDULES]
    assert len(persistent) >= 4
    assert {ch.kernel_schedule for ch in persistent} == {"pingpong", "cooperative"}
    assert len({ch.tile.threadblock for ch in persistent}) >= 3
    for choice in persistent:
        m, n, _ = choice.tile.threadblock
        assert (m // 2 if choice.kernel_schedule == "cooperative" else m) * n // 128 <= MAX_ACCUMULATORS
        instance = lowered_alone(op, choice)
        assert cutlass_kernels.unsupported_reason(instance) is None
    if k % 64 == 0:  # where the implicit GEMM's tiles fit K, its candidates stay
        assert any(ch.kernel_schedule == "warpspecialized" for ch in found.choices)
    assert any(ch.arch == "sm80" for ch in found.choices)
    assert len(found.choices) == len(set(found.choices))


def lowered_alone(op, choice):
    from boltir.backends.cuda.tune.tuner import lower_alone, single_op_module

    _, template = lower_alone(single_op_module(op), choice)
    return template


@pytest.mark.parametrize(("side", "c", "k", "epilogue"), [(7, 2048, 512, "bias, relu"), (14, 1024, 256, "bias, relu"),
                                                    (7, 512, 2048, "bias, residual = add, then relu")])
def test_batch_1_deep_1x1_convs_get_split_k_gemm_candidates(side, c, k, epilogue):
    """ResNet-50's deep 1x1 convs at batch 1 have a few output tiles and a long C, which the
    implicit-GEMM conv cannot split: their GEMM on the cooperative kernel, split along C
    (the stream-K scheduler in split-K mode, reduced in f32 before the whole epilogue, the
    residual's too), is a candidate; the heuristic's choice still leads."""
    residual = "residual" in epilogue
    op = the_conv(conv_text(1, side, side, c, k, 1, 1, pad=0, epilogue=epilogue))
    found = candidates(op, "sm90", 132, 3)
    assert found.choices[0] == HeuristicSelector(sms=132).select(op, "sm90")
    split = [ch for ch in found.choices if ch.arch == "sm90" and ch.split_k > 1]
    assert split and all(ch.kernel_schedule == "cooperative" and ch.family == "conv2d_fprop" for ch in split)
    for choice in split:
        instance = lowered_alone(op, choice)
        assert cutlass_kernels.unsupported_reason(instance) is None and sm90.is_pointwise_gemm(instance)
        source = cutlass_kernels.emit_translation_unit([instance])
        assert "cutlass::gemm::StreamKScheduler>;" in source and f"args.scheduler.splits = {choice.split_k};" in source
        assert ("Sm90SrcFetch<ElementD>" in source) == residual


def test_split_k_is_for_the_cooperative_gemm_of_a_1x1_conv_only():
    cooperative = the_template(pointwise(schedule="cooperative", threadblock=(128, 96, 32)).replace(
        'kernel_schedule = "cooperative"', 'split_k = 2, kernel_schedule = "cooperative"'))
    assert cutlass_kernels.unsupported_reason(cooperative) is None
    pingpong = the_template(pointwise().replace('kernel_schedule = "pingpong"', 'split_k = 2, kernel_schedule = "pingpong"'))
    assert "which only the cooperative schedule takes" in cutlass_kernels.unsupported_reason(pingpong)
    implicit = the_template(conv().replace('kernel_schedule = "warpspecialized"', 'split_k = 2, kernel_schedule = "warpspecialized"'))
    assert cutlass_kernels.unsupported_reason(implicit) == "the 3.x implicit-GEMM conv has no split-k"


def test_wide_1x1_convs_get_no_persistent_candidates():
    op = the_conv(conv_text(32, 7, 7, 160, 960, 1, 1, pad=0))
    assert not [ch for ch in candidates(op, "sm90", 132, 3).choices if ch.kernel_schedule in sm90.POINTWISE_SCHEDULES]


# ------------------------------------------------------------------ nvcc


@pytest.mark.slow
def test_nvcc_compiles_a_pointwise_conv(tmp_path):
    """One Hopper unit (about a minute on 2 cores): K tile 32 over C = 16, an N tile of 96,
    ping-pong, bias and residual, behind the conv launcher."""
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
        find_cutlass_include_dirs()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain or CUTLASS headers here: {error}")
    op = the_template(pointwise(epilogue="bias, residual = add, then relu").replace(
        "%w bias %bias", "%w bias %bias residual %r").replace(
        "%bias: tensor<96xf16>", "%bias: tensor<96xf16>, %r: tensor<2x8x8x96xf16>").replace(
        "tensor<96xf16>) ->", "tensor<96xf16>, tensor<2x8x8x96xf16>) ->"))
    job = nvcc.CompileJob(cutlass_kernels.kernel_name(op), cutlass_kernels.emit_translation_unit([op]), cutlass_kernels.kernel_arch(op))
    library = nvcc.build_shared_library([job], tmp_path / "pointwise.so", progress=False)
    assert library.stat().st_size > 0
