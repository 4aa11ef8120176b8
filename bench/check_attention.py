"""The fused attention kernels (boltir/backends/cuda/codegen/attention_kernels.py) on the GPU:
first their correctness, every layout and mask variant against the op-level interpreter
(‖Δ‖/‖ref‖ ≤ 5e-3 for f16, 1e-2 for bf16, 1e-4 for f32): example 41's kernel, the plain
fallback, and the Hopper kernel (attention_sm90_kernels; cases labelled "sm90", the op
marked as an sm90 build marks it, each checked to reach that kernel); then their speed at
issue 16's shapes (batch 32, 12 heads, sequence 128 and 512, head dim 64, with and without
an additive [B, 1, 1, S] mask; GPT-2's causal prefill and BERT at batch 1 besides), one
column per kernel (example 41, Hopper persistent, cooperative and tma), against
torch.nn.functional.scaled_dot_product_attention on each of its backends (flash,
memory-efficient, cuDNN, math; a backend that refuses a case is skipped). Both sides are
timed as CUDA-graph replays (`bench.kernels.graph_time_ms`). Prints the correctness table,
then the timing table last; exits 1 if a case fails.

    source bench/setup_gpu.sh && python3 -m bench.check_attention [--only TEXT] [--kernels MARKS] [--no-timing] [--no-unit-flags]
    python3 -m bench.check_attention --build-only      # compile the library; no GPU

TFLOP/s counts 4·B·H·Sq·Sk·D (two products; the causal half is not discounted), for our
fastest kernel of the workload. `--kernels` chooses the timed kernels (all by default).
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import StringAttr

from bench.tables import print_table
from bench.check_compute_kernels import relative_error
from boltir.backends.cuda.codegen import attention_kernels as ak
from boltir.backends.cuda.codegen import attention_sm90_kernels as sm90
from boltir.backends.cuda.codegen.generator import CompileJob, unit_job
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.dtypes import numpy_dtype
from boltir.interp import run
from boltir.ir import find_entry
from tests.support.attention_cases import attention_module
from tests.support.torch_arrays import to_numpy_f32, to_torch

TOLERANCE = {"f16": 5e-3, "bf16": 1e-2, "f32": 1e-4}
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
KERNELS = {"sm80": "example 41", "sm90": "sm90", "sm90:cooperative": "sm90 coop", "sm90:tma": "sm90 tma",
           "sm90:wide": "sm90 wide", "sm90:locked": "sm90 locked", "sm90:overlap": "sm90 overlap",
           "sm90:overlap_q4": "sm90 q4", "sm90:overlap_q4kv8": "sm90 q4kv8", "sm90:wide_q4": "sm90 wide q4",
           "sm90:overlap_q4_sums": "sm90 q4 sums"}
"""The timing table's kernels: the op's `kernel_arch` mark (none: example 41) -> column."""


@dataclass
class Case:
    label: str
    layout: str
    batch: int
    heads: int
    seq_q: int
    seq_k: int
    dim: int = 64
    options: dict = field(default_factory=dict)
    """attention_module's keyword arguments: dim_value, element, bias, causal, key_lengths."""
    kernel: str = "sm80"
    """The op's `kernel_arch` mark: "sm80" (none: example 41's kernel or the fallback), "sm90"
    or "sm90:SCHEDULE" (the Hopper kernel, which must then take the case)."""
    bias_ramp: float = 0.0
    """Added to the bias, this much a key: scores that grow along the keys, so that the rows'
    maxima grow from key step to key step (the online softmax's rescale path)."""
    module: object = None
    op: object = None

    def make(self) -> Case:
        seq_k = self.seq_q if self.layout == "BS3HD" else self.seq_k
        self.module, self.op = attention_module(self.layout, self.batch, self.heads, self.seq_q, seq_k, self.dim, **self.options)
        if self.kernel != "sm80":
            self.op.attributes[ak.KERNEL_ARCH_ATTR] = StringAttr(self.kernel)
            if not ak.is_sm90(self.op):
                raise ValueError(f"{self.label}: the Hopper kernel does not take it: {ak.sm90_reason(self.op)}")
        return self

    @property
    def element(self) -> str:
        return self.options.get("element", "f16")


