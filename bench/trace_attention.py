"""Where the time of our Hopper attention mainloop goes (the "overlap" schedules,
boltir/backends/cuda/codegen/templates/boltir_attention_sm90_overlap.h): instances built with
`attention_sm90_kernels.TRACE_STEPS` record, for each MMA warp group, the global timer at its
events (a tile's entry, Q ready, each key step's top, its scores ready, its softmax done, the
previous P·V product done, the last product done, the tile's exit), and the warp that loads Q
its loads' start and issue (Q_PHASES). One launch after warm-up
calls, on issue 16's workloads. Prints one table last: per case, the launch's span, the traced
and untraced kernel's graph-replay time, and each phase's median (µs) over every warp group's
tiles and steps:

- Q wait: a tile's entry to its Q ready;
- S wait: a step's top to its scores ready (the K tile's wait and the Q·Kᵀ product);
- softmax: scores ready to P ready (the previous step's P·V runs meanwhile);
- P·V wait: P ready to the previous product done (what the softmax did not hide);
- last P·V: the tile's last product, issued after its last softmax, alone;
- tail: the last product done to the tile's exit (the rows' sums);
- gap: a tile's exit to the warp group's next entry, and its three parts: the order wait (the
  example's kernel waits at its warp-group order barrier before each epilogue), the epilogue
  (O's TMA stores and their wait; the traced units wrap it in two events) and the next start.

    source bench/setup_gpu.sh && python3 -m bench.trace_attention [--only TEXT] [--build-only]

The traced instances are not the ones builds use (one thread a warp group stores its events),
so the phases explain bench.check_attention's times rather than replace them.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from collections import defaultdict
from statistics import median

import numpy as np

from bench.check_attention import Bound, Case, build_library, random_inputs
from bench.tables import print_table
from boltir.backends.cuda.codegen import attention_kernels as ak
from boltir.backends.cuda.codegen import attention_sm90_kernels as sm90
from tests.support.torch_arrays import to_torch

GROUPS = 2 * 264
"""The records' warp groups (the header's kTraceGroups)."""
EVENTS = 2048
"""A warp group's records (kTraceEvents)."""
BLOCKS = 264
"""The Q warp's records: one stream a block (kTraceBlocks)."""
Q_EVENTS = 512
"""A block's Q-warp records (kTraceQEvents)."""
EVENT_NAMES = {1: "entry", 2: "q", 3: "top", 4: "scores", 5: "softmax", 6: "product", 7: "last", 8: "exit",
               9: "epilogue", 10: "epilogue done"}
Q_EVENT_NAMES = {1: "load start", 2: "load issued"}
PHASES = ("Q wait", "S wait", "softmax", "P·V wait", "last P·V", "tail", "gap", "order wait", "epilogue", "next start")
Q_PHASES = ("Q stage wait", "Q issue to entry", "Q issue to ready")
"""The Q warp against the warp groups: its wait for free Q stages before a tile's loads; from
their issue to the warp group's entry into that tile (negative: issued after it entered); from
their issue to the warp group's Q ready (the load's latency as the warp group sees it)."""


def cases() -> list[Case]:
    out = []
    for schedule in ("overlap", "overlap_q4", "overlap_q4_sums"):
        for seq in (512, 128):
            out.append(Case(f"b32 h12 s{seq} d64 BHSD {schedule}", "BHSD", 32, 12, seq, seq, 64, {}, f"sm90:{schedule}"))
    out.append(Case("b32 h12 s512 d64 + mask BHSD overlap", "BHSD", 32, 12, 512, 512, 64, {"bias": (32, 1, 1, 512)},
                    "sm90:overlap"))
    return out


def _streams(buffer: np.ndarray, streams: int, events: int, names: dict) -> list[list[tuple[float, str]]]:
    records = buffer[streams:streams + streams * events].reshape(streams, events)
    return [[(float(int(r) >> 8) / 1000.0, names.get(int(r) & 0xFF, "?")) for r in records[i, :int(buffer[i])]]
            for i in range(streams)]


def read_trace(library, name: str) -> tuple[list[list[tuple[float, str]]], list[list[tuple[float, str]]]]:
    """Each warp group's events and each block's Q-warp events as (µs, name), and clears them."""
    consumers = GROUPS + GROUPS * EVENTS
    buffer = np.zeros(consumers + BLOCKS + BLOCKS * Q_EVENTS, dtype=np.uint64)
    function = getattr(library, f"{name}_trace")
    function.restype = ctypes.c_int
    code = function(ctypes.c_void_p(buffer.ctypes.data))
    if code:
        raise RuntimeError(f"{name}_trace returned {code}")
    return _streams(buffer, GROUPS, EVENTS, EVENT_NAMES), _streams(buffer[consumers:], BLOCKS, Q_EVENTS, Q_EVENT_NAMES)


