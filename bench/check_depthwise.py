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

import sys

import numpy as np

from bench.harness import Case, correctness_main
from boltir.backends.cuda.codegen import depthwise_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.support.op_modules import conv_text

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
    return correctness_main(__doc__.splitlines()[0], cases(), depthwise_kernels.computes, "/tmp/boltir-check/depthwise.so")


if __name__ == "__main__":
    sys.exit(main())