def correctness_cases() -> list[Case]:
    out = []
    for layout in ("BHSD", "BSHD", "BS3HD"):
        sq, sk = (77, 136) if layout != "BS3HD" else (136, 136)
        keys = sk
        masks = {
            "no mask": {},
            "padding mask [B,1,1,Sk]": {"bias": (2, 1, 1, keys)},
            "full bias [B,H,Sq,Sk]": {"bias": (2, 3, sq, keys)},
            "bias [Sq,Sk]": {"bias": (sq, keys)},
            "bias [1,H,1,Sk]": {"bias": (1, 3, 1, keys)},
            "causal": {"causal": True},
            "key_lengths": {"key_lengths": True},
            "causal + padding mask + key_lengths": {"causal": True, "bias": (2, 1, 1, keys), "key_lengths": True},
        }
        for name, options in masks.items():
            out.append(Case(f"{layout} 2x3 Sq={sq} Sk={sk} D=64 {name}", layout, 2, 3, sq, sk, 64, options))
    for dim, note in ((32, ""), (96, " (tile 32x128)"), (128, " (tile 32x128)"), (100, " (unaligned)"), (256, " (f32 workspace)")):
        out.append(Case(f"BHSD 2x4 Sq=130 Sk=200 D={dim}{note}", "BHSD", 2, 4, 130, 200, dim))
        out.append(Case(f"BSHD 2x4 Sq=130 Sk=200 D={dim}{note} causal", "BSHD", 2, 4, 130, 200, dim, {"causal": True}))
    out += [
        Case("BSHD 2x4 D=64 Dv=128", "BSHD", 2, 4, 50, 90, 64, {"dim_value": 128}),
        Case("BHSD bf16 2x3 D=64 padding mask", "BHSD", 2, 3, 128, 128, 64, {"element": "bf16", "bias": (2, 1, 1, 128)}),
        Case("BS3HD bf16 2x3 D=128 causal", "BS3HD", 2, 3, 100, 100, 128, {"element": "bf16", "causal": True}),
        Case("BHSD Sq=1 Sk=1", "BHSD", 3, 2, 1, 1, 64),
        Case("BHSD Sq=1 Sk=333 (decode)", "BHSD", 3, 2, 1, 333, 64),
        Case("BHSD Sq=333 Sk=1", "BHSD", 3, 2, 333, 1, 64, {"causal": True}),
        Case("BSHD 1x2 Sq=1000 Sk=1024 padding mask", "BSHD", 1, 2, 1000, 1024, 64, {"bias": (1, 1, 1, 1024)}),
        Case("BS3HD 1x2 S=1024 D=128 causal", "BS3HD", 1, 2, 1024, 1024, 128, {"causal": True}),
        Case("BHSD causal Sq=40 < Sk=100 (top-left)", "BHSD", 2, 2, 40, 100, 64, {"causal": True}),
    ]
    # what the fused kernel does not take: the plain fallback
    out += [
        Case("fallback f32 BHSD padding mask", "BHSD", 2, 3, 77, 136, 64, {"element": "f32", "bias": (2, 1, 1, 136)}),
        Case("fallback f16 q, f32 mask [B,1,1,Sk]", "BSHD", 2, 3, 128, 128, 64, {"bias": (2, 1, 1, 128), "bias_element": "f32"}),
        Case("fallback D=98 causal", "BHSD", 2, 3, 70, 90, 98, {"causal": True}),
        Case("fallback bias [B,1,Sq,1] (broadcast along the keys)", "BHSD", 2, 3, 50, 64, 64, {"bias": (2, 1, 50, 1)}),
        Case("fallback Sk=197 mask [B,1,1,Sk] (ViT length)", "BHSD", 2, 3, 197, 197, 64, {"bias": (2, 1, 1, 197)}),
        Case("fallback f32 BS3HD causal + key_lengths", "BS3HD", 2, 3, 300, 300, 64, {"element": "f32", "causal": True, "key_lengths": True}),
        Case("fallback bf16 D=300 Sk=600 (3 outputs per thread)", "BHSD", 1, 2, 20, 600, 300, {"element": "bf16", "dim_value": 300, "bias": (600,), "bias_element": "f32"}),
    ]
    return out + sm90_correctness_cases()


