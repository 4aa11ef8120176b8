"""CUTLASS 3.x (sm90) instances: what the emitter refuses and why, what it writes, and (slow)
that nvcc compiles a GEMM and a conv unit for sm_90a. The GPU checks are
bench/check_kernels.py's "3.x" cases."""

from __future__ import annotations

import pytest

import boltir
from boltir.backends.cuda.codegen import cutlass_kernels
from boltir.backends.cuda.codegen import cutlass_sm90 as sm90
from boltir.backends.cuda.codegen.epilogues import epilogue_expression
from boltir.backends.cuda.toolchain.nvcc import find_cutlass_include_dirs
from boltir.diagnostics import BoltError
from boltir.dialects import cutlass
from tests.backends.test_cutlass_kernels import tensor


def tile(m, n, k=64, schedule="cooperative", stages=0, warp=None, instruction=None) -> str:
    warp = warp or ((m // 2, n, k) if schedule in ("cooperative", "streamk") else (m, n, k))
    instruction = instruction or (64, n, 16)
    return (f"#cutlass.tile<threadblock = [{m}, {n}, {k}], warp = {list(warp)}, instruction = {list(instruction)}, "
            f"stages = {stages}>")


def gemm(a=(512, 256), b=(384, 256), out=(512, 384), element="f16", *, schedule="cooperative", tile_text=None,
         cluster=(1, 1, 1), alignment=(8, 8, 8), split_k=1, epilogue="bias, relu", bias=True, residual=False,
         layout_b="col", accumulator="f32") -> str:
    args = [("a", tensor(a, element)), ("b", tensor(b, element))]
    operands = "%a, %b"
    if bias:
        args.append(("bias", tensor((out[-1],), element)))
        operands += " bias %bias"
    if residual:
        args.append(("r", tensor(out, element)))
        operands += " residual %r"
    props = (f'arch = "sm90", accumulator = {accumulator}, tile = {tile_text or tile(128, 128, schedule=schedule)}, '
             f"alignment = array<i64: {', '.join(map(str, alignment))}>, cluster = array<i64: {', '.join(map(str, cluster))}>, "
             f'kernel_schedule = "{schedule}", layout_b = "{layout_b}", split_k = {split_k}, epilogue = #op.epilogue<{epilogue}>')
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    types = ", ".join(t for _, t in args)
    result = tensor(out, element)
    return (f"func.func @g({params}) -> {result} {{\n  %0 = cutlass.gemm {operands} {{{props}}} : ({types}) -> {result}\n"
            f"  func.return %0 : {result}\n}}")


def conv(x=(2, 16, 16, 64), w=(64, 3, 3, 64), out=(2, 16, 16, 64), *, schedule="warpspecialized", pads=(1, 1, 1, 1),
         strides=(1, 1), epilogue="bias, relu", tile_text=None) -> str:
    args = [("x", tensor(x, "f16")), ("w", tensor(w, "f16")), ("bias", tensor((out[-1],), "f16"))]
    props = (f'arch = "sm90", accumulator = f32, tile = {tile_text or tile(128, 64, schedule=schedule)}, '
             f'alignment = array<i64: 8, 8, 8>, kernel_schedule = "{schedule}", pads = array<i64: {", ".join(map(str, pads))}>, '
             f"strides = array<i64: {', '.join(map(str, strides))}>, epilogue = #op.epilogue<{epilogue}>")
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    types = ", ".join(t for _, t in args)
    result = tensor(out, "f16")
    return (f"func.func @c({params}) -> {result} {{\n  %0 = cutlass.conv2d_fprop %x, %w bias %bias {{{props}}} : ({types}) -> {result}\n"
            f"  func.return %0 : {result}\n}}")


def the_op(text: str):
    module = boltir.parse_module(text)
    (op,) = [o for o in module.walk() if isinstance(o, cutlass.TemplateOp)]
    return op


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (gemm(schedule="auto"), "a 3.x gemm takes kernel_schedule 'cooperative' or 'pingpong' or 'warpspecialized' or 'streamk', got 'auto'"),
        (gemm(tile_text=tile(64, 128, warp=(64, 128, 64))), "the tile's M must be 128 or 256, got 64"),
        (gemm(schedule="pingpong", tile_text=tile(256, 128, schedule="pingpong")), "one consumer warpgroup takes a tile M of 64 or 128, got 256"),
        (gemm(tile_text=tile(128, 128, warp=(128, 128, 64))), "a cooperative warpgroup computes [64, 128, 64] of a [128, 128, 64] tile"),
        (gemm(tile_text=tile(128, 128, instruction=(64, 64, 16))), "the wgmma shape of this tile is [64, 128, 16]"),
        (gemm(tile_text=tile(128, 128, k=16)), "the tile's K must be 32, 64 or 128"),
        (gemm(tile_text=tile(128, 192, stages=5)), "5 stages of a 128x192x64 tile need 204800 bytes of shared memory"),
        (gemm(alignment=(4, 8, 8)), "TMA moves 16-byte rows: the alignment must be (8, 8, 8)"),
        (gemm(element="f32", alignment=(4, 4, 4)), "element type f32 is not supported (3.x instances take: f16, bf16)"),
        (gemm(accumulator="f16"), "3.x instances accumulate in f32"),
        (gemm(cluster=(4, 2, 1)), "the cluster must be (1, 2 or 4) x (1, 2 or 4) x 1 with at most 4 CTAs"),
        (gemm(schedule="pingpong", tile_text=tile(128, 128, schedule="pingpong"), split_k=2),
         "split-k (2 slices) runs on the stream-K scheduler in split-K mode, which only the cooperative schedule takes"),
        (gemm(schedule="streamk", tile_text=tile(128, 128, schedule="streamk"), split_k=2),
         "which only the cooperative schedule takes (streamk chooses its own split)"),
        (gemm(schedule="streamk", tile_text=tile(64, 128, warp=(64, 128, 64))),
         "the streamk schedule splits M between two warpgroups: the tile's M must be 128 or 256, got 64"),
        (gemm(a=(512, 256), b=(3, 384, 256), out=(3, 512, 384), bias=False, epilogue=""),
         "a 3.x GEMM batches A and B together (or folds the batch into M); this one batches b alone"),
        (conv(schedule="cooperative", tile_text=tile(128, 64)), "a 3.x conv2d_fprop takes kernel_schedule 'warpspecialized'"),
    ],
)
def test_unsupported_3x_instances_say_why(text, reason):
    op = the_op(text)
    got = cutlass_kernels.unsupported_reason(op)
    assert got is not None and reason in got, got
    with pytest.raises(BoltError, match="has no CUTLASS instance"):
        cutlass_kernels.emit_instance(op)


