"""Shape rules shared by the dialects' verifiers and builders (ONNX semantics).

Every function takes and returns plain tuples and raises `VerifyException` with a
message that says what is wrong and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.utils.exceptions import VerifyException

Shape = tuple[int, ...]


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """Numpy / ONNX multidirectional broadcasting."""
    rank = max(len(s) for s in shapes)
    result: list[int] = []
    for axis in range(rank):
        dims = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            shown = " and ".join("x".join(map(str, s)) or "scalar" for s in shapes)
            raise VerifyException(f"shapes {shown} do not broadcast")
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether `shape` broadcasts to `target` one way (ONNX unidirectional broadcasting)."""
    return len(shape) <= len(target) and all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> tuple[int, ...]:
    normalized = tuple(normalize_axis(a, rank, what) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise VerifyException(f"{what} {list(axes)} repeat an axis")
    return normalized


def require_length(values: Sequence[int], length: int, what: str) -> None:
    if len(values) != length:
        raise VerifyException(f"{what} must have {length} values, got {len(values)}")


def require_positive(values: Sequence[int], what: str) -> None:
    if any(v < 1 for v in values):
        raise VerifyException(f"{what} must be positive, got {list(values)}")


def require_non_negative(values: Sequence[int], what: str) -> None:
    if any(v < 0 for v in values):
        raise VerifyException(f"{what} must not be negative, got {list(values)}")


def window_output_size(
    size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int, ceil_mode: bool = False
) -> int:
    """Output length of a sliding window (conv or pool) along one spatial axis."""
    extent = (kernel - 1) * dilation + 1
    span = size + pad_begin + pad_end - extent
    if span < 0:
        raise VerifyException(
            f"window of extent {extent} does not fit an input of {size} padded by {pad_begin}+{pad_end}"
        )
    out = (math.ceil(span / stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        out -= 1  # the last window may not start in the right padding
    return out


def conv_transpose_output_size(
    size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int, output_padding: int
) -> int:
    return stride * (size - 1) + output_padding + (kernel - 1) * dilation + 1 - pad_begin - pad_end


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """numpy.matmul's result shape, 1-D operands included."""
    if not a or not b:
        raise VerifyException("matmul operands must have rank 1 or more")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise VerifyException(
            f"matmul contraction mismatch: {'x'.join(map(str, a))} times {'x'.join(map(str, b))}"
        )
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    result = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        result = result[:-2] + result[-1:]
    if len(b) == 1:
        result = result[:-1]
    return tuple(result)


def slice_shape(
    shape: Shape, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int], steps: Sequence[int]
) -> Shape:
    """ONNX Slice: out-of-range starts and ends clamp, negative values count from the end."""
    if not (len(starts) == len(ends) == len(axes) == len(steps)):
        raise VerifyException("starts, ends, axes and steps must have the same length")
    if any(step == 0 for step in steps):
        raise VerifyException("slice steps must not be 0")
    result = list(shape)
    for axis, start, end, step in zip(normalize_axes(axes, len(shape)), starts, ends, steps, strict=True):
        result[axis] = len(range(*slice_bounds(start, end, step, shape[axis])))
    return tuple(result)


def slice_bounds(start: int, end: int, step: int, size: int) -> tuple[int, int, int]:
    """ONNX Slice on one axis, as (start, end, step) for `range`: negative bounds count
    from the end, then starts clamp to [0, size] ([0, size - 1] stepping backwards) and
    ends to [0, size] ([-1, size - 1] backwards, -1 meaning past the first element).
    Python's slice rules differ when stepping backwards from below -size."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        return min(max(start, 0), size), min(max(end, 0), size), step
    return min(max(start, 0), size - 1), min(max(end, -1), size - 1), step


def squeeze_shape(shape: Shape, axes: Sequence[int]) -> Shape:
    normalized = normalize_axes(axes, len(shape))
    for axis in normalized:
        if shape[axis] != 1:
            raise VerifyException(f"cannot squeeze axis {axis} of size {shape[axis]}")
    return tuple(d for i, d in enumerate(shape) if i not in normalized)


def unsqueeze_shape(shape: Shape, axes: Sequence[int]) -> Shape:
    rank = len(shape) + len(axes)
    normalized = normalize_axes(axes, rank)
    dims = iter(shape)
    return tuple(1 if i in normalized else next(dims) for i in range(rank))


def element_count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def permute_shape(shape: Shape, perm: Sequence[int]) -> Shape:
    """The shape after a transpose: axis i is the input's axis `perm[i]`."""
    if sorted(perm) != list(range(len(shape))):
        raise VerifyException(f"perm {list(perm)} is not a permutation of {len(shape)} axes")
    return tuple(shape[p] for p in perm)


def pad_shape(shape: Shape, pads: Sequence[int]) -> Shape:
    """ONNX Pad's result: `pads` holds every axis' begin, then every axis' end."""
    return tuple(d + pads[i] + pads[i + len(shape)] for i, d in enumerate(shape))


def reduce_shape(shape: Shape, axes: Sequence[int], keepdims: bool) -> Shape:
    """A reduction's result over the (normalized) `axes`: size 1 with `keepdims`, else dropped."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes)


def check_window(strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int], rank: int = 2) -> None:
    """A conv's or pool's window over `rank` spatial axes: one positive stride and
    dilation per axis, and non-negative pads (every axis' begin, then every axis' end)."""
    require_length(strides, rank, "strides")
    require_length(pads, 2 * rank, "pads")
    require_length(dilations, rank, "dilations")
    require_positive(strides, "strides")
    require_positive(dilations, "dilations")
    require_non_negative(pads, "pads")