def sm90_correctness_cases() -> list[Case]:
    """The Hopper kernel's cases: Sq a multiple of 8, the last key tile partial (Sk = 136,
    200), every layout and mask, both head dims, bf16, both schedules."""
    out = []
    for layout in ("BHSD", "BSHD", "BS3HD"):
        sq, sk = (80, 136) if layout != "BS3HD" else (136, 136)
        masks = {
            "no mask": {},
            "padding mask [B,1,1,Sk]": {"bias": (2, 1, 1, sk)},
            "full bias [B,H,Sq,Sk]": {"bias": (2, 3, sq, sk)},
            "bias [Sq,Sk]": {"bias": (sq, sk)},
            "causal": {"causal": True},
            "key_lengths": {"key_lengths": True},
            "causal + padding mask + key_lengths": {"causal": True, "bias": (2, 1, 1, sk), "key_lengths": True},
        }
        for name, options in masks.items():
            out.append(Case(f"sm90 {layout} 2x3 Sq={sq} Sk={sk} D=64 {name}", layout, 2, 3, sq, sk, 64, options, "sm90"))
    out += [
        Case("sm90 BHSD 2x4 Sq=136 Sk=200 D=128", "BHSD", 2, 4, 136, 200, 128, {}, "sm90"),
        Case("sm90 BSHD 2x4 Sq=136 Sk=200 D=128 causal + key_lengths", "BSHD", 2, 4, 136, 200, 128,
             {"causal": True, "key_lengths": True}, "sm90"),
        Case("sm90 BS3HD 2x3 S=256 D=128 padding mask", "BS3HD", 2, 3, 256, 256, 128, {"bias": (2, 1, 1, 256)}, "sm90"),
        Case("sm90 BHSD bf16 2x3 D=64 padding mask", "BHSD", 2, 3, 128, 128, 64, {"element": "bf16", "bias": (2, 1, 1, 128)}, "sm90"),
        Case("sm90 BS3HD bf16 2x3 D=128 causal", "BS3HD", 2, 3, 96, 96, 128, {"element": "bf16", "causal": True}, "sm90"),
        Case("sm90 BHSD Sq=8 Sk=333 (decode) D=64", "BHSD", 3, 2, 8, 333, 64, {}, "sm90"),
        Case("sm90 BHSD Sq=336 Sk=1 causal", "BHSD", 3, 2, 336, 1, 64, {"causal": True}, "sm90"),
        Case("sm90 BSHD 1x2 Sq=1000 Sk=1024 padding mask", "BSHD", 1, 2, 1000, 1024, 64, {"bias": (1, 1, 1, 1024)}, "sm90"),
        Case("sm90 BS3HD 1x2 S=1024 D=64 causal", "BS3HD", 1, 2, 1024, 1024, 64, {"causal": True}, "sm90"),
        Case("sm90 BHSD causal Sq=40 < Sk=100 (top-left)", "BHSD", 2, 2, 40, 100, 64, {"causal": True}, "sm90"),
        Case("sm90 BHSD 2x3 Sq=128 Sk=197 mask [B,1,1,Sk]", "BHSD", 2, 3, 128, 197, 64, {"bias": (2, 1, 1, 197)}, "sm90"),
        # query counts that are not multiples of 8 (example 88's can_implement refuses them; we do not)
        Case("sm90 BS3HD 2x3 S=197 D=64 (ViT)", "BS3HD", 2, 3, 197, 197, 64, {}, "sm90"),
        Case("sm90 BHSD 2x4 S=49 D=64 + bias [1,H,Sq,Sk] (Swin window)", "BHSD", 2, 4, 49, 49, 64, {"bias": (1, 4, 49, 49)}, "sm90"),
        Case("sm90 BSHD 2x3 S=77 D=64 causal (CLIP text)", "BSHD", 2, 3, 77, 77, 64, {"causal": True}, "sm90"),
        Case("sm90 BHSD 3x2 Sq=1 Sk=333 (decode)", "BHSD", 3, 2, 1, 333, 64, {}, "sm90"),
        Case("sm90 BHSD 2x3 Sq=131 Sk=67 D=128 causal + key_lengths", "BHSD", 2, 3, 131, 67, 128,
             {"causal": True, "key_lengths": True}, "sm90"),
        Case("sm90 coop BS3HD 2x3 S=197 D=64 (ViT)", "BS3HD", 2, 3, 197, 197, 64, {}, "sm90:cooperative"),
        Case("sm90 coop BSHD 2x3 Sq=80 Sk=136 causal + key_lengths", "BSHD", 2, 3, 80, 136, 64,
             {"causal": True, "key_lengths": True}, "sm90:cooperative"),
        Case("sm90 coop BS3HD 2x3 S=136 padding mask", "BS3HD", 2, 3, 136, 136, 64, {"bias": (2, 1, 1, 136)}, "sm90:cooperative"),
        # the "tma" schedule: 64-query tiles of 128 keys (not warp-specialized)
        Case("sm90 tma BS3HD 2x3 S=197 D=64 (ViT)", "BS3HD", 2, 3, 197, 197, 64, {}, "sm90:tma"),
        Case("sm90 tma BSHD 2x3 Sq=80 Sk=136 causal + key_lengths", "BSHD", 2, 3, 80, 136, 64,
             {"causal": True, "key_lengths": True}, "sm90:tma"),
        Case("sm90 tma BS3HD 2x3 S=136 padding mask", "BS3HD", 2, 3, 136, 136, 64, {"bias": (2, 1, 1, 136)}, "sm90:tma"),
        Case("sm90 tma BHSD 2x3 Sq=77 Sk=136 full bias [B,H,Sq,Sk]", "BHSD", 2, 3, 77, 136, 64, {"bias": (2, 3, 77, 136)},
             "sm90:tma"),
        Case("sm90 tma BHSD 3x2 Sq=1 Sk=333 (decode)", "BHSD", 3, 2, 1, 333, 64, {}, "sm90:tma"),
        Case("sm90 tma BS3HD 1x2 S=1024 D=64 causal", "BS3HD", 1, 2, 1024, 1024, 64, {"causal": True}, "sm90:tma"),
    ]
    # every schedule of 128-key tiles (attention_sm90_kernels.SCHEDULES says what each does)
    for schedule in wide_tile_schedules():
        out += wide_tile_cases(schedule)
    return out


