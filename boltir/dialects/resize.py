"""The resize op's coordinate transforms and interpolation taps, shared by the
interpreter and the CUDA kernels.

`graph.resize` and `op.resize` follow ONNX Resize. Per axis, `source_coordinates` says
where each output position samples the input; nearest mode then picks one input
(`nearest_indices`), linear and cubic blend two or four (`interpolation_taps`).
"""

from __future__ import annotations

import numpy as np


def source_coordinates(out_len: int, in_len: int, scale: float, mode: str, roi: tuple[float, float]) -> np.ndarray:
    """ONNX Resize's coordinate_transformation_mode for one axis: where each output
    position samples the input. Like ONNX, align_corners and half_pixel_symmetric use the
    unrounded output length `in_len * scale`."""
    x = np.arange(out_len, dtype=np.float64)
    length = in_len * scale
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = in_len / 2 * (1 - out_len / length)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (in_len - 1) / (length - 1) if length != 1 else np.zeros_like(x)
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out_len == 1:
            return np.full_like(x, (end - start) * (in_len - 1) / 2 + start * (in_len - 1))
        return x * (end - start) * (in_len - 1) / (out_len - 1) + start * (in_len - 1)
    return x / scale  # asymmetric


def nearest_indices(coords: np.ndarray, mode: str, in_len: int) -> np.ndarray:
    """ONNX Resize's nearest_mode: the input index each coordinate takes, clamped to the axis."""
    if mode == "round_prefer_floor":
        index = np.ceil(coords - 0.5)
    elif mode == "round_prefer_ceil":
        index = np.floor(coords + 0.5)
    elif mode == "floor":
        index = np.floor(coords)
    else:
        index = np.ceil(coords)
    return np.clip(index, 0, in_len - 1).astype(np.int64)


def cubic_weights(fraction: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weights of the 4 neighbours floor(x)-1 .. floor(x)+2."""
    distances = np.stack([fraction + 1, fraction, 1 - fraction, 2 - fraction], axis=-1)
    near = ((a + 2) * distances - (a + 3)) * distances * distances + 1
    far = ((a * distances - 5 * a) * distances + 8 * a) * distances - 4 * a
    return np.where(distances <= 1, near, far)


def interpolation_taps(coords: np.ndarray, in_len: int, mode: str, cubic_a: float, exclude_outside: bool):
    """For each output position: the input indices it blends and their weights."""
    base = np.floor(coords)
    fraction = coords - base
    if mode == "linear":
        offsets = np.array([0, 1])
        weights = np.stack([1 - fraction, fraction], axis=-1)
    else:
        offsets = np.array([-1, 0, 1, 2])
        weights = cubic_weights(fraction, cubic_a)
    indices = base.astype(np.int64)[:, None] + offsets[None, :]
    if exclude_outside:
        weights = np.where((indices >= 0) & (indices < in_len), weights, 0.0)
        # No neighbour inside (tf_crop_and_resize far past the edge): extrapolated anyway.
        total = weights.sum(axis=-1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(indices, 0, in_len - 1), weights
