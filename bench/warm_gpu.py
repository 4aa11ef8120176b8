"""Brings a freshly lent GPU to its working clocks before a timed stage: f16 matmuls for a
few seconds, with the SM clock read before and after. A cold card's first stage read
1.2-1.7x slow on the H100 (peers included), its SM clock at 345 of 1980 MHz
(bench/RESULTS.md, thirty-seventh session).

    bash bench/gpu_run.sh warm:30 kernels:60      # the `warm` stage first
    python3 -m bench.warm_gpu [--seconds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import time


def sm_clock() -> str:
    """The SM clock and its maximum as nvidia-smi reports them, e.g. "1980 MHz, 1980 MHz"."""
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm", "--format=csv,noheader"],
                                capture_output=True, text=True, check=False)
    except OSError as error:
        return f"unknown (nvidia-smi: {error.strerror or error})"
    if result.stdout.strip():
        return result.stdout.strip().replace("\n", "; ")
    return f"unknown ({(result.stderr.strip() or 'no output').splitlines()[0]})"


def warm(seconds: float) -> int:
    """Multiplies 8192² f16 matrices for `seconds`; returns how many products ran."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    products = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()
        products += 10
    return products


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="how long to keep the GPU busy")
    args = parser.parse_args()
    print(f"SM clock before: {sm_clock()}", flush=True)
    products = warm(args.seconds)
    print(f"{products} products of 8192² f16 in {args.seconds:.1f} s; SM clock after: {sm_clock()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