def wide_tile_schedules() -> list[str]:
    return [name for name, schedule in sm90.SCHEDULES.items() if schedule.tiles == sm90.WIDE_TILES]


def wide_tile_cases(schedule: str) -> list[Case]:
    """One key step, several (the last partial), masks of every kind, decode, long causal."""
    kernel = f"sm90:{schedule}"
    return [
        Case(f"sm90 {schedule} BS3HD 2x3 S=197 D=64 (ViT)", "BS3HD", 2, 3, 197, 197, 64, {}, kernel),
        Case(f"sm90 {schedule} BHSD 2x3 Sq=128 Sk=128 (one key step)", "BHSD", 2, 3, 128, 128, 64, {}, kernel),
        Case(f"sm90 {schedule} BSHD 2x3 Sq=80 Sk=136 causal + key_lengths", "BSHD", 2, 3, 80, 136, 64,
             {"causal": True, "key_lengths": True}, kernel),
        Case(f"sm90 {schedule} BS3HD 2x3 S=136 padding mask", "BS3HD", 2, 3, 136, 136, 64, {"bias": (2, 1, 1, 136)}, kernel),
        Case(f"sm90 {schedule} BHSD 2x3 Sq=77 Sk=136 full bias [B,H,Sq,Sk]", "BHSD", 2, 3, 77, 136, 64,
             {"bias": (2, 3, 77, 136)}, kernel),
        Case(f"sm90 {schedule} BHSD 3x2 Sq=1 Sk=333 (decode)", "BHSD", 3, 2, 1, 333, 64, {}, kernel),
        Case(f"sm90 {schedule} BS3HD 1x2 S=1024 D=64 causal + padding mask", "BS3HD", 1, 2, 1024, 1024, 64,
             {"causal": True, "bias": (1, 1, 1, 1024)}, kernel),
        Case(f"sm90 {schedule} BHSD 2x3 Sq=256 Sk=640 D=64", "BHSD", 2, 3, 256, 640, 64, {}, kernel),
        # row maxima that grow by about 2^18 a key step and by about 2^1.8 (the online
        # softmax's rescale, large and small)
        Case(f"sm90 {schedule} BHSD 2x3 Sq=128 Sk=640 bias rising 0.1 a key", "BHSD", 2, 3, 128, 640, 64,
             {"bias": (2, 1, 1, 640)}, bias_ramp=0.1, kernel=kernel),
        Case(f"sm90 {schedule} BHSD 2x3 Sq=128 Sk=640 bias rising 0.01 a key", "BHSD", 2, 3, 128, 640, 64,
             {"bias": (2, 1, 1, 640)}, bias_ramp=0.01, kernel=kernel),
    ]


