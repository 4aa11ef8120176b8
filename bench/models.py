"""Whole models on the GPU: boltir (heuristic choice, f16; `--builds sm90,sm90-2x` compares
the 3.x build with one kept to CUTLASS 2.x) against
PyTorch eager and torch.compile (default and reduce-overhead), channels_last fp16, in one
run. Checks each compiled model by `boltir.accuracy`'s criterion: against PyTorch fp32 on
the same input, ‖Δ‖/‖ref‖ within max(1e-2, 1.1 × PyTorch's own fp16 run) (f16 arithmetic
alone moves a deep random network's output by a few percent), and within 5e-3 of the
op-level interpreter at f16 on the module the build compiled (numpy, on the CPU). Prints each model's slowest launches
(`CompiledModel.profile`: each against its roofline bound; boltir/tools/roofline_plot.py draws them
into $OUT/<model>_b<batch>_roofline.png) and one table last.

The roofline columns need no GPU: "bounds ms" is the sum of the launches' roofline bounds
(the FLOPs and bytes `boltc --roofline` counts, in the manifest, over the target's peaks),
"bounds/graph" that sum over the measured graph-replay time, and "model eff" the model's
FLOPs (2 × the multiply-adds of its ONNX graph, tests/support/onnx_macs.py) over graph
time × the target's peak f16 FLOP/s.

    source bench/setup_gpu.sh && python3 -m bench.models [--models resnet50,bert] [--batches 1,32]
    python3 -m bench.models --compile-only    # no GPU: cold/warm compile times, fills the object cache

Models are exported to ONNX with random weights, conditioned like trained ones
(`condition`; torchvision, timm, transformers on the GPU machine); RepVGG-A0 is exported
in its train-time (three-branch) form and reparameterized by the pipeline. Timing: CUDA events, median of 50 after 10 warm-ups;
boltir is timed with plain launches and with CUDA-graph replay.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from pathlib import Path

from bench.tables import print_table
from boltir.backends.cuda.codegen.cutlass_sm90 import SMALL_M_ROWS
from boltir.tools.roofline_plot import plot_launches
from boltir.runtime import launch_bounds, summed_times
from boltir.target import get_target
from tests.support.onnx_macs import multiply_adds

MODELS = ("resnet50", "mobilenet_v2", "vgg16", "repvgg_a0", "bert")
REPEATS, WARMUP = 50, 10


def make_model(name: str):
    """The benchmark model `name` with random weights (seeded), in eval mode; a one-line
    SystemExit where its package (transformers, timm, torchvision) is not installed."""
    try:
        return _make_model(name)
    except ImportError as error:
        raise SystemExit(f"error: the {name} model needs the Python package '{error.name or error}', which is not installed here "
                         "(the device host has it)") from error


def _make_model(name: str):
    import torch

    torch.manual_seed(0)
    if name == "bert":
        from transformers import BertConfig, BertModel

        model = BertModel(BertConfig(attn_implementation="eager"), add_pooling_layer=False)
        return model.eval()
    if name == "repvgg_a0":
        import timm

        return condition(timm.create_model("repvgg_a0", pretrained=False))
    import torchvision

    return condition(getattr(torchvision.models, name)(weights=None))


RESIDUAL_SCALE = 0.25
"""The factor on the last BatchNorm's scale of every residual branch (`damp_residual_branches`)."""


def condition(model, side: int = 224):
    """A random-weight model conditioned like a trained one: its residual branches damped,
    then its BatchNorm statistics calibrated. `side`: the calibration images' side."""
    damp_residual_branches(model)
    return calibrate_batchnorm(model, side=side)


def damp_residual_branches(model, scale: float = RESIDUAL_SCALE) -> int:
    """Multiplies the scale (gamma) of the BatchNorm that ends each residual branch by
    `scale`, and returns how many it found.

    Why: with random weights and calibrated statistics, every residual block adds a branch
    as large as its trunk and the network is chaotic: it amplifies f16 rounding several-fold
    per stage, until two equally valid f16 runs differ by more than the criterion's
    interpreter bar, and that half of the check can no longer tell a kernel bug from noise.
    Trained networks are not chaotic (bench/public_onnx.py's files pass that bar easily).
    Damped branches, as zero-init-residual training starts them but not zero so that every
    kernel still computes something, give a random model that conditioning; bench/RESULTS.md
    has the measurements (entry "the test models conditioned like trained ones").

    A branch is found in the traced graph (torch.fx): of an addition's two operands, the one
    with more operations that the other does not share (none where both have as many),
    followed back through dropout-like steps to a BatchNorm. Modules that do not trace are
    searched child by child.
    """
    import operator

    import torch
    import torch.fx

    passthrough_functions = {"dropout", "stochastic_depth", "identity"}
    passthrough_modules = (torch.nn.Dropout, torch.nn.Identity)

    def module_of(root, node):
        return root.get_submodule(node.target) if node.op == "call_module" else None

    def ending_norm(root, node):
        while isinstance(node, torch.fx.Node):
            module = module_of(root, node)
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                return module
            name = getattr(node.target, "__name__", str(node.target))
            if not (isinstance(module, passthrough_modules) or type(module).__name__ == "StochasticDepth"
                    or (node.op == "call_function" and name in passthrough_functions)):
                return None
            node = node.args[0] if node.args else None
        return None

    def damp(root) -> int:
        try:
            graph = torch.fx.symbolic_trace(root).graph
        except Exception:  # data-dependent control flow: search the children
            return sum(damp(child) for child in root.children())
        ancestors: dict = {}
        for node in graph.nodes:
            ancestors[node] = {node}.union(*(ancestors[i] for i in node.all_input_nodes))
        found = 0
        for node in graph.nodes:
            is_add = (node.op == "call_function" and node.target in (operator.add, operator.iadd, torch.add)) or (
                node.op == "call_method" and node.target in ("add", "add_"))
            operands = [a for a in node.args[:2] if isinstance(a, torch.fx.Node)]
            if not is_add or len(operands) != 2:
                continue
            left, right = operands
            own = [len(ancestors[left] - ancestors[right]), len(ancestors[right] - ancestors[left])]
            if own[0] == own[1]:  # two parallel branches (RepVGG's train form), not a residual
                continue
            norm = ending_norm(root, operands[own[1] > own[0]])
            if norm is not None and norm.affine:
                with torch.no_grad():
                    norm.weight.mul_(scale)
                found += 1
        return found

    return damp(model)