def test_depthwise_and_b2b_have_no_3x_template():
    assert sm90.unsupported_reason(the_op(gemm())) is None
    # a depthwise conv on sm90 is refused by family, naming the 2.x fallback
    text = conv().replace("cutlass.conv2d_fprop", "cutlass.depthwise_conv2d_fprop")
    text = text.replace("tensor<64x3x3x64xf16>", "tensor<64x3x3x1xf16>").replace(', kernel_schedule = "warpspecialized"', "")
    depthwise = the_op(text.replace("tile = " + tile(128, 64, schedule="warpspecialized"),
                                    "op_class = \"simt\", tile = #cutlass.tile<threadblock = [64, 64, 9], warp = [16, 64, 9], instruction = [1, 1, 1], stages = 2>"))
    assert "depthwise_conv2d_fprop has no CUTLASS 3.x template; use an sm80 (2.x) instance" in cutlass_kernels.unsupported_reason(depthwise)


def test_the_cluster_and_schedule_are_part_of_the_instance():
    base = the_op(gemm())
    other_cluster = the_op(gemm(cluster=(2, 1, 1)))
    pingpong = the_op(gemm(schedule="pingpong", tile_text=tile(128, 128, schedule="pingpong")))
    names = {cutlass_kernels.kernel_name(op) for op in (base, other_cluster, pingpong)}
    assert len(names) == 3
    assert "cluster=2x1x1 schedule=cooperative" in cutlass_kernels.instance_key(other_cluster)
    assert cutlass_kernels.kernel_arch(base) == "sm90" and cutlass_kernels.template_name(base) == "gemm_sm90"


@pytest.mark.parametrize(
    ("epilogue", "expected"),
    [
        ("", "(acc)"),
        ("bias", "(acc + bias)"),
        ("alpha = 0.5, beta = 2.0, bias, relu", "boltir::epilogue::relu((0.5f * acc + 2.0f * bias))"),
        ("bias, relu, residual = add, then relu", "boltir::epilogue::relu((boltir::epilogue::relu((acc + bias))) + residual)"),
        ("residual = mul", "((acc)) * residual"),
    ],
)
def test_the_whole_epilogue_is_one_expression(epilogue, expected):
    op = the_op(gemm(epilogue=epilogue, bias="bias" in epilogue, residual="residual" in epilogue))
    assert epilogue_expression(op.epilogue) == expected
    source = cutlass_kernels.emit_instance(op).source
    assert f"return {expected}; }}" in source
    assert ("Sm90RowBroadcast" in source) == ("bias" in epilogue)
    assert ("Sm90SrcFetch<ElementD>" in source) == ("residual" in epilogue)
    assert ("using ElementC = void;" in source) == ("residual" not in epilogue)


def test_streamk_is_the_cooperative_kernel_on_the_stream_k_scheduler():
    """No split count: CUTLASS's own decomposition (whole tiles for the full waves, the
    rest by stream-K); split-k stays split-K mode; the plain schedules stay persistent."""
    streamk = cutlass_kernels.emit_instance(the_op(gemm(schedule="streamk", tile_text=tile(128, 256, schedule="streamk")))).source
    assert "CollectiveEpilogue, cutlass::gemm::StreamKScheduler>;" in streamk
    assert "KernelTmaWarpSpecializedCooperative" in streamk and "epilogue::TmaWarpSpecializedCooperative" in streamk
    assert "args.scheduler.splits" not in streamk and "args.scheduler.max_swizzle_size" in streamk
    split = cutlass_kernels.emit_instance(the_op(gemm(split_k=4))).source
    assert "StreamKScheduler" in split and "args.scheduler.splits = 4;" in split
    assert "StreamKScheduler" not in cutlass_kernels.emit_instance(the_op(gemm())).source


