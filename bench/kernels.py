"""Times boltir's kernels against PyTorch eager (cuBLAS / cuDNN) and torch.compile (default
mode) on the reference GEMM, conv and back-to-back workloads (`workloads()`), all fp16, in
one run: the heuristic's choice for an sm80 build (CUTLASS 2.x) and for an sm90 build (3.x
where it runs), and a set of 3.x candidates (`--no-candidates` skips them). Prints one
table last.

    source bench/setup_gpu.sh && python3 -m bench.kernels [--only TEXT]

Timing (docs/BENCHMARKING.md): CUDA events around 10 back-to-back calls (so host launch
cost is not counted), after a warm-up, the median of 30 such samples; inputs rotate among
at least two copies, enough to exceed three times the 60 MB L2 (`rotations_for`). Every boltir result is also checked against eager (‖Δ‖/‖ref‖ column).
The b2b rows also time boltir's two unfused kernels (what select-kernels would emit
without the fusion). The depthwise rows ("mb dw3x3", MobileNetV2's at batch 32) put
CUTLASS's direct depthwise conv in the first column, our own kernel (the heuristic's
choice) in the second, and our other tiles as the candidates; the notes give each one's
effective TB/s (input, filter, bias and output once) beside cuDNN's. The "skinny" rows
(GEMMs with at most 32 rows: classifiers and VGG-16's FC layers at batch 1 and 32) put CUTLASS 2.x in the
first column, our few-rows GEMM (the sm90 heuristic's choice) in the second, and CUTLASS's
sm90 choice with our other tiles as the candidates; the notes give the weight-streaming TB/s
of ours, CUTLASS's sm90 choice and F.linear (eager, no ReLU).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

from boltir.backends.cuda.tune.database import describe_choice as describe_tuner_choice
from bench.harness import (
    SMS,
    BoundKernel,
    Case,
    build_library,
    describe_choice,
    hopper,
    lower,
    own_kernel,
    profile_launches,
)
from boltir.backends.cuda.codegen import depthwise_kernels, skinny_gemm_kernels, wgsplit_gemm_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KernelChoice
from boltir.backends.cuda.tune.worker import operand_sets
from boltir.target import get_target
from tests.support.op_modules import b2b_gemm_text, conv_text, gemm_text

L2_BYTES = 60 * 2**20
REPEATS = 30
INNER = 10
WARMUP = 10


GEMM_CANDIDATES = [
    ((128, 256, 64), "cooperative", (2, 1, 1), 1),
    ((128, 256, 64), "cooperative", (1, 1, 1), 1),
    ((256, 128, 64), "cooperative", (1, 2, 1), 1),
    ((128, 128, 64), "cooperative", (2, 1, 1), 1),
    ((128, 192, 64), "cooperative", (1, 1, 1), 1),
    ((128, 64, 64), "cooperative", (1, 1, 1), 1),
    ((128, 128, 64), "pingpong", (1, 1, 1), 1),
    ((64, 128, 64), "pingpong", (1, 1, 1), 1),
    ((128, 128, 64), "cooperative", (1, 1, 1), 2),
]
"""3.x GEMM instances timed beside the heuristic's choices (swizzle 1), to see what the
sm90 heuristic should pick: they are one instance each for every GEMM workload."""
SMALL_M_CANDIDATES = [
    ((64, 32, 64), "pingpong", (1, 1, 1), 1),
    ((64, 64, 64), "pingpong", (1, 1, 1), 1),
    ((64, 128, 64), "pingpong", (1, 1, 1), 1),
    ((64, 256, 64), "pingpong", (1, 1, 1), 1),
    ((128, 64, 64), "cooperative", (1, 1, 1), 1),
    ((128, 64, 64), "cooperative", (1, 1, 1), 2),
    ((128, 64, 64), "cooperative", (1, 1, 1), 4),
    ((128, 64, 64), "cooperative", (1, 1, 1), 8),
    ((128, 128, 64), "cooperative", (1, 1, 1), 2),
    ((128, 128, 64), "cooperative", (1, 1, 1), 4),
    ((128, 128, 64), "cooperative", (1, 1, 1), 8),
    ((128, 256, 64), "cooperative", (1, 1, 1), 4),
    ((64, 32, 64), "pingpong", (1, 2, 1), 1),
    ((64, 32, 64), "pingpong", (1, 4, 1), 1),
    ((64, 32, 64), "pingpong", (2, 2, 1), 1),
    ((64, 64, 64), "pingpong", (2, 1, 1), 1),
    ((64, 64, 64), "pingpong", (1, 2, 1), 1),
    ((64, 64, 64), "pingpong", (2, 2, 1), 1),
    ((64, 64, 64), "pingpong", (1, 4, 1), 1),
]
"""For the transformers' batch-1 GEMMs (M of 128 or 197 rows): few tiles, so the choice is
between narrow tiles (more CTAs, each with all of K), stream-K slices of K, and clusters whose
TMA multicast shares the A tile (along N) or the weight tile (along M). Multicast cuts what
the L2 sends out but not what each SM takes in, which is what these GEMMs' times follow;
timed, the clusters were no faster, and neither was a 64 x 48 tile on more SMs (FFN1 on 128
rather than 96, QKV on 96 rather than 72; bench/RESULTS.md)."""
PARTIAL_WAVE_CANDIDATES = [
    ((128, 256, 64), "streamk", (2, 1, 1), 1),
    ((128, 256, 64), "streamk", (1, 1, 1), 1),
    ((256, 128, 64), "streamk", (1, 1, 1), 1),
    ((128, 192, 64), "streamk", (1, 1, 1), 1),
    ((128, 256, 64), "cooperative", (1, 1, 1), 1),
    ((128, 256, 64), "cooperative", (2, 1, 1), 1),
    ((128, 256, 64), "cooperative", (1, 1, 1), 1, 4),
    ((128, 192, 64), "cooperative", (1, 1, 1), 1),
    ((128, 192, 64), "cooperative", (2, 1, 1), 1, 4),
    ((128, 256, 64), "pingpong", (1, 1, 1), 1, 4),
    ((128, 128, 64), "cooperative", (2, 1, 1), 1, 4),
]
"""For GEMMs whose grid of big tiles ends in a partial wave (ViT-B/16 b32: M = 6304, N 768
gives 150 tiles of 128x256 on 132 SMs): the stream-K scheduler against whole tiles, and
the cluster and raster swizzle (a fifth entry; else 1) apart."""
CONV_CANDIDATES = [
    ((128, 128, 64), "warpspecialized", (1, 1, 1), 1),
    ((128, 64, 64), "warpspecialized", (1, 1, 1), 1),
    ((64, 128, 64), "warpspecialized", (1, 1, 1), 1),
    ((64, 64, 64), "warpspecialized", (1, 1, 1), 1),
    ((128, 128, 64), "warpspecialized", (2, 1, 1), 1),
    # a sixth entry: explicit stages, so that two CTAs share a multiprocessor (as many
    # stages as fit, the default, leave one CTA per SM: cutlass_sm90.occupancy_stages)
    ((128, 128, 64), "warpspecialized", (1, 1, 1), 1, 1, 3),
    ((128, 64, 64), "warpspecialized", (1, 1, 1), 1, 1, 4),
    ((128, 64, 64), "warpspecialized", (1, 1, 1), 1, 1, 3),
    ((64, 128, 64), "warpspecialized", (1, 1, 1), 1, 1, 4),
    ((64, 64, 64), "warpspecialized", (1, 1, 1), 1, 1, 6),
]


WIDE_CONV_CANDIDATES = [
    *CONV_CANDIDATES,
    ((64, 192, 64), "warpspecialized", (1, 1, 1), 1),
    ((64, 192, 64), "warpspecialized", (2, 1, 1), 1),
    ((64, 192, 64), "warpspecialized", (1, 1, 1), 1, 1, 3),
    ((128, 96, 64), "warpspecialized", (1, 1, 1), 1),
    ((128, 96, 64), "warpspecialized", (2, 1, 1), 1),
    ((128, 96, 64), "warpspecialized", (1, 1, 1), 1, 1, 4),
    ((64, 96, 64), "warpspecialized", (1, 1, 1), 1),
    ((64, 96, 64), "warpspecialized", (1, 1, 1), 1, 1, 4),
    ((128, 96, 32), "warpspecialized", (1, 1, 1), 1),
    ((64, 96, 32), "warpspecialized", (1, 1, 1), 1),
    ((64, 192, 32), "warpspecialized", (1, 1, 1), 1),
]
"""For the "rv " convs: tiles whose N is K (192) or half of it (96), one or two CTAs a
multiprocessor, with and without a 2x1 cluster; and 32-deep K tiles (96 channels a filter
tap are one and a half 64-deep tiles: the 3.x conv pads the rest)."""


def candidate_cases(label: str, text: str, candidates, element: str = "f16") -> list:
    out = []
    for threadblock, schedule, cluster, split_k, *rest in candidates:
        swizzle = rest[0] if rest else 1  # a fifth entry: the raster swizzle
        stages = rest[1] if len(rest) > 1 else 0  # a sixth: explicit stages (0: as many as fit)
        override = {**hopper(threadblock, schedule, cluster, split_k), "swizzle": swizzle}
        if stages:
            override["tile"] = dataclasses.replace(override["tile"], stages=stages)
        name = (f"{label} cand {'x'.join(map(str, threadblock))} {schedule} {cluster[0]}x{cluster[1]} s{split_k} sw{swizzle}"
                + (f" st{stages}" if stages else ""))
        try:
            out.append(lower(Case(name, text, element, override=override, target="sm90")))
        except Exception as error:  # noqa: BLE001 - a candidate the rules refuse is skipped, said why
            print(f"skipped {name}: {str(error).splitlines()[0]}")
    return out


def wgsplit_cases(label: str, text: str) -> list[Case]:
    """Our Hopper GEMM with K split among a cluster's warp groups on the tiles the tuner races for a GEMM
    of few rows (none where it does not take the GEMM)."""
    from boltir.dialects import op as ops
    from boltir.ir import parse_module

    op = next(o for o in parse_module(text).walk() if isinstance(o, ops.GemmOp))
    tiles = [wgsplit_gemm_kernels.SplitTile.of(c.tile) for c in candidates(op, "sm90", sms=SMS).choices
             if c.family == wgsplit_gemm_kernels.FAMILY]
    return [lower(Case(f"{label} wgsplit {tile.describe()}", text, override=own_kernel(wgsplit_gemm_kernels.FAMILY, "sm90", tile),
                       target="sm90")) for tile in tiles]


def direct_candidates(ours: Case) -> list[Case]:
    """Our depthwise kernel's other tiles, as the tuner's candidates list them."""
    out = []
    for choice in candidates(ours.op, "sm90", sms=SMS).choices[1:]:
        if choice.family == depthwise_kernels.FAMILY:
            override = {"tile": choice.tile, "alignment": choice.alignment}
            tile = depthwise_kernels.DirectTile.of(choice.tile).describe()
            out.append(lower(Case(f"{ours.label} tile {tile}", ours.text, override=override, target="sm90", depthwise="direct")))
    return out


CHOICE_FIELDS = ("family", "arch", "tile", "alignment", "swizzle", "split_k", "iterator_algorithm", "cluster", "kernel_schedule")


def tuner_candidates(first: Case) -> list[Case]:
    """The tuner's other candidates for a case's op (2.x split-k among them, and our
    split-reduction conv's tiles where the heuristic gives it the op), then our
    split-reduction conv's tiles for any batch-1 conv it computes (`split_conv_variants`),
    each as a case."""
    from boltir.dialects import op as ops

    from boltir.backends.cuda.select.heuristic import HeuristicSelector

    op = next(o for o in first.op_module.walk() if isinstance(o, ops.Conv2dOp | ops.GemmOp))
    out = []
    # `first`'s own kernel: the harness keeps CUTLASS's conv (few_pixels="cutlass")
    heuristic = HeuristicSelector(sms=SMS, split_convs=False).select(op, "sm90")
    choices = [c for c in candidates(op, "sm90", sms=SMS).choices if c != heuristic]
    split = next((c for c in choices if c.split_k > 1), None)
    if split is not None:  # the split-k curve around the tuner's count
        choices += [dataclasses.replace(split, split_k=n) for n in (2, 4, 16) if dataclasses.replace(split, split_k=n) not in choices]
    choices += [c for c in split_conv_variants(op) if c not in choices]
    for choice in choices:
        override = {name: getattr(choice, name) for name in CHOICE_FIELDS}
        name = f"{first.label} cand {describe_tuner_choice(choice)}"
        try:
            out.append(lower(Case(name, first.text, override=override, target="sm90")))
        except Exception as error:  # noqa: BLE001 - a candidate the rules refuse is skipped, said why
            print(f"skipped {name}: {str(error).splitlines()[0]}")
    return out


def split_conv_variants(op) -> list[KernelChoice]:
    """Our split-reduction conv's tiles for a batch-1 conv it computes that the heuristic
    leaves to CUTLASS (its rule takes only 3.x grids of an eighth of the SMs or less): the
    measurements that would move that threshold."""
    from boltir.backends.cuda.codegen import splitk_conv_kernels as sk
    from boltir.dialects import op as ops
    from boltir.dialects.graph import tensor_shape

    if not isinstance(op, ops.Conv2dOp) or tensor_shape(op.input.type)[0] != 1 or sk.conv_reason(op) is not None:
        return []
    tiles = [sk.default_tile(op, SMS)] + [sk.SplitTile(m, n, split) for m, n in ((32, 64), (64, 64)) for split in (2, 4, 8)]
    return [KernelChoice(sk.FAMILY, "sm90", tile.as_tile(), (8, 8, 8)) for tile in dict.fromkeys(tiles)
            if sk.tile_reason(op, tile) is None]


def skinny_candidates(ours: Case) -> list[Case]:
    """CUTLASS's sm90 choice for a few-rows GEMM, then our kernel's other tiles."""
    out = [lower(Case(f"{ours.label} cutlass sm90", ours.text, target="sm90"))]
    for choice in candidates(ours.op, "sm90", sms=SMS).choices[1:]:
        if choice.family == skinny_gemm_kernels.FAMILY:
            tile = skinny_gemm_kernels.SkinnyTile.of(choice.tile).describe()
            out.append(lower(Case(f"{ours.label} tile {tile}", ours.text, override={"tile": choice.tile}, target="sm90",
                                  small_m="skinny")))
    return out


def conv_label(prefix: str, params: tuple) -> str:
    """A conv workload's label from its (N, H, W, C, K, R, stride[, pad]): e.g. "b1 conv3x3 N1 C512 14² K512"
    ("8x16" where the image is not square)."""
    n, h, w, c, k, r, stride, *_ = params
    return f"{prefix}conv{r}x{r}{f'/{stride}' if stride > 1 else ''} N{n} C{c} {f'{h}²' if h == w else f'{h}x{w}'} K{k}"


def workloads():
    """(label, kind, params): the reference workloads, the shapes boltir is timed against its
    PyTorch peers on."""
    gemms = [(4096, 3072, 768), (4096, 768, 3072), (32, 4096, 4096), (8192, 8192, 8192), (25088, 64, 64), (1024, 1024, 1024)]
    for m, n, k in gemms:
        yield f"linear+bias+relu {m}x{n}x{k}", "gemm", (m, n, k)
    # ViT-B/16 at batch 32 (197 tokens): QKV, output projection, FFN 1 and 2; tile counts
    # that end in partial waves
    for m, n, k in [(6304, 2304, 768), (6304, 768, 768), (6304, 3072, 768), (6304, 768, 3072)]:
        yield f"vit b32 linear+bias+relu {m}x{n}x{k}", "gemm", (m, n, k)
    # batch 1 of BERT-base / GPT-2 (128 tokens) and ViT-B/16 (197): weight-read bound
    for m, n, k in [(128, 2304, 768), (128, 768, 768), (128, 3072, 768), (128, 768, 3072), (197, 2304, 768)]:
        yield f"b1 linear+bias+relu {m}x{n}x{k}", "gemm", (m, n, k)
    # GEMMs with few rows (our skinny_gemm): batch-1 classifiers (ResNet-50, MobileNetV2),
    # VGG-16's FC layers, a BERT-like projection, and 2 to 16 rows of the ResNet classifier
    for m, n, k in [(1, 1000, 2048), (1, 1000, 1280), (1, 4096, 25088), (1, 4096, 4096), (1, 1000, 4096), (1, 2304, 768),
                    (2, 1000, 2048), (4, 1000, 2048), (8, 1000, 2048), (16, 1000, 2048)]:
        yield f"b1 skinny linear+bias+relu {m}x{n}x{k}", "gemm", (m, n, k)
    # the same layers at batch 32 (four column blocks of A's rows)
    for m, n, k in [(32, 1000, 2048), (32, 1000, 1280), (32, 4096, 25088), (32, 4096, 4096), (32, 1000, 4096)]:
        yield f"b32 skinny linear+bias+relu {m}x{n}x{k}", "gemm", (m, n, k)
    convs = [
        ("", (32, 56, 56, 64, 64, 3, 1)),
        ("", (32, 56, 56, 256, 64, 1, 1)),
        ("", (32, 28, 28, 128, 128, 3, 1)),
        ("", (32, 7, 7, 512, 512, 3, 1)),
        ("", (32, 224, 224, 3, 64, 7, 2)),
        # issue 15's memory-bound and compute-bound convs of the benchmark models
        ("mb ", (32, 56, 56, 64, 256, 1, 1)),
        ("mb ", (32, 112, 112, 16, 96, 1, 1)),
        ("mb ", (32, 224, 224, 64, 64, 3, 1)),
        # ResNet-50's stem after space-to-depth-stem: 4x4/1 on 12 channels padded to 16, no padding
        ("stem s2d ", (32, 115, 115, 16, 64, 4, 1, 0)),
        # batch-1 convs whose 3.x grid is a fraction of a wave (VGG-16's and ResNet-50's deep
        # layers): the tuner's candidates, 2.x split-k among them
        ("b1 ", (1, 14, 14, 512, 512, 3, 1)),
        ("b1 ", (1, 28, 28, 512, 512, 3, 1)),
        ("b1 ", (1, 14, 14, 256, 256, 3, 1)),
        ("b1 ", (1, 7, 7, 512, 512, 3, 1)),
        # ResNet-50's batch-1 3x3 convs whose 3.x grid (26 and 98 CTAs) is past the split rule's
        # eighth of the SMs: four of the 28² ones take 0.012-0.013 ms each in the b1 profile
        ("b1 ", (1, 28, 28, 128, 128, 3, 1)),
        ("b1 ", (1, 56, 56, 64, 64, 3, 1)),
        # ResNet-50's deep 1x1 convs: the 3.x GEMM split along C among the candidates
        ("b1 ", (1, 7, 7, 2048, 512, 1, 1)),
        ("b1 ", (1, 14, 14, 1024, 256, 1, 1)),
        ("b1 ", (1, 7, 7, 512, 2048, 1, 1)),
        # BERT b1's FFN GEMMs (128 tokens) as 1x1 convs: our split-reduction conv's cluster
        # reduction against the 3.x GEMM's (issue 16's small-M target)
        ("b1 ", (1, 8, 16, 3072, 768, 1, 1)),
        ("b1 ", (1, 8, 16, 768, 3072, 1, 1)),
        # RepVGG-A0's compute-bound 3x3s at batch 32 (23-25% of their bounds in the model):
        # 96 and 192 channels, which 64- and 128-wide tiles pad; 192- and 96-wide tiles race
        ("rv ", (32, 28, 28, 96, 96, 3, 1)),
        ("rv ", (32, 14, 14, 192, 192, 3, 1)),
    ]
    for prefix, params in convs:
        yield conv_label(prefix, params) + " +bias+relu", "conv", params
    for m, k0, n0, n1 in [(409600, 576, 64, 128), (131072, 128, 128, 128), (16384, 64, 256, 64)]:
        yield f"two linears M={m} K0={k0} N0={n0} N1={n1}", "b2b", (m, k0, n0, n1)
    # MobileNetV2's depthwise 3x3 convs at batch 32 (bias + ReLU6): ours against CUTLASS's and cuDNN
    for n, h, c, stride in [(32, 112, 32, 1), (32, 112, 96, 2), (32, 56, 144, 1), (32, 56, 144, 2), (32, 28, 192, 1),
                            (32, 14, 384, 1), (32, 14, 576, 2), (32, 7, 960, 1)]:
        yield f"mb dw3x3{'/2' if stride == 2 else ''} N{n} C{c} {h}²", "depthwise", (n, h, h, c, 3, stride)


def time_ms(fn, rotations: int = 1) -> float:
    """Median over REPEATS samples of CUDA-event time per call, each sample timing INNER
    back-to-back calls of fn(i) (i rotating over `rotations` input sets), so the launch
    queue stays full and host-side launch cost is not counted as GPU time."""
    import torch

    for i in range(WARMUP):
        fn(i % rotations)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    call = 0
    for i in range(REPEATS):
        starts[i].record()
        for _ in range(INNER):
            fn(call % rotations)
            call += 1
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / INNER for s, e in zip(starts, ends))


def empty_kernel_ms() -> float:
    """An empty kernel's time in a CUDA graph (a one-element add, `graph_time_ms`): the
    launch floor of the batch-1 GEMMs here and of bench.models' small-M target."""
    import torch

    empty = torch.zeros(1, device="cuda")
    return graph_time_ms(lambda i: empty.add_(0))


def graph_time_ms(fn, rotations: int = 1) -> float:
    """Device time per call: INNER calls of fn(i) (i rotating) captured once as a CUDA
    graph, then the median over REPEATS replays, each timed with CUDA events. This is how
    boltir's profiler times its candidates, so host-side launch cost counts on neither side.
    Under harness.PROFILE_ENV: two plain calls, NaN."""
    import torch

    if profile_launches(lambda: fn(0)):
        return float("nan")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture (cuBLAS handles, workspaces, launchers bound)
        for i in range(WARMUP):
            fn(i % rotations)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(INNER):
            fn(i % rotations)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    for i in range(REPEATS):
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / INNER for s, e in zip(starts, ends))