def calibrate_batchnorm(model, batches: int = 4, side: int = 224):
    """Sets every BatchNorm's running statistics from a few random batches, as training
    would. With the freshly initialized statistics (mean 0, variance 1) MobileNetV2's
    activations shrink by about 10x per block, to ~1e-6 at the classifier: below f16's
    normal range, so any f16 run (PyTorch's too) returns zeros. Calibrated, every layer
    sees normalized activations, as in a trained network. `side`: the images' height and
    width."""
    import torch

    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model.eval()
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the calibration batches
    model.train()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(8, 3, side, side, generator=generator))
    return model.eval()


def example_inputs(name: str, batch: int):
    import torch

    if name == "bert":
        ids = torch.randint(0, 30000, (batch, 128))
        # token_type_ids explicit (the default reads a buffer through GatherElements); no
        # attention mask, i.e. every token valid (transformers 5 builds a given mask with
        # comparison ops the importer does not have yet)
        return {"input_ids": ids, "token_type_ids": torch.zeros(batch, 128, dtype=torch.int64)}
    return {"image": torch.randn(batch, 3, 224, 224)}


def export(name: str, model, inputs: dict, path: Path) -> None:
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self, inner, names):
            super().__init__()
            self.inner, self.names = inner, names

        def forward(self, *args):
            out = self.inner(**dict(zip(self.names, args))) if name == "bert" else self.inner(*args)
            return out.last_hidden_state if hasattr(out, "last_hidden_state") else out

    # The exporter restores the wrapper's training flag afterwards, recursively: a wrapper
    # left in training mode would put the model (BatchNorm, Dropout) in training mode.
    torch.onnx.export(Wrapper(model, list(inputs)).eval(), tuple(inputs.values()), str(path), input_names=list(inputs), output_names=["output"],
                      opset_version=17, dynamo=False)
    model.eval()


def time_ms(fn) -> float:
    import torch

    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
    for i in range(REPEATS):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


BUILDS = {"sm80": ("sm80", 2), "sm90": ("sm90", 3), "sm90-2x": ("sm90", 2), "sm90-tuned": ("sm90", 3),
          "sm90-nosplitk": ("sm90", 3), "sm90-2cta": ("sm90", 3), "sm90-nohalo": ("sm90", 3), "sm90-halo16": ("sm90", 3),
          "sm90-heuristic": ("sm90", 3), "sm90-unfusedstem": ("sm90", 3), "sm90-dwpw": ("sm90", 3),
          "sm90-block": ("sm90", 3), "sm90-nodwpw": ("sm90", 3),
          "sm90-cutlassfc": ("sm90", 3), "sm90-halo1": ("sm90", 3), "sm90-cutlasssplit": ("sm90", 3),
          "sm90-alignedhalo": ("sm90", 3), "sm90-power2conv": ("sm90", 3), "sm90-tmahalo": ("sm90", 3),
          "sm90-halo5": ("sm90", 3), "sm90-cpasynchalo": ("sm90", 3)}
