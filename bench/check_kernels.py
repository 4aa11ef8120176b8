"""Builds and runs every CUTLASS template family, 2.x and 3.x (sm_90a), on the GPU and compares each result
with the op-level interpreter's run of the module *before* lowering, on fresh random
inputs. The bar: ‖Δ‖/‖ref‖ < 1e-2 for f16/bf16, 1e-3 for f32 (tf32). Prints a pass/fail
table last; exits 1 if any case fails.

    source bench/setup_gpu.sh && python3 -m bench.check_kernels [--only SUBSTRING] [--list]

`--list` lowers every case and prints its kernel without a GPU (a dry run here).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from bench.harness import (
    BoundKernel,
    Case,
    build_library,
    describe_choice,
    hopper,
    lower_cases,
    random_inputs,
)
from boltir.interp import run
from tests.support.op_modules import b2b_conv_text, b2b_gemm_text, conv_text, gemm_text
from tests.support.torch_arrays import to_numpy_f32, to_torch

EPILOGUES = [
    "",
    "bias",
    "bias, relu",
    "bias, clip(0.0, 6.0)",
    "bias, gelu",
    "bias, gelu_tanh",
    "bias, sigmoid",
    "bias, silu",
    "bias, hardswish",
    "bias, tanh",
    "bias, leaky_relu(0.1)",
    "bias, hardsigmoid(0.2, 0.5)",
    "alpha = 0.5, beta = 2.0, bias, relu",
    "bias, relu, residual = add, then relu",
    "bias, residual = add",
    "residual = add, then gelu",
    "bias, silu, residual = mul",
    "beta = 0.5, bias, gelu, residual = add, then clip(0.0, 6.0)",
]

RESIDENCY_SHARED = {
    "residency": "shared",
    "tile": ((64, 64, 32), (32, 32, 32), (16, 8, 16), 3),
    "tile1": ((64, 128, 32), (32, 64, 32), (16, 8, 16), 3),
}


def cases() -> list[Case]:
    out: list[Case] = []
    # Every epilogue on one odd-sized f16 GEMM (M, N, K not multiples of the tile).
    for epilogue in EPILOGUES:
        out.append(Case(f"gemm f16 333x264x520 <{epilogue or 'none'}>", gemm_text(333, 264, 520, "f16", epilogue)))
    # Every residual form on bf16, and the plain ones.
    for epilogue in ("bias, relu", "bias, gelu", "bias, relu, residual = add, then relu", "bias, silu, residual = mul"):
        out.append(Case(f"gemm bf16 333x264x520 <{epilogue}>", gemm_text(333, 264, 520, "bf16", epilogue), "bf16"))
    for element in ("f16", "bf16", "f32"):
        out.append(Case(f"gemm {element} 1024x768x1024 aligned <bias, relu>", gemm_text(1024, 768, 1024, element), element))
        out.append(Case(f"gemm {element} 1x768x768 batch-1 <bias, gelu>", gemm_text(1, 768, 768, element, "bias, gelu"), element))
        out.append(Case(f"gemm {element} 129x770x258 odd, narrow align <bias, relu>", gemm_text(129, 770, 258, element), element))
    out.append(Case("gemm f32 333x264x520 <bias, residual = add>", gemm_text(333, 264, 520, "f32", "bias, residual = add"), "f32"))
    # Split-k (forced, and the heuristic's own for small M*N with a long K).
    out.append(Case("gemm f16 64x128x8192 heuristic <bias, relu>", gemm_text(64, 128, 8192)))
    out.append(Case("gemm f16 200x256x4096 split-k 4 <bias, sigmoid>", gemm_text(200, 256, 4096, "f16", "bias, sigmoid"), override={"split_k": 4}))
    out.append(Case("gemm bf16 96x192x3000 split-k 3 <bias, relu>", gemm_text(96, 192, 3000, "bf16"), "bf16", override={"split_k": 3}))
    out.append(Case("gemm f32 64x128x4096 split-k 4 <bias, gelu>", gemm_text(64, 128, 4096, "f32", "bias, gelu"), "f32", override={"split_k": 4}))
    # Batched (attention's batched GEMMs), with per-batch and shared weights.
    out.append(Case("gemm f16 batched 12x128x64x128 <>", gemm_text(128, 128, 64, "f16", "", batch=12)))
    out.append(Case("gemm bf16 batched 12x100x72x64 <residual = add>", gemm_text(100, 64, 72, "bf16", "residual = add", batch=12), "bf16"))
    out.append(Case("gemm f16 batch-folded 4x100x256x96 <bias, relu>", gemm_text(100, 256, 96, batch=4, shared_b=True)))
    # Convs: optimized and analytic iterators, strides, odd spatial sizes, residuals.
    for element in ("f16", "bf16"):
        out.append(Case(f"conv {element} 3x3 2x28x28x64->64 <bias, relu>", conv_text(2, 28, 28, 64, 64, 3, 3, element=element), element))
        out.append(Case(f"conv {element} 1x1/2 2x15x15x96->128 <bias, relu, residual = add, then relu>",
                        conv_text(2, 15, 15, 96, 128, 1, 1, stride=2, pad=0, element=element,
                                  epilogue="bias, relu, residual = add, then relu"), element))
    out.append(Case("conv f16 3x3 analytic 1x13x17x40->56 <bias, silu>", conv_text(1, 13, 17, 40, 56, 3, 3, epilogue="bias, silu"),
                    override={"iterator_algorithm": "analytic"}))
    out.append(Case("conv f16 3x3/2 1x31x31x32->48 <bias, hardswish>", conv_text(1, 31, 31, 32, 48, 3, 3, stride=2, epilogue="bias, hardswish")))
    out.append(Case("conv f16 5x5 1x20x20x24->40 <bias, residual = add>", conv_text(1, 20, 20, 24, 40, 5, 5, epilogue="bias, residual = add")))
    out.append(Case("conv f16 3x3 split-k 2 1x14x14x256->64 <bias, relu>", conv_text(1, 14, 14, 256, 64, 3, 3), override={"split_k": 2}))
    out.append(Case("conv f16 3x3 2x7x7x512->512 <bias, relu>", conv_text(2, 7, 7, 512, 512, 3, 3)))
    # The first conv of an image model: C = 4 (padded from 3 on sm80) and C = 3, C = 2.
    out.append(Case("conv f16 7x7/2 C=4 2x64x64x4->64 <bias, relu>", conv_text(2, 64, 64, 4, 64, 7, 7, stride=2, pad=3)))
    out.append(Case("conv bf16 7x7/2 C=4 1x32x32x4->64 <bias, relu>", conv_text(1, 32, 32, 4, 64, 7, 7, stride=2, pad=3, element="bf16"), "bf16"))
    # (C = 3 reaches the kernels as C = 4: pad-alignment pads it; f16 C = 3 rows are not 4-byte aligned.)
    out.append(Case("conv f16 3x3 C=2 1x16x16x2->32 <bias, gelu>", conv_text(1, 16, 16, 2, 32, 3, 3, epilogue="bias, gelu")))
    # Depthwise (MobileNet): 3x3 stride 1 and 2, 5x5, bf16, residual alone.
    out.append(Case("depthwise f16 3x3 2x28x28x64 <bias, clip(0.0, 6.0)>", conv_text(2, 28, 28, 64, 64, 3, 3, epilogue="bias, clip(0.0, 6.0)", depthwise=True)))
    out.append(Case("depthwise f16 3x3/2 1x29x29x96 <bias, relu>", conv_text(1, 29, 29, 96, 96, 3, 3, stride=2, depthwise=True)))
    out.append(Case("depthwise f16 5x5 1x14x14x128 <bias, silu>", conv_text(1, 14, 14, 128, 128, 5, 5, epilogue="bias, silu", depthwise=True)))
    out.append(Case("depthwise bf16 3x3 1x14x14x32 <bias, hardswish>", conv_text(1, 14, 14, 32, 32, 3, 3, element="bf16", epilogue="bias, hardswish", depthwise=True), "bf16"))
    # MobileNetV2's own: large images (many output tiles per channel tile), batch 32.
    out.append(Case("depthwise f16 3x3 1x112x112x32 <bias, clip(0.0, 6.0)>", conv_text(1, 112, 112, 32, 32, 3, 3, epilogue="bias, clip(0.0, 6.0)", depthwise=True)))
    out.append(Case("depthwise f16 3x3/2 1x112x112x96 <bias, clip(0.0, 6.0)>", conv_text(1, 112, 112, 96, 96, 3, 3, stride=2, epilogue="bias, clip(0.0, 6.0)", depthwise=True)))
    out.append(Case("depthwise f16 3x3 32x56x56x144 <bias, clip(0.0, 6.0)>", conv_text(32, 56, 56, 144, 144, 3, 3, epilogue="bias, clip(0.0, 6.0)", depthwise=True)))
    out.append(Case("depthwise f16 3x3 1x10x10x16 <residual = add>", conv_text(1, 10, 10, 16, 16, 3, 3, epilogue="residual = add", depthwise=True)))
    # issue 17: 8 channels once chose a 16x8 warp tile that CUTLASS cannot instantiate;
    # now a 16-channel tile over 8 channels (and 24 over a 32-channel tile)
    out.append(Case("depthwise f16 3x3 1x48x48x8 <bias, relu>", conv_text(1, 48, 48, 8, 8, 3, 3, depthwise=True)))
    out.append(Case("depthwise f16 3x3/2 2x24x24x24 <bias, relu>", conv_text(2, 24, 24, 24, 24, 3, 3, stride=2, depthwise=True)))
    # Back-to-back: both residencies, GEMM and conv.
    out.append(Case("b2b_gemm 4096x64x64x128 register <bias, relu | bias, relu>", b2b_gemm_text(4096, 64, 64, 128)))
    out.append(Case("b2b_gemm 2048x128x128x128 heuristic <bias, gelu | bias>", b2b_gemm_text(2048, 128, 128, 128, "bias, gelu", "bias")))
    out.append(Case("b2b_gemm 1000x64x64x128 shared <bias, relu | relu>", b2b_gemm_text(1000, 64, 64, 128, "bias, relu", "relu"), override=RESIDENCY_SHARED))
    out.append(Case("b2b_gemm 2048x64x256x64 heuristic <bias, relu | bias, relu>", b2b_gemm_text(2048, 64, 256, 64)))
    out.append(Case("b2b_conv 2x14x14x64 3x3->64 1x1->128 register <bias, relu | bias, relu>", b2b_conv_text(2, 14, 14, 64, 64, 128)))
    out.append(Case("b2b_conv 1x28x28x32 3x3->64 1x1->128 shared <bias, silu | bias>", b2b_conv_text(1, 28, 28, 32, 64, 128, epilogue0="bias, silu", epilogue1="bias"),
                    override=RESIDENCY_SHARED))
    return out


HOPPER_EPILOGUES = [
    "",
    "bias",
    "bias, relu",
    "bias, gelu",
    "alpha = 0.5, beta = 2.0, bias, relu",
    "bias, relu, residual = add, then relu",
    "residual = add, then gelu",
    "bias, silu, residual = mul",
    "beta = 0.5, bias, gelu, residual = add, then clip(0.0, 6.0)",
]
"""The 3.x epilogue is one visitor tree of boltir's own whatever the activation: these
cover each of its shapes (no source, bias, residual, both; scaled; mul) and the scalar
functions the 2.x cases above already check one by one."""


def hopper_cases() -> list[Case]:
    """CUTLASS 3.x (sm_90a) instances: every epilogue shape, f16 and bf16, odd sizes,
    batched, clusters, ping-pong, cooperative and warp-specialized, split-k, convs."""
    out: list[Case] = []
    coop = hopper((128, 128, 64), "cooperative")
    for epilogue in HOPPER_EPILOGUES:
        out.append(Case(f"3.x gemm f16 333x264x520 coop <{epilogue or 'none'}>", gemm_text(333, 264, 520, "f16", epilogue), override=coop))
    for epilogue in ("bias, relu", "bias, silu, residual = mul"):
        out.append(Case(f"3.x gemm bf16 333x264x520 coop <{epilogue}>", gemm_text(333, 264, 520, "bf16", epilogue), "bf16", override=coop))
    out.append(Case("3.x gemm f16 1000x1000x512 pingpong 64x128 c1x2 <bias, gelu>", gemm_text(1000, 1000, 512, "f16", "bias, gelu"),
                    override=hopper((64, 128, 64), "pingpong", (1, 2, 1))))
    out.append(Case("3.x gemm bf16 1000x1000x512 pingpong 128x128 <bias, relu, residual = add, then relu>",
                    gemm_text(1000, 1000, 512, "bf16", "bias, relu, residual = add, then relu"), "bf16", override=hopper((128, 128, 64), "pingpong")))
    out.append(Case("3.x gemm f16 2048x1536x768 coop 128x256 c2x1 <bias, relu>", gemm_text(2048, 1536, 768),
                    override=hopper((128, 256, 64), "cooperative", (2, 1, 1))))
    out.append(Case("3.x gemm f16 2048x1536x768 coop 256x128 c1x2 <bias, relu>", gemm_text(2048, 1536, 768),
                    override=hopper((256, 128, 64), "cooperative", (1, 2, 1))))
    out.append(Case("3.x gemm f16 520x264x776 warpspecialized 128x64 <bias, relu>", gemm_text(520, 264, 776),
                    override=hopper((128, 64, 64), "warpspecialized")))
    out.append(Case("3.x gemm f16 256x256x8192 coop split-k 3 <bias, relu, residual = add>", gemm_text(256, 256, 8192, "f16", "bias, relu, residual = add"),
                    override=hopper((128, 128, 64), "cooperative", split_k=3)))
    out.append(Case("3.x gemm f16 batched 12x128x128x64 coop <alpha = 0.125>", gemm_text(128, 128, 64, "f16", "alpha = 0.125", batch=12), override=coop))
    out.append(Case("3.x gemm bf16 batched 12x100x72x64 coop <residual = add>", gemm_text(100, 72, 64, "bf16", "residual = add", batch=12), "bf16",
                    override=coop))
    out.append(Case("3.x gemm f16 batch-folded 4x100x256x96 coop <bias, relu>", gemm_text(100, 256, 96, batch=4, shared_b=True), override=coop))
    # The heuristic's own sm90 choice on the reference workload shapes (bench/kernels.py) (3.x where it takes it).
    out.append(Case("3.x gemm f16 4096x3072x768 heuristic <bias, relu>", gemm_text(4096, 3072, 768), target="sm90"))
    ws = hopper((128, 128, 64), "warpspecialized")
    for element in ("f16", "bf16"):
        out.append(Case(f"3.x conv {element} 3x3 2x28x28x64->64 <bias, relu>", conv_text(2, 28, 28, 64, 64, 3, 3, element=element), element, override=ws))
        out.append(Case(f"3.x conv {element} 1x1/2 2x15x15x96->128 <bias, relu, residual = add, then relu>",
                        conv_text(2, 15, 15, 96, 128, 1, 1, stride=2, pad=0, element=element, epilogue="bias, relu, residual = add, then relu"),
                        element, override=ws))
    out.append(Case("3.x conv f16 3x3/2 1x31x31x32->48 64x64 <bias, hardswish>", conv_text(1, 31, 31, 32, 48, 3, 3, stride=2, epilogue="bias, hardswish"),
                    override=hopper((64, 64, 64), "warpspecialized")))
    out.append(Case("3.x conv f16 5x5 1x20x20x24->40 128x64 <bias, residual = add>", conv_text(1, 20, 20, 24, 40, 5, 5, epilogue="bias, residual = add"),
                    override=hopper((128, 64, 64), "warpspecialized")))
    out.append(Case("3.x conv f16 3x3 2x7x7x512->512 c2x1 <bias, relu>", conv_text(2, 7, 7, 512, 512, 3, 3),
                    override=hopper((128, 128, 64), "warpspecialized", (2, 1, 1))))
    out.append(Case("3.x conv f16 3x3 32x28x28x128->128 heuristic <bias, relu>", conv_text(32, 28, 28, 128, 128, 3, 3), target="sm90"))
    # windows that stop short of the input's end: the template describes the input cropped
    # (ResNet-50's 1x1 stride-2 downsamples on even sizes; the heuristic keeps them 2.x until these pass)
    out.append(Case("3.x conv f16 1x1/2 cropped 1x56x56x256->512 64x64 <bias>", conv_text(1, 56, 56, 256, 512, 1, 1, stride=2, pad=0, epilogue="bias"),
                    override=hopper((64, 64, 64), "warpspecialized")))
    out.append(Case("3.x conv f16 1x1/2 cropped 4x28x28x512->1024 <bias, relu, residual = add, then relu>",
                    conv_text(4, 28, 28, 512, 1024, 1, 1, stride=2, pad=0, epilogue="bias, relu, residual = add, then relu"), override=ws))
    out.append(Case("3.x conv bf16 3x3/2 cropped 2x16x20x64->64 <bias, relu>", conv_text(2, 16, 20, 64, 64, 3, 3, stride=2, pad=0, element="bf16"),
                    "bf16", override=ws))
    return out


def bert_b32_cases() -> list[Case]:
    """BERT-base b32's 2.x GEMMs exactly as the sm80 build lowers them (row-major weights,
    the batch folded into M; batched attention products), with that build's tiles: the
    model fails there with a launch error (bench/RESULTS.md, 2026-12-03)."""

    def module(args, op, result):
        params = ", ".join(f"%{n}: {t}" for n, t in args)
        types = ", ".join(t for _, t in args)
        return f"func.func @main({params}) -> {result} {{\n  %0 = {op} : ({types}) -> {result}\n  func.return %0 : {result}\n}}\n"

    big = {"tile": ((128, 256, 32), (64, 64, 32), (16, 8, 16), 4)}
    out = []
    for k, n, epilogue in ((768, 768, "bias"), (768, 3072, "bias, gelu"), (3072, 768, "bias, residual = add")):
        args = [("x", f"tensor<32x128x{k}xf16>"), ("w", f"tensor<{k}x{n}xf16>"), ("bias", f"tensor<{n}xf16>")]
        extra = " bias %bias"
        if "residual" in epilogue:
            args.append(("residual", f"tensor<32x128x{n}xf16>"))
            extra += " residual %residual"
        text = module(args, f"op.gemm %x, %w{extra} {{epilogue = #op.epilogue<{epilogue}>}}", f"tensor<32x128x{n}xf16>")
        out.append(Case(f"bert-b32 2.x gemm 32x128x{k} @ {k}x{n} row 128x256x32 s4 <{epilogue}>", text, override=big))
    qk = module([("q", "tensor<32x12x128x64xf16>"), ("kt", "tensor<32x12x64x128xf16>")], "op.gemm %q, %kt {epilogue = #op.epilogue<>}",
                "tensor<32x12x128x128xf16>")
    out.append(Case("bert-b32 2.x gemm batched 32x12 128x128x64 row 128x128x32 s5 <>", qk,
                    override={"tile": ((128, 128, 32), (64, 64, 32), (16, 8, 16), 5)}))
    pv = module([("p", "tensor<32x12x128x128xf16>"), ("v", "tensor<32x12x128x64xf16>")], "op.gemm %p, %v {epilogue = #op.epilogue<>}",
                "tensor<32x12x128x64xf16>")
    out.append(Case("bert-b32 2.x gemm batched 32x12 128x64x128 row 128x64x32 s5 <>", pv,
                    override={"tile": ((128, 64, 32), (64, 32, 32), (16, 8, 16), 5)}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop (fills the object cache)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/kernels.so")
    args = parser.parse_args()

    rows, lowered = lower_cases(cases() + hopper_cases() + bert_b32_cases(), args.only)
    if args.list:
        for case in lowered:
            print(f"{case.label:70s} {case.op.name:28s} {describe_choice(case)}")
        for row in rows:
            print(f"{row[0]:70s} {row[3]}")
        return 0 if not rows else 1

    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(lowered, args.library)
    print(f"built the kernels of {len(lowered)} cases in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 0 if not rows else 1

    import torch

    rng = np.random.default_rng(args.seed)
    for case in lowered:
        try:
            inputs = random_inputs(case, rng)
            (expected,) = run(case.op_module, inputs)
            kernel = BoundKernel(library, case, {name: to_torch(value) for name, value in inputs.items()})
            kernel()
            torch.cuda.synchronize()
            got = to_numpy_f32(kernel.output)
            ref = expected.astype(np.float64)
            error = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if np.isfinite(got).all() else float("inf")
            verdict = "pass" if error < case.tolerance else "FAIL"
            rows.append((case.label, describe_choice(case), f"{error:.2e}", f"< {case.tolerance:.0e}", verdict))
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            rows.append((case.label, describe_choice(case), "-", str(error).splitlines()[0][:60], "FAIL"))

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: op-level interpreter before lowering; seed {args.seed}")
    widths = [max(len(r[i]) for r in rows + [("case", "kernel", "rel err", "bar", "result")]) for i in range(5)]
    header = ("case", "kernel", "rel err", "bar", "result")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.ljust(w) for v, w in zip(row, widths)))
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
