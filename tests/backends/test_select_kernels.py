"""select-kernels: every op-level GEMM, conv and b2b op gets a `kernel` attribute with a
template instance CUTLASS can run on the arch (tiles that divide, stages that fit shared
memory, alignments that divide the extents), b2b ops example 13 cannot run are split back
into two ops, the module computes what it did, the answer is the same every time, and the
heuristic never touches a GPU."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType

import boltir
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass, make_selector
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.cutlass import MAX_ACCESS_BITS
from boltir.target import get_target
from boltir.dialects.graph import tensor_shape
from boltir.passes import statistics
from boltir.passes.form_persistent_kernels import FormPersistentKernelsPass
from boltir.ir import make_context, parse_module
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import conv_text
from tests.passes.test_pad_alignment import OpModel

ARCHS = ("sm80", "sm90")
F16_TOLERANCE = 1e-2
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
TOLERANCE = {"f16": F16_TOLERANCE, "bf16": 3e-2, "f32": 1e-5}
SELECTABLE = (ops.GemmOp, ops.Conv2dOp, ops.B2bGemmOp, ops.B2bConv2dOp)


def select(module: ModuleOp, rng, arch: str, tolerance: float = F16_TOLERANCE, cutlass: int = 2,
           depthwise: str = "direct", few_channels: str = "cutlass",
           split_gemms: str = "cutlass") -> tuple[ModuleOp, statistics.PassStatistics]:
    """select-kernels for `arch`; 2.x kernels only unless `cutlass` = 3 (the 2.x tests run
    on both targets: sm90 changes the grid they fill, not the kernels); depthwise convs on
    `depthwise`'s kernel; convs on few channels on `few_channels`'s and few-row GEMMs with a
    long K on `split_gemms`' (CUTLASS's here: these tests are the CUTLASS rules'; our own
    kernels' are in test_stem_conv_kernels.py and test_wgsplit_gemm_kernels.py)."""
    pass_ = SelectKernelsPass(arch=arch, cutlass=cutlass, depthwise=depthwise, few_channels=few_channels,
                              split_gemms=split_gemms)
    with statistics.collecting() as collected:
        after = assert_equivalent(module, pass_, rng, tolerance=tolerance)
    for op in after.walk():
        if isinstance(op, SELECTABLE):
            assert_runnable(op, choice_of(op), arch if cutlass == 3 else "sm80")
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get("select-kernels", what)


def choice_of(op) -> KernelChoice:
    assert KERNEL_ATTR in op.attributes, f"{op.name} has no kernel"
    choice = KernelChoice.from_attr(op.attributes[KERNEL_ATTR])
    assert KernelChoice.from_attr(choice.to_attr()) == choice  # the attribute round-trips
    return choice


def choices(module: ModuleOp, kind: type = SELECTABLE) -> list[KernelChoice]:
    return [choice_of(op) for op in module.walk() if isinstance(op, kind)]


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("op.") and op.name != "op.constant"]


def bits(value) -> int:
    return np.dtype(DTYPES.get(str(value.type.element_type), np.float32)).itemsize * 8


def assert_runnable(op, choice: KernelChoice, arch: str) -> None:
    """CUTLASS's rules for any choice: the tiles divide, the stages fit the arch's shared
    memory, each alignment is at most 128 bits and divides its contiguous extent. On an
    sm90 target a choice may be a 3.x (sm90) or a 2.x (sm80) instance."""
    assert choice.arch == arch or (arch == "sm90" and choice.arch == "sm80")
    arch = choice.arch
    choice.tile.check()
    if choice.tile1 is not None:
        choice.tile1.check()
    operand = op.operands[0]
    a_bits = bits(operand)
    if choice.family != "depthwise_conv2d_fprop":  # the direct conv stages no B tile
        assert choice.tile.shared_memory_bytes(a_bits, a_bits) <= get_target(arch).shared_memory_bytes
    assert all(1 <= alignment and alignment * a_bits <= MAX_ACCESS_BITS for alignment in choice.alignment)
    assert 1 <= choice.split_k <= 16
    if isinstance(op, ops.GemmOp):
        m, n, k = op.problem
        align_a, align_b, align_c = choice.alignment
        assert (k if op.prop_value("layout_a") == "row" else m) % align_a == 0
        assert (n if op.prop_value("layout_b") == "row" else k) % align_b == 0
        assert n % align_c == 0
        assert choice.split_k <= k
    if isinstance(op, ops.Conv2dOp):
        c = tensor_shape(op.input.type)[-1]
        k = tensor_shape(op.output.type)[-1]
        assert c % choice.alignment[1] == 0 and k % choice.alignment[2] == 0