"""What --builds names: an A100-targeted 2.x build, the sm90 build (3.x where it runs),
an sm90 build kept to 2.x kernels (for comparing the generations), an sm90 build whose
kernels come from the tuning database $BOLTIR_TUNING_DB (boltc --no-tune), and the sm90
build with select-kernels' `few_pixels=cutlass` (CUTLASS's 3.x conv where our
split-reduction conv would run batch 1's deep layers), `conv_ctas=2` (two 3.x conv CTAs
per multiprocessor), `narrow_convs=cutlass` (CUTLASS's convs where our wgmma halo conv
would run 8-64-channel convs; `sm90-alignedhalo`, `narrow_convs=halo-aligned`: CUTLASS's where only
its general form would) or, `sm90-cutlassfc`, `small_m=cutlass` (CUTLASS's
GEMMs where our few-rows GEMM would run classifiers and FC layers), or, `sm90-halo1`,
`halo_mode=1` (the halo conv's staged rows stored two bytes at a time, as before mode 4
became the default), or, `sm90-cutlasssplit`, `split_gemms=cutlass` (CUTLASS's narrow tiles where
our GEMM with K split among a cluster's warp groups would run GEMMs of at most 256 rows whose K
is at least 4 N), or, `sm90-power2conv`, `conv_columns=power2` (the 3.x convs' tiles 64 or 128
wide where the default's cover 96 or 192 output channels), or, `sm90-tmahalo`, `halo_loads=tma` (the
halo conv's patches by TMA wherever its tile takes them), or, `sm90-cpasynchalo`, `halo_loads=cp_async`
(every thread's cp.async, as before TMA became the default on padded channels), or, `sm90-halo5`,
`halo_mode=5` (its filter in registers and stmatrix stores); `sm90-halo16` pads an
image's 3 channels to 16 (pad-alignment's `stem_channels`), so that VGG-16's first conv is the halo conv's too;
`sm90-unfusedstem` leaves out fuse-conv-space-to-depth (the blocked stem's space-to-depth
kernel and its halo conv as two launches, as before the fusion); the default pipeline fuses
MobileNet's inverted residuals where one wave of our depthwise_pointwise kernel computes them
(fuse-depthwise-pointwise{expand=true sms=...}): `sm90-nodwpw` leaves that out, `sm90-dwpw`
fuses each depthwise conv and the 1x1 conv after it whatever the grid, `sm90-block` with
`expand=true` (the expanding 1x1 conv before them joins too: the whole inverted residual in
one launch).
The others are built as a user's default build is (an empty database): on a GPU that
boltir ships tuning data for (the H200), that data's records, where they raced the
heuristic's choice, and the heuristic's choice elsewhere; `sm90-heuristic` takes the
heuristic's choice for every op (`select-kernels{selector=heuristic}`), the baseline a
tuned build must not lose to."""
SELECT_OPTIONS = {"sm90-nosplitk": "few_pixels=cutlass", "sm90-2cta": "conv_ctas=2", "sm90-nohalo": "narrow_convs=cutlass",
                  "sm90-cutlassfc": "small_m=cutlass", "sm90-halo1": "halo_mode=1", "sm90-cutlasssplit": "split_gemms=cutlass",
                  "sm90-alignedhalo": "narrow_convs=halo-aligned", "sm90-power2conv": "conv_columns=power2",
                  "sm90-tmahalo": "halo_loads=tma", "sm90-halo5": "halo_mode=5", "sm90-cpasynchalo": "halo_loads=cp_async"}
"""select-kernels options a build adds to the default pipeline."""
PAD_OPTIONS = {"sm90-halo16": "stem_channels=16"}
"""pad-alignment options a build adds to it."""
LEFT_OUT = {"sm90-unfusedstem": "fuse-conv-space-to-depth", "sm90-nodwpw": "fuse-depthwise-pointwise"}
"""A pass a build leaves out of the default pipeline (by name, whatever its options)."""
ADDED = {"sm90-dwpw": ("fuse-elementwise", "fuse-depthwise-pointwise"),
         "sm90-block": ("fuse-elementwise", "fuse-depthwise-pointwise{expand=true}")}
"""A pass a build adds to the default pipeline: (the pass it follows, the pass). The fusions
go before select-kernels, which then chooses the fused op's tile (the tuning data's too)."""
HEURISTIC_DB = "/nonexistent/boltir-heuristic-builds.sqlite"


def build_pipeline(build: str, tuning_db: str) -> str | None:
    """The pipeline of a build with select-kernels or pad-alignment options (SELECT_OPTIONS,
    PAD_OPTIONS), a pass left out (LEFT_OUT) or added (ADDED); None: the default one."""
    if (build not in SELECT_OPTIONS and build not in PAD_OPTIONS and build not in LEFT_OUT and build not in ADDED
            and build != "sm90-heuristic"):
        return None
    import boltir.compiler
    import boltir.pipelines

    arch, cutlass = BUILDS[build]
    selector = "heuristic" if build == "sm90-heuristic" else "db"
    pipeline = boltir.compiler.full_pipeline(dtype="f16", arch=arch, cutlass=cutlass, selector=selector, tuning_db=tuning_db)
    if build in SELECT_OPTIONS:
        pipeline = pipeline.replace("select-kernels{", "select-kernels{" + SELECT_OPTIONS[build] + " ")
    if build in PAD_OPTIONS:
        pipeline = pipeline.replace("pad-alignment{", "pad-alignment{" + PAD_OPTIONS[build] + " ")
    if build in LEFT_OUT:
        pipeline = boltir.pipelines.without_passes(pipeline, [LEFT_OUT[build]])
    if build in ADDED:
        after, added = ADDED[build]
        pipeline = pipeline.replace(f",{after},", f",{after},{added},", 1)
        assert added in pipeline, f"{after} is not in the pipeline"
    return pipeline


def compiled_model(name: str, batch: int, model, work: Path, build: str = "sm90", builds: int = 2):
    """Exports and compiles one model; returns (the compile result, its inputs, cold and
    warm compile seconds; `builds` = 1: one compile, both times the same). Cold means every
    object not already in the cache is compiled."""
    import boltir.compiler

    arch, cutlass = BUILDS[build]
    inputs = example_inputs(name, batch)
    onnx_path = work / f"{name}_b{batch}.onnx"
    if not onnx_path.exists():
        export(name, model, inputs, onnx_path)
    times = []
    for _ in range(builds):
        start = time.monotonic()
        tuning_db = os.environ.get("BOLTIR_TUNING_DB", "") if build.endswith("-tuned") else HEURISTIC_DB
        result = boltir.compiler.compile(onnx_path, work / f"{name}_b{batch}_{build}", arch=arch, dtype="f16", progress=False,
                                         cutlass=cutlass, tuning_db=tuning_db, pipeline=build_pipeline(build, tuning_db))
        times.append(time.monotonic() - start)
    return result, inputs, times[0], times[-1]


