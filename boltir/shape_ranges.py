"""Input dimensions given as ranges, the bucket sizes that get their own kernels, and the
choice of a bucket for a call: the interface of a bucketed (dynamic-shape) build.

    --input-shape data=1..64x3x224x224           input_shapes={"data": ((1, 64), 3, 224, 224)}
    --buckets data:0=1,2,4,8,16,32,64            buckets={"data:0": (1, 2, 4, 8, 16, 32, 64)}

A range `LOW..HIGH` makes a dimension dynamic; its buckets default to the powers of two
inside the range and the range's maximum. Ranged dimensions with the same axis index and
the same range are one *symbol* (BERT's `input_ids` and `attention_mask` share their
sequence axis): a call gives them one size. A model has one bucket per combination of its
symbols' sizes, and a call of size n runs the smallest bucket >= n on every symbol, its
inputs padded with zeros and its outputs sliced back (`pad_to`, `slice_to`). Every error
is one line that names the input and the dimension.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from boltir.diagnostics import BoltError


@dataclass(frozen=True)
class DimRange:
    low: int
    high: int

    def __str__(self) -> str:
        return f"{self.low}..{self.high}"


Dim = int | DimRange
"""A dimension of an input's interface: a fixed size or a range."""


def _range_error(where: str, name: str, axis: int, what: str) -> BoltError:
    return BoltError(f"{where}: input '{name}' dimension {axis} {what}")


def checked_range(low: int, high: int, where: str, name: str, axis: int) -> DimRange:
    if low < 1:
        raise _range_error(where, name, axis, f"has the range {low}..{high}; a range starts at 1 or above")
    if low > high:
        raise _range_error(where, name, axis, f"has the range {low}..{high}, whose low end is above its high end")
    return DimRange(low, high)


def parse_dim_text(text: str, where: str, name: str, axis: int) -> Dim:
    """`64` or `1..64`."""
    low, separator, high = text.partition("..")
    try:
        if not separator:
            size = int(text)
            if size < 0:
                raise ValueError
            return size
        return checked_range(int(low), int(high), where, name, axis)
    except ValueError:
        raise _range_error(where, name, axis, f"is '{text}', not a size (64) or a range (1..64)") from None


def parse_input_shape(text: str) -> tuple[str, tuple[Dim, ...]]:
    """`data=1..64x3x224x224` -> ("data", (DimRange(1, 64), 3, 224, 224))."""
    name, separator, dims = text.rpartition("=")
    if not separator or not name or not dims:
        raise BoltError(f"--input-shape '{text}' is not NAME=DIMS, as in data=1x3x224x224 or data=1..64x3x224x224")
    where = f"--input-shape '{text}'"
    return name, tuple(parse_dim_text(part, where, name, axis) for axis, part in enumerate(dims.lower().split("x")))


def normalize_input_shape(name: str, value: object) -> tuple[Dim, ...]:
    """An `input_shapes` entry of the Python interface: sizes, and (low, high) pairs for ranges."""
    where = "input_shapes"
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise BoltError(f"input_shapes gives input '{name}' {value!r}, not a sequence of sizes such as ((1, 64), 3, 224, 224)")
    dims: list[Dim] = []
    for axis, size in enumerate(value):
        if isinstance(size, DimRange):
            dims.append(checked_range(size.low, size.high, where, name, axis))
        elif isinstance(size, Sequence) and not isinstance(size, str | bytes):
            if len(size) != 2 or not all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in size):
                raise _range_error(where, name, axis, f"is {size!r}; a range is a pair of sizes (low, high)")
            dims.append(checked_range(int(size[0]), int(size[1]), where, name, axis))
        elif isinstance(size, int | np.integer) and not isinstance(size, bool) and size >= 0:
            dims.append(int(size))
        else:
            raise _range_error(where, name, axis, f"is {size!r}; sizes are non-negative integers, ranges (low, high) pairs")
    return tuple(dims)


def has_ranges(shapes: Mapping[str, Sequence[Dim]] | None) -> bool:
    return any(isinstance(d, DimRange) for dims in (shapes or {}).values() for d in dims)


