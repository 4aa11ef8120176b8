"""Calling CUTLASS instances' `extern "C"` launchers from Python: a ctypes wrapper around a
compiled library, with each op's arguments in the ABI that `codegen/cutlass_kernels.py`
documents (`launch_arguments`), which our own tiled families' launchers share
(`codegen/tiled_families.py`: an op kept at the op level, chosen for one of them).

    library = KernelLibrary("kernels.so")
    library.launch(op, pointers, stream=0)   # pointers: device addresses, ABI order

The problem sizes come from the op's static shapes. The GPU checks, the benchmarks and the
profiler call kernels this way; no GPU is needed to compute arguments.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import cutlass_kernels
from boltir.backends.cuda.codegen.tiled_families import generator_computing
from boltir.diagnostics import BoltError


def launch_arguments(op: Operation):
    """The op's launcher and arguments: a CUTLASS instance's, or one of our tiled families'
    (the same ABI)."""
    return (generator_computing(op) or cutlass_kernels).launch_arguments(op)


class KernelLibrary:
    """A shared library of emitted kernels, loaded with ctypes."""

    def __init__(self, path: Path | str):
        try:
            self.library = ctypes.CDLL(str(path))
        except OSError as error:
            raise BoltError(f"cannot load the kernel library {path}: {error}") from error
        self.library.boltir_error_string.restype = ctypes.c_char_p
        self.library.boltir_error_string.argtypes = [ctypes.c_int]

    def _function(self, name: str, restype):
        try:
            function = getattr(self.library, name)
        except AttributeError:
            raise BoltError(f"the kernel library has no launcher '{name}'") from None
        function.restype = restype
        return function

    def workspace_size(self, op: Operation) -> int:
        """The bytes of device workspace the op's launcher needs for its problem."""
        arguments = launch_arguments(op)
        function = self._function(f"{arguments.name}_workspace_size", ctypes.c_size_t)
        return int(function(*(ctypes.c_int(x) for x in arguments.problem)))

    def bind(self, op: Operation, pointers: list[int | None], *, workspace: int | None = None,
             workspace_bytes: int = 0, stream: int | None = None):
        """A zero-argument callable that launches the op's kernel with these arguments,
        converted once: repeated launches (benchmarks, the profiler) cost one ctypes call."""
        arguments = launch_arguments(op)
        if len(pointers) != len(arguments.operands):
            raise BoltError(f"{arguments.name} takes {len(arguments.operands)} pointers, got {len(pointers)}")
        function = self._function(arguments.name, ctypes.c_int)
        converted = (
            *(ctypes.c_void_p(p) for p in pointers),
            *(ctypes.c_int(x) for x in arguments.problem),
            ctypes.c_void_p(workspace),
            ctypes.c_size_t(workspace_bytes),
            ctypes.c_void_p(stream),
        )
        error_string = self.library.boltir_error_string

        def launch() -> None:
            code = function(*converted)
            if code != 0:
                message = error_string(code).decode(errors="replace")
                raise BoltError(f"{arguments.name} failed with code {code}: {message}")

        return launch

    def launch(self, op: Operation, pointers: list[int | None], *, workspace: int | None = None,
               workspace_bytes: int = 0, stream: int | None = None) -> None:
        """Runs the op's kernel, asynchronously on `stream`, with `pointers` (device
        addresses, or None for an absent operand) in `launch_arguments(op).operands`
        order. Raises a BoltError with the library's message on a nonzero code."""
        self.bind(op, pointers, workspace=workspace, workspace_bytes=workspace_bytes, stream=stream)()
