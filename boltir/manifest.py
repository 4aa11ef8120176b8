"""The interface a compiled model's `manifest.json` describes: one `TensorSpec` per input
and output (name, shape, element type), shared by the compiler that writes it, the runtime
that checks calls against it and the debugger that reads launches back."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from boltir.diagnostics import BoltError
from boltir.dtypes import element_type_name, numpy_dtype_from_name


def read_manifest(directory: Path) -> dict:
    """The parsed `manifest.json` of a compiled model's directory; a BoltError, in one line,
    where there is none or it does not parse."""
    path = Path(directory) / "manifest.json"
    if not path.is_file():
        raise BoltError(f"'{directory}' is not a compiled boltir model: no manifest.json (boltc MODEL -o DIR writes one)")
    try:
        return json.loads(path.read_text())
    except (ValueError, OSError) as error:
        raise BoltError(f"cannot read '{path}': {error}") from error


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def numpy_dtype(self) -> np.dtype:
        return numpy_dtype_from_name(self.dtype)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.numpy_dtype.itemsize

    def describe(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"

    @staticmethod
    def of_type(name: str, tensor_type) -> TensorSpec:
        """The spec of an IR tensor type."""
        return TensorSpec(name, tuple(tensor_type.get_shape()), element_type_name(tensor_type.element_type))

    @staticmethod
    def from_manifest(entry: dict) -> TensorSpec:
        return TensorSpec(entry["name"], tuple(entry["shape"]), entry["dtype"])

    def to_manifest(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype}


def manifest_entries(names: Iterable[str], types: Iterable) -> list[dict]:
    """The manifest's `inputs` or `outputs` list for these names and IR tensor types."""
    return [TensorSpec.of_type(n, t).to_manifest() for n, t in zip(names, types, strict=True)]