def sm90_ms_of(timed) -> float:
    """The sm90 build's time among a workload's timed kernels (its second entry)."""
    return timed[1][1] if len(timed) > 1 else timed[0][1]


def rotations_for(nbytes: int) -> int:
    """Copies of the operands to rotate among (the tuner's rule, `operand_sets`)."""
    return operand_sets(nbytes, L2_BYTES, most=64)


def relative(got, ref) -> float:
    import torch

    got, ref = got.float(), ref.float()
    return float(torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the workloads whose label contains this text (comma-separated: any of them)")
    parser.add_argument("--library", default="/tmp/boltir-bench/kernels.so")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop (fills the object cache)")
    parser.add_argument("--no-candidates", action="store_true", help="time the heuristic's choices only")
    args = parser.parse_args()
    selected = [w for w in workloads() if not args.only or any(text in w[0] for text in args.only.split(","))]

    # Lower every workload (and each b2b's unfused halves) first: one library for all.
    # gemm and conv plans: [sm80 heuristic, sm90 heuristic, *3.x candidates]
    plans = []
    for label, kind, p in selected:
        if kind == "gemm":
            m, n, k = p
            text = gemm_text(m, n, k)
            if "skinny" in label:  # [CUTLASS 2.x, ours, CUTLASS's sm90 choice, our other tiles]
                ours = lower(Case(label, text, target="sm90", small_m="skinny"))
                plans.append((label, kind, p, [lower(Case(label + " sm80", text)), ours, *skinny_candidates(ours)]))
                continue
            candidates = SMALL_M_CANDIDATES if m <= 256 else PARTIAL_WAVE_CANDIDATES if label.startswith("vit ") else GEMM_CANDIDATES
            plans.append((label, kind, p, [lower(Case(label, text)), lower(Case(label + " sm90", text, target="sm90")),
                                           *([] if args.no_candidates else candidate_cases(label, text, candidates)),
                                           *([] if args.no_candidates or m > 256 else wgsplit_cases(label, text))]))
        elif kind == "conv":
            n, h, w, c, k, r, stride, *padding = p
            # pad-alignment pads C = 3 to 4 on sm80 (fixed-channels iterator); ours reads
            # the padded input, the peers the original. (C = 4 stays a 2.x kernel on sm90.)
            c_ours = 4 if c == 3 else c
            text = conv_text(n, h, w, c_ours, k, r, r, stride=stride, pad=padding[0] if padding else None)
            ours = lower(Case(label + " sm90", text, target="sm90"))
            if args.no_candidates or c_ours % 8:
                candidates = []
            elif label.startswith("b1 "):
                candidates = tuner_candidates(ours)
            else:
                candidates = candidate_cases(label, text, WIDE_CONV_CANDIDATES if label.startswith("rv ") else CONV_CANDIDATES)
            plans.append((label, kind, p, [lower(Case(label, text)), ours, *candidates]))
        elif kind == "depthwise":
            # [CUTLASS's direct conv, ours (the heuristic's tile), our other tiles]
            n, h, w, c, r, stride = p
            text = conv_text(n, h, w, c, c, r, r, stride=stride, epilogue="bias, clip(0.0, 6.0)", depthwise=True)
            ours = lower(Case(label, text, target="sm90", depthwise="direct"))
            plans.append((label, kind, p, [lower(Case(label + " cutlass", text, target="sm90")), ours,
                                           *([] if args.no_candidates else direct_candidates(ours))]))
        else:
            m, k0, n0, n1 = p
            fused = lower(Case(label, b2b_gemm_text(m, k0, n0, n1)))
            first = lower(Case(label + " first", gemm_text(m, n0, k0)))
            second = lower(Case(label + " second", gemm_text(m, n1, n0)))
            plans.append((label, kind, p, [fused, first, second]))
    all_cases = [case for plan in plans for case in plan[3]]
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(all_cases, args.library)
    print(f"built {len(all_cases)} kernels' library in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 0

    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.benchmark = True

    gen = torch.Generator(device="cuda").manual_seed(0)

    def rand(*shape, scale=1.0):
        return ((torch.rand(*shape, device="cuda", generator=gen) * 2 - 1) * scale).half()

    rows = []
    # Batch-1 GEMMs are timed as graph replays on every side (a few µs each: host launch
    # cost would swamp them), against max(bytes / bandwidth, an empty kernel in a graph).
    empty_ms = empty_kernel_ms()
    for label, kind, p, cases in plans:
        # graph replays for the batch-1 rows (a few µs each) and ViT's GEMMs (a 3.x launcher's
        # host work, its initialize, would otherwise be timed with them)
        timer = graph_time_ms if label.startswith(("b1 ", "vit ")) else time_ms
        if kind == "gemm":
            m, n, k = p
            nbytes = 2 * (m * k + n * k + m * n)
            rot = rotations_for(nbytes)
            xs = [rand(m, k) for _ in range(rot)]
            b = rand(n)
            # In a model every layer has its own weight, read from DRAM: the batch-1 rows
            # rotate the weight with the input (the others keep one weight, as before).
            ws = [rand(n, k, scale=(3 / k) ** 0.5) for _ in range(rot if label.startswith("b1 ") else 1)]

            def core(x, w, b=b):
                return F.relu(F.linear(x, w, b))
            inputs_of = [(x, ws[i % len(ws)]) for i, x in enumerate(xs)]

            def matmul_only(i, xs=xs, ws=ws):
                return F.linear(xs[i], ws[i % len(ws)])

            variants = [[BoundKernel(library, case, {"x": x, "w": ws[i % len(ws)], "bias": b}) for i, x in enumerate(xs)]
                        for case in cases]
            ref = core(*inputs_of[0])
            flops = 2 * m * n * k
        elif kind == "conv":
            n, h, w_, c, k, r, stride, *padding = p
            pad = padding[0] if padding else r // 2
            c_ours = 4 if c == 3 else c
            nbytes = 2 * (n * h * w_ * c + n * h * w_ * k // (stride * stride) + k * r * r * c)
            rot = rotations_for(nbytes)
            xs = [rand(n, h, w_, c_ours) for _ in range(rot)]
            weight = rand(k, r, r, c_ours, scale=(3 / (c * r * r)) ** 0.5)
            if c_ours != c:
                for x in xs:
                    x[..., c:] = 0
                weight[..., c:] = 0
            b = rand(k)
            # The peers take NCHW-shaped views of NHWC (channels_last) memory.
            xs_cl = [x[..., :c].permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last) for x in xs]
            w_cl = weight[..., :c].permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)

            def core(x, w_cl=w_cl, b=b, stride=stride, pad=pad):
                return F.relu(F.conv2d(x, w_cl, b, stride=stride, padding=pad))
            inputs_of = [(x,) for x in xs_cl]

            matmul_only = None
            variants = [[BoundKernel(library, case, {"x": x, "w": weight, "bias": b}) for x in xs] for case in cases]
            ref = core(*inputs_of[0]).permute(0, 2, 3, 1)
            p_out = (h + 2 * pad - r) // stride + 1
            flops = 2 * n * p_out * p_out * k * c * r * r
        elif kind == "depthwise":
            n, h, w_, c, r, stride = p
            pad = r // 2
            p_out = (h + 2 * pad - r) // stride + 1
            nbytes = 2 * (n * h * w_ * c + n * p_out * p_out * c + c * r * r + c)
            rot = rotations_for(nbytes)
            xs = [rand(n, h, w_, c) for _ in range(rot)]
            weight, b = rand(c, r, r, 1, scale=(3 / (r * r)) ** 0.5), rand(c)
            xs_cl = [x.permute(0, 3, 1, 2) for x in xs]  # NCHW views of NHWC (channels_last) memory
            w_cl = weight.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)

            def core(x, w_cl=w_cl, b=b, stride=stride, pad=pad, groups=c):
                return F.conv2d(x, w_cl, b, stride=stride, padding=pad, groups=groups).clamp(0.0, 6.0)
            inputs_of = [(x,) for x in xs_cl]

            matmul_only = None
            variants = [[BoundKernel(library, case, {"x": x, "w": weight, "bias": b}) for x in xs] for case in cases]
            ref = core(*inputs_of[0]).permute(0, 2, 3, 1)
            flops = 2 * n * p_out * p_out * c * r * r
        else:
            m, k0, n0, n1 = p
            nbytes = 2 * (m * k0 + m * n1)
            rot = rotations_for(nbytes)
            xs = [rand(m, k0) for _ in range(rot)]
            w0, b0 = rand(n0, k0, scale=(3 / k0) ** 0.5), rand(n0)
            w1, b1 = rand(n1, n0, scale=(3 / n0) ** 0.5), rand(n1)

            def core(x, w0=w0, b0=b0, w1=w1, b1=b1):
                return F.relu(F.linear(F.relu(F.linear(x, w0, b0)), w1, b1))
            inputs_of = [(x,) for x in xs]

            matmul_only = None
            variants = [[BoundKernel(library, cases[0], {"x": x, "w0": w0, "w1": w1, "bias0": b0, "bias1": b1}) for x in xs]]
            ref = core(*inputs_of[0])
            flops = 2 * m * (k0 * n0 + n0 * n1)
            # boltir unfused: the first GEMM writes h, the second reads it.
            firsts = [BoundKernel(library, cases[1], {"x": x, "w": w0, "bias": b0}) for x in xs]
            seconds = [BoundKernel(library, cases[2], {"x": f.output, "w": w1, "bias": b1}) for f in firsts]

        def eager(i, core=core, inputs_of=inputs_of):
            return core(*inputs_of[i])

        timed = []  # (case, ms, error) of every boltir kernel of the workload
        for case, bound in zip(cases, variants):
            try:
                bound[0]()
                torch.cuda.synchronize()
                timed.append((case, timer(lambda i, bound=bound: bound[i](), rot), relative(bound[0].output, ref)))
            except Exception as failure:  # noqa: BLE001 - a failing candidate is reported, not fatal
                print(f"{case.label}: {str(failure).splitlines()[0]}")
                timed.append((case, float("nan"), float("nan")))
            print(f"  {describe_choice(case):40s} {timed[-1][1]:.4f} ms  err {timed[-1][2]:.1e}", flush=True)
        eager_ms = timer(eager, rot)
        torch._dynamo.reset()  # one compiled function per workload: no recompile limit
        compiled_core = torch.compile(core)

        def compiled(i, compiled_core=compiled_core, inputs_of=inputs_of):
            return compiled_core(*inputs_of[i])
        try:
            compile_ms = timer(compiled, rot)
        except Exception as failure:  # noqa: BLE001 - report, keep measuring the rest
            print(f"torch.compile failed on {label}: {failure}")
            compile_ms = float("nan")
        extra = ""
        if kind == "gemm":
            extra = f"matmul alone {timer(matmul_only, rot):.4f}"
            if label.startswith("b1 "):
                floor_ms = max(nbytes / 4.265e12 * 1e3, empty_ms)
                extra += f"; floor {floor_ms:.4f} (bytes {nbytes / 4.265e9:.4f}, empty kernel {empty_ms:.4f}); ours/floor {sm90_ms_of(timed) / floor_ms:.1f}"
            if "skinny" in label:  # timed[2]: CUTLASS's sm90 choice
                linear_ms = timer(matmul_only, rot)
                extra += (f"; TB/s ours {nbytes / sm90_ms_of(timed) / 1e9:.2f}, cutlass sm90 {timed[2][1]:.4f} ms "
                          f"{nbytes / timed[2][1] / 1e9:.2f}, F.linear {linear_ms:.4f} ms {nbytes / linear_ms / 1e9:.2f}")
        if kind == "b2b":
            def unfused(i, firsts=firsts, seconds=seconds):
                firsts[i]()
                seconds[i]()
            extra = f"boltir unfused {time_ms(unfused, rot):.4f}"
        bound_ms = get_target("sm90").bound_seconds(flops, nbytes) * 1e3
        extra += f"{'; ' if extra else ''}bound {bound_ms:.4f} (sm90 at {100 * bound_ms / sm90_ms_of(timed):.0f}%)"
        if kind == "depthwise":  # effective bandwidth: input, filter, bias and output once
            best_ms = min([t[1] for t in timed[1:] if t[1] == t[1] and t[2] < 1e-2], default=float("nan"))
            extra += (f"; {nbytes / 1e6:.1f} MB; TB/s cutlass {nbytes / timed[0][1] / 1e9:.2f}, ours {nbytes / sm90_ms_of(timed) / 1e9:.2f}, "
                      f"our best {nbytes / best_ms / 1e9:.2f}, cudnn {nbytes / eager_ms / 1e9:.2f}")
        sm80_case, sm80_ms, sm80_error = timed[0]
        sm90_case, sm90_ms, sm90_error = timed[1] if len(timed) > 1 else timed[0]
        measured = [t for t in timed[2:] if t[1] == t[1] and t[2] < 1e-2]
        best = min(measured, key=lambda t: t[1]) if measured else None
        best_text = f"{describe_choice(best[0])} {best[1]:.4f}" if best else "-"
        rows.append((label, describe_choice(sm80_case), f"{sm80_ms:.4f}", describe_choice(sm90_case), f"{sm90_ms:.4f}",
                     f"{eager_ms:.4f}", f"{compile_ms:.4f}", f"{eager_ms / sm90_ms:.2f}x", f"{flops / sm90_ms / 1e9:.0f}",
                     f"{max(sm80_error, sm90_error):.1e}", best_text, extra))
        print("row:", " | ".join(map(str, rows[-1])), flush=True)
        torch.cuda.empty_cache()

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; fp16, f32 accumulation; "
          f"median of {REPEATS} CUDA-event samples of {INNER} back-to-back calls after {WARMUP} warm-ups; times in ms")
    header = ("workload", "sm80 build (2.x)", "ms", "sm90 build (heuristic)", "ms", "eager", "compile", "eager/sm90", "sm90 TFLOP/s",
              "rel err vs eager", "best 3.x candidate ms", "notes")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
