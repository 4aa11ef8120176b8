"""Compiles every distinct CUTLASS instance the selection sweep emits (issue 17), each as
its own translation unit as a model build compiles it, with the real nvcc, and prints how
many compiled. Needs nvcc and the CUTLASS headers, no GPU; meant for the GPU host's cores.

    python3 -m bench.compile_sweep [--slow] [--jobs N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from boltir.backends.cuda.codegen.cutlass_common import FAMILIES
from boltir.backends.cuda.codegen.cutlass_kernels import (
    emit_translation_unit,
    kernel_arch,
    kernel_name,
    unsupported_reason,
)
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.toolchain.nvcc import compile_objects_keep_going
from boltir.ir import make_context
from tests.support.selection_sweep import (
    TARGETS,
    all_cases,
    candidate_modules,
    heuristic_instances,
)


def distinct_instances(slow: bool) -> tuple[dict[str, object], set[str]]:
    """Every distinct instance (by launcher name), and which of them the heuristic chose."""
    instances: dict[str, object] = {}
    chosen: set[str] = set()
    for _, text in all_cases(slow):
        for arch, cutlass in TARGETS:
            for op in heuristic_instances(text, arch, cutlass):
                instances.setdefault(kernel_name(op), op)
                chosen.add(kernel_name(op))
            for _, module in candidate_modules(text, arch, cutlass):
                LowerOpToCutlassPass().apply(make_context(), module)
                for op in module.walk():
                    if type(op) in FAMILIES and unsupported_reason(op) is None:
                        instances.setdefault(kernel_name(op), op)
    return instances, chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="the slow suite's larger grid")
    parser.add_argument("--jobs", type=int, default=None, help="nvcc processes at once (default: cores, within memory)")
    args = parser.parse_args(argv)
    start = time.time()
    instances, chosen = distinct_instances(args.slow)
    jobs = [CompileJob(name, emit_translation_unit([op]), kernel_arch(op)) for name, op in instances.items()]
    print(f"{len(jobs)} distinct instances ({len(chosen)} chosen by the heuristic), "
          f"listed in {time.time() - start:.0f} s", flush=True)
    start = time.time()
    objects, failures = compile_objects_keep_going(jobs, jobs_limit=args.jobs, progress="always", description="compiling the sweep")
    seconds = time.time() - start
    by_arch = Counter(job.arch for job in jobs)
    ok_by_arch = Counter(job.arch for job, path in zip(jobs, objects) if path is not None)
    for failure in failures:
        print(f"FAILED {failure.job.name} ({failure.job.arch}): {failure.first_error}")
    print()
    print("| kernel arch | instances | compiled | failed |")
    print("|---|---|---|---|")
    for arch in sorted(by_arch):
        print(f"| {arch} ({'3.x' if arch == 'sm90' else '2.x'}) | {by_arch[arch]} | {ok_by_arch[arch]} | {by_arch[arch] - ok_by_arch[arch]} |")
    print(f"total: {len(jobs)} instances, {sum(ok_by_arch.values())} compiled, {len(failures)} failed, "
          f"in {seconds:.0f} s of nvcc (heuristic's own: {len(chosen)})")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