def parse_bucket_option(text: str) -> tuple[str, int, tuple[int, ...]]:
    """`data:0=1,2,4` -> ("data", 0, (1, 2, 4))."""
    target, separator, sizes = text.rpartition("=")
    name, colon, axis = target.rpartition(":")
    try:
        if not separator or not colon or not name:
            raise ValueError
        axis_index = int(axis)
    except ValueError:
        raise BoltError(f"--buckets '{text}' is not NAME:DIM=SIZES, as in data:0=1,2,4,8") from None
    try:
        values = tuple(int(s) for s in sizes.split(","))
    except ValueError:
        raise BoltError(f"--buckets '{text}': input '{name}' dimension {axis_index} has sizes '{sizes}', "
                        "not integers separated by commas") from None
    return name, axis_index, values


def normalize_buckets(buckets: Mapping | Sequence[str] | None) -> dict[tuple[str, int], tuple[int, ...]]:
    """`--buckets` texts, or the Python form {"data:0": sizes} / {("data", 0): sizes}."""
    if not buckets:
        return {}
    if isinstance(buckets, Sequence) and not isinstance(buckets, str):
        found = {}
        for text in buckets:
            name, axis, sizes = parse_bucket_option(text)
            found[name, axis] = sizes
        return found
    found = {}
    for key, sizes in buckets.items():
        if isinstance(key, str):
            name, axis, _ = parse_bucket_option(f"{key}=0")
        else:
            name, axis = key
        found[name, int(axis)] = tuple(int(s) for s in sizes)
    return found


def default_buckets(dim: DimRange) -> tuple[int, ...]:
    """The powers of two inside the range, and its maximum."""
    powers = [1 << k for k in range(dim.high.bit_length()) if dim.low <= 1 << k <= dim.high]
    return tuple(sorted({*powers, dim.high}))


@dataclass(frozen=True)
class Symbol:
    """Ranged dimensions that a call sizes together."""

    members: tuple[tuple[str, int], ...]
    """(input, axis) of each dimension."""
    range: DimRange
    sizes: tuple[int, ...]
    """The bucket sizes, ascending; the last is the range's maximum."""

    @property
    def name(self) -> str:
        return ",".join(f"{name}:{axis}" for name, axis in self.members)


@dataclass(frozen=True)
class Bucket:
    index: int
    sizes: tuple[int, ...]
    """One size per symbol."""
    shapes: dict[str, tuple[int, ...]]
    """Every input's shape in this bucket."""