# ----------------------------------------------------------------------------- GEMMs


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_gemm(rng, arch, dtype, layout_b):
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (48, 40))
    module = m.finish([m.gemm(x, 24, act="gelu", layout_b=layout_b)])

    after, collected = select(module, rng, arch, TOLERANCE[dtype])
    (choice,) = choices(after)
    assert choice.family == "gemm" and choice.iterator_algorithm is None and choice.tile1 is None
    # mma.sync: m16n8k16 for 16-bit inputs, m16n8k8 for TF32, whose K tile is half as deep.
    assert choice.tile.instruction == ((16, 8, 8) if dtype == "f32" else (16, 8, 16))
    assert choice.tile.threadblock[2] == (16 if dtype == "f32" else 32)
    assert choice.alignment == ((4, 4, 4) if dtype == "f32" else (8, 8, 8))
    assert stat(collected, "op.gemm kernels chosen") == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_large_k_small_output_takes_split_k(rng, arch):
    """64 x 64 outputs are one tile: slices of K fill the GPU, each at least four K tiles."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (64, 8192))
    module = m.finish([m.gemm(x, 64, bias=False)])

    after, _ = select(module, rng, arch)
    (choice,) = choices(after)
    assert choice.split_k > 1
    assert 8192 // choice.split_k >= 4 * choice.tile.threadblock[2]


@pytest.mark.parametrize("arch", ARCHS)
def test_split_k_fills_about_one_wave(rng, arch):
    m = OpModel(rng, np.float16)
    x = m.input("x", (256, 4096))
    module = m.finish([m.gemm(x, 256, bias=False)])

    after, _ = select(module, rng, arch)
    (choice,) = choices(after)
    tiles = (256 // choice.tile.threadblock[0]) * (256 // choice.tile.threadblock[1])
    assert tiles < get_target(arch).multiprocessors < 2 * tiles * choice.split_k
    assert tiles * choice.split_k <= 1.5 * get_target(arch).multiprocessors


def test_sms_fills_the_gpu_the_kernels_run_on(rng):
    """sm80 kernels on a 132-SM H200: the grid is sized for 132 multiprocessors, not 108."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (256, 4096))
    module = m.finish([m.gemm(x, 256, bias=False)])
    ctx = boltir.make_context()
    split = {}
    for sms in (0, 132):
        copy = module.clone()
        SelectKernelsPass(arch="sm80", sms=sms).apply(ctx, copy)
        (choice,) = choices(copy)
        tiles = (256 // choice.tile.threadblock[0]) * (256 // choice.tile.threadblock[1])
        split[sms] = tiles * choice.split_k
    assert split[0] <= 1.5 * 108 and split[132] > 108 and split[132] <= 1.5 * 132
    with pytest.raises(BoltError, match="sms must be a positive multiprocessor count"):
        SelectKernelsPass(arch="sm80", sms=-1).apply(ctx, module.clone())


@pytest.mark.parametrize("arch", ARCHS)
def test_big_gemm_needs_no_split_k_and_is_swizzled_on_2x(rng, arch):
    m = OpModel(rng, np.float16)
    x = m.input("x", (2048, 256))
    module = m.finish([m.gemm(x, 2048, act="relu", layout_b="col")])

    after, _ = select(module, rng, arch, tolerance=2e-2)
    (choice,) = choices(after)
    # 2.x tiles rasterize in groups; the 3.x persistent scheduler measured fastest without
    # a swizzle (bench/RESULTS.md, ViT-B/16 b32's GEMMs)
    assert choice.split_k == 1 and (choice.swizzle == 1 if choice.arch == "sm90" else choice.swizzle > 1)
    assert choice.tile.threadblock[0] * choice.tile.threadblock[1] >= 128 * 64


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    ("bias", "act", "split"),
    [(True, "none", False), (False, "relu", False), (False, "none", True)],
    ids=["bias+residual", "act+residual", "residual-alone"],
)
def test_residual_block_epilogue_keeps_one_slice(rng, arch, bias, act, split):
    """CUTLASS's residual block (a bias or an activation before the residual) applies its
    activations on every split-k slice: such GEMMs take one slice. A residual alone is a
    linear epilogue (C = the residual), which split-k runs."""
    m = OpModel(rng, np.float16)
    x, r = m.input("x", (64, 8192)), m.input("r", (64, 64))
    module = m.finish([m.gemm(x, 64, bias=bias, act=act, residual=r)])

    after, _ = select(module, rng, arch)
    (choice,) = choices(after)
    assert (choice.split_k > 1) == split