def roofline_figures(result, onnx_path: Path) -> tuple[float, float, float]:
    """(sum of the launches' bounds in ms, model FLOPs, the target's peak f16 FLOP/s): no GPU."""
    manifest = result.manifest
    bounds_ms = sum(bound for _, _, bound in launch_bounds(manifest) if bound is not None)
    try:
        model_flops = 2.0 * multiply_adds(onnx_path)
    except KeyError as missing:  # a product whose operand shape ONNX's inference left open
        model_flops = float(sum(launch.get("flops", 0) for launch in manifest["launches"]))
        print(f"ONNX inferred no shape for {missing} in {onnx_path.name}: the model's FLOPs are its launches' "
              f"({model_flops / 1e9:.2f} GFLOP, padding included)", flush=True)
    return bounds_ms, model_flops, get_target(manifest["arch"]).peak_flops("f16")


def relative_error(got, reference) -> float:
    """`boltir.accuracy.relative_l2` of two torch tensors."""
    from boltir.accuracy import relative_l2

    return relative_l2(got.float().cpu().numpy(), reference.float().cpu().numpy())


def interpreter_output(onnx_path: Path, build: str, inputs: dict, wide: bool = False):
    """The op-level interpreter's output at f16 on the module `build` compiles: the
    criterion's same-precision reference; with `wide`, its output computing in f64
    (`boltir.interp.wide_arithmetic`), from which the criterion measures the model's own
    rounding noise."""
    from bench.interpreter_reference import lowered_module, run_interpreter

    module = lowered_module(onnx_path, BUILDS[build][0])
    start = time.monotonic()
    (out,) = run_interpreter(module, inputs, wide=wide)
    arithmetic = "f64" if wide else "f32"
    print(f"interpreter at f16 on {onnx_path.name}, in {arithmetic} arithmetic: {time.monotonic() - start:.0f} s", flush=True)
    return out


def forward(name: str, model, inputs: dict):
    out = model(**inputs) if name == "bert" else model(*inputs.values())
    return out.last_hidden_state if hasattr(out, "last_hidden_state") else out


def replay_ms(compiled, device_inputs: dict) -> float:
    """CUDA-graph replay time of a loaded model on these inputs."""
    import torch

    compiled.set_inputs(**device_inputs)
    side = torch.cuda.Stream()  # the legacy default stream cannot be captured
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        compiled.capture(side.cuda_stream)
        ms = time_ms(lambda: compiled.replay(side.cuda_stream))
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return ms


def other_build(name: str, batch: int, model, work: Path, build: str, device_inputs: dict, reference):
    """Another build of the model, loaded: (the loaded model, its error against fp32), or why
    it failed, one line (the main build's row stands either way)."""
    from boltir.runtime import load

    try:
        result, _, _, _ = compiled_model(name, batch, model, work, build, builds=1)
        compiled = load(result.directory)
        (out,) = compiled(**device_inputs)
        return compiled, relative_error(out, reference)
    except Exception as failure:  # noqa: BLE001 - reported in the row
        import traceback

        traceback.print_exc()
        return f"{build} FAILED: {str(failure).splitlines()[0][:60]}"


TURNS = 5
"""Rounds of `replay_in_turns`."""


def replay_in_turns(loaded: list, device_inputs: dict, turns: int = TURNS) -> list[float]:
    """Each loaded model's graph-replay time, measured in turns (A, B, C, A, B, C, ...) and
    taken as the median of its turns, so that what drifts during a run (clocks, what the L2
    holds) weighs on every build alike: timed one after the other, the second of two BERT b1
    builds read faster whichever it was (bench/RESULTS.md)."""
    import torch

    side = torch.cuda.Stream()  # the legacy default stream cannot be captured
    side.wait_stream(torch.cuda.current_stream())
    times: list[list[float]] = [[] for _ in loaded]
    with torch.cuda.stream(side):
        for compiled in loaded:
            compiled.set_inputs(**device_inputs)
            compiled.capture(side.cuda_stream)
        for _ in range(turns):
            for own, compiled in zip(times, loaded):
                own.append(time_ms(lambda compiled=compiled: compiled.replay(side.cuda_stream)))
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return [statistics.median(own) for own in times]


def cells_in_turns(main, builds: list[str], others: list, device_inputs: dict) -> list[str]:
    """The "other builds" cells of `others` (`other_build`'s results, in `builds`' order),
    their loaded models timed in turns with `main`."""
    loaded = [other[0] for other in others if not isinstance(other, str)]
    if not loaded:
        return list(others)
    main_turns, *turns = replay_in_turns([main, *loaded], device_inputs)
    return other_build_cells(builds, others, main_turns, turns)


