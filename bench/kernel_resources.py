"""What each kernel of a check script's build uses, by ptxas: registers, spills, stack and
barriers, for every GPU architecture its unit is compiled for. On the CPU, no GPU: the
units the script's `--build-only` looks up (bench/check_jobs.py) are compiled again, to a
scratch object, with `-Xptxas -v` added to their own flags.

    python3 -m bench.kernel_resources "bench.check_attention --only s512 --kernels overlap_q4"
    python3 -m bench.kernel_resources "bench.trace_attention" --only overlap_q4 --jobs 2

A unit of CUTLASS 3.x takes most of a minute; `--only TEXT` keeps the units whose kernel
name contains it. A kernel that spills is marked, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.check_jobs import check_jobs
from bench.tables import print_table

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")


@dataclass
class Usage:
    unit: str
    function: str
    arch: str
    registers: int = 0
    barriers: int = 0
    stack: int = 0
    spill_stores: int = 0
    spill_loads: int = 0


def short_name(mangled: str) -> str:
    """The kernel's boltir instance (`boltir_instances::NAME`), else its demangled name."""
    demangled = mangled
    if shutil.which("c++filt"):
        demangled = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip() or mangled
    found = re.search(r"boltir_instances::(\w+)", demangled)
    return found.group(1) if found else demangled[:80]


def parse(unit: str, output: str) -> list[Usage]:
    """ptxas's `-v` lines: one Usage per entry function and architecture."""
    usages: list[Usage] = []
    for line in output.splitlines():
        if entry := ENTRY.search(line):
            usages.append(Usage(unit, short_name(entry.group(1)), entry.group(2)))
        elif usages and (frame := FRAME.search(line)):
            usages[-1].stack, usages[-1].spill_stores, usages[-1].spill_loads = map(int, frame.groups())
        elif usages and (used := USED.search(line)):
            usages[-1].registers, usages[-1].barriers = int(used.group(1)), int(used.group(2) or 0)
    return usages


def resources(job, toolchain, scratch: Path) -> list[Usage]:
    from boltir.backends.cuda.toolchain.nvcc import safe_file_name

    source = scratch / f"{safe_file_name(job.name)}.cu"
    source.write_text(job.source)
    command = [*toolchain.compile_command(job, source, source.with_suffix(".o")), "-Xptxas", "-v"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"nvcc failed on {job.name}: {(result.stderr or result.stdout).strip().splitlines()[-1]}")
    return parse(job.name, result.stdout + result.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check", help="the check script and its arguments, e.g. 'bench.check_attention --only s512'")
    parser.add_argument("--only", help="the units whose kernel name contains this text")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="units compiled at once")
    args = parser.parse_args()
    os.environ.setdefault("BOLTIR_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".kcache"))

    from boltir.backends.cuda.toolchain.nvcc import Toolchain

    jobs = [job for job in check_jobs(args.check).values() if not args.only or args.only in job.name]
    if not jobs:
        raise SystemExit(f"no unit of {args.check!r} matches --only {args.only!r}")
    toolchain = Toolchain.find()
    from tqdm import tqdm

    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(resources, job, toolchain, Path(scratch)) for job in jobs]
        usages = [usage for future in tqdm(futures, desc="ptxas", unit="unit") for usage in future.result()]
    spilled = [u for u in usages if u.spill_stores or u.spill_loads]
    print_table(("unit", "kernel (where not the unit's)", "arch", "registers", "barriers", "stack B", "spill stores B", "spill loads B", ""),
                [(u.unit, "" if u.function == u.unit else u.function, u.arch, u.registers, u.barriers, u.stack, u.spill_stores, u.spill_loads,
                  "SPILLS" if u in spilled else "") for u in sorted(usages, key=lambda u: (u.unit, u.arch, u.function))])
    print(f"{len(jobs)} units, {len(usages)} kernels; {len(spilled)} spill")
    return 1 if spilled else 0


if __name__ == "__main__":
    sys.exit(main())