@pytest.mark.parametrize("arch", ARCHS)
def test_batched_gemm_has_no_split_k(rng, arch):
    """Attention's batched GEMMs fill the GPU with their batch."""
    m = OpModel(rng, np.float16)
    q, k = m.input("q", (12, 16, 64)), m.input("k", (12, 64, 4096))
    module = m.finish([m.insert(ops.GemmOp(q, k))])

    after, _ = select(module, rng, arch)
    (choice,) = choices(after)
    assert choice.split_k == 1


def test_odd_extents_narrow_the_alignments(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (10, 6))
    module = m.finish([m.gemm(x, 5, bias=False)])

    after, _ = select(module, rng, "sm80")
    (choice,) = choices(after)
    assert choice.alignment == (2, 1, 1)


def test_archs_differ_by_multiprocessors_and_shared_memory(rng):
    """sm90 has 132 SMs to sm80's 108 and more shared memory: the same problem can take a
    different tile or split."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2048, 512))
    module = m.finish([m.gemm(x, 2048, layout_b="col"), m.gemm(m.input("y", (256, 4096)), 256, bias=False)])
    sm80 = [(c.tile, c.split_k) for c in choices(select(module, rng, "sm80")[0])]
    sm90 = [(c.tile, c.split_k) for c in choices(select(module, rng, "sm90")[0])]
    assert sm80 != sm90


# ----------------------------------------------------------------------------- convs


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    ("dtype", "channels", "iterator", "align_a"),
    [
        ("f16", 64, "optimized", 8),
        ("f16", 8, "optimized", 8),
        ("f16", 4, "fixed_channels", 4),  # the padded first layer of an image model (sm80)
        ("bf16", 4, "fixed_channels", 4),
        ("f16", 3, "few_channels", 1),
        ("f16", 2, "few_channels", 2),
        ("f16", 12, "analytic", 4),
        ("f32", 4, "optimized", 4),
        ("f32", 2, "fixed_channels", 2),
        ("f32", 3, "few_channels", 1),
    ],
)
def test_conv_iterator(rng, arch, dtype, channels, iterator, align_a):
    m = OpModel(rng, DTYPES[dtype])
    image = m.input("image", (2, 9, 9, channels))
    module = m.finish([m.conv(image, 16, 3, strides=(2, 2))])

    after, collected = select(module, rng, arch, TOLERANCE[dtype])
    (choice,) = choices(after)
    assert choice.family == "conv2d_fprop"
    assert choice.iterator_algorithm == iterator and choice.alignment[0] == align_a
    assert choice.split_k == 1
    if iterator == "fixed_channels":
        assert channels == align_a
    assert stat(collected, "op.conv2d kernels chosen") == 1


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("kernel", "strides", "channels"), [(3, (1, 1), 32), (3, (2, 2), 96), (5, (1, 1), 16), (3, (1, 1), 128)])
def test_depthwise_conv(rng, arch, kernel, strides, channels):
    """groups = C = K with depthwise=cutlass: CUTLASS's direct SIMT conv, the tile's K is
    the filter's taps."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 12, 12, channels))
    module = m.finish([m.conv(x, channels, kernel, strides=strides, groups=channels, act="relu")])

    after, _ = select(module, rng, arch, depthwise="cutlass")
    (choice,) = choices(after)
    assert choice.family == "depthwise_conv2d_fprop"
    assert choice.tile.instruction == (1, 1, 1)
    assert choice.tile.threadblock[2] == choice.tile.warp[2] == kernel * kernel
    assert choice.tile.warp[1] == choice.tile.threadblock[1]  # one warp covers the block's channels
    assert choice.alignment[:2] == (8, 8)


def test_grouped_conv_gets_an_implicit_gemm_choice(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 8, 8, 32))
    module = m.finish([m.conv(x, 32, 3, groups=2)])

    after, _ = select(module, rng, "sm80")
    (choice,) = choices(after)
    assert choice.family == "conv2d_fprop"


# ------------------------------------------------------------------------- b2b ops


