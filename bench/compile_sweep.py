"""Compiles every distinct kernel instance the selection sweep emits (issue 17): CUTLASS's
and our own kernel families', each as its own translation unit as a model build compiles
it, with the real nvcc, and prints how many compiled, per family and kernel arch. Needs nvcc and the CUTLASS headers, no GPU; meant for the GPU host's cores.

    python3 -m bench.compile_sweep [--slow] [--jobs N] [--families stem_conv,"CUTLASS 3.x",...] [--part K/N]

`--part K/N` compiles every N-th instance (by family, then name) starting at the K-th, so
N device calls share the sweep evenly and together compile each instance once.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from boltir.backends.cuda.codegen.generator import unit_job
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.toolchain.nvcc import compile_objects_keep_going
from boltir.ir import make_context
from tests.support.selection_sweep import (
    TARGETS,
    all_cases,
    candidate_modules,
    heuristic_instances,
    instances,
)


def distinct_instances(slow: bool) -> tuple[dict[str, tuple], set[str]]:
    """Every distinct instance (by launcher name) as (its generator module, op), and which
    of them the heuristic chose."""
    found: dict[str, tuple] = {}
    chosen: set[str] = set()
    for _, text in all_cases(slow):
        for arch, cutlass in TARGETS:
            for generator, op in heuristic_instances(text, arch, cutlass):
                found.setdefault(generator.kernel_name(op), (generator, op))
                chosen.add(generator.kernel_name(op))
            for _, module in candidate_modules(text, arch, cutlass):
                LowerOpToCutlassPass().apply(make_context(), module)
                for generator, op in instances(module):
                    if generator.unsupported_reason(op) is None:
                        found.setdefault(generator.kernel_name(op), (generator, op))
    return found, chosen


def family_of(generator, op) -> str:
    """CUTLASS's generation ("CUTLASS 2.x" / "3.x") or our own family's name."""
    own = getattr(generator, "FAMILY", None)
    return own or ("CUTLASS 3.x" if generator.kernel_arch(op) == "sm90" else "CUTLASS 2.x")


def share(found: dict, part: int, parts: int, key) -> dict:
    """The `part`-th of `parts` shares of `found`: every parts-th entry in `key` order, so
    each share holds about as many of each family (their compile times differ 20×)."""
    ordered = sorted(found, key=key)
    return {name: found[name] for name in ordered[part - 1::parts]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="the slow suite's larger grid")
    parser.add_argument("--jobs", type=int, default=None, help="nvcc processes at once (default: cores, within memory)")
    parser.add_argument("--families", default="", help="compile only these, comma-separated: 'CUTLASS 2.x', 'CUTLASS 3.x', "
                                                       "depthwise_direct, stem_conv, skinny_gemm, splitk_conv (default: all)")
    parser.add_argument("--part", default="1/1", metavar="K/N", help="the K-th of N even shares of the instances (default: all)")
    args = parser.parse_args(argv)
    try:
        part, parts = (int(x) for x in args.part.split("/"))
        if not 1 <= part <= parts:
            raise ValueError
    except ValueError:
        parser.error(f"--part: expected K/N with 1 <= K <= N, got {args.part!r}")
    start = time.time()
    found, chosen = distinct_instances(args.slow)
    if args.families:
        wanted = {family.strip() for family in args.families.split(",")}
        known = {family_of(generator, op) for generator, op in found.values()}
        if wanted - known:
            parser.error(f"--families: no instances of {', '.join(sorted(wanted - known))} (there are: {', '.join(sorted(known))})")
        found = {name: pair for name, pair in found.items() if family_of(*pair) in wanted}
        chosen &= set(found)
    total = len(found)
    if parts > 1:
        found = share(found, part, parts, key=lambda name: (family_of(*found[name]), name))
        chosen &= set(found)
        print(f"part {part}/{parts}: {len(found)} of {total} instances", flush=True)
    jobs = [unit_job(name, generator, [op], generator.kernel_arch(op))
            for name, (generator, op) in found.items()]
    families = [family_of(generator, op) for generator, op in found.values()]
    print(f"{len(jobs)} distinct instances ({len(chosen)} chosen by the heuristic), "
          f"listed in {time.time() - start:.0f} s", flush=True)
    start = time.time()
    objects, failures = compile_objects_keep_going(jobs, jobs_limit=args.jobs, progress="always", description="compiling the sweep")
    seconds = time.time() - start
    by_family = Counter(zip(families, (job.arch for job in jobs)))
    ok = Counter((family, job.arch) for family, job, path in zip(families, jobs, objects) if path is not None)
    for failure in failures:
        print(f"FAILED {failure.job.name} ({failure.job.arch}): {failure.first_error}")
    print()
    print("| kernels | kernel arch | instances | compiled | failed |")
    print("|---|---|---|---|---|")
    for family, arch in sorted(by_family):
        print(f"| {family} | {arch} | {by_family[family, arch]} | {ok[family, arch]} | {by_family[family, arch] - ok[family, arch]} |")
    print(f"total: {len(jobs)} instances, {sum(ok.values())} compiled, {len(failures)} failed, "
          f"in {seconds:.0f} s of nvcc (heuristic's own: {len(chosen)})")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
