"""Keeps in the object cache only what one GPU call needs, so that `.kcache/objects` fits
the device call's carry limit (64 MiB with the wheels); the rest waits in `.kcache/aside/`.

    python3 -m bench.carry_objects --models resnet50,bert --batches 1,32 --skip bert:1 \
        --builds sm90,sm90-2x --tune-models resnet50:1,resnet50:32,bert:32
    python3 -m bench.carry_objects --restore        # everything back into objects/
    python3 -m bench.carry_objects --models resnet50 --batches 32 \
        --check "bench.check_attention --only s512 --kernels overlap_q4"   # and a check script's objects

Needed: the candidate units the tuner compiles for each tuned model, in order (its
`compile_units`: an earlier tuning's objects serve the later ones; their members,
`.kcache/members`, let the tuned build that follows link the winners from them), then
the translation units of each (model, batch, build) as bench/models.py compiles them
(heuristic builds), then the objects each `--check` script's `--build-only` asks the cache
for (it runs here, in this process, and compiles what is missing). An object that is
needed but not in the cache is counted as missing: `--compile` compiles it here first (the
tuner's units the tuner's way).
Run with BOLTIR_CACHE_DIR pointing at the cache (default `.kcache`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from bench.check_jobs import check_jobs

ROOT = Path(__file__).resolve().parents[1]


def model_units(name: str, batch: int, build: str, work: Path) -> list:
    from bench import models
    from boltir.backends.cuda.codegen.host_program import build_program
    from boltir.compiler import lower_model

    arch, cutlass = models.BUILDS[build]
    onnx_path = work / f"{name}_b{batch}.onnx"
    if not onnx_path.exists():
        models.export(name, models.make_model(name), models.example_inputs(name, batch), onnx_path)
    module, _, _ = lower_model(onnx_path, arch=arch, dtype="f16", cutlass=cutlass, tuning_db=models.HEURISTIC_DB,
                               pipeline=models.build_pipeline(build, models.HEURISTIC_DB))
    return build_program(module).units


def tuning_objects(name: str, batch: int, work: Path, arch: str, compile_missing: bool,
                   max_candidates: int | None = None) -> tuple[list, list[Path]]:
    """A model's tuning (`name` "facts": the reference workloads of `bench/tune.py --facts`), as `bench/tune.py` runs it
    after the tunings before it: the candidate units still to compile, and the cached
    objects that hold the others. `compile_missing` compiles them first, the tuner's way
    (its units and their members), so that the GPU's tuner finds them all."""
    import tempfile

    from bench.tune import facts_ops, model_ops
    from boltir.backends.cuda.tune.database import TuningDatabase
    from boltir.backends.cuda.tune.tuner import Tuner

    database = TuningDatabase.open(work / "carry-objects-empty.sqlite", fresh=True)
    tuner = Tuner(database, arch, 3, progress="always", gpu=("(planning only)", 132, arch), max_candidates=max_candidates)
    items = facts_ops() if name == "facts" else model_ops(name, batch, work, arch)
    _, jobs = tuner.plan([op for _, op in items])
    if compile_missing:
        with tempfile.TemporaryDirectory() as scratch:
            tuner._build(jobs, Path(scratch))
    groups, unit, ready = tuner.compile_units(jobs)
    return [unit(group) for group in groups], list(ready.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="")
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--skip", default="", help="model:batch pairs to leave out")
    parser.add_argument("--builds", default="sm90")
    parser.add_argument("--tune-models", default="", help="model:batch pairs whose candidates the tuner compiles (facts:0: the reference workloads)")
    parser.add_argument("--max-candidates", type=int, default=None, help="the tuner's bound (bench/tune.py's --max-candidates)")
    parser.add_argument("--arch", default="sm90")
    parser.add_argument("--work", default="/tmp/boltir-models")
    parser.add_argument("--keep", action="append", default=[], metavar="FILE",
                        help="also keep the objects this file names, one a line")
    parser.add_argument("--check", action="append", default=[], metavar="'MODULE ARGS'",
                        help="also keep the objects a check script's build needs: runs `python -m MODULE ARGS --build-only` "
                             "here (compiling what is missing) and keeps every object it looked up")
    parser.add_argument("--restore", action="store_true", help="move every object back and stop")
    parser.add_argument("--compile", action="store_true", help="compile the needed objects that are missing, here")
    parser.add_argument("--as-gpu", default="", metavar="NAME",
                        help="build as on that GPU (e.g. 'NVIDIA H200'): its shipped tuning records, as the device's default builds take them")
    args = parser.parse_args()
    if args.as_gpu:
        from boltir.backends.cuda.tune.selectors import build_as_gpu

        build_as_gpu(args.as_gpu)
    os.environ.setdefault("BOLTIR_CACHE_DIR", str(ROOT / ".kcache"))

    from boltir.backends.cuda.toolchain.nvcc import (
        ObjectCache,
        Toolchain,
        cache_root,
        objects_of_larger_units,
    )

    objects, aside = cache_root() / "objects", cache_root() / "aside"
    aside.mkdir(parents=True, exist_ok=True)
    for path in aside.glob("*.o"):
        shutil.move(path, objects / path.name)
    if args.restore:
        print(f"{len(list(objects.glob('*.o')))} objects in {objects}")
        return 0

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    units, ready = [], []
    for pair in filter(None, args.tune_models.split(",")):  # in the GPU call's order: tunings first
        name, batch = pair.split(":")
        to_compile, cached = tuning_objects(name, int(batch), work, args.arch, args.compile, args.max_candidates)
        units += to_compile
        ready += cached
    pairs = [(m, int(b)) for m in filter(None, args.models.split(",")) for b in args.batches.split(",")
             if f"{m}:{b}" not in args.skip.split(",")]
    for name, batch in pairs:
        for build in args.builds.split(","):
            units += model_units(name, batch, build, work)
    toolchain = Toolchain.find()
    needed = {toolchain.object_key(unit): unit for unit in units}
    cache = ObjectCache(cache_root())
    supplied = objects_of_larger_units([k for k in needed if not cache.object_path(k).exists()], set(needed), cache)
    needed.update({container: needed[key] for key, container in supplied.items()})
    keep = set(needed) | {path.stem for path in ready}
    for command in args.check:
        checked = set(check_jobs(command))
        held = objects_of_larger_units([k for k in checked if not cache.object_path(k).exists()], checked, cache)
        keep |= checked | set(held.values())
    for listing in args.keep:
        keep |= {Path(line.strip()).stem for line in Path(listing).read_text().splitlines() if line.strip()}
    missing = [key for key in needed if key not in supplied and not (objects / f"{key}.o").exists()]
    if missing and args.compile:
        from boltir.backends.cuda.toolchain.nvcc import compile_objects

        compile_objects([needed[key] for key in missing], progress="always")
        missing = []
    for key in missing:
        print(f"not compiled yet: {needed[key].name} ({needed[key].arch})")
    moved = 0
    for path in objects.glob("*.o"):
        if path.stem not in keep:
            shutil.move(path, aside / path.name)
            moved += 1
    kept = sum(p.stat().st_size for p in objects.glob("*.o"))
    print(f"kept {len(list(objects.glob('*.o')))} objects ({kept / 2**20:.1f} MiB), moved {moved} to {aside}; "
          f"{len(missing)} needed objects are not compiled yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