def fused(module: ModuleOp) -> ModuleOp:
    after = module.clone()
    FormPersistentKernelsPass().apply(boltir.make_context(), after)
    return after


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("n0", "n1", "residency"), [(64, 128, "register"), (32, 64, "register"), (128, 64, "shared"), (256, 256, "shared")])
def test_b2b_gemm_stays_fused(rng, arch, n0, n1, residency):
    m = OpModel(rng, np.float16)
    x = m.input("x", (128, 64))
    module = fused(m.finish([m.gemm(m.gemm(x, n0, act="relu", name="fc1"), n1, name="fc2")]))
    assert op_names(module) == ["op.b2b_gemm"]

    after, collected = select(module, rng, arch)
    assert op_names(after) == ["op.b2b_gemm"]
    (choice,) = choices(after)
    assert choice.family == "b2b_gemm" and choice.residency == residency
    assert choice.tile.threadblock[1] == n0 and choice.tile1.threadblock[1] >= n1
    assert choice.tile.threadblock[0] == choice.tile1.threadblock[0]
    assert choice.tile.warps == choice.tile1.warps
    assert choice.alignment == (8, 8, 8)
    assert stat(collected, "op.b2b_gemm kernels chosen") == 1 and stat(collected, "op.b2b_gemm unfused") == 0


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("n0", "n1"), [(16, 96), (16, 64), (32, 48)])
def test_b2b_outside_the_checked_shapes_is_unfused(rng, arch, n0, n1):
    """N0 not a multiple of the second GEMM's K step (MobileNetV2's 16: wrong on the H200)
    or N1 narrower than its tile: two kernels."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 32))
    module = fused(m.finish([m.conv(m.conv(x, n0, 1, name="c1"), n1, 1, act="relu", name="c2")]))
    assert op_names(module) == ["op.b2b_conv2d"]
    after, collected = select(module, rng, arch)
    assert op_names(after) == ["op.conv2d", "op.conv2d"]
    assert stat(collected, "op.b2b_conv2d unfused") == 1


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("n0", "n1"), [(32, 64), (64, 128), (128, 128)])
def test_b2b_conv_stays_fused(rng, arch, n0, n1):
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    module = fused(m.finish([m.conv(m.conv(x, n0, 3, strides=(2, 2), act="silu", name="c1"), n1, 1, name="c2")]))
    assert op_names(module) == ["op.b2b_conv2d"]

    after, _ = select(module, rng, arch)
    (choice,) = choices(after)
    assert choice.family == "b2b_conv2d" and choice.residency == ("register" if n0 <= 64 else "shared")
    assert choice.tile.threadblock[1] == n0 and choice.tile1.threadblock[1] >= n1


def b2b_gemm(m: OpModel, x, n0: int, n1: int, *, layout_a="row"):
    k0 = tensor_shape(x.type)[-1 if layout_a == "row" else -2]
    rows = tensor_shape(x.type)[-2 if layout_a == "row" else -1]
    w0, b0 = m.weight("w0", (k0, n0), k0), m.weight("b0", (n0,), 1)
    w1 = m.weight("w1", (n0, n1), n0)
    return m.insert(
        ops.B2bGemmOp(
            x, w0, w1, bias0=b0, layout_a=layout_a,
            epilogue0=ops.EpilogueAttr.make(bias=True, activation=ops.Activation("relu")),
            epilogue1=ops.EpilogueAttr.make(activation=ops.Activation("gelu")),
            result_type=TensorType(x.type.element_type, (rows, n1)),
        )
    )


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    ("dtype", "rows", "n0", "n1", "layout_a"),
    [
        ("bf16", 64, 64, 64, "row"),  # example 13 is f16 only
        ("f16", 64, 64, 24, "row"),  # N1 is not a multiple of 16
        ("f16", 64, 40, 64, "row"),  # nor is N0
        ("f16", 64, 64, 64, "col"),  # a column-major A
        ("f16", 100, 64, 64, "row"),  # M is not a multiple of the 8-element accesses
    ],
)
def test_b2b_gemm_is_unfused(rng, arch, dtype, rows, n0, n1, layout_a):
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (rows, 32) if layout_a == "row" else (32, rows))
    module = m.finish([b2b_gemm(m, x, n0, n1, layout_a=layout_a)])

    after, collected = select(module, rng, arch, TOLERANCE[dtype])
    assert op_names(after) == ["op.gemm", "op.gemm"]
    first, second = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert second.a is first.output
    assert first.prop_value("layout_a") == layout_a and first.bias is not None and second.bias is None
    assert first.epilogue.first_activation.kind == "relu" and second.epilogue.first_activation.kind == "gelu"
    assert [c.family for c in choices(after)] == ["gemm", "gemm"]
    assert stat(collected, "op.b2b_gemm unfused") == 1 and stat(collected, "op.gemm kernels chosen") == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_b2b_conv_is_unfused(rng, arch):
    """N1 = 24 is not a multiple of 16: a conv with the window, then a 1x1 conv."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    module = fused(m.finish([m.conv(m.conv(x, 32, 3, strides=(2, 2), name="c1"), 24, 1, name="c2")]))
    assert op_names(module) == ["op.b2b_conv2d"]

    after, collected = select(module, rng, arch)
    assert op_names(after) == ["op.conv2d", "op.conv2d"]
    first, second = [op for op in after.walk() if isinstance(op, ops.Conv2dOp)]
    assert second.input is first.output
    assert first.prop_value("strides") == (2, 2) and first.prop_value("pads") == (1, 1, 1, 1)
    assert second.prop_value("strides") == (1, 1) and tensor_shape(second.filter.type)[1:3] == (1, 1)
    assert [c.family for c in choices(after)] == ["conv2d_fprop", "conv2d_fprop"]
    assert stat(collected, "op.b2b_conv2d unfused") == 1 and stat(collected, "op.conv2d kernels chosen") == 2