def q_phases(groups: list[list[tuple[float, str]]], q_blocks: list[list[tuple[float, str]]]) -> dict[str, list[float]]:
    """Q_PHASES' durations (µs): warp group g of block b (stream 2b + g) takes its k-th tile's Q
    from block b's k-th loads."""
    found: dict[str, list[float]] = defaultdict(list)
    for block, events in enumerate(q_blocks):
        starts = [t for t, name in events if name == "load start"]
        issues = [t for t, name in events if name == "load issued"]
        found["Q stage wait"] += [i - s for s, i in zip(starts, issues)]
        for wg in (0, 1):
            if 2 * block + wg >= len(groups):
                continue
            consumer = groups[2 * block + wg]
            entries = [t for t, name in consumer if name == "entry"]
            readies = [t for t, name in consumer if name == "q"]
            found["Q issue to entry"] += [e - i for e, i in zip(entries, issues)]
            found["Q issue to ready"] += [r - i for r, i in zip(readies, issues)]
    return found


ENDS = {"entry": (("gap", "exit"), ("next start", "epilogue done")), "q": (("Q wait", "entry"),),
        "scores": (("S wait", "top"),), "softmax": (("softmax", "scores"),), "product": (("P·V wait", "softmax"),),
        "last": (("last P·V", "softmax"),), "exit": (("tail", "last"),), "epilogue": (("order wait", "exit"),),
        "epilogue done": (("epilogue", "epilogue"),)}
"""The event that ends each phase -> each (phase, the event that began it). The gap (a tile's
exit to the next entry) is the order wait (the example's kernel waits at its warp-group order
barrier before every epilogue), the epilogue and the next tile's start."""


def phases(groups: list[list[tuple[float, str]]]) -> dict[str, list[float]]:
    """Each phase's durations (µs) over every warp group's tiles and steps."""
    found: dict[str, list[float]] = defaultdict(list)
    for events in groups:
        last: dict[str, float] = {}
        for time, name in events:
            for phase, begun in ENDS.get(name, ()):
                if begun in last:
                    found[phase].append(time - last[begun])
            last[name] = time
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="the cases whose label contains this text")
    parser.add_argument("--build-only", action="store_true", help="compile the library and stop (fills the object cache)")
    parser.add_argument("--library", default="/tmp/boltir-check/attention_trace.so")
    args = parser.parse_args()
    sm90.TRACE_STEPS = True
    chosen = [case.make() for case in cases() if not args.only or args.only in case.label]
    path = build_library(chosen, args.library)
    if args.build_only:
        return 0

    import torch

    from bench.kernels import graph_time_ms
    from bench.check_attention import bound_on_current

    library = ctypes.CDLL(str(path))
    library.boltir_error_string.restype = ctypes.c_char_p
    rng = np.random.default_rng(2026)
    rows = []
    for case in chosen:
        name = ak.kernel_name(case.op)
        tensors = {k: to_torch(v) for k, v in random_inputs(case, rng).items()}
        bound = Bound(library, case, tensors, torch.cuda.current_stream().cuda_stream)
        traced_ms = graph_time_ms(lambda i, bound=bound: bound_on_current(bound)())
        for _ in range(3):
            bound()
        torch.cuda.synchronize()
        read_trace(library, name)  # clears the warm-up's events
        bound()
        torch.cuda.synchronize()
        groups, q_blocks = read_trace(library, name)
        times = [t for events in groups for t, _ in events]
        span = max(times) - min(times) if times else float("nan")
        found = phases(groups) | q_phases(groups, q_blocks)
        tiles = len(found["tail"])
        print(f"{case.label}: {sum(map(len, groups))} events, {tiles} warp-group tiles, span {span:.1f} µs, "
              f"traced graph {traced_ms:.4f} ms", flush=True)
        rows.append((case.label, f"{traced_ms * 1000:.1f}", f"{span:.1f}", str(tiles),
                     *(f"{median(found[p]):.2f} ({max(found[p]):.1f})" if found[p] else "-" for p in PHASES),
                     *(f"{median(found[p]):.2f}" if found[p] else "-" for p in Q_PHASES)))
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; one launch after three; µs, the median over every warp group's "
          "tiles and steps (the slowest in brackets)")
    print_table(("case", "traced graph µs", "span µs", "tiles", *PHASES, *Q_PHASES), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
