"""boltir: a multi-level compiler for neural-network inference on NVIDIA GPUs."""

from importlib.metadata import PackageNotFoundError, version

from boltir.diagnostics import BoltError
from boltir.ir import make_context, parse_module, print_module, verify_module

try:
    __version__ = version("boltir")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["BoltError", "make_context", "parse_module", "print_module", "verify_module", "__version__"]
