"""Runs our Hopper GEMM for few rows with K split among a cluster's CTAs and their warp groups
(boltir/backends/cuda/codegen/wgsplit_gemm_kernels.py) on the GPU and compares each result
with the op-level interpreter on fresh random inputs: BERT's and ViT-B/16's batch-1 GEMMs
(128 and 197 rows; QKV, output projection, FFN1, FFN2) with both weight layouts, rows that
leave a partial 64-row tile, N off the tile's columns (odd N too: the epilogue's column pairs split), K off the 64-wide k-tile, a leading
batch folded into the rows, every epilogue kind, f16 and bf16, each on the kernel's default
tile and on its best 128-row tile (where A has more than 64 rows), and BERT's output projection,
FFN1 and FFN2 on every tile the tuner would measure (64 and 128 rows, clusters of one to eight
CTAs, one wave and several). The bar:
‖Δ‖/‖ref‖ < 1e-2. Prints a pass/fail table last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_wgsplit_gemm [--only TEXT] [--list]

The timing against CUTLASS's tiles is `python3 -m bench.kernels --only "b1 linear"`.
"""

from __future__ import annotations

import sys

from bench.harness import Case, correctness_main, own_kernel
from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.support.op_modules import gemm_text

SMS = 132


def shapes() -> list[tuple[str, str]]:
    """(label, op-level text): `layout_b` "col" is an N x K weight (a Linear's), "row" K x N
    (a MatMul's, as BERT's ONNX export has it)."""

    def gemm(m, n, k, element="f16", epilogue="bias", layout_b="col", batch=None):
        text = gemm_text(m, n, k, element=element, epilogue=epilogue, layout_b=layout_b, batch=batch,
                         shared_b=batch is not None)
        rows = f"{batch}x{m}" if batch else f"{m}"
        return f"wgsplit {element} M={rows} {n}x{k} B {layout_b} <{epilogue}>", text

    return [
        gemm(128, 2304, 768, layout_b="row"),
        gemm(128, 768, 768, layout_b="row", epilogue="bias, residual = add"),
        gemm(128, 3072, 768, layout_b="row", epilogue="bias, gelu"),
        gemm(128, 768, 3072, layout_b="row", epilogue="bias, residual = add"),
        gemm(128, 768, 3072),
        gemm(197, 2304, 768),
        gemm(197, 768, 3072, epilogue="bias, residual = add"),
        gemm(100, 200, 520, epilogue="bias, relu"),
        gemm(64, 72, 1000, epilogue=""),
        gemm(100, 203, 520, epilogue="bias, residual = add"),
        gemm(32, 512, 1024, epilogue="alpha = 0.5, beta = 2.0, bias, silu", batch=4),
        gemm(128, 768, 3072, element="bf16", epilogue="bias, gelu"),
        gemm(128, 640, 2048, element="bf16", layout_b="row", epilogue="bias, residual = add, then relu"),
    ]


def cases() -> list[Case]:
    """Each shape on the kernel's default tile (forced: the heuristic leaves these GEMMs to
    CUTLASS) and its best 128-row tile; BERT's output projection, FFN1 and FFN2 on the tuner's
    other tiles too; two shapes whose last 48-column tile is partial on one."""
    out = []
    for index, (label, text) in enumerate(shapes()):
        element = "bf16" if " bf16 " in label else "f16"
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.GemmOp))
        tiles = [wg.default_tile(op, SMS), *wg.ranked_tiles(op, SMS, block_ms=(128,))[:1]]
        if index in (1, 2, 3):
            tiles += [wg.SplitTile.of(c.tile) for c in candidates(op, "sm90", sms=SMS).choices if c.family == wg.FAMILY]
        if index in (8, 9):  # 48 columns over a partial last tile (N = 72, N = 203 odd)
            tiles += [t for t in wg.ranked_tiles(op, SMS) if t.block_n == 48][:1]
        for tile in dict.fromkeys(tiles):
            out.append(Case(f"{label} tile {tile.describe()}", text, element, target="sm90",
                            override=own_kernel(wg.FAMILY, "sm90", tile)))
    return out


def main() -> int:
    return correctness_main(__doc__.splitlines()[0], cases(), wg.computes, "/tmp/boltir-check/wgsplit_gemm.so")


if __name__ == "__main__":
    sys.exit(main())
