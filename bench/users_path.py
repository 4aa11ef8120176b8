"""Issue 18 on the GPU: the users' path against boltc's CUDA-graph replay.

1. `torch.compile(m, backend="boltir", options={"dtype": "f16"})` on ResNet-50 and
   BERT-base at each batch: its call time (dynamo's guards included) against a graph
   replay of `boltc`'s f16 build of the same model (ONNX), and whether it is correct by
   `boltir.accuracy`'s criterion (fp32 PyTorch the reference; PyTorch fp16's own error the
   yardstick; the op-level interpreter at f16 on the boltc build the same-precision check,
   unless --no-interpreter). A graph boltir cannot import runs in PyTorch: its warning
   line is printed, and the row's time is then PyTorch's.
2. A plain call `model(x)` of each boltc build of the five benchmark models against its
   graph replay (`bench/models.py`'s builders and timing); the issue asks for 10%.
3. DLPack: the plain call on a torch input and, where CuPy is importable, on a CuPy
   array (its output read back through `cupy.from_dlpack`), against the numpy call's output.

    source bench/setup_gpu.sh && python3 -m bench.users_path [--batches 1,32] [--models ...] [--no-interpreter]

Timing is bench/models.py's: CUDA events, median of 50 after 10 warm-ups. The table is printed last.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

from bench.models import (
    MODELS,
    compiled_model,
    forward,
    interpreter_output,
    make_model,
    print_table,
    relative_error,
    replay_ms,
    time_ms,
)

COMPILE_MODELS = ("resnet50", "bert")
HEADER = ("what", "model", "ours ms", "graph replay ms", "ours / replay", "within 10%", "correct / error")


def ratio_cells(ours: float, replay: float) -> tuple[str, str, str, str]:
    return f"{ours:.3f}", f"{replay:.3f}", f"{ours / replay:.2f}", "yes" if ours <= 1.1 * replay else "NO"


def boltc_build(name: str, batch: int, model, work: Path):
    """boltc's f16 build of the model, loaded, with its inputs on the GPU and its graph-replay time."""
    from boltir.runtime import load

    result, inputs, _, _ = compiled_model(name, batch, model, work, "sm90", builds=1)
    compiled = load(result.directory)
    device_inputs = {k: v.cuda() for k, v in inputs.items()}
    return compiled, inputs, device_inputs, replay_ms(compiled, device_inputs)


def torch_compile_row(name: str, batch: int, model, work: Path, interpreter: bool) -> tuple:
    import torch

    from boltir.accuracy import judge

    compiled, inputs, device_inputs, graph_ms = boltc_build(name, batch, model, work)
    compiled.close()
    with torch.no_grad():
        reference = forward(name, model, inputs).float()
        peer = copy.deepcopy(model).half().cuda()
        half_inputs = {k: (v.half() if v.is_floating_point() else v) for k, v in device_inputs.items()}
        eager_error = relative_error(forward(name, peer, half_inputs), reference)
        del peer
        model.cuda()
        torch._dynamo.reset()
        fast = torch.compile(model, backend="boltir", options={"dtype": "f16"})
        start = time.monotonic()
        ours = forward(name, fast, device_inputs).float()
        print(f"torch.compile(backend='boltir') of {name} b{batch}: first call {time.monotonic() - start:.0f} s", flush=True)
        ms = time_ms(lambda: forward(name, fast, device_inputs))
        ours = forward(name, fast, device_inputs).float().clone()
    error = relative_error(ours, reference)
    if interpreter:
        verdict = judge(ours.cpu().numpy(), reference.numpy(), interpreter_output(work / f"{name}_b{batch}.onnx", "sm90", inputs),
                        framework_error=eager_error)
        correct = verdict.cell()
    else:
        correct = f"{'ok' if error <= max(1e-2, 1.1 * eager_error) else 'WRONG'} (fp32 {error:.1e}; no interpreter check)"
    torch._dynamo.reset()
    model.cpu()
    return ("torch.compile", f"{name} b{batch}", *ratio_cells(ms, graph_ms), correct)


def plain_call_rows(name: str, batch: int, model, work: Path) -> list[tuple]:
    """model(x) against graph replay; the DLPack inputs against the numpy call."""
    import numpy as np
    import torch

    compiled, inputs, device_inputs, graph_ms = boltc_build(name, batch, model, work)
    (host,) = compiled(**{k: v.numpy() for k, v in inputs.items()})
    (ours,) = compiled(**device_inputs)
    plain_ms = time_ms(lambda: compiled(**device_inputs))
    rows = [("model(x), torch", f"{name} b{batch}", *ratio_cells(plain_ms, graph_ms),
             f"vs numpy call {relative_error(ours, torch.from_numpy(host)):.1e}")]
    try:
        import cupy
    except ImportError:
        rows.append(("model(x), CuPy", f"{name} b{batch}", "-", "-", "-", "-", "cupy not importable"))
        compiled.close()
        return rows
    cupy_inputs = {k: cupy.from_dlpack(v) for k, v in device_inputs.items()}
    (out,) = compiled(**cupy_inputs)
    got = cupy.asnumpy(cupy.from_dlpack(out)).astype(np.float32)
    cupy_ms = time_ms(lambda: compiled(**cupy_inputs))
    error = float(np.linalg.norm(got - host.astype(np.float32)) / max(np.linalg.norm(host.astype(np.float32)), 1e-30))
    rows.append(("model(x), CuPy", f"{name} b{batch}", *ratio_cells(cupy_ms, graph_ms), f"vs numpy call {error:.1e}"))
    compiled.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="the plain-call models (part 2 and 3)")
    parser.add_argument("--compile-models", default=",".join(COMPILE_MODELS), help="the torch.compile models (part 1)")
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--plain-batches", default="1", help="the batches of the plain-call part")
    parser.add_argument("--work", default="/tmp/boltir-models")
    parser.add_argument("--no-interpreter", action="store_true", help="skip the f16 interpreter's check (minutes per model)")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    jobs = [("compile", name, int(b)) for name in args.compile_models.split(",") if name for b in args.batches.split(",")]
    jobs += [("plain", name, int(b)) for name in args.models.split(",") if name for b in args.plain_batches.split(",")]
    models = {}
    for kind, name, batch in jobs:
        model = models.setdefault(name, make_model(name))
        try:
            if kind == "compile":
                rows.append(torch_compile_row(name, batch, model, work, not args.no_interpreter))
            else:
                rows.extend(plain_call_rows(name, batch, model, work))
        except Exception as failure:  # noqa: BLE001 - one model's failure is a row
            import traceback

            traceback.print_exc()
            rows.append((kind, f"{name} b{batch}", "FAILED", str(failure).splitlines()[0][:100], "", "", ""))
        print("row:", " | ".join(map(str, rows[-1])), flush=True)
    import torch

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; times in ms, median of 50")
    print_table(HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
