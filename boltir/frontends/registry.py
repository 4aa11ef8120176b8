"""The converter tables of the frontends: `@converter("Add", "Sub")` files a function
under each op name it is given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

Function = TypeVar("Function", bound=Callable)


def registrar(table: dict[str, Callable]) -> Callable[..., Callable[[Function], Function]]:
    """A decorator factory that files the decorated function in `table` under each of
    the names it is called with."""

    def converter(*names: str) -> Callable[[Function], Function]:
        def register(function: Function) -> Function:
            for name in names:
                table[name] = function
            return function

        return register

    return converter