# --------------------------------------------------------------- determinism, no GPU


def mixed_module(rng) -> ModuleOp:
    m = OpModel(rng, np.float16)
    x = m.input("x", (128, 256))
    image = m.input("image", (2, 16, 16, 4))
    h = m.gemm(m.gemm(x, 64, act="relu", name="fc1"), 128, name="fc2")  # b2b
    y = m.gemm(m.input("k", (64, 8192)), 64, bias=False, name="splitk")
    c = m.conv(image, 32, 3, name="stem")
    d = m.conv(c, 32, 3, groups=32, name="dw")
    e = m.conv(m.conv(d, 64, 3, name="c1"), 24, 1, name="c2")  # b2b, unfused
    return fused(m.finish([h, y, e]))


def test_running_twice_gives_identical_ir(rng):
    module = mixed_module(rng)
    printed = []
    for _ in range(2):
        after = module.clone()
        SelectKernelsPass(arch="sm80").apply(boltir.make_context(), after)
        printed.append(boltir.print_module(after))
    assert printed[0] == printed[1]
    # and again on what the first run printed: a selection replaces its own answer with itself
    again = boltir.parse_module(printed[0])
    SelectKernelsPass(arch="sm80").apply(boltir.make_context(), again)
    assert boltir.print_module(again) == printed[0]