@dataclass(frozen=True)
class BucketPlan:
    """The interface of a bucketed build: the inputs with their ranges, the symbols, and
    the buckets (every combination of the symbols' sizes)."""

    inputs: dict[str, tuple[Dim, ...]]
    symbols: tuple[Symbol, ...]

    @property
    def buckets(self) -> list[Bucket]:
        combos = itertools.product(*(symbol.sizes for symbol in self.symbols))
        return [Bucket(index, sizes, self.shapes_for(sizes)) for index, sizes in enumerate(combos)]

    def shapes_for(self, sizes: Sequence[int]) -> dict[str, tuple[int, ...]]:
        shapes = {name: [d if isinstance(d, int) else None for d in dims] for name, dims in self.inputs.items()}
        for symbol, size in zip(self.symbols, sizes, strict=True):
            for name, axis in symbol.members:
                shapes[name][axis] = size
        return {name: tuple(shape) for name, shape in shapes.items()}

    def symbol_axes(self) -> dict[str, dict[int, int]]:
        """input -> {axis: symbol index}."""
        axes: dict[str, dict[int, int]] = {}
        for index, symbol in enumerate(self.symbols):
            for name, axis in symbol.members:
                axes.setdefault(name, {})[axis] = index
        return axes

    def to_manifest(self) -> list[dict]:
        return [{"dims": [f"{name}:{axis}" for name, axis in s.members], "range": [s.range.low, s.range.high],
                 "sizes": list(s.sizes)} for s in self.symbols]

    @staticmethod
    def from_manifest(inputs: Sequence[dict], symbols: Sequence[dict]) -> BucketPlan:
        """The plan of a bucketed manifest: its `inputs` (shapes with "LOW..HIGH" dims) and `symbols`."""
        shapes = {entry["name"]: tuple(d if isinstance(d, int) else DimRange(*map(int, d.split(".."))) for d in entry["shape"])
                  for entry in inputs}
        found = []
        for entry in symbols:
            members = tuple((name, int(axis)) for name, _, axis in (dim.rpartition(":") for dim in entry["dims"]))
            found.append(Symbol(members, DimRange(*entry["range"]), tuple(entry["sizes"])))
        return BucketPlan(shapes, tuple(found))

    def interface(self, name: str) -> list:
        """An input's shape for the manifest: sizes, and "LOW..HIGH" for ranges."""
        return [d if isinstance(d, int) else str(d) for d in self.inputs[name]]

    def choose(self, shapes: Mapping[str, Sequence[int]]) -> tuple[Bucket, tuple[int, ...]]:
        """The bucket a call with these input shapes runs, and each symbol's size in the call."""
        sizes = []
        for symbol in self.symbols:
            given = {shapes[name][axis] for name, axis in symbol.members if name in shapes}
            if len(given) > 1:
                raise BoltError(f"dimensions {symbol.name} share one size, got {', '.join(map(str, sorted(given)))}")
            size = given.pop()
            if not symbol.range.low <= size <= symbol.range.high:
                name, axis = symbol.members[0]
                raise BoltError(f"input '{name}' dimension {axis} is {size}, outside its range {symbol.range}")
            sizes.append(size)
        chosen = [next(b for b in symbol.sizes if b >= size) for symbol, size in zip(self.symbols, sizes)]
        combos = list(itertools.product(*(symbol.sizes for symbol in self.symbols)))
        index = combos.index(tuple(chosen))
        return Bucket(index, tuple(chosen), self.shapes_for(chosen)), tuple(sizes)

    def check_static_dims(self, name: str, shape: Sequence[int]) -> None:
        dims = self.inputs[name]
        if len(shape) != len(dims):
            raise BoltError(f"input '{name}' must have rank {len(dims)} ({describe_dims(dims)}), got shape {list(shape)}")
        for axis, (dim, size) in enumerate(zip(dims, shape)):
            if isinstance(dim, int) and dim != size:
                raise BoltError(f"input '{name}' dimension {axis} must be {dim} ({describe_dims(dims)}), got {size}")


def describe_dims(dims: Sequence[Dim]) -> str:
    return "x".join(map(str, dims))


def _symbols(inputs: Mapping[str, tuple[Dim, ...]]) -> list[tuple[DimRange, list[tuple[str, int]]]]:
    """Ranged dimensions grouped by (axis, range), in input order."""
    groups: dict[tuple[int, DimRange], list[tuple[str, int]]] = {}
    for name, dims in inputs.items():
        for axis, dim in enumerate(dims):
            if isinstance(dim, DimRange):
                groups.setdefault((axis, dim), []).append((name, axis))
    return [(dim, members) for (_, dim), members in groups.items()]


def _symbol_sizes(dim: DimRange, members: list[tuple[str, int]], given: Mapping[tuple[str, int], tuple[int, ...]]) -> tuple[int, ...]:
    lists = {key: given[key] for key in members if key in given}
    if len(set(lists.values())) > 1:
        names = ", ".join(f"{n}:{a}" for n, a in lists)
        raise BoltError(f"--buckets gives {names} different sizes; they share one dimension (the same axis and range)")
    if not lists:
        return default_buckets(dim)
    (name, axis), sizes = next(iter(lists.items()))
    where = f"--buckets {name}:{axis}"
    sizes = tuple(sorted(set(sizes)))
    outside = [s for s in sizes if not dim.low <= s <= dim.high]
    if outside:
        raise BoltError(f"{where}: input '{name}' dimension {axis} has the bucket {outside[0]}, outside its range {dim}")
    if sizes[-1] != dim.high:
        raise BoltError(f"{where}: input '{name}' dimension {axis}'s largest bucket is {sizes[-1]}, below its range's "
                        f"maximum {dim.high}: sizes {sizes[-1] + 1}..{dim.high} would have no bucket")
    return sizes


