"""Weights: large constants kept out of the IR text.

A weight is a `dense_resource<key>` attribute; its bytes live in one process-wide
`WeightStore` and are printed in the `{-# dialect_resources #-}` section at the end of
the file, as MLIR does. Small constants stay inline as `dense<...>`.

xDSL keeps resource blobs in its module-level `builtin` dialect object, so two parses in
one process collide (the second renames handles and loses their data). boltir therefore
gives every `Context` its own `builtin` dialect whose resource interface only collects
the blobs of one parse; `intern_parsed_weights` then moves them into the store, renaming
a handle only when the same name already holds different data.

The one helper a pass calls to create a weight is `make_weight_attr(name_hint, array)`;
the one to read any constant is `constant_array(attr)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType
from xdsl.ir import Attribute, Operation

from boltir.diagnostics import BoltError, format_location
from boltir.dtypes import element_type_for, is_floating, is_numpy_native, numpy_dtype

INLINE_ELEMENT_LIMIT = 16
"""Constants with at most this many elements are printed inline as `dense<...>`."""

ELIDED_SUFFIX = ".elided"
"""Marks the handle of a weight parsed without its data (printed with --elide-weights)."""


class WeightStore:
    """Process-wide storage of weight arrays, keyed by resource handle.

    Handles are unique in the process: data parsed under a name that already holds
    different data gets a new name, and a weight parsed without data gets a reserved
    `.elided` name, so that it never picks up another model's weight of the same name."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._elided: set[str] = set()

    def _taken(self, handle: str) -> bool:
        return handle in self._arrays or handle in self._elided

    def reserve_elided(self, name: str) -> str:
        """A handle that stays without data, for a weight whose data was elided."""
        base = name if name.endswith(ELIDED_SUFFIX) else name + ELIDED_SUFFIX
        if base in self._elided:
            return base
        candidate, counter = base, 0
        while self._taken(candidate):
            candidate = f"{base}_{counter}"
            counter += 1
        self._elided.add(candidate)
        return candidate

    def add(self, name_hint: str, array: np.ndarray) -> str:
        """Stores `array` and returns its handle: `name_hint` itself, unless that name
        already holds different data, then `name_hint_N`."""
        array = np.array(array, order="C")  # a copy; unlike ascontiguousarray, keeps 0-d arrays 0-d
        array.flags.writeable = False
        key = sanitize_handle(name_hint)
        candidate, counter = key, 0
        while self._taken(candidate):
            existing = self._arrays.get(candidate)
            if existing is not None and existing.dtype == array.dtype and np.array_equal(existing, array):
                return candidate
            candidate = f"{key}_{counter}"
            counter += 1
        self._arrays[candidate] = array
        return candidate

    def get(self, key: str) -> np.ndarray:
        if key not in self._arrays:
            raise BoltError(
                f"weight '{key}' has no data: the IR was printed without its "
                "dialect_resources section (for example with --elide-weights)"
            )
        return self._arrays[key]

    def __contains__(self, key: str) -> bool:
        return key in self._arrays


WEIGHTS = WeightStore()


def sanitize_handle(name: str) -> str:
    """A resource handle must be a bare identifier; model names often are not."""
    handle = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
    if not handle or not re.match(r"[A-Za-z_]", handle[0]):
        handle = "w_" + handle
    return handle


def encode_blob(array: np.ndarray) -> str:
    """MLIR's blob text: 0x, a 4-byte little-endian alignment, then the raw bytes."""
    alignment = max(array.dtype.itemsize, 1).to_bytes(4, "little")
    return "0x" + (alignment + array.tobytes()).hex().upper()


def decode_blob(blob: str, tensor_type: TensorType) -> np.ndarray:
    dtype = numpy_dtype(tensor_type.element_type)
    shape = tuple(tensor_type.get_shape())
    try:
        raw = bytes.fromhex(blob[2:])[4:]
    except ValueError as error:
        raise BoltError(f"its blob is not hexadecimal ({error})") from error
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        raise BoltError(
            f"its blob holds {len(raw)} bytes but {tensor_type} needs {expected}"
        )
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