def timing_workloads() -> list[Case]:
    """Issue 16's shapes (both layouts), then GPT-2's causal prefill, BERT at batch 1 and
    ViT-B/16's 197 tokens at batch 32."""
    out = []
    for seq in (128, 512):
        for masked in (False, True):
            options = {"bias": (32, 1, 1, seq)} if masked else {}
            for layout in ("BHSD", "BS3HD"):
                mask = " + mask [B,1,1,S]" if masked else ""
                out.append(Case(f"b32 h12 s{seq} d64{mask} {layout}", layout, 32, 12, seq, seq, 64, options))
    out += [
        Case("b8 h12 s128 d64 causal BS3HD (GPT-2)", "BS3HD", 8, 12, 128, 128, 64, {"causal": True}),
        Case("b1 h12 s128 d64 + mask [B,1,1,S] BS3HD", "BS3HD", 1, 12, 128, 128, 64, {"bias": (1, 1, 1, 128)}),
        Case("b32 h12 s197 d64 BS3HD (ViT-B/16)", "BS3HD", 32, 12, 197, 197, 64, {}),
    ]
    return out


def timing_cases(kernels=tuple(KERNELS)) -> list[Case]:
    """Each workload once per kernel (the label's workload, then the kernel's mark)."""
    return [replace(workload, kernel=kernel) for workload in timing_workloads() for kernel in kernels]


def chosen_kernels(text: str | None) -> tuple[str, ...]:
    """`--kernels`' marks (a KERNELS key, or a schedule for its "sm90:" key), in KERNELS' order."""
    if not text:
        return tuple(KERNELS)
    wanted = set(text.split(","))
    unknown = wanted - {k for key in KERNELS for k in (key, key.removeprefix("sm90:"))}
    if unknown:
        raise SystemExit(f"error: unknown kernels {', '.join(sorted(unknown))}; known: {', '.join(KERNELS)}")
    return tuple(key for key in KERNELS if key in wanted or key.removeprefix("sm90:") in wanted)


# ------------------------------------------------------------------------- kernels


