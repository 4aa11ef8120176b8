"""What our own kernel families with the CUTLASS launcher ABI share (depthwise_kernels,
stem_conv_kernels, skinny_gemm_kernels): the instance key and launcher name of an
instance with a tile, a conv's problem integers in the CUTLASS conv launchers' order, and
the translation unit of the distinct instances among some ops."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import Instance, render
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape


def tiled_instance_key(family: str, described_tile: str, op: Operation) -> str:
    """The family and tile, then compute_kernels' key of the op (types, shapes, every property)."""
    return f"{family} tile={described_tile} " + compute_kernels.instance_key(op).split(" ", 1)[1]


def launcher_name(family: str, key: str) -> str:
    return f"boltir_{family}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def conv_problem(op: ops.Conv2dOp) -> tuple[int, ...]:
    """The conv launcher's 15 integers, in the CUTLASS conv launchers' order."""
    n, h, w, c = tensor_shape(op.input.type)
    k, r, s, _ = tensor_shape(op.filter.type)
    _, p, q, _ = tensor_shape(op.output.type)
    strides, pads, dilations, _ = op.window()
    return (n, h, w, c, k, r, s, p, q, pads[0], pads[1], strides[0], strides[1], dilations[0], dilations[1])


def translation_unit(module_or_ops: ModuleOp | Iterable[Operation], computes: Callable[[Operation], bool],
                     kernel_name: Callable[[Operation], str], emit_instance: Callable[[Operation], Instance]) -> str:
    """One plain-CUDA unit (compute_kernels' frame and helpers) with every distinct
    instance among the ops (a module: its ops that `computes` says are the family's)."""
    chosen = [op for op in module_or_ops.walk() if computes(op)] if isinstance(module_or_ops, ModuleOp) else list(module_or_ops)
    instances = {kernel_name(op): op for op in chosen}
    return render("compute/unit.cu.j2", instances=[emit_instance(op) for op in instances.values()])