def other_build_cells(builds: list[str], others: list, main_turns: float, turns: list[float]) -> list[str]:
    """The "other builds" cells: each build's graph time in turns with the main build, its
    ratio to the main build's time in the same turns, and its error; or why it failed."""
    cells, loaded = [], iter(zip(turns, [o for o in others if not isinstance(o, str)]))
    for build, other in zip(builds, others):
        if isinstance(other, str):
            cells.append(other)
            continue
        ms, (_, error) = next(loaded)
        cells.append(f"{build} {ms:.3f} ({ms / main_turns:.2f}x main in turns; err {error:.1e})")
    return cells


FLOOR_TBPS, FLOOR_BYTES, FLOOR_CHANNELS = 2.5, 16e6, 96
"""Issue 15's floor for memory-bound convs: those with at most 96 channels on one side, or
depthwise, that move 16 MB or more, at 2.5 TB/s or more."""


def terabytes_per_second(nbytes: int, ms: float | None) -> float:
    """TB/s over `nbytes` in `ms`; NaN where the time was not measured."""
    return nbytes / (ms * 1e-3) / 1e12 if ms and ms > 0 else float("nan")


def floor_verdict(in_model: float, marginal: float, floor: float) -> str:
    """"met" where the profile's in-model TB/s meets the floor; "met (marginal)" where only
    the launch's cost to a graph replay does (the profile's events serialize what
    programmatic dependent launch overlaps, and a launch whose operands stay in the L2 costs
    the replay less than its bytes from DRAM); else "MISSED". The marginal cost leans low:
    without the launch, the one after it reads its input from DRAM rather than the L2, so
    "met (marginal)" is the weaker verdict."""
    if in_model >= floor:
        return "met"
    return "met (marginal)" if marginal >= floor else "MISSED"


def conv_floor_rows(launches, target) -> list[tuple]:
    """The profile's launches that issue 15's memory-bound conv floor covers: convs (the
    manifest's `conv` channels) with FLOOR_CHANNELS or fewer on one side or depthwise,
    moving FLOOR_BYTES or more, whose roofline bound is their bytes; each with its TB/s in
    the model, alone and over its marginal cost to the graph replay, and whether the
    in-model or the marginal figure meets FLOOR_TBPS (`floor_verdict`)."""
    rows = []
    for launch in launches:
        conv = launch.conv
        if conv is None or launch.bytes is None or launch.bytes < FLOOR_BYTES:
            continue
        if not (conv["depthwise"] or min(conv["in"], conv["out"]) <= FLOOR_CHANNELS):
            continue
        if launch.flops / target.peak_flops("f16") > launch.bytes / target.dram_bytes_per_second:
            continue  # compute-bound: the TFLOP/s floors judge it
        tbps, alone, marginal = (terabytes_per_second(launch.bytes, ms)
                                 for ms in (launch.ms, launch.alone_ms, launch.marginal_ms))
        shape = "depthwise " + str(conv["in"]) if conv["depthwise"] else f"{conv['in']} -> {conv['out']}"
        rows.append((launch.index, launch.kernel, shape, f"{launch.bytes / 1e6:.1f}", f"{launch.ms:.4f}", f"{tbps:.2f}",
                     f"{alone:.2f}", f"{marginal:.2f}", floor_verdict(tbps, marginal, FLOOR_TBPS)))
    return rows


def print_conv_floor(name: str, launches, target) -> None:
    rows = conv_floor_rows(launches, target)
    if rows:
        print(f"issue 15's memory-bound convs in {name} (<= {FLOOR_CHANNELS} channels on a side or depthwise, "
              f">= {FLOOR_BYTES / 1e6:.0f} MB, TB/s over the bytes moved once; floor {FLOOR_TBPS} in the model or by "
              "marginal cost):")
        print_table(("#", "kernel", "channels", "MB", "ms", "TB/s", "alone TB/s", "marginal TB/s", "floor"), rows)


STEM_FLOOR_MS = 0.05
"""Issue 15's floor for ResNet-50 b32's stem with its input kernels."""


def stem_row(launches) -> tuple | None:
    """The stem with its input kernels (every launch up to and including the first conv):
    launches, kernels, and ms in the model, alone and summed marginal costs; None without a conv."""
    first = next((i for i, launch in enumerate(launches) if launch.conv is not None), None)
    if first is None:
        return None
    stem = launches[: first + 1]

    def summed(field: str) -> str:
        total = summed_times(stem, field)
        return "-" if total is None else f"{total:.4f}"

    return (len(stem), " + ".join(launch.kernel.split()[0] for launch in stem), summed("ms"), summed("alone_ms"),
            summed("marginal_ms"))


def print_stem(name: str, launches) -> None:
    row = stem_row(launches)
    if row is not None:
        print(f"the stem of {name} with its input kernels (issue 15's floor for ResNet-50 b32: {STEM_FLOOR_MS} ms):")
        print_table(("launches", "kernels", "ms", "alone ms", "marginal ms"), [row])


DATA_FLOOR_TBPS = 2.5
"""Issue 16's floor for softmax, LayerNorm and the other data kernels at batch 32: 2.5 TB/s
or more over the bytes they move once (or fused away)."""


def data_floor_families() -> frozenset[str]:
    from boltir.backends.cuda.codegen import compute_kernels, data_kernels

    families = set(data_kernels.FAMILIES.values()) | set(compute_kernels.FAMILIES.values())
    return frozenset(families - compute_kernels.FALLBACK_FAMILIES - compute_kernels.INTEGER_FAMILIES)