def build_library(built: list[Case], path: str, unit_flags: bool = True) -> Path:
    """One unit per distinct instance (they compile in parallel); without `unit_flags`, on
    boltir's flags alone (no `ak.unit_flags`: a baseline for what those flags change)."""
    jobs: dict[str, CompileJob] = {}
    for case in built:
        name = ak.kernel_name(case.op)
        job = unit_job(name, ak, [case.op], ak.unit_arch([case.op]))
        jobs.setdefault(name, job if unit_flags else replace(job, extra_flags=()))
    return build_shared_library(list(jobs.values()), path, progress="always")


class Bound:
    """A case's launcher bound to torch tensors: one ctypes call per launch."""

    def __init__(self, library, case: Case, tensors: dict, stream: int):
        import torch

        arguments = ak.launch_arguments(case.op)
        by_value = {value: tensors[f"arg{value.index}"] for value in find_entry(case.module).body.block.args}
        out_type = case.op.output.type
        self.output = torch.full(tuple(out_type.get_shape()), float("nan"), dtype=tensors["arg0"].dtype, device="cuda")
        pointers = [None if v is None else by_value[v].data_ptr() for v in arguments.operands[:-1]] + [self.output.data_ptr()]
        ints = [ctypes.c_int(x) for x in arguments.problem]
        size_function = getattr(library, f"{arguments.name}_workspace_size")
        size_function.restype = ctypes.c_size_t
        size = int(size_function(*ints))
        self.workspace = torch.empty(max(size, 1), dtype=torch.uint8, device="cuda")
        self.function = getattr(library, arguments.name)
        self.function.restype = ctypes.c_int
        self.arguments = (*(ctypes.c_void_p(p) for p in pointers), *ints, ctypes.c_void_p(self.workspace.data_ptr()),
                          ctypes.c_size_t(size), ctypes.c_void_p(stream))
        self.library, self.name = library, arguments.name

    def __call__(self) -> None:
        code = self.function(*self.arguments)
        if code:
            raise RuntimeError(f"{self.name} returned {code}: {self.library.boltir_error_string(code).decode()}")


def random_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """q, k, v uniform in [-1, 1] (scores of a few units); a bias of mostly small values and
    some -10000 (masked keys); key lengths in [1, Sk], the first batch's Sk, the second's 0."""
    entry = find_entry(case.module)
    inputs = {}
    for index, arg in enumerate(entry.body.block.args):
        shape = tuple(arg.type.get_shape())
        if arg is case.op.key_lengths:
            keys = case.op.head_shapes()[1][2]
            lengths = rng.integers(1, keys + 1, shape)
            lengths[0] = keys
            if len(lengths) > 1:
                lengths[1] = 0  # every key masked: zeros, as the interpreter's
            inputs[f"arg{index}"] = lengths.astype(np.int32)
            continue
        values = rng.uniform(-1.0, 1.0, shape)
        if arg is case.op.bias:
            values = np.where(rng.uniform(size=shape) < 0.2, -10000.0, values)
            if shape[-1] > 1:  # never a fully masked row (undefined in the kernel's softmax)
                values[..., 0] = 0.0
            values = values + case.bias_ramp * np.arange(shape[-1])
        inputs[f"arg{index}"] = values.astype(numpy_dtype(arg.type.element_type))
    return inputs


def check(cases: list[Case], library, rng) -> list[tuple]:
    import torch

    stream = torch.cuda.current_stream().cuda_stream
    rows = []
    for case in cases:
        name = ak.kernel_name(case.op)
        try:
            inputs = random_inputs(case, rng)
            (expected,) = run(case.module, inputs)
            bound = Bound(library, case, {k: to_torch(v) for k, v in inputs.items()}, stream)
            bound()
            torch.cuda.synchronize()
            error = relative_error(to_numpy_f32(bound.output).astype(np.float64), expected.astype(np.float64))
            bar = TOLERANCE[case.element]
            rows.append((case.label, ak.instance_key(case.op).removeprefix("attention "), f"{error:.2e}", f"< {bar:.0e}",
                         "pass" if error < bar else "FAIL"))
        except Exception as error:  # noqa: BLE001 - a failing case is a row
            traceback.print_exc()
            rows.append((case.label, name, "-", str(error).splitlines()[0][:70], "FAIL"))
        print("case:", " | ".join(rows[-1]), flush=True)
    return rows


