"""Runs our GEMM for few rows (boltir/backends/cuda/codegen/skinny_gemm_kernels.py) on the
GPU and compares each result with the op-level interpreter on fresh random inputs: M = 1,
2, 4, 8, 16, 32 (and 3, 9, 17, 24, folded batches), the batch-1 classifiers (K = 2048 / 1280 -> 1000),
VGG-16's FC layers (25088 -> 4096, 4096 -> 4096, 4096 -> 1000), a BERT-like 768 -> 2304,
odd N and K that is not a multiple of the 64-element chunk, every epilogue kind, f16 and
bf16, the heuristic's tile and the tuner's other tiles. The bar: ‖Δ‖/‖ref‖ < 1e-2. Prints a
pass/fail table last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_gemv [--only TEXT] [--list]

The timing against CUTLASS's choice and torch.nn.functional.linear is
`python3 -m bench.kernels --only "b1 skinny"`.
"""

from __future__ import annotations

import sys

from bench.harness import Case, correctness_main, own_kernel
from boltir.backends.cuda.codegen import skinny_gemm_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.support.op_modules import gemm_text

SMS = 132


def gemv(m, n, k, element="f16", epilogue="bias", batch=None) -> tuple[str, str]:
    """(label, op-level text) of one Linear-style GEMM (an N x K weight); `batch` folds into M."""
    text = gemm_text(m, n, k, element=element, epilogue=epilogue, batch=batch, shared_b=batch is not None)
    rows = f"{batch}x{m}" if batch else f"{m}"
    return f"skinny {element} M={rows} {n}x{k} <{epilogue}>", text


def shapes() -> list[tuple[str, str]]:
    return [
        # the batch-1 classifiers and their few-row batches
        *(gemv(m, 1000, 2048) for m in (1, 2, 4, 8, 16)),
        gemv(1, 1000, 1280),
        # VGG-16's FC layers at batch 1
        gemv(1, 4096, 25088, epilogue="bias, relu"),
        gemv(1, 4096, 4096, epilogue="bias, relu"),
        gemv(1, 1000, 4096),
        # BERT-like projection, odd N, K off the 64-element chunk, 3 and 9 rows
        gemv(1, 2304, 768),
        gemv(3, 37, 72, epilogue="bias, relu"),
        gemv(9, 1001, 2056),
        gemv(16, 4097, 200),
        # epilogues and element types
        gemv(1, 1000, 2048, epilogue=""),
        gemv(2, 768, 768, epilogue="bias, gelu"),
        gemv(4, 512, 1024, epilogue="bias, relu, residual = add"),
        gemv(1, 512, 1024, epilogue="alpha = 0.5, beta = 2.0, bias, silu"),
        gemv(8, 512, 1024, epilogue="bias, residual = add, then relu"),
        gemv(1, 1000, 2048, element="bf16"),
        gemv(16, 4096, 4096, element="bf16", epilogue="bias, gelu"),
        # a leading batch folded into the rows
        gemv(4, 640, 512, batch=3, epilogue="bias, relu"),
        # batch 32 (four column blocks): the classifiers, VGG-16's FC layers, 17 and 24 rows
        gemv(32, 1000, 2048),
        gemv(32, 1000, 1280, element="bf16"),
        gemv(32, 4096, 25088, epilogue="bias, relu"),
        gemv(32, 4096, 4096, epilogue="bias, relu, residual = add"),
        gemv(17, 1001, 2056),
        gemv(8, 640, 512, batch=3, epilogue="bias, gelu"),
    ]


def cases() -> list[Case]:
    """Each shape with the heuristic's tile (our kernel forced on its default tile where the
    heuristic leaves the shape to CUTLASS, `payoff_reason`: VGG-16's FC layers at batch 32);
    the first few shapes with every tile the tuner would measure too."""
    out = []
    for index, (label, text) in enumerate(shapes()):
        element = "bf16" if " bf16 " in label else "f16"
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.GemmOp))
        if skinny_gemm_kernels.payoff_reason(op, SMS) is None:
            out.append(Case(label, text, element, target="sm90", small_m="skinny"))
        else:
            tile = skinny_gemm_kernels.default_tile(op, SMS)
            out.append(Case(f"{label} forced {tile.describe()}", text, element, target="sm90", small_m="skinny",
                            override=own_kernel(skinny_gemm_kernels.FAMILY, "sm90", tile)))
        if index < 8:
            for choice in candidates(op, "sm90", sms=SMS).choices[1:]:
                if choice.family == skinny_gemm_kernels.FAMILY:
                    tile = skinny_gemm_kernels.SkinnyTile.of(choice.tile)
                    out.append(Case(f"{label} tile {tile.describe()}", text, element, override={"tile": choice.tile},
                                    target="sm90", small_m="skinny"))
    return out


def main() -> int:
    return correctness_main(__doc__.splitlines()[0], cases(), skinny_gemm_kernels.computes, "/tmp/boltir-check/skinny_gemm.so")


if __name__ == "__main__":
    sys.exit(main())
