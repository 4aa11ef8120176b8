"""The fused attention kernels (boltir/backends/cuda/codegen/attention_kernels.py).

Without a GPU: each layout's strides (written out by hand) reach the launcher through the
host program with no copy, a broadcast bias gets zero strides, the tile follows the head
dim, instances are shared across layouts, causal masks and scales, what the fused kernel
does not take goes to the plain fallback, and what neither takes is refused in one line. The `slow` test compiles one instance with the real
nvcc (skipped without it); bench/check_attention.py runs them on the GPU.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from boltir.backends.cuda.codegen import attention_kernels as ak
from boltir.backends.cuda.codegen.generator import CompileJob, unit_job
from boltir.backends.cuda.codegen.host_program import GENERATORS, build_program
from boltir.diagnostics import BoltError
from boltir.ir import make_context
from boltir.passes.plan_memory import PlanMemoryPass
from tests.support.attention_cases import attention_module

B, H, SQ, SK, D = 2, 3, 16, 24, 64
SCALE_BITS = 0x3E000000  # 0.125 as f32 bits
NO_BIAS = (0, 0, 0)

# (layout, q, k, v, output strides (batch, head, row), k offset, v offset), by hand
LAYOUT_STRIDES = {
    "BHSD": ((3 * 16 * 64, 16 * 64, 64), (3 * 24 * 64, 24 * 64, 64), (3 * 24 * 64, 24 * 64, 64), (3 * 16 * 64, 16 * 64, 64), 0, 0),
    "BSHD": ((16 * 3 * 64, 64, 3 * 64), (24 * 3 * 64, 64, 3 * 64), (24 * 3 * 64, 64, 3 * 64), (16 * 3 * 64, 64, 3 * 64), 0, 0),
    # one [2, 16, 3, 3, 64] tensor: q, k, v 3 * 64 elements apart
    "BS3HD": ((16 * 3 * 3 * 64, 64, 3 * 3 * 64),) * 3 + ((16 * 3 * 64, 64, 3 * 64), 3 * 64, 2 * 3 * 64),
}

# bias shape (keys: the layout's Sk) -> its (batch, head, query) strides, by hand
BIAS_STRIDES = {
    None: NO_BIAS,
    (2, 1, 1, "k"): ("k", 0, 0),  # a padding mask [B, 1, 1, Sk]
    (2, 3, 16, "k"): ("3*16*k", "16*k", "k"),  # a full bias
    (16, "k"): (0, 0, "k"),  # one [Sq, Sk] bias for every batch and head
    (1, 3, 1, "k"): (0, "k", 0),
}


def _keys(layout: str) -> int:
    return SQ if layout == "BS3HD" else SK


def _with_keys(items, keys: int) -> tuple:
    return tuple(keys if x == "k" else eval(x, {"k": keys}) if isinstance(x, str) else x for x in items)


def _op(layout: str, bias=None, causal=False, key_lengths=False, **kw):
    shape = None if bias is None else _with_keys(bias, _keys(layout))
    return attention_module(layout, B, H, SQ, SK, D, bias=shape, causal=causal, key_lengths=key_lengths, scale=0.125, **kw)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", list(BIAS_STRIDES))
@pytest.mark.parametrize("layout", list(LAYOUT_STRIDES))
def test_strides_of_each_layout_bias_and_mask(layout, bias, causal):
    module, op = _op(layout, bias, causal)
    q, k, v, out, k_offset, v_offset = LAYOUT_STRIDES[layout]
    keys = _keys(layout)
    expected = (B, H, SQ, keys, D, D, SCALE_BITS, int(causal), k_offset, v_offset,
                *q, *k, *v, *_with_keys(BIAS_STRIDES[bias], keys), *out)
    arguments = ak.launch_arguments(op)
    assert arguments.problem == expected
    assert dict(zip(ak.PROBLEM_FIELDS, arguments.problem))["o_m"] == out[2]
    assert arguments.workspace
    # BS3HD passes the packed tensor as q, k and v
    q_value = op.q
    k_value, v_value = (q_value, q_value) if layout == "BS3HD" else (op.k, op.v)
    assert arguments.operands == (q_value, k_value, v_value, op.bias, None, op.output)

    # the host program calls the launcher with those integers and no copy
    PlanMemoryPass().apply(make_context(), module)
    program = build_program(module)
    (step,) = program.steps
    assert (step.family, step.kernel, step.fallback) == ("attention", arguments.name, False)
    host = program.units[-1].source
    pointers = "in[0], in[0], in[0]" if layout == "BS3HD" else "in[0], in[1], in[2]"
    bias_pointer = "nullptr" if bias is None else f"in[{1 if layout == 'BS3HD' else 3}]"
    call = f"{arguments.name}({pointers}, {bias_pointer}, nullptr, (A + 0), {', '.join(map(str, expected))}, ws, ws_bytes, stream)"
    assert call in host
    assert f"size_t {arguments.name}_workspace_size({', '.join(['int'] * len(expected))})" in host
    unit = next(u for u in program.units if u.name == arguments.name)
    assert unit.arch == "sm80"  # mma.sync for sm_80 and sm_90 in one object
    assert f"{'true' if bias else 'false'},  // kSupportsBias" in unit.source


def test_key_lengths_pointer_is_passed():
    _, op = _op("BSHD", key_lengths=True)
    assert ak.launch_arguments(op).operands[4] is op.key_lengths


def test_layouts_masks_and_scales_share_one_instance():
    names = {ak.kernel_name(_op(layout, causal=causal)[1]) for layout in LAYOUT_STRIDES for causal in (False, True)}
    names.add(ak.kernel_name(attention_module("BHSD", 1, 12, 128, dim=64, scale=0.3)[1]))
    assert len(names) == 1
    with_bias = ak.kernel_name(_op("BHSD", (2, 1, 1, "k"))[1])
    assert with_bias not in names


@pytest.mark.parametrize("dim, tile, aligned, workspace", [
    (64, "64x64 max_k 64", True, False),
    (32, "64x64 max_k 64", True, False),
    (96, "32x128 max_k 128", True, False),
    (128, "32x128 max_k 128", True, False),
    (100, "32x128 max_k 128", False, False),
    (256, "32x128 max_k any", True, True),
])
def test_tile_follows_the_head_dim(dim, tile, aligned, workspace):
    _, op = attention_module("BHSD", 2, 4, 40, 72, dim)
    key = ak.instance_key(op)
    assert f"tile {tile} {'aligned' if aligned else 'unaligned'} bias=no" in key
    assert ak.tile(op).single_pass is not workspace
    source = ak.emit_instance(op).source
    assert f"{'true' if aligned else 'false'},  // isAligned" in source
    assert ("f32 workspace" in source) == workspace


def test_bf16_and_value_dim_pick_the_tile():
    _, op = attention_module("BSHD", 2, 4, 40, 72, 64, dim_value=128, element="bf16")
    assert ak.instance_key(op).startswith("attention bf16 tile 32x128 max_k 128 aligned")
    assert "using Element = cutlass::bfloat16_t;" in ak.emit_instance(op).source
    assert ak.problem(op)[4:6] == (64, 128)


def test_unit_includes_example_41_and_dedups():
    ops_ = [_op("BHSD")[1], _op("BSHD", causal=True)[1], _op("BHSD", (16, "k"))[1]]
    unit = ak.emit_translation_unit(ops_)
    assert '#include "kernel_forward.h"' in unit
    assert unit.count("extern \"C\" int boltir_attention_") == 2
    assert "AttentionKernel<" in unit and "BatchAdvanced>" in unit


def test_generators_put_attention_before_the_fallbacks():
    from boltir.backends.cuda.codegen import compute_kernels, data_kernels

    assert GENERATORS.index(ak) < GENERATORS.index(data_kernels) < GENERATORS.index(compute_kernels)


FALLBACK_CASES = [
    ({"dim": 98}, "head dims 98 and 98: the fused attention kernel needs multiples of 4"),
    ({"element": "f32"}, "element type f32: the fused attention kernel takes f16 or bf16"),
    ({"bias": (2, 1, 1, 72), "bias_element": "f32"}, "the bias is f32 but q is f16: the kernel reads the bias as q's element type"),
    ({"bias": (2, 1, 40, 1)}, "the bias 2x1x40x1 broadcasts along the keys: the kernel reads bias rows of Sk = 72 keys"),
    ({"seq_k": 70, "bias": (70,)}, "the bias rows have 70 keys, not a multiple of 8: the kernel loads them 16 bytes at a time"),
    ({"batch": 70000}, "70000 batches of 4 heads: the kernel's grid takes at most 65535 of each"),
]


def _bhsd(batch=2, seq_k=72, dim=64, **options):
    return attention_module("BHSD", batch, 4, 40, seq_k, dim, **options)[1]


@pytest.mark.parametrize("kwargs, reason", FALLBACK_CASES)
def test_what_the_fused_kernel_refuses_goes_to_the_fallback(kwargs, reason):
    op = _bhsd(**kwargs)
    assert ak.fused_reason(op) == reason
    assert ak.unsupported_reason(op) is None and ak.supports(op) and ak.is_fallback(op)
    key = ak.instance_key(op)
    assert key.startswith("attention_fallback ") and ak.kernel_name(op).startswith("boltir_attention_fallback_")
    source = ak.emit_translation_unit([op])
    assert "AttentionKernel" not in source and '#include "kernel_forward.h"' not in source
    assert "plain attention (the fallback" in source
    # the same launcher ABI as the fused kernel's
    assert f"int {ak.kernel_name(op)}(\n    const void *q, const void *k, const void *v, const void *bias, const void *key_lengths, void *output," in source


def test_fallback_instances_bake_element_types_and_the_bias_key_stride():
    assert ak.instance_key(_bhsd(element="f32")) == "attention_fallback f32 bias=no bias_key_stride=1 values_per_thread=1"
    assert ak.instance_key(_bhsd(bias=(2, 1, 40, 1))) == "attention_fallback f16 bias=f16 bias_key_stride=0 values_per_thread=1"
    assert ak.instance_key(_bhsd(dim=300, bias=(72,), bias_element="f32")) == (
        "attention_fallback f16 bias=f32 bias_key_stride=1 values_per_thread=3")
    source = ak.emit_instance(_bhsd(bias=(2, 1, 40, 1))).source
    assert "bias[int64_t(start + j) * 0]" in source
    # a bias broadcast along the keys still has its (batch, head, query) strides
    assert ak.geometry(_bhsd(bias=(2, 1, 40, 1))).bias == ak.Strides(40, 0, 1)


def test_a_unit_of_fused_and_fallback_instances():
    unit = ak.emit_translation_unit([_bhsd(), _bhsd(element="f32"), _bhsd(dim=98)])
    assert unit.count('extern "C" int boltir_attention_') == 3
    assert '#include "kernel_forward.h"' in unit


def test_what_no_kernel_computes_says_why_in_one_line():
    op = _bhsd(element="f64")
    assert ak.unsupported_reason(op) == "element types f64: the attention kernels take f16, bf16, f32"
    assert ak.supports(op)  # every attention op is this generator's: emitting it says why not
    with pytest.raises(BoltError) as error:
        ak.emit_instance(op)
    assert error.value.message == ("'op.attention' has no attention kernel: element type f64: the fused attention kernel takes "
                                   "f16 or bf16; element types f64: the attention kernels take f16, bf16, f32")
    assert "\n" not in str(error.value)


def test_supported_edges():
    for kwargs in ({"dim": 256}, {"dim": 100}, {"seq_q": 1, "seq_k": 1}, {"seq_q": 1000, "seq_k": 1024, "bias": (1024,)}):
        arguments = {"seq_q": 40, "seq_k": 72, "dim": 64, **kwargs}
        _, op = attention_module("BHSD", 2, 4, arguments.pop("seq_q"), arguments.pop("seq_k"), arguments.pop("dim"), **arguments)
        assert ak.fused_reason(op) is None and not ak.is_fallback(op), kwargs


# ---------------------------------------------------------------------- nvcc


@pytest.mark.slow
def test_nvcc_compiles_an_instance(tmp_path, monkeypatch):
    """One unit with the flags a model build uses: a fused instance (D = 64 with a bias:
    the wheel's example 41 headers, our launcher) and a fallback, every launcher exported."""
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain or CUTLASS headers here: {error}")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    ops_ = [_op("BSHD", (2, 1, 1, "k"))[1], _bhsd(element="f32", bias=(2, 1, 40, 1))]
    names = [ak.kernel_name(op) for op in ops_]
    (obj,) = nvcc.compile_objects([CompileJob(names[0], ak.emit_translation_unit(ops_), "sm80")], progress=False)
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
        for symbol in (*names, *(f"{name}_workspace_size" for name in names)):
            assert re.search(rf"\bT {symbol}$", symbols, re.MULTILINE), f"{symbol} is not defined in {obj}"


def test_the_host_program_reports_a_fallback():
    module, op = attention_module("BHSD", 2, 4, 40, 72, 64, element="f32", causal=True)
    PlanMemoryPass().apply(make_context(), module)
    program = build_program(module)
    (step,) = program.steps
    assert step.fallback and program.fallbacks == [step] and step.kernel.startswith("boltir_attention_fallback_")
    assert f"{step.kernel}(in[0], in[1], in[2], nullptr, nullptr, (A + 0), {', '.join(map(str, ak.problem(op)))}, ws, ws_bytes, stream)" \
        in program.units[-1].source


# ------------------------------------------------------------ the Hopper kernel


def _sm90(op, schedule: str = "persistent"):
    """The op as an sm90 build marks it (select-kernels), with a schedule ("": select-kernels')."""
    ak.mark_target(op, "sm90")
    if schedule:
        from xdsl.dialects.builtin import StringAttr

        op.attributes[ak.KERNEL_ARCH_ATTR] = StringAttr(f"sm90:{schedule}")
    return op


def test_the_hopper_kernel_only_on_sm90_builds():
    _, op = _op("BHSD")
    assert not ak.is_sm90(op) and ak.kernel_arch(op) == "sm80"  # unmarked: example 41's kernel
    ak.mark_target(op, "sm80")
    ak.mark_target(op, "sm90", cutlass=2)  # cutlass=2 keeps every kernel a 2.x-generation one
    assert ak.KERNEL_ARCH_ATTR not in op.attributes
    _sm90(op)
    assert ak.is_sm90(op) and ak.kernel_arch(op) == "sm90" and not ak.is_fallback(op)
    assert ak.instance_key(op) == "attention_sm90 f16 tile 128x64 head_dim 64 persistent bias=no"
    assert ak.kernel_name(op).startswith("boltir_attention_sm90_")


def test_select_kernels_marks_attention_on_sm90():
    from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass

    for arch, cutlass, marked in (("sm90", 3, True), ("sm90", 2, False), ("sm80", 3, False)):
        module, op = _op("BS3HD")
        SelectKernelsPass(selector="heuristic", arch=arch, cutlass=cutlass).apply(make_context(), module)
        assert ak.is_sm90(op) is marked, (arch, cutlass)


def test_select_kernels_puts_a_biased_attention_on_the_hopper_kernel():
    """With a bias (a padding mask) too: the Hopper kernel measured faster than example 41's
    once its bias loads no longer waited one by one."""
    from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass

    module, op = _op("BS3HD", (2, 1, 1, "k"))
    SelectKernelsPass(selector="heuristic", arch="sm90", cutlass=3).apply(make_context(), module)
    assert ak.is_sm90(op) and ak.kernel_arch(op) == "sm90" and ak.sm90_schedule(op) == "tma"


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", [None, (2, 1, 1, "k"), (2, 3, 16, "k")])
@pytest.mark.parametrize("layout", list(LAYOUT_STRIDES))
def test_hopper_launch_has_the_family_abi_and_strides(layout, bias, causal):
    """The same launcher integers as example 41's (each layout's strides, the bias's zero
    strides); the unit compiles for sm_90a with example 88's header and our fusion."""
    module, op = _op(layout, bias, causal)
    fused = ak.launch_arguments(op)
    arguments = ak.launch_arguments(_sm90(op))
    assert arguments.problem == fused.problem and arguments.operands == fused.operands and arguments.workspace
    strides = dict(zip(ak.PROBLEM_FIELDS, arguments.problem))
    q, _, _, out, k_offset, _ = LAYOUT_STRIDES[layout]
    assert (strides["q_b"], strides["q_h"], strides["q_m"], strides["o_m"], strides["k_offset"]) == (*q, out[2], k_offset)
    PlanMemoryPass().apply(make_context(), module)
    program = build_program(module)
    (step,) = program.steps
    assert (step.family, step.kernel, step.fallback) == ("attention", arguments.name, False)
    unit = next(u for u in program.units if u.name == arguments.name)
    assert unit.arch == "sm90" and "-gencode=arch=compute_90a,code=sm_90a" in unit.flags
    assert '#include "kernel/fmha_kernel_builder.hpp"' in unit.source
    assert "struct Fusion {" in unit.source  # boltir_attention_sm90.h, pasted
    assert f"boltir::attention_sm90::Fusion<{'true' if bias else 'false'}, Element>" in unit.source
    assert '#include "kernel_forward.h"' not in unit.source
    pointers = "in[0], in[0], in[0]" if layout == "BS3HD" else "in[0], in[1], in[2]"
    bias_pointer = "nullptr" if bias is None else f"in[{1 if layout == 'BS3HD' else 3}]"
    call = f"{arguments.name}({pointers}, {bias_pointer}, nullptr, (A + 0), {', '.join(map(str, arguments.problem))}, ws, ws_bytes, stream)"
    assert call in program.units[-1].source


def test_hopper_instances_are_shared_across_layouts_masks_and_scales():
    names = {ak.kernel_name(_sm90(_op(layout, causal=causal, key_lengths=lengths)[1]))
             for layout in LAYOUT_STRIDES for causal in (False, True) for lengths in (False, True)}
    names.add(ak.kernel_name(_sm90(attention_module("BHSD", 1, 12, 128, dim=64, scale=0.3)[1])))
    assert len(names) == 1
    assert ak.kernel_name(_sm90(_op("BHSD", (2, 1, 1, "k"))[1])) not in names
    assert ak.kernel_name(_sm90(_op("BHSD")[1], "cooperative")) not in names


@pytest.mark.parametrize("dim, element, schedule, key", [
    (64, "f16", "persistent", "attention_sm90 f16 tile 128x64 head_dim 64 persistent bias=no"),
    (128, "f16", "persistent", "attention_sm90 f16 tile 128x128 head_dim 128 persistent bias=no"),
    (128, "bf16", "cooperative", "attention_sm90 bf16 tile 128x128 head_dim 128 cooperative bias=no"),
    (64, "f16", "tma", "attention_sm90 f16 tile 64x128 head_dim 64 tma bias=no"),
    (64, "f16", "wide", "attention_sm90 f16 tile 128x128 head_dim 64 wide bias=no"),
    (64, "f16", "locked", "attention_sm90 f16 tile 128x128 head_dim 64 locked bias=no"),
    (64, "f16", "overlap", "attention_sm90 f16 tile 128x128 head_dim 64 overlap bias=no"),
    (64, "f16", "overlap_q4", "attention_sm90 f16 tile 128x128 head_dim 64 overlap_q4 bias=no"),
    (64, "f16", "overlap_q4kv8", "attention_sm90 f16 tile 128x128 head_dim 64 overlap_q4kv8 bias=no"),
    (64, "f16", "wide_q4", "attention_sm90 f16 tile 128x128 head_dim 64 wide_q4 bias=no"),
    (64, "bf16", "overlap_q4", "attention_sm90 bf16 tile 128x128 head_dim 64 overlap_q4 bias=no"),
    (64, "f16", "overlap_q4_sums", "attention_sm90 f16 tile 128x128 head_dim 64 overlap_q4_sums bias=no"),
])
def test_hopper_tile_and_schedule(dim, element, schedule, key):
    op = _sm90(attention_module("BSHD", 2, 4, 40, 72, dim, element=element)[1], schedule)
    assert ak.instance_key(op) == key
    source = ak.emit_instance(op).source
    tile = {"tma": "Shape<_64, _128, _64>", "wide": "Shape<_128, _128, _64>", "locked": "Shape<_128, _128, _64>",
            "overlap": "Shape<_128, _128, _64>", "overlap_q4": "Shape<_128, _128, _64>",
            "overlap_q4kv8": "Shape<_128, _128, _64>", "wide_q4": "Shape<_128, _128, _64>",
            "overlap_q4_sums": "Shape<_128, _128, _64>"}.get(
        schedule, f"Shape<_128, _{64 if dim == 64 else 128}, _{dim}>")
    assert tile in source
    kernel = {"persistent": "KernelTmaWarpSpecializedPingpong", "cooperative": "KernelTmaWarpSpecializedCooperative",
              "tma": "KernelTma", "wide": "KernelTmaWarpSpecializedPingpong",
              "wide_q4": "KernelTmaWarpSpecializedPingpong, cutlass::fmha::kernel::Option<cutlass::fmha::kernel::Tag::kStagesQ, "
                         "cute::Int<4>>",
              "locked": "KernelTmaWarpSpecializedPingpong, cutlass::fmha::kernel::Option<"
                        "cutlass::fmha::kernel::Tag::kIsMainloopLocked, cute::true_type>"}.get(schedule)
    if schedule.startswith("overlap"):  # our mainloop in the example's persistent kernel
        assert "boltir::attention_sm90::OverlappedMainloop<" in source and "PersistentTileScheduler" in source
        assert "FmhaBuilder<" not in source.split("struct OverlappedMainloop")[-1]
        stages = source.count("Tag::kStagesQ, cute::Int<4>>"), source.count("Tag::kStagesKV, cute::Int<8>>")
        assert stages == {"overlap": (0, 0), "overlap_q4": (2, 0), "overlap_q4kv8": (2, 2),
                          "overlap_q4_sums": (2, 0)}[schedule]  # mainloop and kernel
        # the rows' totals under the last product: our mainloop's template option after the fusion
        assert ("    Fusion, true>;" in source) == (schedule == "overlap_q4_sums")
        # the example's epilogue, as it is, in every untraced unit
        assert "Mainloop, cutlass::fmha::collective::FmhaFwdEpilogue<Element, float, typename Mainloop::TileShapePV>," in source
        assert "TracedEpilogue" not in source
    else:
        assert f"cutlass::gemm::{kernel}>::Kernel;" in source


@pytest.mark.parametrize("schedule", ["tma", "wide", "locked", "overlap", "overlap_q4", "overlap_q4kv8", "wide_q4",
                                      "overlap_q4_sums"])
def test_the_tma_and_wide_schedules_take_head_dim_64_only(schedule):
    """Their 64x128 and 128x128 tiles are built for D = 64; at D = 128 the op keeps example 41's kernel, and says why."""
    op = _sm90(attention_module("BSHD", 2, 4, 40, 72, 128)[1], schedule)
    assert not ak.is_sm90(op) and f"the Hopper attention's '{schedule}' schedule takes D = 64, got 128" in ak.sm90_reason(op)
    assert ak.instance_key(op).startswith("attention ")  # example 41's instance


@pytest.mark.parametrize("batch, heads, seq, dim, schedule", [
    (1, 12, 128, 64, "tma"),      # BERT b1: 12 query tiles of 128 on 132 SMs
    (8, 12, 128, 64, "tma"),      # GPT-2's prefill at b8: 96 tiles
    (11, 12, 128, 64, "overlap_q4_sums"),  # 132 tiles: a wave; no bias, not causal: our mainloop, two Q stages
    (32, 12, 128, 64, "overlap_q4_sums"),  # one key step: the rows' totals under the last product
    (32, 12, 197, 64, "overlap_q4_sums"),  # ViT-B/16: two key steps
    (32, 12, 512, 64, "overlap_q4"),  # four key steps
    (32, 12, (128, "causal"), 64, "wide"),  # GPT-2 at b32: causal, short (not timed on our mainloop with two Q stages)
    (32, 12, (512, "causal"), 64, "overlap"),  # causal, four key steps: our mainloop, one Q stage
    (32, 12, (512, "mask"), 64, "locked"),  # four, with a bias: the warp groups take turns
    (32, 12, (128, "mask"), 64, "wide"),
    (32, 12, 128, 128, "persistent"),  # D = 128: the example's tiles
])
def test_select_kernels_picks_the_hopper_schedule(batch, heads, seq, dim, schedule):
    seq, kind = seq if isinstance(seq, tuple) else (seq, None)
    op = attention_module("BHSD", batch, heads, seq, seq, dim, bias=(batch, 1, 1, seq) if kind == "mask" else None,
                          causal=kind == "causal")[1]
    ak.mark_target(op, "sm90", sms=132)
    assert ak.sm90_schedule(op) == schedule and ak.is_sm90(op)


def test_an_unknown_schedule_is_one_line():
    op = _sm90(_op("BHSD")[1], "sideways")
    with pytest.raises(BoltError) as error:
        ak.instance_key(op)
    assert error.value.message == ("unknown Hopper attention schedule 'sideways'; known: persistent, cooperative, tma, "
                                   "wide, locked, overlap, wide_q4, overlap_q4, overlap_q4_sums, overlap_q4kv8")


HOPPER_REFUSALS = [
    ({"element": "f32"}, "element type f32: the Hopper attention kernel takes f16 or bf16", "attention_fallback"),
    ({"dim": 96}, "head dims 96 and 96: the Hopper attention kernel takes D = Dv = 64 or 128", "attention"),
    ({"dim": 64, "dim_value": 128}, "head dims 64 and 128: the Hopper attention kernel takes D = Dv = 64 or 128", "attention"),
    ({"bias": (2, 1, 1, 72), "bias_element": "f32"},
     "the bias is f32 but q is f16: the Hopper kernel reads the bias as q's element type", "attention_fallback"),
    ({"bias": (2, 1, 40, 1)},
     "the bias 2x1x40x1 broadcasts along the keys: the Hopper kernel reads bias rows of Sk keys", "attention_fallback"),
    ({"batch": 70000}, "70000 batches of 4 heads: the Hopper attention kernel takes at most 65535 of each", "attention_fallback"),
]


@pytest.mark.parametrize("kwargs, reason, kind", HOPPER_REFUSALS)
def test_what_the_hopper_kernel_refuses_goes_to_example_41_or_the_fallback(kwargs, reason, kind):
    arguments = {"batch": 2, "seq_q": 40, "seq_k": 72, "dim": 64, **kwargs}
    op = _sm90(attention_module("BHSD", arguments.pop("batch"), 4, arguments.pop("seq_q"), arguments.pop("seq_k"),
                                arguments.pop("dim"), **arguments)[1])
    assert ak.sm90_reason(op) == reason
    # in a Hopper build the other kernels compile for sm_90a too (programmatic dependent launch)
    assert not ak.is_sm90(op) and ak.kernel_arch(op) == "sm90"
    assert ak.instance_key(op).split()[0] == kind


def test_hopper_takes_any_sequence_lengths_and_decode_shapes():
    """Queries and keys at any count: ViT's 197, Swin's windows of 49, CLIP's 77, decode."""
    for seq_q, seq_k, bias in ((128, 197, (2, 1, 1, 197)), (8, 1, None), (1024, 1024, (1024,)), (197, 197, None),
                               (49, 49, (1, 4, 49, 49)), (77, 77, None), (1, 333, None), (3, 5, None)):
        op = _sm90(attention_module("BHSD", 2, 4, seq_q, seq_k, 64, bias=bias)[1])
        assert ak.sm90_reason(op) is None and ak.is_sm90(op), (seq_q, seq_k)


def test_a_unit_of_hopper_and_example_41_instances_is_sm90():
    ops_ = [_sm90(_op("BHSD")[1]), _op("BSHD")[1], _bhsd(element="f32")]
    unit = ak.emit_translation_unit(ops_)
    assert unit.count('extern "C" int boltir_attention_') == 3
    assert '#include "kernel_forward.h"' in unit and '#include "kernel/fmha_kernel_builder.hpp"' in unit
    assert ak.unit_arch(ops_) == "sm90" and ak.unit_arch(ops_[1:]) == "sm80"


def test_hopper_units_compile_with_fast_math_as_cutlass_builds_example_88():
    """Example 88's softmax calls exp2f: with --use_fast_math (its CMake's flag) that is
    MUFU.EX2 alone. The units without a Hopper instance keep boltir's flags, and a model's
    build (the host program) and the tuner pass the unit's flags to nvcc."""
    hopper, other = _sm90(_op("BHSD")[1]), _op("BSHD")[1]
    assert ak.unit_flags([hopper, other]) == ("--use_fast_math",) and ak.unit_flags([other]) == ()
    job = unit_job("u", ak, [hopper], "sm90")
    assert job.flags[-1] == "--use_fast_math" and unit_job("u", ak, [other], "sm80").flags[-1] != "--use_fast_math"
    module, _ = attention_module("BHSD", 2, 4, 128, 128, 64)
    for op in module.walk():
        if type(op) in ak.FAMILIES:
            _sm90(op)
    PlanMemoryPass().apply(make_context(), module)
    (unit,) = [u for u in build_program(module).units if "attention" in u.name]
    assert "--use_fast_math" in unit.flags


@pytest.mark.slow
def test_nvcc_compiles_a_hopper_instance(tmp_path, monkeypatch):
    """A Hopper instance with a padding mask (example 88's headers, our fusion and
    launcher), compiled for sm_90a as a model build does; both launchers exported."""
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain or CUTLASS headers here: {error}")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    op = _sm90(_op("BS3HD", (2, 1, 1, "k"))[1])
    name = ak.kernel_name(op)
    (obj,) = nvcc.compile_objects([unit_job(name, ak, [op], ak.unit_arch([op]))], progress=False)
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", str(obj)], check=False, capture_output=True, text=True).stdout
        for symbol in (name, f"{name}_workspace_size"):
            assert re.search(rf"\bT {symbol}$", symbols, re.MULTILINE), f"{symbol} is not defined in {obj}"


def test_only_the_overlap_schedule_units_carry_our_mainloop():
    """Our mainloop's header goes into the units that run it, so that the other Hopper
    units' sources (and cached objects) do not change with it."""
    overlap = ak.emit_translation_unit([_sm90(_op("BHSD")[1], "overlap")])
    wide = ak.emit_translation_unit([_sm90(_op("BHSD")[1], "wide")])
    assert "struct OverlappedMainloop" in overlap and "struct OverlappedMainloop" not in wide
    assert "struct Fusion" in overlap and "struct Fusion" in wide
