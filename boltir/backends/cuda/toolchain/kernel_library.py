"""Calling the emitter's `extern "C"` launchers from Python: one op's arguments, in the
ABI that `emitter.py` documents, and a ctypes wrapper around a compiled library.

    arguments = launch_arguments(op)     # LaunchArguments(name, operands, problem)
    library = KernelLibrary("kernels.so")
    library.launch(op, pointers, stream=0)   # pointers: device addresses, ABI order

The problem sizes come from the op's static shapes. The GPU checks, the benchmarks and the
profiler call kernels this way; no GPU is needed to compute arguments.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from pathlib import Path

from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda.emitter import family, kernel_name
from boltir.diagnostics import BoltError
from boltir.dialects.graph import tensor_shape


@dataclass(frozen=True)
class LaunchArguments:
    """A launcher's name, its pointer operands in ABI order (None where the op has no such
    operand; the output last) and the integers that follow the pointers."""

    name: str
    operands: tuple[SSAValue | None, ...]
    problem: tuple[int, ...]


def _conv_window(op: Operation) -> tuple[int, ...]:
    pads, strides, dilations = op.prop_value("pads"), op.prop_value("strides"), op.prop_value("dilations")
    # The launchers take the top and left pads; the others follow from P and Q.
    return (pads[0], pads[1], strides[0], strides[1], dilations[0], dilations[1])


def launch_arguments(op: Operation) -> LaunchArguments:
    """The launcher name, pointer operands and problem integers of a cutlass template op."""
    kind = family(op)
    out = tensor_shape(op.output.type)
    if kind == "gemm":
        a = tensor_shape(op.a.type)
        k = a[-1] if op.prop_value("layout_a") == "row" else a[-2]
        problem = (math.prod(out[:-2]), out[-2], out[-1], k)
        operands = (op.a, op.b, op.bias, op.residual, op.output)
    elif kind in ("conv2d_fprop", "depthwise_conv2d_fprop"):
        n, h, w, c = tensor_shape(op.input.type)
        k, r, s, _ = tensor_shape(op.filter.type)
        problem = (n, h, w, c, k, r, s, out[1], out[2], *_conv_window(op))
        operands = (op.input, op.filter, op.bias, op.residual, op.output)
    elif kind == "b2b_gemm":
        a = tensor_shape(op.a.type)
        m0, k0 = math.prod(a[:-1]), a[-1]
        n0 = tensor_shape(op.b0.type)[0]
        n1 = tensor_shape(op.b1.type)[0]
        problem = (m0, n0, k0, m0, n1, n0)
        operands = (op.a, op.b0, op.b1, op.bias0, op.bias1, op.output)
    else:
        n, h, w, c = tensor_shape(op.input.type)
        k0, r, s, _ = tensor_shape(op.filter0.type)
        k1 = tensor_shape(op.filter1.type)[0]
        problem = (n, h, w, c, k0, r, s, out[1], out[2], *_conv_window(op), k1)
        operands = (op.input, op.filter0, op.filter1, op.bias0, op.bias1, op.output)
    return LaunchArguments(kernel_name(op), operands, tuple(int(x) for x in problem))


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