class WeightResources(OpAsmDialectInterface):
    """The `builtin` resource interface of one boltir Context.

    While parsing it only collects blobs; when printing it reads the process-wide
    store. `elide_larger_than` leaves big blobs out of the printout, for people.
    """

    def __init__(self) -> None:
        super().__init__()
        self.elide_larger_than: int | None = None

    def declare_resource(self, key: str) -> str:
        self._blob_storage.setdefault(key, "")
        return key

    def take_parsed_blobs(self) -> dict[str, str]:
        blobs, self._blob_storage = self._blob_storage, {}
        return blobs

    def build_resources(self, keys: Iterable[str]) -> dict[str, str]:
        resources: dict[str, str] = {}
        for key in keys:
            if key not in WEIGHTS:
                continue
            array = WEIGHTS.get(key)
            if self.elide_larger_than is not None and array.size > self.elide_larger_than:
                continue
            resources[key] = encode_blob(array)
        return resources


def intern_parsed_weights(module: Operation, resources: WeightResources) -> None:
    """Moves the blobs of one parse into the store, renaming handles on collision."""
    blobs = resources.take_parsed_blobs()
    renamed: dict[tuple[str, Attribute], DenseResourceAttr] = {}

    def intern(attr: DenseResourceAttr, op: Operation) -> DenseResourceAttr:
        handle = attr.resource_handle.data
        cache_key = (handle, attr.type)
        if not blobs.get(handle):
            # Printed elided: it keeps a name of its own, and reading it is an error.
            if cache_key not in renamed:
                renamed[cache_key] = DenseResourceAttr.from_params(WEIGHTS.reserve_elided(handle), attr.type)
            return renamed[cache_key]
        if cache_key not in renamed:
            try:
                array = decode_blob(blobs[handle], attr.type)
            except BoltError as error:
                raise BoltError(f"weight '{handle}': {error.message}", format_location(op.location)) from error
            new_handle = WEIGHTS.add(handle, array)
            renamed[cache_key] = (
                attr if new_handle == handle else DenseResourceAttr.from_params(new_handle, attr.type)
            )
        return renamed[cache_key]

    for op in module.walk():
        for table in (op.properties, op.attributes):
            for name, value in table.items():
                if isinstance(value, DenseResourceAttr):
                    table[name] = intern(value, op)


def make_weight_attr(name_hint: str, array: np.ndarray) -> DenseResourceAttr | DenseIntOrFPElementsAttr:
    """The attribute that holds `array`: inline when small, a stored resource otherwise.

    This is the helper every importer and pass uses to create constants."""
    array = np.asarray(array)
    tensor_type = TensorType(element_type_for(array.dtype), array.shape)
    if array.size <= INLINE_ELEMENT_LIMIT and is_numpy_native(array.dtype):
        values = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
        return DenseIntOrFPElementsAttr.from_list(tensor_type, values.reshape(-1).tolist())
    return DenseResourceAttr.from_params(WEIGHTS.add(name_hint, array), tensor_type)


def constant_array(attr: Attribute) -> np.ndarray:
    """The numpy value of a `dense<...>` or `dense_resource<...>` attribute."""
    if isinstance(attr, DenseResourceAttr):
        array = WEIGHTS.get(attr.resource_handle.data)
        tensor_type = attr.type
        if tuple(array.shape) != tuple(tensor_type.get_shape()):
            raise BoltError(
                f"weight '{attr.resource_handle.data}' has shape {array.shape}, "
                f"but its type is {tensor_type}"
            )
        return array
    if isinstance(attr, DenseIntOrFPElementsAttr):
        tensor_type = attr.get_type()
        dtype = numpy_dtype(tensor_type.element_type)
        values = np.array(attr.get_values(), dtype=np.float64 if is_floating(dtype) else np.int64)
        shape = tuple(tensor_type.get_shape())
        if values.size == 1 and int(np.prod(shape)) != 1:
            values = np.full(shape, values.reshape(-1)[0])  # splat
        return values.astype(dtype).reshape(shape)
    raise BoltError(f"attribute {attr} is not a dense constant")


def module_weight_handles(module: Operation) -> set[str]:
    """The handles of the stored weights a module references."""
    handles: set[str] = set()
    for op in module.walk():
        for value in (*op.properties.values(), *op.attributes.values()):
            if isinstance(value, DenseResourceAttr) and value.resource_handle.data in WEIGHTS:
                handles.add(value.resource_handle.data)
    return handles


def module_weight_count(module: Operation) -> int:
    return len(module_weight_handles(module))


def module_weight_bytes(module: Operation) -> int:
    """Total bytes of the stored weights a module references."""
    return sum(WEIGHTS.get(key).nbytes for key in module_weight_handles(module))
