"""Runs our depthwise conv kernel (boltir/backends/cuda/codegen/depthwise_kernels.py) on the
GPU and compares each result with the op-level interpreter on fresh random inputs: shapes,
strides 1 and 2, dilation, asymmetric padding, R = 3 / 5 / 7, every epilogue kind (bias,
ReLU6, hardswish, residual, second activation), f16 / bf16 / f32, channel counts that are
not a multiple of 8, the heuristic's tile and the tuner's other tiles. The bar: ‖Δ‖/‖ref‖
< 1e-2 for f16/bf16, 1e-3 for f32. Prints a pass/fail table last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_depthwise [--only TEXT] [--list]

The timing against CUTLASS's depthwise conv and cuDNN is `python3 -m bench.kernels --only dw`.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from bench.harness import BoundKernel, Case, build_library, describe_choice, lower_cases, random_inputs
from boltir.backends.cuda.codegen import depthwise_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.interp import run
from boltir.ir import parse_module
from tests.support.op_modules import conv_text
from tests.support.torch_arrays import to_numpy_f32, to_torch

SMS = 132


def depthwise(n, h, w, c, r=3, stride=1, element="f16", epilogue="bias, clip(0.0, 6.0)", pad=None, dilation=1,
              pads=None) -> tuple[str, str]:
    """(label, op-level text) of one NHWC depthwise conv; `pads` is (top, left, bottom, right)."""
    text = conv_text(n, h, w, c, c, r, r, stride=stride, pad=pad, element=element, epilogue=epilogue, depthwise=True,
                     pads=pads, dilation=dilation)
    label = f"dw {element} {r}x{r}/{stride} {n}x{h}x{w}x{c}"
    if dilation != 1 or pads is not None:
        label += f" dil{dilation} pads{list(pads or (pad,) * 4)}"
    return f"{label} <{epilogue}>", text


def shapes() -> list[tuple[str, str]]:
    return [
        # MobileNetV2's depthwise layers (batch 2 here: correctness, not speed)
        depthwise(2, 112, 112, 32),
        depthwise(2, 112, 112, 96, stride=2),
        depthwise(2, 56, 56, 144),
        depthwise(2, 56, 56, 144, stride=2),
        depthwise(2, 28, 28, 192),
        depthwise(2, 14, 14, 384),
        depthwise(2, 14, 14, 576, stride=2),
        depthwise(2, 7, 7, 960),
        # epilogues
        depthwise(2, 17, 19, 64, epilogue="bias, hardswish"),
        depthwise(2, 17, 19, 64, epilogue="bias, relu, residual = add, then relu"),
        depthwise(1, 16, 16, 32, epilogue="residual = add"),
        depthwise(1, 16, 16, 32, epilogue="alpha = 0.5, beta = 2.0, bias, silu"),
        depthwise(1, 15, 15, 48, element="bf16", epilogue="bias, gelu"),
        depthwise(1, 15, 15, 48, element="f32", epilogue="bias, leaky_relu(0.1)"),
        # filters, strides, dilation, padding
        depthwise(2, 28, 28, 96, r=5),
        depthwise(2, 29, 29, 96, r=5, stride=2, element="bf16"),
        depthwise(1, 20, 20, 64, r=7),
        depthwise(1, 21, 23, 32, dilation=2, pad=2),
        depthwise(1, 21, 23, 32, stride=2, pads=(0, 1, 1, 0)),
        depthwise(1, 11, 11, 16, r=3, pad=0),
        # channels not a multiple of 8
        depthwise(2, 13, 13, 12),
        depthwise(2, 13, 13, 6, element="bf16"),
        depthwise(1, 13, 13, 3, stride=2),
        depthwise(1, 9, 9, 20, element="f32", r=5),
    ]


def cases() -> list[Case]:
    """Each shape with the heuristic's tile; the first few shapes with every tile the
    tuner would measure too."""
    out = []
    for index, (label, text) in enumerate(shapes()):
        element = "bf16" if " bf16 " in label else "f32" if " f32 " in label else "f16"
        out.append(Case(label, text, element, target="sm90", depthwise="direct"))
        if index < 8:
            op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
            for choice in candidates(op, "sm90", sms=SMS).choices[1:]:
                if choice.family == depthwise_kernels.FAMILY:
                    tile = depthwise_kernels.DirectTile.of(choice.tile)
                    override = {"tile": choice.tile, "alignment": choice.alignment}
                    out.append(Case(f"{label} tile {tile.describe()}", text, element, override=override, target="sm90",
                                    depthwise="direct"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/depthwise.so")
    args = parser.parse_args()

    rows, lowered = lower_cases(cases(), args.only, depthwise_kernels.computes)
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

    rng = np.random.default_rng(args.seed)
    for case in lowered:
        try:
            inputs = random_inputs(case, rng)
            (expected,) = run(case.op_module, inputs)
            kernel = BoundKernel(library, case, {name: to_torch(value) for name, value in inputs.items()})
            kernel.output.fill_(float("nan"))  # an element the kernel misses shows
            kernel()
            torch.cuda.synchronize()
            got, ref = to_numpy_f32(kernel.output).astype(np.float64), expected.astype(np.float64)
            error = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if np.isfinite(got).all() else float("inf")
            rows.append((case.label, describe_choice(case), f"{error:.2e}", f"< {case.tolerance:.0e}",
                         "pass" if error < case.tolerance else "FAIL"))
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            rows.append((case.label, describe_choice(case), "-", str(error).splitlines()[0][:60], "FAIL"))

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    header = ("case", "kernel", "rel err", "bar", "result")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.ljust(w) for v, w in zip(row, widths)))
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
