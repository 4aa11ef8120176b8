"""Runs our split-reduction conv (boltir/backends/cuda/codegen/splitk_conv_kernels.py) on the
GPU and compares each result with the op-level interpreter on fresh random inputs: the
batch-1 convs of ResNet-50 and VGG-16 that `few_pixels=splitk` gives it (with the
heuristic's tile and the tuner's other tiles), then odd sizes, strides, dilation,
asymmetric padding, 1x1 to 5x5 windows, output channels that leave a partial tile, splits
that do not divide the reduction, every epilogue kind, f16 and bf16. The bar: ‖Δ‖/‖ref‖ <
1e-2 (outputs NaN-filled first, so a missed element fails). Prints a pass/fail table last;
exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_splitk_conv [--only TEXT] [--list]

The timing against CUTLASS's choice, cuDNN and torch.compile is
`python3 -m bench.kernels --only "b1 conv"` (our tiles are among the tuner's candidates).
"""

from __future__ import annotations

import sys

from bench.harness import Case, correctness_main, own_kernel
from boltir.backends.cuda.codegen import splitk_conv_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.support.op_modules import conv_text

SMS = 132

MODEL_CONVS = [  # (n, h, w, c, k, r, stride): ResNet-50's and VGG-16's batch-1 convs the rule takes
    (1, 7, 7, 512, 512, 3, 1), (1, 14, 14, 256, 256, 3, 1), (1, 14, 14, 1024, 256, 1, 1), (1, 7, 7, 2048, 512, 1, 1),
    (1, 28, 28, 128, 128, 3, 1), (1, 14, 14, 1024, 512, 1, 1), (1, 14, 14, 1024, 2048, 1, 2), (1, 14, 14, 512, 512, 3, 1),
    (1, 28, 28, 256, 256, 3, 2), (1, 14, 14, 512, 512, 3, 2),
]


def splitk_case(label: str, text: str, element: str = "f16", tile: splitk_conv_kernels.SplitTile | None = None) -> Case:
    override = {} if tile is None else own_kernel(splitk_conv_kernels.FAMILY, "sm90", tile)
    return Case(label, text, element, override=override, target="sm90", few_pixels="splitk")


def cases() -> list[Case]:
    out = []
    for n, h, w, c, k, r, stride in MODEL_CONVS:
        label = f"{r}x{r}/{stride} {n}x{h}x{w}x{c}->{k}"
        text = conv_text(n, h, w, c, k, r, r, stride=stride, pad=r // 2)
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
        out.append(splitk_case(label, text, tile=splitk_conv_kernels.default_tile(op, SMS)))
        for choice in candidates(op, "sm90", sms=SMS, split_convs=True).choices[1:]:
            if choice.family == splitk_conv_kernels.FAMILY:
                tile = splitk_conv_kernels.SplitTile.of(choice.tile)
                out.append(splitk_case(f"{label} tile {tile.describe()}", text, tile=tile))
    shapes = [  # (n, h, w, c, k, r, stride, extra, tile)
        (2, 9, 7, 64, 64, 3, 2, {"pads": (1, 0, 2, 1), "dilation": 2}, (32, 64, 3)),
        (1, 5, 5, 128, 48, 3, 1, {}, (32, 32, 4)),
        (1, 6, 6, 256, 40, 1, 1, {"pad": 0}, (64, 32, 2)),
        (1, 4, 4, 64, 16, 3, 1, {}, (64, 32, 8)),
        (1, 3, 5, 64, 40, 2, 1, {"pad": 0}, (32, 64, 1)),
        (3, 11, 13, 192, 96, 5, 2, {}, (64, 64, 7)),
        (1, 10, 10, 64, 520, 3, 1, {"pads": (0, 2, 1, 0)}, (32, 64, 6)),
    ]
    for n, h, w, c, k, r, stride, extra, tile in shapes:
        for element in ("f16", "bf16"):
            label = f"{element} {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''} tile {'x'.join(map(str, tile))}"
            text = conv_text(n, h, w, c, k, r, r, stride=stride, element=element, **extra)
            out.append(splitk_case(label, text, element, splitk_conv_kernels.SplitTile(*tile)))
    for epilogue in ("bias, hardswish", "bias, relu, residual = add, then relu", "residual = add", "none",
                     "alpha = 0.5, beta = 2.0, bias, silu", "bias, gelu", "bias, leaky_relu(0.1)"):
        text = conv_text(1, 7, 7, 512, 64, 3, 3, epilogue=epilogue)
        out.append(splitk_case(f"f16 3x3/1 1x7x7x512->64 <{epilogue}>", text, tile=splitk_conv_kernels.SplitTile(64, 32, 8)))
    return out


def main() -> int:
    return correctness_main(__doc__.splitlines()[0], cases(), splitk_conv_kernels.computes, "/tmp/boltir-check/splitk_conv.so")


if __name__ == "__main__":
    sys.exit(main())
