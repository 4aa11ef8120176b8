"""fuse-output-cast: a GEMM on our few-rows kernel whose only user widens its result to f32
(an f16 model's classifier before the f32 output) writes f32 itself, and the cast's launch
is gone.

At batch 1 every launch costs a few microseconds of graph time whatever it computes, and
every f16 image classifier ends in `skinny_gemm -> extf` (the model's output is f32). The
kernel rounds its f32 epilogue once to the output type, so writing f32 directly is the
f16 product and epilogue without the rounding to f16 in between: at least as exact.

Requires: select-kernels ran (the GEMM's `kernel` attribute names its family); before
lower-op-to-cutlass and plan-memory.
Guarantees: an `op.gemm` with no residual whose choice is `skinny_gemm`, whose result has
one use, and that use an `op.cast` or single-cast `op.elementwise` from the GEMM's element
type to f32, takes the cast's f32 result type; the cast is erased. Other
GEMMs and casts are unchanged; --pass-stats counts the casts fused. The module computes
the same function, without the intermediate rounding to f16.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from boltir.backends.cuda.codegen import skinny_gemm_kernels
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import op as ops
from boltir.passes import statistics
from boltir.passes.common import float_cast_source


def fusable_cast(gemm: ops.GemmOp) -> Operation | None:
    """The widening cast that `gemm` can absorb, or None."""
    if KERNEL_ATTR not in gemm.attributes or gemm.residual is not None:
        return None
    if KernelChoice.from_attr(gemm.attributes[KERNEL_ATTR]).family != skinny_gemm_kernels.FAMILY:
        return None
    uses = list(gemm.output.uses)
    if len(uses) != 1:
        return None
    cast = uses[0].operation
    if float_cast_source(cast) is not gemm.output or not isinstance(cast.results[0].type.element_type, Float32Type):
        return None
    return cast


@dataclass(frozen=True)
class FuseOutputCastPass(ModulePass):
    """Requires: kernels selected. Guarantees: a few-rows GEMM writes the f32 its only user
    cast it to."""

    name = "fuse-output-cast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for gemm in [o for o in op.walk() if isinstance(o, ops.GemmOp)]:
            cast = fusable_cast(gemm)
            if cast is None:
                continue
            wide = ops.GemmOp(gemm.a, gemm.b, bias=gemm.bias, layout_a=gemm.prop_value("layout_a"),
                              layout_b=gemm.prop_value("layout_b"), epilogue=gemm.epilogue, result_type=cast.results[0].type)
            wide.attributes.update(gemm.attributes)
            wide.location = gemm.location
            Rewriter.replace_op(gemm, wide)
            cast.results[0].replace_all_uses_with(wide.output)
            Rewriter.erase_op(cast)
            statistics.count(self, "output casts fused into skinny_gemm")
