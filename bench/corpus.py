"""The model corpus on the GPU: 30 architectures from torchvision, timm, transformers and a
hand-written U-Net, each exported through ONNX (the TorchScript exporter at opset 17, as
bench/models.py exports) and through torch.export (boltir's PyTorch frontend), compiled
for sm90 in f16 with the heuristic's kernels, checked by `boltir.accuracy`'s criterion
and timed as a CUDA-graph replay against PyTorch eager (fp16, channels_last for images);
every third model (`--ro-every`) also against torch.compile's reduce-overhead. Every
failure is caught per model and shown as one line. One table is printed last, with the
geometric means of eager and reduce-overhead time over our graph time.

    source bench/setup_gpu.sh && python3 -m bench.corpus --models resnet18,bert [--batches 1] [--small]
    python3 -m bench.corpus --part 2/6          # the second sixth of the corpus (one GPU call each)
    python3 -m bench.corpus --models vit_b_16 --batches 32 --profile   # + launches against their bounds
    python3 -m bench.corpus --models gpt2 --frontends onnx --builds sm90-cutlasssplit   # + another build, timed in turns
    python3 -m bench.corpus --list              # the registry: no GPU, no torchvision needed
    python3 -m bench.corpus --compile-only      # import and compile (nvcc), no GPU: fills the object cache
    python3 -m bench.corpus --compile-only --as-gpu "NVIDIA H200"   # the same, as that GPU's default builds
    python3 -m bench.corpus --lower-only [--interp-check]   # import and lower to the cutlass level: no nvcc, no GPU
    python3 -m bench.corpus --lower-only --noise --models resnet50   # the f16 rounding noise, on the CPU

Models have random weights, conditioned like trained ones (bench/models.py's `condition`:
residual branches damped, BatchNorm statistics calibrated on random images). `--small`
takes small resolutions (64-96 px images, sequence 16). `--models tiny` (or tiny_resnet,
...) takes the tiny architectures of tests/support/corpus_models.py, which need neither
torchvision, timm nor transformers.

Per model and frontend (onnx, torch): imported; compiled (seconds, with the object cache
as it is); correct by the criterion (fp32 reference: PyTorch on the CPU; the framework's
own f16 error: PyTorch fp16 on the GPU; the same-precision reference: the op-level
interpreter at f16 on the lowered module, numpy on the CPU). Each row is also appended as
JSON to `--results` (default $OUT/corpus.jsonl), so a call cut short keeps its rows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.interpreter_reference import verdict_cell
from bench.models import HEURISTIC_DB, condition, export, replay_ms, time_ms
from bench.tables import print_table
from boltir.tools.roofline_plot import plot_launches
from boltir.target import get_target

ARCH, DTYPE = "sm90", "f16"
CPU_CHECK_BOUND = 1e-3
"""--interp-check: the most relative L2 error of the f32 interpreter against PyTorch fp32."""
FRONTENDS = ("onnx", "torch")


# ------------------------------------------------------------------------ registry


@dataclass(frozen=True)
class Architecture:
    name: str
    source: str
    """torchvision, timm, transformers, torch (hand-written) or tiny (tests/support/corpus_models.py)."""
    kind: str
    """image, segmentation or text."""
    sides: tuple[int, int]
    """The image side (or sequence length) at the usual and at the small resolution."""
    make: Callable[[int, bool], tuple]
    """make(batch, small) -> (eval-mode torch module, {input name: tensor})."""

    def describe(self) -> str:
        usual, small = self.sides
        unit = "tokens" if self.kind == "text" else "px"
        return f"{self.kind} {usual} {unit} (small {small})"


def vision(name: str, source: str, constructor: Callable[[bool], object], sides=(224, 64), kind="image") -> Architecture:
    def make(batch: int, small: bool):
        import torch

        side = sides[small]
        torch.manual_seed(0)
        model = condition(fill_zero_weights(constructor(small)), side=side)
        generator = torch.Generator().manual_seed(2)
        return model, {"image": torch.randn(batch, 3, side, side, generator=generator)}

    return Architecture(name, source, kind, sides, make)


def fill_zero_weights(model):
    """Random weights for the matrices and filters a constructor zeroes (torchvision's ViT
    head): a model whose output is its bias checks nothing."""
    import torch

    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2 and not parameter.any():
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)
    return model


def torchvision_model(function: str, **kwargs) -> Callable[[bool], object]:
    def construct(small: bool):
        import torchvision

        if function.startswith(("fcn_", "deeplabv3_")):
            return getattr(torchvision.models.segmentation, function)(weights=None, weights_backbone=None, **kwargs)
        return getattr(torchvision.models, function)(weights=None, **kwargs)

    return construct


def timm_model(name: str, sized: bool = False) -> Callable[[bool], object]:
    """`sized`: the model fixes its input size (position embeddings): give the small one."""

    def construct(small: bool):
        import timm

        return timm.create_model(name, pretrained=False, **({"img_size": 64} if sized and small else {}))

    return construct


def hand_unet(small: bool):
    from tests.support.corpus_models import TinyUNet

    return TinyUNet(classes=21, width=8 if small else 32)


def transformer(name: str, config: str, model: str, vocabulary: int, token_types: bool = False, **kwargs) -> Architecture:
    def make(batch: int, small: bool):
        import torch
        import transformers

        torch.manual_seed(0)
        settings = getattr(transformers, config)(attn_implementation="eager", **kwargs)
        module = getattr(transformers, model)(settings).eval()
        generator = torch.Generator().manual_seed(2)
        length = (128, 16)[small]
        inputs = {"input_ids": torch.randint(3, vocabulary, (batch, length), generator=generator)}
        if token_types:  # explicit: the default reads a buffer through GatherElements
            inputs["token_type_ids"] = torch.zeros(batch, length, dtype=torch.int64)
        return module, inputs

    return Architecture(name, "transformers", "text", (128, 16), make)


def tiny(name: str) -> Architecture:
    from tests.support.corpus_models import IMAGE, SEQUENCE, TINY_MODELS

    def make(batch: int, small: bool):
        return TINY_MODELS[name](batch)

    text = name == "gpt2"
    return Architecture(f"tiny_{name}", "tiny", "text" if text else "image", (SEQUENCE if text else IMAGE,) * 2, make)


def registry() -> dict[str, Architecture]:
    tv, seg = "torchvision", "segmentation"
    corpus = [
        vision("resnet18", tv, torchvision_model("resnet18")),
        vision("resnet50", tv, torchvision_model("resnet50")),
        vision("resnext50_32x4d", tv, torchvision_model("resnext50_32x4d")),
        vision("wide_resnet50_2", tv, torchvision_model("wide_resnet50_2")),
        vision("densenet121", tv, torchvision_model("densenet121")),
        vision("inception_v3", tv, torchvision_model("inception_v3", aux_logits=False, init_weights=True), (299, 96)),
        vision("googlenet", tv, torchvision_model("googlenet", aux_logits=False, init_weights=True)),
        vision("squeezenet1_1", tv, torchvision_model("squeezenet1_1")),
        vision("shufflenet_v2_x1_0", tv, torchvision_model("shufflenet_v2_x1_0")),
        vision("mnasnet1_0", tv, torchvision_model("mnasnet1_0")),
        vision("mobilenet_v2", tv, torchvision_model("mobilenet_v2")),
        vision("mobilenet_v3_small", tv, torchvision_model("mobilenet_v3_small")),
        vision("mobilenet_v3_large", tv, torchvision_model("mobilenet_v3_large")),
        vision("efficientnet_b0", tv, torchvision_model("efficientnet_b0")),
        vision("efficientnet_v2_s", tv, torchvision_model("efficientnet_v2_s"), (384, 64)),
        vision("regnet_y_400mf", tv, torchvision_model("regnet_y_400mf")),
        vision("convnext_tiny", tv, torchvision_model("convnext_tiny")),
        vision("vit_b_16", tv, lambda small: torchvision_model("vit_b_16", image_size=64 if small else 224)(small)),
        vision("swin_t", tv, torchvision_model("swin_t")),
        vision("fcn_resnet50", tv, torchvision_model("fcn_resnet50", aux_loss=False), (520, 64), seg),
        vision("deeplabv3_mobilenet_v3_large", tv, torchvision_model("deeplabv3_mobilenet_v3_large", aux_loss=False),
               (520, 64), seg),
        vision("repvgg_a0", "timm", timm_model("repvgg_a0")),
        vision("deit_tiny", "timm", timm_model("deit_tiny_patch16_224", sized=True)),
        vision("mobilevit_s", "timm", timm_model("mobilevit_s"), (256, 64)),
        vision("unet", "torch", hand_unet, (256, 64), seg),
        transformer("bert", "BertConfig", "BertModel", 30522, token_types=True),
        transformer("distilbert", "DistilBertConfig", "DistilBertModel", 30522),
        transformer("roberta", "RobertaConfig", "RobertaModel", 50265),
        transformer("gpt2", "GPT2Config", "GPT2Model", 50257),
        transformer("t5_encoder", "T5Config", "T5EncoderModel", 32128),
    ]
    from tests.support.corpus_models import TINY_MODELS

    return {a.name: a for a in corpus + [tiny(name) for name in TINY_MODELS]}


# --------------------------------------------------------------------- one model


def adapted(inner, names: list[str], keywords: bool):
    """A torch module that calls the model with positional inputs (by keyword for a text
    model) and returns its one main output tensor (a segmentation model's "out", a
    transformer's last hidden state)."""
    import torch

    class Adapted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            out = self.inner(**dict(zip(names, args))) if keywords else self.inner(*args)
            if isinstance(out, dict) and "out" in out:
                return out["out"]
            if hasattr(out, "last_hidden_state"):
                return out.last_hidden_state
            return out[0] if isinstance(out, tuple | list) else out

    return Adapted().eval()


def one_line(error: BaseException) -> str:
    """A failure as one table cell: a BoltError's own line (it names the op), else the
    exception's type and first line."""
    from boltir.diagnostics import BoltError

    lines = str(error).strip().splitlines()
    text = lines[0].removeprefix("error: ").split("; supported: ")[0] if lines else ""  # not the list of every op
    return (text if isinstance(error, BoltError) else f"{type(error).__name__}: {text}")[:200]


@dataclass
class Build:
    """One frontend's path through boltir for one model."""

    frontend: str
    imported: str = "-"
    compiled: str = "-"
    correct: str = "-"
    graph_ms: float | None = None
    error: float | None = None
    failure: str = ""
    directory: str | None = None
    """The compiled library's directory (the ONNX build's other builds time against it)."""

    def cell(self) -> str:
        if self.failure:
            return f"FAILED: {self.failure}"
        graph = f", graph {self.graph_ms:.3f} ms" if self.graph_ms is not None else ""
        return f"{self.correct}{graph}" if self.correct != "-" else self.compiled


@dataclass
class Row:
    model: str
    source: str
    batch: int
    builds: dict[str, Build] = field(default_factory=dict)
    eager_ms: float | None = None
    eager_error: float | None = None
    ro_ms: float | None = None
    failure: str = ""
    others: list[str] = field(default_factory=list)
    """--builds: each other build's graph time in turns with the ONNX build, or why it failed."""


def frontend_source(frontend: str, onnx_path: Path, module, inputs: dict):
    """What boltir compiles: the ONNX file, or the graph module torch.export gives."""
    if frontend == "onnx":
        from boltir.frontends.onnx import import_model

        import_model(onnx_path)  # the import alone, so that its failure reads as such
        return onnx_path
    from boltir.frontends.torch import import_module

    return import_module(module, tuple(inputs.values()))


def interpreter_output(source, inputs: dict, dtype: str = DTYPE, wide: bool = False):
    """The op-level interpreter at `dtype` on the module boltir.compile lowers (at f16:
    the criterion's same-precision reference), on `inputs` in order; `wide`: computing in
    f64 (`boltir.interp.wide_arithmetic`, for the model's rounding noise)."""
    from bench.interpreter_reference import lowered_module, run_interpreter

    (out,) = run_interpreter(lowered_module(source, ARCH, dtype), inputs, wide=wide)
    return out


def run_build(build: Build, source, work: Path, mode: str, inputs: dict, reference=None, framework_error=None,
              profile: bool = False, noise: bool = False) -> None:
    """Compiles `source` (or lowers it, `mode` lower-only) and, on a GPU, runs, checks and
    times it (`profile`: and prints its launches against their bounds); fills `build`, or
    its one-line failure. `noise` (lower-only): the model's f16 rounding noise instead, the
    floor under the criterion's interpreter half."""
    import boltir.compiler
    from boltir.accuracy import INTERPRETER_BOUND, judge, relative_l2

    stage = "compile"
    try:
        start = time.monotonic()
        if mode == "lower-only":
            boltir.compiler.lower(source.clone() if hasattr(source, "clone") else source, arch=ARCH, dtype=DTYPE,
                                  selector="heuristic")
            build.compiled = f"lowered {time.monotonic() - start:.1f} s"
            if reference is not None:  # --interp-check: the importer and the op-level passes against PyTorch
                stage = "interpreter"
                out = interpreter_output(source, inputs, "f32")
                build.error = relative_l2(out, reference)
                build.correct = f"{'ok' if build.error <= CPU_CHECK_BOUND else 'WRONG'} (f32 interpreter {build.error:.1e})"
            if noise:  # two valid f16 runs: the interpreter computing in f32 and in f64
                stage = "interpreter"
                build.error = relative_l2(interpreter_output(source, inputs), interpreter_output(source, inputs, wide=True))
                verdict = "under" if build.error <= INTERPRETER_BOUND else "OVER"
                build.correct = f"f16 noise {build.error:.1e}, {verdict} the {INTERPRETER_BOUND:.0e} bar"
            return
        result = boltir.compiler.compile(source.clone() if hasattr(source, "clone") else source, work, arch=ARCH, dtype=DTYPE,
                                         progress=False, tuning_db=HEURISTIC_DB)
        fallbacks = f", {len(result.compile_fallbacks)} nvcc fallbacks" if result.compile_fallbacks else ""
        build.compiled = f"{time.monotonic() - start:.0f} s{fallbacks}"
        build.directory = str(result.directory)
        if mode == "compile-only":
            return
        stage = "run"
        ours, graph_ms = run_compiled(result.directory, inputs, profile)
        build.graph_ms = graph_ms
        stage = "interpreter"
        start = time.monotonic()
        interpreter = interpreter_output(source, inputs)
        print(f"  interpreter at f16 ({build.frontend}): {time.monotonic() - start:.0f} s", flush=True)
        verdict = judge(ours, reference, interpreter, framework_error=framework_error, dtype=DTYPE)
        if not verdict.matches_interpreter:  # is it the model's own rounding noise?
            verdict = judge(ours, reference, interpreter, framework_error=framework_error, dtype=DTYPE,
                            wide_interpreter=interpreter_output(source, inputs, wide=True))
        if verdict.explanation:
            print(f"  {verdict.explanation}", flush=True)
        stage = "launch-by-launch check"
        build.error, build.correct = verdict.error[0], verdict_cell(verdict, Path(result.directory), inputs)
    except Exception as error:  # noqa: BLE001 - one failure is one cell
        build.failure = f"{stage}: {one_line(error)}"


def run_compiled(directory: Path, inputs: dict, profile: bool = False):
    """The compiled model's output (numpy, f32) on `inputs`, and its graph-replay time;
    `profile`: prints its slowest launches and its kernel families against their bounds
    (timed inside a captured graph, and drawn into $OUT/<build>_roofline.png) first."""
    import torch

    from boltir.runtime import format_profile, format_profile_by_family, load

    compiled = load(directory)
    try:
        device_inputs = {spec.name: v.cuda() for spec, v in zip(compiled.inputs, inputs.values(), strict=True)}
        (out,) = compiled(**device_inputs)
        out = out.float().cpu().numpy()
        if profile:
            launches = compiled.profile(**device_inputs)
            print(format_profile(launches, top=12), format_profile_by_family(launches), sep="\n", flush=True)
            plot_launches(launches, get_target(ARCH), DTYPE, Path(directory).name,
                          Path(os.environ.get("OUT", ".")) / f"{Path(directory).name}_roofline.png")
        return out, replay_ms(compiled, device_inputs)
    finally:
        compiled.close()
        torch.cuda.synchronize()


def other_builds(row: Row, build: Build, onnx_path: Path, work: Path, inputs: dict, reference, names: list[str]) -> None:
    """--builds: the ONNX build against other builds of bench/models.py's (select-kernels,
    pad-alignment or pass options), each compiled from the same file, checked against fp32
    and timed as a graph replay in turns with the ONNX build (`cells_in_turns`): row.others."""
    import boltir.compiler
    from boltir.accuracy import relative_l2
    from boltir.runtime import load
    from bench.models import BUILDS, build_pipeline, cells_in_turns

    if not names or build.failure or build.directory is None:
        return
    loaded, others = [], []
    try:
        main = load(build.directory)
        loaded.append(main)
        device_inputs = {spec.name: v.cuda() for spec, v in zip(main.inputs, inputs.values(), strict=True)}
        for name in names:
            try:
                arch, cutlass = BUILDS[name]
                result = boltir.compiler.compile(onnx_path, work.with_name(f"{work.name}_{name}"), arch=arch, dtype=DTYPE,
                                                 progress=False, cutlass=cutlass, tuning_db=HEURISTIC_DB,
                                                 pipeline=build_pipeline(name, HEURISTIC_DB))
                compiled = load(result.directory)
                loaded.append(compiled)
                (out,) = compiled(**device_inputs)
                others.append((compiled, relative_l2(out.float().cpu().numpy(), reference)))
            except Exception as error:  # noqa: BLE001 - one build's failure is one cell
                others.append(f"{name} FAILED: {one_line(error)}")
        row.others = cells_in_turns(main, names, others, device_inputs)
    except Exception as error:  # noqa: BLE001
        row.others = [f"other builds: {one_line(error)}"]
    finally:
        for compiled in loaded:
            compiled.close()


def peer_figures(row: Row, module, inputs: dict, image: bool, reduce_overhead: bool, reference) -> None:
    """PyTorch fp16 (channels_last for images) on the GPU: its error against fp32 (the
    criterion's yardstick), its eager time and, if asked, reduce-overhead's."""
    import copy

    import torch

    from boltir.accuracy import relative_l2

    peer = copy.deepcopy(module).half().cuda()
    if image:
        peer = peer.to(memory_format=torch.channels_last)
    args = [v.half().cuda().to(memory_format=torch.channels_last) if v.is_floating_point() else v.cuda()
            for v in inputs.values()]
    with torch.no_grad():
        row.eager_error = relative_l2(peer(*args).float().cpu().numpy(), reference)
        row.eager_ms = time_ms(lambda: peer(*args))
        if reduce_overhead:
            try:
                compiled = torch.compile(peer, mode="reduce-overhead")
                row.ro_ms = time_ms(lambda: compiled(*args))
            except Exception as error:  # noqa: BLE001 - reported in the row
                row.failure = f"reduce-overhead: {one_line(error)}"
            finally:
                torch._dynamo.reset()


def exported(arch: Architecture, batch: int, small: bool, onnx_path: Path, to_onnx: bool = True):
    """(the model taking positional inputs, its inputs, `onnx_path`), the ONNX file written
    there first when `to_onnx` and not there yet."""
    model, inputs = arch.make(batch, small)
    module = adapted(model, list(inputs), keywords=arch.kind == "text")
    if to_onnx and not onnx_path.exists():
        export(f"corpus {arch.name}", module, inputs, onnx_path)
    return module, inputs, onnx_path


def measure(arch: Architecture, batch: int, args, reduce_overhead: bool) -> Row:
    import torch

    row = Row(arch.name, arch.source, batch)
    mode = "lower-only" if args.lower_only else "compile-only" if args.compile_only else "gpu"
    tag = f"{arch.name}_b{batch}{'_small' if args.small else ''}"
    work = Path(args.work)
    try:
        module, inputs, onnx_path = exported(arch, batch, args.small, work / f"{tag}.onnx", "onnx" in args.frontends)
    except Exception as error:  # noqa: BLE001 - one model's failure is a row
        row.failure = f"build or export: {one_line(error)}"
        return row
    reference = None
    if mode == "gpu" or args.interp_check:
        with torch.no_grad():
            reference = module(*inputs.values()).float().numpy()
    if mode == "gpu":
        try:
            peer_figures(row, module, inputs, arch.kind != "text", reduce_overhead, reference)
            torch.cuda.empty_cache()  # the fp16 copy's memory
        except Exception as error:  # noqa: BLE001
            row.failure = f"PyTorch fp16: {one_line(error)}"
    for frontend in args.frontends:
        build = row.builds.setdefault(frontend, Build(frontend))
        try:
            source = frontend_source(frontend, onnx_path, module, inputs)
            build.imported = "yes"
        except Exception as error:  # noqa: BLE001
            build.imported, build.failure = "no", f"import: {one_line(error)}"
            continue
        run_build(build, source, work / f"{tag}_{frontend}", mode, inputs, reference,
                  row.eager_error if row.eager_error is not None else float("nan"), args.profile, args.noise)
        if frontend == "onnx" and mode == "gpu":
            other_builds(row, build, onnx_path, work / f"{tag}_{frontend}", inputs, reference, args.builds)
    return row


# ----------------------------------------------------------------------- the table


def table_row(row: Row) -> tuple:
    onnx, torch_export = row.builds.get("onnx"), row.builds.get("torch")
    graph = onnx.graph_ms if onnx else None
    ratio = lambda peer: f"{peer / graph:.2f}x" if peer and graph else "-"
    ms = lambda v: f"{v:.3f}" if v is not None else "-"
    return (f"{row.model} b{row.batch}", row.source, onnx.imported if onnx else "-", onnx.compiled if onnx else "-",
            onnx.cell() if onnx and (onnx.failure or onnx.correct != "-") else "-", ms(graph), ms(row.eager_ms),
            ratio(row.eager_ms), ms(row.ro_ms), ratio(row.ro_ms), torch_export.cell() if torch_export else "-",
            "; ".join(row.others) or "-", row.failure or "")


HEADER = ("model", "source", "imported", "compiled", "correct (ONNX)", "graph ms", "eager ms", "eager/graph", "RO ms",
          "RO/graph", "torch.export", "other builds: graph ms in turns with ours (ratio, err)", "other failure")


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def counts(rows: list[Row], frontend: str) -> str:
    builds = [r.builds[frontend] for r in rows if frontend in r.builds]
    imported = sum(b.imported == "yes" for b in builds)
    compiled = sum(b.compiled != "-" for b in builds)
    correct = sum(b.correct.startswith("ok") for b in builds)
    checked = f", {correct}/{len(rows)} correct" if any(b.correct not in ("-", "") for b in builds) else ""
    if any(b.correct.startswith("f16 noise") for b in builds):  # --noise
        checked = f", the f16 noise under the bar on {sum(', under' in b.correct for b in builds)}/{len(rows)}"
    return f"{imported}/{len(rows)} imported, {compiled}/{len(rows)} compiled{checked}"


def summary(rows: list[Row]) -> list[str]:
    """The counts per frontend, and the geometric means of the peers' time over our graph
    replay (ONNX builds)."""
    lines = [f"{label}: {counts(rows, frontend)}" for frontend, label in (("onnx", "ONNX"), ("torch", "torch.export"))
             if any(frontend in r.builds for r in rows)]
    for attribute, peer in (("eager_ms", "eager"), ("ro_ms", "reduce-overhead")):
        ratios = [getattr(r, attribute) / r.builds["onnx"].graph_ms for r in rows
                  if getattr(r, attribute) and "onnx" in r.builds and r.builds["onnx"].graph_ms]
        if ratios:
            lines.append(f"geometric mean of {peer} / our graph time: {geometric_mean(ratios):.2f}x over {len(ratios)} models")
    return lines


# ------------------------------------------------------------------------ main


def selected(names: str, part: str, corpus: dict[str, Architecture]) -> list[str]:
    chosen: list[str] = []
    for name in names.split(","):
        if name in ("all", ""):
            chosen += [n for n, a in corpus.items() if a.source != "tiny"]
        elif name == "tiny":
            chosen += [n for n, a in corpus.items() if a.source == "tiny"]
        elif name in corpus:
            chosen.append(name)
        else:
            raise SystemExit(f"unknown model '{name}'; --list lists them")
    index, count = (int(p) for p in part.split("/"))
    return [n for i, n in enumerate(chosen) if i % count == index - 1]


def print_list(corpus: dict[str, Architecture], ro_every: int) -> None:
    names = list(corpus)
    rows = [(n, a.source, a.describe(), "yes" if names.index(n) % ro_every == 0 else "") for n, a in corpus.items()]
    print_table(("model", "source", "input", "reduce-overhead"), rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all", help="comma-separated names, 'all' (the 30) or 'tiny'")
    parser.add_argument("--part", default="1/1", help="K/N: every N-th of the chosen models from the K-th (a batch of calls)")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--small", action="store_true", help="small resolutions: 64-96 px images, sequence 16")
    parser.add_argument("--ro-every", type=int, default=3, help="measure reduce-overhead on every N-th model of the registry")
    parser.add_argument("--frontends", default=",".join(FRONTENDS), help="onnx, torch (torch.export) or both")
    parser.add_argument("--work", default="/tmp/boltir-corpus")
    parser.add_argument("--results", default=os.path.join(os.environ.get("OUT", "/tmp/boltir-corpus"), "corpus.jsonl"))
    parser.add_argument("--list", action="store_true", help="print the registry and stop")
    parser.add_argument("--profile", action="store_true",
                        help="print each build's slowest launches and kernel families against their roofline bounds")
    parser.add_argument("--compile-only", action="store_true", help="import and compile (nvcc), no GPU")
    parser.add_argument("--as-gpu", default="", metavar="NAME",
                        help="with --compile-only: build as on that GPU (e.g. 'NVIDIA H200'): its shipped tuning "
                             "records, as the device's default builds take them (objects to carry to it)")
    parser.add_argument("--lower-only", action="store_true", help="import and lower to the cutlass level: no nvcc, no GPU")
    parser.add_argument("--interp-check", action="store_true",
                        help="with --lower-only: the op-level interpreter at f32 against PyTorch fp32, on the CPU")
    parser.add_argument("--noise", action="store_true",
                        help="with --lower-only: the model's f16 rounding noise (the f16 interpreter computing in f32 "
                             "against f64), the floor under the criterion's interpreter half, on the CPU")
    parser.add_argument("--builds", default="",
                        help="comma-separated builds of bench/models.py's (sm90-cutlasssplit, ...) to time against the ONNX "
                             "build, in turns")
    args = parser.parse_args()
    if args.as_gpu:
        if not args.compile_only:
            parser.error("--as-gpu goes with --compile-only (on a GPU, builds take that GPU's records)")
        from boltir.backends.cuda.tune.selectors import build_as_gpu

        build_as_gpu(args.as_gpu)
    args.frontends = [f for f in args.frontends.split(",") if f]
    if set(args.frontends) - set(FRONTENDS):
        parser.error(f"--frontends takes {', '.join(FRONTENDS)}")
    from bench.models import BUILDS

    args.builds = [b for b in args.builds.split(",") if b]
    if unknown := [b for b in args.builds if b not in BUILDS]:
        parser.error(f"unknown build {unknown[0]}; known: {', '.join(BUILDS)}")
    corpus = registry()
    if args.list:
        print_list(corpus, args.ro_every)
        return 0
    Path(args.work).mkdir(parents=True, exist_ok=True)
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    order = list(corpus)
    rows = []
    for name in selected(args.models, args.part, corpus):
        for batch in (int(b) for b in args.batches.split(",")):
            print(f"== {name} b{batch}", flush=True)
            start = time.monotonic()
            row = measure(corpus[name], batch, args, order.index(name) % args.ro_every == 0)
            rows.append(row)
            with open(args.results, "a") as results:
                results.write(json.dumps({**asdict(row), "small": args.small, "seconds": time.monotonic() - start}) + "\n")
            print("row:", " | ".join(map(str, table_row(row))), flush=True)
    if not args.lower_only and not args.compile_only:
        import torch

        print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {ARCH} {DTYPE}, heuristic kernels; "
              "times in ms, median of the bench/models.py timing")
    print()
    print_table(HEADER, [table_row(r) for r in rows])
    print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
