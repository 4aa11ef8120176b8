"""boltir's passes: one module per pass; `registered_passes` is what the tools load."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """boltir's own passes by name, as lazy factories (xDSL's convention)."""
    return {}
