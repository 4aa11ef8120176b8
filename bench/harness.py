"""Shared by bench/check_kernels.py and bench/kernels.py: a case's lowering through
select-kernels and lower-op-to-cutlass, one shared library of every distinct kernel, and
launching a case's kernel on torch tensors.

A case is one op-level GEMM, conv or b2b op in `func.func @main`, every operand a function
argument (`tests/support/op_modules.py` writes them), so that it lowers to exactly one
cutlass op whose operands are those arguments.
`override` replaces fields of the heuristic's KernelChoice (split_k, iterator_algorithm,
residency, ...) to reach variants the heuristic would not pick for that shape. A depthwise
conv gets CUTLASS's direct conv unless the case asks for ours (`depthwise="direct"`:
codegen/depthwise_kernels.py, which stays an op.conv2d with the same launcher ABI). A
GEMM with few rows gets CUTLASS's GEMM unless the case asks for ours (`small_m="skinny"`:
codegen/skinny_gemm_kernels.py, an op.gemm with the CUTLASS GEMM launcher's ABI), and
a conv with few output pixels CUTLASS's unless it asks for our split-reduction conv
(`few_pixels="splitk"`: codegen/splitk_conv_kernels.py, on sm90). Our other families are
reached through `override` (family, arch and tile).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import func

from boltir.backends.cuda.codegen import cutlass_kernels, depthwise_kernels, skinny_gemm_kernels, splitk_conv_kernels
from boltir.backends.cuda.codegen.tiled_families import generator_computing
from boltir.backends.cuda.codegen.generator import CompileJob, unit_job
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.toolchain.kernel_library import KernelLibrary, launch_arguments
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.backends.cuda.tune.database import SCHEDULE_SHORT
from boltir.dialects import cutlass
from boltir.dialects.cutlass import Tile
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, input_names, run
from boltir.ir import make_context, parse_module, verify_module

SMS = 132  # the H200 the kernels run on

PROFILE_ENV = "BOLTIR_BENCH_PROFILE"
"""Set (to anything), the kernel benches' timing helpers launch each kernel PROFILE_LAUNCHES
times, plainly (no graph, no warm-up), and time nothing: a profiler run (`ncu -k
regex:...`) then sees two launches of each timed kernel, not hundreds of graph replays."""
PROFILE_LAUNCHES = 2


def profile_launches(launch, stream=None) -> bool:
    """Under PROFILE_ENV, launches `launch()` PROFILE_LAUNCHES times on `stream` and returns
    True (the caller times nothing); else False."""
    import os

    if not os.environ.get(PROFILE_ENV):
        return False
    import torch

    with torch.cuda.stream(stream or torch.cuda.current_stream()):
        for _ in range(PROFILE_LAUNCHES):
            launch()
    torch.cuda.synchronize()
    return True


@dataclass
class Case:
    label: str
    text: str
    element: str = "f16"
    override: dict = field(default_factory=dict)
    target: str = "sm80"
    """sm80: the heuristic's 2.x kernel (sized for the H200's SMs); sm90: its sm90 choice
    (3.x where one runs)."""
    depthwise: str = "cutlass"
    """Whose kernel a depthwise conv gets: "cutlass" or "direct" (ours)."""
    small_m: str = "cutlass"
    """Whose kernel a GEMM with few rows gets: "cutlass" or "skinny" (ours)."""
    few_pixels: str = "cutlass"
    """Whose kernel a conv with few output pixels gets on sm90: "cutlass" or "splitk" (ours)."""
    narrow_convs: str = "cutlass"
    """Whose kernel a stride-1 conv on 16-64 channels gets on sm90: "cutlass" or "halo" (ours)."""
    split_gemms: str = "cutlass"
    """Whose kernel a GEMM of at most 256 rows with a long K gets on sm90: "cutlass" or
    "wgsplit" (ours), so that a CUTLASS override (`hopper`) replaces a CUTLASS choice."""
    fuse_pool: bool = False
    """Whether fuse-conv-pool runs after the choice (a halo conv and the 2x2 max pool after
    it become one op.conv2d_max_pool)."""
    fuse_blocking: bool = False
    """Whether fuse-conv-space-to-depth runs after the choice (a halo conv and the
    op.space_to_depth before it become one op.space_to_depth_conv2d)."""
    fuse_depthwise_pointwise: bool | str = False
    """Whether fuse-depthwise-pointwise runs after the choice (a depthwise conv and the 1x1
    conv after it become one op.depthwise_pointwise_conv2d; the override then applies to it);
    "expand": with the expansion before them too."""
    # filled by lower()
    op_module: object = None
    cutlass_module: object = None
    op: object = None
    choice: KernelChoice | None = None

    @property
    def tolerance(self) -> float:
        return 1e-3 if self.element == "f32" else 1e-2


def lower(case: Case) -> Case:
    """Parses the case, keeps the op-level module (the reference), and lowers a copy:
    select-kernels (heuristic, for the case's target), the override, lower-op-to-cutlass."""
    ctx = make_context()
    case.op_module = parse_module(case.text, f"<{case.label}>", ctx=ctx)
    module = case.op_module.clone()
    SelectKernelsPass(selector="heuristic", arch=case.target, sms=SMS, cutlass=3 if case.target == "sm90" else 2,
                      depthwise=case.depthwise, small_m=case.small_m, few_pixels=case.few_pixels,
                      narrow_convs=case.narrow_convs, split_gemms=case.split_gemms).apply(ctx, module)
    if case.fuse_depthwise_pointwise:
        from boltir.backends.cuda.passes.fuse_depthwise_pointwise import FuseDepthwisePointwisePass

        FuseDepthwisePointwisePass(expand=case.fuse_depthwise_pointwise == "expand").apply(ctx, module)
    if case.override:
        for target in module.walk():
            if KERNEL_ATTR in target.attributes:
                choice = KernelChoice.from_attr(target.attributes[KERNEL_ATTR])
                fields = dict(case.override)
                for name in ("tile", "tile1"):
                    if isinstance(fields.get(name), tuple):
                        fields[name] = Tile(*fields[name])
                target.attributes[KERNEL_ATTR] = dataclasses.replace(choice, **fields).to_attr()
    if case.fuse_pool:
        from boltir.backends.cuda.passes.fuse_conv_pool import FuseConvPoolPass

        FuseConvPoolPass().apply(ctx, module)
    if case.fuse_blocking:
        from boltir.backends.cuda.passes.fuse_conv_space_to_depth import FuseConvSpaceToDepthPass

        FuseConvSpaceToDepthPass(min_tiles=0).apply(ctx, module)  # forced: the small cases too
    LowerOpToCutlassPass().apply(ctx, module)
    verify_module(module)
    entry = find_entry(module)
    body = [o for o in entry.body.ops if not isinstance(o, func.ReturnOp)]
    if len(body) != 1 or not (isinstance(body[0], cutlass.TemplateOp) or generator_of(body[0]) is not cutlass_kernels):
        names = ", ".join(o.name for o in body)
        raise RuntimeError(f"{case.label}: expected one cutlass op (or our depthwise conv) after lowering, got {names}")
    case.cutlass_module, case.op = module, body[0]
    return case


def generator_of(op):
    """Our tiled family's generator for an op kept for it, else CUTLASS's."""
    return generator_computing(op) or cutlass_kernels


def build_library(cases: list[Case], path: Path | str) -> KernelLibrary:
    """One translation unit per distinct instance (they compile in parallel), linked into
    one shared library."""
    jobs: dict[str, CompileJob] = {}
    for case in cases:
        generator = generator_of(case.op)
        name = generator.kernel_name(case.op)
        if name not in jobs:
            jobs[name] = unit_job(name, generator, [case.op], generator.kernel_arch(case.op))
    return KernelLibrary(build_shared_library(list(jobs.values()), path, progress="always"))


def random_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Uniform activations in [-1, 1]; weights scaled by 1/sqrt(fan-in) so outputs stay
    near 1 whatever K is (no f16 overflow, activations away from saturation)."""
    entry = find_entry(case.op_module)
    inputs = {}
    for name, arg_type in zip(input_names(entry), entry.function_type.inputs, strict=True):
        shape = tuple(arg_type.get_shape())
        values = rng.uniform(-1.0, 1.0, shape)
        if name.startswith("w"):
            values = values * (3.0 / math.prod(shape[1:])) ** 0.5
        inputs[name] = values.astype(numpy_dtype(arg_type.element_type))
    return inputs


def lower_cases(cases, only: str | None = None, computes=None) -> tuple[list[tuple], list]:
    """Lowers every case whose label contains `only`: the lowered cases, and one failure row
    (label, -, -, why, FAIL) for each that cannot lower or (with `computes`) does not reach
    the kernel family under test."""
    rows, lowered = [], []
    for case in cases:
        if only and only not in case.label:
            continue
        try:
            lowered.append(lower(case))
            if computes is not None:
                assert computes(case.op), f"lowered to {case.op.name}, not our kernel"
        except Exception as error:  # noqa: BLE001 - a case that cannot lower is a failure row
            rows.append((case.label, "-", "-", "lowering failed: " + str(error).splitlines()[0], "FAIL"))
    return rows, lowered


class BoundKernel:
    """A case's kernel with its device tensors, ready to launch repeatedly."""

    def __init__(self, library: KernelLibrary, case: Case, inputs: dict[str, "object"]):
        import torch

        from tests.support.torch_arrays import to_torch

        self.library, self.case = library, case
        entry = find_entry(case.cutlass_module)
        # inputs keyed by the arguments' SSA names (x, w, bias) or their input names (arg0...)
        by_value = {arg: arg.name_hint if arg.name_hint in inputs else name
                    for arg, name in zip(entry.body.block.args, input_names(entry), strict=True)}
        arguments = launch_arguments(case.op)
        out_type = case.op.output.type
        # the result's own element type: an op.space_to_depth_conv2d reads an f32 image and writes f16
        dtype = to_torch(np.empty((0,), numpy_dtype(out_type.element_type))).dtype
        self.output = torch.empty(tuple(out_type.get_shape()), dtype=dtype, device="cuda")
        self.pointers = []
        for value in arguments.operands[:-1]:
            self.pointers.append(None if value is None else inputs[by_value[value]].data_ptr())
        self.pointers.append(self.output.data_ptr())
        size = library.workspace_size(case.op)
        self.workspace = torch.zeros(max(size, 1), dtype=torch.uint8, device="cuda")
        self.workspace_bytes = size
        self._launches: dict[int, object] = {}

    def __call__(self) -> None:
        # on the stream current at the call: a graph capture's side stream included (bound
        # once at construction, the launches went to the default stream outside the graph,
        # and graph-timed rows timed an empty graph). One ctypes call per stream, bound once.
        import torch

        stream = torch.cuda.current_stream().cuda_stream
        launch = self._launches.get(stream)
        if launch is None:
            launch = self._launches[stream] = self.library.bind(
                self.case.op, self.pointers, workspace=self.workspace.data_ptr() if self.workspace_bytes else None,
                workspace_bytes=self.workspace_bytes, stream=stream,
            )
        launch()


def own_kernel(family: str, arch: str, tile) -> dict:
    """An override that makes a case's kernel one of our own tiled families with `tile`
    (its as_tile()), the CUTLASS-only fields cleared."""
    return {"family": family, "arch": arch, "tile": tile.as_tile(), "alignment": (8, 8, 8), "kernel_schedule": None,
            "cluster": None, "iterator_algorithm": None, "split_k": 1}


def hopper(threadblock: tuple[int, int, int], schedule: str, cluster=(1, 1, 1), split_k: int = 1) -> dict:
    """An override that makes a case's kernel this CUTLASS 3.x instance."""
    from boltir.backends.cuda.select.heuristic import hopper_tile

    return {"arch": "sm90", "tile": hopper_tile(threadblock, schedule), "kernel_schedule": schedule, "cluster": tuple(cluster),
            "alignment": (8, 8, 8), "split_k": split_k}




def describe_choice(case: Case) -> str:
    op = case.op
    if depthwise_kernels.computes(op):
        return f"ours {depthwise_kernels.marked_tile(op).describe()}"
    if skinny_gemm_kernels.computes(op):
        return f"skinny {skinny_gemm_kernels.marked_tile(op).describe()}"
    if splitk_conv_kernels.computes(op):
        return f"splitk {splitk_conv_kernels.marked_tile(op).describe()}"
    if (generator := generator_computing(op)) is not None:
        return f"{generator.FAMILY} {generator.marked_tile(op).describe()}"
    tile = op.tile.value
    if op.prop_value("arch") == "sm90":
        from boltir.backends.cuda.codegen import cutlass_sm90 as sm90

        text = (f"3.x {'x'.join(map(str, tile.threadblock))} {SCHEDULE_SHORT[sm90.schedule_of(op)]} "
                f"c{'x'.join(map(str, sm90.cluster_of(op)[:2]))}")
        if op.prop_value("split_k") > 1:
            text += f" splitk{op.prop_value('split_k')}"
        if op.prop_value("swizzle") > 1:
            text += f" sw{op.prop_value('swizzle')}"
        if tile.stages:
            text += f" st{tile.stages}"
        return text
    text = f"{'x'.join(map(str, tile.threadblock))}/{'x'.join(map(str, tile.warp))} s{tile.stages}"
    if "split_k" in op.properties and op.prop_value("split_k") > 1:
        text += f" splitk{op.prop_value('split_k')}"
    if "iterator_algorithm" in op.properties:
        text += f" {op.prop_value('iterator_algorithm')}"
    if "residency" in op.properties:
        tile1 = op.tile1.value
        text += f" +{'x'.join(map(str, tile1.threadblock))}/{'x'.join(map(str, tile1.warp))} {op.prop_value('residency')}"
    text += f" align{','.join(map(str, op.prop_value('alignment')))}"
    return text


# ------------------------------------------------- a kernel family's correctness check


def check_against_interpreter(library: KernelLibrary, case: Case, rng: np.random.Generator,
                              on_failure=None) -> tuple[str, ...]:
    """One row (case, kernel, rel err, bar, pass/FAIL): the case's kernel against the op-level
    interpreter on fresh random inputs, its output NaN-filled first so that an element the
    kernel misses shows. `on_failure(case, got, expected)` is called for a case that fails."""
    import torch

    from tests.support.torch_arrays import to_numpy_f32, to_torch

    inputs = random_inputs(case, rng)
    (expected,) = run(case.op_module, inputs)
    kernel = BoundKernel(library, case, {name: to_torch(value) for name, value in inputs.items()})
    kernel.output.fill_(float("nan"))
    kernel()
    torch.cuda.synchronize()
    got, ref = to_numpy_f32(kernel.output).astype(np.float64), expected.astype(np.float64)
    error = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if np.isfinite(got).all() else float("inf")
    if on_failure is not None and not error < case.tolerance:
        on_failure(case, got, ref)
    return case.label, describe_choice(case), f"{error:.2e}", f"< {case.tolerance:.0e}", "pass" if error < case.tolerance else "FAIL"


def check_cases(library: KernelLibrary, cases: list[Case], rng: np.random.Generator,
                on_failure=None) -> list[tuple[str, ...]]:
    """`check_against_interpreter`'s row for each case; a case that fails to run is a
    failure row with the first line of its error (the traceback printed)."""
    import traceback

    rows = []
    for case in cases:
        try:
            rows.append(check_against_interpreter(library, case, rng, on_failure))
        except Exception as error:  # noqa: BLE001 - a case that fails to run is a failure row
            traceback.print_exc()
            rows.append((case.label, describe_choice(case), "-", str(error).splitlines()[0][:60], "FAIL"))
    return rows


def conv_timing_operands(op) -> tuple:
    """Random f16 device tensors for timing an NHWC conv op (input, OHWI filter scaled for
    unit variance, bias, output), with its FLOPs and the bytes it moves once."""
    import torch

    n, h, w, c = op.input.type.get_shape()
    k, r, s, _ = op.filter.type.get_shape()
    _, p, q, _ = op.conv_shape() if hasattr(op, "conv_shape") else op.output.type.get_shape()  # a pooled conv: the conv's
    _, out_p, out_q, _ = op.output.type.get_shape()
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    weight = torch.randn(k, r, s, c, device="cuda", dtype=torch.float16) * (2 / (r * s * c)) ** 0.5
    bias = torch.randn(k, device="cuda", dtype=torch.float16) * 0.1
    out = torch.empty(n, out_p, out_q, k, device="cuda", dtype=torch.float16)
    flops = 2 * n * p * q * k * r * s * c
    moved = 2 * (n * h * w * c + k * r * s * c + k + n * out_p * out_q * k)
    return x, weight, bias, out, flops, moved


def build_timed(cases: list[Case], args, computes=None) -> KernelLibrary | int:
    """A timing script's start: lowers the cases (a case that cannot lower ends it: 1),
    prints each case's kernel and stops under `args.list` (0), builds one library at
    `args.library` and stops under `args.build_only` (0); else the library."""
    import time

    failed, lowered = lower_cases(cases, computes=computes)
    if failed:
        for row in failed:
            print(" | ".join(row))
        return 1
    if args.list:
        for case in lowered:
            print(f"{case.label:60s} {describe_choice(case)}")
        return 0
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(lowered, args.library)
    print(f"built the kernels of {len(lowered)} cases in {time.monotonic() - start:.0f} s", flush=True)
    return 0 if args.build_only else library


def correctness_main(description: str, cases: list[Case], computes, library_path: str) -> int:
    """The command line of a kernel family's check (bench/check_depthwise.py and its kin):
    `--only TEXT`, `--list` (lower every case and print its kernel; no GPU), `--build-only`,
    `--seed`, `--library`; lowers the cases (a case that does not reach the family is a
    failure row), builds one library, checks each case, prints the table last and returns
    the exit status (1 if any case fails)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default=library_path)
    args = parser.parse_args()

    rows, lowered = lower_cases(cases, args.only, computes)
    if args.list:
        for case in lowered:
            print(f"{case.label:80s} {describe_choice(case)}")
        return 1 if rows else 0
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(lowered, args.library)
    print(f"built the kernels of {len(lowered)} cases in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 1 if rows else 0

    import torch

    rows += check_cases(library, lowered, np.random.default_rng(args.seed))
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    header = ("case", "kernel", "rel err", "bar", "result")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(v.ljust(w) for v, w in zip(row, widths)))
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0