def data_floor_rows(launches) -> list[tuple]:
    """The profile's data-kernel launches (layer norms, softmaxes, elementwise, layout
    changes, ...) summed per family: launches, MB moved once, ms, and TB/s in the model,
    alone and over their marginal costs to the graph replay; whether the in-model or the
    marginal figure meets DATA_FLOOR_TBPS (`floor_verdict`)."""
    families = data_floor_families()
    groups: dict[str, list] = {}
    for launch in launches:
        if launch.family in families and launch.bytes:
            groups.setdefault(launch.family, []).append(launch)

    def tbps(group, field: str) -> float:
        return terabytes_per_second(sum(launch.bytes for launch in group), summed_times(group, field))

    rows = []
    for family, group in sorted(groups.items(), key=lambda item: -sum(launch.ms for launch in item[1])):
        in_model, marginal = tbps(group, "ms"), tbps(group, "marginal_ms")
        rows.append((family, len(group), f"{sum(launch.bytes for launch in group) / 1e6:.1f}",
                     f"{sum(launch.ms for launch in group):.4f}", f"{in_model:.2f}", f"{tbps(group, 'alone_ms'):.2f}",
                     f"{marginal:.2f}", floor_verdict(in_model, marginal, DATA_FLOOR_TBPS)))
    return rows


def print_data_floor(name: str, launches) -> None:
    rows = data_floor_rows(launches)
    if rows:
        print(f"issue 16's data kernels in {name} (summed per family, TB/s over the bytes moved once; floor "
              f"{DATA_FLOOR_TBPS} at batch 32, in the model or by marginal cost):")
        print_table(("family", "launches", "MB", "ms", "TB/s", "alone TB/s", "marginal TB/s", "floor"), rows)


SMALL_M_FACTOR = 3
"""Issue 16's target for GEMMs of few rows (cutlass_sm90.SMALL_M_ROWS; BERT's at batch 1:
M = 128): each within 3x of max(reading its weight once at DRAM bandwidth, an empty kernel
in a graph)."""


def is_small_m(launch) -> bool:
    return launch.gemm is not None and launch.gemm["rows"] <= SMALL_M_ROWS


def small_m_rows(launches, target, empty_ms: float) -> list[tuple]:
    """The profile's GEMMs of at most SMALL_M_ROWS rows, one row per kernel and shape:
    launches, the median ms in the model, alone and marginal, the floor (max(weight bytes /
    DRAM bandwidth, `empty_ms`)), the alone time over it, and whether that is within
    SMALL_M_FACTOR ("met") or not ("MISSED")."""
    groups: dict[tuple, list] = {}
    for launch in filter(is_small_m, launches):
        gemm = launch.gemm
        groups.setdefault((launch.kernel, gemm["rows"], gemm["n"], gemm["k"]), []).append(launch)

    def median(group, field: str) -> float:
        values = [getattr(launch, field) for launch in group if getattr(launch, field) is not None]
        return statistics.median(values) if values else float("nan")

    rows = []
    for (kernel, m, n, k), group in sorted(groups.items(), key=lambda item: -sum(launch.ms for launch in item[1])):
        floor = max(group[0].gemm["weight_bytes"] / target.dram_bytes_per_second * 1e3, empty_ms)
        alone = median(group, "alone_ms")
        rows.append((kernel, f"{m}x{n}x{k}", len(group), f"{group[0].gemm['weight_bytes'] / 1e6:.2f}",
                     f"{median(group, 'ms'):.4f}", f"{alone:.4f}", f"{median(group, 'marginal_ms'):.4f}", f"{floor:.4f}",
                     f"{alone / floor:.1f}", "met" if alone <= SMALL_M_FACTOR * floor else "MISSED"))
    return rows


def print_small_m(name: str, launches, target) -> None:
    from bench.kernels import empty_kernel_ms

    if not any(map(is_small_m, launches)):
        return
    empty_ms = empty_kernel_ms()
    print(f"issue 16's small-M GEMMs in {name} (<= {SMALL_M_ROWS} rows; medians per kernel and shape; floor max(weight "
          f"read at {target.dram_bytes_per_second / 1e12:.1f} TB/s, an empty kernel in a graph {empty_ms:.4f} ms); "
          f"target: alone within {SMALL_M_FACTOR}x the floor):")
    print_table(("kernel", "MxNxK", "launches", "weight MB", "ms", "alone ms", "marginal ms", "floor ms", "alone / floor",
                 "target"), small_m_rows(launches, target, empty_ms))


def print_profile(name: str, batch: int, compiled, device_inputs: dict, build: str) -> list:
    """The launch profile (in the graph, alone and marginal), its tables, the floor rows
    and the roofline plot in $OUT; returns the launches."""
    from boltir.runtime import format_profile, format_profile_by_family

    print(f"profile of {name} b{batch} (launches timed inside a captured graph; alone: each launch by itself; "
          f"marginal: what it adds to a graph replay; % bound: the roofline bound over the time):")
    launches = compiled.profile(**device_inputs, alone=True, marginal=True)
    print(format_profile(launches, top=8), format_profile_by_family(launches), sep="\n", flush=True)
    target = get_target(BUILDS[build][0])
    print_conv_floor(f"{name} b{batch}", launches, target)
    print_data_floor(f"{name} b{batch}", launches)
    print_small_m(f"{name} b{batch}", launches, target)
    print_stem(f"{name} b{batch}", launches)
    plot_launches(launches, target, "f16", f"{name} b{batch}",
                  Path(os.environ.get("OUT", ".")) / f"{name}_b{batch}_roofline.png")
    return launches