def bucket_plan(input_shapes: Mapping[str, object], buckets: Mapping | Sequence[str] | None = None) -> BucketPlan:
    """The plan of a bucketed build from `input_shapes` (ranges as (low, high) pairs or
    DimRange) and `buckets` (see the module docstring)."""
    inputs = {name: normalize_input_shape(name, value) for name, value in input_shapes.items()}
    given = normalize_buckets(buckets)
    for name, axis in given:
        if name not in inputs:
            raise BoltError(f"--buckets names input '{name}', which has no --input-shape with a range "
                            f"(inputs given: {', '.join(inputs) or 'none'})")
        if not 0 <= axis < len(inputs[name]) or not isinstance(inputs[name][axis], DimRange):
            raise BoltError(f"--buckets names input '{name}' dimension {axis}, which is not a range "
                            f"(its shape is {describe_dims(inputs[name])})")
    symbols = tuple(Symbol(tuple(members), dim, _symbol_sizes(dim, members, given)) for dim, members in _symbols(inputs))
    if not symbols:
        raise BoltError("buckets need an input dimension given as a range, as in --input-shape data=1..64x3x224x224")
    count = math.prod(len(s.sizes) for s in symbols)
    if count > 64:
        raise BoltError(f"the ranges make {count} buckets (every combination of {len(symbols)} dimensions' sizes); "
                        "give fewer sizes with --buckets (64 at most)")
    return BucketPlan(inputs, symbols)


# ------------------------------------------------------------ padding and slicing


def pad_to(array: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """`array` padded with zeros at the end of each dimension to `shape`; itself when it
    has that shape already (an exact-size call does no padding)."""
    if tuple(array.shape) == tuple(shape):
        return array
    return np.pad(array, [(0, target - size) for size, target in zip(array.shape, shape, strict=True)])


def output_cut(carried: Mapping[int, int], sizes: Sequence[int]) -> dict[int, int]:
    """{axis: size} of an output whose `carried` axes ({axis: symbol}) are cut to the call's `sizes`."""
    return {int(axis): sizes[symbol] for axis, symbol in carried.items()}


def slice_to(array, axes: Mapping[int, int]):
    """`array` (numpy or torch) cut back to `axes` {axis: size} (the call's sizes of the
    symbols that output carries); itself when nothing is cut."""
    index = tuple(slice(0, axes[axis]) if axis in axes else slice(None) for axis in range(array.ndim))
    if all(axis not in axes or axes[axis] == array.shape[axis] for axis in range(array.ndim)):
        return array
    return array[index]


def choose_for_call(plan: BucketPlan, shapes: Mapping[str, Sequence[int]]) -> tuple[Bucket, tuple[int, ...]]:
    """The bucket a call with these input shapes runs and each symbol's size in the call;
    one-line errors for unknown or missing inputs and sizes outside the interface."""
    for name, shape in shapes.items():
        if name not in plan.inputs:
            raise BoltError(f"unknown input '{name}'; the inputs are {', '.join(plan.inputs)}")
        plan.check_static_dims(name, shape)
    missing = [name for name in plan.inputs if name not in shapes]
    if missing:
        raise BoltError(f"missing input '{missing[0]}' ({describe_dims(plan.inputs[missing[0]])})")
    return plan.choose(shapes)


def bucket_inputs(plan: BucketPlan, inputs: Mapping[str, np.ndarray]) -> tuple[int, dict[str, np.ndarray], tuple[int, ...]]:
    """(bucket index, the numpy inputs padded to its shapes, each symbol's size in the call)."""
    bucket, sizes = choose_for_call(plan, {name: np.shape(array) for name, array in inputs.items()})
    return bucket.index, {name: pad_to(np.asarray(array), bucket.shapes[name]) for name, array in inputs.items()}, sizes