def test_bolt_opt_replays_the_same_ir(rng, tmp_path, capsys):
    path = tmp_path / "model.mlir"
    path.write_text(boltir.print_module(mixed_module(rng)))
    outputs = []
    for _ in range(2):
        assert bolt_opt.main([str(path), "-p", "select-kernels{selector=heuristic arch=sm80}"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and "kernel = {family" in outputs[0]


NO_GPU_SCRIPT = textwrap.dedent(
    """
    import builtins, ctypes, subprocess, sys

    FORBIDDEN = ("torch", "cupy", "pycuda", "cuda", "tensorrt", "triton", "jax")
    real_import = builtins.__import__

    def guarded_import(name, *args, **kwargs):
        if name.split(".")[0] in FORBIDDEN:
            raise AssertionError(f"the heuristic imported {name}")
        return real_import(name, *args, **kwargs)

    def no_library(name, *args, **kwargs):
        raise AssertionError(f"the heuristic loaded a shared library: {name}")

    def no_process(*args, **kwargs):
        raise AssertionError(f"the heuristic started a process: {args}")

    builtins.__import__ = guarded_import
    ctypes.CDLL = ctypes.PyDLL = no_library
    ctypes.cdll.LoadLibrary = no_library
    subprocess.Popen = no_process

    from boltir.tools import bolt_opt
    status = bolt_opt.main([sys.argv[1], "-p", "select-kernels{selector=heuristic arch=sm80}", "-o", sys.argv[2]])
    assert status == 0, status
    loaded = [name for name in sys.modules if name.split(".")[0] in FORBIDDEN]
    assert not loaded, loaded
    with open("/proc/self/maps") as maps:
        libraries = [line.split()[-1] for line in maps if "libcuda" in line or "libnvidia" in line]
    assert not libraries, libraries
    print("ok")
    """
)


def test_heuristic_never_imports_torch_or_touches_a_gpu(rng, tmp_path):
    path = tmp_path / "model.mlir"
    path.write_text(boltir.print_module(mixed_module(rng)))
    script = tmp_path / "no_gpu.py"
    script.write_text(NO_GPU_SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), str(path), str(tmp_path / "out.mlir")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    assert "kernel = {family" in (tmp_path / "out.mlir").read_text()


def test_every_selectable_op_gets_a_kernel_and_nothing_else_does(rng):
    module = mixed_module(rng)
    after, collected = select(module, rng, "sm80")
    selectable = [op for op in after.walk() if isinstance(op, SELECTABLE)]
    assert selectable and all(KERNEL_ATTR in op.attributes for op in selectable)
    assert not any(KERNEL_ATTR in op.attributes for op in after.walk() if not isinstance(op, SELECTABLE))
    assert stat(collected, "op.b2b_gemm kernels chosen") == 1 and stat(collected, "op.b2b_conv2d unfused") == 1


# ------------------------------------------------------------------------- errors


def error_line(capsys, *argv: str) -> str:
    assert bolt_opt.main([str(a) for a in argv]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.fixture
def op_ir(tmp_path, rng):
    m = OpModel(rng, np.float16)
    path = tmp_path / "model.mlir"
    path.write_text(boltir.print_module(m.finish([m.gemm(m.input("x", (16, 32)), 16)])))
    return path


def test_bad_arch(rng, op_ir, capsys):
    m = OpModel(rng, np.float16)
    module = m.finish([m.gemm(m.input("x", (16, 32)), 16)])
    with pytest.raises(BoltError, match="^error: arch must be one of sm80, sm90; got 'sm70'$"):
        SelectKernelsPass(arch="sm70").apply(boltir.make_context(), module)
    assert error_line(capsys, op_ir, "-p", "select-kernels{arch=sm70}") == "error: arch must be one of sm80, sm90; got 'sm70'"


def test_unknown_selector(op_ir, capsys):
    with pytest.raises(BoltError, match="^error: unknown kernel selector 'random'; known: heuristic, db, tune$"):
        make_selector("random")
    assert error_line(capsys, op_ir, "-p", "select-kernels{selector=random}") == (
        "error: unknown kernel selector 'random'; known: heuristic, db, tune"
    )


# ------------------------------------------------------------------- 3.x on sm90


def lowers_to_a_template(module: ModuleOp) -> list:
    """The cutlass instances of a selected module; each one the CUDA templates write."""
    from boltir.backends.cuda.codegen.cutlass_kernels import unsupported_reason
    from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass

    after = module.clone()
    LowerOpToCutlassPass().apply(boltir.make_context(), after)
    instances = [op for op in after.walk() if op.name.startswith("cutlass.")]
    for op in instances:
        assert unsupported_reason(op) is None, unsupported_reason(op)
    return instances


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_sm90_prefers_3x_for_big_gemms(rng, dtype):
    """A big grid: a cooperative 3.x kernel, a 2x1 cluster, as many stages as fit."""
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (2048, 512))
    module = m.finish([m.gemm(x, 2048, act="relu", layout_b="col")])
    after, _ = select(module, rng, "sm90", TOLERANCE[dtype], cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.family == "gemm"
    assert choice.kernel_schedule == "cooperative" and choice.cluster in ((2, 1, 1), (1, 1, 1))
    assert choice.tile.stages == 0 and choice.tile.instruction == (64, choice.tile.threadblock[1], 16)
    assert choice.alignment == (8, 8, 8)
    (instance,) = lowers_to_a_template(after)
    assert instance.prop_value("kernel_schedule") == "cooperative"


def test_sm90_one_row_of_tiles_takes_no_split_k(rng):
    """BERT-base's FFN2 at batch 1 (128 x 768 x 3072): narrow tiles, not stream-K slices."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (128, 3072))
    module = m.finish([m.gemm(x, 768, bias=False)])
    after, _ = select(module, rng, "sm90", cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.split_k == 1 and choice.tile.threadblock[0] == 64


@pytest.mark.parametrize("rows, n, k, threadblock", [
    (128, 768, 3072, (64, 32, 64)),   # BERT b1's FFN2: 24 tiles of 64x64, 48 of 64x32
    (128, 768, 768, (64, 32, 64)),    # its output projection
    (128, 2304, 768, (64, 64, 64)),   # QKV: 72 tiles of 64x64, over half of 132 SMs
    (128, 3072, 768, (64, 64, 64)),   # FFN1: 96 tiles
    (320, 768, 768, (64, 64, 64)),    # 60 tiles, but past SMALL_M_ROWS: the score's tile
])
def test_sm90_few_rows_take_32_column_tiles_under_half_a_wave(rng, rows, n, k, threadblock):
    """At most SMALL_M_ROWS rows, where 64x64 tiles leave half the SMs idle, 64x32 ping-pong
    tiles: twice the CTAs, each walking K alone (faster in the tuner and bench.kernels on
    BERT b1's two N = 768 GEMMs, slower on the two wider ones)."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (rows, k))
    module = m.finish([m.gemm(x, n, bias=True)])
    after, _ = select(module, rng, "sm90", cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.tile.threadblock == threadblock and choice.split_k == 1
    if threadblock[0] == 64:
        assert choice.kernel_schedule == "pingpong"
    lowers_to_a_template(after)


def test_sm90_split_k_runs_on_the_cooperative_stream_k_scheduler(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (384, 8192))
    module = m.finish([m.gemm(x, 256, bias=False)])
    after, _ = select(module, rng, "sm90", cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.split_k > 1 and choice.kernel_schedule == "cooperative"
    lowers_to_a_template(after)


@pytest.mark.parametrize("rows", [128, 256])
def test_sm90_no_stream_k_at_up_to_two_rows_of_tiles(rng, rows):
    """BERT-base's FFN2 at batch 1 (M = 128) and at batch 8, sequence 32 (M = 256): on
    the H200, six stream-K slices were twice as slow as unsplit 64x64 tiles."""
    m = OpModel(rng, np.float16)
    module = m.finish([m.gemm(m.input("x", (rows, 3072)), 768)])
    after, _ = select(module, rng, "sm90", cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.split_k == 1


@pytest.mark.parametrize(
    ("what", "rows", "k", "n", "dtype"),
    [("few rows", 32, 4096, 4096, "f16"), ("f32 (TF32)", 512, 256, 256, "f32"), ("K not a multiple of 8", 512, 100, 256, "f16"),
     ("N not a multiple of 8", 512, 256, 100, "f16"), ("one K tile", 1024, 64, 64, "f16")],
)
def test_sm90_keeps_2x_where_3x_cannot_or_should_not_run(rng, what, rows, k, n, dtype):
    m = OpModel(rng, DTYPES[dtype])
    module = m.finish([m.gemm(m.input("x", (rows, k)), n)])
    after, _ = select(module, rng, "sm90", TOLERANCE[dtype], cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm80" and choice.kernel_schedule is None, what
    lowers_to_a_template(after)


def test_sm90_convs(rng):
    """ResNet-like convs take the 3.x implicit GEMM (one consumer warpgroup); the padded
    stem (C = 8) stays 2.x, and depthwise convs run on our own kernel (built for sm80
    and sm90 alike: an "sm80" choice)."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 14, 14, 64))
    stem = m.input("image", (1, 32, 32, 8))
    module = m.finish([m.conv(x, 64, 3, act="relu", name="c3"), m.conv(stem, 32, 7, strides=(2, 2), name="stem"),
                       m.conv(x, 64, 3, groups=64, name="dw")])
    after, collected = select(module, rng, "sm90", cutlass=3)
    by_family = [(c.family, c.arch, c.kernel_schedule) for c in choices(after)]
    assert by_family == [("conv2d_fprop", "sm90", "warpspecialized"), ("conv2d_fprop", "sm80", None),
                         ("depthwise_direct", "sm80", None)]
    lowers_to_a_template(after)


def test_sm90_convs_under_64_channels_stay_2x(rng):
    """The space-to-depth stem (16 channels) and a 1x1 conv on 32 channels run 2.x: a 3.x
    conv's 64-wide K tile would be mostly padding; 64 channels take 3.x."""
    m = OpModel(rng, np.float16)
    stem = m.input("stem", (1, 18, 18, 16))
    narrow = m.input("narrow", (2, 14, 14, 32))
    wide = m.input("wide", (2, 14, 14, 64))
    module = m.finish([m.conv(stem, 64, 4, name="stem"), m.conv(narrow, 96, 1, name="narrow"), m.conv(wide, 96, 1, name="wide")])
    after, _ = select(module, rng, "sm90", cutlass=3)
    assert [c.arch for c in choices(after)] == ["sm80", "sm80", "sm90"]
    lowers_to_a_template(after)


def test_sm90_batched_gemm_batches_a_and_b_together(rng):
    m = OpModel(rng, np.float16)
    q, k = m.input("q", (12, 128, 128)), m.input("k", (12, 128, 128))
    module = m.finish([m.insert(ops.GemmOp(q, k))])
    after, _ = select(module, rng, "sm90", cutlass=3)
    (choice,) = choices(after)
    assert choice.arch == "sm90" and choice.split_k == 1
    lowers_to_a_template(after)


def test_cutlass_2_keeps_every_kernel_2x(rng):
    m = OpModel(rng, np.float16)
    module = m.finish([m.gemm(m.input("x", (2048, 512)), 2048)])
    after, _ = select(module, rng, "sm90", cutlass=2)
    assert [c.arch for c in choices(after)] == ["sm80"]


def test_bad_cutlass_generation_is_an_error():
    with pytest.raises(BoltError, match=r"cutlass must be 2 \(2.x kernels only\) or 3"):
        make_selector("heuristic", 0, 4)


@pytest.mark.parametrize(
    ("pixels", "k", "tile"),
    # the reference convs (bench/kernels.py) at batch 32 (the fastest of five tiles on the H200), and a narrow grid
    # MobileNetV2's 1x1 16 -> 96 at 112² (128x128 0.0816 ms, 128x64 0.1240; its 128x96 covering tile not timed);
    # batch 1: 3x3 512 -> 512 at 28² keeps 64x128 (0.0149 against 0.0156), at 14² and 7² and 256 -> 256 at 14²
    # (grids under a quarter wave) 64x64 (0.0124 against 0.0139, 0.0123 against 0.0136, 0.0073 against 0.0081);
    # on the H100, RepVGG-A0's 3x3s at batch 32 on covering tiles: 96 -> 96 at 28² 128x96 (0.0206 against 0.0260
    # for 128x128), 192 -> 192 at 14² 64x192 (0.0144 against 0.0238 for 64x128); at batch 1 under a quarter wave, 64x64
    [(100352, 64, (128, 64, 64)), (25088, 128, (128, 128, 64)), (1568, 512, (64, 128, 64)), (196, 64, (64, 64, 64)),
     (401408, 96, (128, 96, 64)), (784, 512, (64, 128, 64)), (196, 512, (64, 64, 64)), (49, 512, (64, 64, 64)),
     (196, 256, (64, 64, 64)), (25088, 96, (128, 96, 64)), (6272, 192, (64, 192, 64)), (784, 96, (64, 64, 64)),
     (196, 192, (64, 64, 64)), (6272, 256, (64, 128, 64)), (6272, 320, (128, 128, 64))],
)
def test_sm90_conv_tiles(pixels, k, tile):
    from boltir.backends.cuda.select.heuristic import hopper_conv_tile

    assert hopper_conv_tile(pixels, k, 132) == tile


# ------------------------------------------- conv_ctas: 3.x convs two to a multiprocessor


def test_conv_ctas_gives_the_3x_conv_explicit_stages():
    text = conv_text(32, 56, 56, 64, 64, 3, 3)
    default, two = parse_module(text), parse_module(text)
    # (a 64-channel 3x3 conv: CUTLASS's only with the halo conv off)
    SelectKernelsPass(arch="sm90", selector="heuristic", narrow_convs="cutlass").apply(make_context(), default)
    SelectKernelsPass(arch="sm90", selector="heuristic", narrow_convs="cutlass", conv_ctas=2).apply(make_context(), two)
    LowerOpToCutlassPass().apply(make_context(), default)
    LowerOpToCutlassPass().apply(make_context(), two)
    tile = lambda module: next(op for op in module.walk() if op.name == "cutlass.conv2d_fprop").tile.value  # noqa: E731
    assert tile(default).stages == 0 and tile(two).stages == 4 and tile(two).threadblock == (128, 64, 64)


def test_conv_columns_power2_keeps_64_or_128_wide_tiles():
    from boltir.backends.cuda.select.heuristic import covering_columns, hopper_conv_tile

    assert [covering_columns(k) for k in (48, 64, 96, 128, 160, 192, 256, 320)] == [None, None, 96, None, 160, 192, None, None]
    assert hopper_conv_tile(25088, 96, 132, cover=False) == (128, 128, 64)
    assert hopper_conv_tile(6272, 192, 132, cover=False) == (64, 128, 64)
    assert make_selector("heuristic", conv_columns="power2").cover_conv_columns is False
    assert make_selector("db", conv_columns="power2").heuristic.cover_conv_columns is False


def test_a_bad_conv_columns_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(32, 14, 14, 192, 192, 3, 3))
    assert bolt_opt.main([str(path), "-p", "select-kernels{conv_columns=wide}"]) == 1
    assert capsys.readouterr().err == "error: conv_columns must be one of cover, power2; got 'wide'\n"


def test_a_bad_conv_ctas_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(1, 7, 7, 512, 512, 3, 3))
    assert bolt_opt.main([str(path), "-p", "select-kernels{conv_ctas=4}"]) == 1
    assert capsys.readouterr().err == "error: conv_ctas must be 1, 2 or 3 CTAs per multiprocessor; got 4\n"
