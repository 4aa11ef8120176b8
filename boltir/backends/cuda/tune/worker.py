"""The profiler's measuring process (started by `profiler.Tuner`, one at a time):

    python -m boltir.backends.cuda.tune.worker REQUEST.json

For each op of the request: random operands (a fixed seed per op), the op-level
interpreter's result as the reference, then each candidate stub of the generated profiler
library: one launch, compared with the reference, then timed. It prints one JSON line
before each candidate (`started`) and one with its outcome, so the parent knows which
candidate was running if this process dies. After an error that leaves the CUDA context
unusable it exits with code 3; the parent starts a new worker for what is left.
"""

from __future__ import annotations

import ctypes
import json
import math
import sys

import numpy as np

from boltir.dtypes import numpy_dtype
from boltir.interp import run
from boltir.ir import find_entry, make_context, parse_module

STICKY = 3
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2


def emit(**message) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class Library:
    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        self.lib.boltir_tune_error_string.restype = ctypes.c_char_p
        self.lib.boltir_tune_workspace.restype = ctypes.c_size_t
        for name in ("boltir_tune_launch", "boltir_tune_time", "boltir_tune_alloc", "boltir_tune_free", "boltir_tune_copy",
                     "boltir_tune_synchronize"):
            getattr(self.lib, name).restype = ctypes.c_int

    def message(self, code: int) -> str:
        return f"{self.lib.boltir_tune_error_string(code).decode(errors='replace')} (code {code})"

    def check(self, code: int, what: str) -> None:
        if code != 0:
            raise RuntimeError(f"{what}: {self.message(code)}")

    def alloc(self, nbytes: int) -> int:
        pointer = ctypes.c_void_p()
        self.check(self.lib.boltir_tune_alloc(ctypes.c_size_t(nbytes), ctypes.byref(pointer)), "allocating")
        return pointer.value

    def upload(self, array: np.ndarray) -> int:
        array = np.ascontiguousarray(array)
        pointer = self.alloc(array.nbytes)
        self.check(self.lib.boltir_tune_copy(ctypes.c_void_p(pointer), array.ctypes.data_as(ctypes.c_void_p),
                                             ctypes.c_size_t(array.nbytes), HOST_TO_DEVICE), "copying in")
        return pointer

    def download(self, pointer: int, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        self.check(self.lib.boltir_tune_copy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(pointer),
                                             ctypes.c_size_t(out.nbytes), DEVICE_TO_HOST), "copying out")
        return out

    def free(self, pointer: int) -> None:
        self.lib.boltir_tune_free(ctypes.c_void_p(pointer))

    def context_alive(self) -> bool:
        return self.lib.boltir_tune_synchronize() == 0


def relative_error(ours: np.ndarray, reference: np.ndarray) -> float:
    ours, reference = ours.astype(np.float64), reference.astype(np.float64)
    if not np.all(np.isfinite(ours)):
        return math.inf
    return float(np.linalg.norm(ours - reference) / max(np.linalg.norm(reference), 1e-30))


def operand_sets(set_bytes: int, l2_bytes: int, most: int) -> int:
    """How many copies of a launch's operands the timing loop rotates among: enough that
    they exceed three L2s, and never one: back-to-back calls on one set larger than the L2
    may find part of it still there (the L2 is not strictly LRU), which would time a
    memory-bound kernel above DRAM speed."""
    return min(most, max(2, -(-3 * l2_bytes // max(set_bytes, 1))))


def measure_op(library: Library, request: dict, item: dict) -> None:
    module = parse_module(open(item["module"]).read(), item["module"], ctx=make_context())
    entry = find_entry(module)
    rng = np.random.default_rng(1234 + item["op"])
    inputs = []
    for arg_type, scale in zip(entry.function_type.inputs, item["scales"], strict=True):
        values = rng.uniform(-1.0, 1.0, tuple(arg_type.get_shape())) * scale
        inputs.append(values.astype(numpy_dtype(arg_type.element_type)))
    (reference,) = run(module, {f"arg{i}": a for i, a in enumerate(inputs)})
    element = str(entry.function_type.outputs.data[0].element_type)
    tolerance = 1e-3 if element == "f32" else 1e-2
    set_bytes = sum(a.nbytes for a in inputs) + reference.nbytes
    count = operand_sets(set_bytes, request["l2_bytes"], most=16)
    allocated: list[int] = []
    try:
        sets = []
        for _ in range(count):
            pointers = [library.upload(a) for a in inputs]
            output = library.alloc(reference.nbytes)
            allocated.extend([*pointers, output])
            slots = pointers + [0] * (request["max_pointers"] - len(pointers) - 1) + [output]
            sets.append(slots)
        flat = (ctypes.c_void_p * (count * request["max_pointers"]))(*[p for s in sets for p in s])
        first_set = ctypes.cast(flat, ctypes.POINTER(ctypes.c_void_p))
        for candidate in item["candidates"]:
            index, stub = candidate["index"], candidate["stub"]
            emit(op=item["op"], candidate=index, started=True)
            bytes_needed = int(library.lib.boltir_tune_workspace(stub))
            workspace = library.alloc(bytes_needed) if bytes_needed else 0
            try:
                code = library.lib.boltir_tune_launch(stub, first_set, ctypes.c_void_p(workspace), ctypes.c_size_t(bytes_needed))
                if code != 0:
                    emit(op=item["op"], candidate=index, status="launch failed", detail=library.message(code))
                    if not library.context_alive():
                        sys.exit(STICKY)
                    continue
                error = relative_error(library.download(sets[0][-1], reference), reference)
                if not error < tolerance:
                    emit(op=item["op"], candidate=index, status="wrong", error=error,
                         detail=f"relative error {error:.3g} against the interpreter (tolerance {tolerance:g})")
                    continue
                timing, note = request["timing"], ""
                samples = (ctypes.c_float * request["repeats"])()

                def time_candidate(graph: bool) -> int:
                    return library.lib.boltir_tune_time(stub, first_set, count, ctypes.c_void_p(workspace),
                                                        ctypes.c_size_t(bytes_needed), request["warmup"], request["repeats"],
                                                        request["inner"], int(graph), samples)

                code = time_candidate(timing == "graph")
                if code != 0 and timing == "graph" and library.context_alive():
                    # a launcher that cannot be captured still gets a time, marked as such
                    timing, note = "stream", f"timed without a graph: capturing failed ({library.message(code)})"
                    code = time_candidate(False)
                if code != 0:
                    emit(op=item["op"], candidate=index, status="launch failed", detail=library.message(code))
                    if not library.context_alive():
                        sys.exit(STICKY)
                    continue
                emit(op=item["op"], candidate=index, status="ok", ms=float(np.median(np.frombuffer(samples, dtype=np.float32))),
                     error=error, timing=timing, detail=note)
            finally:
                if workspace:
                    library.free(workspace)
    finally:
        for pointer in allocated:
            library.free(pointer)


def main(argv: list[str]) -> int:
    request = json.loads(open(argv[1]).read())
    library = Library(request["library"])
    for item in request["ops"]:
        measure_op(library, request, item)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
