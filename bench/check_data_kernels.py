"""Builds every data-movement and elementwise kernel family (boltir/backends/cuda/codegen/
data_kernels.py) into one shared library, runs each case (tests/support/data_kernel_cases.py)
on the GPU through ctypes on torch tensors, and compares with the op-level interpreter's
run of the module (after fuse-elementwise, for the fused cases), on fresh random inputs.
The bar: ‖Δ‖/‖ref‖ < 1e-2 for f16/bf16, 1e-5 for f32/f64, exact (bit for bit) for
integers, booleans and data movement. Vectorized cases also run with every pointer one element off its 16-byte
alignment (the launcher's one-element fallback). Prints a pass/fail table last; exits 1 if
any case fails.

    source bench/setup_gpu.sh && python3 -m bench.check_data_kernels [--only SUBSTRING]
    python3 -m bench.check_data_kernels --list          # every case's kernel; no GPU, no nvcc
    BOLTIR_CACHE_DIR=.kcache python3 -m bench.check_data_kernels --build-only
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from boltir.backends.cuda.codegen import data_kernels
from boltir.interp import run
from tests.support.data_kernel_cases import (
    build_library,
    cases,
    compare,
    describe,
    exact_case,
    prepare,
    random_inputs,
    run_on_gpu,
    tolerance,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="emit every case's kernel and print it; no GPU, no nvcc")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop (fills the object cache)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/data_kernels.so")
    args = parser.parse_args()

    rows, prepared = [], []
    for case in cases():
        if args.only and args.only not in case.label:
            continue
        try:
            prepared.append(prepare(case))
        except Exception as error:  # noqa: BLE001 - a case that cannot emit is a failure row
            rows.append((case.label, "-", "-", "emit failed: " + str(error).splitlines()[0][:80], "FAIL"))
    if args.list:
        for case in prepared:
            print(f"{case.label:78s} {describe(case)}")
        for row in rows:
            print(f"{row[0]:78s} {row[3]}")
        print(f"{len(prepared)} cases, {len({data_kernels.kernel_name(c.op) for c in prepared})} distinct kernels")
        return 0 if not rows else 1

    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(prepared, args.library)
    print(f"built the kernels of {len(prepared)} cases in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 0 if not rows else 1

    import torch

    rng = np.random.default_rng(args.seed)
    for case in prepared:
        vectorized = "vector=1 " not in data_kernels.instance_key(case.op) + " "
        for offset in (0, 1) if vectorized else (0,):
            label = case.label + (" [misaligned]" if offset else "")
            try:
                inputs = random_inputs(case, rng)
                with np.errstate(all="ignore"):
                    (expected,) = run(case.module, inputs)
                got = run_on_gpu(library, case, inputs, offset)
                error, passed = compare(case, got, np.asarray(expected))
                bar = "exact" if exact_case(case) else f"< {tolerance(case):.0e}"
                shown = f"{int(error)} differ" if exact_case(case) else f"{error:.2e}"
                rows.append((label, describe(case), shown, bar, "pass" if passed else "FAIL"))
            except Exception as error:  # noqa: BLE001
                traceback.print_exc()
                rows.append((label, describe(case), "-", str(error).splitlines()[0][:60], "FAIL"))

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    header = ("case", "kernel", "error", "bar", "result")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(5)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(v.ljust(w) for v, w in zip(row, widths)))
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
