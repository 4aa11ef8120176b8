"""Our own kernel families whose tile rides in the op's kernel choice (`own_kernels.TiledFamily`):
the op stays at the op level, marked, and the family's generator computes it with the CUTLASS
launchers' ABI. One list, so that lower-op-to-cutlass, the tuner and KernelLibrary treat a
new family alike."""

from __future__ import annotations

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import (
    depthwise_kernels,
    depthwise_pointwise_kernels,
    halo_conv_kernels,
    skinny_gemm_kernels,
    splitk_conv_kernels,
    stem_conv_kernels,
    stream_conv_kernels,
    wgsplit_gemm_kernels,
)

GENERATORS = (depthwise_kernels, skinny_gemm_kernels, stem_conv_kernels, splitk_conv_kernels, halo_conv_kernels,
              stream_conv_kernels, depthwise_pointwise_kernels, wgsplit_gemm_kernels)
BY_FAMILY = {generator.FAMILY: generator for generator in GENERATORS}
"""family name (a KernelChoice's) -> its generator module."""


def generator_computing(op: Operation):
    """The family's generator that computes the op (marked for it), or None."""
    return next((generator for generator in GENERATORS if generator.computes(op)), None)
