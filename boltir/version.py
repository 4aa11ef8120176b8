"""boltir's version, as installed (a source tree that is not installed says 0+unknown)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("boltir")
except PackageNotFoundError:
    __version__ = "0+unknown"