def profile_only(name: str, batch: int, model, work: Path, build: str) -> tuple:
    """One compile of `build`, its profile and graph replay: no peers, no correctness
    check (a cheap GPU call for the per-launch figures)."""
    from boltir.runtime import load

    result, inputs, compile_s, _ = compiled_model(name, batch, model, work, build, builds=1)
    compiled = load(result.directory)
    device_inputs = {k: v.cuda() for k, v in inputs.items()}
    compiled(**device_inputs)
    launches = print_profile(name, batch, compiled, device_inputs, build)
    graph_ms = replay_ms(compiled, device_inputs)
    compiled.close()
    bounds_ms = sum(launch.bound_ms or 0.0 for launch in launches)
    return (f"{name} b{batch} {build}", f"{graph_ms:.3f}", len(launches), f"{summed_times(launches, 'ms'):.3f}",
            f"{summed_times(launches, 'marginal_ms'):.3f}", f"{bounds_ms:.3f}", f"{compile_s:.0f}")


PROFILE_HEADER = ("model", "graph ms", "launches", "profile ms", "marginal ms", "bounds ms", "compile s")


def measure(name: str, batch: int, model, work: Path, peers: bool, builds: list[str], compiles: int = 2) -> tuple:
    import torch

    from boltir.accuracy import judge
    from boltir.runtime import load

    result, inputs, compile_s, warm_s = compiled_model(name, batch, model, work, builds[0], builds=compiles)
    torch.cuda.synchronize()
    free_before, _ = torch.cuda.mem_get_info()
    compiled = load(result.directory)
    with torch.no_grad():
        reference = forward(name, model, inputs).float()
    device_inputs = {k: v.cuda() for k, v in inputs.items()}
    (ours,) = compiled(**device_inputs)
    ours = ours.float().cpu()  # the model's own buffer, overwritten by the calls below
    error = relative_error(ours, reference)
    torch.cuda.synchronize()
    ours_bytes = free_before - torch.cuda.mem_get_info()[0]
    ours_ms = time_ms(lambda: compiled(**device_inputs))
    print_profile(name, batch, compiled, device_inputs, builds[0])
    graph_ms = replay_ms(compiled, device_inputs)
    bounds_ms, model_flops, peak = roofline_figures(result, work / f"{name}_b{batch}.onnx")
    efficiency = model_flops / (graph_ms * 1e-3 * peak)
    print(f"roofline of {name} b{batch}: the launches' bounds sum to {bounds_ms:.3f} ms against a graph replay of "
          f"{graph_ms:.3f} ms ({100 * bounds_ms / graph_ms:.0f}%); {model_flops / 1e9:.2f} GFLOP, model efficiency "
          f"{100 * efficiency:.1f}% of {peak / 1e12:.0f} TFLOP/s", flush=True)
    built = [other_build(name, batch, model, work, build, device_inputs, reference) for build in builds[1:]]
    others = cells_in_turns(compiled, builds[1:], built, device_inputs)  # the builds against the main one
    for each in [compiled, *(other[0] for other in built if not isinstance(other, str))]:
        each.close()
    # peers: fp16, channels_last for CNNs; their memory counts the weights too, as ours does
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    peer = copy.deepcopy(model).half().cuda()
    if name != "bert":
        peer = peer.to(memory_format=torch.channels_last)
    peer_inputs = {k: (v.half().to(memory_format=torch.channels_last) if v.is_floating_point() else v)
                   for k, v in device_inputs.items()}
    with torch.no_grad():
        eager_error = relative_error(forward(name, peer, peer_inputs), reference)
        eager_ms = time_ms(lambda: forward(name, peer, peer_inputs))
        eager_bytes = torch.cuda.max_memory_allocated() - base
        compile_ms = overhead_ms = float("nan")
        if peers:
            default = torch.compile(peer)
            compile_ms = time_ms(lambda: forward(name, default, peer_inputs))
            torch._dynamo.reset()
            reduce = torch.compile(peer, mode="reduce-overhead")
            overhead_ms = time_ms(lambda: forward(name, reduce, peer_inputs))
            torch._dynamo.reset()
    peer = None  # frees its weights before the interpreter runs (a del would leave the lambdas above a deleted name)
    onnx_path = work / f"{name}_b{batch}.onnx"
    interpreter = interpreter_output(onnx_path, builds[0], inputs)
    verdict = judge(ours.numpy(), reference.numpy(), interpreter, framework_error=eager_error)
    if not verdict.matches_interpreter:  # is it the model's own rounding noise? (as bench/corpus.py: only on a miss)
        verdict = judge(ours.numpy(), reference.numpy(), interpreter, framework_error=eager_error,
                        wide_interpreter=interpreter_output(onnx_path, builds[0], inputs, wide=True))
    if verdict.explanation:
        print(f"{name} b{batch}: {verdict.explanation}", flush=True)
    from bench.interpreter_reference import verdict_cell

    correct = verdict_cell(verdict, Path(result.directory), inputs)
    return (f"{name} b{batch}", f"{ours_ms:.3f}", f"{graph_ms:.3f}", f"{eager_ms:.3f}", f"{compile_ms:.3f}", f"{overhead_ms:.3f}",
            f"{error:.1e}", f"{eager_error:.1e}", correct, f"{ours_bytes / 2**20:.0f} / {eager_bytes / 2**20:.0f}",
            f"{compile_s:.0f}/{warm_s:.0f}", str(len(result.fallbacks)), f"{bounds_ms:.3f}",
            f"{100 * bounds_ms / graph_ms:.0f}%", f"{100 * efficiency:.1f}%", "; ".join(others) or "-")