@pytest.mark.parametrize("text", [gemm(), conv()], ids=["gemm", "conv"])
def test_3x_kernels_launch_through_launch_3x(text):
    """Not the adapters' run: launch_3x launches CUTLASS's kernel behind a PDL trigger at
    entry (BOLTIR_PDL=late: CUTLASS's own device_kernel), with the adapter's params."""
    op = the_op(text)
    instance = cutlass_kernels.emit_instance(op).source
    assert "boltir::rt::launch_3x<typename Operation::" in instance or "boltir::rt::run_conv(op, stream)" in instance
    assert "op.run(" not in instance
    unit = cutlass_kernels.emit_translation_unit([op])
    assert "early_trigger_kernel<Kernel>" in unit and "cutlass::device_kernel<Kernel>" in unit
    assert "boltir_pdl::early_trigger()" in unit


def test_a_window_that_stops_short_describes_the_input_cropped():
    """ResNet's 1x1 stride-2 downsample on an even size reads rows 0, 2, ..., 54 of 56: TMA
    im2col takes no negative bottom pad, so the template describes 55 rows with the full
    strides. The instance exists; the heuristic keeps such convs 2.x until a GPU has run it."""
    assert sm90.reached_extents((1, 56, 56, 256), (512, 1, 1, 256), (1, 28, 28, 512), (0, 0, 0, 0), (2, 2), (1, 1)) == (55, 55)
    assert sm90.reached_extents((1, 56, 56, 64), (64, 3, 3, 64), (1, 28, 28, 64), (1, 1, 1, 1), (2, 2), (1, 1)) == (56, 56)
    assert sm90.crops_input((1, 56, 56, 256), (512, 1, 1, 256), (1, 28, 28, 512), (0, 0, 0, 0), (2, 2), (1, 1))
    assert not sm90.crops_input((1, 56, 56, 64), (64, 3, 3, 64), (1, 28, 28, 64), (1, 1, 1, 1), (2, 2), (1, 1))
    op = the_op(conv(x=(1, 8, 8, 64), w=(64, 3, 3, 64), out=(1, 3, 3, 64), pads=(0, 0, 0, 0), strides=(2, 2)))
    assert cutlass_kernels.unsupported_reason(op) is None
    source = cutlass_kernels.emit_instance(op).source
    assert "{n, rows(), columns(), c}" in source and "int64_t(h) * w * c" in source


def test_the_heuristic_keeps_a_cropped_conv_2x():
    from boltir.backends.cuda.select.heuristic import HeuristicSelector
    from boltir.ir import parse_module
    from tests.support.op_modules import conv_text

    module = parse_module(conv_text(1, 56, 56, 256, 512, 1, 1, stride=2, pad=0))
    op = next(o for o in module.walk() if o.name == "op.conv2d")
    assert HeuristicSelector().select(op, "sm90").arch == "sm80"
    module = parse_module(conv_text(1, 57, 57, 256, 512, 1, 1, stride=2, pad=0))
    op = next(o for o in module.walk() if o.name == "op.conv2d")
    assert HeuristicSelector().select(op, "sm90").arch == "sm90"


def test_host_program_builds_3x_units_for_sm_90a():
    from boltir.target import get_target

    op = the_op(gemm())
    assert cutlass_kernels.kernel_arch(op) == "sm90"
    assert get_target("sm90").nvcc_arch_flags == ("-gencode=arch=compute_90a,code=sm_90a",)


@pytest.mark.slow
def test_nvcc_compiles_a_3x_gemm_and_conv(tmp_path):
    """Three Hopper units (about 50 s each on 2 cores): the template instantiates with
    CUTLASS 4.2's collective builders, the stream-K scheduler's too."""
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
        find_cutlass_include_dirs()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain or CUTLASS headers here: {error}")
    jobs = []
    for text in (gemm(schedule="pingpong", tile_text=tile(64, 128, schedule="pingpong"), epilogue="bias, gelu, residual = mul, then relu",
                      residual=True), conv(epilogue="bias, relu"),
                 gemm(schedule="streamk", tile_text=tile(128, 256, schedule="streamk"), epilogue="bias, gelu")):
        op = the_op(text)
        jobs.append(nvcc.CompileJob(cutlass_kernels.kernel_name(op), cutlass_kernels.emit_translation_unit([op]), cutlass_kernels.kernel_arch(op)))
    library = nvcc.build_shared_library(jobs, tmp_path / "hopper.so", progress=False)
    assert library.stat().st_size > 0
