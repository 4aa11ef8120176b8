"""Shared by bench/check_kernels.py and bench/kernels.py: op-level test modules, their
lowering through select-kernels and lower-op-to-cutlass, one shared library of every
distinct kernel, and launching a case's kernel on torch tensors.

A case is one op-level GEMM, conv or b2b op in `func.func @main`, every operand a function
argument, so that it lowers to exactly one cutlass op whose operands are those arguments.
`override` replaces fields of the heuristic's KernelChoice (split_k, iterator_algorithm,
residency, ...) to reach variants the heuristic would not pick for that shape.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import func

from boltir.backends.cuda.codegen.cutlass_kernels import (
    emit_translation_unit,
    kernel_arch,
    kernel_name,
    launch_arguments,
)
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.toolchain.kernel_library import KernelLibrary
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.dialects import cutlass
from boltir.dialects.cutlass import Tile
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, input_names
from boltir.ir import make_context, parse_module, verify_module

SMS = 132  # the H200 the kernels run on


def tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _module(args: list[tuple[str, str]], op_text: str, result: str) -> str:
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    types = ", ".join(t for _, t in args)
    return (
        f"func.func @main({params}) -> {result} {{\n"
        f"  %0 = {op_text} : ({types}) -> {result}\n"
        f"  func.return %0 : {result}\n}}\n"
    )


def _epilogue_operands(args, epilogue: str, out_shape, channels: int, element: str) -> str:
    text = ""
    if "bias" in [part.strip() for part in epilogue.split(",")]:
        args.append(("bias", tensor((channels,), element)))
        text += " bias %bias"
    if "residual" in epilogue:
        args.append(("residual", tensor(out_shape, element)))
        text += " residual %residual"
    return text


def gemm_text(m: int, n: int, k: int, element: str = "f16", epilogue: str = "bias, relu", batch: int | None = None,
              shared_b: bool = False) -> str:
    """A Linear-style GEMM: x (m×k, or batch×m×k) times a weight n×k ("col" B)."""
    lead = (batch,) if batch else ()
    a_shape, out_shape = (*lead, m, k), (*lead, m, n)
    b_shape = (n, k) if (shared_b or not batch) else (batch, n, k)
    args = [("x", tensor(a_shape, element)), ("w", tensor(b_shape, element))]
    extra = _epilogue_operands(args, epilogue, out_shape, n, element)
    op = f'op.gemm %x, %w{extra} {{layout_b = "col", epilogue = #op.epilogue<{epilogue}>}}'
    return _module(args, op, tensor(out_shape, element))


def conv_text(n: int, h: int, w: int, c: int, k: int, r: int, s: int, stride: int = 1, pad: int | None = None,
              element: str = "f16", epilogue: str = "bias, relu", depthwise: bool = False) -> str:
    """An NHWC conv with OHWI filters (depthwise: groups = c = k, filter k×r×s×1)."""
    pad = (r // 2) if pad is None else pad
    p = (h + 2 * pad - r) // stride + 1
    q = (w + 2 * pad - s) // stride + 1
    out_shape = (n, p, q, k)
    args = [("x", tensor((n, h, w, c), element)), ("w", tensor((k, r, s, 1 if depthwise else c), element))]
    extra = _epilogue_operands(args, epilogue, out_shape, k, element)
    groups = f", groups = {c}" if depthwise else ""
    op = (
        f"op.conv2d %x, %w{extra} {{layout = \"NHWC\", filter_layout = \"OHWI\", strides = array<i64: {stride}, {stride}>, "
        f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>{groups}, epilogue = #op.epilogue<{epilogue}>}}"
    )
    return _module(args, op, tensor(out_shape, element))


def b2b_gemm_text(m: int, k0: int, n0: int, n1: int, epilogue0: str = "bias, relu", epilogue1: str = "bias, relu") -> str:
    args = [("x", tensor((m, k0), "f16")), ("w0", tensor((n0, k0), "f16")), ("w1", tensor((n1, n0), "f16"))]
    extra = ""
    if "bias" in epilogue0:
        args.append(("bias0", tensor((n0,), "f16")))
        extra += " bias0 %bias0"
    if "bias" in epilogue1:
        args.append(("bias1", tensor((n1,), "f16")))
        extra += " bias1 %bias1"
    op = (
        f'op.b2b_gemm %x, %w0, %w1{extra} {{layout_b0 = "col", layout_b1 = "col", '
        f"epilogue0 = #op.epilogue<{epilogue0}>, epilogue1 = #op.epilogue<{epilogue1}>}}"
    )
    return _module(args, op, tensor((m, n1), "f16"))


def b2b_conv_text(n: int, h: int, w: int, c: int, k0: int, k1: int, r: int = 3, stride: int = 1,
                  epilogue0: str = "bias, relu", epilogue1: str = "bias, relu") -> str:
    pad = r // 2
    p = (h + 2 * pad - r) // stride + 1
    q = (w + 2 * pad - r) // stride + 1
    args = [("x", tensor((n, h, w, c), "f16")), ("w0", tensor((k0, r, r, c), "f16")), ("w1", tensor((k1, 1, 1, k0), "f16"))]
    extra = ""
    if "bias" in epilogue0:
        args.append(("bias0", tensor((k0,), "f16")))
        extra += " bias0 %bias0"
    if "bias" in epilogue1:
        args.append(("bias1", tensor((k1,), "f16")))
        extra += " bias1 %bias1"
    op = (
        f"op.b2b_conv2d %x, %w0, %w1{extra} {{strides = array<i64: {stride}, {stride}>, "
        f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>, epilogue0 = #op.epilogue<{epilogue0}>, "
        f"epilogue1 = #op.epilogue<{epilogue1}>}}"
    )
    return _module(args, op, tensor((n, p, q, k1), "f16"))


@dataclass
class Case:
    label: str
    text: str
    element: str = "f16"
    override: dict = field(default_factory=dict)
    target: str = "sm80"
    """sm80: the heuristic's 2.x kernel (sized for the H200's SMs); sm90: its sm90 choice
    (3.x where one runs)."""
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
    SelectKernelsPass(selector="heuristic", arch=case.target, sms=SMS, cutlass=3 if case.target == "sm90" else 2).apply(ctx, module)
    if case.override:
        for target in module.walk():
            if KERNEL_ATTR in target.attributes:
                choice = KernelChoice.from_attr(target.attributes[KERNEL_ATTR])
                fields = dict(case.override)
                for name in ("tile", "tile1"):
                    if isinstance(fields.get(name), tuple):
                        fields[name] = Tile(*fields[name])
                target.attributes[KERNEL_ATTR] = dataclasses.replace(choice, **fields).to_attr()
    LowerOpToCutlassPass().apply(ctx, module)
    verify_module(module)
    entry = find_entry(module)
    body = [o for o in entry.body.ops if not isinstance(o, func.ReturnOp)]
    if len(body) != 1 or not isinstance(body[0], cutlass.TemplateOp):
        names = ", ".join(o.name for o in body)
        raise RuntimeError(f"{case.label}: expected one cutlass op after lowering, got {names}")
    case.cutlass_module, case.op = module, body[0]
    return case


def build_library(cases: list[Case], path: Path | str) -> KernelLibrary:
    """One translation unit per distinct instance (they compile in parallel), linked into
    one shared library."""
    jobs: dict[str, CompileJob] = {}
    for case in cases:
        name = kernel_name(case.op)
        if name not in jobs:
            jobs[name] = CompileJob(name, emit_translation_unit([case.op]), kernel_arch(case.op))
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


def to_torch(array: np.ndarray, device="cuda"):
    import torch

    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device)


def to_numpy_f32(tensor) -> np.ndarray:
    import torch

    return tensor.detach().to(torch.float32).cpu().numpy()


class BoundKernel:
    """A case's kernel with its device tensors, ready to launch repeatedly."""

    def __init__(self, library: KernelLibrary, case: Case, inputs: dict[str, "object"]):
        import torch

        self.library, self.case = library, case
        entry = find_entry(case.cutlass_module)
        # inputs keyed by the arguments' SSA names (x, w, bias) or their input names (arg0...)
        by_value = {arg: arg.name_hint if arg.name_hint in inputs else name
                    for arg, name in zip(entry.body.block.args, input_names(entry), strict=True)}
        arguments = launch_arguments(case.op)
        out_type = case.op.output.type
        self.output = torch.empty(tuple(out_type.get_shape()), dtype=inputs[next(iter(inputs))].dtype, device="cuda")
        self.pointers = []
        for value in arguments.operands[:-1]:
            self.pointers.append(None if value is None else inputs[by_value[value]].data_ptr())
        self.pointers.append(self.output.data_ptr())
        size = library.workspace_size(case.op)
        self.workspace = torch.zeros(max(size, 1), dtype=torch.uint8, device="cuda")
        self.workspace_bytes = size
        # bound once, on the stream current now: a call is then one ctypes call
        self._launch = library.bind(
            case.op, self.pointers, workspace=self.workspace.data_ptr() if size else None, workspace_bytes=size,
            stream=torch.cuda.current_stream().cuda_stream,
        )

    def __call__(self) -> None:
        self._launch()


def hopper(threadblock: tuple[int, int, int], schedule: str, cluster=(1, 1, 1), split_k: int = 1) -> dict:
    """An override that makes a case's kernel this CUTLASS 3.x instance."""
    from boltir.backends.cuda.select.heuristic import hopper_tile

    return {"arch": "sm90", "tile": hopper_tile(threadblock, schedule), "kernel_schedule": schedule, "cluster": tuple(cluster),
            "alignment": (8, 8, 8), "split_k": split_k}


SCHEDULE_SHORT = {"cooperative": "coop", "pingpong": "pingpong", "warpspecialized": "ws"}


def describe_choice(case: Case) -> str:
    op = case.op
    tile = op.tile.value
    if op.prop_value("arch") == "sm90":
        from boltir.backends.cuda.codegen import cutlass_sm90 as sm90

        text = (f"3.x {'x'.join(map(str, tile.threadblock))} {SCHEDULE_SHORT[sm90.schedule_of(op)]} "
                f"c{'x'.join(map(str, sm90.cluster_of(op)[:2]))}")
        if op.prop_value("split_k") > 1:
            text += f" splitk{op.prop_value('split_k')}"
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