HEADER = ("model", "boltir", "boltir graph", "eager", "compile", "reduce-overhead", "err ours vs fp32", "err eager fp16 vs fp32",
          "correct", "device MiB ours/eager", "compile s cold/warm", "fallbacks", "bounds ms", "bounds/graph", "model eff",
          "other builds: graph ms in turns with the main build (ratio, err)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--work", default="/tmp/boltir-models")
    parser.add_argument("--peer-models", default=",".join(MODELS),
                        help="the models torch.compile is measured on (it costs minutes each); others show nan")
    parser.add_argument("--builds", default="sm90",
                        help=f"comma-separated builds ({', '.join(BUILDS)}); the first is measured fully, the others by graph replay")
    parser.add_argument("--no-warm-compile", action="store_true",
                        help="compile the first build once (its warm compile time then reads the same as cold)")
    parser.add_argument("--compile-only", action="store_true",
                        help="export and compile only (no GPU): cold and warm compile times, and a filled object cache")
    parser.add_argument("--profile-only", action="store_true",
                        help="the first build's launch profile (in the graph, alone, marginal), floor rows and graph "
                             "replay only: no peers, no correctness check")
    args = parser.parse_args()
    if args.compile_only and args.profile_only:
        parser.error("--compile-only and --profile-only exclude each other")

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    builds = args.builds.split(",")
    unknown = [b for b in builds if b not in BUILDS]
    if unknown:
        parser.error(f"unknown build {unknown[0]}; known: {', '.join(BUILDS)}")
    strangers = [m for m in args.models.split(",") if m not in MODELS]
    if strangers:
        parser.error(f"unknown model {strangers[0]}; known: {', '.join(MODELS)}")
    rows = []
    for name in args.models.split(","):
        model = make_model(name)
        for batch in (int(b) for b in args.batches.split(",")):
            try:
                if args.compile_only:
                    for build in builds:
                        result, _, cold, warm = compiled_model(name, batch, model, work, build)
                        launches = result.manifest["launches"]
                        bounds_ms, model_flops, _ = roofline_figures(result, work / f"{name}_b{batch}.onnx")
                        rows.append((f"{name} b{batch} {build}", len(launches), len({launch["kernel"] for launch in launches}),
                                     sum(launch.get("cutlass") == "3.x" for launch in launches), f"{cold:.1f}", f"{warm:.1f}",
                                     len(result.fallbacks), f"{model_flops / 1e9:.2f}", f"{bounds_ms:.3f}"))
                elif args.profile_only:
                    rows.append(profile_only(name, batch, model, work, builds[0]))
                else:
                    rows.append(measure(name, batch, model, work, name in args.peer_models.split(","), builds,
                                        1 if args.no_warm_compile else 2))
            except Exception as failure:  # noqa: BLE001 - one model's failure is a row
                import traceback

                traceback.print_exc()
                rows.append((f"{name} b{batch}", "FAILED", str(failure).splitlines()[0][:80]))
            print("row:", " | ".join(map(str, rows[-1])), flush=True)
    if args.compile_only:
        print(f"\ncompile times on {os.cpu_count()} cores, seconds")
        print_table(("model", "launches", "distinct kernels", "3.x launches", "cold s", "warm s", "fallbacks", "model GFLOP",
                     "bounds ms"), rows)
        return 0
    import torch

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; times in ms, median of {REPEATS}")
    if args.profile_only:
        print_table(PROFILE_HEADER, [r + ("",) * (len(PROFILE_HEADER) - len(r)) for r in rows])
        return 0
    print_table(HEADER, [r + ("",) * (len(HEADER) - len(r)) for r in rows])
    plot(rows)
    return 0


def plot(rows) -> None:
    """Speedups over eager, as a PNG in $OUT (or here)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [r for r in rows if r[1] != "FAILED"]
    if not measured:
        return
    labels = [r[0] for r in measured]
    series = {"boltir": 1, "boltir graph": 2, "torch.compile": 4, "reduce-overhead": 5}
    fig, ax = plt.subplots(figsize=(max(6, len(labels) * 1.2), 4))
    width = 0.8 / len(series)
    for i, (name, column) in enumerate(series.items()):
        values = [float(r[3]) / float(r[column]) if r[column] not in ("nan", "") else 0.0 for r in measured]
        ax.bar([x + i * width for x in range(len(labels))], values, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))], labels, rotation=30, ha="right")
    ax.set_ylabel("speedup over PyTorch eager (fp16)")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(os.environ.get("OUT", "."), "models_speedup.png")
    fig.savefig(path, dpi=120)
    print("wrote", path)


if __name__ == "__main__":
    sys.exit(main())