# -------------------------------------------------------------------------- timing


def sdpa_inputs(case: Case, tensors: dict):
    """q, k, v as [B, H, S, D] views of our tensors (no copy), and the mask."""
    layout = case.layout
    if layout == "BS3HD":
        packed = tensors["arg0"]
        q, k, v = (packed[:, :, i].transpose(1, 2) for i in range(3))
        rest = 1
    else:
        q, k, v = (tensors[f"arg{i}"] for i in range(3))
        if layout == "BSHD":
            q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        rest = 3
    mask = tensors.get(f"arg{rest}") if case.op.bias is not None else None
    return q, k, v, mask


@dataclass
class Timed:
    """One workload's times: each kernel's (ms, error against SDPA in f32), and SDPA's backends."""

    workload: Case
    flops: int
    ours: dict = field(default_factory=dict)
    peers: dict = field(default_factory=dict)


def time_workload(cases: list[Case], library, rng) -> Timed:
    """The workload's cases (one per kernel, same operands) and SDPA on the same tensors."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from bench.kernels import graph_time_ms

    first = cases[0]
    tensors = {k: to_torch(v) for k, v in random_inputs(first, rng).items()}
    q, k, v, mask = sdpa_inputs(first, tensors)
    scale = first.op.prop_value("scale")
    b, h, s, d = q.shape
    timed = Timed(first, 4 * b * h * s * s * d)
    causal = bool(first.op.prop_value("causal"))
    reference = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=None if mask is None else mask.float(),
                                               scale=scale, is_causal=causal)
    for case in cases:
        try:
            bound = Bound(library, case, tensors, torch.cuda.current_stream().cuda_stream)
            bound()
            ours_bhsd = bound.output if case.layout == "BHSD" else bound.output.transpose(1, 2)
            error = float(torch.linalg.vector_norm(ours_bhsd.float() - reference) / torch.linalg.vector_norm(reference))
            # the capture's stream is not the one bound: re-bind inside graph_time_ms's stream
            timed.ours[case.kernel] = (graph_time_ms(lambda i, bound=bound: bound_on_current(bound)()), error)
        except Exception:  # noqa: BLE001 - report, keep timing the other kernels
            traceback.print_exc()
    for backend in SDPA_BACKENDS:
        def peer(i, backend=backend):
            with sdpa_kernel([getattr(SDPBackend, backend)]):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, is_causal=causal)
        try:
            peer(0)
            torch.cuda.synchronize()
            timed.peers[backend] = graph_time_ms(peer)
        except Exception as failure:  # noqa: BLE001 - a backend that refuses the case is skipped
            print(f"  {first.label}: {backend} skipped ({str(failure).splitlines()[0][:90]})")
    return timed


def bound_on_current(bound: Bound) -> Bound:
    """The bound launcher on the current stream (graph capture runs on a side stream)."""
    import torch

    stream = torch.cuda.current_stream().cuda_stream
    if bound.arguments[-1].value != stream:
        bound.arguments = (*bound.arguments[:-1], ctypes.c_void_p(stream))
    return bound


def timing_header(kernels=tuple(KERNELS)) -> tuple[str, ...]:
    return ("workload", *(f"{KERNELS[kernel]} ms" for kernel in kernels), "our best TFLOP/s",
            *(b.split("_")[0].lower() for b in SDPA_BACKENDS), "fastest SDPA", "fastest/sm90", "fastest/example 41",
            "fastest/our best", "max rel err")


def timing_rows(timed: list[Timed], kernels=tuple(KERNELS)) -> list[tuple]:
    rows = []
    for t in timed:
        best = min(t.peers.items(), key=lambda item: item[1]) if t.peers else None
        ms = {kernel: t.ours[kernel][0] for kernel in kernels if kernel in t.ours}
        ratio = {kernel: f"{best[1] / ms[kernel]:.2f}x" if best and kernel in ms else "-" for kernel in ("sm90", "sm80")}
        ours = min(ms.items(), key=lambda item: item[1]) if ms else None
        errors = [error for _, error in t.ours.values()]
        rows.append((
            t.workload.label, *(f"{ms[kernel]:.4f}" if kernel in ms else "failed" for kernel in kernels),
            f"{t.flops / ours[1] / 1e9:.0f}" if ours else "-",
            *(f"{t.peers[b]:.4f}" if b in t.peers else "refused" for b in SDPA_BACKENDS),
            f"{best[0].split('_')[0].lower()} {best[1]:.4f}" if best else "-", ratio["sm90"], ratio["sm80"],
            f"{best[1] / ours[1]:.2f}x ({KERNELS[ours[0]]})" if best and ours else "-",
            f"{max(errors):.1e}" if errors else "-",
        ))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text (or one of these, comma-separated)")
    parser.add_argument("--build-only", action="store_true", help="compile the library and stop (fills the object cache)")
    parser.add_argument("--no-timing", action="store_true", help="check correctness only")
    parser.add_argument("--kernels", help="time only these kernels, comma-separated: KERNELS' marks or their schedules "
                                          "(sm90 is the default schedule, sm80 example 41); all when left out")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/attention.so")
    parser.add_argument("--no-unit-flags", action="store_true",
                        help="compile without the units' own flags (the Hopper units' --use_fast_math): a baseline")
    args = parser.parse_args()
    texts = args.only.split(",") if args.only else []
    chosen = lambda label: not texts or any(text in label for text in texts)  # noqa: E731
    checked = [c.make() for c in correctness_cases() if chosen(c.label)]
    kernels = chosen_kernels(args.kernels)
    timed_cases = [] if args.no_timing else [c.make() for c in timing_cases(kernels) if chosen(c.label)]
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    path = build_library(checked + timed_cases, args.library, unit_flags=not args.no_unit_flags)
    print(f"built {len({ak.kernel_name(c.op) for c in checked + timed_cases})} instances in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 0

    import torch

    library = ctypes.CDLL(str(path))
    library.boltir_error_string.restype = ctypes.c_char_p
    rng = np.random.default_rng(args.seed)
    rows = check(checked, library, rng)
    timed = []
    workloads: dict[str, list[Case]] = {}
    for case in timed_cases:
        workloads.setdefault(case.label, []).append(case)
    for label, cases in workloads.items():
        try:
            timed.append(time_workload(cases, library, rng))
            print("timed:", label, {k: round(v[0], 4) for k, v in timed[-1].ours.items()},
                  {k: round(v, 4) for k, v in timed[-1].peers.items()}, flush=True)
        except Exception:  # noqa: BLE001 - report, keep timing the rest
            traceback.print_exc()
        torch.cuda.empty_cache()

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; reference: the op-level interpreter; seed {args.seed}"
          + ("; units WITHOUT their own flags (baseline)" if args.no_unit_flags else ""))
    print_table(("case", "instance", "rel err", "bar", "result"), rows)
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    if timed:
        print("\nf16; ms per call, CUDA-graph replays on both sides; one column per boltir kernel (example 41, the Hopper "
              "kernel's persistent, cooperative and tma schedules); TFLOP/s = 4·B·H·S²·D / our fastest kernel's time; SDPA on "
              "[B, H, S, D] views of the same tensors; fastest/X = fastest SDPA time / X's (≥ 1: X is as fast); "
              "rel err: the largest of ours against SDPA in f32")
        print_table(timing_header(kernels), timing_rows(timed, kernels))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
