"""Programmatic dependent launch (PDL) on and off, on the GPU: for each model and batch, one
sm90 build (heuristic kernels), then its graph replay timed in child processes with
`BOLTIR_PDL=1` (CUTLASS 3.x kernels trigger their dependents at entry, and GEMMs of at most
256 rows prefetch their weight into the L2 before they wait), `BOLTIR_PDL=noprefetch` (the
same without the prefetch), `BOLTIR_PDL=late` (where CUTLASS triggers, after the mainloop)
and `BOLTIR_PDL=0` (the launchers read it once per process), in turn, three children
each. Each child also checks its output against PyTorch fp32; the PDL outputs must equal
the plain one bit for bit (the same kernels, only their launch overlaps), which is the race
check.

    python3 -m bench.pdl --models bert,resnet50 --batches 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench import models
from bench.tables import print_table

ROUNDS = 3
SETTINGS = ("1", "noprefetch", "late", "0")
"""BOLTIR_PDL: on with the trigger at entry and the weight prefetch, without the prefetch, on
with CUTLASS's trigger, off."""


def child(directory: str, inputs_path: str, reference_path: str, output_path: str) -> int:
    """Loads the build, runs it once, times its graph replay; prints one JSON line."""
    import torch

    from boltir.accuracy import relative_l2
    from boltir.runtime import load

    saved = np.load(inputs_path)
    device_inputs = {name: torch.from_numpy(saved[name]).cuda() for name in saved.files}
    compiled = load(directory)
    (out,) = compiled(**device_inputs)
    out = out.float().cpu().numpy() if hasattr(out, "cpu") else np.asarray(out, dtype=np.float32)
    np.save(output_path, out)
    ms = models.replay_ms(compiled, device_inputs)
    compiled.close()
    print(json.dumps({"ms": ms, "error": float(relative_l2(out, np.load(reference_path)))}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bert,resnet50,mobilenet_v2")
    parser.add_argument("--batches", default="1")
    parser.add_argument("--work", default="/tmp/boltir-pdl")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"child processes per setting (default {ROUNDS})")
    parser.add_argument("--child", nargs=4, metavar=("DIR", "INPUTS", "REFERENCE", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)

    import torch

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        model = models.make_model(name)
        for batch in (int(b) for b in args.batches.split(",")):
            result, inputs, cold, _ = models.compiled_model(name, batch, model, work, builds=1)
            with torch.no_grad():
                reference = models.forward(name, model, inputs).float().numpy()
            tag = work / f"{name}_b{batch}"
            np.savez(f"{tag}_inputs.npz", **{k: v.numpy() for k, v in inputs.items()})
            np.save(f"{tag}_reference.npy", reference)
            figures: dict[str, list[dict]] = {setting: [] for setting in SETTINGS}
            for _ in range(args.rounds):
                for setting in SETTINGS:
                    command = [sys.executable, "-m", "bench.pdl", "--child", str(result.directory), f"{tag}_inputs.npz",
                               f"{tag}_reference.npy", f"{tag}_out{setting}.npy"]
                    done = subprocess.run(command, env={**os.environ, "BOLTIR_PDL": setting}, capture_output=True, text=True)
                    if done.returncode != 0:
                        print(done.stderr[-2000:], file=sys.stderr)
                        raise SystemExit(f"{name} b{batch} with BOLTIR_PDL={setting}: the child failed")
                    figures[setting].append(json.loads(done.stdout.strip().splitlines()[-1]))
            on, unfetched, late, off = (statistics.median(f["ms"] for f in figures[s]) for s in SETTINGS)
            plain = np.load(f"{tag}_out0.npy")
            same = all(np.array_equal(np.load(f"{tag}_out{s}.npy"), plain) for s in ("1", "noprefetch", "late"))
            launches = len(result.manifest["launches"])
            row = (f"{name} b{batch}", str(launches), f"{off:.3f}", f"{late:.3f}", f"{unfetched:.3f}", f"{on:.3f}",
                   f"{off / late:.3f}", f"{off / on:.3f}", f"{unfetched / on:.3f}", f"{(off - on) * 1000 / launches:.2f}",
                   f"{figures['1'][0]['error']:.1e}", "yes" if same else "NO", f"{cold:.0f}")
            print("row: " + " | ".join(row), flush=True)
            rows.append(row)
    print(f"\nGPU: {torch.cuda.get_device_name()}; graph replay in ms, median of {args.rounds} processes each")
    print_table(("model", "launches", "plain ms", "PDL late ms", "PDL, no prefetch ms", "PDL ms", "plain / late",
                 "plain / PDL", "no prefetch / PDL", "µs saved per launch", "err vs fp32 (PDL)", "PDL outputs = plain",
                 "compile s"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
