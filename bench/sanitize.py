"""compute-sanitizer on whole models (issue 17): `memcheck` (out-of-bounds and misaligned
accesses, leaks of device memory) and `racecheck` (shared-memory hazards) on one plain call
of each model's f16 sm90 build, through bench/run_once.py (numpy inputs, no torch in the
watched process).

    source bench/setup_gpu.sh && python3 -m bench.sanitize [--models resnet50,...] [--corpus googlenet,...] [--tools memcheck,racecheck]

Benchmark models (bench/models.py's) and corpus models (bench/corpus.py's registry, ONNX
frontend) are exported and compiled at batch 1 first, with the object cache as it is. The
table gives, per model and tool, the sanitizer's error count (its summary line) and its
time, or why it did not finish (a timeout is a row, not a pass).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

BENCHMARK = ("resnet50", "mobilenet_v2", "vgg16", "repvgg_a0", "bert")
CORPUS = ("googlenet", "mobilenet_v3_small", "convnext_tiny", "distilbert", "deeplabv3_mobilenet_v3_large")


def benchmark_build(name: str, work: Path) -> Path:
    from bench.models import compiled_model, make_model

    result, *_ = compiled_model(name, 1, make_model(name), work, builds=1)
    return Path(result.directory)


def corpus_build(name: str, work: Path) -> Path:
    import boltir.compiler
    from bench.corpus import ARCH, DTYPE, exported, registry

    _, _, onnx_path = exported(registry()[name], 1, False, work / f"{name}_b1.onnx")
    result = boltir.compiler.compile(onnx_path, work / f"{name}_b1_sanitize", arch=ARCH, dtype=DTYPE, progress=False)
    return Path(result.directory)


def errors_in(text: str) -> str | None:
    """The error count of a sanitizer's output, from its summary line (memcheck: "ERROR
    SUMMARY: 0 errors"; racecheck: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0
    warnings)"), or None when it printed none."""
    summary = re.search(r"ERROR SUMMARY: (\d+) error", text) or re.search(r"RACECHECK SUMMARY: .*?\((\d+) error", text)
    return summary.group(1) if summary else None


def sanitize(directory: Path, tool: str, timeout: float) -> tuple[str, str]:
    """(errors, seconds) of one sanitizer run on one plain call of the build."""
    command = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "1", sys.executable, "-m", "bench.run_once", str(directory)]
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out", f"> {timeout:.0f}"
    seconds = f"{time.monotonic() - start:.0f}"
    text = done.stdout + done.stderr
    errors = errors_in(text)
    if errors is None:
        tail = (text.strip().splitlines() or ["no output"])[-1][:100]
        return f"no summary (exit {done.returncode}): {tail}", seconds
    if errors != "0":
        print(text[-4000:], flush=True)  # the last errors, for the log
    return errors, seconds


def main() -> int:
    from bench.tables import print_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(BENCHMARK), help="bench/models.py's models")
    parser.add_argument("--corpus", default=",".join(CORPUS), help="bench/corpus.py's models")
    parser.add_argument("--tools", default="memcheck,racecheck")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per sanitizer run")
    parser.add_argument("--work", default="/tmp/boltir-sanitize")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    jobs = [(name, benchmark_build) for name in args.models.split(",") if name]
    jobs += [(name, corpus_build) for name in args.corpus.split(",") if name]
    rows = []
    for name, build in jobs:
        try:
            directory = build(name, work)
        except Exception as error:  # noqa: BLE001 - one model's failure is a row
            rows.append((name, "build", f"FAILED: {str(error).splitlines()[0][:100]}", "-"))
            continue
        for tool in args.tools.split(","):
            errors, seconds = sanitize(directory, tool, args.timeout)
            rows.append((name, tool, errors, seconds))
            print("row:", " | ".join(rows[-1]), flush=True)
    print_table(("model (b1, sm90 f16)", "tool", "errors", "s"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
