"""boltir: a multi-level compiler for neural-network inference on NVIDIA GPUs."""

from boltir.diagnostics import BoltError
from boltir.ir import make_context, parse_module, print_module, verify_module
from boltir.version import __version__

__all__ = ["BoltError", "compile", "compile_module", "make_context", "parse_module", "print_module", "verify_module", "__version__"]


def __getattr__(name: str):
    # boltir.compile and boltir.runtime load the backend only when asked for.
    if name == "compile":
        from boltir.compiler import compile

        return compile
    if name == "compile_module":  # torch.compile's backend without dynamo (boltir/torch_backend.py)
        from boltir.torch_backend import compile_module

        return compile_module
    if name == "runtime":
        import importlib

        return importlib.import_module("boltir.runtime")
    raise AttributeError(f"module 'boltir' has no attribute '{name}'")
