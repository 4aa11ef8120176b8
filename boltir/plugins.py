"""Pass plugins: user passes (xDSL `ModulePass` subclasses) loaded without changing boltir.

Two ways in:
- a Python file given to `--pass-plugin FILE.py`: every `ModulePass` subclass defined in
  it is registered under its `name`;
- an installed package that declares an entry point in the group `boltir.passes`: the
  entry point names a `ModulePass` subclass, or a module whose subclasses are all taken.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from xdsl.passes import ModulePass

from boltir.diagnostics import BoltError

ENTRY_POINT_GROUP = "boltir.passes"


def passes_defined_in(module: ModuleType) -> list[type[ModulePass]]:
    """The concrete ModulePass subclasses a module defines itself (not ones it imports)."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, ModulePass)
        and value.__module__ == module.__name__
        and not inspect.isabstract(value)
        and isinstance(getattr(value, "name", None), str)
    ]


def _import_failure(path: Path, error: BaseException) -> BoltError:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    location = f"{path}:{frames[-1].lineno}" if frames else str(path)
    if isinstance(error, SyntaxError) and error.lineno is not None:
        location = f"{path}:{error.lineno}:{error.offset or 1}"
    return BoltError(f"pass plugin failed to import: {type(error).__name__}: {error}", location)


def load_pass_plugin(path: str | Path) -> list[type[ModulePass]]:
    """Imports a plugin file and returns the passes it defines."""
    path = Path(path).resolve()
    if not path.is_file():
        raise BoltError(f"cannot read pass plugin '{path}': no such file")
    module_name = f"boltir_plugin_{abs(hash(str(path)))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise BoltError(f"cannot load pass plugin '{path}': not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # any failure inside user code is reported, not raised
        del sys.modules[module_name]
        raise _import_failure(path, error) from error
    passes = passes_defined_in(module)
    if not passes:
        raise BoltError("pass plugin defines no ModulePass subclass with a name", str(path))
    return passes


def entry_point_passes() -> list[type[ModulePass]]:
    """Passes that installed packages declare in the `boltir.passes` entry-point group."""
    found: list[type[ModulePass]] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry.load()
        except Exception as error:
            raise BoltError(
                f"pass entry point '{entry.name} = {entry.value}' failed to load: {type(error).__name__}: {error}"
            ) from error
        if inspect.isclass(loaded) and issubclass(loaded, ModulePass):
            found.append(loaded)
        elif inspect.ismodule(loaded):
            found.extend(passes_defined_in(loaded))
        else:
            raise BoltError(
                f"pass entry point '{entry.name} = {entry.value}' is neither a ModulePass subclass nor a module"
            )
    return found


def register_passes(
    registry: dict[str, Callable[[], type[ModulePass]]], passes: list[type[ModulePass]], origin: str
) -> None:
    """Adds passes to a name -> factory registry, refusing to shadow an existing name."""
    for pass_type in passes:
        if pass_type.name in registry and registry[pass_type.name]() is not pass_type:
            raise BoltError(f"{origin} defines pass '{pass_type.name}', which is already registered")
        registry[pass_type.name] = lambda pass_type=pass_type: pass_type
