"""The selection sweep's grid (issue 17): op-level GEMMs, convs and depthwise convs over
channel counts from 1 to 4096 (the awkward ones included), windows, strides and batch
sizes, and the kernel instances the heuristic and the tuner's candidates make of them
(CUTLASS's, and our own kernel families').
Used by tests/backends/test_selection_sweep.py and bench/compile_sweep.py."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import boltir
from boltir.backends.cuda.codegen import cutlass_kernels, tiled_families
from boltir.backends.cuda.codegen.cutlass_common import FAMILIES
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, UNFUSE, KernelChoice
from boltir.backends.cuda.tune.tuner import single_op_module
from boltir.dialects import op as ops
from boltir.ir import make_context
from tests.support.op_modules import conv_text, gemm_text

CHANNELS = (1, 3, 8, 12, 16, 24, 40, 64, 72, 120, 200, 256, 4096)
CHANNELS_SLOW = (1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 96, 120, 128, 144, 160, 192, 200, 256, 320,
                 384, 512, 576, 960, 1024, 2048, 4096)
WINDOWS = ((1, 1), (3, 1), (3, 2), (5, 1), (7, 2))
BATCHES = (1, 32)
TARGETS = (("sm80", 2), ("sm90", 3))
GEMM_SIZES = (8, 24, 72, 200, 768, 4096)
GEMM_SIZES_SLOW = (1, 3, 8, 12, 40, 72, 120, 200, 256, 1000, 3072)


def conv_cases(channels, windows=WINDOWS, batches=BATCHES):
    for c, (r, stride), n in itertools.product(channels, windows, batches):
        side = 14 if c * n > 4096 else 28
        for k in sorted({c, 64}):
            yield f"conv n{n} {side}² c{c} k{k} {r}x{r}/{stride}", conv_text(n, side, side, c, k, r, r, stride=stride)
        if r > 1 and c % 8 == 0:  # depthwise takes whole 128-bit vectors of channels
            yield f"depthwise n{n} {side}² c{c} {r}x{r}/{stride}", conv_text(n, side, side, c, c, r, r, stride=stride, depthwise=True)


def gemm_cases(sizes):
    for m, n, k in itertools.product((1, 128, 4096), sizes, sizes):
        yield f"gemm {m}x{n}x{k}", gemm_text(m, n, k)




OWN_GENERATORS = tiled_families.GENERATORS
"""Our own kernel families: their ops stay at the op level, the kernel choice attached."""

OPT_IN = {"conv_ctas": 2}
"""select-kernels options that are off by default: the sweep takes them on sm90, so that
what a user can ask for is checked too."""


def instances(module) -> list[tuple[object, object]]:
    """(its generator module, op) for every op of a lowered module that a kernel template
    computes: the cutlass ops (`cutlass_kernels`), and the op-level ops whose kernel
    choice names one of our own families. Each generator's `unsupported_reason(op)` says
    whether its template takes the op."""
    out = []
    for op in module.walk():
        if type(op) in FAMILIES:
            out.append((cutlass_kernels, op))
            continue
        if KERNEL_ATTR in op.attributes:
            family = KernelChoice.from_attr(op.attributes[KERNEL_ATTR]).family
            out += [(generator, op) for generator in OWN_GENERATORS if family == generator.FAMILY]
    return out


def heuristic_instances(text: str, arch: str, cutlass: int) -> list[tuple[object, object]]:
    """The instances (`instances`) the heuristic's choice lowers the module's op to."""
    module = boltir.parse_module(text)
    options = OPT_IN if arch == "sm90" else {}
    SelectKernelsPass(arch=arch, cutlass=cutlass, selector="heuristic", **options).apply(make_context(), module)
    LowerOpToCutlassPass().apply(make_context(), module)
    return instances(module)


def candidate_modules(text: str, arch: str, cutlass: int) -> Iterator[tuple[object, object]]:
    """(choice, the op alone with that kernel attribute, not yet lowered) per candidate."""
    module = boltir.parse_module(text)
    op = next(o for o in module.walk() if isinstance(o, (ops.GemmOp, ops.Conv2dOp)))
    alone = single_op_module(op)
    for choice in candidates(op, arch, cutlass=cutlass).choices:
        if choice == UNFUSE:
            continue
        lowered = alone.clone()
        target = next(o for o in lowered.walk() if isinstance(o, (ops.GemmOp, ops.Conv2dOp)))
        target.attributes[KERNEL_ATTR] = choice.to_attr()
        yield choice, lowered


def all_cases(slow: bool = False):
    if slow:
        return itertools.chain(conv_cases(CHANNELS_SLOW), gemm_cases(GEMM_SIZES_SLOW))
    return itertools.chain(conv_cases(CHANNELS), gemm_cases(GEMM_SIZES))
