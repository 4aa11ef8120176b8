"""Where the time of our split GEMM goes (boltir/backends/cuda/codegen/wgsplit_gemm_kernels.py):
each CTA's phase timeline, from instances built with `TRACE_PHASES` (every CTA records the SM
clock and the global timer at eleven points), on BERT's batch-1 FFN GEMMs and every tile the
tuner races for them. One launch alone (after a synchronize) and the last of ten back to back
from the host, but on one set of inputs (the weight stays in the L2, where bench.kernels
rotates copies past it). (The last of ten replayed as a CUDA graph, as bench.kernels times
them, is not traced: its first replay failed with an illegal memory access on the GPU,
bench/RESULTS.md.) Prints one table last: per tile, the launch's span by the
global timer, the spread of the CTAs' entries, and each phase's median (and slowest) CTA:

- set-up: barriers initialized, the cluster synchronized, the grid dependency waited for
  (a second table splits it in these three parts);
- first k-tile: the first consumer group's wait for its first k-tile (the loads' latency);
- mainloop: that group's k-tiles, from its first wait to its partial tile stored in shared
  memory (the first k-tile's wait included); "last ring": the same for the CTA's last group;
- partials: from the last group's store, a cluster CTA's sum of its groups' partials, sent to
  the CTAs that finish them, and the wait for every CTA's sums of its own pairs (one CTA: the
  CTA's barrier);
- epilogue: the partials summed, the epilogue applied and stored;
- exit: the cluster barrier that keeps a CTA until its stores into peers have landed.

    source bench/setup_gpu.sh && python3 -m bench.trace_wgsplit [--only TEXT] [--build-only]

It also draws each tile's median CTA, phase by phase, into $OUT/wgsplit_phases.png.

The instances are not the ones builds use (the records add a few stores), so the phases
explain bench.kernels' times rather than replace them.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys

import numpy as np

from bench.harness import BoundKernel, build_library, random_inputs
from bench.kernels import wgsplit_cases
from bench.tables import print_table
from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg
from tests.support.op_modules import gemm_text

SHAPES = [("ffn1 128x3072x768", (128, 3072, 768)), ("ffn2 128x768x3072", (128, 768, 3072))]
"""BERT b1's FFN GEMMs (bias + ReLU, as bench.kernels' "b1 linear" rows)."""
SLOTS = 11
PHASES = (("set-up", 0, 1), ("to mainloop", 1, 2), ("first k-tile", 2, 8), ("mainloop", 2, 3), ("last ring", 2, 4),
          ("partials", None, 5), ("epilogue", 5, 6), ("exit", 6, 7))
"""(name, from slot, to slot): "partials" runs from the later of slots 3 and 4. Slot 8 is the
first k-tile's arrival in the first group's ring (the mainloop's latency before it streams)."""
SETUP_PHASES = (("barriers", 0, 9), ("CTA/cluster sync", 9, 10), ("dependency wait", 10, 1))
"""The set-up's parts, by the CTA's first thread: its ring's barriers initialized (and the TMA
descriptors prefetched), the CTA's (a cluster's) barrier, PDL's griddepcontrol.wait."""
DRAWN_PHASES = (("streaming", 8, 4),)
"""Phases the plot draws but the table leaves out: the last ring past the first k-tile's wait."""


def cases():
    out = []
    for label, (m, n, k) in SHAPES:
        out += wgsplit_cases(label, gemm_text(m, n, k))
    return out


def read_trace(library, case, ctas: int) -> np.ndarray:
    """[CTA][slot] of the last launch: SM clocks, then global-timer nanoseconds."""
    name = wg.kernel_name(case.op)
    function = getattr(library.library, f"{name}_trace")
    function.restype, function.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
    buffer = (ctypes.c_uint64 * (ctas * 2 * SLOTS))()
    status = function(buffer, ctypes.sizeof(buffer))
    if status:
        raise RuntimeError(f"{name}_trace: CUDA error {status}")
    return np.frombuffer(buffer, dtype=np.uint64).reshape(ctas, 2 * SLOTS).astype(np.int64)


def phases(trace: np.ndarray) -> dict[str, tuple[float, float]]:
    """Each phase's (median, slowest) CTA in µs, from the SM clock at the rate the global
    timer gives it; the span and the entries' spread from the global timer."""
    clocks, timer = trace[:, :SLOTS], trace[:, SLOTS:]
    elapsed = timer[:, 7] - timer[:, 0]
    rate = statistics.median((clocks[:, 7] - clocks[:, 0])[elapsed > 0] / elapsed[elapsed > 0])  # cycles a ns
    out = {"span": ((timer[:, 7].max() - timer[:, 0].min()) / 1e3,) * 2,
           "entry spread": ((timer[:, 0].max() - timer[:, 0].min()) / 1e3,) * 2, "GHz": (rate, rate)}
    for name, start, end in PHASES + SETUP_PHASES + DRAWN_PHASES:
        begin = np.maximum(clocks[:, 3], clocks[:, 4]) if start is None else clocks[:, start]
        micros = (clocks[:, end] - begin) / rate / 1e3
        out[name] = (float(np.median(micros)), float(micros.max()))
    return out


TIMELINE = (("set-up", "#999999"), ("to mainloop", "#cccccc"), ("first k-tile", "#aabbdd"), ("streaming", "#4477aa"),
            ("partials", "#ee6677"), ("epilogue", "#ccbb44"), ("exit", "#66ccee"))
"""The phases that follow one another in a CTA, as drawn: the mainloop is the first k-tile's
wait, then the last ring's streaming (the partials' barrier counts from its end)."""


def plot(results: list[tuple[str, dict]], path: str) -> None:
    """One bar a tile: its median CTA's phases end to end, in µs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.45 * len(results) + 1.2))
    for row, (label, result) in enumerate(results):
        left = 0.0
        for name, color in TIMELINE:
            width = result[name][0]
            legend = "mainloop streaming (last ring)" if name == "streaming" else name
            ax.barh(row, width, left=left, color=color, label=legend if row == 0 else None)
            left += width
    ax.set_yticks(range(len(results)), [label for label, _ in results])
    ax.invert_yaxis()
    ax.set_xlabel("µs from the CTA's first instruction (median CTA)")
    # two rows of entries: one row of seven runs past the figure's width
    ax.legend(ncol=(len(TIMELINE) + 1) // 2, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("wrote", path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="the cases whose label contains this text (comma-separated: any of them)")
    parser.add_argument("--library", default="/tmp/boltir-bench/wgsplit_trace.so")
    parser.add_argument("--build-only", action="store_true", help="compile the traced instances and stop (fills the object cache)")
    args = parser.parse_args()
    wg.TRACE_PHASES = True
    selected = [case for case in cases() if not args.only or any(text in case.label for text in args.only.split(","))]
    library = build_library(selected, args.library)
    if args.build_only:
        return 0
    import torch

    from tests.support.torch_arrays import to_torch

    rng = np.random.default_rng(0)
    rows, setups, alone = [], [], []
    for case in selected:
        kernel = BoundKernel(library, case, {name: to_torch(value) for name, value in random_inputs(case, rng).items()})
        ctas = wg.ctas_of(case.op, wg.marked_tile(case.op))
        for _ in range(20):
            kernel()
        torch.cuda.synchronize()
        for how, launches in (("alone", 1), ("10th of 10", 10)):
            for _ in range(launches):
                kernel()
            torch.cuda.synchronize()
            result = phases(read_trace(library, case, ctas))
            if launches == 1:
                alone.append((case.label.replace(" wgsplit", ""), result))
            rows.append((case.label, how, f"{ctas}", f"{result['GHz'][0]:.2f}", f"{result['span'][0]:.2f}",
                         f"{result['entry spread'][0]:.2f}",
                         *(f"{result[name][0]:.2f} ({result[name][1]:.2f})" for name, _, _ in PHASES)))
            setups.append((case.label, how, *(f"{result[name][0]:.2f} ({result[name][1]:.2f})" for name, _, _ in SETUP_PHASES)))
            print("  " + " | ".join(rows[-1]), flush=True)
    print()
    print("our split GEMM's phases, µs: median CTA (slowest CTA); span and entry spread by the global timer")
    print_table(("case", "launch", "CTAs", "SM GHz", "span", "entry spread", *(name for name, _, _ in PHASES)), rows)
    print()
    print("the set-up's parts, µs: median CTA (slowest CTA)")
    print_table(("case", "launch", *(name for name, _, _ in SETUP_PHASES)), setups)
    plot(alone, os.path.join(os.environ.get("OUT", "."), "wgsplit_phases.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
